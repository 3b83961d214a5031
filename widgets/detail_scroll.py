"""The detail's scrolling body: the pager keys as well as the arrows.

Textual's VerticalScroll answers only to the arrows, page and home/end keys; every list in this
app also moves with ``j``/``k``/``g``/``G`` (``widgets.line_cursor``), and a user reading a long
traceback in the detail reaches for the same keys.
"""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll


class DetailScroll(VerticalScroll):
    """A VerticalScroll that scrolls with ``j``/``k``, ``g``/``G`` and ``ctrl+b``/``ctrl+f`` too."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "scroll_up", "Up", show=False, id="detail.up"),
        Binding("down,j", "scroll_down", "Down", show=False, id="detail.down"),
        Binding("pageup,ctrl+b", "page_up", "Page up", show=False, id="detail.page-up"),
        Binding("pagedown,ctrl+f", "page_down", "Page down", show=False, id="detail.page-down"),
        Binding("home,g", "scroll_home", "Top", show=False, id="detail.top"),
        Binding("end,G", "scroll_end", "Bottom", show=False, id="detail.bottom"),
    ]
