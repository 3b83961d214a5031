"""``tui-app service start|stop|status|run|env``: one service per state dir.

``run`` serves in the foreground; ``start`` runs it detached (its own session, so closing the
terminal or the TUI does not stop jobs) and returns once it answers. A lock file makes a second
service on the same state dir impossible, and ``service.json`` tells clients where it listens.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import secrets
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_app.config.executors import (
    DEFAULT_EXECUTOR,
    executor_entry,
    executor_help,
    executor_names,
    executor_options,
)
from tui_app.config.service_flags import engine_and_executor_flags
from tui_app.config.settings import DEFAULT_PROJECT
from tui_app.local.environments.containers import (
    ENGINE_ENV,
    RUN_ARGS_ENV,
    engine_from_env,
    find_engine,
)
from tui_app.local.execution.executor import Executor, ExecutorError, factory_for
from tui_app.local.execution.ray_warm_actors import DEFAULT_WARM_ACTORS, MAX_WARM_ACTORS
from tui_app.local.execution.replica_priority import DEFAULT_REPLICA_NICE, MAX_NICE
from tui_app.local.logs.log_limits import (
    DEFAULT_MAX_BYTES,
    DEFAULT_RETENTION_DAYS,
    DEFAULT_SCAN_SECONDS,
)
from tui_app.local.loopback import is_loopback
from tui_app.local.paths import StateDir, StateDirError
from tui_app.model.running.stalls import DEFAULT_STALL_SECONDS

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "DEFAULT_PROJECT", "ServiceError", "ServiceOptions"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8470
START_TIMEOUT_SECONDS = 30.0


class ServiceError(RuntimeError):
    """A service command cannot do what was asked; the message says why and what to do."""


@dataclass(frozen=True)
class ServiceInfo:
    """What ``service.json`` records about a running service."""

    pid: int
    url: str
    auth: bool
    state_dir: str

    @classmethod
    def read(cls, state: StateDir) -> ServiceInfo | None:
        try:
            data = json.loads(state.service_file.read_text())
            return cls(
                int(data["pid"]), str(data["url"]), bool(data["auth"]), str(data["state_dir"])
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None


def read_or_create_token(state: StateDir) -> str:
    """The bearer token, created 0600 on first use."""
    path = state.token_file
    try:
        token = path.read_text().strip()
        if token:
            return token
    except FileNotFoundError:
        pass
    token = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(token + "\n")
    os.chmod(path, 0o600)
    return token


def probe(url: str, timeout: float = 1.0) -> dict[str, Any] | None:
    """``/healthz`` of the service at ``url``, or None when nothing answers there."""
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/healthz", timeout=timeout) as resp:
            data = json.loads(resp.read())
            return data if isinstance(data, dict) else None
    except (OSError, ValueError, urllib.error.URLError):
        return None


def running(state: StateDir) -> ServiceInfo | None:
    """The service of this state dir if it is up and answering."""
    info = ServiceInfo.read(state)
    if info is None or not _pid_alive(info.pid):
        return None
    return info if probe(info.url) is not None else None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# -- run (foreground) ---------------------------------------------------------------------


@dataclass(frozen=True)
class ServiceOptions:
    """How to run a service: what ``service run`` and ``service start`` take."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    no_auth: bool = False
    grace_seconds: float = 5.0
    slots: int | None = None
    """CPU slots, one per replica (default: the machine's cores)."""
    gpus: int | None = None
    """GPUs to hand out (default: those nvidia-smi lists, or CUDA_VISIBLE_DEVICES names)."""
    max_wait_scale: float = 1.0
    """Multiplies every maxWaitTime, whose minimum of 1800s is too long for tests and demos."""
    pythons: tuple[str, ...] = ()
    """Interpreters for runtime environments, besides those found (``--python``)."""
    replica_nice: int = DEFAULT_REPLICA_NICE
    """How much lower than the service's each replica's CPU priority is (``replica_priority``)."""
    container_engine: str | None = None
    """The engine command for custom containers (``podman --runtime runc``); None: look on PATH."""
    container_run_args: tuple[str, ...] = ()
    """Extra ``run`` options for every replica container."""
    executor: str = DEFAULT_EXECUTOR
    """Where replicas run: ``local`` (processes here) or ``ray`` (``execution/ray_executor``),
    as ``config/executors.py`` registers them."""
    ray_address: str | None = None
    """The Ray cluster to join (``HOST:PORT``); None: the one ``ray start`` here joined. The Ray
    executor's option in ``config/executors.py``, so its flag is written from there."""
    ray_warm_actors: int = DEFAULT_WARM_ACTORS
    """Started Ray actors kept waiting on each node for the next replicas (``ray_warm_actors``)."""
    restart_backoff_scale: float = 1.0
    """Multiplies the restart rules' waits: between a crashing replica's restarts (1 s doubling
    to 30 s) and for a node with room after one died (600 s), too long for their tests."""
    stall_seconds: float = DEFAULT_STALL_SECONDS
    """How long a replica prints nothing and idles before its job counts as stalled."""
    log_retention_days: float = DEFAULT_RETENTION_DAYS
    """Log lines older than this are deleted (``log_retention``)."""
    log_max_gib: float = DEFAULT_MAX_BYTES / 2**30
    """The most the log store may hold; past it the oldest lines go first."""
    log_scan_seconds: float = DEFAULT_SCAN_SECONDS
    """How long one log page may read lines by scan before it answers with what it found."""

    @classmethod
    def from_args(
        cls, args: argparse.Namespace, env: dict[str, str] | None = None
    ) -> ServiceOptions:
        """The options of ``service run|start``; unset capacity flags fall back to
        ``$TUI_APP_SLOTS`` and ``$TUI_APP_GPUS`` (so the service the TUI starts can be sized)."""
        env = dict(os.environ) if env is None else env
        slots = args.slots if args.slots is not None else _env_count(env, SLOTS_ENV, minimum=1)
        gpus = args.gpus if args.gpus is not None else _env_count(env, GPUS_ENV, minimum=0)
        try:
            engine, run_args = engine_from_env(
                getattr(args, "container_engine", None),
                getattr(args, "container_run_args", None),
                env,
            )
        except ValueError as exc:
            raise ServiceError(f"The container run options cannot be read: {exc}.") from None
        return cls(
            args.host,
            args.port,
            args.no_auth,
            args.grace_seconds,
            slots,
            gpus,
            args.max_wait_scale,
            tuple(getattr(args, "python", None) or ()),
            _replica_nice(getattr(args, "replica_nice", None), env),
            engine,
            run_args,
            getattr(args, "executor", None) or DEFAULT_EXECUTOR,
            getattr(args, "ray_address", None),
            _warm_actors(getattr(args, "ray_warm_actors", None)),
            restart_backoff_scale=getattr(args, "restart_backoff_scale", None) or 1.0,
            stall_seconds=getattr(args, "stall_seconds", None) or DEFAULT_STALL_SECONDS,
            log_retention_days=getattr(args, "log_retention_days", None) or DEFAULT_RETENTION_DAYS,
            log_max_gib=getattr(args, "log_max_gib", None) or DEFAULT_MAX_BYTES / 2**30,
            log_scan_seconds=getattr(args, "log_scan_seconds", None) or DEFAULT_SCAN_SECONDS,
        )

    def argv(self) -> list[str]:
        args = ["--host", self.host, "--port", str(self.port)]
        args += ["--grace-seconds", str(self.grace_seconds)]
        if self.slots:
            args += ["--slots", str(self.slots)]
        if self.gpus is not None:
            args += ["--gpus", str(self.gpus)]
        if self.max_wait_scale != 1.0:
            args += ["--max-wait-scale", repr(self.max_wait_scale)]
        if self.restart_backoff_scale != 1.0:
            args += ["--restart-backoff-scale", repr(self.restart_backoff_scale)]
        if self.stall_seconds != DEFAULT_STALL_SECONDS:
            args += ["--stall-seconds", repr(self.stall_seconds)]
        if self.log_retention_days != DEFAULT_RETENTION_DAYS:
            args += ["--log-retention-days", repr(self.log_retention_days)]
        if self.log_max_gib != DEFAULT_MAX_BYTES / 2**30:
            args += ["--log-max-gib", repr(self.log_max_gib)]
        if self.log_scan_seconds != DEFAULT_SCAN_SECONDS:
            args += ["--log-scan-seconds", repr(self.log_scan_seconds)]
        for python in self.pythons:
            args += ["--python", python]
        if self.replica_nice != DEFAULT_REPLICA_NICE:
            args += ["--replica-nice", str(self.replica_nice)]
        args += engine_and_executor_flags(self)
        if self.ray_warm_actors != DEFAULT_WARM_ACTORS:
            args += ["--ray-warm-actors", str(self.ray_warm_actors)]
        if self.no_auth:
            args.append("--no-auth")
        return args


def _warm_actors(given: int | None) -> int:
    if given is None:
        return DEFAULT_WARM_ACTORS
    if not 0 <= given <= MAX_WARM_ACTORS:
        raise ServiceError(
            f"--ray-warm-actors must be 0 to {MAX_WARM_ACTORS} (actors per node), not {given}."
        )
    return given


SLOTS_ENV = "TUI_APP_SLOTS"
REPLICA_NICE_ENV = "TUI_APP_REPLICA_NICE"
GPUS_ENV = "TUI_APP_GPUS"


def _replica_nice(flag: int | None, env: dict[str, str]) -> int:
    """``--replica-nice``, else ``$TUI_APP_REPLICA_NICE`` (for the service the TUI starts), else
    the default."""
    if flag is not None:
        return flag
    text = env.get(REPLICA_NICE_ENV, "").strip()
    if not text:
        return DEFAULT_REPLICA_NICE
    try:
        return _nice_increment(text)
    except argparse.ArgumentTypeError as exc:
        raise ServiceError(
            f"${REPLICA_NICE_ENV} must be a whole number from 0 to 19: {exc}."
        ) from None


def _env_count(env: dict[str, str], name: str, minimum: int) -> int | None:
    text = env.get(name, "").strip()
    if not text:
        return None
    try:
        value = int(text)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise ServiceError(f"${name} must be a whole number of at least {minimum}, not {text!r}.")
    return value


def _whole_number(text: str) -> int:
    """``text`` as an int, for the argparse types below; one wording when it is not one."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None


def _count(minimum: int) -> Any:
    """An argparse type: a whole number of at least ``minimum``."""

    def parse(text: str) -> int:
        value = _whole_number(text)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}: {text!r}")
        return value

    return parse


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be more than 0: {text!r}")
    return value


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of ``service run`` and ``service start`` (``ServiceOptions.from_args``)."""
    p.add_argument("--host", default=DEFAULT_HOST, help="address to bind (default 127.0.0.1)")
    p.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"port (default {DEFAULT_PORT}; 0 picks a free one)",
    )
    p.add_argument(
        "--no-auth",
        action="store_true",
        help="accept requests without the token (loopback only)",
    )
    p.add_argument(
        "--slots",
        type=_count(1),
        default=None,
        help="CPU slots, one per replica: a job waits QUEUED until its replicas fit "
        f"(default: ${SLOTS_ENV}, else the machine's cores)",
    )
    p.add_argument(
        "--gpus",
        type=_count(0),
        default=None,
        help=f"GPUs to hand out as CUDA_VISIBLE_DEVICES (default: ${GPUS_ENV}, else those "
        "nvidia-smi -L lists; more than the machine has pretends, for tests)",
    )
    p.add_argument(
        "--grace-seconds",
        type=float,
        default=5.0,
        help="how long a cancelled replica gets between SIGTERM and SIGKILL (default 5)",
    )
    p.add_argument(
        "--replica-nice",
        type=_nice_increment,
        default=None,
        metavar="N",
        help="run replicas N steps below the service's CPU priority, 0-19 (default "
        f"${REPLICA_NICE_ENV} or {DEFAULT_REPLICA_NICE}: a flooding job leaves the TUI a core; "
        "0: as the service)",
    )
    p.add_argument(
        "--max-wait-scale",
        type=_positive_float,
        default=1.0,
        metavar="F",
        help="multiply every scheduling.maxWaitTime by F (its minimum is 1800s; tests and "
        "demos use e.g. 0.001; default 1)",
    )
    p.add_argument(
        "--restart-backoff-scale",
        type=_positive_float,
        default=1.0,
        metavar="F",
        help="multiply the restart rules' waits by F: between a crashing replica's restarts "
        "(1 s doubling to 30 s) and for a node with room after one died (600 s); tests use "
        "e.g. 0.01; default 1",
    )
    p.add_argument(
        "--stall-seconds",
        type=_positive_float,
        default=DEFAULT_STALL_SECONDS,
        metavar="S",
        help="a running job whose replicas all printed nothing for S seconds, one of them "
        f"idle (no CPU) as long, is flagged stalled and its stacks kept (default "
        f"{DEFAULT_STALL_SECONDS:g}; tests use a few seconds)",
    )
    p.add_argument(
        "--log-retention-days",
        type=_positive_float,
        default=DEFAULT_RETENTION_DAYS,
        metavar="D",
        help=f"delete log lines older than D days, never a live job's (default "
        f"{DEFAULT_RETENTION_DAYS:g}, Cloud Logging's own)",
    )
    p.add_argument(
        "--log-max-gib",
        type=_positive_float,
        default=DEFAULT_MAX_BYTES / 2**30,
        metavar="G",
        help=f"keep the log store under G GiB, deleting the oldest lines first, never a live "
        f"job's (default {DEFAULT_MAX_BYTES / 2**30:g})",
    )
    p.add_argument(
        "--log-scan-seconds",
        type=_positive_float,
        default=DEFAULT_SCAN_SECONDS,
        metavar="S",
        help="a log search the index cannot answer reads lines for at most S seconds a page, "
        "then answers with what it found and a token to go on (default "
        f"{DEFAULT_SCAN_SECONDS:g})",
    )
    p.add_argument(
        "--container-engine",
        default=None,
        metavar="CMD",
        help="the engine for custom-container jobs, with its global options, e.g. "
        f"'podman --runtime runc' (default: ${ENGINE_ENV}, else podman or docker on PATH, "
        "whichever answers)",
    )
    p.add_argument(
        "--container-run-args",
        default=None,
        metavar="ARGS",
        help="extra `run` options for every replica container, e.g. "
        f"'--security-opt label=disable' (default: ${RUN_ARGS_ENV})",
    )
    p.add_argument(
        "--executor",
        choices=executor_names(),
        default=DEFAULT_EXECUTOR,
        help=executor_help(),
    )
    for _, option in executor_options():
        p.add_argument(option.flag, default=None, metavar=option.metavar, help=option.help)
    p.add_argument(
        "--ray-warm-actors",
        type=int,
        default=None,
        metavar="N",
        help=f"with --executor ray: started actors kept waiting on each node, so that a job's "
        f"replicas start at once (default {DEFAULT_WARM_ACTORS}; 0: start each replica's own, "
        "about 1.5 s)",
    )
    p.add_argument(
        "--python",
        action="append",
        default=None,
        metavar="PATH",
        help="an interpreter for jobs' runtime versions, besides pyenv's, uv's and python3.X "
        "on PATH (repeatable; also $TUI_APP_PYTHONS, separated by ':')",
    )


def serve(state: StateDir, opts: ServiceOptions) -> int:
    """Serve until SIGTERM/SIGINT. Returns the process exit code."""
    host, no_auth = opts.host, opts.no_auth
    if no_auth and not is_loopback(host):
        raise ServiceError(
            f"--no-auth is refused on {host}: without a token anyone who can reach the address "
            "could run code as you. Bind 127.0.0.1 or drop --no-auth."
        )
    _ensure(state)
    lock = open(state.root / "service.lock", "w")  # noqa: SIM115 - held for the process's life
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        info = ServiceInfo.read(state)
        where = f" at {info.url} (pid {info.pid})" if info else ""
        raise ServiceError(
            f"A service is already running for {state.root}{where}; "
            "`tui-app service stop --state-dir ...` stops it."
        ) from None
    try:
        token = None if no_auth else read_or_create_token(state)
        import asyncio  # here: the CLI's other commands never need it (0.1 s to import)

        return asyncio.run(_serve(state, opts, token))
    except OSError as exc:
        raise ServiceError(
            f"Cannot use the state dir {state.root}: {exc.strerror or exc}"
            + (f" ({exc.filename})." if exc.filename else ".")
        ) from None
    finally:
        with contextlib.suppress(OSError):
            state.service_file.unlink()
        lock.close()


async def _serve(state: StateDir, opts: ServiceOptions, token: str | None) -> int:
    import asyncio

    from aiohttp import web

    from tui_app.local.browser_guard import BrowserGuard
    from tui_app.local.jobs import JobService
    from tui_app.local.server import make_app
    from tui_app.local.store import StoreError

    host, port = opts.host, opts.port
    engine = await asyncio.to_thread(find_engine, opts.container_engine, opts.container_run_args)
    executor = _executor(state, opts)
    try:
        service = JobService(
            state,
            grace_seconds=opts.grace_seconds,
            slots=opts.slots,
            gpus=opts.gpus,
            max_wait_scale=opts.max_wait_scale,
            restart_backoff_scale=opts.restart_backoff_scale,
            stall_seconds=opts.stall_seconds,
            log_retention_days=opts.log_retention_days,
            log_max_bytes=int(opts.log_max_gib * 2**30),
            log_scan_seconds=opts.log_scan_seconds,
            pythons=opts.pythons,
            replica_nice=opts.replica_nice,
            engine=engine,
            executor=executor,
            no_auth=opts.no_auth,
        )
    except (StoreError, StateDirError) as exc:
        raise ServiceError(str(exc)) from None
    try:
        await service.start()
    except ExecutorError as exc:
        await service.close()
        raise ServiceError(str(exc)) from None
    guard = BrowserGuard(host, port or None)
    app = make_app(service, token, guard)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, host, port, reuse_address=True)
    try:
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        await service.close()
        raise ServiceError(
            f"Cannot listen on {host}:{port}: {exc.strerror}. Choose another --port."
        ) from None
    bound = port or _bound_port(runner)
    guard.port = bound
    url = f"http://{host}:{bound}"
    # Replicas reach the storage API here; a wildcard address is reached on loopback.
    service.url = f"http://127.0.0.1:{bound}" if host in ("0.0.0.0", "") else url
    proxy = await _start_storage_proxy(state, bound)
    service.storage_proxy = proxy.info if proxy is not None else None
    service.listening.set()
    tmp = state.service_file.with_suffix(".tmp")
    tmp.write_text(
        json.dumps(
            {
                "pid": os.getpid(),
                "url": url,
                "auth": token is not None,
                "state_dir": str(state.root),
                "started": time.time(),
                "storage_proxy": proxy.url if proxy is not None else None,
            }
        )
    )
    os.replace(tmp, state.service_file)
    print(f"Serving the ml v1 Jobs API and Logging entries:list at {url}", flush=True)
    if executor_entry(opts.executor).runs_here:
        print(f"Capacity: {service.scheduler.capacity.describe()}", flush=True)
    print(f"Executor: {service.executor.describe()}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    print("Stopping: live jobs are stopped and marked FAILED.", flush=True)
    if proxy is not None:
        await proxy.close()
    await runner.cleanup()
    await service.close()
    return 0


def _executor(state: StateDir, opts: ServiceOptions) -> Executor:
    """The executor the options name, built by the factory ``config/executors.py`` registers
    for it: its module is imported only now, so Ray's only with ``--executor ray``."""
    return factory_for(opts.executor)(state.root, opts)


async def _start_storage_proxy(state: StateDir, port: int) -> Any:
    """The proxy that lets ``tf.io.gfile`` reach the storage API (``gcs_proxy``), or None when
    its certificates cannot be made: jobs then run without it, and the log says why."""
    from tui_app.local.storage.gcs_proxy import GcsProxy, local_buckets
    from tui_app.local.storage.proxy_certs import ensure_certs

    try:
        certs = ensure_certs(state.root / "tls")
        proxy = GcsProxy(certs, port, local_buckets(state))
        await proxy.start()
    except (OSError, ValueError) as exc:
        print(f"Storage proxy for tf.io.gfile not started: {exc}", flush=True)
        return None
    print(f"Storage proxy for tf.io.gfile (gs://) at {proxy.url}", flush=True)
    return proxy


def _bound_port(runner: Any) -> int:
    """The port the OS chose for ``--port 0``."""
    for addr in runner.addresses:
        return int(addr[1])
    raise ServiceError("The service is not listening on any address.")


# -- start / stop / status / env ------------------------------------------------------------


def start(state: StateDir, opts: ServiceOptions) -> ServiceInfo:
    """Start a detached service (or find the running one) and wait until it answers."""
    host, port, no_auth = opts.host, opts.port, opts.no_auth
    info = running(state)
    if info is not None:
        return info
    if no_auth and not is_loopback(host):
        raise ServiceError(f"--no-auth is refused on {host}: bind 127.0.0.1 or drop --no-auth.")
    _ensure(state)
    if port and not _port_free(host, port):
        raise ServiceError(
            f"Port {port} on {host} is already in use by another program; choose another --port."
        )
    cmd = [sys.executable, "-m", "tui_app", "service", "run", "--state-dir", str(state.root)]
    cmd += opts.argv()
    with open(state.service_log, "ab") as logf:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=logf,
            stderr=logf,
            start_new_session=True,
            close_fds=True,
        )
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = _log_tail(state)
            reason = _last_error(tail)
            if reason is not None:
                raise ServiceError(reason)
            raise ServiceError(f"The service exited with status {proc.returncode}:\n{tail}")
        info = ServiceInfo.read(state)
        if info is not None and info.pid == proc.pid and probe(info.url) is not None:
            return info
        time.sleep(0.05)
    proc.terminate()
    raise ServiceError(
        f"The service did not answer within {START_TIMEOUT_SECONDS:.0f}s:\n{_log_tail(state)}"
    )


def _ensure(state: StateDir) -> None:
    try:
        state.ensure()
    except StateDirError as exc:
        raise ServiceError(str(exc)) from None


def _last_error(tail: str) -> str | None:
    """The one-line reason ``service run`` printed before it exited, if it printed one."""
    for line in reversed(tail.splitlines()):
        if line.startswith("error: "):
            return line.removeprefix("error: ")
    return None


def _port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def _log_tail(state: StateDir, lines: int = 15) -> str:
    try:
        text = state.service_log.read_text(errors="replace")
    except OSError:
        return "(no service log)"
    return "\n".join(text.splitlines()[-lines:])


def stop(state: StateDir, timeout: float = 30.0) -> bool:
    """Stop the service; False when none was running."""
    info = ServiceInfo.read(state)
    if info is None or not _pid_alive(info.pid):
        return False
    os.kill(info.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _pid_alive(info.pid) or _is_zombie(info.pid):
            return True
        time.sleep(0.05)
    os.kill(info.pid, signal.SIGKILL)
    return True


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    except (OSError, IndexError):
        return False


SERVICE_ACCOUNT_NAME = "local-service@tui-app.invalid"
"""The account ``service env`` names in token mode (``.invalid``: no real account has it)."""

BOTO_CONFIG_TEXT = """\
# Written by tui-app service env: gsutil hands its commands to `gcloud storage`, which the
# CLOUDSDK_ variables of `tui-app service env` point at the local service. gsutil's own client
# speaks only https (its gs_json_host is always https://), so it must never fall back to it.
[GSUtil]
use_gcloud_storage = True
hidden_shim_mode = no_fallback
default_project_id = {project}
"""


def write_boto_config(state: StateDir, project: str) -> Path:
    """The boto config that makes ``gsutil`` reach the service (through ``gcloud storage``)."""
    path = state.root / "boto.cfg"
    text = BOTO_CONFIG_TEXT.format(project=project)
    try:
        if path.read_text() == text:
            return path
    except OSError:
        pass
    fresh = path.with_suffix(".new")
    fresh.write_text(text)
    os.replace(fresh, path)
    return path


def env_lines(state: StateDir, info: ServiceInfo, project: str) -> list[str]:
    """The ``export CLOUDSDK_...`` lines that point gcloud at the service (each endpoint override
    must end in ``/``: gcloud refuses it otherwise).

    Values are shell-quoted: a state dir with a space must survive ``eval "$(... env)"``.
    """
    base = info.url.rstrip("/") + "/"
    q = shlex.quote
    lines = [
        f"export CLOUDSDK_API_ENDPOINT_OVERRIDES_ML={q(base)}",
        f"export CLOUDSDK_API_ENDPOINT_OVERRIDES_LOGGING={q(base)}",
        f"export CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE={q(base + 'storage/v1/')}",
        f"export CLOUDSDK_CORE_PROJECT={q(project)}",
    ]
    lines.append(f"export BOTO_CONFIG={q(str(write_boto_config(state, project)))}")
    if info.auth:
        lines.append(f"export CLOUDSDK_AUTH_ACCESS_TOKEN_FILE={q(str(state.token_file))}")
        lines.append("unset CLOUDSDK_AUTH_DISABLE_CREDENTIALS")
        # gsutil's shim asks `gcloud config get account` first and, finding none, runs gcloud
        # with auth/disable_credentials, which drops the token. gcloud itself prefers the
        # token file to any account's credentials, so a named account changes nothing else.
        lines.append(f"export CLOUDSDK_CORE_ACCOUNT={q(SERVICE_ACCOUNT_NAME)}")
    else:
        lines.append("export CLOUDSDK_AUTH_DISABLE_CREDENTIALS=true")
        lines.append("unset CLOUDSDK_AUTH_ACCESS_TOKEN_FILE")
    return lines


def _nice_increment(text: str) -> int:
    """argparse type for ``--replica-nice``: a whole number from 0 to 19."""
    value = _whole_number(text)
    if not 0 <= value <= MAX_NICE:
        raise argparse.ArgumentTypeError(f"{value} is outside 0-{MAX_NICE}")
    return value
