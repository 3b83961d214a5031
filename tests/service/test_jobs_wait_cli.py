"""``tui-app jobs wait`` against a real service: exit statuses by outcome, jobs that already
ended, ``--any``, ``--timeout``, ids that name nothing, two projects, ctrl+c, ``--notify``.

Where a test must know that the command is really waiting (not merely finding a job that has
already ended), its stderr is a pseudo-terminal: the progress line appears once the wait has
begun, and the test acts on it, never on a fixed sleep.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import _start, unique_id
from tests.support.cli_in_process import run_in_process
from tests.support.counting_clients import counting
from tests.support.live_service import PROJECT, LiveService, basic_job
from tests.support.terminal_signals import sigint_as_in_a_terminal
from tui_app.config.settings import Settings
from tui_app.entry.wait_cli import wait_command

OTHER_PROJECT = "wait-other-project"
LONG = ("--steps", "100000", "--sleep", "0.1")
"""A job that runs until it is cancelled."""
CLEAR = "\r\x1b[K"


def tui(
    service: LiveService, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``jobs wait ARGS``: in this process (tests/support/cli_in_process.py), or in a process
    of its own when it needs another environment."""
    argv = ["jobs", "wait", *args, *_where(service)]
    if env is None:
        return run_in_process(argv)
    return subprocess.run(
        [sys.executable, "-m", "tui_app", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )


def _where(service: LiveService) -> list[str]:
    return ["--state-dir", str(service.state_dir), "--project", PROJECT]


class PtyRun:
    """``jobs wait`` with its stderr on a pseudo-terminal (stdout a pipe), read as it writes."""

    def __init__(self, service: LiveService, *args: str, env: dict[str, str] | None = None):
        self.master, slave = pty.openpty()
        # A sized terminal: the progress line is fitted to its width.
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tui_app", "jobs", "wait", *args, *_where(service)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=slave,
            # Its own session: no controlling terminal, so --notify's write_to_terminal cannot
            # open /dev/tty (the test's own terminal) and writes to stderr, the pty, instead.
            start_new_session=True,
            env=env,
            preexec_fn=sigint_as_in_a_terminal,
        )
        os.close(slave)
        self.seen = b""

    def read_until(self, pattern: bytes, timeout: float = 60.0) -> bytes:
        """Everything written so far, once it holds ``pattern``."""
        deadline = time.monotonic() + timeout
        while pattern not in self.seen:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{pattern!r} not written; so far: {self.seen!r}")
            if select.select([self.master], [], [], left)[0] and not self._read():
                raise AssertionError(f"stderr closed before {pattern!r}: {self.seen!r}")
        return self.seen

    def _read(self) -> bool:
        try:
            data = os.read(self.master, 65536)
        except OSError:  # EIO: the last writer closed the terminal
            return False
        self.seen += data
        return bool(data)

    def finish(self, timeout: float = 60.0) -> tuple[int, str, str]:
        """Exit status, stdout and the whole stderr once the command has exited."""
        stdout, _ = self.proc.communicate(timeout=timeout)
        while select.select([self.master], [], [], 0)[0] and self._read():
            pass
        os.close(self.master)
        return self.proc.returncode, stdout.decode(), self.seen.decode()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def pty_runs() -> Iterator[list[PtyRun]]:
    runs: list[PtyRun] = []
    yield runs
    for run in runs:
        run.close()


def submit(service: LiveService, package_uri: str, base: str, *args: str, **kw: Any) -> str:
    job_id = unique_id(base)
    project = kw.pop("project", PROJECT)
    service.client(project).create(basic_job(job_id, package_uri, *args, **kw))
    return job_id


def after_progress(stderr: str) -> str:
    """What stderr holds besides the progress line's redraws: each redraw is ``\\r<text>ESC[K``
    and the last one is cleared; anything else is a line the command said."""
    head, _, tail = stderr.rpartition(CLEAR)
    assert re.fullmatch(r"(\r[^\r\n]*\x1b\[K)*", head), head
    return tail


def test_the_exit_status_says_how_the_job_ended(service: LiveService, package_uri: str) -> None:
    ok = submit(service, package_uri, "wait_ok", "--steps", "20", "--sleep", "0.05")
    bad = submit(service, package_uri, "wait_bad", "--steps", "20", "--fail-at-step", "3")

    done = tui(service, ok)
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(rf"{ok}  SUCCEEDED  \d+s\n", done.stdout)
    assert done.stderr == ""  # not a terminal: no progress line

    failed = tui(service, bad)
    assert failed.returncode == 3, failed.stderr
    assert re.fullmatch(
        rf"{bad}  FAILED  \d+s  RuntimeError: Injected failure at step 3\n", failed.stdout
    )

    # Both together: the failure decides, and each end is one line.
    both = tui(service, ok, bad)
    assert both.returncode == 3
    assert [line.split("  ")[:2] for line in both.stdout.splitlines()] == [
        [ok, "SUCCEEDED"],
        [bad, "FAILED"],
    ]


def test_a_job_cancelled_during_the_wait_exits_4(
    service: LiveService, package_uri: str, pty_runs: list[PtyRun]
) -> None:
    job_id = submit(service, package_uri, "wait_cancel", *LONG)
    run = PtyRun(service, job_id)
    pty_runs.append(run)
    run.read_until(b"0 of 1 ended \xc2\xb7 " + job_id.encode())  # it is waiting
    service.client().cancel(job_id)
    status, stdout, stderr = run.finish()
    assert status == 4, stderr
    assert re.fullmatch(rf"{job_id}  CANCELLED  \S+( .*)?\n", stdout)
    assert after_progress(stderr) == ""  # the progress line is gone at the end


def test_a_job_that_already_ended_is_reported_at_once(
    service: LiveService, package_uri: str
) -> None:
    """With ``--any``, an ended job ends the wait while the other job still runs: nothing was
    waited for."""
    ended = submit(service, package_uri, "wait_ended", "--steps", "1")
    service.wait_state(ended)
    running = submit(service, package_uri, "wait_running", *LONG)
    try:
        alone = tui(service, ended)
        assert alone.returncode == 0 and alone.stdout.startswith(f"{ended}  SUCCEEDED  ")
        first = tui(service, running, ended, "--any")
        assert first.returncode == 0, first.stderr
        assert first.stdout.splitlines() == [alone.stdout.rstrip("\n")]
        assert service.client().get(running)["state"] in ("QUEUED", "PREPARING", "RUNNING")
    finally:
        service.client().cancel(running)


def test_any_returns_when_the_first_job_ends_with_its_status(
    service: LiveService, package_uri: str
) -> None:
    running = submit(service, package_uri, "wait_any_long", *LONG)
    bad = submit(service, package_uri, "wait_any_bad", "--steps", "20", "--fail-at-step", "2")
    try:
        first = tui(service, running, bad, "--any")
        assert first.returncode == 3, first.stderr
        assert [line.split("  ")[:2] for line in first.stdout.splitlines()] == [[bad, "FAILED"]]
        assert service.client().get(running)["state"] in ("QUEUED", "PREPARING", "RUNNING")
    finally:
        service.client().cancel(running)


def test_a_timeout_that_runs_out_exits_124(service: LiveService, package_uri: str) -> None:
    running = submit(service, package_uri, "wait_timeout", *LONG)
    try:
        out = tui(service, running, "--timeout", "2s")
        assert out.returncode == 124, out.stderr
        assert out.stdout == ""
        assert out.stderr.startswith(f"--timeout 2s ran out; not ended: {running} (")
        assert "Traceback" not in out.stderr
    finally:
        service.client().cancel(running)


def test_a_bad_timeout_exits_2_naming_the_forms_accepted(service: LiveService) -> None:
    for text in ("15x", "0", "1h 30m"):
        out = tui(service, "anything", "--timeout", text)
        assert out.returncode == 2 and out.stdout == ""
        assert out.stderr.startswith(f"error: --timeout: {text!r} ")
        assert "90s, 15m, 2h, 1h30m" in out.stderr


def test_an_id_that_names_no_job_exits_1_and_nothing_is_waited_for(
    service: LiveService, package_uri: str
) -> None:
    ended = submit(service, package_uri, "wait_known", "--steps", "1")
    service.wait_state(ended)
    out = tui(service, ended, "wait_no_such_job")
    assert out.returncode == 1
    assert out.stdout == ""  # not even the ended job: nothing was waited for
    assert out.stderr.startswith(
        f"error: NOT_FOUND: No job 'wait_no_such_job' in project {PROJECT}"
    )
    assert len(out.stderr.splitlines()) == 1
    malformed = tui(service, "projects/x/wait_known")
    assert malformed.returncode == 2
    assert "projects/PROJECT/jobs/JOB_ID" in malformed.stderr


def test_ids_from_two_projects(service: LiveService, package_uri: str) -> None:
    here = submit(service, package_uri, "wait_here", "--steps", "1")
    there = submit(service, package_uri, "wait_there", "--steps", "1", project=OTHER_PROJECT)
    service.wait_state(here)
    service.wait_state(there, project=OTHER_PROJECT)
    out = tui(service, here, f"projects/{OTHER_PROJECT}/jobs/{there}")
    assert out.returncode == 0, out.stderr
    assert [line.split("  ")[:2] for line in out.stdout.splitlines()] == [
        [here, "SUCCEEDED"],
        [f"projects/{OTHER_PROJECT}/jobs/{there}", "SUCCEEDED"],
    ]
    # Without its project, the other project's job is not this project's.
    missing = tui(service, there)
    assert missing.returncode == 1 and f"in project {PROJECT}" in missing.stderr


def test_ctrl_c_exits_130_with_one_line_and_no_traceback(
    service: LiveService, package_uri: str, pty_runs: list[PtyRun]
) -> None:
    job_id = submit(service, package_uri, "wait_interrupted", *LONG)
    try:
        run = PtyRun(service, job_id)
        pty_runs.append(run)
        run.read_until(b"0 of 1 ended \xc2\xb7 " + job_id.encode())
        run.proc.send_signal(signal.SIGINT)
        status, stdout, stderr = run.finish()
        assert status == 130
        assert stdout == ""
        assert "Traceback" not in stderr
        # The terminal turns \n into \r\n.
        assert re.fullmatch(
            rf"Interrupted; not ended: {job_id} \(\w+\)\.\r\n", after_progress(stderr)
        )
    finally:
        service.client().cancel(job_id)


def cancelled_while_waiting(
    service: LiveService, package_uri: str, pty_runs: list[PtyRun], *args: str, **kw: Any
) -> tuple[str, tuple[int, str, str]]:
    """A job cancelled once ``jobs wait JOB *args`` shows it is waiting: its id, and the
    command's exit status, stdout and stderr."""
    job_id = submit(service, package_uri, "wait_notify", *LONG)
    run = PtyRun(service, job_id, *args, **kw)
    pty_runs.append(run)
    run.read_until(b"0 of 1 ended \xc2\xb7 " + job_id.encode())
    service.client().cancel(job_id)
    return job_id, run.finish()


def unknown_terminal_env() -> dict[str, str]:
    """This environment as a terminal that names itself to no one (so both OSCs go), outside
    tmux, not opted out: whatever terminal the tests themselves run in."""
    named = ("TMUX", "TUI_APP_NO_NOTIFY", "TERM_PROGRAM", "LC_TERMINAL", "KITTY_WINDOW_ID")
    return {**{k: v for k, v in os.environ.items() if k not in named}, "TERM": "xterm-256color"}


def test_notify_rings_the_bell_and_raises_a_desktop_notification(
    service: LiveService, package_uri: str, pty_runs: list[PtyRun]
) -> None:
    """The bytes the TUI's watch writes (``model/notify/terminal_notify``), to the terminal, not to
    stdout, which may be a log file."""
    env = unknown_terminal_env()
    job_id, (status, stdout, stderr) = cancelled_while_waiting(
        service, package_uri, pty_runs, "--notify", env=env
    )
    assert status == 4
    assert "\x1b" not in stdout and "\x07" not in stdout
    title = f"{job_id} CANCELLED"
    body = f"{title}: Job cancelled by user."  # the service's errorMessage: the cause
    assert f"\x1b]777;notify;{title};{body}\x1b\\\x1b]9;{body}\x1b\\\x07" in stderr

    # Inside tmux: the OSCs through its passthrough, the bell outside it, for tmux to see.
    job_id, (status, _, stderr) = cancelled_while_waiting(
        service, package_uri, pty_runs, "--notify", env={**env, "TMUX": "/tmp/tmux-1/default,1,0"}
    )
    body = f"{job_id} CANCELLED: Job cancelled by user."
    assert status == 4
    assert f"\x1bPtmux;\x1b\x1b]9;{body}\x1b\x1b\\\x1b\\\x07" in stderr

    # The opt-out: nothing but the progress line and its clearing.
    _, (status, _, stderr) = cancelled_while_waiting(
        service, package_uri, pty_runs, "--notify", env={**env, "TUI_APP_NO_NOTIFY": "1"}
    )
    assert status == 4 and after_progress(stderr) == ""


def test_notify_tells_nothing_of_a_job_that_had_ended_before_the_wait(
    service: LiveService, package_uri: str, pty_runs: list[PtyRun]
) -> None:
    """As the TUI's ``w`` on an ended job: the answer is already on the screen."""
    ended = submit(service, package_uri, "wait_notify_ended", "--steps", "1")
    service.wait_state(ended)
    env = unknown_terminal_env()
    run = PtyRun(service, ended, "--notify", env=env)
    pty_runs.append(run)
    status, stdout, stderr = run.finish()
    assert status == 0 and stdout.startswith(f"{ended}  SUCCEEDED  ")
    assert stderr == ""


def test_the_command_long_polls_the_service_rather_than_polling(
    service: LiveService, package_uri: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command run in this process on counted clients: the one jobs.get is the finder's;
    the wait itself is the service's long poll, cancelled once it is open."""
    job_id = submit(service, package_uri, "wait_long_poll", *LONG)
    conn = counting(service)

    def cancel_once_waiting() -> None:
        if conn.wait_for_call("wait_for_change", 60):
            service.client().cancel(job_id)

    canceller = threading.Thread(target=cancel_once_waiting)
    canceller.start()
    args = argparse.Namespace(job_ids=[job_id], any=False, timeout="5m", notify=False)
    try:
        status = wait_command(args, conn, PROJECT, Settings())
    finally:
        canceller.join()
    assert status == 4, capsys.readouterr()
    assert capsys.readouterr().out.startswith(f"{job_id}  CANCELLED  ")
    assert conn.calls["get"] == 1
    assert conn.calls["wait_for_change"] >= 1


def test_a_lost_service_is_a_warning_and_the_wait_resumes(
    restartable: tuple[list[LiveService], str], pty_runs: list[PtyRun]
) -> None:
    svcs, uri = restartable
    job_id = submit(svcs[0], uri, "wait_lost", *LONG)
    run = PtyRun(svcs[0], job_id)
    pty_runs.append(run)
    run.read_until(b"0 of 1 ended \xc2\xb7 " + job_id.encode())
    os.kill(svcs[0].proc.pid, signal.SIGKILL)
    svcs[0].proc.wait(10)
    run.read_until(f"warning: {job_id}: ".encode())
    port = int(svcs[0].url.rsplit(":", 1)[1])
    svcs.append(_start(svcs[0].state_dir, port=port))
    run.read_until(f"Resumed ({job_id}).".encode())
    svcs[-1].client().cancel(job_id)
    status, stdout, stderr = run.finish()
    assert status == 4, stderr
    assert stdout.startswith(f"{job_id}  CANCELLED  ")
    assert "Traceback" not in stderr
    said = [line for line in re.split(r"\r\n|\r", stderr) if line and "ended" not in line]
    said = [line.replace("\x1b[K", "") for line in said]
    warnings = [line for line in said if line.startswith("warning: ")]
    assert 1 <= len(warnings) <= 2, said  # once per cause of the outage, not once per retry
    assert f"Resumed ({job_id})." in said
