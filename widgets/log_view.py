"""LogView: a replica's (or a merged) log as a Line-API ScrollView that draws only visible rows.

``RichLog`` renders every line through Rich when it is written (≈ 3 KB and tens of µs per line),
and ``Log`` keeps plain strings but shows ``\\r`` as ``�`` and knows nothing of severities,
replicas or filters. This view keeps, per line, the :class:`LogLine` and its :class:`CleanLine`
(cleaned once, on arrival) in a bounded :class:`LogBuffer`, and builds Strips only for the rows on
screen, cached in an LRU. Appending a batch is one ``clean()`` and one tuple per line.

Invariants:

- Lines, rows and matches live in the :class:`LogBuffer` (``model.logs.log_buffer``): a line's
  *serial* survives dropping the oldest lines, and a display row is an encoded int (``2 * serial
  + 1`` the line, ``2 * serial`` a ``--`` separator before it). This widget draws those rows.
- In wrap mode ``_tops[d] - _tops[0]`` is the first screen line of display row ``d`` (one more
  entry than rows, the last is the end); it is rebuilt only when the width, the prefix width,
  wrap, or the rows change, and extended on append.
- The cursor is an encoded row, so appends and drops don't move it. While following it stays on
  the last row and is not drawn.
- Colours come only from COMPONENT_CLASSES in DEFAULT_CSS (theme variables); SGR colours from the
  log itself are drawn over the severity colour.
- The service's line that a replica restarted (``model.running.restarts.restart_line``) is drawn
  as a rule across the view with its text, like the user's markers: the replica's output on
  either side comes from two runs. Wrapped, a restart line too long for one screen line is
  drawn as any line is, so a row's height never depends on what kind of line it is.
"""

from __future__ import annotations

import re
import zlib
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import KW_ONLY, dataclass
from datetime import datetime
from functools import lru_cache
from itertools import accumulate, pairwise
from operator import attrgetter, itemgetter
from typing import ClassVar, Literal, Unpack

from rich.cells import cell_len, chop_cells
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.reactive import var
from textual.strip import Strip

from tui_app.model.logs.log_buffer import Entry, FilterMode, LogBuffer, Marker
from tui_app.model.logs.log_line import LogLine, task_tag
from tui_app.model.logs.log_text import MAX_CHARS, CleanLine, clean
from tui_app.model.logs.severity import SEVERITIES
from tui_app.model.running.restarts import is_restart_divider
from tui_app.widgets.line_cursor import (
    ControlMessage,
    LineCursorView,
    cursor_bindings,
    cursor_css,
    scroll_target,
)
from tui_app.widgets.widget_options import WidgetOptions

__all__ = ["FilterMode", "LogView", "Marker", "TimestampMode"]

TimestampMode = Literal["off", "utc", "local", "relative"]

TAG_COLOURS = 6
"""How many ``log-view--tag-N`` classes the replica tags cycle through."""
TAG_WIDTH = 4
"""The replica tag column, tag plus padding (wider only for tags like ``W100``)."""
SEPARATOR = "--"
DIVIDER_LEAD = "── "
"""What a restart rule draws before its text."""
ELLIPSIS = "…"

# The timestamp column per mode, including the space after it.
_STAMP_WIDTH: dict[str, int] = {"off": 0, "utc": 20, "local": 19, "relative": 14}
# Severity thresholds (lowest first) of the sev-* classes; below DEBUG (DEFAULT: no severity
# given) reads as plain INFO text.
_SEVERITY_CLASSES: tuple[tuple[int, str], ...] = (
    (SEVERITIES["DEBUG"], "log-view--sev-debug"),
    (SEVERITIES["INFO"], "log-view--sev-info"),
    (SEVERITIES["NOTICE"], "log-view--sev-notice"),
    (SEVERITIES["WARNING"], "log-view--sev-warning"),
    (SEVERITIES["ERROR"], "log-view--sev-error"),
    (SEVERITIES["CRITICAL"], "log-view--sev-critical"),
)
_SEVERITY_FLOORS = [floor for floor, _ in _SEVERITY_CLASSES]
_INFO_INDEX = 1


_CLEAN_TEXT = itemgetter(0)
_TASK_NAME = attrgetter("task_name")


@dataclass(frozen=True, slots=True)
class _Styles:
    """Rich styles resolved from the component classes, rebuilt whenever CSS changes."""

    base: Style
    cursor: Style
    dim: Style
    marker: Style
    restart: Style
    separator: Style
    match: Style
    match_current: Style
    severities: tuple[Style, ...]
    tags: tuple[Style, ...]


class LogView(LineCursorView[_Styles], can_focus=True):
    """A log pane for 100k lines: follow, merge tags, severities, search, grep filters, wrap.

    Feed it batches with :meth:`append` (and older history with :meth:`prepend`); never one
    call per line. The screen owns the keys that change modes (``/``, ``&``, ``w``, ``t``…)
    and drives this widget through its reactives and methods.
    """

    ALLOW_SELECT = False  # copying goes through current_line_text() and OSC 52

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "log-view--cursor",
        "log-view--dim",
        "log-view--marker",
        "log-view--restart",
        "log-view--separator",
        "log-view--match",
        "log-view--match-current",
        "log-view--sev-debug",
        "log-view--sev-info",
        "log-view--sev-notice",
        "log-view--sev-warning",
        "log-view--sev-error",
        "log-view--sev-critical",
        *(f"log-view--tag-{n}" for n in range(TAG_COLOURS)),
    }
    """
    | Class | Description |
    | :- | :- |
    | `log-view--cursor` | The cursor row (brighter with focus); not drawn while following. |
    | `log-view--dim` | Timestamps and "… N more characters". |
    | `log-view--marker` | The "── HH:MM:SS ──" rules the user inserts. |
    | `log-view--restart` | The "── worker-replica-0 restarted (1 of 5): … ──" rule of a restart. |
    | `log-view--separator` | The `--` between non-adjacent groups of a filter with context. |
    | `log-view--match` | Search matches. |
    | `log-view--match-current` | Search matches on the cursor row. |
    | `log-view--sev-*` | Text colour per severity: debug, info, notice, warning, error, critical. |
    | `log-view--tag-0` … `log-view--tag-5` | Replica tags of the merged view, one per replica. |
    """

    DEFAULT_CSS = """
    LogView {
        background: $surface;
        color: $foreground;
        overflow-y: scroll;
        scrollbar-size-vertical: 1;
        & > .log-view--dim { color: $text-muted; }
        & > .log-view--marker { color: $accent; text-style: bold; }
        & > .log-view--restart { color: $warning; text-style: bold; }
        & > .log-view--separator { color: $text-muted; }
        & > .log-view--match { background: $accent 35%; text-style: bold; }
        & > .log-view--match-current { background: $accent; color: $background; text-style: bold; }
        & > .log-view--sev-debug { color: $text-muted; }
        & > .log-view--sev-info { color: $foreground; }
        & > .log-view--sev-notice { color: $accent; }
        & > .log-view--sev-warning { color: $warning; }
        & > .log-view--sev-error { color: $error; }
        & > .log-view--sev-critical { color: $error; text-style: bold; }
        & > .log-view--tag-0 { color: $text-primary; text-style: bold; }
        & > .log-view--tag-1 { color: $text-success; text-style: bold; }
        & > .log-view--tag-2 { color: $text-accent; text-style: bold; }
        & > .log-view--tag-3 { color: $text-secondary; text-style: bold; }
        & > .log-view--tag-4 { color: $foreground; text-style: bold; }
        & > .log-view--tag-5 { color: $text-primary; text-style: bold italic; }
    }
    """ + cursor_css("LogView", "log-view--cursor")

    BINDINGS: ClassVar[list[BindingType]] = [
        *cursor_bindings("log-view"),
        Binding(
            "end,G",
            "last",
            "Follow",
            tooltip="Jump to the newest line and follow new ones",
            show=False,
            id="log-view.last",
        ),
        Binding(
            "n",
            "next_match",
            "Next match",
            show=False,
            tooltip="Move to the next line with a search match",
            id="log-view.next-match",
        ),
        Binding(
            "N",
            "previous_match",
            "Previous match",
            show=False,
            tooltip="Move to the previous line with a search match",
            id="log-view.previous-match",
        ),
    ]

    follow: var[bool] = var(True, init=False)
    """True while new lines scroll into view. Scrolling or moving up clears it; :meth:`resume`,
    ``end``/``G``, or scrolling back to the bottom sets it again."""
    show_tags: var[bool] = var(False, init=False)
    """Prefix each line with its replica tag (``M0``, ``W1``…), coloured per replica."""
    timestamps: var[TimestampMode] = var[TimestampMode]("off", init=False)
    """The timestamp column: ``off``, ``utc``, ``local`` or ``relative`` (to :attr:`job_start`)."""
    job_start: var[datetime | None] = var[datetime | None](None, init=False)
    """What ``relative`` timestamps count from (the first line seen when None)."""
    wrap: var[bool] = var(False, init=False)
    """Wrap long lines to the width (continuation rows are indented past the prefix)."""
    min_severity: var[int] = var(0, init=False)
    """Hide lines below this LogSeverity number (0 shows everything; markers always show)."""

    class TopReached(ControlMessage["LogView"]):
        """The user arrived at the top of the view: time to fetch older lines (prepend)."""

    @dataclass
    class MatchReached(ControlMessage["LogView"]):
        """``n``/``N`` (or :meth:`next_match`/:meth:`previous_match`) put the cursor on a match.

        ``wrapped``: the search ran past the last line (``forward``) or the first one and went
        on from the other end, which a reader must be told (vim's "search hit BOTTOM,
        continuing at TOP"): otherwise the match above looks like the next one down.
        """

        _: KW_ONLY
        wrapped: bool
        forward: bool

    @dataclass
    class PendingChanged(ControlMessage["LogView"]):
        """The count of lines that arrived while not following changed (0 after resuming)."""

        pending: int

        def can_replace(self, message: Message) -> bool:
            # A flood posts one per batch: only the latest count matters.
            return isinstance(message, LogView.PendingChanged) and message.widget is self.widget

    def __init__(
        self,
        *,
        max_lines: int = 100_000,
        max_chars: int = MAX_CHARS,
        show_tags: bool = False,
        timestamps: TimestampMode = "off",
        wrap: bool = False,
        **options: Unpack[WidgetOptions],
    ) -> None:
        super().__init__(**options)
        self.max_chars = max_chars
        """Characters shown of one line; the rest is summarised as "… N more characters"."""
        self.pending = 0
        """Lines that arrived while not following (reset by :meth:`resume`)."""
        self.set_reactive(LogView.show_tags, show_tags)
        self.set_reactive(LogView.timestamps, self.validate_timestamps(timestamps))
        self.set_reactive(LogView.wrap, wrap)
        self._buffer = LogBuffer(max_lines)
        self._cursor = -1
        self._tops: list[int] | None = None
        self._tops_width = 0
        self._last_width = 0
        self._longest = 0
        self._tag_width = TAG_WIDTH
        self._first_when: datetime | None = None
        self._strips: LRUCache[tuple[int, bool], tuple[list[Strip], Style]] = LRUCache(1024)
        self._style_cache: _Styles | None = None
        self._quiet = 0
        self._top_armed = True
        self._stick_scheduled = False

    # -----------------------------------------------------------------------------------------
    # Data

    @property
    def max_lines(self) -> int:
        """Lines kept at most; the oldest are dropped (and counted in :attr:`dropped`)."""
        return self._buffer.max_lines

    @max_lines.setter
    def max_lines(self, value: int) -> None:
        self._buffer.max_lines = max(1, value)

    @property
    def dropped(self) -> int:
        """Lines dropped from the front to stay within :attr:`max_lines` (since clear)."""
        return self._buffer.dropped

    @property
    def search_error(self) -> str | None:
        """Why the last search pattern was not a valid regex (it was searched literally)."""
        return self._buffer.search_error

    @property
    def filter_error(self) -> str | None:
        """Why the last filter pattern was not a valid regex (it was matched literally)."""
        return self._buffer.filter_error

    @property
    def line_count(self) -> int:
        """Lines in the store (markers included), shown or not."""
        return len(self._buffer.entries)

    @property
    def row_count(self) -> int:
        """Rows shown: lines that pass the floor and the filter, plus ``--`` separators."""
        return self._buffer.row_count

    @property
    def lines(self) -> Sequence[Entry]:
        """The store, oldest first: ``(LogLine or Marker, CleanLine)`` (do not modify)."""
        return self._buffer.entries

    @property
    def cursor_index(self) -> int:
        """The display row of the cursor (the last row while following; 0 when empty)."""
        buffer = self._buffer
        if not buffer.row_count:
            return 0
        return min(buffer.index_of(self._cursor), buffer.row_count - 1)

    def append(self, lines: Sequence[LogLine], cleaned: Sequence[CleanLine] | None = None) -> None:
        """Add a batch of new lines at the end (they are cleaned here, once).

        Call it with batches (hundreds to thousands of lines, e.g. every ~50 ms), never per
        line: each call costs a relayout of the scrollbars and, while following, a scroll.

        Args:
            lines: New lines, oldest first.
            cleaned: ``clean_lines(lines)`` when the caller already has it (a line shown in
                two views is cleaned once); it must match this view's ``max_chars``.
        """
        if not lines:
            return
        if cleaned is None:
            cleaned = self.clean_lines(lines)
        longest = max(map(len, map(_CLEAN_TEXT, cleaned)))
        self._note_tags(lines)
        if self._first_when is None:
            self._first_when = _when(lines[0])
        self._add(list(zip(lines, cleaned, strict=True)), longest)

    def clean_lines(self, lines: Sequence[LogLine]) -> list[CleanLine]:
        """``lines`` cleaned as this view shows them (for :meth:`append`/:meth:`prepend`)."""
        max_chars = self.max_chars
        return [clean(line.text, max_chars) for line in lines]

    def insert_marker(self, when: datetime | None = None) -> None:
        """Add a "── HH:MM:SS ──" rule after the newest line (k9s ``m``).

        Args:
            when: The time to show, in its own zone; now, in local time, by default.
        """
        marker = Marker(when or datetime.now().astimezone())
        self._add([(marker, CleanLine(marker.label, (), 0))], 0, arrivals=False)

    def prepend(self, lines: Sequence[LogLine], cleaned: Sequence[CleanLine] | None = None) -> int:
        """Add older lines before the oldest one, keeping the view where it is.

        History may take the store up to twice :attr:`max_lines`, so a full view can still page
        back; the next append trims it to :attr:`max_lines` again. Only as many of the newest of
        ``lines`` as fit are added.

        Args:
            lines: Older lines, oldest first.
            cleaned: ``clean_lines(lines)``, when the caller already has it.

        Returns:
            How many lines were added.
        """
        room = self._buffer.history_room
        if not room or not lines:
            return 0
        lines = lines[-room:]
        anchor = self._anchor()
        cleaned = self.clean_lines(lines) if cleaned is None else cleaned[-len(lines) :]
        self._longest = max(self._longest, max(map(len, map(_CLEAN_TEXT, cleaned))))
        self._note_tags(lines)
        self._buffer.prepend(list(zip(lines, cleaned, strict=True)))
        # Serials below the old offset may have been used by dropped lines: no stale strips.
        self._strips.clear()
        self._first_when = _when(lines[0])
        self._top_armed = True
        self._rows_changed(anchor)
        return len(lines)

    def clear(self) -> None:
        """Forget every line (and the pending count, the drop count and the matches)."""
        self._buffer.clear()
        self._cursor = -1
        self._tops = None
        self._longest = 0
        self._first_when = None
        self._strips.clear()
        self._top_armed = True
        self._set_pending(0)
        self._relayout(None)

    def _note_tags(self, lines: Sequence[LogLine]) -> None:
        """Widen the tag column for tags like ``W100`` (rare: relayout only then)."""
        widest = max(len(task_tag(name)) for name in set(map(_TASK_NAME, lines)))
        if widest + 1 > self._tag_width:
            self._tag_width = widest + 1
            if self.show_tags:
                self._options_changed()

    def _add(self, new: list[Entry], longest: int, *, arrivals: bool = True) -> None:
        """Store ``new`` at the end, show what passes, drop the oldest past max_lines.

        ``arrivals``: count the shown ones as pending while not following (not for markers).
        """
        buffer = self._buffer
        old_count = buffer.row_count
        if longest > self._longest:
            self._longest = longest
        shown = buffer.add(new)
        if self._tops is not None:
            self._extend_tops(old_count)
        removed_height = self._trim()
        self._after_growth(shown if arrivals else 0, removed_height)

    def _trim(self) -> int:
        """Drop the oldest lines past max_lines; returns the screen lines that went with them."""
        buffer = self._buffer
        gone = buffer.trim()
        if not gone:
            return 0  # every dropped line was hidden: nothing shown moves
        height = gone
        if self._tops is not None:
            height = self._tops[gone] - self._tops[0]
            del self._tops[:gone]
        if self._cursor < 2 * buffer.offset:
            self._cursor = buffer.row(0) if buffer.row_count else -1
        return height

    def _after_growth(self, shown: int, removed_height: int) -> None:
        """Scroll and count after an append: stick to the end, or stay put and count."""
        buffer = self._buffer
        if buffer.row_count and (self.follow or self._cursor < 0):
            self._cursor = buffer.row(buffer.row_count - 1 if self.follow else 0)
        if not self.is_mounted:
            self._set_virtual_size()
            return
        old_y = int(self.scroll_offset.y)
        self._set_virtual_size()
        if self.follow:
            self._scroll_end()
        else:
            if removed_height:
                self._scroll_quietly(max(0, old_y - removed_height))
            if shown:
                self._set_pending(self.pending + shown)
        # At max_lines neither the size nor the offset changes while the rows do: repaint
        # (cheap: rows still on screen come from the strip cache).
        self.refresh()

    # -----------------------------------------------------------------------------------------
    # Rows: severity floor, keep/drop filters with context

    def set_filter(self, pattern: str | None, mode: FilterMode = "keep", context: int = 0) -> None:
        """Show only lines matching ``pattern`` (``keep``), or hide them (``drop``).

        The pattern is a regex with smart case (case-insensitive unless it has a capital); an
        invalid regex is matched literally and :attr:`filter_error` says why. It combines with
        :attr:`min_severity` (context counts only lines above the floor).

        Args:
            pattern: The regex, or None (or "") for no filter.
            mode: ``keep`` matching lines or ``drop`` them.
            context: With ``keep``, lines to show before and after each match (grep -C), with a
                ``--`` line between groups that are not adjacent.
        """
        anchor = self._anchor()
        self._buffer.set_filter(pattern, mode, context)
        self._rows_changed(anchor)

    def _rows_changed(self, anchor: tuple[int, int] | None) -> None:
        """The buffer rebuilt its rows: put the cursor on the nearest one and lay them out."""
        self._cursor = self._buffer.nearest_row(self._cursor)
        self._tops = None
        self._strips.clear()
        self._relayout(anchor)

    def watch_min_severity(self, floor: int) -> None:
        anchor = self._anchor()
        self._buffer.set_min_severity(floor)
        self._rows_changed(anchor)

    # -----------------------------------------------------------------------------------------
    # Search

    @property
    def match_count(self) -> int:
        """Shown lines with at least one search match."""
        return len(self._buffer.matches)

    @property
    def current_match_index(self) -> int | None:
        """Which match line (0-based, of :attr:`match_count`) the cursor is on, if any."""
        return self._buffer.match_index(self._cursor)

    def search(self, pattern: str) -> int:
        """Highlight every match of ``pattern`` in the shown lines.

        Smart case: case-insensitive unless the pattern has a capital. An invalid regex is
        searched literally and :attr:`search_error` says why. Lines that arrive later are
        searched as they come. The cursor does not move: use :meth:`next_match`.

        Args:
            pattern: A regex ("" clears the search).

        Returns:
            How many shown lines match (:attr:`match_count`).
        """
        count = self._buffer.search(pattern)
        self._strips.clear()
        self.refresh()
        return count

    def next_match(self) -> bool:
        """Move the cursor to the next line with a match (wrapping around) and show it.

        Posts :class:`MatchReached`, which says whether it wrapped.

        Returns:
            False when nothing matches.
        """
        return self._jump_to_match(self._buffer.next_match(self._cursor), forward=True)

    def previous_match(self) -> bool:
        """Move the cursor to the previous line with a match (wrapping around) and show it.

        Posts :class:`MatchReached`, which says whether it wrapped.

        Returns:
            False when nothing matches.
        """
        return self._jump_to_match(self._buffer.previous_match(self._cursor), forward=False)

    def _jump_to_match(self, serial: int | None, *, forward: bool) -> bool:
        if serial is None:
            return False
        row = 2 * serial + 1  # a line's encoded row (the cursor's too, when on a line)
        wrapped = row <= self._cursor if forward else row >= self._cursor
        self.move_to(self._buffer.index_of(row))
        self.post_message(self.MatchReached(self, wrapped=wrapped, forward=forward))
        return True

    # -----------------------------------------------------------------------------------------
    # Queries for the screen (copy, save, pager, first failure)

    def first_matching(self, predicate: Callable[[LogLine], bool]) -> int | None:
        """The first shown line (display index) for which ``predicate`` holds.

        Args:
            predicate: Called with shown lines in order (markers are skipped), e.g.
                ``lambda line: line.severity >= 500 or "Traceback" in line.text``.

        Returns:
            The display index for :meth:`move_to`, or None.
        """
        return self._buffer.first_matching(predicate)

    def move_to(self, index: int) -> None:
        """Put the cursor on display row ``index`` (clamped) and scroll it into view.

        It stops following. A row off screen is brought to the middle of the view.

        Args:
            index: A display row, e.g. from :meth:`first_matching`.
        """
        if not self.row_count:
            return
        self.follow = False
        self._set_cursor(max(0, min(index, self.row_count - 1)), center=True)

    def current_line_text(self) -> str:
        """The cursor row as plain text, prefixes as shown ("" when empty)."""
        if not self.row_count:
            return ""
        return self._plain_row(self._buffer.row(self.cursor_index), self._prefixer())

    def visible_text(self) -> str:
        """Every shown row (floor and filter applied) as plain text, prefixes as shown.

        For "save" and the pager: one line per row, ``--`` separators and markers included.
        """
        prefix = self._prefixer()
        return "\n".join([self._plain_row(row, prefix) for row in self._buffer.iter_rows()])

    def _plain_row(self, row: int, prefix: Callable[[LogLine], tuple[str, str]]) -> str:
        if not row & 1:
            return SEPARATOR
        buffer = self._buffer  # per row of a 100k-line save: no extra call
        line, text = buffer.entries[(row >> 1) - buffer.offset]
        if type(line) is Marker:
            return text.text
        assert isinstance(line, LogLine)
        tag, stamp = prefix(line)
        if text.truncated:
            return f"{tag}{stamp}{text.text} {ELLIPSIS} {text.truncated:,} more characters"
        return tag + stamp + text.text

    # -----------------------------------------------------------------------------------------
    # Following, pending count, cursor

    def resume(self) -> None:
        """Jump to the newest line and follow new ones (clears the pending count)."""
        if self.follow:
            self._follow_end()
        else:
            self.follow = True

    def watch_follow(self, following: bool) -> None:
        if following:
            self._follow_end()
        self._refresh_row(self._cursor)

    def _follow_end(self) -> None:
        self._set_pending(0)
        if self.row_count:
            old = self._cursor
            self._cursor = self._buffer.row(self.row_count - 1)
            self._refresh_row(old)
        self._scroll_end()

    def _set_pending(self, pending: int) -> None:
        if pending != self.pending:
            self.pending = pending
            self.post_message(self.PendingChanged(self, pending))

    def _set_cursor(self, index: int, *, center: bool = False) -> None:
        """Move the cursor to display row ``index`` and scroll it into view."""
        old = self._cursor
        self._cursor = self._buffer.row(index)
        if index > 0:
            self._top_armed = True
        self._refresh_row(old)
        self._refresh_row(self._cursor)
        self._scroll_row_into_view(index, center=center)

    def _move_by(self, delta: int) -> None:
        """Cursor up (negative; that stops following) or down.

        A cursor the user scrolled out of sight first comes back to the edge it went past, so a
        key press never jumps the view back to where the cursor was left.
        """
        count = self.row_count
        if not count:
            return
        if delta < 0:
            self.follow = False
        index = self.cursor_index
        top, bottom = self._visible_rows()
        if not top <= index <= bottom:
            index = bottom if delta < 0 else top
        else:
            index += delta
        self._set_cursor(max(0, min(index, count - 1)))
        if self.cursor_index == 0:
            self._check_top()

    def _visible_rows(self) -> tuple[int, int]:
        """The first and last display rows on screen (fully or partly)."""
        y = int(self.scroll_offset.y)
        height = max(1, self.scrollable_content_region.height)
        return self._row_at(y), self._row_at(y + height - 1)

    def _row_at(self, line: int) -> int:
        """The display row drawn on virtual screen ``line`` (clamped to the rows)."""
        count = self.row_count
        if self._tops is None:
            return max(0, min(line, count - 1))
        index = bisect_right(self._tops, line + self._tops[0]) - 1
        return max(0, min(index, count - 1))

    def _row_top(self, index: int) -> int:
        """The virtual screen line where display row ``index`` starts."""
        if self._tops is None:
            return index
        return self._tops[index] - self._tops[0]

    def _row_height(self, index: int) -> int:
        if self._tops is None:
            return 1
        return self._tops[index + 1] - self._tops[index]

    def _scroll_row_into_view(self, index: int, *, center: bool = False) -> None:
        if not self.is_mounted:
            return
        target = scroll_target(
            self._row_top(index),
            self._row_height(index),
            int(self.scroll_offset.y),
            max(1, self.scrollable_content_region.height),
            center=center,
        )
        if target is not None:
            self._scroll_quietly(target)

    def _check_top(self) -> None:
        """Post TopReached once per arrival at the top."""
        if self._top_armed and int(self.scroll_offset.y) == 0:
            self._top_armed = False
            self.post_message(self.TopReached(self))

    def _page_by(self, direction: int) -> None:
        """A page up (that stops following) or down, the cursor keeping its place on screen.

        When the view can't scroll further, the cursor goes to the first or last row instead,
        so paging always moves something.
        """
        if not self.row_count:
            return
        if direction < 0:
            self.follow = False
        page = max(1, self.scrollable_content_region.height)
        y = int(self.scroll_offset.y)
        index = self.cursor_index
        first, last = self._visible_rows()
        on_screen = self._row_top(index) - y if first <= index <= last else 0
        target = max(0, min(y + direction * page, self.max_scroll_y))
        if target == y:
            index = 0 if direction < 0 else self.row_count - 1
        else:
            self._scroll_quietly(target)
            index = self._row_at(target + max(0, on_screen))
        self._set_cursor(index)
        if index == 0:
            self._check_top()

    def action_first(self) -> None:
        """Jump to the oldest line (stops following)."""
        if not self.row_count:
            self._check_top()
            return
        self.follow = False
        self._set_cursor(0)
        self._check_top()

    def action_last(self) -> None:
        """Jump to the newest line and follow."""
        self.resume()

    def action_next_match(self) -> None:
        """Move to the next line with a search match."""
        if self._buffer.matches:
            self.follow = False
            self.next_match()

    def action_previous_match(self) -> None:
        """Move to the previous line with a search match."""
        if self._buffer.matches:
            self.follow = False
            self.previous_match()

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or not self.row_count:
            return
        line = int(self.scroll_offset.y) + offset.y
        if line < self.virtual_size.height:
            self.follow = False
            self._set_cursor(self._row_at(line))

    # -----------------------------------------------------------------------------------------
    # Scrolling: who scrolled decides whether following stops

    def _scroll_quietly(self, y: int) -> None:
        """Scroll to ``y`` ourselves: not taken as the user scrolling."""
        self._quiet += 1
        try:
            self.scroll_to(y=y, animate=False, immediate=True)
        finally:
            self._quiet -= 1

    def _scroll_end(self) -> None:
        if not self.is_mounted:
            return
        self._scroll_quietly(self.max_scroll_y)
        # A scrollbar appearing in the coming layout moves the end by a line: check after it.
        if not self._stick_scheduled:
            self._stick_scheduled = True
            self.call_after_refresh(self._stick)

    def _stick(self) -> None:
        self._stick_scheduled = False
        if self.follow and int(self.scroll_offset.y) != self.max_scroll_y:
            self._scroll_quietly(self.max_scroll_y)

    def watch_show_horizontal_scrollbar(self, shown: bool) -> None:
        """The end moves when the horizontal bar comes or goes: it takes the view's last row.

        That happens in a layout pass, with no resize and no new line. Under load the pass can
        come after ``_stick`` has checked the end, and a following view then stopped a row short
        of its last line (a failed job's pane hid its "Job failed: ..." line).
        """
        if self.follow and self.is_mounted:
            self._scroll_end()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        new, old = int(new_value), int(old_value)
        if new > 0:
            self._top_armed = True
        if self._quiet or new == old:
            return
        # Only the user (wheel, scrollbar) gets here. Clamps after the content shrank land on
        # max_scroll_y, which is not the user scrolling up.
        if new < old and new < self.max_scroll_y:
            self.follow = False
            if new == 0:
                self._check_top()
        elif new > old and new >= self.max_scroll_y and not self.follow:
            self.follow = True

    def _on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        super()._on_mouse_scroll_up(event)
        if not event.ctrl and not event.shift and int(self.scroll_offset.y) == 0:
            self._check_top()

    # -----------------------------------------------------------------------------------------
    # Layout: virtual size, wrapped heights

    def _prefix_width(self) -> int:
        width = _STAMP_WIDTH[self.timestamps]
        if self.show_tags:
            width += self._tag_width
        return width

    def _content_width(self) -> int:
        return self.scrollable_content_region.width

    def _anchor(self) -> tuple[int, int] | None:
        """What to keep in place across a relayout: (encoded row, its screen line), or None
        while following (the view sticks to the end instead)."""
        if self.follow or not self.is_mounted or not self.row_count:
            return None
        index = self.cursor_index
        first, last = self._visible_rows()
        if not first <= index <= last:
            index = first
        return self._buffer.row(index), self._row_top(index) - int(self.scroll_offset.y)

    def _relayout(self, anchor: tuple[int, int] | None) -> None:
        """Recompute wrapped heights and the virtual size; keep ``anchor`` (or the end) put."""
        width = self._content_width()
        if self.wrap and width > 0:
            self._tops_width = width
            self._tops = list(accumulate(self._heights(0, self.row_count), initial=0))
        else:
            self._tops = None
        self._strips.clear()
        self._set_virtual_size()
        if not self.is_mounted:
            return
        if self.follow:
            self._scroll_end()
        elif anchor is not None and self.row_count:
            row, screen_line = anchor
            index = min(self._buffer.index_of(row), self.row_count - 1)
            self._scroll_quietly(max(0, self._row_top(index) - screen_line))
        self.refresh()

    def _extend_tops(self, start: int) -> None:
        """Add the wrapped heights of the rows from display row ``start`` on."""
        assert self._tops is not None
        tops = accumulate(self._heights(start, self.row_count), initial=self._tops[-1])
        next(tops)  # the initial value: already the last entry
        self._tops.extend(tops)

    def _heights(self, start: int, stop: int) -> list[int]:
        """Screen lines of display rows ``start``…``stop - 1`` when wrapped."""
        avail = max(1, self._tops_width - self._prefix_width())
        buffer = self._buffer
        entries, offset = buffer.entries, buffer.offset
        if buffer.rows is None:
            rows: Iterable[int] = range(2 * (offset + start) + 1, 2 * (offset + stop) + 1, 2)
        else:
            rows = buffer.rows[start:stop]
        heights = []
        for row in rows:
            if not row & 1:
                heights.append(1)
                continue
            line, text = entries[(row >> 1) - offset]
            if type(line) is Marker:
                heights.append(1)
                continue
            heights.append(_chunk_count(text.text, avail) + (1 if text.truncated else 0))
        return heights

    def _set_virtual_size(self) -> None:
        if self._tops is not None:
            self.virtual_size = Size(self._tops_width, self._tops[-1] - self._tops[0])
            return
        width = self._prefix_width() + self._longest
        if self._longest >= self.max_chars:
            width += 32  # room for "… N more characters"
        self.virtual_size = Size(width, self.row_count)

    def on_resize(self, event: events.Resize) -> None:
        width = self._content_width()
        if width != self._last_width:
            self._last_width = width
            self._strips.clear()  # markers span the width
        if self.wrap and width != self._tops_width:
            self._relayout(self._anchor())
        elif self.follow:
            self._scroll_end()

    def _options_changed(self) -> None:
        """The prefix or the wrap changed: every row's look and (wrapped) height."""
        self._relayout(self._anchor())

    def watch_show_tags(self) -> None:
        self._options_changed()

    def watch_timestamps(self) -> None:
        self._options_changed()

    def watch_job_start(self) -> None:
        self._strips.clear()
        self.refresh()

    def watch_wrap(self) -> None:
        self._options_changed()

    def validate_timestamps(self, mode: str) -> TimestampMode:
        if mode not in _STAMP_WIDTH:
            raise ValueError(f"timestamps must be one of {tuple(_STAMP_WIDTH)}, not {mode!r}")
        return mode  # type: ignore[return-value]  # checked just above

    # -----------------------------------------------------------------------------------------
    # Rendering

    def _refresh_row(self, row: int) -> None:
        if row < 0 or not self.is_mounted:
            return
        self._strips.discard((row, True))
        self._strips.discard((row, False))
        index = self._buffer.index_of(row)
        if index < self.row_count:
            self.refresh_lines(self._row_top(index), self._row_height(index))

    def _resolve_styles(self) -> _Styles:
        base = self.rich_style
        get = self.get_component_rich_style
        fg = self._foreground
        match = get("log-view--match")
        return _Styles(
            base=base,
            cursor=base + get("log-view--cursor"),
            dim=base + fg("log-view--dim"),
            marker=base + fg("log-view--marker"),
            restart=base + fg("log-view--restart"),
            separator=base + fg("log-view--separator"),
            match=Style(bgcolor=match.bgcolor) + get("log-view--match", partial=True),
            match_current=get("log-view--match-current"),
            severities=tuple(base + fg(name) for _, name in _SEVERITY_CLASSES),
            tags=tuple(base + fg(f"log-view--tag-{n}") for n in range(TAG_COLOURS)),
        )

    def render_line(self, y: int) -> Strip:
        """Screen line ``y``: a slice of the row drawn there (rows may wrap over several)."""
        scroll_x, scroll_y = self.scroll_offset
        width = self._content_width()
        styles = self._styles()
        line = int(scroll_y) + y
        buffer = self._buffer
        count = buffer.row_count
        if self._tops is None:
            index, sub = line, 0
        else:
            index = bisect_right(self._tops, line + self._tops[0]) - 1
            sub = line - self._row_top(index) if 0 <= index < count else 0
        if not 0 <= index < count:
            return Strip.blank(width, styles.base)
        row = buffer.row(index)
        is_cursor = row == self._cursor and not self.follow
        key = (row, is_cursor)
        cached = self._strips.get(key)
        if cached is None:
            cached = self._build_row(row, is_cursor, width, styles)
            self._strips.set(key, cached)
        strips, pad = cached
        if sub >= len(strips):
            return Strip.blank(width, pad)
        if self._tops is not None:
            return strips[sub].crop_extend(0, width, pad)
        return strips[sub].crop_extend(int(scroll_x), int(scroll_x) + width, pad)

    def _build_row(
        self, row: int, is_cursor: bool, width: int, styles: _Styles
    ) -> tuple[list[Strip], Style]:
        """Every screen line of one row (one unless wrapped), and the style to pad them with."""
        pad = styles.cursor if is_cursor else styles.base
        if not row & 1:
            return [Strip([Segment(SEPARATOR, pad if is_cursor else styles.separator)])], pad
        buffer = self._buffer
        line, text = buffer.entries[(row >> 1) - buffer.offset]
        if type(line) is Marker:
            return [self._marker_strip(line, width, pad if is_cursor else styles.marker)], pad
        assert isinstance(line, LogLine)
        prefix = self._prefix_segments(line, styles, pad if is_cursor else None)
        if self._is_divider(line, text, width):
            rule = pad if is_cursor else styles.restart
            return [_divider_strip(prefix, text.text, width, rule)], pad
        runs = self._runs(text, line.severity, styles, is_cursor)
        note_style = pad if is_cursor else styles.dim
        note = f"{ELLIPSIS} {text.truncated:,} more characters" if text.truncated else ""
        if self._tops is None:
            segments = prefix + _slice(text.text, runs, 0, len(text.text))
            if note:
                segments.append(Segment(" " + note, note_style))
            return [Strip(segments)], pad
        indent = [Segment(" " * self._prefix_width(), pad)] if prefix else []
        avail = max(1, width - self._prefix_width())
        strips = [
            Strip((prefix if n == 0 else indent) + _slice(text.text, runs, start, end))
            for n, (start, end) in enumerate(_chunks(text.text, avail))
        ]
        if note:
            strips.append(Strip([*indent, Segment(note, note_style)]))
        return strips, pad

    def _marker_strip(self, marker: Marker, width: int, style: Style) -> Strip:
        label = f" {marker.when:%H:%M:%S} "
        side = max(2, (width - len(label)) // 2)
        rule = "─" * side + label + "─" * max(2, width - side - len(label))
        return Strip([Segment(rule, style)])

    def _is_divider(self, line: LogLine, text: CleanLine, width: int) -> bool:
        """Whether ``line`` is drawn as a restart rule: a service line for a restart or a
        whole-job retry, whole, whose rule fits on one screen line when wrapped (one line
        high, as ``_heights`` counts any line that short)."""
        if text.truncated or not is_restart_divider(line.task_name, line.text):
            return False
        if self._tops is None:
            return True
        return cell_len(text.text) + len(DIVIDER_LEAD) + 1 <= width - self._prefix_width()

    def _prefixer(self) -> Callable[[LogLine], tuple[str, str]]:
        """A function giving a line's (tag, timestamp) columns as now shown ("" when off).

        Made once per use (a frame's rows, a save), so the options are read once, not per row.
        """
        tag_width = self._tag_width if self.show_tags else 0
        stamp = _stamper(self.timestamps, self.job_start or self._first_when)

        def prefix(line: LogLine) -> tuple[str, str]:
            tag = task_tag(line.task_name).ljust(tag_width) if tag_width else ""
            return tag, stamp(line) if stamp is not None else ""

        return prefix

    def _prefix_segments(
        self, line: LogLine, styles: _Styles, solid: Style | None
    ) -> list[Segment]:
        tag, stamp = self._prefixer()(line)
        segments = []
        if tag:
            segments.append(Segment(tag, solid or styles.tags[_tag_colour(line.task_name)]))
        if stamp:
            segments.append(Segment(stamp, solid or styles.dim))
        return segments

    def _runs(
        self, text: CleanLine, severity: int, styles: _Styles, is_cursor: bool
    ) -> list[tuple[int, int, Style]]:
        """The message as (start, end, style) runs: severity, SGR spans, search matches."""
        size = len(text.text)
        if is_cursor:
            base = styles.cursor
            spans: Sequence[tuple[int, int, str]] = ()
            match_style = styles.match_current
        else:
            base = styles.severities[_severity_index(severity)]
            spans = text.spans
            match_style = styles.match
        search = self._buffer.search_pattern
        matches = (
            [m.span() for m in search.finditer(text.text) if m.end() > m.start()]
            if search is not None
            else []
        )
        if not spans and not matches:
            return [(0, size, base)]
        points = sorted(
            {0, size, *(p for s in spans for p in s[:2]), *(p for m in matches for p in m)}
        )
        runs = []
        span_at = match_at = 0
        for start, end in pairwise(points):
            style = base
            while span_at < len(spans) and spans[span_at][1] <= start:
                span_at += 1
            if span_at < len(spans) and spans[span_at][0] <= start:
                style = style + _sgr_style(spans[span_at][2])
            while match_at < len(matches) and matches[match_at][1] <= start:
                match_at += 1
            if match_at < len(matches) and matches[match_at][0] <= start:
                style = style + match_style
            runs.append((start, end, style))
        return runs


def _divider_strip(prefix: list[Segment], label: str, width: int, style: Style) -> Strip:
    """``[tag, time] ── <label> ─────``: the line's own prefix (when it happened, which view it
    came from), then a rule to the view's right edge (at least ``──`` after the label)."""
    used = sum(segment.cell_length for segment in prefix)
    head = DIVIDER_LEAD + label + " "
    tail = "─" * max(2, width - used - cell_len(head))
    return Strip([*prefix, Segment(head + tail, style)])


def _slice(text: str, runs: list[tuple[int, int, Style]], start: int, end: int) -> list[Segment]:
    """Segments for ``text[start:end]`` styled by ``runs``."""
    segments = []
    for run_start, run_end, style in runs:
        if run_end <= start:
            continue
        if run_start >= end:
            break
        segments.append(Segment(text[max(run_start, start) : min(run_end, end)], style))
    return segments


def _chunks(text: str, avail: int) -> list[tuple[int, int]]:
    """``text`` cut into (start, end) pieces of at most ``avail`` cells (at least one piece)."""
    size = len(text)
    if text.isascii():
        if size <= avail:
            return [(0, size)]
        return [(start, min(start + avail, size)) for start in range(0, size, avail)]
    pieces = chop_cells(text, avail)
    if not pieces:
        return [(0, size)]
    bounds = list(accumulate(map(len, pieces), initial=0))
    return list(pairwise(bounds))


def _chunk_count(text: str, avail: int) -> int:
    """``len(_chunks(text, avail))``, without building them for ASCII."""
    if text.isascii():
        return max(1, -(-len(text) // avail))
    return max(1, len(chop_cells(text, avail)))


def _stamper(mode: str, start: datetime | None) -> Callable[[LogLine], str] | None:
    """The timestamp column for ``mode`` (exactly its width, space included), None when off.

    ``start`` is what ``relative`` counts from (a line's own time when None).
    """
    if mode == "off":
        return None
    width = _STAMP_WIDTH[mode] - 1

    def stamp(line: LogLine) -> str:
        ts = line.timestamp
        if mode == "utc" and len(ts) >= 24 and ts[10] == "T" and ts[19] == "." and ts[-1] == "Z":
            # The service's fixed-width UTC form: slicing beats parsing (save of 100k lines).
            return f"{ts[5:10]} {ts[11:23]}Z "
        when = _when(line)
        if when is None:
            text = clean(ts, width).text
        elif mode == "utc":
            text = f"{when:%m-%d %H:%M:%S}.{when.microsecond // 1000:03d}Z"
        elif mode == "local":
            local = when.astimezone()
            text = f"{local:%m-%d %H:%M:%S}.{local.microsecond // 1000:03d}"
        else:
            text = _relative(when, start or when)
        return text[:width].ljust(width) + " "

    return stamp


def _when(line: LogLine) -> datetime | None:
    try:
        return line.when()
    except ValueError:
        return None


def _relative(when: datetime, start: datetime) -> str:
    """``+0:01:23.456``: ``when`` after ``start`` (``-`` before it)."""
    ms = round((when - start).total_seconds() * 1000)
    sign = "-" if ms < 0 else "+"
    seconds, ms = divmod(abs(ms), 1000)
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{sign}{hours}:{minutes:02d}:{seconds:02d}.{ms:03d}"


def _severity_index(severity: int) -> int:
    if severity < _SEVERITY_FLOORS[0]:
        return _INFO_INDEX  # DEFAULT: no severity given
    return bisect_right(_SEVERITY_FLOORS, severity) - 1


_REPLICA = re.compile(r"([a-z]+)-replica-([0-9]+)", re.ASCII)
# (first slot, step) per role: a master, three workers, a parameter server and the service
# all get different looks (slot 5 is slot 0's colour in italics: themes have only four hues
# that are not severity colours); past that, looks repeat. The tag's text tells them apart.
_ROLE_SLOTS: dict[str, tuple[int, int]] = {
    "master": (0, 1),
    "chief": (0, 1),
    "worker": (1, 1),
    "ps": (5, -1),
    "evaluator": (3, -1),
}
_SERVICE_SLOT = 4


@lru_cache(maxsize=1024)
def _tag_colour(task_name: str) -> int:
    """A stable colour slot per replica: from its role and index for the platform's roles,
    else from a CRC32 of the name (stable across runs, unlike ``hash``)."""
    match = _REPLICA.fullmatch(task_name)
    if match is not None and match[1] in _ROLE_SLOTS:
        first, step = _ROLE_SLOTS[match[1]]
        return (first + step * int(match[2])) % TAG_COLOURS
    if task_name == "service":
        return _SERVICE_SLOT
    return zlib.crc32(task_name.encode("utf-8", "replace")) % TAG_COLOURS


@lru_cache(maxsize=512)
def _sgr_style(style: str) -> Style:
    return Style.parse(style)
