"""Runtime versions against a real service: real pip, real pyenv interpreters, offline wheels.

The service runs with ``PIP_NO_INDEX=1`` and ``PIP_FIND_LINKS`` at tiny stand-in wheels named
like the frameworks (``tests/support/stand_in_wheels.py``), so building a runtime environment
takes seconds and no network, while pip resolves the real pins by its real rules. One service
sees pyenv's Python 3.7 (exact runtimes); the other has it hidden (the fallback on the
service's own Python, and refusals).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import serve, unique_id
from tests.support.live_service import PROJECT, LiveService, basic_job
from tests.support.stand_in_wheels import build_runtime_wheels, build_wheel
from tui_app.local.environments.interpreters import probe

PYENV = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
PY37 = next(iter(sorted(PYENV.glob("versions/3.7*/bin/python"))), None)
needs_37 = pytest.mark.skipif(
    PY37 is None or probe(str(PY37)) != "3.7",
    reason="no pyenv Python 3.7 on this machine (pyenv install 3.7 to run these)",
)


def trainer_sdist(
    out: Path, name: str, requires: list[str], salt: str = "", chief_waits: float = 0.0
) -> Path:
    """A tiny sdist whose ``<name>.task`` prints the Python and the versions of the modules
    named in its arguments (``VERSIONS {...}``), then imports nothing else. ``chief_waits``:
    seconds the chief stays after printing (the job ends with it: the others print first)."""
    task = (
        "import importlib, json, os, sys, time\n"
        "out = {'python': '%d.%d' % sys.version_info[:2]}\n"
        "task = json.loads(os.environ.get('TF_CONFIG', '{}')).get('task', {})\n"
        "out['task_type'] = task.get('type')\n"
        "out['modular_fs'] = os.environ.get('TF_USE_MODULAR_FILESYSTEM')\n"
        "for mod in sys.argv[1:]:\n"
        "    out[mod] = importlib.import_module(mod).__version__\n"
        f"print('VERSIONS ' + json.dumps(out), flush=True)  # {salt}\n"
        f"time.sleep({chief_waits} if out['task_type'] in ('chief', 'master') else 0)\n"
    )
    setup = (
        "from setuptools import setup\n"
        f"setup(name={name!r}, version='0.1', packages=[{name!r}], "
        f"install_requires={requires!r})\n"
    )
    pkg_info = f"Metadata-Version: 1.0\nName: {name}\nVersion: 0.1\n"
    files = {
        "setup.py": setup,
        "PKG-INFO": pkg_info,
        f"{name}/__init__.py": "",
        f"{name}/task.py": task,
    }
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}-0.1{('-' + salt) if salt else ''}.tar.gz"
    with tarfile.open(path, "w:gz") as tf:
        for rel, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{name}-0.1/{rel}")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = build_runtime_wheels(tmp_path_factory.mktemp("wheels"))
    build_wheel(out, "tensorflow", "1.15.5")
    build_wheel(out, "protobuf", "3.20.3")  # runtime 1.x bounds it (TF1_PINS)
    # pandas 1.4.1 needs Python 3.8, as on PyPI (Google's later samples pin it).
    build_wheel(out, "pandas", "1.4.1")
    meta = out / "pandas-1.4.1-py3-none-any.whl"
    _with_requires_python(meta, ">=3.8")
    return out


def _with_requires_python(wheel: Path, spec: str) -> None:
    """Rewrite a stand-in wheel's METADATA with Requires-Python (RECORD left as built: pip
    checks Requires-Python before it checks hashes of an installed file)."""
    import zipfile

    with zipfile.ZipFile(wheel) as zf:
        items = {n: zf.read(n) for n in zf.namelist()}
    name = next(n for n in items if n.endswith("/METADATA"))
    items[name] = items[name] + f"Requires-Python: {spec}\n".encode()
    with zipfile.ZipFile(wheel, "w") as zf:
        for n, d in items.items():
            zf.writestr(n, d)


def _offline_env(wheels: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "TUI_APP_"))}
    env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheels), PIP_CONFIG_FILE=os.devnull)
    return env


@pytest.fixture(scope="module")
def with_37(tmp_path_factory: pytest.TempPathFactory, wheels: Path) -> Iterator[LiveService]:
    yield from serve(tmp_path_factory, "rt37", env=_offline_env(wheels))


@pytest.fixture(scope="module")
def without_37(tmp_path_factory: pytest.TempPathFactory, wheels: Path) -> Iterator[LiveService]:
    """Only the service's own Python: no pyenv, no uv, nothing but its own bin on PATH."""
    empty = tmp_path_factory.mktemp("no-pythons")
    env = _offline_env(wheels)
    env.update(
        PYENV_ROOT=str(empty),
        UV_PYTHON_INSTALL_DIR=str(empty),
        PATH=f"{Path(sys.executable).parent}:/usr/bin:/bin",
    )
    yield from serve(tmp_path_factory, "rtown", env=env)


def _job(job_id: str, uri: str, module: str, *args: str, **ti: Any) -> dict[str, Any]:
    return basic_job(job_id, uri, *args, pythonModule=module, **ti)


def _lines(svc: LiveService, job_id: str, task: str) -> list[str]:
    flt = f'resource.labels.job_id="{job_id}" AND resource.labels.task_name="{task}"'
    out = []
    for e in svc.entries(flt):
        payload = e.get("jsonPayload") or {}
        out.append(str(payload.get("message", e.get("textPayload", ""))))
    return out


def _versions(svc: LiveService, job_id: str, task: str = "master-replica-0") -> dict[str, str]:
    for line in _lines(svc, job_id, task):
        if line.startswith("VERSIONS "):
            return dict(json.loads(line[len("VERSIONS ") :]))
    raise AssertionError(f"no VERSIONS line in {job_id}'s log")


def _environment(svc: LiveService, job_id: str) -> tuple[int, dict[str, Any]]:
    return svc.request("GET", f"/v1/projects/{PROJECT}/jobs/{job_id}:environment")


def _package_entry(svc: LiveService, pkg: Path) -> dict[str, str]:
    """What ``trainerPackages`` says of ``pkg`` staged with ``svc.stage``."""
    data = pkg.read_bytes()
    return {
        "uri": svc.stage(pkg),
        "name": pkg.name,
        "sha256": hashlib.sha256(data).hexdigest(),
        "sizeBytes": str(len(data)),
    }


@needs_37
def test_exact_runtime_on_python37_is_built_once_and_layered(
    with_37: LiveService, tmp_path: Path
) -> None:
    client = with_37.client()
    # The trainer asks for scikit-learn, which the runtime has: it must not be installed again.
    first_pkg = trainer_sdist(tmp_path, "rtcheck", ["scikit-learn"], salt="a")
    first = unique_id("rt_exact")
    mods = ("tensorflow", "sklearn", "xgboost", "pandas")
    client.create(
        _job(
            first,
            with_37.stage(first_pkg),
            "rtcheck.task",
            *mods,
            runtimeVersion="2.11",
            pythonVersion="3.7",
        )
    )
    job = with_37.wait_state(first, timeout=170)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    assert _versions(with_37, first) == {
        "python": "3.7",
        "tensorflow": "2.11.0",
        "sklearn": "1.0.2",
        "xgboost": "1.6.1",
        "pandas": "1.3.5",
        # Runtime 2.1 and later name the chief "chief" in TF_CONFIG, not "master".
        "task_type": "chief",
        # The modular gs:// filesystem stays off (its reads abort the trainer).
        "modular_fs": None,
    }
    status, env = _environment(with_37, first)
    assert status == 200, env
    assert (
        env["exact"] is True and env["pythonVersion"] == "3.7" and env["runtimeVersion"] == "2.11"
    )
    assert env["packages"]["scikit-learn"] == "1.0.2"
    assert env["substitutions"] == []
    # Layering: the job's environment holds its own package, not the runtime's scikit-learn.
    (layer,) = [p for p in (with_37.state_dir / "packages").iterdir() if p.name.startswith("2.11")]
    site = layer / "lib" / "python3.7" / "site-packages"
    assert (site / "rtcheck").is_dir()
    assert not (site / "sklearn").exists()

    # A rebuilt sdist (new content hash), same runtime: the environment is reused, not rebuilt.
    second_pkg = trainer_sdist(tmp_path / "b", "rtcheck", ["scikit-learn"], salt="b")
    second = unique_id("rt_reuse")
    client.create(
        _job(
            second,
            with_37.stage(second_pkg),
            "rtcheck.task",
            "sklearn",
            runtimeVersion="2.11",
            pythonVersion="3.7",
        )
    )
    job = with_37.wait_state(second, timeout=120)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    service_log = _lines(with_37, second, "service")
    assert any("(built before)" in line for line in service_log), service_log
    envs = [p for p in (with_37.state_dir / "runtimes").iterdir() if not p.name.startswith(".")]
    assert len(envs) == 1, envs
    assert (with_37.state_dir / "pip-cache").is_dir()


@needs_37
def test_impossible_pin_fails_with_pips_reason_last(with_37: LiveService, tmp_path: Path) -> None:
    pkg = trainer_sdist(tmp_path, "pinned", ["pandas==1.4.1"])
    jid = unique_id("rt_pin")
    with_37.client().create(
        _job(jid, with_37.stage(pkg), "pinned.task", runtimeVersion="1.15", pythonVersion="3.7")
    )
    job = with_37.wait_state(jid, timeout=170)
    assert job["state"] == "FAILED"
    message = job["errorMessage"]
    assert "runtime 1.15" in message and "install_requires" not in message.splitlines()[-1]
    last = message.splitlines()[-1]
    assert last.startswith("ERROR:") and "pandas" in last, message
    assert "Traceback" not in message
    assert "startTime" not in job


@needs_37
def test_missing_module_says_what_to_do(with_37: LiveService, tmp_path: Path) -> None:
    pkg = trainer_sdist(tmp_path, "needslgbm", [])
    jid = unique_id("rt_missing")
    with_37.client().create(
        _job(
            jid,
            with_37.stage(pkg),
            "needslgbm.task",
            "lightgbm",
            runtimeVersion="2.11",
            pythonVersion="3.7",
        )
    )
    job = with_37.wait_state(jid, timeout=170)
    assert job["state"] == "FAILED"
    assert "No module named 'lightgbm'" in job["errorMessage"]
    assert "add the package that provides it to install_requires" in job["errorMessage"]
    assert "runtime 2.11 does not include it" in job["errorMessage"]


def test_fallback_lists_substitutions(without_37: LiveService, tmp_path: Path) -> None:
    pkg = trainer_sdist(tmp_path, "rtfall", [])
    jid = unique_id("rt_fallback")
    without_37.client().create(
        _job(
            jid,
            without_37.stage(pkg),
            "rtfall.task",
            "tensorflow",
            "sklearn",
            "pandas",
            runtimeVersion="2.11",
            pythonVersion="3.7",
        )
    )
    job = without_37.wait_state(jid, timeout=170)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    own = f"{sys.version_info[0]}.{sys.version_info[1]}"
    versions = _versions(without_37, jid)
    assert versions["python"] == own
    status, env = _environment(without_37, jid)
    assert status == 200 and env["exact"] is False and env["pythonVersion"] == own
    # With a runtimeVersion as without one: the bytes the job installed (issue 27).
    assert env["trainerPackages"] == [_package_entry(without_37, pkg)]
    if own == "3.11":  # the stand-in wheels cover the substitutions for Python 3.11
        assert versions["tensorflow"] == "2.12.0" and versions["sklearn"] == "1.1.3"
        assert any(
            s.startswith("scikit-learn 1.1.3 instead of 1.0.2") for s in env["substitutions"]
        )
    service_log = _lines(without_37, jid, "service")
    assert any("instead of" in line for line in service_log), service_log


def test_runtime_that_cannot_run_is_refused_at_create(
    without_37: LiveService, tmp_path: Path
) -> None:
    pkg = trainer_sdist(tmp_path, "refused", [])
    body = _job(
        unique_id("rt_refused"),
        without_37.stage(pkg),
        "refused.task",
        runtimeVersion="1.15",
        pythonVersion="3.7",
    )
    status, answer = without_37.post_job(body)
    assert status == 400, answer
    fields = {
        v["field"]: v["description"]
        for d in answer["error"].get("details", [])
        for v in d.get("fieldViolations", [])
    }
    assert "trainingInput.runtimeVersion" in fields
    assert "pyenv install 3.7" in fields["trainingInput.runtimeVersion"]
    assert "runtimeVersion 2.x" in fields["trainingInput.runtimeVersion"]


def test_environment_endpoint_without_runtime_and_unknown_job(
    without_37: LiveService, tmp_path: Path
) -> None:
    pkg = trainer_sdist(tmp_path, "plain", [])
    jid = unique_id("rt_none")
    without_37.client().create(_job(jid, without_37.stage(pkg), "plain.task"))
    assert without_37.wait_state(jid)["state"] == "SUCCEEDED"
    status, env = _environment(without_37, jid)
    assert status == 200 and env["runtimeVersion"] is None
    assert env["trainerPackages"] == [_package_entry(without_37, pkg)]
    assert env["interpreter"]
    assert any("No runtimeVersion" in line for line in _lines(without_37, jid, "service"))
    status, body = _environment(without_37, "no_such_job")
    assert status == 404, body
