"""Replicas run below the service's CPU priority, their session's CPU group included.

Each replica is in a session of its own; with the kernel's autogroups a session is a CPU group
that a nice value alone does not lower. ``replica_priority`` lowers both.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.conftest import unique_id
from tests.support.live_service import LiveService, basic_job
from tui_app.local.execution.replica_priority import DEFAULT_REPLICA_NICE, MAX_NICE, lower_priority


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    """A process in a session of its own, as the supervisor starts a replica."""
    proc = subprocess.Popen(["sleep", "60"], start_new_session=True)
    yield proc
    proc.kill()
    proc.wait()


def _autogroup_nice(pid: int) -> int | None:
    path = Path(f"/proc/{pid}/autogroup")
    return int(path.read_text().split()[-1]) if path.exists() else None


def test_a_process_in_its_own_session_is_lowered_both_ways(
    sleeper: subprocess.Popen[bytes],
) -> None:
    before = os.getpriority(os.PRIO_PROCESS, sleeper.pid)
    group_before = _autogroup_nice(sleeper.pid)
    assert lower_priority(sleeper.pid, 5) == []
    assert os.getpriority(os.PRIO_PROCESS, sleeper.pid) == min(MAX_NICE, before + 5)
    if group_before is not None:  # a kernel with autogroups
        assert _autogroup_nice(sleeper.pid) == min(MAX_NICE, group_before + 5)
    assert lower_priority(sleeper.pid, 0) == []  # 0: left as it is
    assert os.getpriority(os.PRIO_PROCESS, sleeper.pid) == min(MAX_NICE, before + 5)


def test_the_session_group_is_read_and_written_as_the_kernel_shows_it(
    tmp_path: Path, sleeper: subprocess.Popen[bytes]
) -> None:
    pid = sleeper.pid  # its nice value is lowered for real; its group is a file here
    group = tmp_path / str(pid) / "autogroup"
    group.parent.mkdir()
    group.write_text("/autogroup-42 nice 3\n")
    nice = os.getpriority(os.PRIO_PROCESS, pid)
    assert lower_priority(pid, 1, proc=tmp_path) == []
    assert group.read_text() == "4"
    group.write_text("garbage")
    problems = lower_priority(pid, 1, proc=tmp_path)
    assert len(problems) == 1 and "session CPU priority" in problems[0]
    group.unlink()
    assert lower_priority(pid, 1, proc=tmp_path) == []  # no autogroups: not a failure
    assert os.getpriority(os.PRIO_PROCESS, pid) == min(MAX_NICE, nice + 3)


def test_a_vanished_process_is_reported_not_raised() -> None:
    proc = subprocess.Popen(["true"])
    proc.wait()
    problems = lower_priority(proc.pid, 1)
    assert problems and "CPU priority" in problems[0]


def test_a_running_replica_is_below_the_service(service: LiveService, package_uri: str) -> None:
    """The service runs with the default ``--replica-nice``: its replica is that much lower."""
    client = service.client()
    job_id = unique_id("nice")
    client.create(basic_job(job_id, package_uri, "--steps", "100000", "--sleep", "0.1"))
    service.wait_state(job_id, ("RUNNING",), timeout=60)
    replica: psutil.Process | None = None
    deadline = time.monotonic() + 15
    while replica is None and time.monotonic() < deadline:
        for proc in psutil.process_iter(["environ"]):
            try:
                if (proc.info["environ"] or {}).get("CLOUD_ML_JOB_ID") == job_id:
                    replica = proc
                    break
            except (psutil.Error, OSError):
                continue
        time.sleep(0.1)
    try:
        assert replica is not None
        service_nice = psutil.Process(service.proc.pid).nice()
        assert replica.nice() == min(MAX_NICE, service_nice + DEFAULT_REPLICA_NICE)
        group = _autogroup_nice(replica.pid)
        if group is not None:  # the replica's own session started at 0
            assert group == DEFAULT_REPLICA_NICE
    finally:
        client.cancel(job_id)
        service.wait_state(job_id, ("CANCELLED",), timeout=30)
