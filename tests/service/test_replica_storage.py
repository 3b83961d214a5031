"""Replicas reach Cloud Storage through the service with a credential of their own.

A real job of the sample trainer reads a staged ``gs://`` CSV and writes checkpoints and its
model to its ``gs://`` jobDir (passed unchanged), in the default token-auth mode where the
replica never sees the service's token. Its writes are attributed to the replica; its
credential works on storage routes only, and not after the job ended.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
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
            "ships_output": False,  # a local replica: its files are its supervisor's to write
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


GOOGLE_AUTH_DEFAULT = """
import json, google.auth, google.auth.transport.requests as tr
creds, project = google.auth.default()
creds.refresh(tr.Request())
print(json.dumps({"project": project, "token": creds.token, "email": creds.service_account_email}))
"""


def test_google_auth_default_finds_the_replicas_metadata_server(
    service: LiveService, package_uri: str
) -> None:
    """``google.auth.default()`` (what google-cloud-storage before 2.1 calls) gets the replica's
    credential from its metadata server, as trainers got theirs on the platform's machines."""
    job_id = unique_id("mds")
    client = service.client()
    client.create(basic_job(job_id, package_uri, "--steps", "100000", "--sleep", "0.1"))
    try:
        service.wait_state(job_id, ("RUNNING",), timeout=60)
        workdir = service.state_dir / "jobs" / PROJECT / job_id / "master-replica-0"
        env = json.loads((workdir / "spec.json").read_text())["env"]
        secret = env["GOOGLE_AUTH_TOKEN_FOR_TESTING"]
        assert env["GCE_METADATA_HOST"].endswith(f"/_replica/{secret}")
        keys = ("GCE_METADATA_HOST", "GCE_METADATA_ROOT", "GCE_METADATA_IP")
        run_env = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "GCE_"))}
        run_env.update({k: env[k] for k in keys}, CLOUDSDK_CONFIG=str(workdir / "no-gcloud"))
        out = subprocess.run(
            [sys.executable, "-c", GOOGLE_AUTH_DEFAULT],
            env=run_env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
        found = json.loads(out)
        assert found == {"project": PROJECT, "token": secret, "email": "replica@tui-app.invalid"}
        # That token is the replica's storage credential: good on storage, as a bearer token.
        listed = call(
            service,
            "GET",
            "/storage/v1/b",
            headers={"Authorization": f"Bearer {found['token']}"},
            auth=False,
        )
        assert listed.status == 200, listed.body
        # As on Compute Engine, a request without Metadata-Flavor is refused.
        prefix = f"/_replica/{secret}/computeMetadata/v1/project/project-id"
        bare = call(service, "GET", prefix, auth=False)
        assert bare.status == 403, bare.body
        flavoured = call(service, "GET", prefix, headers={"Metadata-Flavor": "Google"}, auth=False)
        assert (flavoured.status, flavoured.body) == (200, PROJECT.encode())
    finally:
        client.cancel(job_id)
    service.wait_state(job_id, timeout=60)
    # An ended job's metadata server is gone with its credential.
    gone = call(service, "GET", prefix, headers={"Metadata-Flavor": "Google"}, auth=False)
    assert gone.status == 401, gone.body
