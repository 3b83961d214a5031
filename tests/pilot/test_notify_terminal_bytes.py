"""The bytes the real ``tui-app`` writes to its terminal when a watched job ends (issue 27).

The app runs as a person runs it: its own process, on a pseudo-terminal, against a real
service. The test presses ``w`` on a running job, cancels the job through the API, and reads
what the app wrote until the notification arrives: OSC 777, OSC 9 and the BEL, exactly; inside
tmux (``TMUX`` set) the OSCs in tmux's passthrough with every ESC doubled and the BEL outside
it, which is what makes tmux flag the window.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import select
import signal
import struct
import sys
import termios
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support.live_service import LiveService, basic_job

ESC = b"\x1b"
ST = ESC + b"\\"
BEL = b"\x07"
LONG = ("--steps", "100000", "--sleep", "0.1")
TERMINAL_NAMES = ("TERM_PROGRAM", "LC_TERMINAL", "KITTY_WINDOW_ID")
"""What names the terminal the tests run in: left out, the app sends both desktop OSCs."""


@dataclass
class Terminal:
    """The parent's side of the app's pseudo-terminal: everything it wrote, read as it comes."""

    pid: int
    fd: int
    output: bytearray = field(default_factory=bytearray)

    def read_until(self, done: Callable[[bytes], bool], what: str, timeout: float = 60.0) -> None:
        """Read until ``done(output)`` holds; fail naming ``what`` after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not done(bytes(self.output)):
            left = deadline - time.monotonic()
            if left <= 0:
                tail = bytes(self.output[-600:])
                raise AssertionError(f"no {what} within {timeout}s; the app's last bytes: {tail!r}")
            ready, _, _ = select.select([self.fd], [], [], min(left, 0.5))
            if ready:
                try:
                    chunk = os.read(self.fd, 65536)
                except OSError:  # EIO: the app closed the terminal
                    chunk = b""
                if not chunk:
                    raise AssertionError(f"the app exited before {what}")
                self.output += chunk

    def send(self, keys: bytes) -> None:
        os.write(self.fd, keys)


@pytest.fixture
def run_app(tmp_path: Path) -> Iterator[Callable[[LiveService, str, dict[str, str]], Terminal]]:
    """Start ``python -m tui_app`` on a 120x40 pseudo-terminal; stop it after the test."""
    started: list[Terminal] = []
    config = tmp_path / "config"
    config.mkdir()
    (config / "settings.yaml").write_text("refresh_seconds: 0.3\n")

    def start(service: LiveService, project: str, extra_env: dict[str, str]) -> Terminal:
        drop = ("TMUX", "TMUX_PANE", "TUI_APP_NO_NOTIFY", "COLUMNS", "LINES", *TERMINAL_NAMES)
        env = {k: v for k, v in os.environ.items() if k not in drop}
        env.update(TERM="xterm-256color", TUI_APP_CONFIG_DIR=str(config), **extra_env)
        argv = [
            sys.executable,
            "-m",
            "tui_app",
            "--state-dir",
            str(service.state_dir),
            "--project",
            project,
        ]
        pid, fd = pty.fork()
        if pid == 0:  # the app: the pty is its controlling terminal, 120 columns by 40 lines
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
            os.execve(sys.executable, argv, env)
        terminal = Terminal(pid, fd)
        started.append(terminal)
        return terminal

    yield start
    for terminal in started:
        with contextlib.suppress(ProcessLookupError):
            os.kill(terminal.pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            done, _ = os.waitpid(terminal.pid, os.WNOHANG)
            if done:
                break
            # Keep the pty drained so the app is never blocked writing while it exits.
            if select.select([terminal.fd], [], [], 0.2)[0]:
                with contextlib.suppress(OSError):
                    os.read(terminal.fd, 65536)
        else:
            os.kill(terminal.pid, signal.SIGKILL)
            os.waitpid(terminal.pid, 0)
        os.close(terminal.fd)


def notification(title: str, body: str) -> tuple[bytes, bytes]:
    """OSC 777 and OSC 9 as the terminals' docs write them, ended by ST."""
    osc777 = ESC + b"]777;notify;" + title.encode() + b";" + body.encode() + ST
    osc9 = ESC + b"]9;" + body.encode() + ST
    return osc777, osc9


def passthrough(sequence: bytes) -> bytes:
    """tmux's passthrough form: ``ESC P tmux ;`` + every ESC doubled + ``ESC \\``."""
    return ESC + b"Ptmux;" + sequence.replace(ESC, ESC + ESC) + ST


@pytest.mark.parametrize("tmux", [False, True], ids=["plain", "tmux"])
def test_a_watched_job_that_ends_writes_bel_osc_777_and_osc_9(
    service: LiveService,
    package_uri: str,
    run_app: Callable[[LiveService, str, dict[str, str]], Terminal],
    tmux: bool,
) -> None:
    project = f"notify-bytes-{'tmux' if tmux else 'plain'}"
    job_id = "watched_20261122_090000"
    client = service.client(project)
    client.create(basic_job(job_id, package_uri, *LONG))
    service.wait_state(job_id, ("RUNNING",), project=project)
    env = {"TMUX": "/tmp/tmux-1000/default,4242,0"} if tmux else {}
    app = run_app(service, project, env)

    # The list shows the job running (the only job: the cursor is on it); w watches it.
    app.read_until(lambda out: job_id.encode() in out and b"RUNNING" in out, "the job's row")
    app.send(b"w")
    app.read_until(lambda out: b"Watching" in out, "the toast that w watches it")
    assert b"]777;" not in app.output and b"]9;" not in app.output  # nothing told yet

    client.cancel(job_id)
    title = f"{job_id} CANCELLED"
    body = f"{job_id} CANCELLED: Job cancelled by user."
    osc777, osc9 = notification(title, body)
    plain = osc777 + osc9 + BEL
    expected = passthrough(osc777) + passthrough(osc9) + BEL if tmux else plain
    app.read_until(lambda out: expected in out, "the notification's bytes")

    out = bytes(app.output)
    assert out.count(expected) == 1  # told once, in one write
    if tmux:
        # Never a bare OSC that tmux would swallow: every one is inside the passthrough.
        assert out.count(ESC + b"]777;") == out.count(ESC + ESC + b"]777;") == 1
        assert out.count(ESC + b"]9;") == out.count(ESC + ESC + b"]9;") == 1
    else:
        assert ESC + b"Ptmux;" not in out
        assert out.count(osc777) == out.count(osc9) == 1
    # The BEL is the last byte of the notification, outside any passthrough.
    assert out[out.index(expected) + len(expected) - 1 :].startswith(BEL)
