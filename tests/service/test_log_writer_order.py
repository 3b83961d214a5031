"""A service line lands in its job's log between what the replicas wrote before it was emitted
and what they wrote after: a restart's divider between the two runs, whichever way the
writer's pass and the replica's output interleave."""

from __future__ import annotations

import time
from pathlib import Path

from tui_app.local.logs.log_ingest import LogSource
from tui_app.local.logs.log_writer import LogWriter, ServiceEntry
from tui_app.local.store import LogStore


def _stored(store: LogStore) -> list[tuple[str, str]]:
    rows = store.reader().execute("SELECT task_name, message FROM log_entries ORDER BY id")
    return [(str(t), str(m)) for t, m in rows]


def _run(writer: LogWriter, store: LogStore, count: int) -> list[tuple[str, str]]:
    """Start the writer, wait until ``count`` rows are stored, stop it: the rows."""
    writer.start()
    try:
        deadline = time.monotonic() + 20
        while len(rows := _stored(store)) < count:
            assert time.monotonic() < deadline, rows[-5:]
            time.sleep(0.02)
        return rows
    finally:
        writer.stop()
        writer.join(10)


def test_a_line_emitted_between_two_runs_is_stored_between_them(tmp_path: Path) -> None:
    """Everything is waiting before the writer's first pass: the old run's lines, the
    restart's line, the new run's lines. Taken in one pass, the service line would go first."""
    store = LogStore(tmp_path / "logs.sqlite")
    writer = LogWriter(store, poll_seconds=0.01)
    out = tmp_path / "master.log"
    other = tmp_path / "worker.log"
    out.write_text("".join(f"old {i}\n" for i in range(500)))
    other.write_text("worker before\n")
    writer.add_source(LogSource(out, "p", "j", "master-replica-0", "l", False))
    writer.add_source(LogSource(other, "p", "j", "worker-replica-0", "l", False))
    writer.emit(ServiceEntry.of_job("p", "j", "master-replica-0 restarted (1 of 5)", 300))
    with out.open("a") as f:
        f.write("".join(f"new {i}\n" for i in range(500)))
    with other.open("a") as f:
        f.write("worker after\n")
    rows = _run(writer, store, 1003)
    at = rows.index(("service", "master-replica-0 restarted (1 of 5)"))
    before, after = rows[:at], rows[at + 1 :]
    assert [m for t, m in before if t == "master-replica-0"] == [f"old {i}" for i in range(500)]
    assert [m for t, m in after if t == "master-replica-0"] == [f"new {i}" for i in range(500)]
    assert ("worker-replica-0", "worker before") in before
    assert ("worker-replica-0", "worker after") in after


def test_another_jobs_line_is_not_held_by_this_jobs_files(tmp_path: Path) -> None:
    store = LogStore(tmp_path / "logs.sqlite")
    writer = LogWriter(store, poll_seconds=0.01)
    out = tmp_path / "master.log"
    out.write_text("x\n" * 10)
    writer.add_source(LogSource(out, "p", "j", "master-replica-0", "l", False))
    writer.emit(ServiceEntry.of_job("p", "other", "Job is running.", 200))
    rows = _run(writer, store, 11)
    assert rows[0] == ("service", "Job is running.")  # first in the pass, as before


def test_a_file_cut_short_since_does_not_hold_the_line_for_ever(tmp_path: Path) -> None:
    """The file shrank below where it stood at emit (someone truncated it): waiting for bytes
    that will never be there would hold the line, and spin the writer, for ever."""
    store = LogStore(tmp_path / "logs.sqlite")
    writer = LogWriter(store, poll_seconds=0.01)
    out = tmp_path / "master.log"
    out.write_text("".join(f"old {i}\n" for i in range(100)))
    writer.add_source(LogSource(out, "p", "j", "master-replica-0", "l", False))
    writer.emit(ServiceEntry.of_job("p", "j", "Job is running.", 200))
    out.write_text("new 0\nnew 1\n")
    rows = _run(writer, store, 3)
    assert ("service", "Job is running.") in rows
    assert [m for t, m in rows if t == "master-replica-0"] == ["new 0", "new 1"]
