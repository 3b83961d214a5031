"""The real gcloud stages local packages through the service's storage upload API (issue 6).

``--package-path`` makes gcloud build an sdist and upload it (multipart, up to 5 MiB) before it
creates the job; a local ``--packages`` file over 5 MiB goes up as a resumable upload, in chunks
of ``storage/upload_chunk_size``. gcloud is pointed at the service only through
``tui-app service env``, as in ``test_gcloud_cli``.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tarfile
from pathlib import Path

import pytest
import yaml

from tests.conftest import TRAINER_SRC, unique_id
from tests.gcloud.test_gcloud_cli import Gcloud
from tests.support.live_service import LiveService

pytestmark = pytest.mark.gcloud

STAGING = "gs://staging-bucket"


@pytest.fixture(scope="module")
def gcloud(service: LiveService, tmp_path_factory: pytest.TempPathFactory) -> Gcloud:
    """gcloud for the module's service, in a folder holding a copy of examples/trainer.

    A copy: gcloud runs the trainer's setup.py, and a test must not leave build output in the
    checkout (or race another worker's build there).
    """
    gc = Gcloud.for_service(service, tmp_path_factory.mktemp("gcloud-upload"))
    shutil.copytree(
        TRAINER_SRC,
        gc.cwd / "examples" / "trainer",
        ignore=shutil.ignore_patterns("*.egg-info", "build", "dist", "__pycache__"),
    )
    return gc


def staged_object(service: LiveService, uri: str) -> Path:
    assert uri.startswith("gs://"), uri
    return service.state_dir / "gcs" / uri[len("gs://") :]


def service_lines(service: LiveService, job_id: str, task: str) -> list[str]:
    flt = f'resource.labels.job_id="{job_id}" AND resource.labels.task_name="{task}"'
    return [e["jsonPayload"]["message"] for e in service.entries(flt)]


def test_env_points_storage_at_the_service(service: LiveService, gcloud: Gcloud) -> None:
    override = gcloud.exported["CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE"]
    assert override == service.url + "/storage/v1/"


def test_package_path_with_staging_bucket(service: LiveService, gcloud: Gcloud) -> None:
    """gcloud builds examples/trainer, uploads the sdist, and the job runs that upload."""
    job_id = unique_id("gc_pkgpath")
    res = gcloud(
        f"submit training {job_id} --package-path examples/trainer/trainer"
        f" --module-name trainer.task --staging-bucket {STAGING} --region us-central1"
        " -- --steps 3"
    ).ok()
    assert yaml.safe_load(res.stdout) == {"jobId": job_id, "state": "QUEUED"}

    ti = service.client().get(job_id)["trainingInput"]
    [uri] = ti["packageUris"]
    # gcloud's own layout: {staging bucket}/{job id}/{sha256 of the files}/{sdist name}.
    m = re.fullmatch(rf"{STAGING}/{job_id}/([0-9a-f]{{64}})/trainer-0\.1\.0\.tar\.gz", uri)
    assert m, uri
    sdist = staged_object(service, uri)
    assert hashlib.sha256(sdist.read_bytes()).hexdigest() == m[1]  # every byte arrived
    with tarfile.open(sdist) as tar:
        assert "trainer-0.1.0/trainer/task.py" in tar.getnames()

    job = service.wait_state(job_id, timeout=120)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    assert "Installing trainer-0.1.0.tar.gz." in service_lines(service, job_id, "service")
    assert job["trainingInput"]["args"] == ["--steps", "3"]
    master = service_lines(service, job_id, "master-replica-0")
    assert any(line.startswith("final loss=") for line in master), master[-5:]


def test_large_local_package_goes_up_resumable_in_chunks(
    service: LiveService, gcloud: Gcloud
) -> None:
    """Over 5 MiB, in 1 MiB chunks: the 308/Range handshake with the real apitools client."""
    big = gcloud.cwd / "padding-0.0.1.tar.gz"
    data = os.urandom(6 * 1024 * 1024 + 4321)
    big.write_bytes(data)
    job_id = unique_id("gc_resumable")
    res = gcloud(
        f"submit training {job_id} --packages {big.name} --module-name trainer.task"
        f" --staging-bucket {STAGING} --region us-central1",
        env={"CLOUDSDK_STORAGE_UPLOAD_CHUNK_SIZE": "1MiB"},
    ).ok()
    assert f"Job [{job_id}] submitted successfully." in res.stderr
    [uri] = service.client().get(job_id)["trainingInput"]["packageUris"]
    assert uri.startswith(f"{STAGING}/{job_id}/") and uri.endswith("/padding-0.0.1.tar.gz")
    assert staged_object(service, uri).read_bytes() == data
    # Random bytes are no package: the job fails to install it, which is not this test's point.
    service.wait_state(job_id, timeout=120)
    assert not list((service.state_dir / "uploads").glob("*.part"))
