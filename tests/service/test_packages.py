"""Trainer packages from every kind of location, installed once per content hash."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import unique_id
from tests.support.jobs_cli_run import changed_lines, tui
from tests.support.live_service import PROJECT, LiveService, basic_job
from tui_app.local.environments import packages
from tui_app.local.paths import StateDir


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


# -- what each job installed: trainerPackages in the :environment answer (issue 27) -------------


def _repacked(sdist: Path, out: Path, note: str) -> Path:
    """The same sdist, name and contents, plus one file: other bytes under the same name."""
    out.mkdir(parents=True, exist_ok=True)
    copy = out / sdist.name
    with tarfile.open(sdist) as src, tarfile.open(copy, "w:gz") as dst:
        top = src.getnames()[0].split("/")[0]
        for member in src.getmembers():
            dst.addfile(member, src.extractfile(member) if member.isfile() else None)
        data = note.encode()
        info = tarfile.TarInfo(f"{top}/NOTE.txt")
        info.size = len(data)
        dst.addfile(info, io.BytesIO(data))
    return copy


def _environment(service: LiveService, job_id: str) -> dict[str, Any]:
    status, env = service.request("GET", f"/v1/projects/{PROJECT}/jobs/{job_id}:environment")
    assert status == 200, env
    return dict(env)


def test_same_uri_other_bytes_shows_as_another_hash(
    service: LiveService, trainer_sdist: Path, tmp_path: Path
) -> None:
    """Overwriting a package at its URI between two runs is what `jobs diff` must show: each
    job's ``trainerPackages`` hold the bytes it installed (jobs without runtimeVersion here)."""
    name = trainer_sdist.name
    uri = f"gs://test-bucket/replaced-{unique_id('p').lower()}/{name}"
    stored = service.state_dir / "gcs" / uri.removeprefix("gs://")
    stored.parent.mkdir(parents=True)
    client = service.client()
    seen: list[str] = []
    ids: list[str] = []
    for run, package in enumerate([trainer_sdist, _repacked(trainer_sdist, tmp_path, "v2")]):
        data = package.read_bytes()
        stored.write_bytes(data)
        job_id = unique_id(f"replaced{run}")
        ids.append(job_id)
        client.create(basic_job(job_id, uri, "--steps", "3"))
        job = service.wait_state(job_id)
        assert job["state"] == "SUCCEEDED", job.get("errorMessage")
        env = _environment(service, job_id)
        assert env["runtimeVersion"] is None
        assert env["trainerPackages"] == [
            {
                "uri": uri,
                "name": name,
                "sha256": hashlib.sha256(data).hexdigest(),
                "sizeBytes": str(len(data)),
            }
        ]
        seen.append(env["trainerPackages"][0]["sha256"])
        # The job's own copy served its install and is gone; the job's dir stays.
        job_dir = service.state_dir / "jobs" / PROJECT / job_id
        assert job_dir.is_dir() and not (job_dir / ".packages").exists()
    assert seen[0] != seen[1]
    # And `jobs diff` says so, by the two hashes, with nothing else of the input different.
    done = tui(service, "diff", *ids, "--format", "json")
    assert done.returncode == 1, done.stderr
    by_path = {d["path"]: d for d in json.loads(done.stdout)["differences"]}
    assert (by_path[f'packages["{name}"]']["left"], by_path[f'packages["{name}"]']["right"]) == (
        seen[0],
        seen[1],
    )
    assert not any(p.startswith("trainingInput.") for p in by_path)
    text = tui(service, "diff", *ids)
    assert f"-  {name}: {seen[0]}" in changed_lines(text.stdout)
    assert f"+  {name}: {seen[1]}" in changed_lines(text.stdout)


def test_fetch_copies_each_package_in_order_even_with_one_name(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "state")
    state.ensure()
    a = tmp_path / "a" / "trainer-0.1.tar.gz"
    b = tmp_path / "b" / "trainer-0.1.tar.gz"
    for path, data in ((a, b"first"), (b, b"second, longer")):
        path.parent.mkdir()
        path.write_bytes(data)
    uris = [f"file://{a}", str(b)]
    fetched = packages.fetch(state, uris, tmp_path / "copies")
    assert [p.as_json() for p in fetched.packages] == [
        {
            "uri": uri,
            "name": "trainer-0.1.tar.gz",
            "sha256": hashlib.sha256(data).hexdigest(),
            "sizeBytes": str(len(data)),
        }
        for uri, data in zip(uris, (b"first", b"second, longer"), strict=True)
    ]
    assert [p.read_bytes() for p in fetched.files] == [b"first", b"second, longer"]
    # The install cache's key: the names and bytes in order, as before copies existed, so
    # installs cached by an earlier service are still found.
    key = hashlib.sha256(
        b"trainer-0.1.tar.gz\0first\0" + b"trainer-0.1.tar.gz\0second, longer\0"
    ).hexdigest()
    assert fetched.key == key
    swapped = packages.fetch(state, uris[::-1], tmp_path / "swapped")
    assert swapped.key != key
    with pytest.raises(packages.PackageError) as missing:
        packages.fetch(state, [str(a), str(tmp_path / "gone.tar.gz")], tmp_path / "c")
    assert missing.value.field == "trainingInput.packageUris[1]"
