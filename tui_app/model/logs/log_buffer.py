"""What a log view holds and which of it it shows: bounded lines, grep filters, search matches.

A view keeps up to 100k lines per replica and filters or searches all of them on each keystroke,
so this is plain list work with no per-line objects beyond one tuple. It is kept apart from the
widget that draws it so that the selection rules (grep -C context, severity floor, matches) can
be checked without a terminal.

Invariants:

- Lines are identified by a *serial*: ``serial = offset + index`` into :attr:`LogBuffer.entries`,
  so serials survive dropping the oldest lines. Display rows are encoded as ints, sorted:
  ``2 * serial + 1`` is the line, ``2 * serial`` a ``--`` separator placed before it (grep -C
  style filters). :attr:`LogBuffer.rows` is None while every stored line is shown (no floor,
  no filter), so the common case costs no row list at all.
- :attr:`LogBuffer.matches` holds the serials of shown lines (never markers) that the search
  matches, sorted.
- A cursor is an encoded row too, so appends and drops don't move it; the buffer answers
  questions about a cursor (next match, nearest row) but the caller owns it.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar, Literal, get_args

from tui_app.model.logs.log_line import LogLine
from tui_app.model.logs.log_text import CleanLine

__all__ = [
    "HISTORY_FACTOR",
    "Entry",
    "FilterMode",
    "LogBuffer",
    "Marker",
    "smart_case",
]

FilterMode = Literal["keep", "drop"]

HISTORY_FACTOR = 2
"""History fetched on demand may take a buffer to this many times max_lines."""


@dataclass(frozen=True, slots=True)
class Marker:
    """A "── HH:MM:SS ──" rule the user put in the log (not an entry from the service)."""

    when: datetime
    """When it was inserted; shown in its own zone (local time, from insert_marker)."""

    severity: ClassVar[int] = 1 << 30
    """Above every level, so no severity floor hides a marker."""

    @property
    def label(self) -> str:
        """``── HH:MM:SS ──``: the marker as plain text."""
        return f"── {self.when:%H:%M:%S} ──"


Entry = tuple[LogLine | Marker, CleanLine]


def smart_case(pattern: str) -> tuple[re.Pattern[str], str | None]:
    """A regex for ``pattern``, case-insensitive unless it has a capital (as in less and vim).

    A user typing a filter mid-word often has an unbalanced ``(`` or ``[``: rather than show
    nothing, an invalid regex is taken literally, and the error comes back for the status line.
    """
    flags = 0 if any(char.isupper() for char in pattern) else re.IGNORECASE
    try:
        return re.compile(pattern, flags), None
    except re.error as error:
        return re.compile(re.escape(pattern), flags), str(error)


@dataclass(slots=True)
class _Grep:
    """Where a grep -C style keep filter stands after the last line it saw (for appends)."""

    after: int = 0
    """Lines still owed as after-context of the last match."""
    pending: deque[int] | None = None
    """Serials of the last few unshown lines: the before-context of a future match."""
    skipped: int = 0
    """Lines passed over since the last shown one (a ``--`` goes before the next group)."""
    shown_any: bool = False


class LogBuffer:
    """The lines of one log view, oldest first, with the rows a filter shows and search hits.

    Appends are streamed through the filter (only new lines are looked at); changing the
    filter, the floor or the search looks at every stored line once.
    """

    def __init__(self, max_lines: int = 100_000) -> None:
        self.max_lines = max(1, max_lines)
        """Lines kept at most; the oldest are dropped (and counted in :attr:`dropped`)."""
        self.entries: list[Entry] = []
        """The store, oldest first: ``(LogLine or Marker, CleanLine)`` (do not modify)."""
        self.offset = 0
        """The serial of ``entries[0]``."""
        self.rows: list[int] | None = None
        """Encoded rows shown, sorted; None while every stored line is shown."""
        self.matches: list[int] = []
        """Serials of shown lines with a search match, sorted."""
        self.dropped = 0
        """Lines dropped from the front to stay within :attr:`max_lines` (since clear)."""
        self.min_severity = 0
        """Hide lines below this LogSeverity number (markers always show); see :meth:`rebuild`."""
        self.search_error: str | None = None
        """Why the last search pattern was not a valid regex (it was searched literally)."""
        self.filter_error: str | None = None
        """Why the last filter pattern was not a valid regex (it was matched literally)."""
        self._filter: re.Pattern[str] | None = None
        self._filter_mode: FilterMode = "keep"
        self._around = 0
        self._grep = _Grep()
        self._search: re.Pattern[str] | None = None

    # -----------------------------------------------------------------------------------------
    # Rows

    @property
    def row_count(self) -> int:
        """Rows shown: lines that pass the floor and the filter, plus ``--`` separators."""
        return len(self.entries) if self.rows is None else len(self.rows)

    @property
    def filtering(self) -> bool:
        """Whether some stored line may be hidden (so :attr:`rows` is a list)."""
        return self._filter is not None or self.min_severity > 0

    @property
    def search_pattern(self) -> re.Pattern[str] | None:
        """The compiled search, for highlighting the matches within a line."""
        return self._search

    def row(self, index: int) -> int:
        """The encoded row shown at display ``index``."""
        if self.rows is None:
            return 2 * (self.offset + index) + 1
        return self.rows[index]

    def index_of(self, row: int) -> int:
        """The display index of encoded ``row``, or of the first row after it."""
        if self.rows is None:
            return max(0, (row >> 1) - self.offset)
        return bisect_left(self.rows, row)

    def nearest_row(self, row: int) -> int:
        """The shown row at or after ``row`` (else the last one), or -1 when none is shown.

        After the rows change, a cursor sits on this so it stays near the line it was on.
        """
        count = self.row_count
        if not count:
            return -1
        return self.row(min(self.index_of(max(row, 0)), count - 1))

    def iter_rows(self) -> Iterable[int]:
        """Every shown row, encoded, in order."""
        if self.rows is None:
            start = self.offset
            return range(2 * start + 1, 2 * (start + len(self.entries)) + 1, 2)
        return self.rows

    def entry(self, row: int) -> Entry:
        """The stored line of encoded (line, not separator) ``row``."""
        return self.entries[(row >> 1) - self.offset]

    # -----------------------------------------------------------------------------------------
    # Adding and dropping lines

    def add(self, new: Sequence[Entry]) -> int:
        """Store ``new`` at the end and select what the filter shows of it.

        Call :meth:`trim` afterwards: a caller that tracks rows (wrapped heights) needs to see
        the new rows before the oldest go.

        Returns:
            How many of the new lines are shown (separators not counted).
        """
        entries = self.entries
        first = self.offset + len(entries)
        entries.extend(new)
        if self.rows is None:
            added_rows: Sequence[int] | None = None
            shown = len(new)
        else:
            added_rows = self._select(first, new)
            self.rows.extend(added_rows)
            shown = sum(row & 1 for row in added_rows)
        if self._search is not None and shown:
            self.matches.extend(self._find_matches(first, new, added_rows))
        return shown

    def trim(self) -> int:
        """Drop the oldest lines past :attr:`max_lines`.

        Returns:
            How many display rows went with them (from the front).
        """
        excess = len(self.entries) - self.max_lines
        if excess <= 0:
            return 0
        del self.entries[:excess]
        self.offset += excess
        self.dropped += excess
        if self.rows is None:
            gone = excess
        else:
            gone = bisect_left(self.rows, 2 * self.offset)
            # A separator can't open the view.
            if gone < len(self.rows) and not self.rows[gone] & 1:
                gone += 1
            del self.rows[:gone]
        del self.matches[: bisect_left(self.matches, self.offset)]
        return gone

    @property
    def history_room(self) -> int:
        """How many older lines :meth:`prepend` still takes.

        History may take the store up to :data:`HISTORY_FACTOR` times :attr:`max_lines`, so a
        full view can still page back; the next :meth:`trim` brings it back to the limit.
        """
        return max(0, HISTORY_FACTOR * self.max_lines - len(self.entries))

    def prepend(self, older: Sequence[Entry]) -> int:
        """Store ``older`` (oldest first) before the oldest line, as many of its newest as fit.

        Rows and matches are rebuilt: the new lines take serials below every old one.

        Returns:
            How many lines were added.
        """
        room = self.history_room
        if not room or not older:
            return 0
        older = older[-room:]
        self.entries[:0] = older
        self.offset -= len(older)
        self.rebuild()
        return len(older)

    def clear(self) -> None:
        """Forget every line, the matches and the drop count (the filter and search stay).

        Serials go on from past the last one, so nothing keyed by an old serial is reused.
        """
        self.offset += len(self.entries) + 1
        self.entries = []
        self.rows = [] if self.filtering else None
        self._grep = _Grep()
        self.matches = []
        self.dropped = 0

    # -----------------------------------------------------------------------------------------
    # Filters

    def set_filter(self, pattern: str | None, mode: FilterMode = "keep", context: int = 0) -> None:
        """Show only lines matching ``pattern`` (``keep``), or hide them (``drop``).

        The pattern is a :func:`smart_case` regex; :attr:`filter_error` says why when it was
        taken literally. Context counts only lines above the floor.

        Args:
            pattern: The regex, or None (or "") for no filter.
            mode: ``keep`` matching lines or ``drop`` them.
            context: With ``keep``, lines to show before and after each match (grep -C), with a
                ``--`` row between groups that are not adjacent.
        """
        if mode not in get_args(FilterMode):
            raise ValueError(f"mode must be one of {get_args(FilterMode)}, not {mode!r}")
        self.filter_error = None
        if pattern:
            self._filter, self.filter_error = smart_case(pattern)
        else:
            self._filter = None
        self._filter_mode = mode
        self._around = max(0, context) if mode == "keep" else 0
        self.rebuild()

    def set_min_severity(self, floor: int) -> None:
        """Hide lines below LogSeverity ``floor`` (0 shows everything; markers always show)."""
        self.min_severity = floor
        self.rebuild()

    def rebuild(self) -> None:
        """Recompute the rows (filter, floor) and the matches from the whole store."""
        self._grep = _Grep()
        self.rows = self._select(self.offset, self.entries) if self.filtering else None
        if self._search is not None:
            self.matches = self._find_matches(self.offset, self.entries, self.rows)

    def _select(self, first: int, entries: Sequence[Entry]) -> list[int]:
        """Encoded rows for ``entries`` (serials ``first``…) under the floor and the filter."""
        floor = self.min_severity
        pattern = self._filter
        if pattern is None:
            return [
                2 * serial + 1
                for serial, (line, _) in enumerate(entries, first)
                if line.severity >= floor
            ]
        search = pattern.search
        if self._filter_mode == "drop":
            return [
                2 * serial + 1
                for serial, (line, text) in enumerate(entries, first)
                if line.severity >= floor and (type(line) is Marker or not search(text.text))
            ]
        if self._around == 0:
            return [
                2 * serial + 1
                for serial, (line, text) in enumerate(entries, first)
                if line.severity >= floor and (search(text.text) or type(line) is Marker)
            ]
        return self._grep_context(first, entries, floor, search)

    def _grep_context(
        self,
        first: int,
        entries: Sequence[Entry],
        floor: int,
        search: Callable[[str], re.Match[str] | None],
    ) -> list[int]:
        """grep -C: matches with context lines around them, ``--`` between groups.

        It runs as a stream (its state lives in ``_grep``), so an append only looks at the
        new lines. Markers are shown like matches but bring no context.
        """
        state = self._grep
        context = self._around
        pending = state.pending if state.pending is not None else deque(maxlen=context)
        after, skipped, shown_any = state.after, state.skipped, state.shown_any
        offset = self.offset
        out: list[int] = []
        for serial, (line, text) in enumerate(entries, first):
            if line.severity < floor:
                continue
            marker = type(line) is Marker
            if marker or search(text.text):
                if marker:
                    skipped += len(pending)
                    pending.clear()
                # Before-context the trim dropped since it was held is gone from the view.
                held = [p for p in pending if p >= offset]
                if shown_any and skipped:
                    out.append(2 * (held[0] if held else serial))
                out.extend(2 * p + 1 for p in held)
                pending.clear()
                out.append(2 * serial + 1)
                shown_any, skipped = True, 0
                if not marker:
                    after = context
            elif after:
                out.append(2 * serial + 1)
                after -= 1
            else:
                if len(pending) == context:
                    skipped += 1
                pending.append(serial)
        state.after, state.pending, state.skipped, state.shown_any = (
            after,
            pending,
            skipped,
            shown_any,
        )
        return out

    # -----------------------------------------------------------------------------------------
    # Search

    def search(self, pattern: str) -> int:
        """Find every shown line matching ``pattern``; lines added later are searched as they come.

        The pattern is a :func:`smart_case` regex; :attr:`search_error` says why when it was
        taken literally.

        Args:
            pattern: A regex ("" clears the search).

        Returns:
            How many shown lines match.
        """
        self.search_error = None
        if pattern:
            self._search, self.search_error = smart_case(pattern)
            self.matches = self._find_matches(self.offset, self.entries, self.rows)
        else:
            self._search = None
            self.matches = []
        return len(self.matches)

    def _find_matches(
        self, first: int, entries: Sequence[Entry], rows: Sequence[int] | None
    ) -> list[int]:
        """Serials of lines among ``entries`` (serials ``first``…) that match the search.

        ``rows`` are the encoded rows shown (None: every entry is shown).
        """
        assert self._search is not None
        search = self._search.search
        if rows is None:
            return [
                serial
                for serial, (line, text) in enumerate(entries, first)
                if search(text.text) and type(line) is LogLine
            ]
        store, offset = self.entries, self.offset
        found = []
        for row in rows:
            if row & 1:
                line, text = store[(row >> 1) - offset]
                if search(text.text) and type(line) is LogLine:
                    found.append(row >> 1)
        return found

    def match_index(self, cursor: int) -> int | None:
        """Which match (0-based, of ``len(matches)``) the encoded row ``cursor`` is on, if any."""
        serial = cursor >> 1
        index = bisect_left(self.matches, serial)
        if cursor & 1 and index < len(self.matches) and self.matches[index] == serial:
            return index
        return None

    def next_match(self, cursor: int) -> int | None:
        """The serial of the first match after encoded row ``cursor``, wrapping to the first.

        Returns:
            None when nothing matches.
        """
        if not self.matches:
            return None
        # From a separator (it sits before line ``cursor >> 1``) that line itself comes next.
        after = bisect_right if cursor & 1 else bisect_left
        index = after(self.matches, cursor >> 1)
        return self.matches[index % len(self.matches)]

    def previous_match(self, cursor: int) -> int | None:
        """The serial of the last match before encoded row ``cursor``, wrapping to the last.

        Returns:
            None when nothing matches.
        """
        if not self.matches:
            return None
        index = bisect_left(self.matches, cursor >> 1) - 1
        return self.matches[index % len(self.matches)]

    # -----------------------------------------------------------------------------------------
    # Queries

    def first_matching(self, predicate: Callable[[LogLine], bool]) -> int | None:
        """The display index of the first shown line (markers skipped) ``predicate`` holds for."""
        entries, offset = self.entries, self.offset
        for index, row in enumerate(self.iter_rows()):
            if row & 1:
                line = entries[(row >> 1) - offset][0]
                if type(line) is LogLine and predicate(line):
                    return index
        return None
