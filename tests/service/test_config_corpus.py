"""The config corpus against a real service: what the model accepts, jobs.create accepts.

Every ``examples/configs/valid`` file is POSTed as gcloud would send it (the file's job under a
fresh id) and must be created; every ``invalid`` file must get a 400 naming the field its first
line names (issue 5, done-when 1). The jobs never run: a two-replica job holds both of the
service's slots first, so each corpus job waits QUEUED until it is cancelled.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import unique_id
from tests.support.config_corpus import INVALID, VALID, expected_field
from tests.support.live_service import LiveService, basic_job
from tui_app.entry.demo import DEMO_BUCKET
from tui_app.model.jobs.engine_label import engine_found
from tui_app.model.running.capacity import job_demand

NO_CONTAINER_ENGINE = "Custom containers need a container engine"
NO_GPU_FOR_CONTAINERS = "This machine has no GPU to give a container"
"""What the local service refuses that the platform (and the model) accept: containers where no
engine answers (or GPUs for them where there are none), and Python 2.7 jobs (runtimes are built
as Python 3 virtual environments)."""
NO_PYTHON_27 = "Python 2.7 jobs cannot run on the local jobs service"


def violations(body: dict[str, Any]) -> dict[str, str]:
    details = body["error"].get("details", [])
    return {v["field"]: v["description"] for d in details for v in d.get("fieldViolations", [])}


@contextmanager
def slots_held(service: LiveService, trainer_sdist: Path) -> Iterator[str]:
    """Hold both slots of a two-slot service with a running job; yield the corpus's package.

    Jobs created meanwhile wait QUEUED (admission is first come, first served), so a corpus
    job can be created and cancelled without starting a replica. The corpus names
    ``gs://tui-app-demo/packages/trainer-0.1.0.tar.gz``, where ``tui-app --demo`` stages the
    sample trainer, and jobs.create checks that the package exists.
    """
    package = service.stage(trainer_sdist, bucket=DEMO_BUCKET)
    blocker = unique_id("corpus_blocker")
    cluster = {"scaleTier": "CUSTOM", "masterType": "standard", "workerType": "standard"}
    args = ("--steps", "1000000", "--sleep", "0.1")
    service.client().create(basic_job(blocker, package, *args, **cluster, workerCount="1"))
    service.wait_state(blocker, ("RUNNING",))
    try:
        yield package
    finally:
        service.client().cancel(blocker)


@pytest.fixture(scope="module")
def blocked(small_service: LiveService, trainer_sdist: Path) -> Iterator[LiveService]:
    """The two-slot service with its slots held (see ``slots_held``)."""
    with slots_held(small_service, trainer_sdist):
        yield small_service


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_valid_configs_are_created(blocked: LiveService, path: Path) -> None:
    data = yaml.safe_load(path.read_text())
    job_id = unique_id(path.stem)
    status, body = blocked.post_job({**data, "jobId": job_id})
    ti = data["trainingInput"]
    if (ti.get("masterConfig") or {}).get("imageUri"):
        # The Job rules accept it; here it needs a container engine, and GPUs if it asks.
        health = blocked.request("GET", "/healthz")[1]
        if not engine_found(health["containerEngine"]):
            assert status == 400, body
            assert list(violations(body)) == ["trainingInput.masterConfig.imageUri"], body
            assert NO_CONTAINER_ENGINE in body["error"]["message"]
            return
        if job_demand(ti).total_gpus and not health["capacity"]["gpus"]:
            assert status == 400, body
            assert list(violations(body)) == ["trainingInput.masterConfig.acceleratorConfig"]
            assert NO_GPU_FOR_CONTAINERS in body["error"]["message"]
            return
    if data["trainingInput"].get("pythonVersion") == "2.7":
        assert status == 400, body
        assert list(violations(body)) == ["trainingInput.pythonVersion"], body
        assert NO_PYTHON_27 in body["error"]["message"]
        return
    assert status == 200, body
    assert (body["jobId"], body["state"]) == (job_id, "QUEUED")
    blocked.client().cancel(job_id)
    cancelled = blocked.wait_state(job_id, ("CANCELLED",))
    assert "startTime" not in cancelled, "it should have waited behind the blocker"
    assert cancelled["trainingInput"] == body["trainingInput"]


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.name)
def test_invalid_configs_get_400_naming_the_field(blocked: LiveService, path: Path) -> None:
    data = yaml.safe_load(path.read_text())
    status, body = blocked.post_job(data)
    assert status == 400, body
    assert body["error"]["status"] == "INVALID_ARGUMENT"
    found = violations(body)
    assert expected_field(path) in found, found
    assert f"Field: {expected_field(path)} Error: " in body["error"]["message"]
