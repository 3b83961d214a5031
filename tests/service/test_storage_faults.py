"""Disk full and unwritable state dirs: a clear one-line error, and a store that stays consistent.

SQLite's ``PRAGMA max_page_count`` caps a connection's database, which fails writes with the
same SQLITE_FULL ("database or disk is full") a full disk gives; where this runs as root a small
tmpfs makes the real thing for a real service.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import _start, _stop, unique_id
from tests.support.live_service import basic_job
from tui_app.local.jobs import storage_error
from tui_app.local.logs.log_ingest import LogSource
from tui_app.local.logs.log_writer import LogWriter
from tui_app.local.store import JobStore, LogStore, StoreError


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui_app", "service", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("action", ["start", "run"])
def test_a_state_dir_that_cannot_be_created_is_one_clear_line(tmp_path: Path, action: str) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    state = blocker / "state"
    done = _cli(action, "--state-dir", str(state), "--port", "0")
    assert done.returncode == 1
    assert done.stderr == f"error: Cannot use the state dir {state}: Not a directory.\n"
    assert "Traceback" not in done.stdout + done.stderr


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs (root only; skipped elsewhere)."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_a_read_only_state_dir_is_one_clear_line(small_tmpfs: Path) -> None:
    (small_tmpfs / "state").mkdir()
    subprocess.run(["mount", "-o", "remount,ro", str(small_tmpfs)], check=True)
    done = _cli("start", "--state-dir", str(small_tmpfs / "state"), "--port", "0")
    assert done.returncode == 1
    assert "Read-only file system" in done.stderr and str(small_tmpfs / "state") in done.stderr
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr


def _fill(path: Path) -> Path:
    """Fill the file system of ``path`` to the last byte."""
    filler = path / "filler"
    with open(filler, "wb", buffering=0) as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
        except OSError:
            pass
        try:  # the last partial block too
            while True:
                fh.write(b"\0" * 512)
        except OSError:
            pass
    return filler


def test_a_full_disk_refuses_a_create_with_429_and_stores_nothing(
    small_tmpfs: Path, trainer_sdist: Path
) -> None:
    state = small_tmpfs / "state"
    svc = _start(state)
    try:
        uri = svc.stage(trainer_sdist)
        client = svc.client()
        # Grow the job table past its first pages so the next insert needs new ones.
        for i in range(3):
            client.create(basic_job(unique_id(f"pad{i}"), uri, "--steps", "1"))
        filler = _fill(small_tmpfs)
        job_id = unique_id("full")
        big = basic_job(job_id, uri, "--steps", "1")
        big["trainingInput"]["args"] += ["x" * 4000] * 20  # needs new pages
        status, body = svc.post_job(big)
        assert status == 429, body
        assert body["error"]["status"] == "RESOURCE_EXHAUSTED"
        assert "disk is full" in body["error"]["message"]
        status, _ = svc.request("GET", f"/v1/projects/test-project/jobs/{job_id}")
        assert status == 404
        filler.unlink()
        client.create(big)  # space again: the same request works
        assert svc.wait_state(job_id, timeout=60)["state"] == "SUCCEEDED"
    finally:
        _stop(svc)


def test_a_full_job_store_refuses_the_write_whole(tmp_path: Path) -> None:
    store = JobStore(tmp_path / "jobs.sqlite")
    store.insert("p", {"jobId": "a", "state": "QUEUED"}, {})
    (pages,) = store._conn.execute("PRAGMA page_count").fetchone()
    store._conn.execute(f"PRAGMA max_page_count={pages}")
    with pytest.raises(StoreError) as caught:
        store.insert("p", {"jobId": "b", "state": "QUEUED", "x": "y" * 100_000}, {})
    assert caught.value.full
    err = storage_error(caught.value)
    assert (err.status, err.http_status) == ("RESOURCE_EXHAUSTED", 429)
    assert store.count() == 1 and store.get("p", "b") is None
    with pytest.raises(StoreError):
        store.update("p", {"jobId": "a", "state": "RUNNING", "x": "y" * 100_000}, {})
    assert store.get("p", "a") == {"jobId": "a", "state": "QUEUED"}  # not half updated


class CappedLogStore(LogStore):
    """A log store whose writer's database is capped, until ``uncap``."""

    conn: sqlite3.Connection | None = None

    def writer(self) -> sqlite3.Connection:
        conn = super().writer()
        (pages,) = conn.execute("PRAGMA page_count").fetchone()
        conn.execute(f"PRAGMA max_page_count={pages + 2}")
        self.conn = conn
        return conn

    def uncap(self) -> None:
        assert self.conn is not None
        self.conn.execute("PRAGMA max_page_count=1073741823")


def write_error(writer: LogWriter) -> str | None:
    """The writer's error, read afresh (its thread changes it)."""
    return writer.error


def test_log_ingestion_on_a_full_disk_retries_and_loses_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = CappedLogStore(tmp_path / "logs.sqlite")
    writer = LogWriter(store, poll_seconds=0.01)
    out = tmp_path / "stdout.log"
    lines = [f"line {i:05d} " + "x" * 200 for i in range(3000)]
    out.write_text("\n".join(lines) + "\n")
    writer.start()
    try:
        writer.add_source(LogSource(out, "p", "j", "master-replica-0", "projects/p/logs/m", False))
        deadline = time.monotonic() + 10
        while writer.error is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert writer.error is not None and "full" in writer.error
        assert any("Cannot write log entries" in r.getMessage() for r in caplog.records)
        store.uncap()
        deadline = time.monotonic() + 20
        reader = store.reader()
        while time.monotonic() < deadline:
            (n,) = reader.execute("SELECT count(*) FROM log_entries").fetchone()
            if n >= len(lines):
                break
            time.sleep(0.05)
        replica = "SELECT message FROM log_entries WHERE task_name != 'service' ORDER BY id"
        assert [m for (m,) in reader.execute(replica)] == lines
        assert write_error(writer) is None
        # The job's own log says so, once its lines are in: the first moment it can be said.
        told = "SELECT job_id, severity, message FROM log_entries WHERE task_name = 'service'"
        while not reader.execute(told).fetchall() and time.monotonic() < deadline:
            time.sleep(0.05)
        ((job_id, severity, message),) = reader.execute(told).fetchall()
        assert (job_id, severity) == ("j", 400)
        assert message.startswith("The log store could not be written for ")
        assert "(database or disk is full)" in message and "No line was lost" in message
    finally:
        writer.stop()
        writer.join(10)
