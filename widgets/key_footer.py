"""A Footer that keeps the keys that matter on a narrow terminal.

Textual's Footer lists every shown binding in one row and cuts what does not fit: at 80 columns
the job list lost everything after ``l Logs``, ``? Help`` included, so nothing on screen said how
to find the rest. Below ``NARROW_WIDTH`` this footer is compact and leaves out the actions the
screen names as secondary (they stay in ``?`` and the palette).
"""

from __future__ import annotations

from collections.abc import Iterable

from textual import events
from textual.app import ComposeResult
from textual.widgets import Footer

NARROW_WIDTH = 140
"""The job list's full footer needs ~135 columns: narrower, Textual would cut "? Help" off."""


class KeyFooter(Footer):
    """``Footer`` that drops ``secondary`` actions' keys below ``NARROW_WIDTH`` columns."""

    def __init__(self, secondary: Iterable[str] = (), *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.secondary = frozenset(secondary)
        """Action names (``toggle_mark``, ``yaml``...) left out when narrow."""
        self._narrow: bool | None = None

    def compose(self) -> ComposeResult:
        narrow = bool(self._narrow)
        for widget in super().compose():
            # FooterKey (not exported by Textual) carries its binding's action.
            if narrow and getattr(widget, "action", None) in self.secondary:
                continue
            yield widget

    def on_resize(self, event: events.Resize) -> None:
        narrow = event.size.width < NARROW_WIDTH
        if narrow != self._narrow:
            self._narrow = narrow
            self.compact = narrow
            self.call_after_refresh(self.recompose)
