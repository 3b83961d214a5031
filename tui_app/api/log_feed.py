"""``LogFeed``: one job's logs for a reader, the same for the TUI's logs screen and
``tui-app jobs logs``.

``LogStream`` reads entries; a reader also needs the job first (its cluster names the replicas,
its endTime ends a follow, and on Vertex AI its numeric id is what the entries carry), a stream
set up for the connection (gcloud's settling delay on the cloud, none on the local service),
pages of history before a line it shows, and a rule for which failures are worth another try.
Each caller used to assemble these on its own, with its own spelling of the retry rule; the
feed is that assembly, once, and the rule is ``ApiCallError.transient`` everywhere.

A feed also says how a failed job ended (``end_line``): the service's last line is "Job
failed.", and on Vertex AI there is none, while the job list shows the cause; a reader shows
that cause after the job's last line.

No Textual here (import-linter holds it): every call blocks; the TUI runs them in thread
workers, the CLI in its main thread.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

from tui_app.api.errors import ApiCallError
from tui_app.api.log_stream import BACKOFF_SECONDS, LogStream, cloud_settle, normalize_timestamp
from tui_app.model.jobs.states import JobState
from tui_app.model.jobs.task_names import SERVICE_TASK
from tui_app.model.logs.failure_cause import job_failed_line
from tui_app.model.logs.log_line import LogLine
from tui_app.model.logs.severity import SEVERITIES

if TYPE_CHECKING:
    from tui_app.api.connection import Connection

__all__ = ["END_INSERT_ID", "LogFeed", "failed_end_line"]

END_INSERT_ID: Final = "~tui-app-end"
"""The insertId of ``end_line``'s line: no entry has it, and ``~`` sorts after the ids a
server gives, so the line keys after every line of its timestamp."""


def failed_end_line(job: Mapping[str, Any], after: tuple[str, str] | None) -> LogLine | None:
    """The line a log reader ends a FAILED job's logs with: ``Job failed: <cause>``, the cause
    as the job list's ERROR column shows it (``failure_cause`` of errorMessage: for most
    messages their first line, for a replica's traceback its exception line). None for a job
    that did not fail, or failed without a message.

    It is the service's own line (``service``, ERROR), stamped at the job's endTime, or just
    after ``after`` (the newest line's key) when that is later, so it sorts last.
    """
    if job.get("state") != JobState.FAILED.value:
        return None
    message = job.get("errorMessage")
    text = job_failed_line(message if isinstance(message, str) else None)
    if text == job_failed_line(None):
        return None  # no cause to add
    stamp = ""
    with contextlib.suppress(ValueError):
        stamp = normalize_timestamp(str(job.get("endTime") or ""))
    if after is not None and after[0] > stamp:
        stamp = after[0]
    return LogLine(stamp, END_INSERT_ID, SERVICE_TASK, SEVERITIES["ERROR"], text)


class LogFeed:
    """The logs of one job (optionally one replica, one trial): open, tail, follow, history.

    ``open`` (or ``open_retrying``) reads the job and the connection first; the reading
    methods need it. ``tail``/``read_all``/``follow`` belong to one thread; ``history`` may run
    in others, each call on its own cursor.
    """

    def __init__(
        self,
        project: str,
        job_id: str,
        read_job: Callable[[], dict[str, Any]],
        connection: Callable[[], Connection],
        *,
        task_name: str | None = None,
        trial_id: str | None = None,
        settle: bool = True,
        batch_limit: int | None = None,
    ) -> None:
        """Build a feed; nothing is read until ``open``.

        Args:
            project: The project the job is in.
            job_id: The job.
            read_job: jobs.get for this job. The TUI routes it through its job source, which
                reconnects after the service went away; the CLI calls its client directly.
            connection: The current connection. Called when the feed opens and again for
                each ``history``, so history after a reconnection uses the new one, as the
                job reads do.
            task_name: Only this replica's lines (``master-replica-0``); None for all.
            trial_id: Only this trial's lines.
            settle: Leave the cloud's newest 5 s out (gcloud's rule; see ``LogStream``). A
                single read (``read_all``) has no cursor to protect and may pass False.
            batch_limit: At most this many lines per batch from ``follow`` (None: all), so a
                backlog reaches the reader in parts.
        """
        self.project = project
        self.job_id = job_id
        self._last_line: LogLine | None = None
        """The newest line ``follow`` handed on: a service line with the cause ends the log."""
        self.task_name = task_name
        self.trial_id = trial_id
        self.settle = settle
        self.batch_limit = batch_limit
        self._read_job = read_job
        self._connection = connection
        self._stream: LogStream | None = None
        self.job: dict[str, Any] | None = None
        """The job as last read (``open``, then every refresh while following)."""
        self.connection: Connection | None = None
        """The connection the feed opened on; None before ``open``."""

    # -- opening -------------------------------------------------------------------------------

    def open(self) -> dict[str, Any]:
        """Read the job (an unknown one is the server's NOT_FOUND, not an empty log) and set up
        the stream for the connection.

        Returns:
            The job, as read.

        Raises:
            ApiCallError: the job read or the connection failed; the feed stays unopened.
        """
        job = self._read_job()
        connection = self._connection()
        self.job = job
        self.connection = connection
        self._stream = LogStream(
            connection,
            self.project,
            self.job_id,
            task_name=self.task_name,
            trial_id=self.trial_id,
            settle_seconds=cloud_settle(connection.local) if self.settle else 0.0,
            batch_limit=self.batch_limit,
            job=job,
        )
        return job

    def open_retrying(
        self, stop: threading.Event, on_error: Callable[[ApiCallError | None], object]
    ) -> dict[str, Any] | None:
        """``open``, tried again after a transient failure, like ``follow``'s polls.

        A dropped keep-alive connection or a service that is restarting must not leave a
        reader with nothing for good. Each failure goes to ``on_error(exc)`` (the last one too,
        when it is the server's decision), and a success after failures calls
        ``on_error(None)``.

        Returns:
            The job; None when a failure was not transient or ``stop`` was set while waiting.
        """
        failures = 0
        while True:
            try:
                job = self.open()
            except ApiCallError as exc:
                on_error(exc)
                if not exc.transient:
                    return None
                if stop.wait(BACKOFF_SECONDS[min(failures, len(BACKOFF_SECONDS) - 1)]):
                    return None
                failures += 1
                continue
            if failures:
                on_error(None)
            return job

    def _opened(self) -> LogStream:
        if self._stream is None:
            raise RuntimeError("LogFeed.open() first: the stream depends on the job")
        return self._stream

    # -- reading -------------------------------------------------------------------------------

    def read_all(self) -> list[LogLine]:
        """Every line there is now, oldest first (``jobs logs`` without ``--follow``).

        Raises:
            ApiCallError: the read failed.
        """
        return self._seen(self._opened().poll())

    def tail(self, limit: int) -> list[LogLine]:
        """The last ``limit`` lines, oldest first; ``follow`` continues after them.

        Raises:
            ApiCallError: the read failed; ``follow`` then starts from the beginning.
        """
        return self._seen(self._opened().tail(limit))

    def _seen(self, lines: list[LogLine]) -> list[LogLine]:
        """Note the newest line handed on (``end_line`` looks at it)."""
        if lines:
            self._last_line = lines[-1]
        return lines

    def _refresh_job(self) -> dict[str, Any]:
        job = self._read_job()
        self.job = job
        return job

    def follow(
        self,
        stop: threading.Event,
        on_lines: Callable[[list[LogLine]], object],
        interval: Callable[[], float],
        on_error: Callable[[ApiCallError | None], object],
        on_skip: Callable[[list[LogLine]], object] | None = None,
        may_skip: Callable[[], bool] = lambda: True,
    ) -> None:
        """New lines to ``on_lines`` until the job has ended and its logs are drained, or until
        ``stop`` is set (see ``LogStream.follow``). With ``on_skip``, a backlog is jumped over
        to the tail (``LogStream.follow`` says when) instead of being drained.

        The job read at ``open`` already counts: a job that had ended then ends the follow
        without another read. Transient failures go to ``on_error`` and are retried with
        backoff; ``self.job`` follows every job read.

        Raises:
            ApiCallError: a failure that is not transient; retrying would not change it.
        """
        stream = self._opened()
        if self.job is not None:
            stream.note_job(self.job)
        refresh = self._refresh_job

        def seen(lines: list[LogLine]) -> object:
            return on_lines(self._seen(lines))

        def skipped(lines: list[LogLine]) -> object:
            return on_skip(self._seen(lines)) if on_skip is not None else None

        stream.follow(
            stop, seen, refresh, interval, on_error, skipped if on_skip else None, may_skip
        )

    def end_line(self) -> LogLine | None:
        """After ``follow`` returned (the job ended, its lines drained): the line to show last
        when the job FAILED, with its cause (``failed_end_line``); None otherwise. None for
        one trial's lines too: the job's errorMessage need not be about that trial."""
        if self.job is None or self.trial_id is not None:
            return None
        last = self._last_line
        if (
            last is not None
            and last.task_name == SERVICE_TASK
            and last.text.startswith("Job failed:")
        ):
            return None  # the service's own last line says why already
        return failed_end_line(self.job, self._opened().newest)

    def request_skip(self) -> None:
        """Ask ``follow`` for the newest line now (``G``); any thread may call it."""
        if self._stream is not None:
            self._stream.request_skip()

    def history(
        self,
        before: tuple[str, str],
        total: int,
        page: int,
        *,
        task_name: str | None = None,
        stop: threading.Event | None = None,
    ) -> Iterator[list[LogLine]]:
        """Up to ``total`` lines before the line keyed ``before``, newest page first.

        Each page holds at most ``page`` lines, oldest first within it. A reader showing lines
        as they come asks for history on demand (the user scrolled to the top of a view), so
        the pages are read lazily, one per step, on a cursor of their own.

        Args:
            before: ``LogLine.key`` of the oldest line the reader has.
            total: Lines wanted in all.
            page: Lines per page.
            task_name: Only this replica's lines; None: the feed's own selection.
            stop: When set, no further page is read.

        Raises:
            ApiCallError: a read failed (when the step that needed it runs).
        """
        stream = LogStream(
            self._connection(),
            self.project,
            self.job_id,
            task_name=task_name or self.task_name,
            trial_id=self.trial_id,
            job=self.job,
        )
        stream.start_before(before)
        while total > 0 and not (stop is not None and stop.is_set()):
            lines = stream.older(min(page, total))
            if not lines:  # the beginning of the log
                return
            total -= len(lines)
            yield lines
