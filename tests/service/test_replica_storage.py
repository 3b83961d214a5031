"""Replicas reach Cloud Storage through the service with a credential of their own.

A real job of the sample trainer reads a staged ``gs://`` CSV and writes checkpoints and its
model to its ``gs://`` jobDir (passed unchanged), in the default token-auth mode where the
replica never sees the service's token. Its writes are attributed to the replica; its
credential works on storage routes only, and not after the job ended.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from tests.conftest import unique_id
from tests.service.test_storage_api import call
from tests.support.live_service import PROJECT, LiveService, basic_job

ROWS = "x1,x2,y\n" + "".join(f"{i % 7},{i % 3},{2 * (i % 7) - (i % 3) + 0.5}\n" for i in range(60))


def test_trainer_reads_and_writes_gs_through_its_replica_credential(
    service: LiveService, package_uri: str
) -> None:
    staged = call(
        service,
        "POST",
        "/upload/storage/v1/b/replica-data/o?uploadType=media&name=in%2Ftrain.csv",
        ROWS.encode(),
    )
    assert staged.status == 200, staged.body
    job_id = unique_id("gs_io")
    job_dir = f"gs://replica-out/{job_id}"
    body = basic_job(
        job_id,
        package_uri,
        "--steps",
        "30",
        "--dim",
        "2",
        "--checkpoint-every",
        "10",
        "--train-file",
        "gs://replica-data/in/train.csv",
        jobDir=job_dir,
    )
    service.client().create(body)
    job = service.wait_state(job_id, timeout=120)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    assert job["trainingInput"]["jobDir"] == job_dir

    # The replica was given the URI itself, and TF_CONFIG's job keeps it as given.
    workdir = service.state_dir / "jobs" / PROJECT / job_id / "master-replica-0"
    spec = json.loads((workdir / "spec.json").read_text())
    assert spec["argv"][-2:] == ["--job-dir", job_dir]
    assert json.loads(spec["env"]["TF_CONFIG"])["job"]["job_dir"] == job_dir
    # The service's token never reaches a replica.
    assert service.token and service.token not in json.dumps(spec["env"])

    flt = f'resource.labels.job_id="{job_id}"'
    lines = [e.get("jsonPayload", {}).get("message", "") for e in service.entries(flt)]
    assert any("training on 60 rows of gs://replica-data/in/train.csv" in ln for ln in lines)

    out = service.state_dir / "gcs" / "replica-out" / job_id
    model = json.loads((out / "model" / "model.json").read_text())
    assert model["global_step"] == 30 and model["dim"] == 2
    assert sorted(p.name for p in (out / "checkpoints").iterdir())[-1] == "ckpt-30.json"

    # Every write is attributed to the replica that made it.
    written = [
        json.loads(line)
        for line in (service.state_dir / "jobs" / PROJECT / job_id / "objects-written.jsonl")
        .read_text()
        .splitlines()
    ]
    names = {w["name"] for w in written}
    assert f"{job_id}/model/model.json" in names
    assert f"{job_id}/tf_config/chief-0.json" in names or f"{job_id}/tf_config/master-0.json" in (
        names
    )
    assert all(
        w["writer"]
        == {
            "project": PROJECT,
            "job_id": job_id,
            "trial": None,
            "task_name": "master-replica-0",
        }
        and w["bucket"] == "replica-out"
        for w in written
    )

    # The job ended: its replica's credential is refused, in the path and as a bearer token.
    endpoint = spec["env"]["STORAGE_EMULATOR_HOST"]
    prefix = urlsplit(endpoint).path
    secret = spec["env"]["GOOGLE_AUTH_TOKEN_FOR_TESTING"]
    assert prefix == f"/_replica/{secret}"
    ended = call(service, "GET", f"{prefix}/storage/v1/b/replica-out/o", auth=False)
    assert ended.status == 401, ended.body
    as_bearer = call(
        service,
        "GET",
        "/storage/v1/b/replica-out/o",
        headers={"Authorization": f"Bearer {secret}"},
        auth=False,
    )
    assert as_bearer.status == 401


def test_replica_credential_never_opens_other_routes(service: LiveService) -> None:
    """Under /_replica/ only storage routes exist; elsewhere it is not a token at all."""
    for path in ("/v1/projects/test-project/jobs", "/v2/entries:list", "/healthz"):
        reply = call(service, "GET", f"/_replica/some-secret{path}", auth=False)
        assert reply.status == 403, (path, reply.body)
        assert json.loads(reply.body)["error"]["status"] == "PERMISSION_DENIED"
    unknown = call(service, "GET", "/_replica/not-issued/storage/v1/b", auth=False)
    assert unknown.status == 401
