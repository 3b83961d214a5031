"""A full-text index over the stored log lines (SQLite FTS5), kept behind the writer.

Text searches in ``entries:list`` (``"out of memory"``, ``textPayload:"NaN"``) scanned every
line: about 5 s over 10 million. FTS5 finds the lines holding given words in milliseconds. The
index is *external content* (``content='log_entries'``): it stores its word lists, never a
second copy of the text.

Fed in batches, not by a trigger: measured on this machine, a trigger per row cut ingest from
~116k to 14-27k rows/s, while indexing every ~20k rows in a batch kept ~74k/s. The writer thread
calls ``LogIndex.catch_up`` between its commits; ``log_index_state.indexed_upto`` is the highest
``log_entries.id`` indexed so far. Rows above it (the last second or two, or a whole store that
predates the index, indexed in the background after an upgrade) are not in the index yet:
every query checks them by scan (``log_query``), so no line is ever missing from an answer.

The tables are in ``store.LOGS_SCHEMA`` (``log_text``, ``log_index_state``). The tokenizer is
FTS5's ``unicode61``: a word is a run of letters and digits (Unicode's L* and N*
categories), case and diacritics folded; everything else separates words.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass

BATCH_ROWS = 20_000
"""Rows indexed per transaction: large enough to amortise FTS5's per-commit merge work, small
enough that a catch-up never holds the writer (and new lines) for long."""
INDEX_EVERY_SECONDS = 1.0
"""Index at least this often while rows wait, so a line is searchable within a second or two."""
CATCH_UP_BUDGET_SECONDS = 0.25
"""The most one ``catch_up`` call spends before the writer takes new lines again."""


@dataclass(frozen=True)
class IndexProgress:
    """How far the index is: for ``service status`` and for answers that are partial."""

    indexed_upto: int
    newest: int

    @property
    def behind(self) -> int:
        """Rows stored but not indexed yet (checked by scan meanwhile)."""
        return max(0, self.newest - self.indexed_upto)


def indexed_upto(conn: sqlite3.Connection) -> int:
    """The highest ``log_entries.id`` in the index (0 before any)."""
    row = conn.execute("SELECT indexed_upto FROM log_index_state WHERE one = 0").fetchone()
    return int(row[0]) if row else 0


def progress(conn: sqlite3.Connection) -> IndexProgress:
    newest = conn.execute("SELECT max(id) FROM log_entries").fetchone()[0]
    return IndexProgress(indexed_upto(conn), int(newest or 0))


class LogIndex:
    """Indexes what the writer committed, a batch at a time (the writer's thread only)."""

    def __init__(self) -> None:
        self._last = 0.0
        self.error: str | None = None
        """Why the last batch failed (a full disk): the writer's lines are kept regardless."""
        self.caught_up = False
        """The last ``catch_up`` indexed every row there was (False at start: a store that
        predates the index, or rows a stopped service left, are indexed first)."""

    def due(self, pending_rows: int) -> bool:
        """Whether to index now: rows from before (not caught up), a batch's worth waiting, or
        rows waiting for a second."""
        if not self.caught_up:
            return True
        if not pending_rows:
            return False
        return pending_rows >= BATCH_ROWS or time.monotonic() - self._last >= INDEX_EVERY_SECONDS

    def catch_up(self, conn: sqlite3.Connection, budget: float = CATCH_UP_BUDGET_SECONDS) -> int:
        """Index waiting rows in batches until none wait or ``budget`` seconds passed; how many
        were indexed. A failure (disk full) is kept in ``error`` and retried next time."""
        started = time.monotonic()
        self._last = started
        done = 0
        while True:
            try:
                n = self._batch(conn)
            except sqlite3.Error as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                self.error = f"Cannot index log lines: {exc}"
                # Retried a second later (``due``), not at once: a full disk must not spin the
                # writer's thread. Searches read the rows it could not index by scan meanwhile.
                self.caught_up = True
                return done
            self.error = None
            done += n
            if n < BATCH_ROWS:
                self.caught_up = True
                return done
            if time.monotonic() - started >= budget:
                self.caught_up = False
                return done

    @staticmethod
    def _batch(conn: sqlite3.Connection) -> int:
        conn.execute("BEGIN IMMEDIATE")
        upto = indexed_upto(conn)
        row = conn.execute(
            "SELECT count(*), max(id) FROM "
            "(SELECT id FROM log_entries WHERE id > ? ORDER BY id LIMIT ?)",
            (upto, BATCH_ROWS),
        ).fetchone()
        count, last = int(row[0]), row[1]
        if count:
            conn.execute(
                "INSERT INTO log_text (rowid, message) "
                "SELECT id, message FROM log_entries WHERE id > ? AND id <= ?",
                (upto, last),
            )
            conn.execute("UPDATE log_index_state SET indexed_upto = ? WHERE one = 0", (last,))
        conn.execute("COMMIT")
        return count
