"""clean(): what a raw log message turns into before it reaches the screen."""

from __future__ import annotations

import time
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.style import Style

from tui_app.model.logs.log_text import MAX_CHARS, CleanLine, clean

MIB = 1 << 20


def test_plain_text_passes_through_untouched() -> None:
    text = "step=100 loss=0.1234 lr=3e-4 — ok ✓ 漢字 \ufffd"
    result = clean(text)
    assert result == CleanLine(text, (), 0)
    assert result.text is text  # the fast path copies nothing


@pytest.mark.parametrize(
    ("raw", "text", "spans"),
    [
        ("\x1b[31mred\x1b[0m plain", "red plain", ((0, 3, "red"),)),
        ("\x1b[1;32mok\x1b[m", "ok", ((0, 2, "bold green"),)),
        ("\x1b[91mhot\x1b[39m", "hot", ((0, 3, "bright_red"),)),
        ("\x1b[38;5;208morange", "orange", ((0, 6, "color(208)"),)),
        ("\x1b[38;2;255;136;0mrgb", "rgb", ((0, 3, "#ff8800"),)),
        ("\x1b[38:2::255:136:0mrgb", "rgb", ((0, 3, "#ff8800"),)),
        ("\x1b[44mbg\x1b[49m", "bg", ((0, 2, "on blue"),)),
        ("\x1b[2;3;4;7mx\x1b[22;23;24;27my", "xy", ((0, 1, "dim italic underline reverse"),)),
        ("\x1b[31ma\x1b[1mb", "ab", ((0, 1, "red"), (1, 2, "bold red"))),
        # Unknown parameters (blink, strike, bad colours) are ignored, not shown.
        ("\x1b[5;9mx\x1b[38;5;999my", "xy", ()),
    ],
)
def test_sgr_colours_become_spans(raw: str, text: str, spans: tuple[object, ...]) -> None:
    result = clean(raw)
    assert (result.text, result.spans) == (text, spans)
    for _, _, style in result.spans:
        Style.parse(style)  # every style string is one Rich understands


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        ("a\x1b[2Jb\x1b[Hc", "abc"),  # clear screen, cursor home
        ("\x1b[10;5Hx\x1b[Ky\x1b[1A\x1b[2K", "xy"),  # cursor moves, erase line
        ("\x1b[?25l\x1b[?1049hhidden cursor", "hidden cursor"),  # private modes
        ("\x1b]0;pwned title\x07after", "after"),  # OSC title, BEL-terminated
        ("\x1b]2;t\x1b\\after", "after"),  # OSC, ST-terminated
        ("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),  # hyperlink: text kept
        ("\x1b]52;c;ZXZpbA==\x07clip", "clip"),  # clipboard write
        ("\x1bPq#0;2;0;0;0\x1b\\sixel", "sixel"),  # DCS
        ("\x1b_apc\x1b\\\x1b^pm\x1b\\\x1bXsos\x1b\\done", "done"),
        ("\x1b(B\x1b7\x1b8\x1bM\x1bcchars", "chars"),  # charset, save/restore, reset
        ("trailing escape\x1b", "trailing escape"),
    ],
)
def test_other_escapes_are_stripped(raw: str, text: str) -> None:
    assert clean(raw) == CleanLine(text, (), 0)


def test_tqdm_redraws_collapse_to_the_last_frame() -> None:
    raw = "  5%|█ | 1/20\r 10%|██ | 2/20\r100%|██████████| 20/20"
    assert clean(raw).text == "100%|██████████| 20/20"
    assert clean("50%|█████|\r").text == "50%|█████|"  # a trailing \r alone is dropped
    assert clean("done\r\n"[:-1]).text == "done"  # CRLF
    # leave=False clears the bar with spaces: the last frame with content still shows.
    assert clean("90%|█████████|\r              \r").text == "90%|█████████|"
    # Colours set before the \r are still in force where the last frame starts.
    result = clean("\x1b[32m 10%\r100%")
    assert (result.text, result.spans) == ("100%", ((0, 4, "green"),))


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        ("bell\x07", "bell^G"),
        ("nul\x00", "nul^@"),
        ("del\x7f", "del^?"),
        ("vt\x0bff\x0c", "vt^Kff^L"),
        ("nl\ninside", "nl^Jinside"),
        ("c1 csi \x9b31m", "c1 csi <9b>31m"),
        ("nel\x85", "nel<85>"),
        ("zero\u200bwidth", "zero<U+200B>width"),
        ("bidi \u202eevil", "bidi <U+202E>evil"),
        ("line\u2028sep", "line<U+2028>sep"),
        ("lone \ud800 surrogate", "lone \ufffd surrogate"),
    ],
)
def test_controls_are_shown_escaped(raw: str, text: str) -> None:
    assert clean(raw).text == text


def test_tabs_expand_to_stops_of_eight() -> None:
    assert clean("a\tb") == CleanLine("a       b", (), 0)
    assert clean("12345678\tx").text == "12345678        x"
    assert clean("\t\tx").text == " " * 16 + "x"
    assert clean("\x1b[31mab\x1b[0m\tc").text == "ab      c"  # escapes take no columns


def test_backspace_removes_the_previous_character() -> None:
    assert clean("abc\x08\x08d").text == "ad"
    assert clean("\x08\x08start").text == "start"
    result = clean("\x1b[31mred\x08\x08\x08\x1b[0mplain")
    assert (result.text, result.spans) == ("plain", ())


def test_a_one_mib_line_is_cut_and_counted() -> None:
    plain = "x" * MIB
    started = time.perf_counter()
    result = clean(plain)
    elapsed = time.perf_counter() - started
    assert len(result.text) == MAX_CHARS
    assert result.truncated == MIB - MAX_CHARS
    coloured = "\x1b[31m" + "y" * MIB + "\x1b[0m"
    started = time.perf_counter()
    result = clean(coloured)
    elapsed_coloured = time.perf_counter() - started
    assert (len(result.text), result.truncated) == (MAX_CHARS, MIB - MAX_CHARS)
    assert result.spans == ((0, MAX_CHARS, "red"),)
    flood = "\x1b[K" * (MIB // 3)
    started = time.perf_counter()
    result = clean(flood)
    elapsed_flood = time.perf_counter() - started
    assert result.text == ""
    print(
        f"\nclean() of 1 MiB: plain {elapsed * 1e3:.1f} ms,"
        f" coloured {elapsed_coloured * 1e3:.1f} ms, escape flood {elapsed_flood * 1e3:.1f} ms"
    )


def test_max_chars_counts_what_is_shown() -> None:
    assert clean("\x1b[1m" + "ab" * 10 + "\x1b[0m", max_chars=5) == CleanLine(
        "ababa", ((0, 5, "bold"),), 15
    )
    # Escaped forms are not split: what doesn't fit whole is counted as not shown.
    assert clean("\x07" * 4, max_chars=3) == CleanLine("^G", (), 3)
    assert clean("x\ty", max_chars=4) == CleanLine("x", (), 2)
    assert clean("x\ty", max_chars=8) == CleanLine("x       ", (), 1)


CONTROL_HEAVY = st.text(
    alphabet=st.one_of(
        st.characters(),
        st.sampled_from(list("\x1b[]();?:0123456789mKHJP\\X^_\r\t\x08\x07\x9b\x9c\x9d\u200b")),
    ),
    max_size=200,
)


@settings(max_examples=500, deadline=None)
@given(text=CONTROL_HEAVY, max_chars=st.integers(min_value=0, max_value=300))
def test_no_control_character_ever_reaches_the_screen(text: str, max_chars: int) -> None:
    result = clean(text, max_chars)
    assert not [c for c in result.text if unicodedata.category(c) in ("Cc", "Cf")]
    assert len(result.text) <= max_chars
    assert result.truncated >= 0
    end = 0
    for start, stop, style in result.spans:
        assert end <= start < stop <= len(result.text)
        assert style
        end = stop


@settings(max_examples=300, deadline=None)
@given(text=st.text())
def test_any_text_cleans_without_raising(text: str) -> None:
    result = clean(text)
    assert not [c for c in result.text if unicodedata.category(c) in ("Cc", "Cf")]
