"""Why a queued job waits (issue 29): the service's ``:queue`` answer, the line it writes in the
job's log, and the demo's order on a two-slot machine (its tuning job's trials run first)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import serve, unique_id
from tests.support.live_service import CLUSTER, PROJECT, LiveService, basic_job
from tui_app.api.jobs_client import make_credentials
from tui_app.api.metrics_client import MetricsClient
from tui_app.entry.demo import submit_demo_jobs


def _until(check: Callable[[], Any], what: str, timeout: float = 120.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"never: {what}")
        time.sleep(0.1)


def _queue(svc: LiveService, job_id: str) -> dict[str, Any] | None:
    client = MetricsClient(svc.url, PROJECT, make_credentials(svc.token))
    try:
        return client.queue(job_id)
    finally:
        client.close()


@pytest.fixture(scope="module")
def two_slots(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveService]:
    yield from serve(tmp_path_factory, "svc-queue", "--slots", "2")


def test_queue_says_who_holds_the_slots_and_who_goes_first(
    two_slots: LiveService, trainer_sdist: Path
) -> None:
    svc = two_slots
    uri = svc.stage(trainer_sdist)
    client = svc.client()
    long_args = ("--steps", "100000", "--sleep", "0.05")
    a, b, big, small = (unique_id(n) for n in ("hold_a", "hold_b", "big", "small"))
    try:
        client.create(basic_job(a, uri, *long_args))
        client.create(basic_job(b, uri, *long_args))
        client.create(basic_job(big, uri, **CLUSTER))
        client.create(basic_job(small, uri))
        _until(lambda: client.get(small).get("jobPosition") == "2", "the small job second")
        for held in (a, b):
            svc.wait_state(held, ("RUNNING",))

        wait = _queue(svc, small)
        assert wait is not None
        assert wait["position"] == 2
        assert wait["needs"] == {"replicas": 1, "slots": 1, "gpus": 0}
        assert wait["machine"] == {"slots": 2, "gpus": 0}
        assert wait["free"] == {"slots": 0, "gpus": 0}
        holders = {h["jobId"]: h for h in wait["running"]}
        assert set(holders) == {a, b}
        assert all(h["state"] == "RUNNING" and h["slots"] == 1 for h in holders.values())
        assert wait["ahead"] == [{"jobId": big, "slots": 2, "gpus": 0}]
        # Four replicas on two slots: all of the machine.
        assert _queue(svc, big)["needs"] == {"replicas": 4, "slots": 2, "gpus": 0}  # type: ignore[index]
        assert _queue(svc, a) == {}  # running: it waits for nothing
        status, body = svc.request("GET", f"/v1/projects/{PROJECT}/jobs/nope_1:queue")
        assert status == 404 and "nope_1" in body["error"]["message"]

        # The same, once, in the job's own log, where gcloud stream-logs reads it.
        def said() -> list[str]:
            flt = f'resource.labels.job_id="{small}" AND "Waiting for resources"'
            return [e["jsonPayload"]["message"] for e in svc.entries(flt)]

        (line,) = _until(said, "the waiting line in the job's log", timeout=30)
        # And in `tui-app jobs describe`, as the detail shows it.
        described = subprocess.run(
            [sys.executable, "-m", "tui_app", "jobs", "describe", small,
             "--state-dir", str(svc.state_dir), "--project", PROJECT],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert described.returncode == 0, described.stderr
        assert "Waiting for resources" in described.stdout
        assert f"Ahead:   {big} (2 CPU slots)" in described.stdout, described.stdout
        assert f"held by {a} (1 CPU slot, " in line or f"held by {b} (1 CPU slot, " in line
        assert f"ahead in the queue: {big} (2 CPU slots)" in line
    finally:
        for job_id in (small, big, b, a):
            client.cancel(job_id)
        for job_id in (small, big, b, a):
            svc.wait_state(job_id)


def test_demo_runs_the_tuning_trials_before_the_cluster_that_fills_the_machine(
    two_slots: LiveService,
) -> None:
    svc = two_slots
    client = svc.client()
    ids = submit_demo_jobs(svc.state_dir, PROJECT)
    by_base = {job_id.rsplit("_", 2)[0]: job_id for job_id in ids}
    assert list(by_base) == ["bad_lr", "mnist", "mnist_hptuning", "census_dist", "mnist_large"]
    tuning, cluster, last = (
        by_base["mnist_hptuning"],
        by_base["census_dist"],
        by_base["mnist_large"],
    )
    try:
        # Sized to the machine: master + one worker + one parameter server on two slots.
        ti = client.get(cluster)["trainingInput"]
        assert (ti["workerCount"], ti["parameterServerCount"]) == ("1", "1")

        def trial_started() -> bool:
            return bool(client.get(tuning).get("trainingOutput", {}).get("trials"))

        _until(trial_started, "a trial of the tuning job")
        # The trials went first; the cluster waits for the whole machine, and says so.
        assert client.get(cluster)["state"] == "QUEUED"
        wait = _queue(svc, cluster)
        assert wait is not None and wait["needs"] == {"replicas": 3, "slots": 2, "gpus": 0}
        assert tuning in [h["jobId"] for h in wait["running"]]
        # The last job waits behind the cluster: admission is in order.
        assert [a["jobId"] for a in _queue(svc, last)["ahead"]] == [cluster]  # type: ignore[index]
    finally:
        svc.end_jobs(ids)
