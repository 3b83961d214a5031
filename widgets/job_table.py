"""JobTable: the job list as a Line-API ScrollView that renders only the visible rows.

Textual's ``DataTable`` measures every cell of every row with Rich whenever rows change (≈ 17 s for
100k jobs on our 2-core machines), so the list is drawn line by line from a plain Python list
instead: ``set_rows`` is O(rows) list work, and a frame costs only the ~20-50 visible
lines, each cached as a Strip in an LRU.

Invariants:

- Rows are keyed by job id (``group:<base>`` for a folded family): the cursor and the marks follow
  keys across ``set_rows``, so a refresh never loses the user's place.
- Line 0 is a sticky header; row ``i`` is virtual line ``i + 1``.
- Colours come only from the COMPONENT_CLASSES in DEFAULT_CSS (theme variables). Every state also
  has a symbol and a name, so colour is never the only cue.
- The two gutter cells say what the user did to a row: the first ● marked, the second ⚑ watched
  (``w``: the App tells when it ends). The header's right end counts the watched jobs, which
  is also the ⚑'s legend.
- A job whose replicas restarted ends its STATE cell in ``↻N`` (k9s's RESTARTS), right-aligned
  so the counts line up; the state's name gives way to it, never the count. A job that never
  restarted is drawn as it always was.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo
from operator import attrgetter
from typing import ClassVar, Unpack

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip
from textual.timer import Timer

from tui_app.model.filters.list_filter import PickedRows
from tui_app.model.jobs.job_id import split_job_id
from tui_app.model.jobs.states import STATE_SYMBOL, JobState
from tui_app.model.views.job_view import (
    GROUP_KEY_PREFIX,
    GroupRow,
    JobRow,
    ListRow,
    SortColumn,
    format_elapsed,
    restart_marker,
    sort_arrow,
    sort_header,
    state_name,
)
from tui_app.widgets.line_cursor import (
    ControlMessage,
    LineCursorView,
    cursor_css,
    list_bindings,
    scroll_target,
)
from tui_app.widgets.state_colours import state_classes, state_css
from tui_app.widgets.widget_options import WidgetOptions

MARK_GLYPH = "●"
"""A marked row (``space``), here and before a marked trial in the trials table."""
WATCH_GLYPH = "⚑"
"""A watched job's second gutter cell (``w``). One cell wide in every terminal font we know of,
unlike the bell and eye emoji, which take two."""
FLASH_SECONDS = 4.0
"""How long a row flashes when its watched job ends: long enough to be seen when the eyes come
back from another window, short enough not to be mistaken for a state."""
FLASH_PERIOD = 0.5
"""The flash's half period: on for this long, off for this long."""
GROUP_GLYPH = "▸"
ELLIPSIS = "…"

# Column widths (cells). STATE fits "◍ CANCELLING" and "◷ QUEUED #42"; TIER fits
# "PREMIUM_1 x31"; ELAPSED fits "23:59:59". JOB ID and ERROR share what is left.
GUTTER = 2
STATE_W = 12
CREATED_W = 11
ELAPSED_W = 8
TIER_W = 13
ML_W = 8
MIN_ID_W = 20
"""A stamped id cut to this still reads ``<base>…_HHMMSS`` for a base of up to 12 characters."""
COMFORT_ID_W = 28
"""What an id may claim before a column gives way for it: a stamped id such as
``census_dist_20261122_175721`` whole. Longer ones are cut (``fit_job_id``) or take what is left."""
MIN_ERROR_W = 10
CAUSE_W = 24
"""ERROR keeps at least this many cells (``RuntimeError: loss is N…``) before a column of lower
value gets room: triage needs the state and the cause first."""
ID_SHARE_W = 36
"""A long id grows past this only while it takes at most half of the JOB ID + ERROR room."""
# The columns that give way, least valuable first, each with its width plus the gap before it.
# JOB ID, STATE and ERROR always stay: without them the list cannot say which job failed and why.
# ML UNITS and TIER are in the detail; CREATED is also the id's own stamp; ELAPSED goes last.
OPTIONAL_COLUMNS: tuple[tuple[str, int], ...] = (
    ("ml", ML_W + 1),
    ("tier", TIER_W + 1),
    ("created", CREATED_W + 1),
    ("elapsed", ELAPSED_W + 1),
)
_CORE = GUTTER + STATE_W + 1 + 1  # the gaps after JOB ID and before ERROR
MIN_WIDTH = _CORE + MIN_ID_W + MIN_ERROR_W

_STATE_CLASS: dict[JobState, str] = {
    **state_classes("job-table"),
    JobState.STATE_UNSPECIFIED: "job-table--dim",
}


def _fit(text: str, width: int, *, right: bool = False) -> str:
    """Exactly ``width`` cells: padded, or cut with an ellipsis."""
    if width <= 0:
        return ""
    length = len(text) if text.isascii() else cell_len(text)
    if length > width:
        return set_cell_size(text, width - 1) + ELLIPSIS
    pad = " " * (width - length)
    return pad + text if right else text + pad


STAMP_W = 16
"""``_YYYYMMDD_HHMMSS``: what a stamped id adds to its base name (``model.job_id``)."""


def fit_job_id(job_id: str, base: str, width: int) -> str:
    """``job_id`` in ``width`` cells, cut where it still tells jobs apart.

    A stamped id drops the year, then the date (a family is sorted newest first), keeping the
    base name and the time: ``census_dist_…1122_175721``, ``census_dist…_175721``, then
    ``census_d…_175721``. Any other id is cut at its end, never mid-way.
    """
    if len(job_id) <= width or not job_id.isascii() or len(job_id) != len(base) + STAMP_W:
        return _fit(job_id, width)
    stamp = job_id[len(base) :]  # "_20261122_175721"
    for shown in (base + "_" + ELLIPSIS + stamp[5:], base + ELLIPSIS + stamp[9:]):
        if len(shown) <= width:
            return shown + " " * (width - len(shown))
    head = width - 1 - 7
    if head < 3:
        return _fit(job_id, width)
    return base[:head] + ELLIPSIS + stamp[9:]


@dataclass(frozen=True, slots=True)
class _Layout:
    """Which columns one widget width shows, and how wide JOB ID and ERROR are."""

    id_w: int
    error_w: int
    width: int
    """The row width in cells (at least the widget's width)."""
    ml: bool = True
    tier: bool = True
    created: bool = True
    elapsed: bool = True


@dataclass(frozen=True, slots=True)
class _Styles:
    """Rich styles resolved from the component classes, rebuilt whenever CSS changes."""

    base: Style
    header: Style
    cursor: Style
    marked: Style
    flash: Style
    watched: Style
    group: Style
    dim: Style
    restarts: Style
    stalled: Style
    states: dict[JobState, Style]


class JobTable(LineCursorView[_Styles], can_focus=True):
    """A virtual table of jobs: 100k rows cost a Python list, not widgets or measured cells.

    Feed it :class:`JobRow` and :class:`GroupRow` objects in display order with :meth:`set_rows`;
    sorting, filtering and folding happen in the model (``tui_app.model.views.job_view``).
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "job-table--header",
        "job-table--cursor",
        "job-table--marked",
        "job-table--group",
        "job-table--dim",
        *state_classes("job-table").values(),
        "job-table--watched",
        "job-table--flash",
        "job-table--restarts",
        "job-table--stalled",
    }
    """
    | Class | Description |
    | :- | :- |
    | `job-table--header` | The sticky column titles. |
    | `job-table--cursor` | The cursor row (brighter while the table has focus). |
    | `job-table--marked` | Marked rows. |
    | `job-table--group` | Folded families (`▸ mnist (5 jobs)`). |
    | `job-table--dim` | Secondary text: CREATED, ML UNITS, "No jobs". |
    | `job-table--state-*` | The STATE cell, one per state (colours: widgets/state_colours.py). |
    | `job-table--watched` | The ⚑ of a watched job, and the header's count of them. |
    | `job-table--flash` | A row whose watched job just ended, while it flashes. |
    | `job-table--restarts` | The ``↻N`` of a job whose replicas restarted (in its STATE cell). |
    | `job-table--stalled` | ``⚠ stalled 12m`` in the ERROR cell of a job that hangs. |
    """

    DEFAULT_CSS = (
        """
    JobTable {
        background: $surface;
        color: $foreground;
        scrollbar-size-vertical: 1;
        & > .job-table--header {
            background: $panel;
            color: $foreground;
            text-style: bold;
        }
        & > .job-table--marked {
            background: $accent 20%;
            text-style: bold;
        }
        & > .job-table--group {
            color: $secondary;
            text-style: bold;
        }
        & > .job-table--dim { color: $text-muted; }
        & > .job-table--watched { color: $accent; text-style: bold; }
        & > .job-table--restarts { color: $warning; text-style: bold; }
        & > .job-table--stalled { color: $warning; text-style: bold; }
        & > .job-table--flash {
            background: $warning 50%;
            color: $foreground;
            text-style: bold;
        }
    """
        + state_css("job-table")
        + """
    }
    """
        + cursor_css("JobTable", "job-table--cursor")
    )

    BINDINGS: ClassVar[list[BindingType]] = [
        *list_bindings("job-table"),
        Binding(
            "space",
            "toggle_mark",
            "Mark",
            tooltip="Mark or unmark the job under the cursor, then move down",
            id="job-table.mark",
        ),
        Binding(
            "enter",
            "activate",
            "Open",
            tooltip="Open the job under the cursor",
            id="job-table.activate",
        ),
        Binding(
            "w",
            "toggle_watch",
            "Watch",
            show=False,  # the footer's room at 80 columns is for triage; ? and the palette list it
            tooltip=f"Watch the job under the cursor or the marked ones ({WATCH_GLYPH}); "
            "told when it ends: toast, flash, bell, desktop notification",
            id="job-table.watch",
        ),
    ]

    sort_column: reactive[SortColumn] = reactive(SortColumn.DEFAULT)
    """The order the rows are in; the header shows ▲/▼ on its column. Set it with the rows."""
    sort_reverse: reactive[bool] = reactive(False)
    """True when ``sort_column``'s natural direction is flipped."""

    @dataclass
    class CursorMoved(ControlMessage["JobTable"]):
        """The cursor is on a different row (or the list became empty: ``key`` None)."""

        key: str | None

        def can_replace(self, message: Message) -> bool:
            # Holding `j` on 100k rows: only the last position matters.
            return isinstance(message, JobTable.CursorMoved) and message.widget is self.widget

    @dataclass
    class Activated(ControlMessage["JobTable"]):
        """The user pressed enter (or double-clicked) on a row."""

        key: str

    @dataclass
    class MarksChanged(ControlMessage["JobTable"]):
        """The set of marked job ids changed."""

        marked: frozenset[str]

    @dataclass
    class WatchRequested(ControlMessage["JobTable"]):
        """``w``: watch or unwatch these jobs (the marked ones, else the cursor's row; a folded
        group's jobs). The App keeps the watches: they outlive a screen."""

        job_ids: tuple[str, ...]

    @dataclass
    class GroupMarkRequested(ControlMessage["JobTable"]):
        """``space`` on a folded group: the table holds no ids for it, the screen does."""

        base: str

    def __init__(
        self,
        rows: Sequence[ListRow] = (),
        *,
        now: datetime | None = None,
        **options: Unpack[WidgetOptions],
    ) -> None:
        super().__init__(**options)
        self._rows: Sequence[ListRow] = ()
        self._cursor = 0
        self._now = now or datetime.now().astimezone()
        self._longest_id = 0
        self.marked: set[str] = set()
        """Marked job ids. Read it freely; change it with toggle_mark/set_marks/clear_marks."""
        self._watched: frozenset[str] = frozenset()
        self._watch_note = ""
        self._flash_until: dict[str, float] = {}
        """Flashing job ids and when (time.monotonic) each stops."""
        self._flash_lit = True
        self._flash_timer: Timer | None = None
        self._strips: LRUCache[tuple[object, ...], Strip] = LRUCache(1024)
        self._style_cache: _Styles | None = None
        self._column_layout: tuple[tuple[int, int], _Layout] | None = None
        if rows:
            self.set_rows(rows)

    # -----------------------------------------------------------------------------------------
    # Data

    @property
    def rows(self) -> Sequence[ListRow]:
        """The rows in display order (do not modify; use :meth:`set_rows`)."""
        return self._rows

    @property
    def row_count(self) -> int:
        """How many rows the table holds."""
        return len(self._rows)

    @property
    def cursor_row(self) -> int:
        """The cursor's index into :attr:`rows` (0 when empty)."""
        return self._cursor

    @property
    def cursor_key(self) -> str | None:
        """The key of the row under the cursor (job id or ``group:<base>``), None when empty."""
        if not self._rows:
            return None
        return self._rows[self._cursor].key

    @property
    def current(self) -> ListRow | None:
        """The row under the cursor, None when empty."""
        return self._rows[self._cursor] if self._rows else None

    @property
    def now(self) -> datetime:
        """The time ELAPSED is measured to, and whose tzinfo CREATED is shown in."""
        return self._now

    @now.setter
    def now(self, value: datetime) -> None:
        old, self._now = self._now, value
        if not self._rows or not self.is_mounted:
            return
        if value.tzinfo != old.tzinfo:  # every CREATED cell changes
            self.refresh()
            return
        # Only visible live rows change; their cached strips are keyed by the second.
        top = self.scroll_offset.y
        height = self.scrollable_content_region.height - 1
        width = max(self.virtual_size.width, self.size.width)
        for i in range(top, min(top + max(height, 0), len(self._rows))):
            row = self._rows[i]
            if isinstance(row, JobRow) and row.ended is None:
                self.refresh(Region(0, i - top + 1, width, 1))

    def set_rows(
        self,
        rows: Sequence[ListRow],
        *,
        cursor_at: int | None = None,
        longest_id: int | None = None,
    ) -> None:
        """Show ``rows`` (in display order), keeping the user's place.

        The cursor stays on the same key when it is still present (else on the same index,
        clamped) and on the same screen line, so a refresh or a re-sort doesn't jump. Marks are
        kept as they are, including marks on rows the new list doesn't show (a filter).

        Finding a moved key and the longest id walk every row, whose objects are scattered over
        the heap: ~25 ms per 100k rows in cache misses, too much for every filter keystroke. A
        caller that knows better says so.

        Args:
            rows: JobRows and GroupRows in display order (copied unless immutable).
            cursor_at: Where the cursor's row is in ``rows``, -1 when it is not there and no
                folded group holds it; None to search.
            longest_id: The JobRows' longest id (``longest_id_of``) or more, e.g. that of the
                unfiltered list, which also keeps the columns still while a filter is typed;
                None to measure ``rows``.
        """
        old_key = self.cursor_key
        old_index = self._cursor
        screen_line = old_index - self.scroll_offset.y
        # A tuple or a filter's PickedRows cannot change under the table: kept as they are (a
        # copy would touch every one of 100k scattered rows); anything else is copied.
        self._rows = rows if isinstance(rows, tuple | PickedRows) else list(rows)
        bases: list[str] | None = None
        if longest_id is None:
            # Base names are interned and few: one C-level pass over them serves both the column
            # width and the key search, without touching 100k scattered id strings.
            bases = list(map(_BASE, self._rows))
            longest_id = _longest_id(bases)
        if longest_id != self._longest_id:
            self._longest_id = longest_id
            self._column_layout = None
        found = None
        if old_key is None:
            pass
        elif cursor_at is None:
            if bases is None:
                bases = list(map(_BASE, self._rows))
            found = self._find(old_key, old_index, bases)
            if found is None:
                found = self._find_family(old_key, bases)
        elif 0 <= cursor_at < len(self._rows) and self._rows[cursor_at].key == old_key:
            found = cursor_at
        count = len(self._rows)
        self._cursor = found if found is not None else max(0, min(old_index, count - 1))
        self.virtual_size = Size(self._min_width(), count + 1)
        if self.is_mounted:
            was_visible = 0 <= screen_line < self._page_size
            if found is not None and was_visible:
                target = self._cursor - screen_line  # same screen line: nothing jumps
            else:
                target = self.scroll_offset.y  # e.g. the user scrolled away with the wheel
            self.scroll_to(y=max(0, min(target, self.max_scroll_y)), animate=False)
            if was_visible:
                self._scroll_cursor_into_view()
        self.refresh()
        if self.cursor_key != old_key:
            self.post_message(self.CursorMoved(self, self.cursor_key))

    def _find(self, key: str, hint: int, bases: list[str] | None = None) -> int | None:
        """The index of ``key``, looking at ``hint`` and its neighbours first.

        Otherwise it searches by base name (``bases``: every row's, in order): base names are
        interned and few, so ``list.index`` over them stays in cache, where comparing 100k
        scattered job-id strings would not.
        """
        rows = self._rows
        for i in (hint, hint - 1, hint + 1):
            if 0 <= i < len(rows) and rows[i].key == key:
                return i
        if key.startswith(GROUP_KEY_PREFIX):
            base = key[len(GROUP_KEY_PREFIX) :]
        else:
            base = split_job_id(key)[0]
        if bases is None:
            bases = list(map(_BASE, rows))
        i = -1
        while True:
            try:
                i = bases.index(base, i + 1)
            except ValueError:
                return None
            if rows[i].key == key:
                return i

    def _find_family(self, key: str, bases: list[str]) -> int | None:
        """Where a vanished key's family is now: a job's folded group, or a group's first job."""
        if key.startswith(GROUP_KEY_PREFIX):
            try:
                return bases.index(key[len(GROUP_KEY_PREFIX) :])
            except ValueError:
                return None
        return self._find(GROUP_KEY_PREFIX + split_job_id(key)[0], self._cursor, bases)

    def move_to_key(self, key: str) -> bool:
        """Put the cursor on ``key`` (scrolling to it). Returns False when it isn't shown."""
        index = self._find(key, self._cursor)
        if index is None:
            return False
        self._move_cursor(index)
        return True

    def toggle_mark(self) -> None:
        """Mark or unmark the job under the cursor; on a folded group, ask the screen to."""
        row = self.current
        if isinstance(row, GroupRow):
            self.post_message(self.GroupMarkRequested(self, row.base))
            return
        if not isinstance(row, JobRow):
            return
        if row.job_id in self.marked:
            self.marked.discard(row.job_id)
        else:
            self.marked.add(row.job_id)
        self._refresh_row(self._cursor)
        self.post_message(self.MarksChanged(self, frozenset(self.marked)))

    def set_marks(self, keys: Iterable[str]) -> None:
        """Replace the marks (job ids), e.g. for a range or "mark all shown"."""
        new = set(keys)
        if new != self.marked:
            self.marked = new
            self.refresh()
            self.post_message(self.MarksChanged(self, frozenset(new)))

    def clear_marks(self) -> None:
        """Unmark every job."""
        self.set_marks(())

    @property
    def watched(self) -> frozenset[str]:
        """The job ids shown as watched (the App's, given with :meth:`set_watched`)."""
        return self._watched

    def set_watched(self, job_ids: Iterable[str], note: str = "") -> None:
        """Show ``job_ids`` as watched, and ``note`` (``⚑2 watched``) at the header's right end.

        The table only draws the watches; the App keeps them, so they survive the screen.
        """
        watched = frozenset(job_ids)
        if watched != self._watched or note != self._watch_note:
            self._watched = watched
            self._watch_note = note
            self.refresh()

    def watch_selection(self) -> tuple[str, ...]:
        """What ``w`` acts on: the marked jobs, else the cursor's job (a folded group: its
        jobs); () on an empty list."""
        if self.marked:
            return tuple(sorted(self.marked))
        row = self.current
        if isinstance(row, GroupRow):
            return row.job_ids
        if isinstance(row, JobRow):
            return (row.job_id,)
        return ()

    def action_toggle_watch(self) -> None:
        """Ask the App to watch (or stop watching) the jobs ``w`` is on."""
        ids = self.watch_selection()
        if ids:
            self.post_message(self.WatchRequested(self, ids))

    @property
    def flashing(self) -> frozenset[str]:
        """The job ids whose rows are flashing now."""
        return frozenset(self._flash_until)

    def flash(self, job_id: str, seconds: float = FLASH_SECONDS) -> None:
        """Flash ``job_id``'s row (on, off, on...) for ``seconds``: its watched job just ended.

        The row need not be showing (a filter, a folded group); it flashes if it comes back
        in time.
        """
        self._flash_until[job_id] = time.monotonic() + seconds
        self._flash_lit = True
        if self._flash_timer is None:
            self._flash_timer = self.set_interval(FLASH_PERIOD, self._flash_tick)
        self.refresh()

    def _flash_tick(self) -> None:
        now = time.monotonic()
        self._flash_until = {k: t for k, t in self._flash_until.items() if t > now}
        self._flash_lit = not self._flash_lit
        if not self._flash_until and self._flash_timer is not None:
            self._flash_timer.stop()
            self._flash_timer = None
        self.refresh()

    def _row_flags(self, job_id: str) -> int:
        """Bit 0 marked, bit 1 watched, bit 2 lit by a flash: part of a row's cache key."""
        flags = int(job_id in self.marked)
        if job_id in self._watched:
            flags |= 2
        if self._flash_lit and job_id in self._flash_until:
            flags |= 4
        return flags

    # -----------------------------------------------------------------------------------------
    # Cursor and scrolling

    @property
    def _page_size(self) -> int:
        """Rows that fit under the header."""
        return max(1, self.scrollable_content_region.height - 1)

    def _move_cursor(self, index: int) -> None:
        if not self._rows:
            return
        old, old_key = self._cursor, self.cursor_key
        self._cursor = max(0, min(index, len(self._rows) - 1))
        if self._cursor == old:
            return
        self._refresh_row(old)
        self._refresh_row(self._cursor)
        self._scroll_cursor_into_view()
        if self.cursor_key != old_key:
            self.post_message(self.CursorMoved(self, self.cursor_key))

    def _scroll_cursor_into_view(self) -> None:
        if not self.is_mounted or self.scrollable_content_region.height <= 1:
            return
        target = scroll_target(self._cursor, 1, self.scroll_offset.y, self._page_size)
        if target is not None:
            self.scroll_to(y=target, animate=False)

    def _refresh_row(self, index: int) -> None:
        self.refresh_line(index + 1)

    def _move_by(self, delta: int) -> None:
        self._move_cursor(self._cursor + delta)

    def _page_by(self, direction: int) -> None:
        page = direction * self._page_size
        y = self.scroll_offset.y + page
        self.scroll_to(y=max(0, min(y, self.max_scroll_y)), animate=False)
        self._move_cursor(self._cursor + page)

    def action_first(self) -> None:
        """Jump to the first row."""
        self._move_cursor(0)

    def action_last(self) -> None:
        """Jump to the last row."""
        self._move_cursor(len(self._rows) - 1)

    def action_toggle_mark(self) -> None:
        """Mark or unmark the row under the cursor, then move down one row (k9s)."""
        self.toggle_mark()
        self.action_cursor_down()

    def action_activate(self) -> None:
        """Tell the screen the user chose the row under the cursor."""
        key = self.cursor_key
        if key is not None:
            self.post_message(self.Activated(self, key))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or offset.y < 1:
            return
        index = self.scroll_offset.y + offset.y - 1
        if index < len(self._rows):
            self._move_cursor(index)
            if event.chain >= 2:
                self.action_activate()

    # -----------------------------------------------------------------------------------------
    # Rendering

    def on_resize(self, event: events.Resize) -> None:
        self._scroll_cursor_into_view()

    def watch_sort_column(self) -> None:
        self.refresh_line(self.scroll_offset.y)

    def watch_sort_reverse(self) -> None:
        self.refresh_line(self.scroll_offset.y)

    def _min_width(self) -> int:
        """The narrowest row: JOB ID, STATE and a short ERROR (wider widgets show more)."""
        return MIN_WIDTH

    def _resolve_styles(self) -> _Styles:
        base = self.rich_style
        get = self.get_component_rich_style
        fg = self._foreground
        return _Styles(
            base=base,
            header=base + get("job-table--header"),
            cursor=base + get("job-table--cursor"),
            marked=base + get("job-table--marked"),
            flash=base + get("job-table--flash"),
            watched=fg("job-table--watched"),
            group=fg("job-table--group"),
            dim=fg("job-table--dim"),
            restarts=fg("job-table--restarts"),
            stalled=fg("job-table--stalled"),
            states={state: fg(name) for state, name in _STATE_CLASS.items()},
        )

    @property
    def shown_sorts(self) -> frozenset[SortColumn]:
        """The orders whose column the current width shows (``o`` steps through only these)."""
        layout = self._layout(self.scrollable_content_region.width)
        optional = (
            (layout.created, SortColumn.CREATED),
            (layout.elapsed, SortColumn.ELAPSED),
            (layout.tier, SortColumn.TIER),
            (layout.ml, SortColumn.ML_UNITS),
        )
        always = {SortColumn.DEFAULT, SortColumn.ID, SortColumn.STATE}
        return frozenset(always | {column for shown, column in optional if shown})

    def _layout(self, width: int) -> _Layout:
        key = (width, self._longest_id)
        if self._column_layout is not None and self._column_layout[0] == key:
            return self._column_layout[1]
        layout = column_layout(width, self._longest_id)
        self._column_layout = (key, layout)
        return layout

    def render_line(self, y: int) -> Strip:
        """One screen line: the header at ``y == 0``, rows below it."""
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        layout = self._layout(width)
        styles = self._styles()
        if y == 0:
            strip = self._render_header(layout, styles)
        else:
            index = scroll_y + y - 1
            if index < len(self._rows):
                strip = self._render_row(index, layout, styles)
            elif index == 0:
                text = " " * GUTTER + "No jobs"
                strip = Strip([Segment(text, styles.base + styles.dim)], len(text))
            else:
                return Strip.blank(width, styles.base)
        return strip.crop_extend(scroll_x, scroll_x + width, styles.base)

    def _render_header(self, layout: _Layout, styles: _Styles) -> Strip:
        column = self.sort_column
        arrow = sort_arrow(column, self.sort_reverse)

        def title(name: str, width: int, *sorts: SortColumn, right: bool = False) -> str:
            if column in sorts:
                name = arrow + name if right else name + arrow
            return _fit(name, width, right=right)

        parts = [
            " " * GUTTER,
            _fit(sort_header(column, self.sort_reverse, layout.id_w), layout.id_w),
            " ",
            title("STATE", STATE_W, SortColumn.STATE),
        ]
        if layout.created:
            parts += [" ", title("CREATED", CREATED_W, SortColumn.CREATED)]
        if layout.elapsed:
            parts += [" ", title("ELAPSED", ELAPSED_W, SortColumn.ELAPSED, right=True)]
        if layout.tier:
            parts += [" ", title("TIER", TIER_W, SortColumn.TIER)]
        if layout.ml:
            # "▼ML UNITS" is one cell wider than the column: it borrows the gap before it.
            parts.append(title("ML UNITS", ML_W + 1, SortColumn.ML_UNITS, right=True))
        note = self._watch_note
        if note and cell_len(note) + len("ERROR ") > layout.error_w:
            note = note.split(" ", 1)[0]  # "⚑2 watched" -> "⚑2"
        if note and cell_len(note) + len("ERROR ") <= layout.error_w:
            error_w = layout.error_w - cell_len(note)
            parts += [" ", _fit("ERROR", error_w)]
            text = _fit("".join(parts), layout.width - cell_len(note))
            return Strip(
                [Segment(text, styles.header), Segment(note, styles.header + styles.watched)],
                layout.width,
            )
        parts += [" ", _fit("ERROR", layout.error_w)]
        text = "".join(parts)
        return Strip([Segment(_fit(text, layout.width), styles.header)], layout.width)

    def _render_row(self, index: int, layout: _Layout, styles: _Styles) -> Strip:
        row = self._rows[index]
        is_cursor = index == self._cursor
        now = self._now
        if type(row) is GroupRow:
            marks = self._group_marks(row)
            watched = bool(self._watched) and not self._watched.isdisjoint(row.job_ids)
            key: tuple[object, ...] = (row, layout, is_cursor, marks, watched, None)
        else:
            assert isinstance(row, JobRow)
            live = row.ended is None and (row.started or row.created) is not None
            tick = int(now.timestamp()) if live else None
            flags = self._row_flags(row.job_id)
            key = (row, layout, is_cursor, flags, tick, now.tzinfo)
        strip = self._strips.get(key)
        if strip is None:
            if isinstance(row, GroupRow):
                strip = self._group_strip(row, layout, styles, is_cursor, marks, watched)
            else:
                strip = self._job_strip(row, layout, styles, is_cursor, flags, now)
            self._strips.set(key, strip)
        return strip

    def _job_strip(
        self,
        row: JobRow,
        layout: _Layout,
        styles: _Styles,
        is_cursor: bool,
        flags: int,
        now: datetime,
    ) -> Strip:
        is_marked, is_watched, is_lit = bool(flags & 1), bool(flags & 2), bool(flags & 4)
        back = styles.cursor if is_cursor else styles.marked if is_marked else styles.base
        solid = is_cursor
        if is_lit:  # a flash shows on the cursor's row too: that is often the job just watched
            back, solid = styles.flash, True

        def paint(fg: Style) -> Style:
            # The cursor row is one solid style: state colours could vanish on its background.
            return back if solid else back + fg

        plain = Style()
        state_text = f"{STATE_SYMBOL[row.state]} {state_name(row.state)}"
        if row.state is JobState.QUEUED and row.position is not None:
            state_text += f" #{row.position}"
        mark = MARK_GLYPH if is_marked else " "
        cells: list[tuple[str, Style]] = (
            [(mark, plain), (WATCH_GLYPH, styles.watched)] if is_watched else [(mark + " ", plain)]
        )
        cells.append((fit_job_id(row.job_id, row.base, layout.id_w) + " ", plain))
        cells += _state_cells(state_text, restart_marker(row.restart_count), styles, row.state)
        if layout.created:
            cells.append(
                (_fit(_format_created(row.created, now.tzinfo), CREATED_W) + " ", styles.dim)
            )
        if layout.elapsed:
            ran = row.elapsed(now)
            if ran is None and row.ended is None:
                # Not started: its time in the queue so far, marked with its state's symbol and
                # colour, so that it is not read as run time (which starts from 0s).
                waited = format_elapsed(row.waited(now))
                text = f"{STATE_SYMBOL[row.state]} {waited}" if waited else ""
                cells.append((_fit(text, ELAPSED_W, right=True) + " ", styles.states[row.state]))
            else:
                cells.append((_fit(format_elapsed(ran), ELAPSED_W, right=True) + " ", plain))
        if layout.tier:
            cells.append((_fit(row.tier_label, TIER_W) + " ", plain))
        if layout.ml:
            ml = f"{row.ml_units:.2f}" if row.ml_units is not None else ""
            cells.append((_fit(ml, ML_W, right=True) + " ", styles.dim))
        if not row.error and row.stalled_since is not None:
            cells.append((_fit(row.stall_text(now), layout.error_w), styles.stalled))
        else:
            cells.append((_fit(row.error, layout.error_w), styles.states[JobState.FAILED]))
        used = sum(cell_len(text) for text, _ in cells)
        if used < layout.width:
            cells.append((" " * (layout.width - used), plain))
        return Strip([Segment(text, paint(fg)) for text, fg in cells], max(used, layout.width))

    def _group_marks(self, group: GroupRow) -> int:
        """How many of the group's jobs are marked."""
        marked = self.marked
        return sum(job_id in marked for job_id in group.job_ids) if marked else 0

    def _group_strip(
        self,
        group: GroupRow,
        layout: _Layout,
        styles: _Styles,
        is_cursor: bool,
        marks: int,
        watched: bool = False,
    ) -> Strip:
        back = styles.cursor if is_cursor else styles.marked if marks else styles.base
        noun = "job" if group.count == 1 else "jobs"
        # Every job marked: the mark; some: the mark and how many ("●2/3").
        mark = MARK_GLYPH if marks else " "
        if marks and marks < group.count:
            noun += f", {marks} marked"
        watch = WATCH_GLYPH if watched else " "  # some of its jobs are watched
        segments = [
            Segment(f"{mark}{watch}{GROUP_GLYPH} {group.base} ({group.count} {noun}) ", back)
        ]
        if not is_cursor:
            segments[0] = Segment(segments[0].text, back + styles.group)
        for state, n in group.counts:
            style = back if is_cursor else back + styles.states[state]
            segments.append(Segment(f" {STATE_SYMBOL[state]}{n}", style))
        strip = Strip(segments)
        return strip.crop_extend(0, layout.width, back)


_BASE = attrgetter("base")


def longest_id_of(rows: Sequence[ListRow]) -> int:
    """What :meth:`JobTable.set_rows` measures when not told: for a list filtered many times."""
    return _longest_id(list(map(_BASE, rows)))


def column_layout(width: int, longest_id: int) -> _Layout:
    """The columns for a ``width``-cell list whose longest id has ``longest_id`` characters.

    The optional columns come in from the most valuable while JOB ID keeps up to COMFORT_ID_W
    (its longest, at least MIN_ID_W) and ERROR CAUSE_W. What is left goes to the id up to its
    longest, sharing with ERROR past ID_SHARE_W. Too narrow for both, the id gives way down to
    MIN_ID_W. Below MIN_WIDTH the row is MIN_WIDTH wide and scrolls sideways.
    """
    total = max(width, MIN_WIDTH)
    id_want = max(MIN_ID_W, min(longest_id, COMFORT_ID_W))
    shown: set[str] = set()
    rest = total - _CORE
    for name, cells in reversed(OPTIONAL_COLUMNS):
        if rest - cells >= id_want + CAUSE_W:
            shown.add(name)
            rest -= cells
        else:
            break  # a less valuable column never takes room a more valuable one lacked
    # Short of room, the id is cut (it stays readable, see fit_job_id) before the cause is.
    cap = min(max(rest - CAUSE_W, MIN_ID_W), max(ID_SHARE_W, rest // 2))
    id_w = max(MIN_ID_W, min(longest_id, cap))
    error_w = rest - id_w
    return _Layout(
        id_w=id_w,
        error_w=error_w,
        width=total,
        ml="ml" in shown,
        tier="tier" in shown,
        created="created" in shown,
        elapsed="elapsed" in shown,
    )


def _longest_id(bases: list[str]) -> int:
    """The longest job id of rows with these base names, or a little more (cheap at 100k rows).

    An id is its base name plus a 16-character ``_YYYYMMDD_HHMMSS`` suffix, or just the base name,
    so the distinct base names bound it without touching 100k id strings.
    """
    return max(map(len, set(bases))) + 16 if bases else 0


def _state_cells(
    state_text: str, marker: str, styles: _Styles, state: JobState
) -> list[tuple[str, Style]]:
    """The STATE cell and the gap after it: the state, then a restarted job's ``↻N`` at the
    cell's right end (the state's name is cut for it, not the count: "▶ RUNNING ↻1" fits)."""
    if not marker:
        return [(_fit(state_text, STATE_W) + " ", styles.states[state])]
    marker = _fit(marker, min(cell_len(marker), STATE_W // 2))  # a count past belief stays in
    room = STATE_W - cell_len(marker) - 1
    return [
        (_fit(state_text, room) + " ", styles.states[state]),
        (marker + " ", styles.restarts),
    ]


def _format_created(created: datetime | None, tz: tzinfo | None) -> str:
    """``11-22 08:30`` in ``tz`` (the viewer's zone: the tzinfo of ``now``)."""
    if created is None:
        return ""
    return created.astimezone(tz).strftime("%m-%d %H:%M")
