"""How long log lines are kept, and how much of the disk they may take: the store must not grow
without end.

Lines older than ``retention_days`` (30 by default, Cloud Logging's own default) are deleted, and
while the store holds more than ``max_bytes`` the oldest lines go first, until it is back under
90 % of it. A live job's lines are never deleted (the ``live`` callable names those jobs). The
full-text index follows: an external-content FTS5 index must be told each deleted row's text,
so it is, in the same transaction. Space freed is reused by SQLite for the next lines; the file
stops growing rather than shrinking.

Runs in the log writer's thread (the store's only writer), an hour apart, a quarter second of
work at a time so that new lines never wait long. Ids and timestamps grow together (one writer
stamps both), so "older than" is an id range found by bisection: no index on time is needed.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass

from tui_app.local.logs.log_index import indexed_upto
from tui_app.local.logs.log_limits import DEFAULT_MAX_BYTES, DEFAULT_RETENTION_DAYS

__all__ = ["DEFAULT_MAX_BYTES", "DEFAULT_RETENTION_DAYS", "LogRetention", "used_bytes"]
EVERY_SECONDS = 3600.0
BATCH_ROWS = 20_000
BUDGET_SECONDS = 0.25
KEEP_SHARE = 0.9
"""Past ``max_bytes``, delete until the store is back under this share of it."""

JobKey = tuple[str, str]


@dataclass
class RetentionState:
    """What the passes did, for ``service status`` (which reads the store's size itself)."""

    deleted: int = 0
    """Lines deleted since the service started."""
    error: str | None = None


def used_bytes(conn: sqlite3.Connection) -> int:
    """The store's pages in use (its file less the free pages SQLite will reuse)."""
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    free = conn.execute("PRAGMA freelist_count").fetchone()[0]
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    return int((pages - free) * size)


def last_id_before(conn: sqlite3.Connection, cutoff_us: int) -> int:
    """The highest id whose line is older than ``cutoff_us`` (0 when none), by bisection over
    the ids (their timestamps grow with them)."""
    lo_row = conn.execute("SELECT min(id), max(id) FROM log_entries").fetchone()
    lo, hi = lo_row
    if lo is None:
        return 0
    if _ts_at(conn, lo) >= cutoff_us:
        return 0
    lo, hi = int(lo), int(hi)
    while lo < hi:  # invariant: the line at or after lo is older than the cutoff
        mid = (lo + hi + 1) // 2
        if _ts_at(conn, mid) < cutoff_us:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _ts_at(conn: sqlite3.Connection, row_id: int) -> int:
    """The timestamp of the first line at or after ``row_id`` (ids have holes once deleted)."""
    row = conn.execute(
        "SELECT ts_us FROM log_entries WHERE id >= ? ORDER BY id LIMIT 1", (row_id,)
    ).fetchone()
    return int(row[0]) if row else 2**62


class LogRetention:
    """Deletes what the rules say, a batch at a time (the writer's thread only)."""

    def __init__(
        self,
        live: Callable[[], Collection[JobKey]],
        retention_days: float = DEFAULT_RETENTION_DAYS,
        max_bytes: int = DEFAULT_MAX_BYTES,
        every: float = EVERY_SECONDS,
    ) -> None:
        self.live = live
        self.retention_days = retention_days
        self.max_bytes = max_bytes
        self.every = every
        self.state = RetentionState()
        self._next = 0.0
        self._busy = False
        """A pass is under way (it goes on at the next call until nothing is left to delete)."""

    def due(self) -> bool:
        return self._busy or time.monotonic() >= self._next

    def run(
        self, conn: sqlite3.Connection, now: float | None = None, budget: float = BUDGET_SECONDS
    ) -> int:
        """Delete for up to ``budget`` seconds; how many lines. A pass that ran out of time
        goes on at the next call; one that is done waits ``every`` seconds."""
        started = time.monotonic()
        now = time.time() if now is None else now
        live = set(self.live())
        deleted = 0
        try:
            while True:
                cutoff = last_id_before(conn, int((now - self.retention_days * 86400) * 1e6))
                over = used_bytes(conn) > self.max_bytes
                n = 0
                if cutoff:
                    n = self._delete(conn, cutoff, live)
                if not n and over:
                    n = self._delete_oldest(conn, live)
                deleted += n
                if not n or time.monotonic() - started >= budget:
                    break
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            self.state.error = f"Cannot delete old log lines: {exc}"
            self._busy = False
            self._next = time.monotonic() + 60.0
            return deleted
        self.state.error = None
        self.state.deleted += deleted
        self._busy = bool(deleted) and time.monotonic() - started >= budget
        if not self._busy:
            self._next = time.monotonic() + self.every
        return deleted

    def _delete(self, conn: sqlite3.Connection, upto: int, live: set[JobKey]) -> int:
        """Delete one batch of lines with ids up to ``upto`` that no live job owns."""
        keep = " AND ".join("NOT (project = ? AND job_id = ?)" for _ in live) or "1"
        args: list[object] = [upto]
        for project, job_id in live:
            args += [project, job_id]
        ids = conn.execute(
            f"SELECT id FROM log_entries WHERE id <= ? AND {keep} ORDER BY id LIMIT {BATCH_ROWS}",
            args,
        ).fetchall()
        if not ids:
            return 0
        return self._delete_ids(conn, int(ids[0][0]), int(ids[-1][0]), keep, args[1:])

    def _delete_oldest(self, conn: sqlite3.Connection, live: set[JobKey]) -> int:
        """Past the size cap: one batch of the oldest lines no live job owns, unless the store
        is back under ``KEEP_SHARE`` of it."""
        if used_bytes(conn) <= self.max_bytes * KEEP_SHARE:
            return 0
        newest = conn.execute("SELECT max(id) FROM log_entries").fetchone()[0]
        return self._delete(conn, int(newest or 0), live)

    @staticmethod
    def _delete_ids(
        conn: sqlite3.Connection, first: int, last: int, keep: str, keep_args: list[object]
    ) -> int:
        conn.execute("BEGIN IMMEDIATE")
        upto = indexed_upto(conn)
        # The index holds the rows up to its watermark: tell it each one's text, then delete.
        conn.execute(
            "INSERT INTO log_text (log_text, rowid, message) SELECT 'delete', id, message"
            f" FROM log_entries WHERE id >= ? AND id <= ? AND id <= ? AND {keep}",
            [first, last, upto, *keep_args],
        )
        cur = conn.execute(
            f"DELETE FROM log_entries WHERE id >= ? AND id <= ? AND {keep}",
            [first, last, *keep_args],
        )
        conn.execute("COMMIT")
        return int(cur.rowcount)
