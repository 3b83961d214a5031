"""The bytes a job's end writes to the terminal: BEL, OSC 777, OSC 9, tmux's passthrough."""

from __future__ import annotations

import pytest

from tui_app.config import settings as settings_module
from tui_app.model.notify import terminal_notify
from tui_app.model.notify.terminal_notify import (
    clean_text,
    in_tmux,
    notification_text,
    opted_out,
    terminal_bytes,
)

ESC = "\x1b"
BEL = "\x07"
ST = "\x1b\\"


def test_bell_alone_is_one_bel() -> None:
    assert terminal_bytes("t", "b", bell=True, desktop=False, tmux=False) == BEL
    # Inside tmux the bell is still bare: tmux must see it to flag the window.
    assert terminal_bytes("t", "b", bell=True, desktop=False, tmux=True) == BEL
    assert terminal_bytes("t", "b", bell=False, desktop=False, tmux=True) == ""


def test_desktop_is_osc_777_then_osc_9_ended_by_st() -> None:
    out = terminal_bytes("job1 FAILED", "job1 FAILED: boom", bell=True, desktop=True, tmux=False)
    assert out == (
        f"{ESC}]777;notify;job1 FAILED;job1 FAILED: boom{ST}{ESC}]9;job1 FAILED: boom{ST}{BEL}"
    )
    quiet = terminal_bytes("t", "b", bell=False, desktop=True, tmux=False)
    assert BEL not in quiet  # ST, never BEL, ends the OSCs: no bell unless asked for
    assert quiet == f"{ESC}]777;notify;t;b{ST}{ESC}]9;b{ST}"


def test_tmux_wraps_each_osc_with_every_esc_doubled_and_leaves_the_bel_outside() -> None:
    out = terminal_bytes("t", "b", bell=True, desktop=True, tmux=True)
    assert out == (
        f"{ESC}Ptmux;{ESC}{ESC}]777;notify;t;b{ESC}{ESC}\\{ST}"
        f"{ESC}Ptmux;{ESC}{ESC}]9;b{ESC}{ESC}\\{ST}"
        f"{BEL}"
    )
    assert out.endswith(ST + BEL)  # the BEL is after the last passthrough closes


def test_text_cannot_end_or_split_the_sequence() -> None:
    nasty_title = f"a{ESC}\\b{BEL}c\x9cd;e\nf"
    nasty_body = f"x{ESC}]0;pwned{BEL}y\r\n\tz\x9d;w\u202e"
    out = terminal_bytes(nasty_title, nasty_body, bell=False, desktop=True, tmux=False)
    assert (
        out == f"{ESC}]777;notify;a \\b c d,e f;x ]0,pwned y z ,w{ST}{ESC}]9;x ]0,pwned y z ,w{ST}"
    )
    # Exactly the four ESCs of two OSC openers and two STs, nothing from the text.
    assert out.count(ESC) == 4 and BEL not in out and "\x9c" not in out


def test_clean_text_cuts_long_text_and_keeps_unicode() -> None:
    assert clean_text("  two   words ", 20) == "two words"
    assert clean_text("é✓ ñ", 10) == "é✓ ñ"
    cut = clean_text("x" * 50, 10)
    assert cut == "x" * 9 + "…" and len(cut) == 10


def test_notification_text_names_job_and_state_in_both() -> None:
    assert notification_text("mnist_1", "SUCCEEDED", None) == (
        "mnist_1 SUCCEEDED",
        "mnist_1 SUCCEEDED",
    )
    title, body = notification_text("mnist_1", "FAILED", "ValueError: bad lr\nmore")
    assert title == "mnist_1 FAILED"
    assert body == "mnist_1 FAILED: ValueError: bad lr more"
    _, long_body = notification_text("j", "FAILED", "e" * 1000)
    assert len(long_body) == terminal_notify.BODY_LIMIT and long_body.endswith("…")


@pytest.mark.parametrize(
    ("environ", "tmux", "out"),
    [
        ({}, False, False),
        ({"TMUX": "/tmp/tmux-1000/default,123,0"}, True, False),
        ({"TMUX": ""}, False, False),
        ({"TUI_APP_NO_NOTIFY": "1"}, False, True),
        ({"TUI_APP_NO_NOTIFY": ""}, False, False),  # empty is unset, as NO_COLOR has it
    ],
)
def test_environment(environ: dict[str, str], tmux: bool, out: bool) -> None:
    assert in_tmux(environ) is tmux
    assert opted_out(environ) is out


def test_settings_know_the_same_channels() -> None:
    assert settings_module.NOTIFY_CHANNELS == terminal_notify.NOTIFY_CHANNELS
    assert terminal_notify.OPT_OUT_VARIABLE == "TUI_APP_NO_NOTIFY"


@pytest.mark.parametrize(
    ("environ", "sequences"),
    [
        ({}, ("777", "9")),  # unknown: both
        ({"TERM": "xterm-256color", "TERM_PROGRAM": "vscode"}, ("777", "9")),
        ({"TERM_PROGRAM": "WezTerm"}, ("777",)),  # reads both: one notification, with a title
        ({"TERM": "wezterm"}, ("777",)),
        ({"TERM_PROGRAM": "ghostty"}, ("777",)),
        ({"TERM": "xterm-ghostty"}, ("777",)),  # over SSH: TERM is what crosses
        ({"TERM": "foot"}, ("777",)),
        ({"TERM_PROGRAM": "iTerm.app"}, ("9",)),
        ({"LC_TERMINAL": "iTerm2"}, ("9",)),
        ({"TERM": "xterm-kitty"}, ("9",)),
        ({"KITTY_WINDOW_ID": "3"}, ("9",)),
        # Inside tmux the attached terminal may not be the one that started the server: both.
        ({"TMUX": "/tmp/t,1,0", "TERM_PROGRAM": "tmux", "KITTY_WINDOW_ID": "3"}, ("777", "9")),
    ],
)
def test_desktop_sequences_one_where_the_terminal_is_known(
    environ: dict[str, str], sequences: tuple[str, ...]
) -> None:
    assert terminal_notify.desktop_sequences(environ) == sequences


def test_terminal_bytes_sends_only_the_sequences_asked_for() -> None:
    only_777 = terminal_bytes("t", "b", bell=False, desktop=True, tmux=False, sequences=("777",))
    assert only_777 == f"{ESC}]777;notify;t;b{ST}"
    only_9 = terminal_bytes("t", "b", bell=True, desktop=True, tmux=True, sequences=("9",))
    assert only_9 == f"{ESC}Ptmux;{ESC}{ESC}]9;b{ESC}{ESC}\\{ST}{BEL}"
