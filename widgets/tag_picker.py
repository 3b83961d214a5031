"""TagPicker: a job's metric tags in TensorBoard's groups, filtered as the user types, marked
with ``space`` and shown with ``enter``.

::

    ▾ epoch (2)
      ● epoch_loss
        epoch_accuracy
    ▾ training (1)
        training/hptuning/metric

A job can log thousands of tags (one per layer and statistic); Textual's ``OptionList`` measures
every option on each change (10,000 tags: about half a second to set, and as long again to mark
one), so the picker is a Line-API list like the job table: it draws only the rows on screen,
and a filter keystroke or a mark costs a rebuild of a plain list, not a layout.

``space`` marks the tag under the cursor (on a group's line: all of the group's tags, or none);
``enter`` posts ``TagsChosen`` with the marked tags, or the tag under the cursor (a group's line:
its tags) when none is marked. It never fetches anything: the screen hands it the tags.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar, Unpack

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.strip import Strip

from tui_app.model.metrics.metric_tags import tag_groups
from tui_app.widgets.line_cursor import (
    ControlMessage,
    LineCursorView,
    cursor_css,
    list_bindings,
    scroll_target,
)
from tui_app.widgets.widget_options import WidgetOptions

MARK = "●"


@dataclass(frozen=True, slots=True)
class _Row:
    group: str
    tag: str | None
    """None on a group's line."""
    count: int = 0
    """A group line's number of tags (as filtered)."""


@dataclass(frozen=True, slots=True)
class _Styles:
    base: Style
    cursor: Style
    group: Style
    marked: Style
    shown: Style
    dim: Style


class TagPicker(LineCursorView[_Styles]):
    """Tags grouped by their prefix before ``/``; marks, a cursor, filter by ``set_tags``."""

    can_focus = True

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "tag-picker--cursor",
        "tag-picker--group",
        "tag-picker--marked",
        "tag-picker--shown",
        "tag-picker--dim",
    }
    """
    | Class | Description |
    | :- | :- |
    | `tag-picker--cursor` | The row under the cursor. |
    | `tag-picker--group` | A group's line (``▾ epoch (2)``). |
    | `tag-picker--marked` | A marked tag (also ``●``, so it reads without colour). |
    | `tag-picker--shown` | A tag the charts show now. |
    | `tag-picker--dim` | "No tags" and counts. |
    """
    DEFAULT_CSS = """
    TagPicker {
        background: $surface;
        scrollbar-size-vertical: 1;
        & > .tag-picker--group { color: $secondary; text-style: bold; }
        & > .tag-picker--marked { color: $accent; text-style: bold; }
        & > .tag-picker--shown { color: $primary; }
        & > .tag-picker--dim { color: $text-muted; }
    }
    """ + cursor_css("TagPicker", "tag-picker--cursor")

    BINDINGS: ClassVar[list[BindingType]] = [
        *list_bindings("tag-picker"),
        Binding(
            "space",
            "toggle_mark",
            "Mark tag",
            id="tag-picker.mark",
            tooltip="Mark the tag (a group's line: all its tags) for enter",
        ),
        Binding(
            "enter",
            "choose",
            "Show",
            id="tag-picker.show",
            tooltip="Chart the marked tags, or the one under the cursor",
        ),
    ]

    @dataclass
    class TagsChosen(ControlMessage["TagPicker"]):
        """``enter``: chart these tags, in this order."""

        tags: list[str]

    class MarksChanged(ControlMessage["TagPicker"]):
        """A tag was marked or unmarked (the screen says how many are)."""

    def __init__(self, **options: Unpack[WidgetOptions]) -> None:
        super().__init__(**options)
        self._rows: list[_Row] = []
        self._cursor = 0
        self.marked: set[str] = set()
        """Tags marked with space (kept while a filter hides them)."""
        self.shown: frozenset[str] = frozenset()
        """Tags the charts show now (drawn in their own colour)."""
        self._tags: tuple[str, ...] = ()
        self._strips: LRUCache[tuple[object, ...], Strip] = LRUCache(256)

    # -- data ----------------------------------------------------------------------------------

    @property
    def tags(self) -> tuple[str, ...]:
        """The tags listed now (as filtered), in order."""
        return self._tags

    @property
    def cursor_tag(self) -> str | None:
        """The tag under the cursor (None on a group's line or an empty list)."""
        row = self._row()
        return row.tag if row is not None else None

    def set_tags(self, tags: Iterable[str]) -> None:
        """List ``tags``, in the order of ``grouped_order`` (a filter of it keeps that order),
        under their groups; the cursor stays on its tag (or group) when it is still listed.

        The order is not made here: sorting 10,000 tags naturally takes a fifth of a second,
        too long for each keystroke of a filter, so the screen sorts once per new tag.
        """
        tags = tuple(tags)
        if tags == self._tags:
            return
        here = self._row()
        self._tags = tags
        rows: list[_Row] = []
        header = -1
        for tag in tags:
            group = tag_group(tag)
            if header < 0 or rows[header].group != group:
                header = len(rows)
                rows.append(_Row(group, None, 0))
            rows[header] = _Row(group, None, rows[header].count + 1)
            rows.append(_Row(group, tag))
        self._rows = rows
        self._strips.clear()
        self.virtual_size = Size(self.size.width, len(rows))
        cursor = 0
        if here is not None:
            cursor = next(
                (i for i, r in enumerate(rows) if (r.group, r.tag) == (here.group, here.tag)),
                next((i for i, r in enumerate(rows) if r.group == here.group), 0),
            )
        self._cursor = cursor
        self._scroll_cursor_into_view()
        self.refresh()

    def set_shown(self, tags: Iterable[str]) -> None:
        shown = frozenset(tags)
        if shown != self.shown:
            self.shown = shown
            self._strips.clear()
            self.refresh()

    def move_to_tag(self, tag: str) -> bool:
        """Put the cursor on ``tag``; False when it is not listed (filtered out)."""
        for i, row in enumerate(self._rows):
            if row.tag == tag:
                self._move_cursor(i)
                return True
        return False

    def _row(self) -> _Row | None:
        return self._rows[self._cursor] if 0 <= self._cursor < len(self._rows) else None

    def _group_tags(self, group: str) -> list[str]:
        return [r.tag for r in self._rows if r.group == group and r.tag is not None]

    # -- keys ----------------------------------------------------------------------------------

    def action_toggle_mark(self) -> None:
        """Mark or unmark the tag under the cursor (a group: all of it), then move down."""
        row = self._row()
        if row is None:
            return
        tags = self._group_tags(row.group) if row.tag is None else [row.tag]
        if all(t in self.marked for t in tags):
            self.marked.difference_update(tags)
        else:
            self.marked.update(tags)
        self._strips.clear()
        self.refresh()
        self.post_message(self.MarksChanged(self))
        if row.tag is not None:
            self.action_cursor_down()

    def clear_marks(self) -> None:
        if self.marked:
            self.marked.clear()
            self._strips.clear()
            self.refresh()
            self.post_message(self.MarksChanged(self))

    def action_choose(self) -> None:
        """Chart the marked tags (in list order, hidden ones after), else the cursor's."""
        if self.marked:
            listed = [t for t in self._tags if t in self.marked]
            chosen = listed + sorted(self.marked.difference(listed))
        else:
            row = self._row()
            if row is None:
                return
            chosen = self._group_tags(row.group) if row.tag is None else [row.tag]
        self.post_message(self.TagsChosen(self, chosen))

    def action_first(self) -> None:
        self._move_cursor(0)

    def action_last(self) -> None:
        self._move_cursor(len(self._rows) - 1)

    def _move_by(self, delta: int) -> None:
        self._move_cursor(self._cursor + delta)

    def _page_by(self, direction: int) -> None:
        page = direction * self._page_size
        self.scroll_to(y=max(0, min(self.scroll_offset.y + page, self.max_scroll_y)), animate=False)
        self._move_cursor(self._cursor + page)

    @property
    def _page_size(self) -> int:
        return max(1, self.scrollable_content_region.height)

    def _move_cursor(self, index: int) -> None:
        if not self._rows:
            return
        old = self._cursor
        self._cursor = max(0, min(index, len(self._rows) - 1))
        if self._cursor != old:
            self.refresh_line(old)
            self.refresh_line(self._cursor)
            self._scroll_cursor_into_view()

    def _scroll_cursor_into_view(self) -> None:
        if not self.is_mounted or self.scrollable_content_region.height < 1:
            return
        target = scroll_target(self._cursor, 1, self.scroll_offset.y, self._page_size)
        if target is not None:
            self.scroll_to(y=target, animate=False)

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        index = self.scroll_offset.y + offset.y
        if index < len(self._rows):
            self._move_cursor(index)
            if event.chain >= 2:
                self.action_choose()

    def on_resize(self, event: events.Resize) -> None:
        self.virtual_size = Size(event.size.width, len(self._rows))
        self._strips.clear()
        self._scroll_cursor_into_view()

    # -- drawing -------------------------------------------------------------------------------

    def _resolve_styles(self) -> _Styles:
        base = self.rich_style
        fg = self._foreground
        return _Styles(
            base=base,
            cursor=base + self.get_component_rich_style("tag-picker--cursor"),
            group=fg("tag-picker--group"),
            marked=fg("tag-picker--marked"),
            shown=fg("tag-picker--shown"),
            dim=fg("tag-picker--dim"),
        )

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        styles = self._styles()
        index = scroll_y + y
        if index >= len(self._rows):
            if index == 0:
                text = " no tags" if not self._tags else ""
                return Strip([Segment(text.ljust(width), styles.base + styles.dim)], width)
            return Strip.blank(width, styles.base)
        row = self._rows[index]
        cursor = index == self._cursor
        key = (index, row, cursor, width, row.tag in self.marked if row.tag else None)
        strip = self._strips.get(key)
        if strip is None:
            strip = self._row_strip(row, cursor, width, styles)
            self._strips.set(key, strip)
        return strip.crop_extend(scroll_x, scroll_x + width, styles.base)

    def _row_strip(self, row: _Row, cursor: bool, width: int, styles: _Styles) -> Strip:
        base = styles.cursor if cursor else styles.base
        if row.tag is None:
            marked = sum(1 for t in self._group_tags(row.group) if t in self.marked)
            count = f"{marked}/{row.count}" if marked else str(row.count)
            segments = [
                Segment(f"▾ {row.group}", base + styles.group),
                Segment(f" ({count})", base + styles.dim),
            ]
        else:
            marked = row.tag in self.marked
            style = styles.marked if marked else styles.shown if row.tag in self.shown else None
            segments = [
                Segment(
                    f"  {MARK if marked else ' '} ", base + (styles.marked if marked else Style())
                ),
                Segment(row.tag, base + style if style else base),
            ]
        strip = Strip(segments)
        return strip.crop_extend(0, width, base)


def tag_group(tag: str) -> str:
    """TensorBoard's group of ``tag``: the part before its first ``/`` (``metric_tags``)."""
    return tag.split("/", 1)[0]


def grouped_order(tags: Iterable[str]) -> list[str]:
    """``tags`` in the picker's order: TensorBoard's groups, natural order within each."""
    return [t for _, members in tag_groups(tags) for t in members]
