"""Runtime environments: a runtime's frameworks, installed once and shared by every job.

Each ``Plan`` (``model.jobs.runtimes``) becomes a virtual environment of its interpreter under
``<state>/runtimes/<plan key>``: built the first time a job needs it, then reused as is. Jobs
layer their own packages on top (``packages.install_layer``) without touching it.

- pip runs inside the new environment (its own pip, for its own Python) with one wheel cache for
  the whole state dir (``<state>/pip-cache``), so nothing is downloaded twice, whichever job or
  environment asked first. Only wheels are taken for the packages the plan names
  (``--only-binary=<names>``): building TensorFlow or pandas from source is never what a runtime
  meant. Their dependencies may come as sdists: TensorFlow 1.15 needs ``gast==0.2.2``, which
  was only ever published as one.
- One build per environment at a time: parallel jobs wait for the first one's build.
- A build that fails leaves nothing behind (the folder is only used once ``manifest.json`` is
  written, its last step), and the error carries pip's own last lines.
- The service's own environment is never touched: everything runs in the new one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tui_app.model.jobs.runtimes import Plan, python_of, requirement_names

MANIFEST = "manifest.json"
PIP_TAIL_LINES = 20

_locks: dict[str, asyncio.Lock] = {}


PIP_INSTALL = ("-m", "pip", "install", "--no-input")
"""pip install as the service runs it (after an interpreter): it has no terminal to ask on."""

QUOTED_TAIL_LINES = 10
"""How much of a failed build step's output its error message quotes: enough for pip's reason,
which comes last; every line is in the job's log already."""


class RuntimeEnvError(Exception):
    """The environment could not be built; the message ends with pip's reason."""


def last_lines(tail: list[str]) -> str:
    """The end of a failed command's output (``run_logged``'s tail), for its error message."""
    return "\n".join(tail[-QUOTED_TAIL_LINES:])


@dataclass
class Environment:
    """A built runtime environment, as its manifest records it."""

    root: Path
    runtime: str
    python: str
    interpreter: str
    variant: str
    exact: bool
    requirements: list[str]
    packages: dict[str, str]
    """Every installed distribution: name -> version."""
    notes: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)

    @property
    def python_bin(self) -> Path:
        return self.root / "bin" / "python"

    def site_packages(self) -> Path:
        """The environment's site-packages (``lib/pythonX.Y/site-packages``)."""
        return self.root / "lib" / f"python{self.python}" / "site-packages"

    def describe(self) -> dict[str, Any]:
        """The ``:environment`` answer's runtime part."""
        data = asdict(self)
        data["root"] = str(self.root)
        return data


def root(state_root: Path) -> Path:
    return state_root / "runtimes"


def of_layer(layer: Path) -> Environment | None:
    """The runtime environment a job's layer (``packages.install_layer``) sits on."""
    try:
        return load(Path((layer / "runtime-root").read_text().strip()))
    except OSError:
        return None


def wheel_cache(state_root: Path) -> Path:
    """pip's cache, shared by every runtime environment and every job's packages."""
    return state_root / "pip-cache"


def pip_env(state_root: Path, settings: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment pip runs in: the shared cache, quiet, and nothing of the service's
    virtual environment (pip must see only the environment it installs into). ``settings``:
    ``PIP_*`` variables that win over this process's (a Ray node builds with the service's
    index settings, ``execution/ray_node_env``)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PIP_TARGET", "PIP_PREFIX")
        and not k.startswith("TUI_APP_")
    }
    env.update(
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_CACHE_DIR=str(wheel_cache(state_root)),
        PYTHONWARNINGS="ignore",
    )
    env.pop("PIP_NO_CACHE_DIR", None)
    env.update({k: v for k, v in (settings or {}).items() if pip_setting(k)})
    return env


def pip_setting(name: str) -> bool:
    """Whether ``name`` is a pip setting a node may take from the service (``PIP_INDEX_URL``,
    ``PIP_FIND_LINKS``...), not one of those this module sets itself."""
    return name.startswith("PIP_") and name not in (
        "PIP_CACHE_DIR",
        "PIP_TARGET",
        "PIP_PREFIX",
        "PIP_NO_CACHE_DIR",
    )


async def run_logged(
    argv: list[str], env: dict[str, str], log: Callable[[str], None]
) -> tuple[int, list[str]]:
    """Run ``argv`` (pip, venv), each output line to ``log``; (exit status, last lines).

    It runs in its own session, and a cancelled job kills the whole group (a build backend
    pip started must not outlive the job).
    """
    proc = await asyncio.create_subprocess_exec(
        *argv,
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
                tail = [*tail[-(PIP_TAIL_LINES - 1) :], line]
                log(line)
        return await proc.wait(), tail
    except asyncio.CancelledError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()
        raise


def load(path: Path) -> Environment | None:
    """The environment at ``path`` when its build completed, else None."""
    try:
        data = json.loads((path / MANIFEST).read_text())
        data["root"] = path
        return Environment(**data)
    except (OSError, ValueError, TypeError):
        return None


async def installed(python: Path, env: dict[str, str]) -> dict[str, str]:
    """name -> version of every distribution ``python`` sees (pip's own listing, which works on
    every Python the runtimes use, 3.7 included)."""
    proc = await asyncio.create_subprocess_exec(
        str(python),
        "-m",
        "pip",
        "list",
        "--format=json",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=env,
    )
    out, _ = await proc.communicate()
    try:
        rows = json.loads(out or b"[]")
    except ValueError:
        return {}
    return {str(r["name"]).lower(): str(r["version"]) for r in rows if isinstance(r, dict)}


async def ensure(
    state_root: Path,
    plan: Plan,
    log: Callable[[str], None],
    pip_settings: Mapping[str, str] | None = None,
) -> Environment:
    """The environment for ``plan``: the one already built, or a new one (``pip_settings`` as
    ``pip_env`` takes them).

    Raises:
        RuntimeEnvError: venv or pip failed; the message ends with pip's last lines.
    """
    target = root(state_root) / plan.key
    ready = load(target)
    if ready is not None:
        log(f"Using runtime environment {plan.key} (built before).")
        return ready
    lock = _locks.setdefault(plan.key, asyncio.Lock())
    if lock.locked():
        log(f"Waiting for runtime environment {plan.key}: another job is building it.")
    async with lock:
        ready = load(target)
        if ready is not None:
            log(f"Using runtime environment {plan.key} (built for another job).")
            return ready
        try:
            return await _build(state_root, target, plan, log, pip_settings)
        except BaseException:
            shutil.rmtree(target, ignore_errors=True)
            raise


PIP_FOR_PYTHON: dict[tuple[int, int], str] = {
    (3, 5): "pip<21",
    (3, 6): "pip<22",
    (3, 7): "pip<24.1",
}
"""The newest pip each old Python can run. Their venvs come with pip 9-20 (Python 3.6.15's is
18.1), which picks a package's newest release even when that release requires a newer Python
(TensorFlow 1.9 needs ``wheel``: 18.1 chose wheel 0.45, "requires Python '>=3.9'", and the
install failed) wherever an index does not list Requires-Python; pip 20.3 and later check the
downloaded metadata and fall back to an older release. The bounds are explicit because that
same old pip could not be trusted to pick a pip it can run."""


def pip_upgrade(python: str) -> str | None:
    """The requirement that upgrades an old venv's pip, or None when its own pip is recent."""
    return PIP_FOR_PYTHON.get(python_of(python) or (0, 0))


async def _build(
    state_root: Path,
    target: Path,
    plan: Plan,
    log: Callable[[str], None],
    pip_settings: Mapping[str, str] | None = None,
) -> Environment:
    shutil.rmtree(target, ignore_errors=True)  # a half-built one from a crash
    target.parent.mkdir(parents=True, exist_ok=True)
    wheel_cache(state_root).mkdir(parents=True, exist_ok=True)
    env = pip_env(state_root, pip_settings)
    log(f"Building runtime environment {plan.key} on {plan.interpreter} (once; jobs share it).")
    rc, tail = await run_logged([plan.interpreter, "-m", "venv", str(target)], env, log)
    if rc != 0:
        raise RuntimeEnvError(
            f"Creating a virtual environment with {plan.interpreter} failed (status {rc}):\n"
            + last_lines(tail)
        )
    python = target / "bin" / "python"
    pin = pip_upgrade(plan.python)
    if pin is not None:
        log(f"Upgrading the environment's pip ({pin}).")
        rc, tail = await run_logged([str(python), *PIP_INSTALL, "--upgrade", pin], env, log)
        if rc != 0:
            raise RuntimeEnvError(
                f"Upgrading pip on Python {plan.python} failed (status {rc}):\n" + last_lines(tail)
            )
    argv = [
        str(python),
        *PIP_INSTALL,
        "--no-warn-script-location",
        f"--only-binary={','.join(requirement_names(plan.requirements))}",
        *plan.requirements,
        # Python 3.12's venv has no setuptools, which building a job's sdist needs.
        *(["setuptools"] if (python_of(plan.python) or (0, 0)) >= (3, 12) else []),
    ]
    log(f"Installing {' '.join(plan.requirements)}.")
    rc, tail = await run_logged(argv, env, log)
    if rc != 0:
        raise RuntimeEnvError(
            f"Installing runtime {plan.runtime}'s frameworks on Python {plan.python} failed "
            f"(pip exited with status {rc}):\n" + last_lines(tail)
        )
    built = Environment(
        target,
        plan.runtime,
        plan.python,
        plan.interpreter,
        plan.variant,
        plan.exact,
        list(plan.requirements),
        await installed(python, env),
        plan.notes(),
        dict(plan.env),
    )
    data = built.describe()
    data.pop("root")
    tmp = target / f".{MANIFEST}.tmp"
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
    os.replace(tmp, target / MANIFEST)  # the last step: from here on the env is used
    log(f"Runtime environment {plan.key} ready.")
    return built
