"""write_to_terminal: /dev/tty when there is one, else stderr when it is a terminal, else False.

Each case runs a real child process with the terminal arrangement it needs (a pseudo-terminal
as its controlling terminal, or none) and reads what reached the pseudo-terminal.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time

CHILD = (
    "import sys\n"
    "from tui_app.entry.terminal_write import write_to_terminal\n"
    "ok = write_to_terminal('\\x1b]9;hi\\x1b\\\\\\x07')\n"
    "print('RESULT', ok, flush=True)\n"
)
MESSAGE = b"\x1b]9;hi\x1b\\\x07"


def _read_until(fd: int, wanted: bytes, deadline_s: float = 20.0) -> bytes:
    """Read the pty until ``wanted`` appears or the child closes it, with a deadline."""
    data = b""
    end = time.monotonic() + deadline_s
    while wanted not in data and time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the child closed its side
            break
        if not chunk:
            break
        data += chunk
    return data


def test_writes_to_the_controlling_terminal_even_with_stdout_and_stderr_redirected() -> None:
    pid, fd = pty.fork()
    if pid == 0:  # the child: the pty is its controlling terminal; stdout/stderr go elsewhere
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        code = CHILD.replace("print('RESULT', ok, flush=True)", "sys.exit(0 if ok else 3)")
        os.execv(sys.executable, [sys.executable, "-c", code])
    try:
        data = _read_until(fd, MESSAGE)
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert MESSAGE in data
    assert os.waitstatus_to_exitcode(status) == 0


def test_falls_back_to_stderr_when_it_is_a_terminal_and_there_is_no_controlling_one() -> None:
    master, slave = pty.openpty()
    try:
        child = subprocess.run(
            [sys.executable, "-c", CHILD],
            stdout=subprocess.PIPE,
            stderr=slave,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # a new session has no controlling terminal
            check=True,
            timeout=60,
        )
        os.close(slave)
        slave = -1
        data = _read_until(master, MESSAGE)
    finally:
        if slave >= 0:
            os.close(slave)
        os.close(master)
    assert child.stdout.strip() == b"RESULT True"
    assert MESSAGE in data


def test_false_when_there_is_no_terminal_at_all() -> None:
    child = subprocess.run(
        [sys.executable, "-c", CHILD],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        check=True,
        timeout=60,
    )
    assert child.stdout.strip() == b"RESULT False"
    assert child.stderr == b""  # nothing written anywhere
