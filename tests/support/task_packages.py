"""A trainer package a test writes itself: one module, ``<name>.task``, built into an sdist the
way gcloud's ``--package-path`` builds one (``tui_app.shell.package_build.build_sdist``).

For the tests whose replicas must do something the sample trainer does not (print hostile bytes,
burn a core, write files of their own); the job runs it with
``basic_job(job_id, uri, pythonModule="<name>.task")``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.live_service import LiveService, basic_job
from tui_app.shell.package_build import build_sdist


def task_package(dest: Path, name: str, task: str) -> Path:
    """The package ``name`` whose ``task.py`` is ``task``, as an sdist under ``dest``."""
    src = dest / name
    (src / name).mkdir(parents=True)
    (src / name / "__init__.py").write_text("")
    (src / name / "task.py").write_text(task)
    (src / "setup.py").write_text(
        f"from setuptools import setup\nsetup(name={name!r}, version='1.0', packages=[{name!r}])\n"
    )
    return build_sdist(src, dest / "dist")


def serve_ended_jobs(
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    project: str,
    task: str,
    jobs: dict[str, str],
    *flags: str,
) -> Iterator[tuple[LiveService, dict[str, str]]]:
    """A service of a module's own (started with ``flags``) whose jobs of the package ``name``
    (``task``) have all SUCCEEDED: one job per key of ``jobs``, given the value as its argument.
    Yields the service and the job id of each key; stops the service after the module
    (``yield from`` it)."""
    from tests.conftest import serve, unique_id

    for svc in serve(tmp_path_factory, f"svc-{name}", *flags):
        uri = svc.stage(task_package(tmp_path_factory.mktemp(name), name, task))
        client = svc.client(project)
        ids = {key: unique_id(f"{name}_{key}") for key in jobs}
        for key, arg in jobs.items():
            client.create(basic_job(ids[key], uri, arg, pythonModule=f"{name}.task"))
        for job_id in ids.values():
            assert svc.wait_state(job_id, timeout=90, project=project)["state"] == "SUCCEEDED"
        yield svc, ids
