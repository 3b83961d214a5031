"""Misbehaviour on demand, so the jobs service's handling of it can be shown and tested.

Everything here is opt-in through flags: injected failures (a real traceback, or a chosen exit
code), log floods, mixed-severity log lines, and child processes that make cancelling a job
harder (ignoring SIGTERM, or escaping the process group into their own session).
"""

from __future__ import annotations

import atexit
import datetime
import inspect
import logging
import os
import signal
import subprocess
import sys
from dataclasses import dataclass

from trainer.cluster import CHIEF_TYPES, TaskInfo
from trainer.util import log, warn

_CHILDREN: list[subprocess.Popen[bytes]] = []


@dataclass
class FailurePlan:
    """When (``at_step``) and how (traceback, or ``exit_code``) this replica should fail."""

    at_step: int | None
    exit_code: int | None

    @classmethod
    def for_task(
        cls, at_step: int | None, target: str, exit_code: int | None, task: TaskInfo
    ) -> FailurePlan:
        """A plan that only fires if ``target`` (``TYPE:INDEX``, ``TYPE`` or ``any``) is us."""
        return cls(at_step if targets(target, task) else None, exit_code)

    def check(self, step: int) -> None:
        """Fail now if the global step has reached ``at_step``."""
        if self.at_step is not None and step >= self.at_step:
            _inject_failure(self.at_step, self.exit_code)


def targets(target: str, task: TaskInfo) -> bool:
    """Whether ``--fail-task`` names this replica; ``master`` and ``chief`` are the same role."""
    target = target.strip().lower()
    if target == "any":
        return True
    wanted_type, _, wanted_index = target.partition(":")
    if wanted_type in CHIEF_TYPES:
        type_matches = task.task_type in CHIEF_TYPES
    else:
        type_matches = task.task_type == wanted_type
    return type_matches and (not wanted_index or int(wanted_index) == task.index)


def _inject_failure(at_step: int, exit_code: int | None) -> None:
    """A separate frame so the traceback shows a realistic call chain, not a one-liner."""
    if exit_code is not None:
        warn(f"Injected failure at step {at_step}: exiting with status {exit_code}")
        sys.exit(exit_code)
    _raise_injected_failure(at_step)


def _raise_injected_failure(at_step: int) -> None:
    raise RuntimeError(f"Injected failure at step {at_step}")


def flood(count: int, line_bytes: int) -> None:
    """Write ``count`` lines of ``line_bytes`` bytes (newline included) as fast as possible.

    Lines are joined into ~1 MiB chunks and written straight to ``sys.stdout`` so the producer,
    not Python's per-line overhead, is what stresses the service's log capture.
    """
    line_bytes = max(line_bytes, 16)
    padding = "x" * line_bytes
    chunk: list[str] = []
    chunk_size = 0
    sys.stdout.flush()
    for i in range(count):
        prefix = f"flood {i} "
        line = prefix + padding[: max(0, line_bytes - len(prefix) - 1)] + "\n"
        chunk.append(line)
        chunk_size += len(line)
        if chunk_size >= 1 << 20:
            sys.stdout.write("".join(chunk))
            chunk, chunk_size = [], 0
    sys.stdout.write("".join(chunk))
    sys.stdout.flush()
    log(f"flood done: {count} lines of {line_bytes} bytes")


def log_level_demo() -> None:
    """Emit one line per severity in the formats the service's log parser must recognise.

    Python logging's default format (``WARNING:root:...``) through a temporary root handler on
    stderr, then one absl/glog-style line (``Wmmdd hh:mm:ss.uuuuuu pid file:line] msg``).
    """
    root = logging.getLogger()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(logging.BASIC_FORMAT))
    previous_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        root.debug("log-level demo: a DEBUG line")
        root.info("log-level demo: an INFO line")
        root.warning("log-level demo: a WARNING line")
        root.error("log-level demo: an ERROR line")
    finally:
        root.removeHandler(handler)
        root.setLevel(previous_level)
    frame = inspect.currentframe()
    where = f"{os.path.basename(__file__)}:{frame.f_lineno if frame is not None else 0}"
    stamp = datetime.datetime.now().strftime("%m%d %H:%M:%S.%f")
    warn(f"W{stamp} {os.getpid()} {where}] log-level demo: an absl-style warning")


SIGNALS_FILE = "received-signals.log"
"""Where the hostile demo processes note each SIGTERM they get (``<pid> SIGTERM`` lines, in the
replica's working dir): a test can then tell that a cancel signalled every one of them, not
only that they are gone."""
_NOTE_TERM = (
    "import os, signal, time\n"
    "def noted(signum, frame):\n"
    f"    with open({SIGNALS_FILE!r}, 'a') as f:\n"
    "        f.write(f'{os.getpid()} SIGTERM\\n')\n"
)
_SLEEP_FOREVER = (
    _NOTE_TERM + "def end(signum, frame):\n"
    "    noted(signum, frame)\n"
    "    os._exit(128 + signum)\n"
    "signal.signal(signal.SIGTERM, end)\n"
    "while True:\n    time.sleep(3600)\n"
)
_IGNORE_TERM_AND_SLEEP = (
    _NOTE_TERM + "signal.signal(signal.SIGTERM, noted)\nwhile True:\n    time.sleep(3600)\n"
)


# argv[1] of the daemon, so that tests and people can find it in ps.
ESCAPING_CHILD_MARKER = "trainer-escaping-child"
_ESCAPE = (
    _NOTE_TERM + "signal.signal(signal.SIGTERM, noted)\n"
    "os.setsid()\n"
    "pid = os.fork()\n"
    "if pid:\n"
    "    print(pid, flush=True)\n"
    "    os._exit(0)\n"
    "null = os.open(os.devnull, os.O_RDWR)\n"
    "for fd in (0, 1, 2):\n"
    "    os.dup2(null, fd)\n"
    "while True:\n"
    "    time.sleep(3600)\n"
)


def _spawn(code: str, new_session: bool) -> subprocess.Popen[bytes]:
    child = subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=new_session,
    )
    if not _CHILDREN:
        atexit.register(_reap_children)
    _CHILDREN.append(child)
    return child


def ignore_sigterm() -> None:
    """Ignore SIGTERM here and in a child that sleeps forever, so only SIGKILL of the whole
    process tree stops this replica: what a service's cancel has to cope with."""

    def noted(signum: int, frame: object) -> None:
        with open(SIGNALS_FILE, "a") as f:
            f.write(f"{os.getpid()} SIGTERM\n")

    signal.signal(signal.SIGTERM, noted)
    child = _spawn(_IGNORE_TERM_AND_SLEEP, new_session=False)
    log(f"ignoring SIGTERM; spawned child pid={child.pid} that ignores SIGTERM too")


def spawn_child_new_session() -> None:
    """Start a sleeping child in its own session: killing our process group misses it."""
    child = _spawn(_SLEEP_FOREVER, new_session=True)
    log(f"spawned child pid={child.pid} in a new session (pgid={child.pid})")


def spawn_escaping_child() -> None:
    """Start a daemon as daemons start: a child calls setsid(), forks and exits, so the
    grandchild is in its own session, is nobody's child (an orphan, adopted away from us),
    ignores SIGTERM and is not killed when this trainer exits, even normally. Only a service
    that tracks a replica's whole tree (a child subreaper) can stop it."""
    middle = subprocess.run(
        [sys.executable, "-c", _ESCAPE, ESCAPING_CHILD_MARKER],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        check=True,
    )
    pid = middle.stdout.decode().strip()
    log(f"spawned an escaping child pid={pid}: own session, orphaned, ignores SIGTERM")


def _reap_children() -> None:
    """On a normal exit (success or a Python exception) kill our demo children.

    They exist to test how a *cancel* cleans up; on completion they should not outlive us. A
    replica killed by a signal never gets here, which is exactly the case under test.
    """
    for child in _CHILDREN:
        if child.poll() is None:
            child.kill()
            child.wait()
