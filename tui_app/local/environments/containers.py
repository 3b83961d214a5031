"""Custom containers on this machine: finding an engine (podman or docker) and talking to it.

A container job runs each replica as a container of its role's image, started by the replica's
supervisor (``supervisor.py``) exactly as it starts a process: ``podman run`` stays in the
foreground, so its stdout and stderr are the container's and its exit status is the
container's. Everything here goes through the engine's command line, never its socket: both
engines take the same commands for what this needs (run, stop, inspect, rm, pull, ps, stats),
the command line works the same for rootless podman, rootful podman and docker, and a user's
``--container-engine "podman --runtime runc"`` is just a longer prefix.

What is checked, because a job's fields reach the engine's command line: an image reference
must look like one (no option, no space, no control character) before it is ever an argument,
and every other job field reaches the container as an environment value or an argument after
the image, where the engine no longer reads options.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

ENGINE_ENV = "TUI_APP_CONTAINER_ENGINE"
"""The engine command (``podman``, ``docker``, ``podman --runtime runc``) when no flag names one:
how the TUI passes its ``container_engine`` setting to the service it starts."""

RUN_ARGS_ENV = "TUI_APP_CONTAINER_RUN_ARGS"
"""Extra ``run`` options for every replica container (``--security-opt label=disable``)."""

KNOWN_ENGINES = ("podman", "docker")
PROBE_TIMEOUT_SECONDS = 20.0
COMMAND_TIMEOUT_SECONDS = 60.0

INSTALL_HINT = (
    "Install podman (Debian and Ubuntu: `sudo apt install podman`) or docker, or name an engine "
    "with `tui-app service start --container-engine CMD` (settings: `container_engine:`)."
)

LABEL_SERVICE = "tui-app.service"
LABEL_JOB = "tui-app.job"
LABEL_TASK = "tui-app.task"

HYPERTUNE_DIR = "/tmp/hypertune"
"""Where cloudml-hypertune writes by default; the replica's own hypertune folder is mounted here,
so the service reads a container trial's reports where it reads a process trial's."""

_IMAGE_RE = re.compile(
    r"[A-Za-z0-9][A-Za-z0-9._-]*(?::[0-9]+)?(?:/[A-Za-z0-9._-]+)*(?::[A-Za-z0-9_][A-Za-z0-9._-]{0,127})?"
    r"(?:@[A-Za-z0-9]+:[A-Fa-f0-9]{32,})?",
    re.ASCII,
)
MAX_IMAGE_CHARS = 512


class ContainerError(Exception):
    """The engine refused or failed; the message is the engine's reason, in words."""


def image_problem(image: str) -> str | None:
    """Why ``image`` is not an image reference (None when it is one): it becomes an argument of
    the engine's command line, so an option or a space must never get through."""
    if not image:
        return "An image reference is empty."
    if len(image) > MAX_IMAGE_CHARS:
        return f"An image reference has at most {MAX_IMAGE_CHARS} characters."
    if not _IMAGE_RE.fullmatch(image):
        return (
            f"{image[:80]!r} is not an image reference: expected "
            "[REGISTRY[:PORT]/]NAME[:TAG][@sha256:DIGEST], e.g. gcr.io/my-project/trainer:v1 "
            "or localhost/trainer:latest."
        )
    return None


# -- the engine ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Engine:
    """A working container engine: its command prefix and what it says it is."""

    argv: tuple[str, ...]
    """The program (a resolved path) and its global options, e.g. ``("/usr/bin/podman",)``."""
    kind: str
    """``podman`` or ``docker`` (anything else that takes docker's commands counts as docker)."""
    version: str
    run_args: tuple[str, ...] = ()
    """Extra ``run`` options from the user, after ours (so theirs win)."""

    @property
    def label(self) -> str:
        """``podman 4.3.1``, ``podman 4.3.1 (--runtime runc)``."""
        extra = " ".join(self.argv[1:] + self.run_args)
        return f"{self.kind} {self.version}" + (f" ({extra})" if extra else "")

    def command(self, *args: str) -> list[str]:
        return [*self.argv, *args]

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.kind,
            "version": self.version,
            "command": shlex.join(self.argv),
            "runArgs": list(self.run_args),
        }


@dataclass(frozen=True)
class EngineStatus:
    """What ``find_engine`` found: an engine, or why there is none (in words, with the fix)."""

    engine: Engine | None
    problem: str = ""

    def as_json(self) -> dict[str, Any]:
        if self.engine is not None:
            return self.engine.as_json()
        return {"problem": self.problem}


def _kind_of(program: str) -> str:
    name = Path(program).name
    return "podman" if "podman" in name else "docker"


def _run_captured(cmd: Sequence[str], timeout: float) -> subprocess.CompletedProcess[str]:
    """An engine command run to its end, its output captured as text, with no stdin: how
    ``_probe`` and ``run_sync`` run one, each reading a failure its own way.

    Raises:
        subprocess.TimeoutExpired: it ran past ``timeout`` seconds.
        OSError: it could not be started.
    """
    return subprocess.run(
        list(cmd),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def _probe(argv: Sequence[str], kind: str) -> tuple[str | None, str]:
    """(version, "") when the engine answers, else (None, why).

    podman is asked for its version, not its ``info``: ``info`` queries the system's package
    manager for each of its helpers (ten ``dpkg-query`` runs on Debian, 0.5 s of CPU against
    0.05 s), and it runs at every service start. A podman-remote with no server behind it fails
    ``version`` as docker's client without its daemon does; a local podman whose storage is
    broken answers here and says so at the first container's start, in the job's errorMessage.
    """
    probe = (
        [*argv, "version", "--format", "{{.Client.Version}}"]
        if kind == "podman"
        else [*argv, "version", "--format", "{{.Server.Version}}"]
    )
    try:
        done = _run_captured(probe, PROBE_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        return None, f"`{shlex.join(probe)}` did not answer in {PROBE_TIMEOUT_SECONDS:g} s"
    except OSError as exc:
        return None, f"`{argv[0]}` cannot be run: {exc.strerror or exc}"
    version = done.stdout.strip()
    if done.returncode != 0 or not version:
        why = _last_line(done.stderr) or f"exit status {done.returncode}"
        return None, f"`{shlex.join(probe)}` failed: {why}"
    return version.splitlines()[0], ""


def find_engine(named: str | None = None, run_args: Sequence[str] = ()) -> EngineStatus:
    """The engine to run containers with: the one ``named`` (a command with global options,
    e.g. ``podman --runtime runc``), else podman or docker from PATH, whichever answers first.

    An engine counts only when it answers (docker's client without its daemon does not).
    Blocking: up to a few seconds per engine tried.
    """
    if named is not None and named.strip():
        try:
            argv = shlex.split(named)
        except ValueError as exc:
            return EngineStatus(None, f"The container engine {named!r} cannot be read: {exc}.")
        program = shutil.which(argv[0])
        # Both reasons end with INSTALL_HINT, as the PATH search's does: the 400 a container
        # job gets repeats this text, and it must say what to install (issue 30).
        if program is None:
            return EngineStatus(
                None,
                f"The container engine {argv[0]!r} (--container-engine, ${ENGINE_ENV} or the "
                "container_engine setting) is not on PATH. "
                f"{INSTALL_HINT}",
            )
        kind = _kind_of(program)
        version, why = _probe([program, *argv[1:]], kind)
        if version is None:
            return EngineStatus(
                None, f"The container engine does not answer: {_sentence(why)} {INSTALL_HINT}"
            )
        return EngineStatus(Engine((program, *argv[1:]), kind, version, tuple(run_args)))
    reasons: list[str] = []
    for name in KNOWN_ENGINES:
        program = shutil.which(name)
        if program is None:
            continue
        version, why = _probe([program], name)
        if version is not None:
            return EngineStatus(Engine((program,), name, version, tuple(run_args)))
        reasons.append(why)
    found = f" ({'; '.join(reasons)})" if reasons else ""
    return EngineStatus(None, f"No container engine answers on this machine{found}. {INSTALL_HINT}")


def engine_from_env(
    named: str | None, run_args: str | None, env: Mapping[str, str] | None = None
) -> tuple[str | None, tuple[str, ...]]:
    """The engine command and run options from flags, else from the environment."""
    env = os.environ if env is None else env
    command = named if named is not None else (env.get(ENGINE_ENV) or None)
    extra = run_args if run_args is not None else env.get(RUN_ARGS_ENV, "")
    return command, tuple(shlex.split(extra or ""))


# -- names ----------------------------------------------------------------------------------------


def service_key(state_root: Path) -> str:
    """Eight hex digits naming one service (its state dir): containers carry it as a label and in
    their names, so two services on one machine never take each other's containers."""
    return hashlib.sha256(str(state_root.resolve()).encode()).hexdigest()[:8]


def container_name(key: str, job_id: str, trial: str | None, task_name: str) -> str:
    """``tui-app-mnist_20261122_083000-master-replica-0-1a2b3c4d`` (``-t3-`` for trial 3):
    the job and replica are readable in ``podman ps``; the key keeps it unique per service."""
    middle = f"{job_id}-t{trial}-{task_name}" if trial is not None else f"{job_id}-{task_name}"
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", f"tui-app-{middle}-{key}")
    return name[:250]


# -- run --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mount:
    source: str
    target: str
    read_only: bool = False

    def option(self) -> str:
        return f"{self.source}:{self.target}" + (":ro" if self.read_only else "")


def gpu_options(engine: Engine, devices: Sequence[str]) -> list[str]:
    """How each engine is given GPUs: docker's ``--gpus device=0,1`` (the NVIDIA container
    toolkit), podman's CDI device names ``nvidia.com/gpu=0`` (``nvidia-ctk cdi generate``)."""
    if not devices:
        return []
    if engine.kind == "podman":
        return [arg for d in devices for arg in ("--device", f"nvidia.com/gpu={d}")]
    return ["--gpus", f'"device={",".join(devices)}"']


def run_command(
    engine: Engine,
    *,
    name: str,
    image: str,
    env_names: Iterable[str],
    labels: Mapping[str, str],
    mounts: Iterable[Mount] = (),
    gpus: Sequence[str] = (),
    memory_bytes: int | None = None,
    entrypoint: str | None = None,
    args: Sequence[str] = (),
) -> list[str]:
    """The ``run`` command of one replica.

    ``--network host``: as on the platform's VMs, the replica's ports in TF_CONFIG are the
    machine's, and the service's storage API and metadata server are on 127.0.0.1. Environment
    values are passed by name (``--env NAME``: the engine copies them from its own environment),
    so a replica's storage credential never shows in ``ps``. ``--pull never``: images are pulled
    while the job is PREPARING (``ImagePuller``), never silently by ``run``. ``--init``: a small
    init (podman's catatonit, docker's tini) is PID 1 and passes signals on; a trainer that is
    PID 1 itself never gets a SIGTERM it did not handle (the kernel drops it), so every cancel
    would wait out the grace period and end in SIGKILL.
    """
    cmd = engine.command("run", "--name", name, "--network", "host", "--pull", "never", "--init")
    for key, value in labels.items():
        cmd += ["--label", f"{key}={value}"]
    for env_name in env_names:
        cmd += ["--env", env_name]
    for mount in mounts:
        cmd += ["--volume", mount.option()]
    if memory_bytes:
        cmd += ["--memory", f"{memory_bytes // (1024 * 1024)}m"]
    cmd += gpu_options(engine, gpus)
    cmd += list(engine.run_args)
    if entrypoint is not None:
        cmd += ["--entrypoint", entrypoint]
    return [*cmd, image, *args]


# -- images -------------------------------------------------------------------------------------


class ImagePuller:
    """Pulls each image once, however many replicas and jobs want it at the same time."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._locks: dict[str, asyncio.Lock] = {}

    async def present(self, image: str) -> bool:
        code, _ = await _run(self.engine.command("image", "inspect", "--format", "{{.Id}}", image))
        return code == 0

    async def ensure(self, image: str, log: Callable[[str, str], None]) -> None:
        """The image is in the engine's store afterwards, pulled now if it was not.

        Raises:
            ContainerError: the pull failed; the message has the engine's own reason.
        """
        import asyncio  # here, not at the top: see ``_run``

        lock = self._locks.setdefault(image, asyncio.Lock())
        async with lock:
            if await self.present(image):
                return
            log(f"Pulling image {image} with {self.engine.kind}.", "INFO")
            proc = await asyncio.create_subprocess_exec(
                *self.engine.command("pull", image),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
            )
            assert proc.stdout is not None
            lines: list[str] = []
            async for raw in proc.stdout:
                line = raw.decode("utf-8", "replace").strip()
                if line:
                    lines.append(line)
                    # The engine's retries and errors are warnings; its progress is not.
                    lowered = line.lower()
                    warned = "error" in lowered or "level=warning" in lowered
                    log(line, "WARNING" if warned else "INFO")
            code = await proc.wait()
            if code != 0:
                reason = next(
                    (ln for ln in reversed(lines) if "error" in ln.lower()),
                    lines[-1] if lines else f"exit status {code}",
                )
                raise ContainerError(f"Pulling the image {image} failed: {reason}")
            log(f"Pulled image {image}.", "INFO")


# -- inspect, stop, remove, list, stats ------------------------------------------------------


async def _run(cmd: Sequence[str], timeout: float = COMMAND_TIMEOUT_SECONDS) -> tuple[int, str]:
    """(exit status, stdout) of an engine command; stderr goes with stdout on failure."""
    # asyncio is imported where it is used: the CLI's commands import this module for its
    # names (through the service's argument parser) and never run a coroutine.
    import asyncio

    proc = await asyncio.create_subprocess_exec(
        *cmd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return 124, ""
    text = out.decode("utf-8", "replace")
    if proc.returncode:
        text += err.decode("utf-8", "replace")
    return proc.returncode or 0, text


def run_sync(cmd: Sequence[str], timeout: float = COMMAND_TIMEOUT_SECONDS) -> tuple[int, str]:
    """``_run`` for threads and the supervisor, which have no event loop."""
    try:
        done = _run_captured(cmd, timeout)
    except subprocess.TimeoutExpired:
        return 124, ""
    except OSError as exc:
        return 127, str(exc)
    return done.returncode, done.stdout + (done.stderr if done.returncode else "")


def ours(engine: Engine, key: str) -> dict[str, bool]:
    """Every container of this service (running or not): name -> running (blocking)."""
    code, out = run_sync(
        engine.command(
            "ps",
            "-a",
            "--filter",
            f"label={LABEL_SERVICE}={key}",
            "--format",
            "{{.Names}} {{.State}}",
        )
    )
    if code != 0:
        return {}
    found: dict[str, bool] = {}
    for line in out.splitlines():
        name, _, state = line.strip().partition(" ")
        if name:
            found[name] = state.strip().lower().startswith(("running", "up"))
    return found


def host_pid(engine: Engine, name: str) -> int | None:
    """The host's pid of a running container's first process (its init with ``--init``), or
    None when it is not running (blocking). py-spy on the host reads the container's Python
    by that pid: the container is the replica's boundary, not the host's."""
    code, out = run_sync(engine.command("inspect", "--format", "{{.State.Pid}}", name))
    text = out.strip()
    if code != 0 or not text.isdigit() or int(text) <= 0:
        return None
    return int(text)


def remove(engine: Engine, names: Iterable[str]) -> None:
    """Force-remove containers (blocking); a name already gone is no error."""
    names = list(names)
    if names:
        # podman's `rm -f` first stops a running container with its stop timeout (10 s by
        # default, all of it for a PID 1 that ignores SIGTERM), and a restart removes orphans
        # before the service listens: kill at once, as docker's `rm -f` does.
        now = ["-t", "0"] if engine.kind == "podman" else []
        run_sync(engine.command("rm", "-f", *now, *names))


_SIZE_RE = re.compile(r"([0-9.]+)\s*([KMGTP]?i?B|B)?", re.IGNORECASE)
_UNITS = {"": 1, "B": 1, "K": 1000, "M": 1000**2, "G": 1000**3, "T": 1000**4, "P": 1000**5}


def parse_size(text: str) -> int:
    """``516.1kB``, ``1.5GiB``, ``12MB`` -> bytes; 0 when it cannot be read."""
    m = _SIZE_RE.match(text.strip())
    if not m:
        return 0
    unit = (m.group(2) or "B").upper()
    base = 1024 if "I" in unit else 1000
    power = "BKMGTP".index(unit[0]) if unit[0] in "KMGTP" else 0
    try:
        return int(float(m.group(1)) * base**power)
    except ValueError:
        return 0


def stats(engine: Engine, names: Sequence[str]) -> dict[str, tuple[float, int]]:
    """(CPU percent, memory bytes) per running container, from the engine's own stats
    (blocking; docker takes about a second to answer). Containers that are gone are left out."""
    if not names:
        return {}
    fmt = "{{json .}}" if engine.kind == "docker" else "json"
    code, out = run_sync(engine.command("stats", "--no-stream", "--format", fmt, *names))
    if code != 0 and not out.strip().startswith(("[", "{")):
        # One name that is gone fails the whole call: ask for each on its own.
        if len(names) == 1:
            return {}
        merged: dict[str, tuple[float, int]] = {}
        for name in names:
            merged.update(stats(engine, [name]))
        return merged
    return parse_stats(out)


def parse_stats(text: str) -> dict[str, tuple[float, int]]:
    """Podman's JSON array (``name``, ``cpu_percent``, ``mem_usage``) or docker's JSON lines
    (``Name``, ``CPUPerc``, ``MemUsage``)."""
    rows: list[dict[str, Any]] = []
    text = text.strip()
    try:
        data = json.loads(text) if text.startswith("[") else None
    except ValueError:
        data = None
    if isinstance(data, list):
        rows = [r for r in data if isinstance(r, dict)]
    else:
        for line in text.splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict):
                rows.append(row)
    out: dict[str, tuple[float, int]] = {}
    for row in rows:
        name = row.get("name") or row.get("Name")
        cpu = str(row.get("cpu_percent") or row.get("CPUPerc") or "0").rstrip("%")
        mem = str(row.get("mem_usage") or row.get("MemUsage") or "0").split("/")[0]
        if not isinstance(name, str):
            continue
        try:
            percent = float(cpu)
        except ValueError:
            percent = 0.0
        out[name.lstrip("/")] = (percent, parse_size(mem))
    return out


def _sentence(text: str) -> str:
    """``text`` ending in one full stop (an engine's message may end in ``?`` or ``.``)."""
    return text if text.endswith((".", "?", "!")) else text + "."


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else ""


RLIMIT_HINT = (
    "The container engine cannot set the containers' default resource limits on this host. "
    "Add `default_ulimits = []` under `[containers]` in /etc/containers/containers.conf "
    "(or ~/.config/containers/containers.conf), as README's Custom containers section says."
)


def engine_hint(stderr_tail: str) -> str:
    """A fix for an engine failure this project has met, else ''."""
    if "error setting rlimit" in stderr_tail:
        return RLIMIT_HINT
    if "crun" in stderr_tail and "cgroup" in stderr_tail:
        return (
            "crun cannot run containers on this host's cgroup layout: install runc and name it, "
            'e.g. `container_engine: "podman --runtime runc"` in settings.'
        )
    return ""
