"""Make one raw log message safe to draw: colours kept as spans, every other control defused.

Trainer output is written for a terminal: SGR colours, tqdm's ``\\r`` redraws, cursor moves,
screen clears, window titles. Passed to the screen as is, those would move Textual's cursor
and corrupt the display (and a hostile job could retitle the user's terminal), and Textual's
``Log`` would show ``\\r`` as ``�`` (it replaces the character rather than redrawing the line).
:func:`clean` turns a message into text that holds only printable characters, plus style spans
for the SGR colours it had:

- SGR colours/bold/dim/italic/underline/reverse become ``(start, end, style)`` spans with Rich
  style strings (``"bold red"``, ``"color(208)"``, ``"#ff8800"``, ``"on blue"``); other SGR
  parameters are ignored;
- every other escape sequence (CSI, OSC, DCS/SOS/PM/APC strings, two-character escapes) is
  dropped;
- ``\\r`` redraws collapse to the last frame that has content (tqdm's final bar), keeping the
  colours in force where that frame starts;
- backspace removes the character before it; a tab becomes spaces up to the next stop of 8;
- other C0/C1 controls and DEL are shown in caret or hex form (``^G``, ``^[``, ``^?``,
  ``<9b>``), and invisible format characters (zero-width spaces, bidi overrides) and line
  separators as ``<U+202E>``; lone surrogates become ``U+FFFD``.

Lines of plain printable text take a fast path (one ``str.isprintable`` call); the rest go
through one regex scan that stops as soon as ``max_chars`` characters are shown, so a 1 MiB
line costs about what its first ``max_chars`` characters cost.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import Final, NamedTuple

__all__ = ["MAX_CHARS", "TAB_SIZE", "CleanLine", "clean"]

MAX_CHARS: Final = 20_000
"""Characters shown of one line by default; the rest is counted in ``CleanLine.truncated``."""
TAB_SIZE: Final = 8

Span = tuple[int, int, str]


class CleanLine(NamedTuple):
    """A message ready to draw (a tuple: it is built once per line, so it must be cheap)."""

    text: str
    """What is shown: printable characters only."""
    spans: tuple[Span, ...]
    """``(start, end, style)`` from SGR codes, sorted and non-overlapping; styles are Rich
    style strings."""
    truncated: int
    """How many characters past ``max_chars`` were not shown (0 when none). Escape sequences
    are not counted; past a few thousand of them the count is an estimate."""


_NO_SPANS: tuple[Span, ...] = ()

# One SGR sequence, and a run of them (only the state after a run matters).
_SGR = r"\x1b\[[0-9;:]*m"
# Every other escape sequence. A lone ESC (before a control or at the end) is dropped too.
_OTHER_ESC = (
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: cursor moves, clears (\x1b[2J, \x1b[K), modes
    r"|\x1b\][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC: titles, hyperlinks, clipboard
    r"|\x1b[PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # DCS, SOS, PM, APC strings
    r"|\x1b[ -/]+[0-~]?"  # nF: charset selection (\x1b(B)
    r"|\x1b[0-~]"  # Fp/Fe/Fs: \x1b7, \x1bM, \x1bc
    r"|\x1b"
)
_TOKEN = re.compile(
    rf"(?P<sgr>(?:{_SGR})+)"
    rf"|(?P<esc>(?:(?!{_SGR})(?:{_OTHER_ESC}))+)"
    r"|(?P<tab>\t+)"
    r"|(?P<bs>\x08+)"
    r"|(?P<ctl>[\x00-\x07\x0a-\x1a\x1c-\x1f\x7f-\x9f]+)"
)
_ANY_ESC = re.compile(rf"(?:{_SGR}|{_OTHER_ESC})+")
_SPECIAL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_SGR_PARAMS = re.compile(r"\x1b\[([0-9;:]*)m")

# Caret form for C0 and DEL (^@ … ^_, ^?), hex for C1 (<80> … <9f>).
_CONTROL_CHARS: Final[dict[str, str]] = {
    **{chr(c): "^" + chr(c + 64) for c in range(0x20)},
    "\x7f": "^?",
    **{chr(c): f"<{c:02x}>" for c in range(0x80, 0xA0)},
}

# Runs of SGR codes longer than this only have their tail parsed (a flood can't stall us);
# before the last frame of a \r redraw, only this much is searched for the colours in force.
_SGR_RUN_TAIL = 4096
_CARRY_WINDOW = 65_536
# Source scanned past 3 × max_chars before the rest just counts as truncated. What is cut is
# counted exactly up to _EXACT_ESCAPES escape sequences, else estimated from a sample.
_SCAN_SLACK = 65_536
_EXACT_COUNT = 65_536
_EXACT_ESCAPES = 2048
# A line of nothing but empty \r frames gives up after this many.
_MAX_EMPTY_FRAMES = 64

_NAMES: Final = ("black", "red", "green", "yellow", "blue", "magenta", "cyan", "white")

# SGR state: (fg, bg, bold, dim, italic, underline, reverse).
_State = tuple[str, str, bool, bool, bool, bool, bool]
_PLAIN: Final[_State] = ("", "", False, False, False, False, False)
_style_strings: dict[_State, str] = {}


def clean(text: str, max_chars: int = MAX_CHARS) -> CleanLine:
    """Make ``text`` safe and cheap to draw (see the module docstring for what happens to what).

    Args:
        text: One raw message (already split on ``\\n``; invalid bytes already ``U+FFFD``).
        max_chars: Characters to show at most; the rest is counted, not kept.

    Returns:
        The cleaned line. It never raises, whatever ``text`` holds.
    """
    max_chars = max(0, max_chars)
    if text.isprintable():
        if len(text) <= max_chars:
            return CleanLine(text, _NO_SPANS, 0)
        return CleanLine(text[:max_chars], _NO_SPANS, len(text) - max_chars)
    state = _PLAIN
    if "\r" in text:
        text, state = _last_frame(text)
    return _Cleaner(max_chars, state).run(text)


def _last_frame(text: str) -> tuple[str, _State]:
    """The text after the last ``\\r`` that is followed by content, and the SGR state there.

    A frame with nothing but spaces and escapes (tqdm's ``leave=False`` clearing the bar) does
    not count as content, so the last real frame shows.
    """
    end = len(text)
    for _ in range(_MAX_EMPTY_FRAMES):
        start = text.rfind("\r", 0, end) + 1
        frame = text[start:end]
        if start == 0 or _has_content(frame):
            break
        end = start - 1
    else:
        start = end = len(text)
        frame = ""
    if start == 0:
        return frame, _PLAIN
    before = text[max(0, start - _CARRY_WINDOW) : start]
    state = _PLAIN
    if "\x1b[" in before:
        state = _apply_sgr_run(_PLAIN, "".join(m[0] for m in _SGR_PARAMS.finditer(before)))
    return frame, state


def _has_content(frame: str) -> bool:
    """Whether ``frame`` shows anything but spaces (a huge frame is assumed to)."""
    if len(frame) > _CARRY_WINDOW:
        return True
    if "\x1b" in frame:
        frame = _ANY_ESC.sub("", frame)
    return not frame.isspace() and frame != ""


class _Cleaner:
    """One pass over one frame: the shown pieces, their SGR spans, and how much is shown."""

    __slots__ = ("max_chars", "out", "shown", "spans", "state", "style")

    def __init__(self, max_chars: int, state: _State) -> None:
        self.max_chars = max_chars
        self.out: list[str] = []
        self.shown = 0
        self.spans: list[Span] = []
        self.state = state
        self.style = _style_string(state)

    def run(self, text: str) -> CleanLine:
        size = len(text)
        # Invisible floods (a megabyte of escape sequences) stop being scanned here.
        scan_end = min(size, 3 * self.max_chars + _SCAN_SLACK)
        pos = 0
        while pos < size:
            room = self.max_chars - self.shown
            if pos >= scan_end or room <= 0:
                return self._cut(text, pos)
            # Find the next control character (a C-speed charset scan), looking no further
            # than the room left: plain text past that is cut anyway.
            window = min(size, pos + room)
            found = _SPECIAL.search(text, pos, window)
            special = found.start() if found is not None else window
            if special > pos:
                segment = text[pos:special]
                if segment.isprintable():  # it fits: special is at most ``room`` away
                    shown, used = segment, len(segment)
                else:
                    shown, used = _fit(segment, room, _shown_char)
                self._emit(shown)
                pos += used
                if used < len(segment) or (found is None and pos < size):
                    return self._cut(text, pos)
                continue
            match = _TOKEN.match(text, pos, scan_end)
            assert match is not None  # every control character starts a token
            token, kind, start, pos = match[0], match.lastgroup, pos, match.end()
            if kind == "sgr":
                self._set_state(_apply_sgr_run(self.state, token))
            elif kind == "tab":
                spaces = TAB_SIZE - self.shown % TAB_SIZE
                count = 0
                while count < len(token) and spaces + TAB_SIZE * count <= room:
                    count += 1
                self._emit(" " * (spaces + TAB_SIZE * (count - 1)) if count else "")
                if count < len(token):
                    return self._cut(text, start + count)
            elif kind == "bs":
                self._backspace(len(token))
            elif kind == "ctl":
                shown, used = _fit(token, room, _CONTROL_CHARS.__getitem__)
                self._emit(shown)
                if used < len(token):
                    return self._cut(text, start + used)
            # kind == "esc": dropped
        return self._result(0)

    def _emit(self, piece: str) -> None:
        """Show ``piece`` (the caller made sure it fits in ``max_chars``)."""
        if piece:
            start = self.shown
            self.out.append(piece)
            self.shown = end = start + len(piece)
            style = self.style
            if style:
                spans = self.spans
                if spans and spans[-1][1] == start and spans[-1][2] == style:
                    spans[-1] = (spans[-1][0], end, style)
                else:
                    spans.append((start, end, style))

    def _cut(self, text: str, resume: int) -> CleanLine:
        """The line is full: count what is not shown (``text[resume:]`` less its escapes)."""
        return self._result(_visible_length(text, resume))

    def _backspace(self, count: int) -> None:
        """Remove up to ``count`` shown characters from the end (and trim the spans)."""
        out = self.out
        while count and out:
            last = out[-1]
            if len(last) <= count:
                count -= len(last)
                self.shown -= len(last)
                out.pop()
            else:
                out[-1] = last[:-count]
                self.shown -= count
                count = 0
        spans, shown = self.spans, self.shown
        while spans and spans[-1][1] > shown:
            start, _, style = spans.pop()
            if start < shown:
                spans.append((start, shown, style))
                break

    def _set_state(self, state: _State) -> None:
        self.state = state
        self.style = _style_string(state)

    def _result(self, truncated: int) -> CleanLine:
        return CleanLine("".join(self.out), tuple(self.spans), truncated)


def _visible_length(text: str, start: int) -> int:
    """Characters of ``text[start:]`` outside escape sequences (estimated for huge floods)."""
    rest = len(text) - start
    escapes = text.count("\x1b", start) if rest > 0 else 0
    if not escapes:
        return max(0, rest)
    if escapes <= _EXACT_ESCAPES:
        hidden = 0
        at = text.find("\x1b", start)
        while at >= 0:
            match = _ANY_ESC.match(text, at)
            end = match.end() if match is not None else at + 1
            hidden += end - at
            at = text.find("\x1b", end)
        return rest - hidden
    sample = text[start : start + _EXACT_COUNT]
    return len(_ANY_ESC.sub("", sample)) * rest // len(sample)


def _fit(chars: str, room: int, shown: Callable[[str], str]) -> tuple[str, int]:
    """``chars`` as ``shown`` draws them, up to ``room`` characters of output.

    Returns:
        The output and how many of ``chars`` it covers (a form that doesn't fit whole stops).
    """
    out: list[str] = []
    used = 0
    for count, char in enumerate(chars):
        form = shown(char)
        used += len(form)
        if used > room:
            return "".join(out), count
        out.append(form)
    return "".join(out), len(chars)


def _shown_char(char: str) -> str:
    """How one character of plain text (no C0/C1 controls) is drawn."""
    if char.isprintable():
        return char
    category = unicodedata.category(char)
    if category in ("Cf", "Zl", "Zp", "Cc"):
        return f"<U+{ord(char):04X}>"  # invisible format characters, line separators
    if category == "Cs":
        return "\ufffd"  # a lone surrogate can't be encoded for the terminal
    return char  # other spaces (Zs), private use (Co), unassigned (Cn): drawn as they are


def _style_string(state: _State) -> str:
    """The Rich style string for an SGR state (``""`` when plain)."""
    style = _style_strings.get(state)
    if style is None:
        fg, bg, bold, dim, italic, underline, reverse = state
        words = [
            word
            for flag, word in (
                (bold, "bold"),
                (dim, "dim"),
                (italic, "italic"),
                (underline, "underline"),
                (reverse, "reverse"),
            )
            if flag
        ]
        if fg:
            words.append(fg)
        if bg:
            words.append("on " + bg)
        style = _style_strings[state] = " ".join(words)
    return style


def _apply_sgr_run(state: _State, run: str) -> _State:
    """The SGR state after a run of SGR sequences (``\\x1b[1;31m\\x1b[44m…``)."""
    if len(run) > _SGR_RUN_TAIL:
        # A flood: parse from the last full reset in the tail (what came before it is moot).
        run = run[-_SGR_RUN_TAIL:]
        reset = max(run.rfind("\x1b[0m"), run.rfind("\x1b[m"))
        run = run[reset:] if reset >= 0 else run[run.find("\x1b[") :]
    fg, bg, bold, dim, italic, underline, reverse = state
    for params in _SGR_PARAMS.findall(run):
        codes = params.split(";")
        i = 0
        while i < len(codes):
            code = codes[i]
            i += 1
            if ":" in code:  # ITU T.416 sub-parameters: 38:5:208, 38:2::255:136:0, 4:3
                sub = code.split(":")
                head = sub[0]
                if head in ("38", "48"):
                    colour = _extended_colour(sub[1:], colon=True)
                    if colour is not None:
                        if head == "38":
                            fg = colour
                        else:
                            bg = colour
                elif head == "4":
                    underline = sub[1] not in ("", "0")
                continue
            n = int(code) if code else 0
            if n == 0:
                fg, bg, bold, dim, italic, underline, reverse = _PLAIN
            elif n == 1:
                bold = True
            elif n == 2:
                dim = True
            elif n == 3:
                italic = True
            elif n in (4, 21):
                underline = True
            elif n == 7:
                reverse = True
            elif n == 22:
                bold = dim = False
            elif n == 23:
                italic = False
            elif n == 24:
                underline = False
            elif n == 27:
                reverse = False
            elif 30 <= n <= 37:
                fg = _NAMES[n - 30]
            elif 90 <= n <= 97:
                fg = "bright_" + _NAMES[n - 90]
            elif 40 <= n <= 47:
                bg = _NAMES[n - 40]
            elif 100 <= n <= 107:
                bg = "bright_" + _NAMES[n - 100]
            elif n == 39:
                fg = ""
            elif n == 49:
                bg = ""
            elif n in (38, 48):
                colour, used = _extended(codes, i)
                i += used
                if colour is not None:
                    if n == 38:
                        fg = colour
                    else:
                        bg = colour
            # Anything else (blink, conceal, strike, fonts…) is ignored.
    return (fg, bg, bold, dim, italic, underline, reverse)


def _extended(codes: list[str], i: int) -> tuple[str | None, int]:
    """``5;n`` or ``2;r;g;b`` after a 38/48 in ``;`` form: (colour or None, params used)."""
    kind = codes[i] if i < len(codes) else ""
    if kind == "5":
        return _extended_colour(codes[i : i + 2], colon=False), 2
    if kind == "2":
        return _extended_colour(codes[i : i + 4], colon=False), 4
    return None, 1 if kind else 0


def _extended_colour(parts: list[str], *, colon: bool) -> str | None:
    """``["5", n]`` → ``color(n)``; ``["2", (colour space,) r, g, b]`` → ``#rrggbb``."""
    if not parts:
        return None
    if parts[0] == "5" and len(parts) >= 2 and parts[1].isdigit():
        index = int(parts[1])
        return f"color({index})" if index <= 255 else None
    if parts[0] == "2":
        rgb = parts[1:]
        if colon and len(rgb) >= 4:
            rgb = rgb[1:4]  # 38:2:<colour space id>:r:g:b
        rgb = rgb[:3]
        if len(rgb) == 3 and all(p.isdigit() and int(p) <= 255 for p in rgb):
            r, g, b = (int(p) for p in rgb)
            return f"#{r:02x}{g:02x}{b:02x}"
    return None
