"""SQLite persistence: jobs in ``jobs.sqlite``, log entries in ``logs.sqlite`` (both WAL).

Two files, so the log writer's big transactions never hold the lock a job update needs. Only
the event loop writes jobs; only the log writer thread writes log entries. ``jobs.sqlite`` also
holds the replicas' CPU and memory samples (``replica_samples``), written only by the metrics
sampler (``metrics.py``) in small transactions.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

from tui_app.model.logs.text_search import words_match

_JOBS_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    project TEXT NOT NULL,
    job_id TEXT NOT NULL,
    state TEXT NOT NULL,
    body TEXT NOT NULL,
    runtime TEXT NOT NULL DEFAULT '{}',
    UNIQUE (project, job_id)
);
CREATE INDEX IF NOT EXISTS jobs_project_seq ON jobs (project, seq);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs (state);
"""

LOGS_SCHEMA = """
CREATE TABLE IF NOT EXISTS log_entries (
    id INTEGER PRIMARY KEY,
    project TEXT NOT NULL,
    job_id TEXT NOT NULL,
    task_name TEXT NOT NULL,
    trial_id TEXT,
    log_name TEXT NOT NULL,
    ts_us INTEGER NOT NULL,
    receive_us INTEGER NOT NULL,
    severity INTEGER NOT NULL,
    message TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS log_job_ts ON log_entries (project, job_id, ts_us, id);
CREATE INDEX IF NOT EXISTS log_job_task ON log_entries (project, job_id, task_name, ts_us, id);
CREATE TABLE IF NOT EXISTS log_sources (
    path TEXT PRIMARY KEY,
    offset INTEGER NOT NULL
);
-- The full-text index of the lines (logs/log_index.py): external content, no second copy of
-- the text; rows up to indexed_upto are in it, later ones are checked by scan.
CREATE VIRTUAL TABLE IF NOT EXISTS log_text USING fts5(
    message, content='log_entries', content_rowid='id', tokenize='unicode61'
);
CREATE TABLE IF NOT EXISTS log_index_state (
    one INTEGER PRIMARY KEY CHECK (one = 0),
    indexed_upto INTEGER NOT NULL
);
INSERT OR IGNORE INTO log_index_state (one, indexed_upto) VALUES (0, 0);
"""


SAMPLES_SCHEMA = """
CREATE TABLE IF NOT EXISTS replica_samples (
    project TEXT NOT NULL,
    job_id TEXT NOT NULL,
    task_name TEXT NOT NULL,
    t_ms INTEGER NOT NULL,
    span_ms INTEGER NOT NULL,
    n INTEGER NOT NULL,
    cpu REAL NOT NULL,
    cpu_max REAL NOT NULL,
    mem INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS replica_samples_key
    ON replica_samples (project, job_id, task_name, t_ms);
"""
"""One row per replica sample (``span_ms`` 0) or per merged bucket of older samples (``span_ms``
its width, ``n`` the samples in it): ``t_ms`` is the sample's time or the bucket's start (ms since
the epoch), ``cpu`` the mean CPU percent, ``cpu_max`` the highest, ``mem`` the peak RSS in bytes.
See ``metrics.py`` for how old samples are merged."""


class StoreError(RuntimeError):
    """The store cannot be opened or written (disk full, unwritable state dir...)."""

    def __init__(self, message: str, full: bool = False) -> None:
        super().__init__(message)
        self.full = full
        """The disk (or the database's size limit) is full: retrying later may work."""


def write_error(path: Path, exc: sqlite3.Error) -> StoreError:
    """A failed write as a StoreError; SQLite rolled the statement back, nothing is half done."""
    full = getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or "full" in str(exc)
    why = "the disk is full" if full else str(exc)
    return StoreError(f"Cannot write to {path}: {why}.", full=full)


def connect(path: Path) -> sqlite3.Connection:
    """A connection with the pragmas every user of the store needs."""
    try:
        conn = sqlite3.connect(path, timeout=10.0, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=10000")
    except sqlite3.Error as exc:
        raise StoreError(f"Cannot open the store {path}: {exc}") from exc
    return conn


class DuplicateJobError(Exception):
    """A job with this id already exists in the project."""


def job_text(job: dict[str, Any]) -> str:
    """A job's stored JSON: compact, since list pages copy it into their answers as it is."""
    return json.dumps(job, separators=(",", ":"))


class JobStore:
    """Jobs as their wire JSON, in creation order (``seq``), plus private runtime state."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn = connect(path)
        try:
            self._conn.executescript(_JOBS_SCHEMA)
        except sqlite3.Error as exc:
            raise StoreError(f"Cannot open the store {path}: {exc}") from exc
        self._lock = threading.Lock()

    def close(self) -> None:
        self._conn.close()

    def insert(self, project: str, job: dict[str, Any], runtime: dict[str, Any]) -> int:
        """Store a new job; its ``seq`` orders jobs newest-first in lists."""
        with self._lock:
            try:
                cur = self._conn.execute(
                    "INSERT INTO jobs (project, job_id, state, body, runtime) VALUES (?,?,?,?,?)",
                    (project, job["jobId"], job["state"], job_text(job), json.dumps(runtime)),
                )
            except sqlite3.IntegrityError as exc:
                raise DuplicateJobError(job["jobId"]) from exc
            except sqlite3.Error as exc:
                raise write_error(self.path, exc) from exc
            return int(cur.lastrowid or 0)

    def update(
        self, project: str, job: dict[str, Any], runtime: dict[str, Any] | None = None
    ) -> None:
        """Replace a job's body (and runtime state when given): all of it, or (StoreError)
        nothing."""
        with self._lock:
            try:
                self._update(project, job, runtime)
            except sqlite3.Error as exc:
                raise write_error(self.path, exc) from exc

    def _update(self, project: str, job: dict[str, Any], runtime: dict[str, Any] | None) -> None:
        if runtime is None:
            self._conn.execute(
                "UPDATE jobs SET state=?, body=? WHERE project=? AND job_id=?",
                (job["state"], job_text(job), project, job["jobId"]),
            )
        else:
            self._conn.execute(
                "UPDATE jobs SET state=?, body=?, runtime=? WHERE project=? AND job_id=?",
                (job["state"], job_text(job), json.dumps(runtime), project, job["jobId"]),
            )

    def get(self, project: str, job_id: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT body FROM jobs WHERE project=? AND job_id=?", (project, job_id)
            ).fetchone()
        return json.loads(row[0]) if row else None

    def runtime(self, project: str, job_id: str) -> dict[str, Any]:
        with self._lock:
            row = self._conn.execute(
                "SELECT runtime FROM jobs WHERE project=? AND job_id=?", (project, job_id)
            ).fetchone()
        return json.loads(row[0]) if row else {}

    def iter_newest_first(
        self, project: str, before_seq: int | None = None, batch: int = 200
    ) -> Iterator[tuple[int, str, str]]:
        """(seq, state, body) of a project's jobs from newest to oldest, read in batches (keyset
        paging). The body is the stored JSON text, undecoded: a list page copies most of them
        into its answer as they are (``JobService.list``)."""
        cursor = before_seq
        while True:
            with self._lock:
                if cursor is None:
                    rows = self._conn.execute(
                        "SELECT seq, state, body FROM jobs WHERE project=? "
                        "ORDER BY seq DESC LIMIT ?",
                        (project, batch),
                    ).fetchall()
                else:
                    rows = self._conn.execute(
                        "SELECT seq, state, body FROM jobs WHERE project=? AND seq<? "
                        "ORDER BY seq DESC LIMIT ?",
                        (project, cursor, batch),
                    ).fetchall()
            yield from rows
            if len(rows) < batch:
                return
            cursor = rows[-1][0]

    def in_states(self, states: Sequence[str]) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
        """(project, job, runtime) of every job in one of ``states``, oldest first."""
        marks = ",".join("?" * len(states))
        with self._lock:
            rows = self._conn.execute(
                f"SELECT project, body, runtime FROM jobs WHERE state IN ({marks}) ORDER BY seq",
                tuple(states),
            ).fetchall()
        return [(p, json.loads(b), json.loads(r)) for p, b, r in rows]

    def count(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT count(*) FROM jobs").fetchone()[0])


class LogStore:
    """Log entries. Writes come from one thread (the log writer); reads from any thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        conn = connect(path)
        try:
            conn.executescript(LOGS_SCHEMA)
        except sqlite3.Error as exc:
            raise StoreError(f"Cannot open the store {path}: {exc}") from exc
        finally:
            conn.close()
        self._local = threading.local()

    def reader(self) -> sqlite3.Connection:
        """This thread's read connection."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = connect(self.path)
            conn.execute("PRAGMA query_only=1")
            # SEARCH on the lines the full-text index has not reached (logs/log_query.py).
            conn.create_function("log_words", 2, words_match, deterministic=True)
            self._local.conn = conn
        return conn

    def writer(self) -> sqlite3.Connection:
        """A new connection for the single writer thread."""
        return connect(self.path)

    @cached_property
    def has_json_functions(self) -> bool:
        """Whether this SQLite has its JSON functions (built in since 3.38, optional before)."""
        try:
            self.reader().execute("SELECT json_array(1)").fetchone()
        except sqlite3.OperationalError:
            return False
        return True
