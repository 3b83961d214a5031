"""An image the engine must pull: the job is PREPARING meanwhile, the pull's progress is in its
log, and two jobs wanting the same image pull it once (issue 30).

The registry is this test's own: a few lines of HTTP on 127.0.0.1 serving the tiny busybox image
as the registry API serves images (``/v2/<name>/manifests/<tag>``, ``/v2/<name>/blobs/<digest>``),
from an OCI layout the engine wrote with ``push oci:``. The engine is told the registry is
plain HTTP through a ``registries.conf`` of the test's (``CONTAINERS_REGISTRIES_CONF``, podman's
variable). Each layer is held back until the test sees the job PREPARING, so that state is
checked, not raced.
"""

from __future__ import annotations

import collections
import io
import json
import subprocess
import tarfile
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import _start, _stop, unique_id
from tests.support.container_images import BUSYBOX, engine_env
from tests.support.live_service import LiveService
from tui_app.local.environments.containers import Engine


class Registry:
    """A read-only registry of one OCI layout, counting what it served."""

    def __init__(self, layout: Path) -> None:
        self.layout = layout
        self.served: collections.Counter[str] = collections.Counter()
        self.release = threading.Event()
        """Layers wait for this: the test opens it once it has seen the job PREPARING."""
        index = json.loads((layout / "index.json").read_text())
        self.manifest = index["manifests"][0]
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_HEAD(self) -> None:
                self._answer(body=False)

            def do_GET(self) -> None:
                self._answer(body=True)

            def _answer(self, body: bool) -> None:
                path = self.path.split("?", 1)[0]
                if path in ("/v2", "/v2/"):
                    return self._send(b"{}", "application/json", body)
                if "/manifests/" in path:
                    digest = self.manifest_digest()
                    data = registry.blob(digest)
                    registry.served["manifest"] += body
                    return self._send(data, registry.manifest["mediaType"], body, digest)
                if "/blobs/" in path:
                    digest = path.rsplit("/", 1)[1]
                    data = registry.blob(digest)
                    if body and digest != self.config_digest():
                        registry.release.wait(60)
                    registry.served[digest] += body
                    return self._send(data, "application/octet-stream", body, digest)
                self.send_error(404)

            def manifest_digest(self) -> str:
                return str(registry.manifest["digest"])

            def config_digest(self) -> str:
                manifest = json.loads(registry.blob(self.manifest_digest()))
                return str(manifest["config"]["digest"])

            def _send(self, data: bytes, kind: str, body: bool, digest: str = "") -> None:
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                if digest:
                    self.send_header("Docker-Content-Digest", digest)
                self.end_headers()
                if body:
                    self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.host = f"127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def blob(self, digest: str) -> bytes:
        algo, _, hexa = digest.partition(":")
        return (self.layout / "blobs" / algo / hexa).read_bytes()

    def layer_digests(self) -> list[str]:
        manifest = json.loads(self.blob(str(self.manifest["digest"])))
        return [str(layer["digest"]) for layer in manifest["layers"]]

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def registry(tmp_path: Path, container_engine: Engine) -> Iterator[tuple[Registry, Path]]:
    """The registry, serving an image whose layer no image in the engine's store shares (a
    busybox root with a file of its own), so the engine must fetch every byte of it."""
    source = f"localhost/tui-app-test-pull-src:{uuid.uuid4().hex[:12]}"
    tar = tmp_path / "root.tar"
    with tarfile.open(tar, "w") as out:
        out.add(str(BUSYBOX), "bin/busybox")
        link = tarfile.TarInfo("bin/sh")
        link.type, link.linkname = tarfile.SYMTYPE, "busybox"
        out.addfile(link)
        mark = uuid.uuid4().hex.encode()
        info = tarfile.TarInfo("etc/pull-test-id")
        info.size = len(mark)
        out.addfile(info, io.BytesIO(mark))
    layout = tmp_path / "layout"
    for step in (
        ("import", str(tar), source),
        ("push", "-q", source, f"oci:{layout}:1"),
        ("rmi", source),
    ):
        done = _engine(container_engine, *step)
        if done.returncode != 0:
            pytest.fail(f"cannot make the test registry's image ({step[0]}): {done.stderr}")
    reg = Registry(layout)
    conf = tmp_path / "registries.conf"
    conf.write_text(f'[[registry]]\nlocation = "{reg.host}"\ninsecure = true\n')
    try:
        yield reg, conf
    finally:
        reg.close()


def _engine(engine: Engine, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        engine.command(*args), capture_output=True, text=True, check=False, env=engine_env()
    )


def _messages(svc: LiveService, job_id: str) -> list[str]:
    return [e["jsonPayload"]["message"] for e in svc.entries(f'resource.labels.job_id="{job_id}"')]


def test_an_image_is_pulled_once_while_its_jobs_are_preparing(
    tmp_path: Path, container_engine: Engine, registry: tuple[Registry, Path]
) -> None:
    reg, conf = registry
    image = f"{reg.host}/pulled/{unique_id('tiny').lower()}:1"
    env = {**engine_env(), "CONTAINERS_REGISTRIES_CONF": str(conf)}
    svc = _start(tmp_path / "state", env=env)
    try:
        jobs = [unique_id("pulled") for _ in range(2)]
        client = svc.client()
        for job_id in jobs:
            client.create(
                {
                    "jobId": job_id,
                    "trainingInput": {
                        "scaleTier": "BASIC",
                        "region": "us-central1",
                        "masterConfig": {
                            "imageUri": image,
                            "containerCommand": ["/bin/sh", "-c", f"echo ran {job_id}"],
                        },
                    },
                }
            )
        for job_id in jobs:
            assert svc.wait_state(job_id, ("PREPARING",))["state"] == "PREPARING"
        reg.release.set()
        for job_id in jobs:
            job = svc.wait_state(job_id, timeout=90)
            assert job["state"] == "SUCCEEDED", job.get("errorMessage")
        # The layer crossed the wire once for both jobs.
        layers = reg.layer_digests()
        assert layers and all(reg.served[d] == 1 for d in layers), reg.served
        first = [
            e["jsonPayload"]["message"] for e in svc.entries(f'resource.labels.job_id="{jobs[0]}"')
        ]
        assert f"Pulling image {image} with {container_engine.kind}." in first
        assert any("Copying blob" in m or "Pulling fs layer" in m for m in first), first
        assert f"Pulled image {image}." in first
        assert f"ran {jobs[0]}" in first
        second = [
            e["jsonPayload"]["message"] for e in svc.entries(f'resource.labels.job_id="{jobs[1]}"')
        ]
        assert not any(m.startswith("Pulling image") for m in second), second
    finally:
        _stop(svc)
        _engine(container_engine, "rmi", "-f", image)
