"""``tui-app jobs wait``'s rules: its exit status from how the jobs ended, the line it prints for
each end, and the one-line progress it keeps on a terminal.

The exit statuses are the command's contract with scripts (``cli.py`` lists them in ``--help``):
``0`` every job waited for succeeded (with ``--any``: the first to end did), ``3`` a job failed,
``4`` one was cancelled, ``124`` the time limit ran out first (timeout(1)'s status), and the
shared ``1``/``2``/``130`` for a refusal, a bad command line and ctrl+c. With several jobs the
first that applies wins, in that order: a failure is the news even when the limit also ran out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from tui_app.model.jobs.states import JobState
from tui_app.model.views.job_view import JobRow, format_elapsed

__all__ = [
    "EXIT_CANCELLED",
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_REFUSED",
    "EXIT_SUCCEEDED",
    "EXIT_TIMED_OUT",
    "EXIT_USAGE",
    "Ended",
    "end_line",
    "progress_line",
    "wait_over",
    "wait_status",
]

EXIT_SUCCEEDED: Final = 0
EXIT_REFUSED: Final = 1
"""The server refused, or an id names no job: nothing was waited for."""
EXIT_USAGE: Final = 2
EXIT_FAILED: Final = 3
EXIT_CANCELLED: Final = 4
EXIT_TIMED_OUT: Final = 124
EXIT_INTERRUPTED: Final = 130

_BY_STATE: Final = {
    JobState.SUCCEEDED: EXIT_SUCCEEDED,
    JobState.FAILED: EXIT_FAILED,
    JobState.CANCELLED: EXIT_CANCELLED,
}
SEPARATOR: Final = " · "
ELLIPSIS: Final = "…"
MIN_ID_SHOWN: Final = 6
"""A job id cut shorter than this says too little to be worth showing: it is counted instead."""


@dataclass(frozen=True, slots=True)
class Ended:
    """One job's end, as the wait saw it."""

    name: str
    """The job as the output names it (its id; ``projects/P/jobs/ID`` for another project)."""
    state: JobState
    """A terminal state."""
    end_time: datetime | None
    """The job's ``endTime``: with ``--any``, the earliest decides, not the order in which the
    reads happened to come back."""


def _first(ended: Sequence[Ended]) -> Ended:
    """The job that ended first: by ``endTime``; a job without one (a backend that left it
    out) after those with one, in the order they were seen."""
    order = sorted(
        range(len(ended)),
        key=lambda i: (ended[i].end_time is None, ended[i].end_time or datetime.min, i),
    )
    return ended[order[0]]


def wait_over(ended: int, waited_for: int, *, first_only: bool) -> bool:
    """Whether the wait is done: every job has ended, or with ``--any`` (``first_only``) one."""
    return ended >= (1 if first_only else waited_for)


def wait_status(
    ended: Sequence[Ended], waited_for: int, *, first_only: bool, timed_out: bool
) -> int:
    """The exit status of a wait on ``waited_for`` jobs of which ``ended`` have ended.

    Raises:
        ValueError: the wait is neither over nor out of time: there is no status yet.
    """
    if not timed_out and not wait_over(len(ended), waited_for, first_only=first_only):
        raise ValueError(f"{len(ended)} of {waited_for} jobs ended: the wait goes on")
    if first_only:
        return _BY_STATE[_first(ended).state] if ended else EXIT_TIMED_OUT
    states = {e.state for e in ended}
    if JobState.FAILED in states:
        return EXIT_FAILED
    if JobState.CANCELLED in states:
        return EXIT_CANCELLED
    if len(ended) < waited_for:
        return EXIT_TIMED_OUT
    return EXIT_SUCCEEDED


def end_line(name: str, job: Mapping[str, Any], now: datetime) -> str:
    """``<name>  <STATE>  <ran for>  <cause>``: one job's end, on one line.

    The cause is the one line the describe view puts first (``failure_cause``); a job that
    ended without running shows ``-`` for its run time. Columns are two spaces apart, as
    ``jobs list`` writes them, so ``awk -F '  '`` reads them.
    """
    row = JobRow.from_job(job)
    ran = format_elapsed(row.elapsed(now)) or "-"
    parts = [name, row.state.value, ran]
    if row.error:
        parts.append(row.error)
    return "  ".join(parts)


def _moment(row: JobRow, now: datetime) -> str:
    """How long a live job has been in its present phase: queued for, or running for."""
    if row.started is None:
        return format_elapsed(row.waited(now))
    return format_elapsed(row.elapsed(now))


def progress_line(
    live: Sequence[tuple[str, Mapping[str, Any]]],
    ended: int,
    total: int,
    now: datetime,
    width: int,
) -> str:
    """``2 of 3 ended · mnist_… RUNNING 4m12s``: the jobs still waited for, in at most
    ``width`` characters.

    It is rewritten in place with a carriage return, which only works while it fits on one
    line: a line that wrapped would leave its first half behind at every redraw. So the jobs
    that do not fit are counted (``+2 more``) and a long first id is cut short rather than
    the state and time after it, which are what changes.

    Args:
        live: ``(name, job)`` of each job not ended yet, in the order to show them.
        ended: How many of the jobs have ended.
        total: How many are waited for.
        width: The terminal's width; the line stays one character short of it, since some
            terminals wrap as soon as the last column is written.
    """
    limit = max(1, width - 1)
    text = f"{ended} of {total} ended"
    for i, (name, job) in enumerate(live):
        row = JobRow.from_job(job)
        moment = _moment(row, now)
        tail = f" {row.state.value}" + (f" {moment}" if moment else "")
        left = len(live) - i - 1
        more = f"{SEPARATOR}+{left} more" if left else ""
        if len(text) + len(SEPARATOR) + len(name) + len(tail) + len(more) <= limit:
            text += SEPARATOR + name + tail
            continue
        room = limit - len(text) - len(SEPARATOR) - len(tail) - len(more) - len(ELLIPSIS)
        if i == 0 and room >= MIN_ID_SHOWN:
            return text + SEPARATOR + name[:room] + ELLIPSIS + tail + more
        # The previous job was only added where this count fitted after it.
        return (text + f"{SEPARATOR}+{left + 1} more")[:limit]
    return text[:limit]
