"""Cancel and job end stop a replica's whole process tree (issue 6).

The sample trainer makes it hard on purpose: it ignores SIGTERM (``--ignore-sigterm``, with a
child that does too), starts a child in its own session (``--spawn-child-new-session``) and a
daemon that calls setsid, forks and is orphaned (``--spawn-escaping-child``), which not even
the trainer's normal exit stops. Every process of a job carries the job's id in its environment;
once the job is terminal, none may be left.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from pathlib import Path

import psutil
import pytest

from tests.conftest import unique_id
from tests.support.live_service import PROJECT, LiveService, basic_job

LONG = ("--steps", "100000", "--sleep", "0.05")
HOSTILE = ("--ignore-sigterm", "--spawn-child-new-session", "--spawn-escaping-child")
ESCAPING_CHILD = "trainer-escaping-child"
SIGNALS_FILE = "received-signals.log"
"""Where the trainer's hostile processes note each SIGTERM (``trainer.demos.SIGNALS_FILE``)."""
SETTLE_SECONDS = 1.0
"""Zombies aside, the tree is gone when the job turns terminal; this only absorbs the time a
killed process takes to disappear from /proc."""


def _job_processes(job_id: str) -> list[psutil.Process]:
    """Every live process whose environment says it belongs to the job."""
    found = []
    for proc in psutil.process_iter(["environ", "status"]):
        env = proc.info["environ"] or {}
        if env.get("CLOUD_ML_JOB_ID") == job_id and proc.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(proc)
    return found


def _wait_for_processes(job_id: str, count: int, timeout: float = 20) -> list[psutil.Process]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        procs = _job_processes(job_id)
        if len(procs) >= count:
            return procs
        time.sleep(0.1)
    raise AssertionError(f"{job_id} has {len(_job_processes(job_id))} processes, not {count}")


def _catches_sigterm(pid: int) -> bool:
    """Whether the process has a handler for SIGTERM (the ``SigCgt`` mask of its status)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = next((ln.split()[1] for ln in status.splitlines() if ln.startswith("SigCgt:")), "0")
    return bool(int(caught, 16) >> (signal.SIGTERM - 1) & 1)


def _assert_none_left(job_id: str) -> None:
    deadline = time.monotonic() + SETTLE_SECONDS
    while _job_processes(job_id) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [(p.pid, " ".join(p.cmdline())[-80:]) for p in _job_processes(job_id)]
    assert left == [], left


def _pids(service: LiveService, job_id: str, task: str = "master-replica-0") -> dict[str, int]:
    path = service.state_dir / "jobs" / PROJECT / job_id / task / "pid.json"
    deadline = time.monotonic() + 15
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return dict(json.loads(path.read_text()))


def _adopted_daemon(job_id: str, supervisor: int, timeout: float = 20) -> psutil.Process:
    """The escaped daemon once its parent has exited and the supervisor has adopted it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for proc in _job_processes(job_id):
            with contextlib.suppress(psutil.Error):
                if ESCAPING_CHILD in proc.cmdline() and proc.ppid() == supervisor:
                    return proc
        time.sleep(0.05)
    raise AssertionError(f"no adopted daemon under supervisor {supervisor}")


def test_cancel_stops_a_hostile_tree(service: LiveService, package_uri: str) -> None:
    client = service.client()
    job_id = unique_id("tree_cancel")
    client.create(basic_job(job_id, package_uri, *LONG, *HOSTILE))
    service.wait_state(job_id, ("RUNNING",), timeout=30)
    pids = _pids(service, job_id)
    daemon = _adopted_daemon(job_id, pids["supervisor"])  # orphaned; the subreaper adopted it
    assert os.getsid(daemon.pid) != os.getsid(pids["replica"])  # it left the trainer's session
    # trainer, its SIGTERM-ignoring child, its new-session child, the escaped daemon
    tree = {p.pid for p in _wait_for_processes(job_id, 4)}
    assert len(tree) == 4, tree
    # A process is listed before it has set its handler: a SIGTERM then would kill it unnoted.
    deadline = time.monotonic() + 20
    while not all(_catches_sigterm(pid) for pid in tree):
        assert time.monotonic() < deadline, "not every process catches SIGTERM"
        time.sleep(0.05)

    t0 = time.monotonic()
    client.cancel(job_id)
    job = service.wait_state(job_id, ("CANCELLED",), timeout=20)
    assert time.monotonic() - t0 < 2 + 5  # the grace period (2 s here) and some slack
    assert job["errorMessage"] == "Job cancelled by user."
    _assert_none_left(job_id)
    # Every one of them got the SIGTERM itself (each notes it: trainer.demos.SIGNALS_FILE),
    # the new-session child and the orphaned daemon too: not only the trainer's group, and
    # not only the end-of-job sweep after the grace period.
    noted = service.state_dir / "jobs" / PROJECT / job_id / "master-replica-0" / SIGNALS_FILE
    got = {int(line.split()[0]) for line in noted.read_text().splitlines() if "SIGTERM" in line}
    assert got == tree, (got, tree)


@pytest.mark.parametrize(
    ("case", "args", "training", "state"),
    [
        ("succeeds", ("--steps", "5"), {}, "SUCCEEDED"),
        ("fails", ("--steps", "50", "--fail-at-step", "3"), {}, "FAILED"),
        (
            # The master ends the job; the ps, ignoring SIGTERM, is killed after the grace period.
            "cluster",
            ("--steps", "20", "--connect-timeout", "20"),
            {
                "scaleTier": "CUSTOM",
                "masterType": "standard",
                "parameterServerType": "standard",
                "parameterServerCount": "1",
            },
            "SUCCEEDED",
        ),
    ],
)
def test_job_end_stops_what_the_replicas_left_running(
    service: LiveService,
    package_uri: str,
    case: str,
    args: tuple[str, ...],
    training: dict[str, str],
    state: str,
) -> None:
    """The escaped daemon survives its trainer's normal exit; the job's end must stop it."""
    client = service.client()
    job_id = unique_id(f"tree_{case}")
    client.create(basic_job(job_id, package_uri, *args, *HOSTILE, **training))
    job = service.wait_state(job_id, timeout=45)
    assert job["state"] == state, job.get("errorMessage")
    _assert_none_left(job_id)


def test_a_killed_supervisor_leaves_nothing_behind(service: LiveService, package_uri: str) -> None:
    """Without its supervisor the tree belongs to init; the service still finds and stops it."""
    client = service.client()
    job_id = unique_id("tree_nosup")
    client.create(basic_job(job_id, package_uri, *LONG, *HOSTILE))
    service.wait_state(job_id, ("RUNNING",), timeout=30)
    supervisor = _pids(service, job_id)["supervisor"]
    _adopted_daemon(job_id, supervisor)
    _wait_for_processes(job_id, 4)
    os.kill(supervisor, signal.SIGKILL)
    job = service.wait_state(job_id, timeout=20)
    assert job["state"] == "FAILED"
    assert "ended without recording an exit status" in job["errorMessage"]
    _assert_none_left(job_id)
    swept = service.entries(
        f'resource.labels.job_id="{job_id}" AND resource.labels.task_name="service" '
        'AND severity=WARNING AND timestamp>="1970-01-01T00:00:00Z"'
    )
    assert any("outlived their replica's supervisor" in json.dumps(e) for e in swept), swept


def test_the_sweep_spares_other_jobs(service: LiveService, package_uri: str) -> None:
    """Ending one job never touches another job's processes."""
    client = service.client()
    keep, end = unique_id("tree_keep"), unique_id("tree_end")
    client.create(basic_job(keep, package_uri, *LONG, "--spawn-escaping-child"))
    client.create(basic_job(end, package_uri, "--steps", "5", "--spawn-escaping-child"))
    assert service.wait_state(end, timeout=30)["state"] == "SUCCEEDED"
    kept = _wait_for_processes(keep, 2)
    assert all(p.is_running() for p in kept)
    client.cancel(keep)
    service.wait_state(keep, ("CANCELLED",), timeout=20)
    _assert_none_left(keep)
    _assert_none_left(end)
