"""``?``: every key that works here, from the bindings themselves (so it cannot go stale).

The list is longer than a small terminal, so it scrolls with the pager keys every other pane
answers to (``DetailScroll``: ``j``/``k``, ``g``/``G``...), under a header that stays put: which
screen these keys are for, how to move, and the column headings.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich import box
from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static

from tui_app.widgets.detail_scroll import DetailScroll
from tui_app.widgets.key_footer import KeyFooter

SCREEN_NAMES: dict[str, str] = {
    "JobsScreen": "the job list",
    "DescribeScreen": "a job's detail",
    "LogsScreen": "a job's logs",
    "MetricsScreen": "a job's metrics",
    "DiffScreen": "a diff of two jobs",
    "StacksScreen": "a job's stacks",
    "SearchScreen": "the search over every job's logs",
    "BuilderScreen": "the config builder",
    "PresetsScreen": "the builder's presets",
    "ParamEditScreen": "the parameter editor",
}
"""What the header calls the screen ``?`` was opened from (others: their class name)."""

COLUMNS: tuple[tuple[str, str], ...] = (
    ("Where", "dim"),
    ("Key", "bold"),
    ("Does", ""),
    ("Id (keymap)", "dim"),
)

Row = tuple[str, str, str, str]
"""(where, key, what it does, binding id): the id is what settings.yaml's keymap names."""


def key_label(app: App[Any], binding: Binding) -> str:
    """The keys ``binding`` answers to now, as the footer writes them (``x / ^d``).

    The user's keymap (settings.yaml) replaces a binding's keys by its id, so the label comes
    from the keymap the App applied, never from the key written in the code; ``?`` and the
    command palette both use this, so they cannot disagree.
    """
    keys = app._keymap.get(binding.id, binding.key) if binding.id else binding.key
    return " / ".join(app.get_key_display(Binding(k.strip(), "")) for k in keys.split(","))


def _rows(owner: str, bindings: list[BindingType], app: App[Any]) -> list[Row]:
    return [
        (
            owner,
            key_label(app, b),
            b.description + (f" — {b.tooltip}" if b.tooltip else ""),
            b.id or "",
        )
        for b in bindings
        if isinstance(b, Binding) and b.description
    ]


def _moves(app: App[Any]) -> str:
    """How to move in the list, from the list's own bindings (so a remap shows here too)."""
    keys = {
        b.action: key_label(app, b).replace(" / ", "/")
        for b in DetailScroll.BINDINGS
        if isinstance(b, Binding)
    }
    return " · ".join(
        f"{keys[up]} {keys[down]} {what}"
        for up, down, what in (
            ("scroll_up", "scroll_down", "scroll"),
            ("page_up", "page_down", "page"),
            ("scroll_home", "scroll_end", "top/bottom"),
        )
    )


class HelpScreen(Screen[None]):
    """Lists the bindings of the screen it was opened from, its focused widget's, and the app's."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "app.pop_screen", "Back", id="help.back")
    ]

    def __init__(self, origin: Screen[object]) -> None:
        super().__init__()
        self.origin = origin
        self._widths: dict[str, int] = {}
        """The fixed columns' widths, shared by the headings and the list so they line up."""

    def compose(self) -> ComposeResult:
        rows = self._collect()
        self._widths = {
            name: max([len(name), *(Text(row[i]).cell_len for row in rows)])
            for i, (name, _) in enumerate(COLUMNS)
            if name != "Does"
        }
        kind = type(self.origin).__name__
        where = SCREEN_NAMES.get(kind, kind.removesuffix("Screen") or "this screen")
        with Vertical(id="help-header"):
            yield Static(f"Keys on {where}", id="help-title", markup=False)
            # Back is in the footer already.
            yield Static(_moves(self.app), id="help-about", markup=False)
            yield Static(self._table([], headings=True), id="help-headings")
        with DetailScroll(id="help-body"):
            yield Static(self._table(rows, headings=False), id="help-content")
        yield KeyFooter()

    def _collect(self) -> list[Row]:
        origin = self.origin
        rows: list[Row] = []
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
            rows += _rows(kind.__name__, list(kind.BINDINGS), self.app)
        rows = (
            _rows(
                type(origin).__name__.removesuffix("Screen") or "Screen",
                list(origin.BINDINGS),
                self.app,
            )
            + rows
        )
        rows += _rows("Global", list(self.app.BINDINGS), self.app)
        palette = Binding(self.app.COMMAND_PALETTE_BINDING, "")
        rows.append(
            ("Global", key_label(self.app, palette), "Command palette: every action, its key", "")
        )
        rows.append(("Global", "tab / shift+tab", "Next / previous field or pane", ""))
        return rows

    def _table(self, rows: list[Row], *, headings: bool) -> Table:
        """The headings alone (the fixed header) or the rows alone (the scrolling list).

        Two tables with the same fixed column widths and one stretching column line up at any
        width, so the headings can stay put while the rows scroll under them.
        """
        table = Table(
            expand=True,
            show_edge=False,
            pad_edge=False,
            show_header=headings,
            box=box.HEAVY_HEAD,
        )
        for name, style in COLUMNS:
            if name == "Does":
                table.add_column(name, style=style, ratio=1)
            else:
                width = self._widths.get(name)
                table.add_column(name, style=style, no_wrap=True, width=width, min_width=width)
        for where, key, does, binding_id in rows:
            table.add_row(where, Text(key), does, binding_id)
        return table
