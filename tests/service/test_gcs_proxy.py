"""``tf.io.gfile``'s way to the local storage: the storage proxy of a real service.

TensorFlow's GCS filesystem dials https://www.googleapis.com and https://storage.googleapis.com
through libcurl, whatever the environment says about emulators. The service starts a proxy that
answers TLS for those two names and forwards to its storage API. Here: libcurl itself (the
``curl`` tool, with the variables a replica gets), a real replica making TensorFlow's calls,
and the proxy's refusals and pass-through (in-process, with a stand-in Google).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import ssl
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import unique_id
from tests.service.test_storage_api import call
from tests.support.live_service import PROJECT, LiveService, basic_job
from tui_app.local.storage.gcs_proxy import GcsProxy
from tui_app.local.storage.proxy_certs import ensure_certs
from tui_app.shell.package_build import build_sdist

PROBE_SRC = Path(__file__).resolve().parent.parent / "support" / "probe_trainer"


def proxy_of(svc: LiveService, timeout: float = 30) -> str:
    """The proxy's URL, once the service has written it to service.json."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            url = json.loads((svc.state_dir / "service.json").read_text()).get("storage_proxy")
        except (OSError, ValueError):
            url = None
        if url:
            return str(url)
        time.sleep(0.05)
    raise TimeoutError("the service never said where its storage proxy is")


def _stage(svc: LiveService, bucket: str, name: str, data: bytes) -> None:
    reply = call(svc, "POST", f"/upload/storage/v1/b/{bucket}/o?uploadType=media&name={name}", data)
    assert reply.status == 200, reply.body


def _curl(svc: LiveService, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.update(
        ALL_PROXY=proxy_of(svc),
        CURL_CA_BUNDLE=str(svc.state_dir / "tls" / "ca-bundle.pem"),
        NO_PROXY="127.0.0.1,localhost",
    )
    env.pop("HTTPS_PROXY", None)
    env.pop("https_proxy", None)
    return subprocess.run(
        ["curl", "-sS", "--max-time", "30", "-H", f"Authorization: Bearer {svc.token}", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


needs_curl = pytest.mark.skipif(shutil.which("curl") is None, reason="no curl on this machine")


@needs_curl
def test_libcurl_reads_lists_and_writes_through_googles_names(service: LiveService) -> None:
    bucket = unique_id("px").replace("_", "-")
    _stage(service, bucket, "dir%2Fin.txt", b"hello proxy\n")
    read = _curl(service, f"https://storage.googleapis.com/{bucket}/dir%2Fin.txt")
    assert read.returncode == 0 and read.stdout == "hello proxy\n", read.stderr
    listed = _curl(service, f"https://www.googleapis.com/storage/v1/b/{bucket}/o?prefix=dir/")
    assert [o["name"] for o in json.loads(listed.stdout)["items"]] == ["dir/in.txt"]
    # TensorFlow's empty-bodied upload start: a form type and Transfer-Encoding: identity.
    started = _curl(
        service,
        "-i",
        "-X",
        "POST",
        "-H",
        "Content-Length: 0",
        "-H",
        "Transfer-Encoding: identity",
        f"https://www.googleapis.com/upload/storage/v1/b/{bucket}/o"
        "?uploadType=resumable&name=out%2Fy.txt",
    )
    assert started.returncode == 0, started.stderr
    location = next(
        ln.split(":", 1)[1].strip()
        for ln in started.stdout.splitlines()
        if ln.lower().startswith("location:")
    )
    # The session leads back through the proxy, so the PUT's headers are mended too.
    assert location.startswith(f"https://www.googleapis.com/upload/storage/v1/b/{bucket}/o?")
    put = _curl(
        service, "-X", "PUT", "-H", "Transfer-Encoding: identity", "--data-binary", "abc", location
    )
    assert put.returncode == 0 and json.loads(put.stdout)["size"] == "3", put.stdout
    assert (service.state_dir / "gcs" / bucket / "out" / "y.txt").read_bytes() == b"abc"


@needs_curl
def test_the_proxy_refuses_what_is_not_a_tunnel(service: LiveService) -> None:
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    plain = subprocess.run(
        ["curl", "-sS", "--max-time", "10", "-w", "%{http_code}", proxy_of(service) + "/x"],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert plain.stdout.endswith("405") and "only tunnels" in plain.stdout


def _probe_job(job_id: str, uri: str, *args: str) -> dict[str, Any]:
    return basic_job(job_id, uri, *args, pythonModule="probe.task")


def test_a_replica_reaches_storage_as_tensorflow_does(service: LiveService, tmp_path: Path) -> None:
    bucket = unique_id("pxjob").replace("_", "-")
    _stage(service, bucket, "in.bin", b"0123456789")
    uri = service.stage(build_sdist(PROBE_SRC, tmp_path))
    job_id = unique_id("gs_https")
    # It writes into its jobDir: a replica's credential writes nowhere else (storage_scope).
    body = _probe_job(
        job_id, uri, "--gs-https", f"gs://{bucket}/in.bin", f"gs://{bucket}/job/out.bin"
    )
    body["trainingInput"]["jobDir"] = f"gs://{bucket}/job"
    service.client().create(body)
    job = service.wait_state(job_id, timeout=120)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    assert (service.state_dir / "gcs" / bucket / "job" / "out.bin").read_bytes() == b"9876543210"
    record = json.loads(
        next(service.state_dir.glob(f"jobs/*/{job_id}/**/probe/master-0.json")).read_text()
    )
    assert record["gs_https"]["read"] == 10
    assert record["gs_https"]["session"].startswith("https://www.googleapis.com/upload/")
    # The write is the replica's, through its own credential.
    written = (service.state_dir / "jobs" / PROJECT / job_id / "objects-written.jsonl").read_text()
    assert any(json.loads(ln)["name"] == "job/out.bin" for ln in written.splitlines())

    # Outside its job's paths the same TensorFlow-style write is refused, through the proxy too.
    stray_id = unique_id("gs_https_stray")
    service.client().create(
        _probe_job(stray_id, uri, "--gs-https", f"gs://{bucket}/in.bin", f"gs://{bucket}/out.bin")
    )
    stray = service.wait_state(stray_id, timeout=120)
    assert stray["state"] == "FAILED"
    flt = f'resource.labels.job_id="{stray_id}"'
    lines = [str((e.get("jsonPayload") or {}).get("message", "")) for e in service.entries(flt)]
    refusal = f"Writing gs://{bucket}/out.bin is outside this replica"  # the probe prints a repr
    assert any(refusal in line and ": 403 " in line for line in lines), lines
    assert not (service.state_dir / "gcs" / bucket / "out.bin").exists()


# -- in-process: pass-through and the stand-in Google ------------------------------------------


async def _read_all(reader: asyncio.StreamReader) -> bytes:
    return await asyncio.wait_for(reader.read(), 10)


async def _connect(port: int, target: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    await writer.drain()
    status = await reader.readuntil(b"\r\n\r\n")
    assert status.startswith(b"HTTP/1.1 200"), status
    return reader, writer


def test_other_hosts_are_tunnelled_untouched_and_google_reads_go_upstream(
    tmp_path: Path,
) -> None:
    """A CONNECT to any other host is a byte pipe; a read of a bucket the service lacks goes to
    Google without the replica's credential; with Google unreachable the answer says why."""

    async def scenario() -> None:
        seen: list[bytes] = []

        async def echo(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            w.write(b"echo:" + await r.readexactly(4))
            await w.drain()
            w.close()

        async def fake_google(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            seen.append(await r.readuntil(b"\r\n\r\n"))
            w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\npublic")
            await w.drain()
            w.close()

        certs = ensure_certs(tmp_path / "tls")
        google_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        google_ctx.load_cert_chain(certs.leaf_cert, certs.leaf_key)
        echo_srv = await asyncio.start_server(echo, "127.0.0.1", 0)
        google_srv = await asyncio.start_server(fake_google, "127.0.0.1", 0, ssl=google_ctx)
        google_port = google_srv.sockets[0].getsockname()[1]
        trust = ssl.create_default_context(cafile=str(certs.bundle))
        proxy = GcsProxy(
            certs,
            storage_port=1,  # never used: no bucket is local
            bucket_exists=lambda bucket: False,
            upstream=lambda host: ("127.0.0.1", google_port, trust),
        )
        port = await proxy.start()
        try:
            echo_port = echo_srv.sockets[0].getsockname()[1]
            reader, writer = await _connect(port, f"127.0.0.1:{echo_port}")
            writer.write(b"ping")
            assert await _read_all(reader) == b"echo:ping"
            writer.close()

            reader, writer = await _connect(port, "storage.googleapis.com:443")
            await writer.start_tls(trust, server_hostname="storage.googleapis.com")
            writer.write(
                b"GET /tfds-data/info.json HTTP/1.1\r\nHost: storage.googleapis.com\r\n"
                b"Authorization: Bearer replica-secret\r\n\r\n"
            )
            answer = await _read_all(reader)
            assert answer.endswith(b"public")
            assert b"GET /tfds-data/info.json HTTP/1.1" in seen[0]
            assert b"replica-secret" not in seen[0]

            with socket.socket() as s:  # a port nothing listens on
                s.bind(("127.0.0.1", 0))
                dead = s.getsockname()[1]
            proxy._upstream = lambda host: ("127.0.0.1", dead, trust)
            reader, writer = await _connect(port, "storage.googleapis.com:443")
            await writer.start_tls(trust, server_hostname="storage.googleapis.com")
            writer.write(b"GET /tfds-data/info.json HTTP/1.1\r\nHost: x\r\n\r\n")
            answer = await _read_all(reader)
            assert answer.startswith(b"HTTP/1.1 502")
            assert b"gs://tfds-data is not in the local service's storage" in answer
            assert b"gcloud storage cp" in answer
        finally:
            await proxy.close()
            echo_srv.close()
            google_srv.close()

    asyncio.run(scenario())
