"""``tui-app jobs list|describe|cancel|resubmit``: the TUI's views and actions for scripts."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime

from tui_app.api.errors import ApiCallError
from tui_app.api.jobs_client import JobsClient
from tui_app.launch import connector, resolve
from tui_app.model.describe import job_yaml, render_text, summarize
from tui_app.model.job_config import resubmission
from tui_app.model.job_view import JobRow, SortColumn, sort_rows
from tui_app.model.list_filter import filter_rows, parse_list_filter
from tui_app.model.states import STATE_SYMBOL
from tui_app.settings import Settings, SettingsError


def _table(rows: list[JobRow], now: datetime) -> str:
    head = ("JOB_ID", "STATE", "CREATED", "ELAPSED", "TIER", "ML_UNITS", "ERROR")
    lines = [head]
    for r in rows:
        elapsed = r.elapsed(now)
        lines.append(
            (
                r.job_id,
                f"{STATE_SYMBOL[r.state]} {r.state.value}",
                r.created.astimezone().strftime("%Y-%m-%d %H:%M:%S") if r.created else "",
                str(elapsed).split(".")[0] if elapsed is not None else "",
                r.tier_label,
                f"{r.ml_units:.2f}" if r.ml_units is not None else "",
                r.error[:60],
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip()
        for line in lines
    )


def run_jobs_command(args: argparse.Namespace, settings: Settings) -> int:
    try:
        profile, project, state_dir = resolve(args, settings)
        client: JobsClient = connector(profile, state_dir)().jobs(project)
        return _run(args, client)
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ApiCallError as exc:
        print(f"error: {exc}", file=sys.stderr)
        for v in exc.violations:
            print(f"  {v.get('field')}: {v.get('description')}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace, client: JobsClient) -> int:
    now = datetime.now(UTC)
    if args.action == "list":
        jobs = client.list_jobs()
        rows = sort_rows([JobRow.from_job(j) for j in jobs], SortColumn.DEFAULT, False, now)
        if args.filter:
            flt = parse_list_filter(args.filter)
            if flt.error:
                print(f"warning: {flt.error}", file=sys.stderr)
            rows = filter_rows(rows, flt)
        if args.json:
            by_id = {j["jobId"]: j for j in jobs}
            print(json.dumps([by_id[r.job_id] for r in rows], indent=2))
        else:
            print(_table(rows, now))
        return 0
    if args.action == "describe":
        job = client.get(args.job_id)
        if args.json:
            print(json.dumps(job, indent=2))
        elif args.yaml:
            print(job_yaml(job), end="")
        else:
            print(render_text(summarize(job, now, tz=datetime.now().astimezone().tzinfo or UTC)))
        return 0
    if args.action == "cancel":
        status = 0
        for job_id in args.job_ids:
            try:
                client.cancel(job_id)
                print(f"Cancelling {job_id}.")
            except ApiCallError as exc:
                print(f"error: {job_id}: {exc}", file=sys.stderr)
                status = 1
        return status
    if args.action == "resubmit":
        job = client.get(args.job_id)
        created = client.create(resubmission(job))
        print(created["jobId"])
        print(f"Resubmitted {args.job_id} as {created['jobId']}.", file=sys.stderr)
        return 0
    return 2
