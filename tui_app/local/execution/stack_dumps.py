"""Python stacks of a live replica, taken with py-spy on the machine the replica runs on.

py-spy (a binary installed with tui-app) reads another Python process's threads through ptrace
in about 15 ms without stopping it, for CPython 2.7 to 3.13. The service takes the dumps, not the
TUI: it knows each replica's processes (the TUI may run on another machine), and a Ray node's
actor runs this same code there.

Which process: the first Python process of the replica's tree, found breadth first from its
root (a supervisor's child, the trainer; for a container, the process the engine reports as the
container's, or the first Python under its init). The supervisor itself is Python too, and is
never the one dumped.

Every failure becomes a sentence for the user (``DumpFailed``): py-spy missing from the
installation, ptrace not permitted (root, or ``CAP_SYS_PTRACE`` in a container, and
``kernel.yama.ptrace_scope``), a replica that is not Python (which program it is), one that
ended meanwhile.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

DUMP_TIMEOUT_SECONDS = 10.0
"""A dump takes ~15 ms; a stuck ptrace (a process in uninterruptible sleep) must not hold a
request for long."""
MAX_DUMP_BYTES = 8 << 20
"""The most py-spy output read per process (thousands of threads with locals stay below)."""
PTRACE_SCOPE = Path("/proc/sys/kernel/yama/ptrace_scope")


class DumpFailed(Exception):
    """The replica's stacks cannot be taken; the message says why, for the user."""


@dataclass(frozen=True)
class Dump:
    """py-spy's JSON for one process (a list of threads), as it printed it."""

    pid: int
    threads: list[Any]


def py_spy() -> str:
    """The py-spy program installed with tui-app (next to this Python), else one on PATH.

    Raises:
        DumpFailed: none is installed.
    """
    beside = Path(sys.executable).parent / "py-spy"
    if beside.is_file():
        return str(beside)
    found = shutil.which("py-spy")
    if found:
        return found
    raise DumpFailed(
        "py-spy is missing from this installation of tui-app (it is one of its dependencies: "
        f"{Path(sys.executable).parent / 'pip'} install py-spy)"
    )


def _is_python(proc: psutil.Process) -> bool:
    try:
        names = [proc.name(), Path(proc.exe()).name]
    except psutil.Error:
        return False
    return any(n.startswith(("python", "pypy")) for n in names)


def _program(proc: psutil.Process) -> str:
    try:
        return proc.exe() or proc.name()
    except psutil.Error:
        return "a process that has ended"


def replica_process(root: int, *, skip_root: bool) -> int:
    """The pid to dump: the first Python process under ``root`` (``root`` itself unless
    ``skip_root``: a supervisor is Python but not the replica), breadth first.

    Raises:
        DumpFailed: the tree is gone, or runs no Python.
    """
    try:
        top = psutil.Process(root)
        queue: deque[psutil.Process] = deque(top.children() if skip_root else [top])
    except psutil.Error:
        raise DumpFailed("it ended meanwhile") from None
    first: psutil.Process | None = None
    while queue:
        proc = queue.popleft()
        first = first or proc
        if _is_python(proc):
            return proc.pid
        try:
            queue.extend(proc.children())
        except psutil.Error:
            continue
    if first is None:
        raise DumpFailed("it ended meanwhile")
    raise DumpFailed(f"it is not a Python process ({_program(first)})")


def _ptrace_hint() -> str:
    try:
        scope = PTRACE_SCOPE.read_text().strip()
    except OSError:
        scope = ""
    setting = f" (kernel.yama.ptrace_scope is {scope})" if scope and scope != "0" else ""
    return (
        "ptrace is not permitted here: py-spy needs root, or CAP_SYS_PTRACE when the service "
        f"runs in a container, and kernel.yama.ptrace_scope at 0 or 1{setting}"
    )


def dump(pid: int, *, with_locals: bool = False) -> Dump:
    """py-spy's dump of process ``pid`` (blocking).

    Raises:
        DumpFailed: with the reason in words.
    """
    argv = [py_spy(), "dump", "--json", "--pid", str(pid)]
    if with_locals:
        argv.append("--locals")
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            timeout=DUMP_TIMEOUT_SECONDS,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise DumpFailed(f"py-spy did not answer within {DUMP_TIMEOUT_SECONDS:g} s") from None
    except OSError as exc:
        raise DumpFailed(f"py-spy could not be run: {exc.strerror or exc}") from None
    out = done.stdout[:MAX_DUMP_BYTES]
    err = done.stderr.decode("utf-8", "replace")
    if done.returncode != 0 or not out.strip():
        raise DumpFailed(_failure(pid, err))
    try:
        threads = json.loads(out)
    except ValueError:
        raise DumpFailed("py-spy's answer could not be read") from None
    if not isinstance(threads, list):
        raise DumpFailed("py-spy's answer could not be read")
    return Dump(pid, threads)


def _failure(pid: int, stderr: str) -> str:
    """py-spy's complaint, in the user's terms."""
    lowered = stderr.lower()
    if not psutil.pid_exists(pid):
        return "it ended meanwhile"
    if "permission denied" in lowered or "operation not permitted" in lowered:
        return _ptrace_hint()
    if "python" in lowered and ("version" in lowered or "interpreter" in lowered):
        try:
            program = _program(psutil.Process(pid))
        except psutil.Error:
            return "it ended meanwhile"
        return f"it is not a Python process py-spy can read ({program})"
    last = next((ln.strip() for ln in reversed(stderr.splitlines()) if ln.strip()), "")
    return f"py-spy failed: {last[:300]}" if last else "py-spy failed without saying why"


def dump_tree(root: int, *, skip_root: bool, with_locals: bool = False) -> Dump:
    """The dump of the replica whose process tree starts at ``root`` (see ``replica_process``).

    Raises:
        DumpFailed: with the reason in words.
    """
    return dump(replica_process(root, skip_root=skip_root), with_locals=with_locals)
