"""``tui-app jobs wait JOB... [--any] [--timeout DURATION] [--notify]``: block until jobs end, and
say how they ended in the exit status.

Every id is found before anything is waited for (an id that names no job exits 1 and waits for
nothing, as ``jobs cancel`` cancels nothing). A job that has already ended is reported at once.
Each end is one line on stdout as it happens (``model/notify/job_wait.end_line``); on a terminal,
stderr keeps one progress line, rewritten in place and cleared before every stdout line, so a
terminal that shows both never interleaves them. The statuses are ``model/notify/job_wait``'s.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, TextIO

from tui_app.api.job_waiter import JobChanged, JobWaiter, ReadTrouble
from tui_app.entry.cli_common import JobFinder, Refused, error_lines
from tui_app.model.jobs.job_id import split_job_name
from tui_app.model.jobs.states import JobState
from tui_app.model.notify.durations import DURATION_FORMS, parse_duration_seconds
from tui_app.model.notify.job_wait import (
    EXIT_INTERRUPTED,
    EXIT_REFUSED,
    EXIT_USAGE,
    Ended,
    end_line,
    progress_line,
    wait_over,
    wait_status,
)
from tui_app.model.views.job_view import JobRow

if TYPE_CHECKING:
    from tui_app.api.connection import Connection
    from tui_app.config.settings import NotifySettings, Settings

__all__ = ["wait_command"]

TICK_SECONDS: Final = 1.0
"""How often the progress line's times are redrawn while nothing changes."""
IDLE_SECONDS: Final = 60.0
"""The longest one wait for news lasts without a progress line (the time limit still checks
at its own moment): long enough to cost nothing, short enough for a huge limit's arithmetic."""
CLEAR: Final = "\r\x1b[K"
"""Carriage return, then erase to the end of the line: the progress line gone, the cursor at
its start."""
NOTIFY_TERMINAL_CHANNELS: Final = ("bell", "desktop")
"""The notification channels a script has: the TUI's toast and flash need its screen."""


def _job_name(text: str, project: str) -> tuple[str, str]:
    """``(project, job)`` of an id as typed (``model.job_id.split_job_name``); a job, never a
    trial.

    Raises:
        Refused: ``text`` starts like a resource name but is not one of a job (``USAGE``).
    """
    try:
        job_project, job = split_job_name(text, project)
    except ValueError as exc:
        raise Refused(str(exc), EXIT_USAGE) from None
    if text.startswith("projects/") and "/" in job:
        raise Refused(
            f"{text!r} is not a job's name: write projects/PROJECT/jobs/JOB_ID.", EXIT_USAGE
        )
    return job_project, job


class Progress:
    """The one line on stderr a person watching the terminal reads; nothing where stderr is
    not a terminal (a log file would fill with carriage returns)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.enabled = stream.isatty()
        self.shown = False

    def show(self, text: str) -> None:
        if self.enabled:
            # Marked first: a ctrl+c in the middle of the write must still clear what got out.
            self.shown = True
            self.stream.write("\r" + text + "\x1b[K")
            self.stream.flush()

    def clear(self) -> None:
        if self.shown:
            self.stream.write(CLEAR)
            self.stream.flush()
            self.shown = False

    def width(self) -> int:
        """The terminal's columns; a terminal that says none (a pty nobody sized) is taken to
        be ``COLUMNS`` wide, else 80."""
        try:
            columns = os.get_terminal_size(self.stream.fileno()).columns
        except (OSError, ValueError):
            columns = 0
        return columns if columns > 0 else shutil.get_terminal_size().columns


class Notifier:
    """``--notify``: a job's end as the TUI's watch tells it, through the terminal (the bell and
    a desktop notification), as settings.yaml's ``notify:`` and ``TUI_APP_NO_NOTIFY`` allow."""

    def __init__(self, settings: NotifySettings, environ: Mapping[str, str]) -> None:
        from tui_app.model.notify import terminal_notify as tn

        self._tn = tn
        self.states = settings.states
        self.bell = "bell" in settings.channels
        self.desktop = "desktop" in settings.channels
        if tn.opted_out(environ):
            self.bell = self.desktop = False
        self.tmux = tn.in_tmux(environ)
        # One OSC where the terminal is known to read both (two notifications otherwise).
        self.sequences = tn.desktop_sequences(environ)

    def notify(self, job_id: str, state: JobState, cause: str) -> None:
        if state.value not in self.states or not (self.bell or self.desktop):
            return
        from tui_app.entry.terminal_write import write_to_terminal

        title, body = self._tn.notification_text(job_id, state.value, cause or None)
        text = self._tn.terminal_bytes(
            title,
            body,
            bell=self.bell,
            desktop=self.desktop,
            tmux=self.tmux,
            sequences=self.sequences,
        )
        write_to_terminal(text)  # no terminal (cron, CI): the stdout line is the news


def _find(
    args: argparse.Namespace, connection: Connection, project: str
) -> dict[tuple[str, str], dict[str, Any]]:
    """Every job the command names, by ``(project, jobId)``, in the order given (once each).

    Raises:
        Refused: an id names no job, or several (nothing is waited for).
        ApiCallError: a read failed.
    """
    finders: dict[str, JobFinder] = {}
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for text in args.job_ids:
        job_project, job_text = _job_name(text, project)
        finder = finders.get(job_project)
        if finder is None:
            finder = finders[job_project] = JobFinder(connection.jobs(job_project))
        job = finder.find(job_text)
        found.setdefault((job_project, str(job.get("jobId"))), job)
    return found


def _timeout(text: str | None) -> float | None:
    """``--timeout``'s seconds; None without one.

    Raises:
        Refused: not a duration, or not a positive one (``USAGE``).
    """
    if text is None:
        return None
    seconds = parse_duration_seconds(text)
    if seconds is None or seconds <= 0:
        why = "is not a duration" if seconds is None else "is no time at all"
        raise Refused(f"--timeout: {text!r} {why}; write {DURATION_FORMS}.", EXIT_USAGE)
    return seconds


class _Wait:
    """One run of the command: what has been seen of each job, and its output."""

    def __init__(
        self,
        jobs: dict[tuple[str, str], dict[str, Any]],
        project: str,
        first_only: bool,
        notifier: Notifier | None,
    ) -> None:
        self.jobs = jobs
        self.project = project
        self.first_only = first_only
        self.notifier = notifier
        self.ended: list[Ended] = []
        self.done: set[tuple[str, str]] = set()
        self.warned: dict[str, str] = {}
        """The last warning said for each job (or project) whose reads fail, until resumed."""
        self.progress = Progress(sys.stderr)
        self.clean = sys.stdout.isatty()

    def name(self, key: tuple[str, str]) -> str:
        return key[1] if key[0] == self.project else f"projects/{key[0]}/jobs/{key[1]}"

    def over(self) -> bool:
        return wait_over(len(self.ended), len(self.jobs), first_only=self.first_only)

    def status(self, timed_out: bool) -> int:
        return wait_status(
            self.ended, len(self.jobs), first_only=self.first_only, timed_out=timed_out
        )

    def live(self) -> list[tuple[str, dict[str, Any]]]:
        return [(self.name(k), j) for k, j in self.jobs.items() if k not in self.done]

    def seen(self, key: tuple[str, str], job: dict[str, Any], *, waited: bool = True) -> None:
        """A job as read: printed when it has ended, and told (``--notify``) when it ended
        while ``waited`` for. A job that had ended before is not told, as the TUI's ``w`` on an
        ended job tells nothing: its line is the answer, printed as the command starts."""
        self.jobs[key] = job
        row = JobRow.from_job(job)
        if not row.state.is_terminal or key in self.done:
            return
        self.done.add(key)
        self.ended.append(Ended(self.name(key), row.state, row.ended))
        line = end_line(self.name(key), job, datetime.now(UTC))
        if self.clean:
            from tui_app.model.logs.log_text import clean

            line = clean(line).text  # a trainer's escapes in its error must not drive the terminal
        self.progress.clear()
        print(line, flush=True)
        if waited and self.notifier is not None:
            self.notifier.notify(self.name(key), row.state, row.error)

    def say(self, text: str) -> None:
        """A line on stderr, with the progress line out of its way."""
        self.progress.clear()
        print(text, file=sys.stderr, flush=True)

    def redraw(self) -> None:
        if self.progress.enabled:
            now = datetime.now(UTC)
            text = progress_line(
                self.live(), len(self.ended), len(self.jobs), now, self.progress.width()
            )
            self.progress.show(text)

    def still(self) -> str:
        """The jobs not ended yet, for a last word on stderr."""
        return ", ".join(f"{n} ({JobRow.from_job(j).state.value})" for n, j in self.live())


def wait_command(
    args: argparse.Namespace, connection: Connection, project: str, settings: Settings
) -> int:
    """Run ``jobs wait``; its exit status (``model/notify/job_wait``).

    Raises:
        Refused, ApiCallError: before the wait starts (``run_jobs_command`` prints them).
    """
    limit = _timeout(args.timeout)
    jobs = _find(args, connection, project)
    notifier = Notifier(settings.notify, os.environ) if args.notify else None
    run = _Wait(jobs, project, bool(args.any), notifier)
    start = time.monotonic()
    deadline = None if limit is None else start + limit
    waiter = JobWaiter(connection, ((k[0], j) for k, j in jobs.items()))
    try:
        for key, job in list(jobs.items()):
            run.seen(key, job, waited=False)  # an end before the wait is reported at once
        if run.over():
            return run.status(timed_out=False)
        waiter.start()
        while True:
            run.redraw()
            tick = TICK_SECONDS if run.progress.enabled else IDLE_SECONDS
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                run.say(f"--timeout {args.timeout} ran out; not ended: {run.still()}.")
                return run.status(timed_out=True)
            event = waiter.next_event(tick if left is None else min(tick, left))
            if isinstance(event, JobChanged):
                run.seen((event.project, event.job_id), event.job)
                if run.over():
                    return run.status(timed_out=False)
            elif isinstance(event, ReadTrouble):
                status = _trouble(run, event)
                if status is not None:
                    return status
    except KeyboardInterrupt:
        run.say(f"Interrupted; not ended: {run.still()}.")
        return EXIT_INTERRUPTED
    finally:
        waiter.stop()
        run.progress.clear()


def _trouble(run: _Wait, event: ReadTrouble) -> int | None:
    """Say what went wrong (or right again); the exit status when the wait cannot go on."""
    what = run.name((event.project, event.job_id)) if event.job_id else f"project {event.project}"
    if event.error is None:
        run.warned.pop(what, None)
        run.say(f"Resumed ({what}).")
        return None
    if not event.fatal:
        # Said once per outage and cause: a laptop asleep for an hour would otherwise come
        # back to a screenful of the same line, one per retry.
        text = f"warning: {what}: {event.error} (retrying)"
        if run.warned.get(what) != text:
            run.warned[what] = text
            run.say(text)
        return None
    for line in error_lines(event.error):
        run.say(line.replace("error: ", f"error: {what}: ", 1))
    return EXIT_REFUSED
