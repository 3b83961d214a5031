"""What the Line-API lists with a cursor row (the job table, the log view) have in common.

Both draw only the visible rows of a plain Python list, cache a Strip per row in an LRU, resolve
their Rich styles once per CSS change, and move a cursor row with the same keys. Their cursors
differ (a row index under a sticky header; an encoded log row that follows new lines and may
wrap), so each widget says what one step and one page mean, and this module holds the rest:
the key bindings, the cursor row's CSS, the style and strip caches, where to scroll to show a
row, and the base of the messages they post about themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from rich.style import Style
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.widget import Widget

__all__ = [
    "ControlMessage",
    "LineCursorView",
    "back_binding",
    "cursor_bindings",
    "cursor_css",
    "list_bindings",
    "scroll_target",
    "table_bindings",
]

StylesT = TypeVar("StylesT")
WidgetT = TypeVar("WidgetT", bound=Widget)


@dataclass
class ControlMessage(Message, Generic[WidgetT]):
    """A message about the widget that posts it, as a dataclass whose first field is that widget.

    ``control`` is that widget, so a screen with several lists can take one list's messages
    with ``@on(Message, "#id")``. It stays a property over the ``widget`` field: ``Message``
    defines ``control`` as a read-only property, which a dataclass field of that name could not
    set (Textual's own ``Input.Changed`` aliases its ``input`` field the same way).
    """

    widget: WidgetT
    """The widget the message is about."""

    @property
    def control(self) -> WidgetT:
        """The widget the message is about (``widget``), for ``@on``'s selector."""
        return self.widget


def cursor_bindings(prefix: str, first: str = "first") -> list[BindingType]:
    """The keys that move a cursor (vim's and less's as well as the arrows), ids under ``prefix``.

    The ids (``<prefix>.up``…) are what a user's keymap names, so each widget keeps its own.
    ``first`` is the widget's action for its first row.
    """
    return [
        Binding("up,k", "cursor_up", "Up", show=False, id=f"{prefix}.up"),
        Binding("down,j", "cursor_down", "Down", show=False, id=f"{prefix}.down"),
        Binding("pageup,ctrl+b", "page_up", "Page up", show=False, id=f"{prefix}.page-up"),
        Binding("pagedown,ctrl+f", "page_down", "Page down", show=False, id=f"{prefix}.page-down"),
        Binding("home,g", first, "First", show=False, id=f"{prefix}.first"),
    ]


def back_binding(prefix: str) -> Binding:
    """``esc`` or ``q`` leaves a full screen for the one beneath (its ``back`` action), the same
    key on every screen; the id (``<prefix>.back``) is the screen's own, for a user's keymap."""
    return Binding("escape,q", "back", "Back", id=f"{prefix}.back")


def list_bindings(prefix: str) -> list[BindingType]:
    """``cursor_bindings`` with ``end``/``G`` to the last row, for a list whose actions have
    those names (an ``OptionList``, the job table, the tag picker): every list moves alike."""
    return [
        *cursor_bindings(prefix),
        Binding("end,G", "last", "Last", show=False, id=f"{prefix}.last"),
    ]


def table_bindings(prefix: str) -> list[BindingType]:
    """The same keys for a ``DataTable``, whose first and last rows are ``scroll_top`` and
    ``scroll_bottom`` (they move its cursor too)."""
    return [
        *cursor_bindings(prefix, first="scroll_top"),
        Binding("end,G", "scroll_bottom", "Last", show=False, id=f"{prefix}.last"),
    ]


def cursor_css(widget: str, component: str) -> str:
    """CSS for the cursor row, component class ``component`` of widget type ``widget``.

    Every list's cursor is the theme's block cursor, dimmer while the list lacks focus, so the
    user finds the cursor the same way in each (and in Textual's own tables).
    """
    return f"""
    {widget} > .{component} {{
        background: $block-cursor-blurred-background;
        color: $block-cursor-blurred-foreground;
        text-style: $block-cursor-blurred-text-style;
    }}
    {widget}:focus > .{component} {{
        background: $block-cursor-background;
        color: $block-cursor-foreground;
        text-style: $block-cursor-text-style;
    }}
    """


def scroll_target(top: int, height: int, y: int, page: int, *, center: bool = False) -> int | None:
    """Where to scroll so lines ``top``…``top + height - 1`` show in ``page`` lines from ``y``.

    None when they already show: scrolling as little as possible keeps the user's bearings. A
    row above comes in at the top, one below at the bottom (its start, if taller than the
    page); with ``center``, a jump to a far row (a match) lands it mid-page with context.
    """
    if top >= y and top + height <= y + page:
        return None
    if center:
        return top - max(0, (page - height) // 2)
    if top < y or height > page:
        return top
    return top + height - page


class LineCursorView(ScrollView, Generic[StylesT]):
    """A ScrollView whose rows are cached Strips, styled from component classes, with a cursor.

    Subclasses build their styles in :meth:`_resolve_styles`, keep their strips in ``_strips``,
    and say what a step and a page are in :meth:`_move_by` and :meth:`_page_by`.
    """

    _strips: LRUCache[Any, Any]
    """Rendered rows; every one depends on the styles, so a CSS change drops them all."""
    _style_cache: StylesT | None = None

    def notify_style_update(self) -> None:
        """CSS changed (theme, focus): drop every style and strip derived from it."""
        super().notify_style_update()
        self._style_cache = None
        self._strips.clear()

    def _styles(self) -> StylesT:
        """The resolved styles: looked up once per CSS change, not once per rendered line."""
        if self._style_cache is None:
            self._style_cache = self._resolve_styles()
        return self._style_cache

    def _resolve_styles(self) -> StylesT:
        raise NotImplementedError

    def _foreground(self, name: str) -> Style:
        """Component class ``name``'s colour as composed over our background, and its text style.

        The row decides the background (cursor, marked, plain), so only the colour and the
        text style (bold, italic) of the class are kept.
        """
        get = self.get_component_rich_style
        return Style.from_color(get(name).color) + get(name, partial=True).without_color

    def _move_by(self, delta: int) -> None:
        """Move the cursor ``delta`` rows (negative: up)."""
        raise NotImplementedError

    def _page_by(self, direction: int) -> None:
        """Scroll a page up (-1) or down (1), the cursor keeping its place on screen."""
        raise NotImplementedError

    def action_cursor_up(self) -> None:
        """Move the cursor up one row."""
        self._move_by(-1)

    def action_cursor_down(self) -> None:
        """Move the cursor down one row."""
        self._move_by(1)

    def action_page_up(self) -> None:
        """Scroll up a page; the cursor keeps its screen line."""
        self._page_by(-1)

    def action_page_down(self) -> None:
        """Scroll down a page; the cursor keeps its screen line."""
        self._page_by(1)
