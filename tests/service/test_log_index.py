"""The full-text index's catch-up (tui_app/local/logs/log_index.py) on a real store: batches up
to the newest row, and a write that fails is reported and retried later, not in a spin."""

from __future__ import annotations

from pathlib import Path

from tui_app.local.logs.log_index import BATCH_ROWS, LogIndex, progress
from tui_app.local.store import LogStore


def _rows(store: LogStore, n: int) -> None:
    conn = store.writer()
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO log_entries (project, job_id, task_name, trial_id, log_name, ts_us,"
        " receive_us, severity, message) VALUES ('p','j','t',NULL,'l',?,?,200,?)",
        [(i, i, f"line {i} of the backlog") for i in range(1, n + 1)],
    )
    conn.execute("COMMIT")
    conn.close()


def caught_up(index: LogIndex) -> bool:
    """Read fresh: each catch_up changes it."""
    return index.caught_up


def test_a_backlog_is_indexed_in_batches_until_the_newest_row(tmp_path: Path) -> None:
    store = LogStore(tmp_path / "logs.sqlite")
    _rows(store, BATCH_ROWS * 2 + 5)
    conn = store.writer()
    index = LogIndex()
    assert index.due(0)  # a store it has not seen: index first
    index.catch_up(conn, budget=0.0)  # one batch, then the budget is spent
    assert (caught_up(index), progress(conn).behind) == (False, BATCH_ROWS + 5)
    index.catch_up(conn, budget=60.0)
    assert (caught_up(index), progress(conn).behind) == (True, 0)
    assert not index.due(0)
    hits = conn.execute("SELECT count(*) FROM log_text WHERE log_text MATCH 'backlog'")
    assert hits.fetchone()[0] == BATCH_ROWS * 2 + 5
    conn.close()


def test_a_failed_batch_is_reported_and_not_retried_at_once(tmp_path: Path) -> None:
    store = LogStore(tmp_path / "logs.sqlite")
    _rows(store, 10)
    conn = store.writer()
    conn.execute("PRAGMA query_only=1")  # every write fails, as on a full disk
    index = LogIndex()
    assert index.catch_up(conn) == 0
    assert index.error is not None and index.error.startswith("Cannot index log lines: ")
    assert not index.due(10)  # a second later, not in a loop
    conn.execute("PRAGMA query_only=0")
    conn.close()
