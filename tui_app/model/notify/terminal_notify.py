"""A job's end told through the terminal itself: the bell and a desktop notification.

The bytes reach the person wherever the terminal is, over SSH and through tmux, with nothing
installed on either machine: the terminal emulator turns them into its own alert. Two desktop
notification sequences are in use and no terminal can be asked which one it reads, so both go
out, unless the environment names a terminal known to read one of them
(:func:`desktop_sequences`); a terminal ignores an OSC it does not know.

- ``OSC 777 ; notify ; title ; body ST``: urxvt's notify extension, with a title.
- ``OSC 9 ; body ST``: iTerm2's, body only. ConEmu and Windows Terminal read ``OSC 9 ; <digits>
  ;`` as commands of their own (progress bars, the working folder), so a body never holds a
  semicolon (see :func:`clean_text`).

Every sequence ends with ST (``ESC \\``), never BEL, so the only BEL in the stream is the bell
itself: ``bell=False`` makes no sound on a terminal that takes a stray BEL for one.

Inside tmux an OSC written by the program stops at tmux, which does not forward unknown ones.
tmux forwards what is wrapped in its passthrough, ``ESC P tmux ; <sequence, every ESC doubled>
ESC \\``, to the outer terminal when the pane's ``allow-passthrough`` option is on (tmux 3.3
and later; ``man tmux``), and drops it silently otherwise. The BEL stays outside the wrapper:
tmux itself must see it to set the window's bell flag (``monitor-bell``, ``bell-action``), which
is the alert a person in another window sees in the status line, and tmux passes the bell on
to the outer terminal by itself.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Mapping
from typing import Final

__all__ = [
    "DESKTOP_SEQUENCES",
    "NOTIFY_CHANNELS",
    "OPT_OUT_VARIABLE",
    "clean_text",
    "desktop_sequences",
    "in_tmux",
    "notification_text",
    "opted_out",
    "terminal_bytes",
    "tmux_passthrough",
]

NOTIFY_CHANNELS: Final = ("toast", "flash", "bell", "desktop")
"""Where a watched job's end is told: a toast in the app, the row's flash, the terminal's bell,
a desktop notification through the terminal. ``config/settings.py`` keeps its own copy (the
configuration imports nothing of ours); a unit test holds the two equal."""

OPT_OUT_VARIABLE: Final = "TUI_APP_NO_NOTIFY"
"""Set and not empty: no bell and no desktop notification, whatever the settings say, in the
spirit of ``NO_COLOR`` (a shared machine, a screen recording). Toasts and flashes stay: they
never leave the app's own screen."""

ESC: Final = "\x1b"
BEL: Final = "\x07"
ST: Final = ESC + "\\"
OSC: Final = ESC + "]"

TITLE_LIMIT: Final = 80
BODY_LIMIT: Final = 240
"""Desktop notifications show a line or two; kitty's notification protocol caps a payload at
2048 bytes. A job's cause is one line already (``model/logs/failure_cause``); longer text is cut."""

DESKTOP_SEQUENCES: Final = ("777", "9")
"""Both desktop notification OSCs, OSC 777 first: what goes out when the terminal is unknown."""

_READS_777: Final = ("777",)
_READS_9: Final = ("9",)

_CONTROLS: Final = re.compile(r"[\x00-\x1f\x7f-\x9f]+")
"""C0 controls (ESC, BEL, newlines), DEL and the C1 controls: 0x9c is an 8-bit ST and 0x9d an
8-bit OSC, which some terminals still obey, so any of them could end or open a sequence."""


def in_tmux(environ: Mapping[str, str]) -> bool:
    """True when the program runs in a tmux pane: tmux sets ``TMUX`` (its socket, the server's
    pid, the session) in every pane's environment."""
    return bool(environ.get("TMUX"))


def opted_out(environ: Mapping[str, str]) -> bool:
    """True when :data:`OPT_OUT_VARIABLE` is set and not empty (``NO_COLOR``'s rule: an empty
    value is the same as unset, so ``TUI_APP_NO_NOTIFY= tui-app`` turns nothing off)."""
    return bool(environ.get(OPT_OUT_VARIABLE))


def desktop_sequences(environ: Mapping[str, str]) -> tuple[str, ...]:
    """Which desktop notification OSCs to send: one where the terminal is known, else both.

    Terminals that read both OSC 777 and OSC 9 show a notification for each: WezTerm documents
    both (its ``notification_handling`` option), and Ghostty parses both into the same
    notification. They get OSC 777 alone (it has a title), and so does foot (OSC 777 is the one
    its own control-sequence list has always had; its README lists OSC 9 too). iTerm2 and kitty
    read OSC 9 and not OSC 777: they get OSC 9 alone.

    Known by what the terminal puts in the environment: ``TERM_PROGRAM`` (``WezTerm``,
    ``ghostty``, ``iTerm.app``), ``TERM`` (``wezterm``, ``xterm-ghostty``, ``foot``,
    ``xterm-kitty``: this one crosses SSH), ``LC_TERMINAL=iTerm2`` (ssh forwards ``LC_*``)
    and ``KITTY_WINDOW_ID``. Inside tmux both go: the variables are those of the terminal that
    started the tmux server, and the one attached now may be another.
    """
    if in_tmux(environ):
        return DESKTOP_SEQUENCES
    program = environ.get("TERM_PROGRAM", "")
    term = environ.get("TERM", "")
    if program in ("WezTerm", "ghostty") or term in ("wezterm", "xterm-ghostty"):
        return _READS_777
    if term in ("foot", "foot-extra"):
        return _READS_777
    if program == "iTerm.app" or environ.get("LC_TERMINAL") == "iTerm2":
        return _READS_9
    if term == "xterm-kitty" or environ.get("KITTY_WINDOW_ID"):
        return _READS_9
    return DESKTOP_SEQUENCES


def clean_text(text: str, limit: int) -> str:
    """``text`` safe inside an OSC field, on one line, at most ``limit`` characters.

    Control characters become spaces and runs of spaces one space, so no ESC, BEL or 8-bit ST
    can end the sequence early and no newline splits it. A semicolon becomes a comma: it
    separates OSC 777's title from its body, and a body that starts ``<digits>;`` would be
    one of ConEmu's OSC 9 commands rather than a message. Unicode format characters (bidi
    overrides) go too: they would reorder the text the person reads.
    """
    text = _CONTROLS.sub(" ", text)
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    text = " ".join(text.replace(";", ",").split())
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


def notification_text(job_id: str, state: str, cause: str | None) -> tuple[str, str]:
    """The (title, body) of a desktop notification for a job that ended.

    Both name the job and its state: OSC 9 shows only the body, OSC 777 both. A failed or
    cancelled job's cause (one line, as the list's ERROR column shows it) follows in the body.
    """
    title = f"{job_id} {state}"
    cause = (cause or "").strip()
    body = f"{job_id} {state}: {cause}" if cause else title
    return clean_text(title, TITLE_LIMIT), clean_text(body, BODY_LIMIT)


def tmux_passthrough(sequence: str) -> str:
    """``sequence`` wrapped in tmux's passthrough: ``ESC P tmux ;`` + the sequence with every
    ESC doubled + ``ESC \\``. tmux undoubles it and writes it to the outer terminal when the
    pane's ``allow-passthrough`` is on."""
    return f"{ESC}Ptmux;{sequence.replace(ESC, ESC + ESC)}{ST}"


def terminal_bytes(
    title: str,
    body: str,
    *,
    bell: bool,
    desktop: bool,
    tmux: bool,
    sequences: Collection[str] = DESKTOP_SEQUENCES,
) -> str:
    """BEL, OSC 777 (notify;title;body) and OSC 9 (body); inside tmux the OSCs wrapped in
    tmux's passthrough (ESC P tmux; ... ESC \\ with every ESC doubled) and the BEL left outside
    it, so tmux itself sees the bell and raises the window's alert. Text is cleaned of control
    characters and of what would end the sequence.

    Args:
        title: OSC 777's title (OSC 9 has none).
        body: both sequences' message.
        bell: write the BEL.
        desktop: write the two OSCs.
        tmux: the program runs inside tmux (:func:`in_tmux`).
        sequences: which of ``"777"`` and ``"9"`` to send (:func:`desktop_sequences`);
            both by default, OSC 777 first.

    Returns:
        The text to write to the terminal in one write, "" when neither is asked for: the
        OSCs first, then the BEL.
    """
    out: list[str] = []
    if desktop:
        title = clean_text(title, TITLE_LIMIT)
        body = clean_text(body, BODY_LIMIT)
        chosen = [
            sequence
            for number, sequence in (
                ("777", f"{OSC}777;notify;{title};{body}{ST}"),
                ("9", f"{OSC}9;{body}{ST}"),
            )
            if number in sequences
        ]
        for sequence in chosen:
            out.append(tmux_passthrough(sequence) if tmux else sequence)
    if bell:
        out.append(BEL)
    return "".join(out)
