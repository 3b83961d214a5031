"""A watched job's end raises tmux's alert on the app's window (issue 27, "Done when").

The real ``tui-app`` runs in one window of a real tmux server (its own socket, no config);
the user is in another window. ``w`` watches a running job, the job is cancelled through the
API, and tmux itself says the app's window rang: ``#{window_bell_flag}`` is 1 there, and the
pane shows the toast. Skipped where tmux is not installed.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.live_service import LiveService, basic_job

LONG = ("--steps", "100000", "--sleep", "0.1")
TERMINAL_NAMES = ("TERM_PROGRAM", "LC_TERMINAL", "KITTY_WINDOW_ID")
"""What names the terminal the tests run in: left out, the app sends both desktop OSCs."""

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


class Tmux:
    """One private tmux server (``-L``), without the user's configuration (``-f /dev/null``)."""

    def __init__(self, socket: str, env: dict[str, str]) -> None:
        self.socket = socket
        self.env = env

    def __call__(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, "-f", os.devnull, *args],
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        )
        return done.stdout

    def wait(self, condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
        """Ask tmux until ``condition`` holds; fail naming ``what`` (and the pane) after it."""
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"no {what} within {timeout}s:\n{self.pane()}")
            time.sleep(0.1)

    def pane(self) -> str:
        return self("capture-pane", "-p", "-t", "t:app")

    def bell_flags(self) -> dict[str, str]:
        lines = self("list-windows", "-t", "t", "-F", "#{window_name} #{window_bell_flag}")
        return dict(line.split(" ", 1) for line in lines.splitlines())


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    config = tmp_path / "config"
    config.mkdir()
    (config / "settings.yaml").write_text("refresh_seconds: 0.3\n")
    drop = ("TMUX", "TMUX_PANE", "TUI_APP_NO_NOTIFY", "COLUMNS", "LINES", *TERMINAL_NAMES)
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(TUI_APP_CONFIG_DIR=str(config), TERM="xterm-256color")
    server = Tmux(f"tui-app-test-{os.getpid()}-{time.monotonic_ns()}", env)
    yield server
    subprocess.run(
        ["tmux", "-L", server.socket, "kill-server"], env=env, capture_output=True, timeout=30
    )


@pytest.mark.parametrize("opted_out", [False, True], ids=["bell", "TUI_APP_NO_NOTIFY"])
def test_the_bell_flags_the_apps_window_while_the_user_is_in_another(
    service: LiveService, package_uri: str, tmux: Tmux, opted_out: bool
) -> None:
    project = f"notify-tmux-{int(opted_out)}"
    job_id = "watched_20261122_090000"
    client = service.client(project)
    client.create(basic_job(job_id, package_uri, *LONG))
    service.wait_state(job_id, ("RUNNING",), project=project)
    app = [sys.executable, "-m", "tui_app", "--state-dir", str(service.state_dir)]
    app += ["--project", project]
    if opted_out:  # no bell, no desktop notification: the toast alone
        app = ["env", "TUI_APP_NO_NOTIFY=1", *app]
    tmux("new-session", "-d", "-s", "t", "-n", "app", "-x", "120", "-y", "40", shlex.join(app))
    tmux.wait(lambda: job_id in tmux.pane() and "RUNNING" in tmux.pane(), "running job listed")
    tmux("send-keys", "-t", "t:app", "w")
    tmux.wait(lambda: "Watching" in tmux.pane(), "toast that w watches it")

    tmux("new-window", "-d", "-t", "t", "-n", "other")
    tmux("select-window", "-t", "t:other")  # the user looks elsewhere
    assert tmux.bell_flags() == {"app": "0", "other": "0"}

    client.cancel(job_id)
    if opted_out:
        tmux.wait(lambda: f"{job_id} CANCELLED" in tmux.pane(), "toast of the job's end")
        assert tmux.bell_flags() == {"app": "0", "other": "0"}
        return
    tmux.wait(lambda: tmux.bell_flags()["app"] == "1", "bell flag on the app's window")
    assert tmux.bell_flags()["other"] == "0"
    # The toast on the app's own screen (drawn with the next frame, after the bell's write).
    tmux.wait(lambda: f"{job_id} CANCELLED" in tmux.pane(), "toast of the job's end")
