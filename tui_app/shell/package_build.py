"""Local package folders as sdists, the way gcloud's ``--package-path`` builds them.

The builder submits a folder by building it here and, on the local service, naming the sdist's
absolute path in ``packageUris`` (the service installs packages from absolute paths too). Builds
are cached by the folder's content, so submitting the same trainer twice builds it once.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import platformdirs

from tui_app.config.locations import APP_NAME

_SKIPPED_DIRS = frozenset({"build", "dist", "__pycache__", ".git", ".venv", ".tox", ".eggs"})


class PackageBuildError(Exception):
    """A folder is not a package, or building it failed; the message says why."""


def build_sdist(src: Path, dest_dir: Path) -> Path:
    """``python setup.py sdist`` of a package folder, as gcloud's --package-path does.

    Built from a copy, so nothing (egg-info, dist) is written into ``src``.
    """
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / src.name
        shutil.copytree(src, copy, ignore=shutil.ignore_patterns("*.egg-info", "build", "dist"))
        out = Path(tmp) / "dist"
        subprocess.run(
            [sys.executable, "setup.py", "-q", "sdist", "-d", str(out)],
            cwd=copy,
            check=True,
            capture_output=True,
        )
        (sdist,) = out.glob("*.tar.gz")
        dest_dir.mkdir(parents=True, exist_ok=True)
        target = dest_dir / sdist.name
        shutil.copy(sdist, target)
        return target


def package_folder_error(folder: str) -> str | None:
    """Why ``folder`` cannot be built into an sdist here, or None when it can.

    The folder is the one holding ``setup.py`` (``examples/trainer``, with the ``trainer``
    package in it). gcloud's ``--package-path`` names the package itself and builds from its
    parent; ``model.gcloud_command.gcloud_package_path`` turns one into the other.
    """
    path = Path(folder).expanduser()
    if not path.is_dir():
        return f"{folder} is not a folder."
    if not (path / "setup.py").is_file():
        return f"{folder} has no setup.py; point at the folder that holds it."
    return None


def sdist_cache_dir() -> Path:
    """Where built sdists are kept: ``<user cache dir>/packages`` (``~/.cache/tui-app``)."""
    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False)) / "packages"


def folder_digest(folder: Path) -> str:
    """A hash of every file's relative path and bytes (build outputs and caches left out)."""
    h = hashlib.sha256()
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS and not d.endswith(".egg-info"))
        for name in sorted(files):
            if name.endswith((".pyc", ".pyo")):
                continue
            path = Path(root) / name
            h.update(str(path.relative_to(folder)).encode() + b"\0")
            h.update(path.read_bytes())
            h.update(b"\0")
    return h.hexdigest()


def cached_sdist(folder: str, cache_dir: Path | None = None) -> Path:
    """The sdist of ``folder``, built once per content and kept under the cache dir.

    Blocking (it runs setup.py): call it from a thread worker.

    Returns:
        The absolute path of the ``.tar.gz``.

    Raises:
        PackageBuildError: the folder is not a package, or setup.py failed (with its output).
    """
    why = package_folder_error(folder)
    if why:
        raise PackageBuildError(why)
    src = Path(folder).expanduser().resolve()
    try:
        key = folder_digest(src)[:16]
    except OSError as exc:
        raise PackageBuildError(f"Cannot read {folder}: {exc}") from None
    dest = (cache_dir or sdist_cache_dir()) / key
    built = sorted(dest.glob("*.tar.gz")) if dest.is_dir() else []
    if built:
        return built[0].resolve()
    try:
        return build_sdist(src, dest).resolve()
    except subprocess.CalledProcessError as exc:
        output = (exc.stderr or b"").decode("utf-8", "replace").strip().splitlines()[-8:]
        raise PackageBuildError(
            f"python setup.py sdist failed in {folder} (status {exc.returncode}):\n"
            + "\n".join(output)
        ) from None
    except (OSError, ValueError) as exc:
        raise PackageBuildError(f"Cannot build {folder}: {exc}") from None
