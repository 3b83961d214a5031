"""Trainer packages: find them, install them once per content hash, never into our own env.

A job's packages are installed with pip ``--target`` into ``packages/<sha256>/`` under the state
dir and put on the replicas' PYTHONPATH, so the service's environment is never touched and a
resubmitted job with the same package starts without installing anything.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import shutil
import signal
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

from tui_app.local.paths import StateDir, UnsafePathError

_locks: dict[str, asyncio.Lock] = {}


class PackageError(Exception):
    """A package cannot be found or installed; the message says which and why."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def resolve_uri(state: StateDir, uri: str) -> Path:
    """The local file behind a packageUris entry (gs://, file:// or an absolute path)."""
    if uri.startswith("gs://"):
        return state.gcs_path(uri)
    if uri.startswith("file://"):
        return Path(uri[7:])
    return Path(uri)


def resolve_all(state: StateDir, uris: list[str]) -> list[Path]:
    """Every package file, or PackageError naming the first one that is missing.

    Raises:
        PackageError: with ``field`` set to ``trainingInput.packageUris[i]``.
    """
    files = []
    for i, uri in enumerate(uris):
        field = f"trainingInput.packageUris[{i}]"
        try:
            path = resolve_uri(state, uri)
        except UnsafePathError as exc:
            raise PackageError(f"{uri} is not a usable location: {exc}.", field) from None
        if not path.is_file():
            where = (
                f" (gs:// objects live under {state.gcs_root})" if uri.startswith("gs://") else ""
            )
            raise PackageError(f"The package {uri} does not exist{where}.", field)
        files.append(path)
    return files


def content_key(files: list[Path]) -> str:
    """A hash of the packages' names and bytes: the cache key."""
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode() + b"\0")
        with open(f, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        h.update(b"\0")
    return h.hexdigest()


async def install(state: StateDir, files: list[Path], log: Callable[[str], None]) -> Path:
    """Install ``files`` (sdists/wheels) into the cache and return the folder for PYTHONPATH.

    Raises:
        PackageError: pip failed; the message carries its last lines.
    """
    key = content_key(files)
    target = state.package_cache / key
    marker = target / ".installed"
    if marker.exists():
        log(f"Using cached packages {key[:12]}.")
        return target
    lock = _locks.setdefault(key, asyncio.Lock())
    async with lock:
        if marker.exists():
            return target
        tmp = state.package_cache / f".{key}.{uuid.uuid4().hex[:8]}"
        log(f"Installing {', '.join(f.name for f in files)}.")
        env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PYTHONWARNINGS": "ignore"}
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-input",
            "--no-build-isolation",
            "--no-warn-script-location",
            "--no-cache-dir",
            "--target",
            str(tmp),
            *(str(f) for f in files),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        assert proc.stdout is not None
        tail: list[str] = []
        try:
            async for raw in proc.stdout:
                line = raw.decode("utf-8", "replace").rstrip()
                if line:
                    tail = [*tail[-19:], line]
                    log(line)
            rc = await proc.wait()
        except asyncio.CancelledError:
            # pip runs in its own session: kill the whole group, or its build backend (a
            # setup.py subprocess) outlives the cancelled job.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        if rc != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise PackageError(
                "Installing the trainer package failed (pip exited with status "
                f"{rc}):\n" + "\n".join(tail[-10:])
            )
        (tmp / ".installed").write_text(",".join(f.name for f in files))
        try:
            os.rename(tmp, target)
        except OSError:  # another service process won the race: use its copy
            shutil.rmtree(tmp, ignore_errors=True)
        return target
