"""Trainer packages from every kind of location, installed once per content hash."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import unique_id
from tests.support.live_service import LiveService, basic_job


def _service_lines(service: LiveService, job_id: str) -> list[str]:
    flt = f'resource.labels.job_id="{job_id}" AND resource.labels.task_name="service"'
    return [e["jsonPayload"]["message"] for e in service.entries(flt)]


def test_sdist_by_file_uri_and_path_then_cache(
    service: LiveService, trainer_sdist: Path, tmp_path: Path
) -> None:
    copy = tmp_path / trainer_sdist.name
    copy.write_bytes(trainer_sdist.read_bytes())
    client = service.client()
    first = unique_id("fileuri")
    client.create(basic_job(first, f"file://{copy}", "--steps", "5"))
    assert service.wait_state(first)["state"] == "SUCCEEDED"
    second = unique_id("abspath")
    client.create(basic_job(second, str(copy), "--steps", "5"))
    assert service.wait_state(second)["state"] == "SUCCEEDED"
    assert any(line.startswith("Using cached packages") for line in _service_lines(service, second))
    packages = [p for p in (service.state_dir / "packages").iterdir() if not p.name.startswith(".")]
    assert packages  # installed under the state dir, not into the service's environment


def test_wheel_package(service: LiveService, trainer_sdist: Path, tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(wheels),
            str(trainer_sdist),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = wheels.glob("*.whl")
    uri = service.stage(wheel)
    jid = unique_id("wheel")
    service.client().create(basic_job(jid, uri, "--steps", "5"))
    job = service.wait_state(jid)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")


def test_broken_package_fails_the_job_with_pip_output(service: LiveService, tmp_path: Path) -> None:
    broken = tmp_path / "broken-1.0.tar.gz"
    broken.write_bytes(b"this is not a tarball")
    uri = service.stage(broken)
    jid = unique_id("broken")
    service.client().create(basic_job(jid, uri))
    job = service.wait_state(jid)
    assert job["state"] == "FAILED"
    assert job["errorMessage"].startswith("Installing the trainer package failed")
    assert job["endTime"] and "startTime" not in job
