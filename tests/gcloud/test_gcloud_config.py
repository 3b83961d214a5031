"""A config saved by the builder runs unchanged under the real gcloud (issue 5, done-when 4).

Each non-container config of ``examples/configs/valid`` is saved with ``to_config_yaml`` and
submitted twice by ``gcloud ai-platform jobs submit training``: as a person types it (``--config
FILE`` plus the two flags gcloud insists on: ``--region``, and ``--packages``, since gcloud
replaces the file's packageUris with the flag's list, empty when absent), and as the builder's
``submit_command`` line. Both must create the file's job. The jobs wait behind a job holding
the service's two slots and are cancelled; one builder-made CUSTOM job runs to the end.

``--package-path`` with ``--staging-bucket`` (gcloud builds and uploads the sdist) is covered by
``test_gcloud_upload.py``.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import unique_id
from tests.gcloud.test_gcloud_cli import Gcloud
from tests.service.test_config_corpus import slots_held
from tests.support.config_corpus import VALID, load_corpus_file
from tests.support.live_service import LiveService
from tests.unit.test_gcloud_command import GCLOUD_SUBMIT_FLAGS, without_empty_lists
from tui_app.model.jobs.gcloud_command import submit_command
from tui_app.model.jobs.job_config import to_config_yaml
from tui_app.model.jobs.job_spec import parse_job

pytestmark = pytest.mark.gcloud

RUNNABLE = [
    p
    for p in VALID
    if "imageUri" not in p.read_text()
    and load_corpus_file(p)["trainingInput"].get("pythonVersion") != "2.7"
]
"""The local service has no container runtime and builds runtimes on Python 3, so container
and Python 2.7 configs are not submitted here (the 2.7 refusal has its own test below)."""
PYTHON_27 = [p for p in VALID if load_corpus_file(p)["trainingInput"].get("pythonVersion") == "2.7"]


@pytest.fixture(scope="module")
def held(small_service: LiveService, trainer_sdist: Path) -> Iterator[LiveService]:
    with slots_held(small_service, trainer_sdist):
        yield small_service


@pytest.fixture(scope="module")
def gcloud(held: LiveService, tmp_path_factory: pytest.TempPathFactory) -> Gcloud:
    return Gcloud.for_service(held, tmp_path_factory.mktemp("gcloud-config"))


def run(gcloud: Gcloud, argv: list[str]) -> None:
    """Run a whole ``gcloud ai-platform jobs ...`` argv; it must succeed."""
    assert argv[:3] == ["gcloud", "ai-platform", "jobs"], argv
    gcloud(shlex.join(argv[3:])).ok()


def created(service: LiveService, job_id: str) -> dict[str, Any]:
    """The job the service stored, then cancelled so that it never takes a slot."""
    client = service.client()
    job = client.get(job_id)
    client.cancel(job_id)
    return {k: job[k] for k in ("jobId", "labels", "trainingInput") if k in job}


def as_gcloud_sends(job: dict[str, Any], web_access: bool | None = None) -> dict[str, Any]:
    """``job`` as jobs.create stores it from gcloud: enableWebAccess always present."""
    out: dict[str, Any] = without_empty_lists(parse_job(job))
    ti = out["trainingInput"]
    ti["enableWebAccess"] = ti.get("enableWebAccess", False) if web_access is None else web_access
    return out


@pytest.mark.parametrize("path", RUNNABLE, ids=lambda p: p.name)
def test_a_saved_config_runs_under_gcloud(held: LiveService, gcloud: Gcloud, path: Path) -> None:
    job = load_corpus_file(path, job_id=unique_id(path.stem))
    config = gcloud.cwd / f"{job['jobId']}.yaml"
    config.write_text(to_config_yaml(job))
    ti = job["trainingInput"]

    by_hand = unique_id(path.stem)
    packages = ",".join(ti["packageUris"])
    gcloud(
        f"submit training {by_hand} --config {config.name} --region {ti['region']}"
        f" --packages {shlex.quote(packages)}"
    ).ok()
    # gcloud sends enableWebAccess: false unless --enable-web-access is given.
    assert created(held, by_hand) == as_gcloud_sends({**job, "jobId": by_hand}, web_access=False)

    run(gcloud, submit_command(job, config_path=config.name))
    assert created(held, job["jobId"]) == as_gcloud_sends(job)


@pytest.mark.parametrize("path", PYTHON_27, ids=lambda p: p.name)
def test_a_python_27_config_is_refused_naming_the_field(
    held: LiveService, gcloud: Gcloud, path: Path
) -> None:
    """gcloud prints the service's refusal: the field, and what can run instead."""
    job = load_corpus_file(path, job_id=unique_id(path.stem))
    config = gcloud.cwd / f"{job['jobId']}.yaml"
    config.write_text(to_config_yaml(job))
    ti = job["trainingInput"]
    result = gcloud(
        f"submit training {job['jobId']} --config {config.name} --region {ti['region']}"
        f" --packages {shlex.quote(','.join(ti['packageUris']))}"
    )
    assert result.returncode == 1
    assert "trainingInput.pythonVersion" in result.stderr
    assert "pythonVersion 3.7" in " ".join(result.stderr.split())


def test_a_builder_job_runs_to_the_end(
    service: LiveService, trainer_sdist: Path, tmp_path: Path
) -> None:
    """A CUSTOM 1+1+1 job with labels, a tuning-free config and trainer args, end to end."""
    gc = Gcloud.for_service(service, tmp_path)
    job: dict[str, Any] = {
        "jobId": unique_id("builder_run"),
        "labels": {"made-by": "builder"},
        "trainingInput": {
            "scaleTier": "CUSTOM",
            "masterType": "standard",
            "workerType": "standard",
            "workerCount": 1,
            "parameterServerType": "standard",
            "parameterServerCount": 1,
            "region": "us-central1",
            "packageUris": [service.stage(trainer_sdist)],
            "pythonModule": "trainer.task",
            "args": ["--steps", "5"],
            "scheduling": {"maxRunningTime": "600s"},
        },
    }
    (tmp_path / "config.yaml").write_text(to_config_yaml(job))
    argv = submit_command(job)
    assert "--config" in argv  # scheduling has no flag
    run(gc, argv)
    done = service.wait_state(job["jobId"])
    assert done["state"] == "SUCCEEDED", done.get("errorMessage")
    stored = {k: done[k] for k in ("jobId", "labels", "trainingInput")}
    assert stored == as_gcloud_sends(job)
    assert yaml.safe_load(gc(f"describe {job['jobId']}").ok().stdout)["state"] == "SUCCEEDED"


def test_the_unit_tests_flag_list_is_this_gclouds(gcloud: Gcloud) -> None:
    """``GCLOUD_SUBMIT_FLAGS`` (which the unit tests hold every command to) is still true."""
    help_text = re.sub(r"\x1b\[[0-9;]*m", "", gcloud("submit training --help").ok().stdout)
    documented = set(re.findall(r"^ {5,7}(--[a-z][a-z-]*)", help_text, re.MULTILINE))
    assert documented == GCLOUD_SUBMIT_FLAGS
