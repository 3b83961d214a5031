"""The per-replica supervisor: ``python -m tui_app.local.execution.supervisor SPEC.json``.

It runs one replica in its own session and process group, with stdout and stderr going to files,
and records how it ended in a status file. It is detached from the service (its own session), so
replicas and their exit statuses survive a service restart. It makes itself a child subreaper, so
anything the replica spawns, even a process that called setsid or was orphaned, stays its
descendant and is stopped with the replica: cancel and job end leave no process behind.

A container replica (``spec["container"]``) is the engine's ``run`` command in the foreground:
its output and exit status are the container's. A stop goes to the engine (``stop`` with the
grace period, which then kills), not to the processes, so the engine records how the container
ended; afterwards the supervisor reads that record (exit code, OOM kill, memory limit) and removes
the container, so nothing is left behind.

Stdlib plus psutil only: it starts once per replica and should start fast.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil

from tui_app.local.execution.replica_priority import lower_priority

PR_SET_CHILD_SUBREAPER = 36
DEFAULT_GRACE_SECONDS = 5.0
ORPHAN_GRACE_SECONDS = 2.0


STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT}


@contextlib.contextmanager
def stop_signals_held() -> Iterator[None]:
    """Spawn a supervisor inside this: it starts with SIGTERM and SIGINT blocked (a child
    inherits the mask), and unblocks them once its handlers are in place. A stop sent while it
    is still starting Python then waits for it, instead of killing it before it can record how
    its replica ended. The caller's own signals are held for the instant of the spawn only."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In a replica on a Ray node: SIGKILL it should its supervisor be killed (Ray kills a
    dying worker's children; the replica, in a session of its own, would be left running)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _set_subreaper() -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: process-group kill still applies
        pass


FILE_MODE = 0o600
"""The replica's files this writes (its output, pid and status) are its user's alone, as the rest
of its work dir: on a Ray node it lies under the node's shared ``/tmp``."""


def _open_private(path: str | Path, flags: int) -> int:
    return os.open(path, flags | os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)


def _write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(_open_private(tmp, os.O_TRUNC), "w") as f:
        f.write(json.dumps(data))
    os.replace(tmp, path)


def _descendants() -> list[psutil.Process]:
    try:
        return psutil.Process().children(recursive=True)
    except psutil.Error:
        return []


def _signal_tree(pgid: int | None, sig: int) -> None:
    if pgid is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, sig)
    for proc in _descendants():
        with contextlib.suppress(psutil.Error):
            proc.send_signal(sig)


def _reap() -> list[tuple[int, int]]:
    """Collect every exited child (ours and adopted orphans) without blocking."""
    done: list[tuple[int, int]] = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return done
        if pid == 0:
            return done
        done.append((pid, status))


def _container_command(cmd: list[str], timeout: float) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def _container_end(container: dict[str, Any]) -> dict[str, Any]:
    """How the engine says the container ended, then the container removed."""
    found: dict[str, Any] = {"container": container["name"]}
    done = _container_command(list(container["inspect"]), 30.0)
    if done is not None and done.returncode == 0:
        parts = done.stdout.split()
        if len(parts) >= 3:
            with contextlib.suppress(ValueError):
                found["container_exit_code"] = int(parts[0])
            found["oom_killed"] = parts[1].lower() == "true"
            with contextlib.suppress(ValueError):
                found["memory_limit"] = int(parts[2])
    _container_command(list(container["remove"]), 60.0)
    return found


def run(spec: dict[str, Any]) -> int:
    """Run the replica the spec describes; returns the supervisor's own exit code (0)."""
    _set_subreaper()
    status_path = Path(spec["status_path"])
    grace = float(spec.get("grace_seconds", DEFAULT_GRACE_SECONDS))
    stop_requested: list[float] = []

    def on_term(signum: int, frame: object) -> None:
        if not stop_requested:
            stop_requested.append(time.monotonic())

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)  # see stop_signals_held

    started = time.time()
    with (
        open(_open_private(spec["stdout_path"], os.O_APPEND), "ab") as out,
        open(_open_private(spec["stderr_path"], os.O_APPEND), "ab") as err,
    ):
        try:
            child = subprocess.Popen(
                spec["argv"],
                preexec_fn=_die_with_parent if isinstance(spec.get("parent_pid"), int) else None,
                cwd=spec["cwd"],
                env=spec["env"],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            err.write(f"Cannot start the replica: {exc}\n".encode())
            err.flush()
            _write_json(
                status_path,
                {
                    "exit_code": 127,
                    "signal": None,
                    "started": started,
                    "ended": time.time(),
                    "error": str(exc),
                },
            )
            return 0
        # Its own session is its own CPU group: lower both, or a flood starves the TUI.
        for problem in lower_priority(child.pid, int(spec.get("nice", 0))):
            err.write(f"{problem}\n".encode())
            err.flush()
    pgid = child.pid
    _write_json(Path(spec["pid_path"]), {"supervisor": os.getpid(), "replica": child.pid})

    parent = spec.get("parent_pid")
    """Set by a Ray node's actor: when it dies (its node is going away, or it was killed), the
    replica is stopped as a cancel would stop it, rather than left running unowned."""
    container: dict[str, Any] | None = spec.get("container")
    stopper: subprocess.Popen[bytes] | None = None
    next_stop = 0.0
    status: int | None = None
    term_sent = kill_sent = False
    while status is None:
        for pid, raw in _reap():
            if pid == child.pid:
                status = raw
            elif stopper is not None and pid == stopper.pid:
                # The engine's stop returned while its run goes on: the stop came before the
                # container existed ("no such container"). Ask again until it takes.
                stopper.returncode = 0
                stopper = None
        if status is not None:
            break
        if isinstance(parent, int) and not stop_requested and os.getppid() != parent:
            stop_requested.append(time.monotonic())
        if stop_requested and container is not None:
            # The engine stops it: SIGTERM, then SIGKILL after the grace period. Only when the
            # engine itself hangs do the processes get signalled, well after that.
            now = time.monotonic()
            elapsed = now - stop_requested[0]
            if stopper is None and now >= next_stop and not kill_sent:
                next_stop = now + 0.5
                with contextlib.suppress(OSError):
                    stopper = subprocess.Popen(
                        list(container["stop"]),
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
            if elapsed >= 2 * grace + 10 and not kill_sent:
                _signal_tree(pgid, signal.SIGKILL)
                kill_sent = True
        elif stop_requested:
            elapsed = time.monotonic() - stop_requested[0]
            if not term_sent:
                _signal_tree(pgid, signal.SIGTERM)
                term_sent = True
            elif elapsed >= grace and not kill_sent:
                _signal_tree(pgid, signal.SIGKILL)
                kill_sent = True
        time.sleep(0.05)
    child.returncode = 0  # reaped above; keeps Popen from waiting on a pid that is gone
    ended = _container_end(container) if container is not None else {}

    # The replica is gone; whatever it left behind goes too.
    deadline = time.monotonic() + (0.0 if kill_sent else ORPHAN_GRACE_SECONDS)
    if _descendants():
        _signal_tree(pgid, signal.SIGTERM)
        while _descendants() and time.monotonic() < deadline:
            _reap()
            time.sleep(0.05)
        _signal_tree(pgid, signal.SIGKILL)
        give_up = time.monotonic() + 10.0  # a process stuck in the kernel cannot be waited out
        while _descendants() and time.monotonic() < give_up:
            _signal_tree(None, signal.SIGKILL)
            _reap()
            time.sleep(0.02)
    _reap()

    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        result: dict[str, Any] = {"exit_code": 128 + sig, "signal": sig}
    else:
        result = {"exit_code": os.WEXITSTATUS(status), "signal": None}
    result.update({"started": started, "ended": time.time(), "stopped": bool(stop_requested)})
    result.update(ended)
    _write_json(status_path, result)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m tui_app.local.execution.supervisor SPEC.json", file=sys.stderr)
        return 2
    spec = json.loads(Path(args[0]).read_text())
    return run(spec)


if __name__ == "__main__":
    sys.exit(main())
