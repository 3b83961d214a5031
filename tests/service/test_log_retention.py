"""Retention of log lines (tui_app/local/logs/log_retention.py) on a real store: old lines and
lines past the size cap go, a live job's never do, and the full-text index agrees afterwards."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tui_app.local.logs.log_index import LogIndex, indexed_upto
from tui_app.local.logs.log_retention import LogRetention, last_id_before, used_bytes
from tui_app.local.store import LogStore

DAY_US = 86_400 * 1_000_000
NOW = 1_800_000_000.0


def _fill(store: LogStore, jobs: dict[str, int], days_ago: float, text: str) -> None:
    """``jobs[job]`` lines per job, stamped ``days_ago`` (in id order, as the writer does)."""
    conn = store.writer()
    ts = int((NOW - days_ago * 86_400) * 1e6)
    row = conn.execute("SELECT max(ts_us) FROM log_entries").fetchone()
    ts = max(ts, int(row[0] or 0) + 1)
    rows = []
    for job, count in jobs.items():
        for i in range(count):
            rows.append(("p", job, "master-replica-0", None, "l", ts, ts, 200, f"{text} {job} {i}"))
            ts += 1
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO log_entries (project, job_id, task_name, trial_id, log_name, ts_us,"
        " receive_us, severity, message) VALUES (?,?,?,?,?,?,?,?,?)",
        rows,
    )
    conn.execute("COMMIT")
    conn.close()


def _matches(conn: sqlite3.Connection, word: str) -> list[int]:
    return [
        r[0]
        for r in conn.execute(
            "SELECT rowid FROM log_text WHERE log_text MATCH ? ORDER BY rowid", [f'"{word}"']
        )
    ]


def test_old_lines_go_a_live_jobs_stay_and_the_index_agrees(tmp_path: Path) -> None:
    store = LogStore(tmp_path / "logs.sqlite")
    _fill(store, {"old_a": 300, "old_live": 200}, days_ago=40, text="ancient")
    _fill(store, {"new_b": 100}, days_ago=1, text="recent")
    conn = store.writer()
    index = LogIndex()
    index.catch_up(conn, budget=60)
    assert index.caught_up and len(_matches(conn, "ancient")) == 500
    retention = LogRetention(lambda: [("p", "old_live")], retention_days=30)
    cutoff = last_id_before(conn, int((NOW - 30 * 86_400) * 1e6))
    assert cutoff == 500  # every line of the 40-day-old jobs, none of the new one's
    while retention.run(conn, now=NOW):
        pass
    jobs = dict(conn.execute("SELECT job_id, count(*) FROM log_entries GROUP BY job_id"))
    assert jobs == {"old_live": 200, "new_b": 100}
    assert retention.state.deleted == 300
    # The index forgot exactly the deleted lines: a search finds what is left, nothing else.
    kept = [
        r[0]
        for r in conn.execute(
            "SELECT id FROM log_entries WHERE message LIKE 'ancient%' ORDER BY id"
        )
    ]
    assert _matches(conn, "ancient") == kept
    assert _matches(conn, "old_a") == []
    conn.execute("INSERT INTO log_text (log_text) VALUES ('integrity-check')")  # raises if not
    conn.close()


def test_past_the_size_cap_the_oldest_lines_go_and_space_is_reused(tmp_path: Path) -> None:
    store = LogStore(tmp_path / "logs.sqlite")
    text = "x" * 400
    _fill(store, {f"job_{i}": 500 for i in range(8)}, days_ago=2, text=text)
    conn = store.writer()
    LogIndex().catch_up(conn, budget=60)
    full = used_bytes(conn)
    retention = LogRetention(lambda: [("p", "job_7")], max_bytes=full // 2)
    while retention.run(conn, now=NOW):
        pass
    assert used_bytes(conn) <= full // 2 * 0.9 + 64 * 1024
    left = [r[0] for r in conn.execute("SELECT DISTINCT job_id FROM log_entries ORDER BY 1")]
    assert "job_7" in left and "job_0" not in left  # oldest first, never the live one
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    assert conn.execute("PRAGMA freelist_count").fetchone()[0] > pages // 3
    # Writing a third of it again reuses the freed pages: the store does not grow.
    _fill(store, {f"more_{i}": 500 for i in range(3)}, days_ago=1, text=text)
    assert conn.execute("PRAGMA page_count").fetchone()[0] == pages
    assert indexed_upto(conn) > 0
    conn.close()
