"""``tui-app jobs diff``'s ids (``parse_side``) and what it writes to a terminal (issue 27)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.terminal_signals import sigint_as_in_a_terminal
from tui_app.entry.cli_common import Refused
from tui_app.entry.diff_cli import TROUBLE, Side, _write, parse_side


@pytest.mark.parametrize(
    ("text", "side"),
    [
        ("mnist_2026", Side("p", "mnist_2026")),
        ("mnist/3", Side("p", "mnist", "3")),
        ("projects/q/jobs/mnist", Side("q", "mnist")),
        ("projects/q/jobs/mnist/12", Side("q", "mnist", "12")),
        (" mnist ", Side("p", "mnist")),
    ],
)
def test_sides(text: str, side: Side) -> None:
    assert parse_side(text, "p") == side


@pytest.mark.parametrize(
    "text", ["a/b/c", "mnist/", "/3", "projects/q", "projects/q/jobs", "projects//jobs/x"]
)
def test_what_is_no_id_is_trouble(text: str) -> None:
    with pytest.raises(Refused) as caught:
        parse_side(text, "p")
    assert caught.value.status == TROUBLE


def test_a_terminal_gets_no_control_characters(capsys: pytest.CaptureFixture[str]) -> None:
    text = "--- p/a\n+++ p/b\n-  - x\x1b]0;owned\x07\n+  - y\x1b[2J\n"
    _write(text, terminal=True)
    shown = capsys.readouterr().out
    assert "\x1b" not in shown and "\x07" not in shown
    assert shown.startswith("--- p/a\n+++ p/b\n-  - x") and shown.endswith("\n")
    _write(text, terminal=False)  # a pipe gets the diff as it is
    assert capsys.readouterr().out == text


def _diff_on(endpoint: str, config: Path) -> subprocess.Popen[str]:
    (config / "settings.yaml").write_text(
        f"profiles:\n  there:\n    kind: url\n    endpoint: {endpoint}\n"
    )
    return subprocess.Popen(
        [sys.executable, "-m", "tui_app", "jobs", "diff", "a", "b", "--profile", "there"],
        env={**os.environ, "TUI_APP_CONFIG_DIR": str(config)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_as_in_a_terminal,
    )


def test_a_service_that_does_not_answer_is_trouble(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = _diff_on(f"http://127.0.0.1:{port}", tmp_path)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, err
    assert "does not answer" in err and out == ""


def test_ctrl_c_exits_130_without_a_traceback(tmp_path: Path) -> None:
    with socket.socket() as server:  # a service that takes the call and never answers
        server.bind(("127.0.0.1", 0))
        server.listen()
        proc = _diff_on(f"http://127.0.0.1:{server.getsockname()[1]}", tmp_path)
        server.settimeout(60)
        conn, _ = server.accept()  # the diff is now waiting on its first call
        with conn:
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and out == ""
