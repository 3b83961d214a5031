"""Replica slots: jobs wait QUEUED in order with a correct jobPosition, then start."""

from __future__ import annotations

import time
from pathlib import Path

from tests.conftest import unique_id
from tests.support.live_service import LiveService, basic_job


def _wait(service: LiveService, job_id: str, state: str, timeout: float = 30) -> dict[str, object]:
    return service.wait_state(job_id, (state,), timeout=timeout)


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
        scaleTier="CUSTOM",
        masterType="standard",
        workerType="standard",
        workerCount="2",
        parameterServerType="standard",
        parameterServerCount="1",
    )
    client.create(big)  # 4 replicas > 2 slots: runs alone once the machine is free
    client.create(basic_job(d, uri, "--steps", "5"))
    time.sleep(0.5)
    jc, jd = client.get(c), client.get(d)
    assert jc["state"] == "QUEUED" and jc["jobPosition"] == "1"
    assert jd["state"] == "QUEUED" and jd["jobPosition"] == "2"

    client.cancel(a)
    time.sleep(0.5)
    assert client.get(c)["state"] == "QUEUED"  # still one job running: not alone yet
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
    time.sleep(0.3)
    assert client.get(waiting)["state"] == "QUEUED"
    client.cancel(waiting)
    job = svc.wait_state(waiting, ("CANCELLED",), timeout=10)
    assert job["endTime"] and "startTime" not in job
    for jid in blockers:
        client.cancel(jid)
        svc.wait_state(jid, ("CANCELLED",), timeout=15)
