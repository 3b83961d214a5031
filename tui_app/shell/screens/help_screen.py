"""``?``: every key that works here, from the bindings themselves (so it cannot go stale)."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Static


def _key_label(screen: Screen[object], key: str) -> str:
    return " / ".join(screen.app.get_key_display(Binding(k.strip(), "")) for k in key.split(","))


def _rows(
    owner: str, bindings: list[BindingType], screen: Screen[object]
) -> list[tuple[str, str, str, str]]:
    """(where, key, what it does, binding id): the id is what settings.yaml's keymap names."""
    rows = []
    for b in bindings:
        if isinstance(b, Binding) and b.description:
            keymap = screen.app._keymap  # remapped keys, by binding id
            key = keymap.get(b.id, b.key) if b.id else b.key
            rows.append(
                (
                    owner,
                    _key_label(screen, key),
                    b.description + (f" — {b.tooltip}" if b.tooltip else ""),
                    b.id or "",
                )
            )
    return rows


class HelpScreen(Screen[None]):
    """Lists the bindings of the screen it was opened from, its focused widget's, and the app's."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "app.pop_screen", "Back", id="help.back")
    ]

    def __init__(self, origin: Screen[object]) -> None:
        super().__init__()
        self.origin = origin

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            yield Static(self._table(), id="help-content")
        yield Footer()

    def _table(self) -> Table:
        origin = self.origin
        rows: list[tuple[str, str, str, str]] = []
        seen: set[type[Widget]] = set()
        for widget in origin.query("*"):
            kind = type(widget)
            # Only the bindings a class declares itself: a scrolling container's inherited
            # arrow keys are not worth a row per container.
            if kind in seen or not vars(kind).get("BINDINGS") or not widget.can_focus:
                continue
            if kind.__module__.startswith("textual."):
                # Textual's own widgets (Input's cursor keys, Select's menu...) are not ours
                # to list: the builder alone has a dozen of them.
                continue
            seen.add(kind)
            rows += _rows(kind.__name__, list(kind.BINDINGS), origin)
        rows = (
            _rows(
                type(origin).__name__.removesuffix("Screen") or "Screen",
                list(origin.BINDINGS),
                origin,
            )
            + rows
        )
        rows += _rows("Global", list(self.app.BINDINGS), origin)
        rows.append(("Global", "ctrl+p", "Command palette: every action and the themes", ""))
        rows.append(("Global", "tab / shift+tab", "Next / previous field or pane", ""))
        table = Table(title="Keys", expand=True, show_edge=False, pad_edge=False)
        table.add_column("Where", style="dim", no_wrap=True)
        table.add_column("Key", style="bold", no_wrap=True)
        table.add_column("Does")
        table.add_column("Id (keymap)", style="dim", no_wrap=True)
        for where, key, does, binding_id in rows:
            table.add_row(where, Text(key), does, binding_id)
        return table
