"""scheduling.maxWaitTime and maxRunningTime cancel a job, and consumedMLUnits grows while it
runs (issue 6), against a real service with real replicas.

maxWaitTime cannot be under 1800s, so this module's service runs with ``--max-wait-scale 0.001``:
1800s lasts 1.8 s there. maxRunningTime has no minimum and is used as written.
"""

from __future__ import annotations

import io
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import serve, unique_id
from tests.support.live_service import LiveService, basic_job
from tui_app.api.errors import ApiCallError
from tui_app.local.timefmt import parse_job_time
from tui_app.model.jobs.cluster import ml_units_per_hour
from tui_app.model.running.cost import consumed_ml_units

LONG = ("--steps", "100000", "--sleep", "0.05")
WAIT_SCALE = 0.001
BOTH_SLOTS = {
    "scaleTier": "CUSTOM",
    "masterType": "standard",
    "workerType": "standard",
    "workerCount": "1",
}
PRICEY = {
    # 83.4 ML units an hour: enough to see the figure move within a second.
    "scaleTier": "CUSTOM",
    "masterType": "a2-highgpu-8g",
    "masterConfig": {"acceleratorConfig": {"count": "8", "type": "NVIDIA_TESLA_A100"}},
}


@pytest.fixture(scope="module")
def limits_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveService]:
    """Two CPU slots, no GPUs, and maxWaitTime scaled down a thousandfold."""
    flags = ("--slots", "2", "--gpus", "0", "--max-wait-scale", str(WAIT_SCALE))
    yield from serve(tmp_path_factory, "svc-limits", *flags)


def _states_until_terminal(
    service: LiveService, job_id: str, timeout: float = 30
) -> tuple[list[tuple[str, float]], dict[str, Any]]:
    """Every state the job was seen in, with when (monotonic) it was first seen."""
    client = service.client()
    seen: list[tuple[str, float]] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = client.get(job_id)
        if not seen or seen[-1][0] != job["state"]:
            seen.append((job["state"], time.monotonic()))
        if job["state"] in ("SUCCEEDED", "FAILED", "CANCELLED"):
            return seen, job
        time.sleep(0.02)
    raise TimeoutError(f"{job_id} still {seen[-1][0]}")


def _service_messages(service: LiveService, job_id: str) -> list[dict[str, Any]]:
    return service.entries(
        f'resource.labels.job_id="{job_id}" AND resource.labels.task_name="service" '
        'AND timestamp>="1970-01-01T00:00:00Z"'
    )


def _text(entry: dict[str, Any]) -> str:
    return str((entry.get("jsonPayload") or {}).get("message", entry.get("textPayload", "")))


def _slow_package(dest: Path) -> Path:
    """An sdist whose setup.py sleeps: pip takes 8 s to install it, so the job that needs it
    stays PREPARING."""
    setup = (
        b"import time\ntime.sleep(8)\nfrom setuptools import setup\n"
        b"setup(name='slowpkg', version='0.1.0', py_modules=[])\n"
    )
    info = b"Metadata-Version: 1.0\nName: slowpkg\nVersion: 0.1.0\n"
    path = dest / f"slowpkg-0.1.0-{time.monotonic_ns()}.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name, data in (("setup.py", setup), ("PKG-INFO", info)):
            member = tarfile.TarInfo(f"slowpkg-0.1.0/{name}")
            member.size = len(data)
            tar.addfile(member, io.BytesIO(data))
    return path


def test_max_running_time_cancels_a_running_job(
    limits_service: LiveService, trainer_sdist: Path
) -> None:
    svc = limits_service
    uri = svc.stage(trainer_sdist)
    job_id = unique_id("max_running")
    body = basic_job(job_id, uri, *LONG, scheduling={"maxRunningTime": "2s"})
    svc.client().create(body)
    seen, job = _states_until_terminal(svc, job_id)
    states = [s for s, _ in seen]
    assert states[-2:] == ["CANCELLING", "CANCELLED"] or states[-1] == "CANCELLED", states
    assert "RUNNING" in states
    message = "Job cancelled: it was still running after scheduling.maxRunningTime (2s)."
    assert job["state"] == "CANCELLED"
    assert job["errorMessage"] == message
    assert job["startTime"] <= job["endTime"]

    # As seen by polling every 20 ms: about 2 s, neither at once nor much later.
    times = dict(reversed(seen))
    ran = times.get("CANCELLING", times["CANCELLED"]) - times["RUNNING"]
    assert 1.5 <= ran < 5, (ran, seen)
    limit = [e for e in _service_messages(svc, job_id) if _text(e) == message]
    assert [e["severity"] for e in limit] == ["WARNING"]

    # Units for the time it held its machine, from the stored (whole-second) times.
    start, end = parse_job_time(job["startTime"]), parse_job_time(job["endTime"])
    expected = consumed_ml_units(job["trainingInput"], start, end)
    assert job["trainingOutput"]["consumedMLUnits"] == expected > 0


def test_max_wait_time_cancels_a_queued_job(
    limits_service: LiveService, trainer_sdist: Path
) -> None:
    svc = limits_service
    uri = svc.stage(trainer_sdist)
    client = svc.client()
    blocker, waiter = unique_id("wait_blocker"), unique_id("wait_queued")
    client.create(basic_job(blocker, uri, *LONG, **BOTH_SLOTS))
    svc.wait_state(blocker, ("RUNNING",), timeout=30)
    t0 = time.monotonic()
    client.create(basic_job(waiter, uri, scheduling={"maxWaitTime": "1800s"}))
    seen, job = _states_until_terminal(svc, waiter)
    assert seen[0][0] == "QUEUED"
    assert not {"PREPARING", "RUNNING"} & {s for s, _ in seen}
    assert job["state"] == "CANCELLED"
    assert job["errorMessage"] == (
        "Job cancelled: it did not start running within scheduling.maxWaitTime "
        "(1800s; 1.8s on this service)."
    )
    assert job["endTime"] and "startTime" not in job and "jobPosition" not in job
    waited = seen[-1][1] - t0
    assert 1.8 <= waited < 4, waited
    assert client.get(blocker)["state"] == "RUNNING"  # the limit is the waiter's alone
    client.cancel(blocker)
    svc.wait_state(blocker, ("CANCELLED",), timeout=20)


def test_max_wait_time_stops_counting_once_the_job_runs(
    limits_service: LiveService, trainer_sdist: Path
) -> None:
    """It started within 1.8 s, so running for 3 s is fine: maxWaitTime no longer applies."""
    svc = limits_service
    uri = svc.stage(trainer_sdist)
    job_id = unique_id("wait_in_time")
    body = basic_job(
        job_id, uri, "--steps", "60", "--sleep", "0.05", scheduling={"maxWaitTime": "1800s"}
    )
    svc.client().create(body)
    job = svc.wait_state(job_id, timeout=30)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    ran = parse_job_time(job["endTime"]) - parse_job_time(job["startTime"])
    assert ran >= 2  # whole seconds: it did outlast the 1.8 s wait limit


def test_max_wait_time_cancels_a_job_still_preparing(
    limits_service: LiveService, trainer_sdist: Path, tmp_path: Path
) -> None:
    """A package that takes 8 s to install keeps the job PREPARING past its wait limit."""
    svc = limits_service
    uris = [svc.stage(trainer_sdist), svc.stage(_slow_package(tmp_path))]
    job_id = unique_id("wait_preparing")
    body = basic_job(job_id, uris[0], scheduling={"maxWaitTime": "1800s"})
    body["trainingInput"]["packageUris"] = uris
    t0 = time.monotonic()
    svc.client().create(body)
    seen, job = _states_until_terminal(svc, job_id)
    assert "PREPARING" in [s for s, _ in seen]
    assert job["state"] == "CANCELLED"
    assert "did not start running within scheduling.maxWaitTime" in job["errorMessage"]
    assert job["endTime"] and "startTime" not in job
    assert seen[-1][1] - t0 < 6  # not the 8 s of the install


def test_consumed_ml_units_grow_while_running_and_are_final_at_the_end(
    limits_service: LiveService, trainer_sdist: Path
) -> None:
    svc = limits_service
    uri = svc.stage(trainer_sdist)
    client = svc.client()
    job_id = unique_id("ml_units")
    client.create(basic_job(job_id, uri, *LONG, **PRICEY))
    svc.wait_state(job_id, ("RUNNING",), timeout=30)
    rate = ml_units_per_hour(PRICEY)
    assert rate > 80
    samples: list[float] = []
    etags: list[str] = []
    for _ in range(6):
        job = client.get(job_id)
        units = job["trainingOutput"]["consumedMLUnits"]
        etags.append(job["etag"])
        live = consumed_ml_units(PRICEY, parse_job_time(job["startTime"]), time.time() // 1)
        assert abs(units - live) <= rate / 3600 * 1.01, (units, live)  # the table's, to the second
        samples.append(units)
        time.sleep(0.5)
    assert samples == sorted(samples) and samples[-1] > samples[0], samples
    # The etag moves with the figure (the TUI's list rebuilds a row only when it does), and an
    # older one of the same stored version still guards a PATCH.
    assert len(set(etags)) == len(set(samples)) > 1, (etags, samples)
    patched = client.set_labels(job_id, {"seen": "yes"}, etag=etags[0])
    assert patched["labels"] == {"seen": "yes"}
    with pytest.raises(ApiCallError) as stale:
        client.set_labels(job_id, {"seen": "again"}, etag=etags[-1])  # from before the PATCH
    assert stale.value.status_code == 409 or "etag" in str(stale.value)
    listed = {j["jobId"]: j for j in client.list_jobs()}[job_id]  # the list shows it too
    assert listed["trainingOutput"]["consumedMLUnits"] >= samples[-1]

    client.cancel(job_id)
    job = svc.wait_state(job_id, ("CANCELLED",), timeout=20)
    final = job["trainingOutput"]["consumedMLUnits"]
    start, end = parse_job_time(job["startTime"]), parse_job_time(job["endTime"])
    assert final == consumed_ml_units(PRICEY, start, end) >= samples[-1]
    time.sleep(1.1)
    assert client.get(job_id)["trainingOutput"]["consumedMLUnits"] == final  # no longer grows
