"""ParamsTable: a hyperparameter job's ParameterSpecs as rows to add, edit and remove.

The table only shows the specs and asks for changes (``AddRequested``, ``EditRequested``,
``RemoveRequested``); whoever owns the specs edits them and calls ``show`` again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Unpack

from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable

from tui_app.widgets.line_cursor import table_bindings
from tui_app.widgets.widget_options import WidgetOptions


def format_number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def describe_range(spec: Mapping[str, Any]) -> str:
    """``0.001 – 0.1``, ``relu, tanh`` or ``1, 2, 4``: what a parameter may take."""
    kind = spec.get("type")
    if kind == "CATEGORICAL":
        return ", ".join(str(v) for v in spec.get("categoricalValues") or [])
    if kind == "DISCRETE":
        return ", ".join(format_number(v) for v in spec.get("discreteValues") or [])
    low, high = spec.get("minValue"), spec.get("maxValue")
    if low is None and high is None:
        return ""
    shown = ["?" if v is None else format_number(v) for v in (low, high)]
    return f"{shown[0]} – {shown[1]}"


class ParamsTable(DataTable[str]):
    """Name, type, range or values, scale: one row per ParameterSpec."""

    DEFAULT_CSS = """
    ParamsTable {
        height: auto;
        max-height: 10;
        min-height: 3;
        background: $surface;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        *table_bindings("builder.params"),
        Binding("a", "add", "Add parameter", id="builder.param-add"),
        Binding("e", "edit", "Edit parameter", id="builder.param-edit", tooltip="Also enter"),
        Binding("x,delete", "remove", "Remove parameter", id="builder.param-remove"),
    ]

    class AddRequested(Message):
        """Request to add a parameter."""

    @dataclass
    class EditRequested(Message):
        """Request to edit the parameter at ``index``."""

        index: int

    @dataclass
    class RemoveRequested(Message):
        """Request to remove the parameter at ``index``."""

        index: int

    def __init__(self, **options: Unpack[WidgetOptions]) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **options)
        self.count = 0

    def on_mount(self) -> None:
        self.add_columns("Name", "Type", "Range / values", "Scale")
        self.show([])

    def show(self, specs: Sequence[Mapping[str, Any]]) -> None:
        """Draw ``specs``, keeping the cursor on the same row number when it still exists."""
        row = self.cursor_row
        self.clear()
        self.count = len(specs)
        for spec in specs:
            scale = str(spec.get("scaleType") or "")
            self.add_row(
                str(spec.get("parameterName") or "?"),
                str(spec.get("type") or "?"),
                describe_range(spec),
                scale.removeprefix("UNIT_").removesuffix("_SCALE").lower() or "–",
            )
        if not specs:
            self.add_row("(none)", "", "a: add a parameter", "")
        elif row < len(specs):
            self.move_cursor(row=row)

    def action_add(self) -> None:
        self.post_message(self.AddRequested())

    def action_edit(self) -> None:
        if self.count:
            self.post_message(self.EditRequested(self.cursor_row))
        else:
            self.post_message(self.AddRequested())

    def action_remove(self) -> None:
        if self.count:
            self.post_message(self.RemoveRequested(self.cursor_row))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_edit()
