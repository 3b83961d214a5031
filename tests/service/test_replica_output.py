"""The route a remote replica ships its output through (``storage/replica_output.py``), over real
HTTP with a running job's own replica credential: bytes land once, in order, whatever is resent;
a gap, a bad stream or offset, an unknown or expired credential are refused."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
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


def test_shipped_bytes_land_once_and_bad_requests_are_refused(
    service: LiveService, package_uri: str
) -> None:
    job_id = unique_id("shipped")
    client = service.client()
    client.create(basic_job(job_id, package_uri, "--steps", "1000000", "--sleep", "0.05"))
    service.wait_state(job_id, ("RUNNING",), timeout=90)
    workdir = service.state_dir / "jobs" / "test-project" / job_id / "master-replica-0"
    spec = json.loads((workdir / "spec.json").read_text())
    endpoint = spec["env"]["STORAGE_EMULATOR_HOST"]
    # The supervisor writes status.json only when its replica ends: until then it is ours.
    url = f"{endpoint}/output/status"
    target: Path = workdir / "status.json"

    assert call(url) == (200, {"size": 0})
    assert call(url + "?offset=5", b"abc") == (409, {"size": 0})  # a gap is never filled in
    assert call(url + "?offset=0", b"hello ") == (200, {"size": 6})
    assert call(url + "?offset=3", b"lo world") == (200, {"size": 11})  # resent bytes skipped
    assert call(url + "?offset=0", b"hello") == (200, {"size": 11})  # all of it resent
    assert target.read_bytes() == b"hello world"

    status, body = call(f"{endpoint}/output/passwd?offset=0", b"x")
    assert status == 400 and "stream" in body["error"]["message"]
    for bad in ("-1", "abc", "1e3", ""):
        status, body = call(f"{url}?offset={bad}", b"x")
        assert status == 400 and "offset" in body["error"]["message"], bad
    forged = endpoint.rsplit("/", 1)[0] + "/not-a-credential"
    assert call(f"{forged}/output/stdout")[0] == 401

    client.cancel(job_id)
    assert service.wait_state(job_id, timeout=60)["state"] == "CANCELLED"
    assert call(f"{url}?offset=11", b"late")[0] == 401  # revoked with its job
