"""Trainer packages: find them, install them once per content hash, never into our own env.

Two ways, by whether the job names a ``runtimeVersion``:

- With one, the packages go into a small virtual environment per (runtime environment, package
  content) under ``packages/``, which sees the runtime environment's site-packages through a
  ``.pth`` line (``install_layer``). pip, run in it, finds the runtime's frameworks already
  installed, so a trainer's ``install_requires`` that the runtime satisfies cost nothing, and
  what it does install comes from the state dir's one wheel cache. Replicas run that
  environment's ``bin/python``.
- Without one (as before runtimes existed), pip ``--target`` installs them into
  ``packages/<sha256>/``, put on the replicas' PYTHONPATH; replicas run on the service's Python.

Either way the service's environment is never touched, and a resubmitted job with the same
package starts without installing anything.

Each job installs its own copy of its packages (``fetch``), made in the one read that also
hashes them: the sha256 the ``:environment`` answer reports is of the bytes pip installed,
even when someone overwrites the object at the same URI while the job prepares. A layer keeps
those bytes (``.inputs``): a Ray node that does not see it builds its own from them.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import sys
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tui_app.local.environments import runtime_envs
from tui_app.local.environments.runtime_envs import Environment
from tui_app.local.paths import StateDir, UnsafePathError

_locks: dict[str, asyncio.Lock] = {}

JOB_PIP_INSTALL = (*runtime_envs.PIP_INSTALL, "--no-build-isolation", "--no-warn-script-location")
"""How a job's packages are installed, with or without a runtime: no build isolation, so an
sdist builds with the setuptools already there instead of downloading its own."""


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


@dataclass(frozen=True)
class FetchedPackage:
    """One ``packageUris`` entry as a job got it."""

    uri: str
    path: Path
    """The job's own copy, which pip installs (named as the package is: pip reads the name)."""
    sha256: str
    """Of the bytes copied, hex."""
    size: int

    def as_json(self) -> dict[str, str]:
        """An entry of ``trainerPackages`` in the ``:environment`` answer (``sizeBytes`` is an
        int64, so a string on the wire)."""
        return {
            "uri": self.uri,
            "name": self.path.name,
            "sha256": self.sha256,
            "sizeBytes": str(self.size),
        }


@dataclass(frozen=True)
class JobPackages:
    """A job's packages, fetched: its copies in ``packageUris`` order, and their cache key."""

    packages: tuple[FetchedPackage, ...]
    key: str
    """A hash of the packages' names and bytes, in order: the install cache's key."""

    @property
    def files(self) -> list[Path]:
        return [p.path for p in self.packages]

    def as_json(self) -> list[dict[str, str]]:
        return [p.as_json() for p in self.packages]


def fetch(state: StateDir, uris: Sequence[str], into: Path) -> JobPackages:
    """Copy each package under ``into`` (one folder per entry: two URIs may end in the same
    name), hashing each and the cache key in the same read. Blocking: run it in a thread.

    Raises:
        PackageError: a package is missing (as ``resolve_all``) or cannot be read or copied.
    """
    files = resolve_all(state, list(uris))
    key = hashlib.sha256()
    fetched = []
    for i, (uri, source) in enumerate(zip(uris, files, strict=True)):
        copy = into / str(i) / source.name
        own = hashlib.sha256()
        size = 0
        key.update(source.name.encode() + b"\0")
        try:
            copy.parent.mkdir(parents=True, exist_ok=True)
            with open(source, "rb") as src, open(copy, "wb") as dst:
                for block in iter(lambda: src.read(1 << 20), b""):
                    own.update(block)
                    key.update(block)
                    dst.write(block)
                    size += len(block)
        except OSError as exc:
            raise PackageError(
                f"The package {uri} cannot be read: {exc.strerror or exc}.",
                f"trainingInput.packageUris[{i}]",
            ) from None
        key.update(b"\0")
        fetched.append(FetchedPackage(uri, copy, own.hexdigest(), size))
    return JobPackages(tuple(fetched), key.hexdigest())


async def install(state: StateDir, fetched: JobPackages, log: Callable[[str], None]) -> Path:
    """Install the job's packages (sdists/wheels) into the cache and return the folder for
    PYTHONPATH.

    Raises:
        PackageError: pip failed; the message carries its last lines.
    """
    key, files = fetched.key, fetched.files
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
        env = runtime_envs.pip_env(state.root)
        argv = [sys.executable, *JOB_PIP_INSTALL, "--target", str(tmp), *(str(f) for f in files)]
        try:
            rc, tail = await runtime_envs.run_logged(argv, env, log)
        except asyncio.CancelledError:
            shutil.rmtree(tmp, ignore_errors=True)  # run_logged killed pip's whole group
            raise
        if rc != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise PackageError(
                "Installing the trainer package failed (pip exited with status "
                f"{rc}):\n" + runtime_envs.last_lines(tail)
            )
        (tmp / ".installed").write_text(",".join(f.name for f in files))
        try:
            os.rename(tmp, target)
        except OSError:  # another service process won the race: use its copy
            shutil.rmtree(tmp, ignore_errors=True)
        return target


LAYER_MARKER = ".installed"
LAYER_INPUTS = ".inputs"
RUNTIME_PTH = "_tui_app_runtime.pth"


def is_environment(path: Path | None) -> bool:
    """Whether ``path`` (what ``install_layer`` returned) is a virtual environment to run."""
    return path is not None and (path / "pyvenv.cfg").is_file()


def interpreter(path: Path | None) -> str:
    """The Python a job's replicas run: its layer's, or the service's own."""
    return (
        str(path / "bin" / "python")
        if path is not None and is_environment(path)
        else (sys.executable)
    )


def runtime_variables(path: Path | None) -> dict[str, str]:
    """Environment variables the runtime under a job's layer sets (``TF_USE_LEGACY_KERAS``)."""
    if path is None or not is_environment(path):
        return {}
    runtime = runtime_envs.of_layer(path)
    return dict(runtime.env) if runtime is not None else {}


async def install_layer(
    state: StateDir, runtime: Environment, fetched: JobPackages, log: Callable[[str], None]
) -> Path:
    """The job's packages on top of ``runtime``: the folder of a virtual environment to run.

    Raises:
        PackageError: pip failed; the message says what to do and ends with pip's last line
            (a resolution error names the pin that cannot install on this runtime).
    """
    key = hashlib.sha256((runtime.root.name + "\0" + fetched.key).encode()).hexdigest()
    target = state.package_cache / f"{runtime.root.name}-{key[:16]}"
    return await ensure_layer(state.root, runtime, fetched.files, target, log)


async def ensure_layer(
    state_root: Path,
    runtime: Environment,
    files: list[Path],
    target: Path,
    log: Callable[[str], None],
    pip_settings: Mapping[str, str] | None = None,
) -> Path:
    """``target``: a layer of ``files`` on ``runtime``, built unless it is there already (also
    how a Ray node builds the layer the service named, ``execution/ray_node_env``)."""
    if (target / LAYER_MARKER).exists():
        log(f"Using cached packages {target.name} on runtime environment {runtime.root.name}.")
        return target
    lock = _locks.setdefault(target.name, asyncio.Lock())
    async with lock:
        if (target / LAYER_MARKER).exists():
            return target
        try:
            env = runtime_envs.pip_env(state_root, pip_settings)
            await _build_layer(runtime, files, target, env, log)
        except BaseException:
            shutil.rmtree(target, ignore_errors=True)
            raise
        return target


def input_files(folder: Path) -> list[Path]:
    """The files in ``folder/<i>/<name>`` (a layer's ``.inputs``), in ``packageUris`` order.

    A layer keeps the files it was installed from, so a Ray node that does not see it can
    build its own from the same bytes (``execution/ray_node_env``)."""
    try:
        slots = [p for p in folder.iterdir() if p.name.isdigit() and p.is_dir()]
    except OSError:
        return []
    slots.sort(key=lambda p: int(p.name))
    return [f for slot in slots for f in sorted(slot.iterdir()) if f.is_file()]


async def _build_layer(
    runtime: Environment,
    files: list[Path],
    target: Path,
    env: dict[str, str],
    log: Callable[[str], None],
) -> None:
    """Build the layer afresh under ``ensure_layer``'s lock. ``env`` is what pip runs in
    (``runtime_envs.pip_env``): the build needs only that, not the state dir and settings
    it was made from."""
    shutil.rmtree(target, ignore_errors=True)  # half built by a service that died
    rc, tail = await runtime_envs.run_logged(
        [runtime.interpreter, "-m", "venv", "--without-pip", str(target)], env, log
    )
    if rc != 0:
        raise PackageError(
            f"Creating the job's environment failed (status {rc}):\n"
            + runtime_envs.last_lines(tail)
        )
    site = target / "lib" / f"python{runtime.python}" / "site-packages"
    # A .pth line puts the runtime's site-packages after the job's own: pip (which lives
    # there) sees the runtime's frameworks as installed, and the job's versions win a clash.
    (site / RUNTIME_PTH).write_text(str(runtime.site_packages()) + "\n")
    (target / "runtime-root").write_text(str(runtime.root))
    (target / LAYER_INPUTS).mkdir()
    for i, f in enumerate(files):  # one folder per entry: two may have the same name
        (target / LAYER_INPUTS / str(i)).mkdir()
        shutil.copyfile(f, target / LAYER_INPUTS / str(i) / f.name)
    if files:
        log(f"Installing {', '.join(f.name for f in files)} on runtime {runtime.runtime}.")
        wheels = await _pure_wheels(files, target / ".wheels", env, log)
        rc, tail = await runtime_envs.run_logged(
            [str(target / "bin" / "python"), *JOB_PIP_INSTALL, *(str(f) for f in wheels)],
            env,
            log,
        )
        shutil.rmtree(target / ".wheels", ignore_errors=True)
        if rc != 0:
            raise PackageError(
                f"Installing the trainer package on runtime {runtime.runtime} (Python "
                f"{runtime.python}) failed (pip exited with status {rc}). A requirement of "
                "setup.py that cannot install here needs a looser pin there, or a "
                "runtimeVersion whose Python it supports. pip said:\n"
                + runtime_envs.last_lines(tail)
            )
    (target / LAYER_MARKER).write_text(",".join(f.name for f in files))


PURE_TAGS = ("-py3-none-any.whl", "-py2.py3-none-any.whl")
PIP_WHEEL = (sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q")


async def _pure_wheels(
    files: list[Path], out: Path, env: dict[str, str], log: Callable[[str], None]
) -> list[Path]:
    """The job's sdists built into wheels by the service's own setuptools, where that gives a
    pure-Python wheel (what a runtime's Python installs as is); the others left as they are.

    A runtime environment's own build tools may be too old to build an sdist at all without
    downloading more (pip 23.1 and later no longer run ``setup.py install`` when the
    ``wheel`` package is missing, and Python 3.11's venv has no ``wheel``); a pure wheel is the
    same on every Python 3. An sdist with compiled parts is still built by the runtime's pip.
    """
    picked: list[Path] = []
    for f in files:
        if f.name.endswith(".whl"):
            picked.append(f)
            continue
        dest = out / f.name
        rc, _ = await runtime_envs.run_logged(
            [*PIP_WHEEL, "-w", str(dest), str(f)],
            env,
            log,
        )
        built = sorted(dest.glob("*.whl")) if rc == 0 else []
        pure = [w for w in built if w.name.endswith(PURE_TAGS)]
        picked.append(pure[0] if len(built) == 1 and pure else f)
    return picked
