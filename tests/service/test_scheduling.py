"""Capacity: jobs wait QUEUED for CPU slots and GPUs in priority order with a correct
jobPosition, then start in that order; a job bigger than the machine runs alone (issue 6)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.conftest import serve, unique_id
from tests.support.live_service import CLUSTER, PROJECT, LiveService, basic_job


def _wait(service: LiveService, job_id: str, state: str, timeout: float = 30) -> dict[str, object]:
    return service.wait_state(job_id, (state,), timeout=timeout)


def _positions(
    client: Any, ids: dict[str, str], ready: Any = None, timeout: float = 30
) -> dict[str, str | None]:
    """Each job's jobPosition by name, once every one has a position (and ``ready`` of them
    holds): the state the test then checks, waited for instead of a fixed sleep."""
    deadline = time.monotonic() + timeout
    while True:
        got = {name: client.get(jid).get("jobPosition") for name, jid in ids.items()}
        if all(got.values()) and (ready is None or ready(got)):
            return got
        if time.monotonic() > deadline:
            return got  # the caller's assertion says what is wrong
        time.sleep(0.05)


def test_queue_order_positions_and_oversized_jobs(
    small_service: LiveService, trainer_sdist: Path
) -> None:
    svc = small_service
    uri = svc.stage(trainer_sdist)
    client = svc.client()
    long_args = ("--steps", "100000", "--sleep", "0.05")
    a, b, c, d = (unique_id(n) for n in ("slot_a", "slot_b", "slot_c", "slot_d"))
    client.create(basic_job(a, uri, *long_args))
    client.create(basic_job(b, uri, *long_args))
    _wait(svc, a, "RUNNING")
    _wait(svc, b, "RUNNING")
    big = basic_job(
        c,
        uri,
        "--steps",
        "20",
        **CLUSTER,
    )
    client.create(big)  # 4 replicas > 2 slots: runs alone once the machine is free
    client.create(basic_job(d, uri, "--steps", "5"))
    assert _positions(client, {"c": c, "d": d}) == {"c": "1", "d": "2"}
    assert client.get(c)["state"] == client.get(d)["state"] == "QUEUED"

    client.cancel(a)
    _wait(svc, a, "CANCELLED")  # its slot is given back
    assert client.get(c)["state"] == "QUEUED"  # still one job running: not alone yet
    assert client.get(d)["state"] == "QUEUED"  # and d does not overtake it
    client.cancel(b)
    done_c = svc.wait_state(c, timeout=60)
    assert done_c["state"] == "SUCCEEDED", done_c.get("errorMessage")
    assert "jobPosition" not in done_c
    assert svc.wait_state(d, timeout=60)["state"] == "SUCCEEDED"


def test_cancel_while_queued(small_service: LiveService, trainer_sdist: Path) -> None:
    svc = small_service
    uri = svc.stage(trainer_sdist)
    client = svc.client()
    blockers = [unique_id("block") for _ in range(2)]
    for jid in blockers:
        client.create(basic_job(jid, uri, "--steps", "100000", "--sleep", "0.05"))
    waiting = unique_id("waiting")
    client.create(basic_job(waiting, uri))
    for jid in blockers:
        _wait(svc, jid, "RUNNING")
    assert _positions(client, {"waiting": waiting}) == {"waiting": "1"}
    assert client.get(waiting)["state"] == "QUEUED"
    client.cancel(waiting)
    job = svc.wait_state(waiting, ("CANCELLED",), timeout=10)
    assert job["endTime"] and "startTime" not in job
    for jid in blockers:
        client.cancel(jid)
        svc.wait_state(jid, ("CANCELLED",), timeout=15)


# -- priority, GPUs and jobs bigger than the machine (issue 6) --------------------------------

CLUSTER_OF_TWO = {"scaleTier": "CUSTOM", "masterType": "standard", "workerType": "standard"}
LONG = ("--steps", "100000", "--sleep", "0.05")


@pytest.fixture(scope="module")
def gpu_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveService]:
    """Four CPU slots and two GPUs, pretend ones where the machine has fewer (``--gpus``)."""
    yield from serve(tmp_path_factory, "svc-gpu", "--slots", "4", "--gpus", "2")


@pytest.fixture(scope="module")
def gpuless_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveService]:
    """A machine without GPUs, whatever this one has."""
    yield from serve(tmp_path_factory, "svc-nogpu", "--slots", "4", "--gpus", "0")


def _service_entries(service: LiveService, job_id: str) -> list[dict[str, Any]]:
    return service.entries(
        f'resource.labels.job_id="{job_id}" AND resource.labels.task_name="service" '
        'AND timestamp>="1970-01-01T00:00:00Z"'
    )


def _message(entry: dict[str, Any]) -> str:
    return str((entry.get("jsonPayload") or {}).get("message", entry.get("textPayload", "")))


def _admitted_at(service: LiveService, job_id: str) -> str:
    """When the scheduler let the job in (its PREPARING entry), to the microsecond."""
    for entry in _service_entries(service, job_id):
        if _message(entry) == "Waiting for job to be provisioned.":
            return str(entry["timestamp"])
    raise AssertionError(f"{job_id} was never admitted")


def _replica_env(
    service: LiveService, job_id: str, task: str = "master-replica-0"
) -> dict[str, str]:
    """The environment the running replica process really has."""
    pid_file = service.state_dir / "jobs" / PROJECT / job_id / task / "pid.json"
    deadline = time.monotonic() + 15
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    pid = json.loads(pid_file.read_text())["replica"]
    return dict(psutil.Process(pid).environ())


def test_priority_then_create_time_decides_order_and_positions(
    small_service: LiveService, trainer_sdist: Path
) -> None:
    """Higher scheduling.priority first, then creation; jobPosition says so, and jobs start in
    that order. Each job takes both slots, so they run one at a time."""
    svc = small_service
    uri = svc.stage(trainer_sdist)
    client = svc.client()
    blocker = unique_id("prio_blocker")
    client.create(basic_job(blocker, uri, *LONG, **CLUSTER_OF_TWO, workerCount="1"))
    _wait(svc, blocker, "RUNNING")
    ids: dict[str, str] = {}
    for name, priority in (
        ("low", 0),
        ("mid_a", 500),
        ("high", 1000),
        ("gone", 700),
        ("mid_b", 500),
    ):
        ids[name] = unique_id(f"prio_{name}")
        scheduling = {"priority": priority} if priority else {}
        body = basic_job(
            ids[name], uri, "--steps", "5", **CLUSTER_OF_TWO, workerCount="1", scheduling=scheduling
        )
        client.create(body)
    positions = _positions(client, ids)
    assert positions == {"high": "1", "gone": "2", "mid_a": "3", "mid_b": "4", "low": "5"}

    gone = ids.pop("gone")
    client.cancel(gone)  # leaving the queue moves everyone behind it up
    _wait(svc, gone, "CANCELLED")
    positions = _positions(client, ids, ready=lambda got: "5" not in got.values())
    assert positions == {"high": "1", "mid_a": "2", "mid_b": "3", "low": "4"}

    client.cancel(blocker)
    for jid in ids.values():
        done = svc.wait_state(jid, timeout=60)
        assert done["state"] == "SUCCEEDED", done.get("errorMessage")
        assert "jobPosition" not in done
    started = sorted(ids, key=lambda name: _admitted_at(svc, ids[name]))
    assert started == ["high", "mid_a", "mid_b", "low"]


def test_gpus_are_assigned_and_jobs_wait_for_them(
    gpu_service: LiveService, trainer_sdist: Path
) -> None:
    """Each GPU replica sees only its devices, a CPU replica none; a job waits for GPUs even with
    slots free, and a job behind it waits too (no overtaking)."""
    svc = gpu_service
    uri = svc.stage(trainer_sdist)
    client = svc.client()
    one_gpu, two_gpus, cpu = (unique_id(n) for n in ("gpu_one", "gpu_two", "gpu_cpu"))
    client.create(basic_job(one_gpu, uri, *LONG, scaleTier="BASIC_GPU"))
    _wait(svc, one_gpu, "RUNNING")
    env = _replica_env(svc, one_gpu)
    assert (env["CUDA_VISIBLE_DEVICES"], env["CUDA_DEVICE_ORDER"]) == ("0", "PCI_BUS_ID")

    two = {
        "scaleTier": "CUSTOM",
        "masterType": "n1-standard-8",
        "masterConfig": {"acceleratorConfig": {"count": "2", "type": "NVIDIA_TESLA_T4"}},
        "parameterServerType": "n1-standard-4",
        "parameterServerCount": "1",
    }
    client.create(basic_job(two_gpus, uri, *LONG, **two))
    client.create(basic_job(cpu, uri, *LONG))
    # 3 slots free, but 1 GPU of 2: both wait, the CPU job behind the GPU one.
    assert _positions(client, {"two": two_gpus, "cpu": cpu}) == {"two": "1", "cpu": "2"}

    client.cancel(one_gpu)
    _wait(svc, two_gpus, "RUNNING")
    _wait(svc, cpu, "RUNNING")
    assert _replica_env(svc, two_gpus)["CUDA_VISIBLE_DEVICES"] == "0,1"
    assert _replica_env(svc, two_gpus, "ps-replica-0")["CUDA_VISIBLE_DEVICES"] == ""
    assert _replica_env(svc, cpu)["CUDA_VISIBLE_DEVICES"] == ""
    started = [_message(e) for e in _service_entries(svc, two_gpus) if "Started" in _message(e)]
    assert started[0] == "Started master-replica-0 (n1-standard-8, GPU 0,1)."
    for jid in (two_gpus, cpu):
        client.cancel(jid)
        svc.wait_state(jid, ("CANCELLED",), timeout=20)


def test_a_job_needing_more_gpus_than_the_machine_runs_alone_with_all_of_them(
    gpu_service: LiveService, trainer_sdist: Path
) -> None:
    """It cannot ever fit, so it must not wait forever: once the GPUs are free it runs with all
    of them, and its log says it got fewer than it asked for."""
    svc = gpu_service
    uri = svc.stage(trainer_sdist)
    client = svc.client()
    holder, greedy = unique_id("gpu_holder"), unique_id("gpu_greedy")
    client.create(basic_job(holder, uri, *LONG, scaleTier="BASIC_GPU"))
    _wait(svc, holder, "RUNNING")
    four = {
        "scaleTier": "CUSTOM",
        "masterType": "n1-standard-16",
        "masterConfig": {"acceleratorConfig": {"count": "4", "type": "NVIDIA_TESLA_V100"}},
    }
    client.create(basic_job(greedy, uri, *LONG, **four))
    assert _positions(client, {"greedy": greedy}) == {"greedy": "1"}
    client.cancel(holder)
    _wait(svc, greedy, "RUNNING")
    assert _replica_env(svc, greedy)["CUDA_VISIBLE_DEVICES"] == "0,1"
    warnings = [e for e in _service_entries(svc, greedy) if e.get("severity") == "WARNING"]
    assert any(
        "asks for 4 GPUs and this machine has 2: it runs with 2" in _message(e) for e in warnings
    ), warnings
    client.cancel(greedy)
    svc.wait_state(greedy, ("CANCELLED",), timeout=20)


def test_gpu_jobs_run_without_gpus_on_a_machine_that_has_none(
    gpuless_service: LiveService, trainer_sdist: Path
) -> None:
    """A config written for the cloud runs unchanged: BASIC_GPU starts at once, sees no GPU, and
    its log says why."""
    svc = gpuless_service
    uri = svc.stage(trainer_sdist)
    client = svc.client()
    job_id = unique_id("gpu_none")
    client.create(basic_job(job_id, uri, *LONG, scaleTier="BASIC_GPU"))
    _wait(svc, job_id, "RUNNING")
    env = _replica_env(svc, job_id)
    assert env["CUDA_VISIBLE_DEVICES"] == ""
    assert "CUDA_DEVICE_ORDER" not in env or env["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"
    notes = [_message(e) for e in _service_entries(svc, job_id)]
    assert any("asks for 1 GPU and this machine has 0" in n for n in notes), notes
    client.cancel(job_id)
    svc.wait_state(job_id, ("CANCELLED",), timeout=20)
