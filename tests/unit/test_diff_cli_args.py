"""``tui-app jobs diff``'s ids (``parse_side``) and what it writes to a terminal (issue 27)."""

from __future__ import annotations

import pytest

from tui_app.entry.diff_cli import TROUBLE, Side, _write, parse_side
from tui_app.entry.jobs_cli import Refused


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
