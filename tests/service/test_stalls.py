"""A hung job is noticed and its stacks are one request away (``:stacks``, the ``stall`` field).

The sample trainer's ``--hang-at-step N`` hangs as a distributed job hangs: the parameter server
stops answering, every worker blocks in its ``pull`` waiting on the socket, and nothing prints
or uses CPU. The service here flags a stall after 3 s (``--stall-seconds``) and samples CPU
every 0.25 s.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import serve, unique_id
from tests.support.live_service import CLUSTER, PROJECT, LiveService, basic_job
from tests.support.restartable import wait_for
from tui_app.model.stacks import JobStacks, fold, render_text

STALL_SECONDS = "3"


@pytest.fixture(scope="module")
def stall_service(
    tmp_path_factory: pytest.TempPathFactory, trainer_sdist: Path
) -> Iterator[LiveService]:
    env = {**os.environ, "TUI_APP_METRICS_SECONDS": "0.25"}
    yield from serve(tmp_path_factory, "svc-stall", "--stall-seconds", STALL_SECONDS, env=env)


def _stacks(svc: LiveService, job_id: str, query: str = "") -> tuple[int, dict[str, object]]:
    status, body = svc.request("GET", f"/v1/projects/{PROJECT}/jobs/{job_id}:stacks{query}")
    return status, body


def test_a_hung_cluster_is_flagged_stalled_with_its_stacks_folded(
    stall_service: LiveService, trainer_sdist: Path
) -> None:
    svc = stall_service
    uri = svc.stage(trainer_sdist)
    job_id = unique_id("hung")
    args = ("--steps", "1000", "--sleep", "0.02", "--hang-at-step", "5")
    svc.client().create(basic_job(job_id, uri, *args, **CLUSTER))
    svc.wait_state(job_id, ("RUNNING",), timeout=60)

    # Stacks now, while it runs (before or after the hang): every replica answers.
    status, body = _stacks(svc, job_id)
    assert status == 200, body
    now = JobStacks.from_json(body)
    names = sorted(r.task_name for r in now.replicas)
    assert names == ["master-replica-0", "ps-replica-0", "worker-replica-0", "worker-replica-1"]

    def stalled() -> set[str]:
        stall = svc.client().get(job_id).get("stall") or {}
        return {r["taskName"] for r in stall.get("replicas") or () if r["state"] == "stalled"}

    # Each replica turns stalled once its own CPU has been idle for the threshold: the job is
    # flagged with the first, and the others join it.
    wait_for(lambda: stalled(), timeout=60, what="the stall flag")
    trainers = {"master-replica-0", "worker-replica-0", "worker-replica-1"}
    wait_for(lambda: trainers <= stalled(), timeout=30, what="every trainer stalled")
    job = svc.client().get(job_id)
    assert job["state"] == "RUNNING"
    stall = job["stall"]
    for r in stall["replicas"]:
        assert r["cpuPercent"] < 2.0
        assert r["state"] == "quiet" or r["since"] >= stall["since"]
    assert stall.get("stacksTakenAt")
    notes = [
        e["jsonPayload"]["message"]
        for e in svc.entries(
            f'resource.labels.job_id="{job_id}" AND resource.labels.task_name="service"'
        )
    ]
    assert any(n.startswith("Job stalled: ") for n in notes), notes[-5:]

    # The master and the workers wait in the same place, the trainer's own pull on the ps,
    # in the socket's receive: they fold into one section; the ps waits in its server loop.
    status, body = _stacks(svc, job_id)
    assert status == 200, body
    groups = fold(JobStacks.from_json(body).replicas)
    assert [g.label for g in groups] == ["master 0, worker 0, 1", "ps 0"], groups
    trainers_group = groups[0]
    assert "ParameterClient" in trainers_group.summary, trainers_group.summary
    assert trainers_group.summary.endswith("readinto` (idle)"), trainers_group.summary
    text = "\n".join(render_text(groups, locals=False))
    assert "pull (trainer/ps.py:" in text, text

    # The dump kept at the stall is there, and stays after the job is cancelled.
    status, kept = _stacks(svc, job_id, "?at=stall")
    assert status == 200, kept
    svc.client().cancel(job_id)
    ended = svc.wait_state(job_id, timeout=60)
    assert ended["state"] == "CANCELLED"
    status, after = _stacks(svc, job_id, "?at=stall")
    assert status == 200 and after == kept
    kept_names = sorted(r.task_name for r in JobStacks.from_json(kept).replicas)
    assert kept_names == names
    # Now: no replica runs, and the refusal says where the kept ones are.
    status, body = _stacks(svc, job_id)
    assert status == 400 and "at=stall" in str(body), body


def test_a_replica_still_printing_never_makes_its_job_stalled(
    stall_service: LiveService, trainer_sdist: Path
) -> None:
    svc = stall_service
    uri = svc.stage(trainer_sdist)
    job_id = unique_id("busy")
    # A slow trainer that prints every 0.5 s and sleeps in between (near-zero CPU).
    args = ("--steps", "16", "--sleep", "0.5", "--log-every", "1")
    svc.client().create(basic_job(job_id, uri, *args))
    job = svc.wait_state(job_id, timeout=60)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    assert "stall" not in job


def test_stacks_refusals_say_why(stall_service: LiveService) -> None:
    svc = stall_service
    status, body = _stacks(svc, "no_such_job_1")
    assert status == 404, body
    status, body = _stacks(svc, "no_such_job_1", "?at=now")
    assert status in (400, 404), body


def test_a_hung_trial_flags_its_tuning_job_naming_the_trial(
    stall_service: LiveService, trainer_sdist: Path
) -> None:
    """A trial of one master that waits forever for data: the job is stalled, the replica
    named with its trial, and the stacks show the trainer's wait_for_data."""
    svc = stall_service
    uri = svc.stage(trainer_sdist)
    job_id = unique_id("hung_trial")
    hp = {
        "maxTrials": 1,
        "params": [{"parameterName": "lr", "type": "DOUBLE", "minValue": 0.01, "maxValue": 0.1}],
    }
    args = ("--steps", "1000", "--sleep", "0.02", "--hang-at-step", "3")
    svc.client().create(basic_job(job_id, uri, *args, hyperparameters=hp))
    try:
        wait_for(lambda: "stall" in svc.client().get(job_id), timeout=60, what="the stall")
        [replica] = svc.client().get(job_id)["stall"]["replicas"]
        assert (replica["taskName"], replica["trialId"], replica["state"]) == (
            "master-replica-0",
            "1",
            "stalled",
        )
        assert replica["lastLine"] == "hanging at step 3 (--hang-at-step)"
        status, body = _stacks(svc, job_id, "?trialId=1")
        assert status == 200, body
        [got] = JobStacks.from_json(body).replicas
        assert got.trial_id == "1"
        assert "wait_for_data" in "\n".join(render_text(fold([got]), locals=False))
    finally:
        svc.client().cancel(job_id)
    assert svc.wait_state(job_id, timeout=60)["state"] == "CANCELLED"
