"""The single writer of log entries: tails replica files and records service events.

One thread owns every insert, so timestamps and insertIds (the rowid) increase together: gcloud's
stream-logs keeps an entry only if (timestamp, insertId) is greater than the last one it kept,
compared as strings (``timefmt``). Offsets are committed in the same transaction as the lines
they cover, so a restarted service resumes each file exactly where the store stopped.
"""

from __future__ import annotations

import concurrent.futures
import logging
import sqlite3
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tui_app.local.logs.log_index import LogIndex
from tui_app.local.logs.log_ingest import LogSource
from tui_app.local.logs.log_retention import LogRetention
from tui_app.local.store import LogStore
from tui_app.model.logs.severity import SEVERITIES

log = logging.getLogger(__name__)

POLL_SECONDS = 0.05
CYCLE_BYTES = 1024 * 1024
_INSERT = (
    "INSERT INTO log_entries (project, job_id, task_name, trial_id, log_name, ts_us, receive_us,"
    " severity, message) VALUES (?,?,?,?,?,?,?,?,?)"
)


@dataclass(frozen=True)
class ServiceEntry:
    """A lifecycle message about a job (task_name ``service``)."""

    project: str
    job_id: str
    message: str
    severity: int
    log_name: str
    task_name: str = "service"
    trial_id: str | None = None

    @classmethod
    def of_job(
        cls, project: str, job_id: str, message: str, severity: int, trial: str | None = None
    ) -> ServiceEntry:
        """A line in the job's own log, under the log name AI Platform gave the platform's."""
        log_name = f"projects/{project}/logs/ml.googleapis.com%2F{job_id}"
        return cls(project, job_id, message, severity, log_name, trial_id=trial)


_Marks = tuple[tuple[str, int], ...]
"""(source path, its size in bytes) of each file of a service entry's job when it was emitted."""


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _due(
    queued: list[tuple[ServiceEntry, _Marks]], sources: dict[str, LogSource]
) -> tuple[list[tuple[ServiceEntry, _Marks]], list[tuple[ServiceEntry, _Marks]], dict[str, int]]:
    """Which queued entries this cycle stores: those whose job's files were read up to where
    they stood at ``emit``, in order (one held holds its job's later ones too). The rest are
    held, with how many bytes of each file this cycle may read: up to the first held mark, so
    the entry goes in before what was written after it."""
    due: list[tuple[ServiceEntry, _Marks]] = []
    held: list[tuple[ServiceEntry, _Marks]] = []
    waiting_jobs: set[tuple[str, str]] = set()
    limits: dict[str, int] = {}
    for entry, marks in queued:
        job = (entry.project, entry.job_id)
        short = {
            path: size - (src.offset + len(src.partial))
            for path, size in marks
            if (src := sources.get(path)) is not None
            and src.offset + len(src.partial) < size <= _size(src.path)  # not truncated since
        }
        if job in waiting_jobs or short:
            held.append((entry, marks))
            waiting_jobs.add(job)
            for path, left in short.items():
                limits[path] = min(limits.get(path, left), left)
            continue
        due.append((entry, marks))
    return due, held, limits


class LogWriter(threading.Thread):
    """Polls registered sources every ``POLL_SECONDS`` and commits what they wrote."""

    def __init__(
        self,
        store: LogStore,
        poll_seconds: float = POLL_SECONDS,
        retention: LogRetention | None = None,
    ) -> None:
        super().__init__(name="log-writer", daemon=True)
        self._store = store
        self._poll = poll_seconds
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._sources: dict[str, LogSource] = {}
        self._pending: list[tuple[ServiceEntry, _Marks]] = []
        """Service entries to commit, each with where its job's files stood when it was emitted
        (``emit``): it is stored after those bytes, before any written later."""
        self._drains: list[tuple[list[LogSource], concurrent.futures.Future[None]]] = []
        self._last_us = 0
        self.commits = 0
        """Transactions committed so far: ``entries:follow`` asks again only once it moved."""
        self.error: str | None = None
        """The last write failure (disk full...), shown by ``service status``; None when healthy."""
        self._failed_since: float | None = None
        """When writes began to fail (``time.time()``), until one succeeds again."""
        self._failed_jobs: set[tuple[str, str]] = set()
        """(project, job id) of each job whose lines waited meanwhile: told when they are in."""
        self.rows = 0
        """Entries committed by this writer so far."""
        self._indexed_rows = 0
        self.index = LogIndex()
        """The full-text index, kept behind the commits (``log_index``)."""
        self.retention = retention
        """Deletes lines past their age or the store's size cap (``log_retention``)."""

    def add_source(self, source: LogSource) -> None:
        """Start tailing a file from the offset the store recorded for it."""
        conn = self._store.reader()
        row = conn.execute(
            "SELECT offset FROM log_sources WHERE path=?", (str(source.path),)
        ).fetchone()
        if row:
            source.offset = int(row[0])
        with self._lock:
            self._sources[str(source.path)] = source
        self._wake.set()

    def emit(self, entry: ServiceEntry) -> None:
        """Queue a service entry; it is committed within a poll or two, after every line its
        job's replicas had written when it was emitted and before every line they write later.

        Without that order a restart's line could land after the new run's first lines (the
        writer had taken the queue before the line came, then read the new run's output), or
        before the old run's last ones: where the logs view draws a restart's divider, it must
        be between the runs."""
        with self._lock:
            marks = tuple(
                (path, _size(src.path))
                for path, src in self._sources.items()
                if src.project == entry.project and src.job_id == entry.job_id
            )
            self._pending.append((entry, marks))
        self._wake.set()

    def drain(self, sources: Iterable[LogSource]) -> concurrent.futures.Future[None]:
        """Read ``sources`` to their very end (partial last lines too), commit, stop tailing them.

        The future completes once every byte they hold is queryable.
        """
        fut: concurrent.futures.Future[None] = concurrent.futures.Future()
        with self._lock:
            self._drains.append((list(sources), fut))
        self._wake.set()
        return fut

    def stop(self) -> None:
        self._stopping.set()
        self._wake.set()

    def run(self) -> None:
        conn = self._store.writer()
        row = conn.execute("SELECT max(ts_us) FROM log_entries").fetchone()
        self._last_us = int(row[0] or 0)
        try:
            while True:
                busy = self._cycle(conn)
                self._keep_index(conn)
                if self.retention is not None and self.retention.due():
                    self.retention.run(conn)
                if self._stopping.is_set():
                    deadline = time.monotonic() + 30  # take what is already written, then stop
                    while self._cycle(conn) and time.monotonic() < deadline:
                        pass
                    return
                if not busy and self.index.caught_up:
                    self._wake.wait(self._poll)
                    self._wake.clear()
        finally:
            conn.close()

    def _keep_index(self, conn: sqlite3.Connection) -> None:
        """Index what was committed, in batches between commits (``log_index``): rows wait at
        most about a second, and a backlog is worked off a quarter second at a time."""
        waiting = self.rows - self._indexed_rows
        if self.index.due(waiting):
            self.index.catch_up(conn)
            if self.index.caught_up:
                self._indexed_rows = self.rows

    def _cycle(self, conn: sqlite3.Connection) -> bool:
        """One pass: a bounded read of every source, one commit. True when bytes are waiting.

        Each source contributes at most ``CYCLE_BYTES`` per pass, so a flooding replica cannot
        hold up other jobs' lines (or its own job's end) behind one huge transaction, and every
        entry's timestamp stays within one short pass of when it was read.
        """
        with self._lock:
            sources = dict(self._sources)
            queued, self._pending = self._pending, []
            drains = list(self._drains)
        draining = {str(s.path): s for srcs, _ in drains for s in srcs}
        for path, src in draining.items():
            sources.setdefault(path, src)
        pending, held, limits = _due(queued, sources)
        if held:
            with self._lock:
                self._pending = held + self._pending
        now = max(int(time.time() * 1_000_000), self._last_us)
        rows: list[tuple[object, ...]] = [
            (
                e.project,
                e.job_id,
                e.task_name,
                e.trial_id,
                e.log_name,
                now,
                now,
                e.severity,
                e.message,
            )
            for e, _ in pending
        ]
        offsets: list[tuple[str, int]] = []
        waiting: set[str] = set()
        for path, src in sources.items():
            limit = min(CYCLE_BYTES, limits.get(path, CYCLE_BYTES))
            lines, more = src.read(final=path in draining and path not in limits, limit=limit)
            if more or path in limits:
                waiting.add(path)
            if lines:
                meta = (
                    src.project,
                    src.job_id,
                    src.task_name,
                    src.trial_id,
                    src.log_name,
                    now,
                    now,
                )
                severities = src.severities(lines, more)
                rows.extend(
                    (*meta, severity, text)
                    for severity, text in zip(severities, lines, strict=True)
                )
                offsets.append((path, src.offset))
        if rows or offsets:
            try:
                conn.execute("BEGIN IMMEDIATE")
                conn.executemany(_INSERT, rows)
                conn.executemany(
                    "INSERT INTO log_sources (path, offset) VALUES (?, ?) "
                    "ON CONFLICT(path) DO UPDATE SET offset=excluded.offset",
                    offsets,
                )
                conn.execute("COMMIT")
                self._last_us = now
                self.commits += 1
                self.rows += len(rows)
                if self._failed_since is not None:
                    self._tell_recovered()
                self.error = None
            except sqlite3.Error as exc:
                # Disk full or similar: keep the lines (roll back the offsets too) and retry.
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                self.error = f"Cannot write log entries: {exc}"
                log.error(self.error)
                if self._failed_since is None:
                    self._failed_since = time.time()
                self._failed_jobs |= {(str(r[0]), str(r[1])) for r in rows}
                self._rewind(list(sources.values()))
                with self._lock:
                    self._pending = pending + self._pending
                time.sleep(0.5)
                return False
        # A drain is done once a final read of each of its sources found nothing more.
        for srcs, fut in drains:
            if any(str(s.path) in waiting for s in srcs):
                continue
            with self._lock:
                self._drains = [d for d in self._drains if d[1] is not fut]
                for s in srcs:
                    self._sources.pop(str(s.path), None)
            fut.set_result(None)
        return bool(waiting)

    def _tell_recovered(self) -> None:
        """Say in each waiting job's log that its lines could not be stored for a while, once
        they are: its log is on the same disk, so this is the first moment it can be said.
        The lines themselves waited in the replicas' files and are all in; their timestamps
        are when they were stored (the writer stamps lines as it reads them)."""
        assert self._failed_since is not None
        began = time.strftime("%H:%M:%S", time.gmtime(self._failed_since))
        lasted = max(1, round(time.time() - self._failed_since))
        cause = (self.error or "").removeprefix("Cannot write log entries: ")
        message = (
            f"The log store could not be written for {lasted}s, from {began} UTC ({cause}). "
            "No line was lost: each waited in its replica's output and was stored when writing "
            "worked again, stamped with the time it was stored."
        )
        with self._lock:
            self._pending += [
                (ServiceEntry.of_job(project, job_id, message, SEVERITIES["WARNING"]), ())
                for project, job_id in sorted(self._failed_jobs)
            ]
        self._failed_since = None
        self._failed_jobs = set()
        self._wake.set()

    def _rewind(self, sources: list[LogSource]) -> None:
        """After a failed commit, re-read what was not committed, from the store's offsets."""
        conn = self._store.reader()
        committed = dict(conn.execute("SELECT path, offset FROM log_sources").fetchall())
        for src in sources:
            src.offset = int(committed.get(str(src.path), 0))
            src.partial = bytearray()
            src.open_record = None  # the re-read lines start afresh (see LogSource.severities)
