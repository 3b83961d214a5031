"""``tui-app jobs list|describe|cancel|resubmit|logs|metrics``: the TUI's views and actions for
scripts.

A job id may be given as the TUI's ``:describe``/``:logs`` take it: whole, or as a prefix only one
job starts with. Exit status: 0 done; 1 the server refused (NOT_FOUND, FAILED_PRECONDITION, ...)
or what was named does not exist (a job, a replica); 2 the command line cannot be used as given
(a filter the list cannot read, a prefix several jobs start with, a bad option); 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any

from tui_app.api.errors import ApiCallError
from tui_app.api.jobs_api import JobsApi
from tui_app.api.resubmit import resubmit
from tui_app.config.settings import Settings
from tui_app.entry.cli_common import REFUSED, USAGE, JobFinder, Refused, exit_status
from tui_app.entry.launch import connector, resolve
from tui_app.model.filters.gcloud_filter import ACCEPTED
from tui_app.model.filters.list_filter import filter_rows, parse_list_filter
from tui_app.model.jobs.cluster import task_from_vertex
from tui_app.model.jobs.job_images import replica_image
from tui_app.model.jobs.states import STATE_SYMBOL
from tui_app.model.jobs.task_names import unknown_task_error
from tui_app.model.jobs.tiers import Role
from tui_app.model.stacks import JobStacks
from tui_app.model.views.describe import job_yaml, render_text, summarize
from tui_app.model.views.job_view import JobRow, SortColumn, format_elapsed, sort_rows
from tui_app.model.views.replica_nodes import PlacedReplica

if TYPE_CHECKING:
    from tui_app.api.connection import Connection
    from tui_app.model.logs.log_line import LogLine


def _table(rows: Sequence[JobRow], now: datetime) -> str:
    """The list as the TUI shows it: the wait (QUEUED) and the run (ELAPSED) apart, in the
    TUI's one duration format."""
    head = ("JOB_ID", "STATE", "CREATED", "QUEUED", "ELAPSED", "TIER", "ML_UNITS", "ERROR")
    lines = [head]
    for r in rows:
        lines.append(
            (
                r.job_id,
                f"{STATE_SYMBOL[r.state]} {r.state.value}",
                r.created.astimezone().strftime("%Y-%m-%d %H:%M:%S") if r.created else "",
                format_elapsed(r.waited(now)),
                format_elapsed(r.elapsed(now)),
                r.tier_label,
                f"{r.ml_units:.2f}" if r.ml_units is not None else "",
                (r.error or r.stall_text(now))[:60],
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip()
        for line in lines
    )


def run_jobs_command(args: argparse.Namespace, settings: Settings) -> int:
    # diff's 1 is "they differ": a service that cannot be reached is its 2, as diff(1) has it.
    failed_call = USAGE if args.action == "diff" else REFUSED
    return exit_status(partial(_jobs_command, args, settings), lambda _exc: failed_call)


def _jobs_command(args: argparse.Namespace, settings: Settings) -> int:
    profile, project, state_dir = resolve(args, settings)
    connection: Connection = connector(profile, state_dir)()
    client = connection.jobs(project)
    if args.action == "logs":
        return _logs(args, connection, client)
    if args.action == "diff":
        from tui_app.entry.diff_cli import diff_command

        return diff_command(args, connection, project)
    if args.action == "wait":
        from tui_app.entry.wait_cli import wait_command

        return wait_command(args, connection, project, settings)
    if args.action == "stacks":
        from tui_app.entry.stacks_cli import stacks_command

        return stacks_command(args, connection, project, JobFinder(client).find(args.job_id))
    if args.action == "metrics":
        from tui_app.entry.metrics_cli import metrics_command

        return metrics_command(args, connection, client, JobFinder(client).find(args.job_id))
    return _run(args, client, partial(_extensions, connection, project))


@dataclass(frozen=True)
class Extensions:
    """What the local service adds to a job's summary; each part empty elsewhere or on error
    (the sections are optional: describe shows the job regardless)."""

    environment: dict[str, Any] | None = None
    """``:environment``: the runtime environment the job got."""
    queue: dict[str, Any] | None = None
    """``:queue``, while the job is QUEUED: why it waits."""
    engine: dict[str, Any] | None = None
    """For a custom-container job, the service's container engine (``/healthz``)."""
    placement: list[PlacedReplica] = field(default_factory=list)
    """The replicas on other nodes (``:metrics``, the Ray executor): the "Replicas" section."""
    stall_stacks: JobStacks | None = None
    """``:stacks?at=stall`` of a job that stalled: shown in the "Stall" section."""


def _extensions(connection: Connection, project: str, job: Mapping[str, Any]) -> Extensions:
    """The local service's answers about the job (``Extensions``); empty ones elsewhere."""
    if connection.vertex:
        return Extensions()
    job_id = str(job.get("jobId"))
    ti = job.get("trainingInput")
    container = isinstance(ti, Mapping) and replica_image(ti, Role.MASTER) is not None
    engine = connection.container_engine() if container else None
    with connection.metrics(project) as client:
        try:
            environment = client.environment(job_id)
            queued = job.get("state") == "QUEUED"
            queue = client.queue(job_id) if queued else None
        except ApiCallError:
            environment = queue = None
        try:
            placement = client.placement(job_id) or []
        except ApiCallError:
            placement = []
        stall_stacks = None
        if isinstance(job.get("stall"), Mapping) and job["stall"].get("stacksTakenAt"):
            try:
                stall_stacks = client.stacks(job_id, at_stall=True)
            except ApiCallError:
                stall_stacks = None
        return Extensions(environment, queue, engine, placement, stall_stacks)


def _run(
    args: argparse.Namespace,
    client: JobsApi,
    extensions: Callable[[Mapping[str, Any]], Extensions] = lambda _job: Extensions(),
) -> int:
    now = datetime.now(UTC)
    if args.action == "list":
        jobs = client.list_jobs()
        rows = sort_rows([JobRow.from_job(j) for j in jobs], SortColumn.DEFAULT, False, now)
        if args.filter:
            flt = parse_list_filter(args.filter)
            if flt.error:
                # The TUI keeps its last good result and says why; a script must be able to
                # tell that its filter was wrong, so here it is an error.
                print(f"error: --filter: {flt.error}", file=sys.stderr)
                hint = textwrap.fill(f"a filter is {ACCEPTED}.", 79, subsequent_indent="  ")
                print(f"  {hint}", file=sys.stderr)
                return USAGE
            rows = list(filter_rows(rows, flt))
        if args.json:
            by_id = {j["jobId"]: j for j in jobs}
            print(json.dumps([by_id[r.job_id] for r in rows], indent=2))
        else:
            print(_table(rows, now))
        return 0
    finder = JobFinder(client)
    if args.action == "describe":
        job = finder.find(args.job_id)
        if args.json:
            print(json.dumps(job, indent=2))
        elif args.yaml:
            print(job_yaml(job), end="")
        else:
            tz = datetime.now().astimezone().tzinfo or UTC
            ext = extensions(job)
            sections = summarize(
                job,
                now,
                tz=tz,
                environment=ext.environment,
                queue=ext.queue,
                engine=ext.engine,
                placement=ext.placement,
                stall_stacks=ext.stall_stacks,
            )
            print(render_text(sections))
        return 0
    if args.action == "cancel":
        # Every id is found before any job is cancelled: a typo among them cancels nothing,
        # rather than some of what the user listed.
        found = [finder.find(text)["jobId"] for text in args.job_ids]
        status = 0
        for job_id in dict.fromkeys(found):
            try:
                client.cancel(job_id)
                print(f"Cancelling {job_id}.")
            except ApiCallError as exc:
                print(f"error: {job_id}: {exc}", file=sys.stderr)
                status = REFUSED
        return status
    if args.action == "resubmit":
        job = finder.find(args.job_id)
        # The TUI's resubmit: a 409 (the new id taken this second) retries with the next one.
        created = resubmit(job["jobId"], lambda _: job, client.create, project=client.project)
        print(created["jobId"])
        print(f"Resubmitted {job['jobId']} as {created['jobId']}.", file=sys.stderr)
        return 0
    return USAGE


def _print_lines(lines: list[LogLine], safe: bool = False) -> None:
    """Write lines as gcloud stream-logs does. With ``safe`` (a terminal), each field goes
    through the TUI's cleaner first: a trainer's escape sequences would otherwise retitle or
    clear the user's terminal; colours are dropped and controls shown as ``^G``, ``<U+202E>``."""
    from tui_app.api.log_stream import format_line

    out = [text for line in lines for text in format_line(line)]
    if safe:
        from tui_app.model.logs.log_text import clean

        out = ["\t".join(clean(part).text for part in text.split("\t")) for text in out]
    if out:
        sys.stdout.write("\n".join(out) + "\n")
        sys.stdout.flush()


def _logs(args: argparse.Namespace, connection: Connection, client: JobsApi) -> int:
    """``jobs logs``: gcloud stream-logs' lines; with ``--follow``, until the job has ended.

    Without ``--follow`` it prints what there is and exits. With it, transient failures (lost
    contact, server errors) are retried and the stream resumes where it stopped; any other
    error ends it with rc 1.
    """
    from tui_app.api.log_feed import LogFeed
    from tui_app.api.log_stream import CLOUD_POLL_SECONDS

    found = JobFinder(client).find(args.job_id)
    job_id = str(found["jobId"])
    if args.task_name:
        why = unknown_task_error(args.task_name, job_id, found)
        if why:
            raise Refused(why, REFUSED)
    feed = LogFeed(
        client.project,
        job_id,
        lambda: client.get(job_id),
        lambda: connection,
        task_name=task_from_vertex(args.task_name) if args.task_name else None,
        # A single read has no cursor to protect, so it need not leave the newest 5 s out.
        settle=bool(args.follow),
    )
    feed.open()  # the stream sets itself up from the job as read now
    safe = not getattr(args, "raw", False) and sys.stdout.isatty()

    def write(lines: list[LogLine]) -> None:
        _print_lines(lines, safe)

    try:
        if not args.follow:
            write(feed.read_all())
            return 0

        def on_error(exc: ApiCallError | None) -> None:
            if exc is None:
                print("Resumed.", file=sys.stderr)
            else:
                print(f"warning: {exc} (retrying)", file=sys.stderr)

        # A failure that is not transient leaves follow as an ApiCallError: rc 1 above.
        feed.follow(
            threading.Event(),
            write,
            lambda: float(
                args.polling_interval or (CLOUD_POLL_SECONDS if connection.vertex else 1.0)
            ),
            on_error,
        )
        return 0
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly, and keep Python's final flush quiet.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
