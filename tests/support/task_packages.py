"""A trainer package a test writes itself: one module, ``<name>.task``, built into an sdist the
way gcloud's ``--package-path`` builds one (``tui_app.shell.package_build.build_sdist``).

For the tests whose replicas must do something the sample trainer does not (print hostile bytes,
burn a core, write files of their own); the job runs it with
``basic_job(job_id, uri, pythonModule="<name>.task")``.
"""

from __future__ import annotations

from pathlib import Path

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
