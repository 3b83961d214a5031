"""``tui-app jobs metrics JOB``: the metrics view's series as rows, for scripts and notebooks.

The same reader as the TUI's view (``JobScalars``) read to the end once: every point of every
series, not the view's downsampled curves, so a notebook gets what the trainer wrote. One row
per point: ``step, wall_time, value, run, tag, source`` (and ``trial`` for a tuning job).

- CSV: wall time as RFC 3339 UTC (empty when the source has none: hypertune reports), values
  as Python writes floats (``nan``, ``inf`` as they are: pandas reads them back);
- JSON: one object per series with its points as ``[step, wall_time, value]``; a non-finite
  value is written as proto3's JSON mapping writes one (``"NaN"``, ``"Infinity"``), and a
  missing wall time as null, so the output is valid JSON.

A ``--tag`` the job has no series of exits 2 naming the tags it has (or saying there are none
yet, and where the view looked).
"""

from __future__ import annotations

import argparse
import bisect
import csv
import json
import math
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from tui_app.api.job_scalars import JobScalars, ScalarBatch, SourceStatus
from tui_app.model.jobs.states import TERMINAL_STATES
from tui_app.model.jobs.wire import json_double
from tui_app.model.metrics.metric_series import SeriesKey, drawn_keys
from tui_app.model.views.trials import is_tuning_job

if TYPE_CHECKING:
    from tui_app.api.connection import Connection
    from tui_app.api.jobs_api import JobsApi

MAX_POLLS = 10_000
"""A read to the end takes one poll per 16 MiB of event files; this bounds a runaway."""


@dataclass
class _Series:
    key: SeriesKey
    steps: list[int] = field(default_factory=list)
    wall_times: list[float] = field(default_factory=list)
    values: list[float] = field(default_factory=list)

    def add(self, batch: ScalarBatch) -> None:
        """Append, as the view's series does: a step at or before the newest replaces from
        there on (a trainer restarted from a checkpoint, or an epoch's line printed again)."""
        steps, walls, values = batch.columns()
        if self.steps and steps and steps[0] <= self.steps[-1]:
            keep = bisect.bisect_left(self.steps, steps[0])
            del self.steps[keep:], self.wall_times[keep:], self.values[keep:]
        self.steps += steps
        self.wall_times += walls
        self.values += values


def read_series(scalars: JobScalars) -> tuple[list[_Series], list[SourceStatus]]:
    """Every point there is now, by series in the order first seen, and the sources' lines."""
    series: dict[SeriesKey, _Series] = {}
    statuses: list[SourceStatus] = []
    for _ in range(MAX_POLLS):
        poll = scalars.poll()
        for batch in poll.batches:
            series.setdefault(batch.key, _Series(batch.key)).add(batch)
        statuses = poll.statuses
        if not poll.more:
            break
    drawn = set(drawn_keys(series))
    return [s for k, s in series.items() if k in drawn], statuses


def metrics_command(
    args: argparse.Namespace, connection: Connection, client: JobsApi, job: dict[str, Any]
) -> int:
    """Print the series of ``job`` (found by the caller) as ``args.format`` says."""
    job_id = str(job["jobId"])
    trial = str(args.trial) if args.trial is not None else None
    if trial is not None:
        known = [
            str(t.get("trialId"))
            for t in (job.get("trainingOutput") or {}).get("trials") or []
            if isinstance(t, dict)
        ]
        if trial not in known:
            print(f"error: --trial {trial}: {_no_trial(job, trial, known)}", file=sys.stderr)
            return 2
    scalars = JobScalars(
        lambda: connection,
        client.project,
        job_id,
        read_job=lambda: client.get(job_id),
        trial_id=trial,
    )
    found, statuses = read_series(scalars)
    for status in statuses:
        if status.problem:
            print(f"warning: {status.text}", file=sys.stderr)
    if args.tag:
        tags = sorted({s.key.tag for s in found})
        wanted = [s for s in found if s.key.tag == args.tag]
        if not wanted:
            if tags:
                print(
                    f"error: --tag {args.tag}: no such tag in {job_id}; its tags are:",
                    file=sys.stderr,
                )
                for tag in tags:
                    print(f"  {tag}", file=sys.stderr)
            else:
                print(f"error: --tag {args.tag}: {job_id} has no metrics yet:", file=sys.stderr)
                for status in statuses:
                    print(f"  {status.text}", file=sys.stderr)
            return 2
        found = wanted
    try:
        if args.format == "json":
            _write_json(found)
        else:
            _write_csv(found, tuning=any(s.key.trial for s in found))
    except BrokenPipeError:
        return 0
    return 0


def _wall(seconds: float) -> str:
    if not math.isfinite(seconds):
        return ""
    return (
        datetime.fromtimestamp(seconds, UTC)
        .isoformat(timespec="microseconds")
        .replace("+00:00", "Z")
    )


def _write_csv(found: list[_Series], *, tuning: bool) -> None:
    out = csv.writer(sys.stdout, lineterminator="\n")
    head = ["step", "wall_time", "value", "run", "tag", "source"]
    out.writerow([*head, "trial"] if tuning else head)
    for s in found:
        k = s.key
        tail = [k.run, k.tag, k.source, *([k.trial] if tuning else [])]
        for step, wall, value in zip(s.steps, s.wall_times, s.values, strict=True):
            out.writerow([step, _wall(wall), repr(value), *tail])


def _write_json(found: list[_Series]) -> None:
    doc = [
        {
            "tag": s.key.tag,
            "run": s.key.run,
            "source": s.key.source,
            **({"trial": s.key.trial} if s.key.trial else {}),
            "points": [
                [step, wall if math.isfinite(wall) else None, json_double(value)]
                for step, wall, value in zip(s.steps, s.wall_times, s.values, strict=True)
            ],
        }
        for s in found
    ]
    json.dump(doc, sys.stdout, indent=1)
    sys.stdout.write("\n")


def _no_trial(job: dict[str, Any], trial: str, known: list[str]) -> str:
    """Why ``trial`` has no series: a plain job has no trials at all, a running tuning job may
    not have reached it yet."""
    job_id = str(job["jobId"])
    if not is_tuning_job(job):
        return f"job {job_id} is not a hyperparameter tuning job: leave --trial out"
    have = ", ".join(known) if known else "none yet"
    spec = (job.get("trainingInput") or {}).get("hyperparameters") or {}
    try:
        planned = int(spec.get("maxTrials") or 0)
    except (TypeError, ValueError):
        planned = 0
    state = str(job.get("state", ""))
    if state not in TERMINAL_STATES and trial.isdigit() and 0 < int(trial) <= planned:
        return f"trial {trial} of job {job_id} has not started yet (trials so far: {have})"
    return f"job {job_id} has no such trial (trials: {have})"
