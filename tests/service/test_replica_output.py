"""The route a remote replica ships its output through (``storage/replica_output.py``), over real
HTTP: a replica the local executor runs never ships its output (its supervisor writes the files
on this machine), so its credential is refused there, whatever it sends. What a Ray-issued
credential may do (bytes land once, in order, whatever is resent; a gap, a bad stream or offset,
an unknown or expired credential, a planted link, a stream past its cap are refused) is tested
in ``test_ray_executor.py``, on the session's Ray cluster."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from tests.conftest import unique_id
from tests.support.live_service import LiveService, basic_job


def call(url: str, data: bytes | None = None) -> tuple[int, Any]:
    req = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET")
    req.add_header("Content-Type", "application/octet-stream")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def test_a_local_replicas_credential_may_not_ship_output(
    service: LiveService, package_uri: str
) -> None:
    job_id = unique_id("shipped_local")
    client = service.client()
    client.create(basic_job(job_id, package_uri, "--steps", "1000000", "--sleep", "0.05"))
    service.wait_state(job_id, ("RUNNING",), timeout=90)
    workdir = service.state_dir / "jobs" / "test-project" / job_id / "master-replica-0"
    spec = json.loads((workdir / "spec.json").read_text())
    endpoint = spec["env"]["STORAGE_EMULATOR_HOST"]

    for stream in ("stdout", "stderr", "hypertune", "status"):
        status, body = call(f"{endpoint}/output/{stream}")
        assert status == 403, (stream, body)
        assert body["error"]["status"] == "PERMISSION_DENIED"
        assert "Ray node" in body["error"]["message"]
        status, body = call(f"{endpoint}/output/{stream}?offset=0", b"forged line\n")
        assert status == 403, (stream, body)
    # Nothing was written: status.json is the supervisor's alone (it writes it at the end).
    assert not (workdir / "status.json").exists()
    stdout = workdir / "stdout.log"  # the supervisor's, once it has opened it
    assert not stdout.exists() or b"forged line" not in stdout.read_bytes()
    assert not (workdir / "hypertune" / "output.metrics").exists()

    client.cancel(job_id)
    assert service.wait_state(job_id, timeout=60)["state"] == "CANCELLED"
