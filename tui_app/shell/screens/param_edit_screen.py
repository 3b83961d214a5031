"""Add or edit one hyperparameter (a ParameterSpec): name, type, range or values, scale.

Only what this dialog can tell is checked here (numbers that are not numbers); the rules between
fields (min below max, log scales above zero, grid search types) are job_spec's, shown under the
parameter table like every other rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Select, Static

from tui_app.model.builder.builder_form import PARAMETER_TYPES, SCALE_TYPES
from tui_app.widgets.params_table import format_number

SCALE_LABELS = {
    "": "none",
    "UNIT_LINEAR_SCALE": "linear",
    "UNIT_LOG_SCALE": "log",
    "UNIT_REVERSE_LOG_SCALE": "reverse log",
}


def _parse_number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def spec_from_fields(
    name: str, kind: str, low: str, high: str, values: str, scale: str
) -> tuple[dict[str, Any], str | None]:
    """The ParameterSpec the dialog's fields describe, and what is wrong with them (or None)."""
    spec: dict[str, Any] = {"parameterName": name.strip(), "type": kind}
    if kind in ("DOUBLE", "INTEGER"):
        for field, text in (("minValue", low), ("maxValue", high)):
            if text.strip():
                number = _parse_number(text.strip())
                if number is None:
                    return spec, f"{field}: {text.strip()!r} is not a number."
                spec[field] = number
    else:
        items = [v.strip() for v in values.split(",") if v.strip()]
        if kind == "CATEGORICAL":
            spec["categoricalValues"] = items
        else:
            numbers = [_parse_number(v) for v in items]
            bad = next((v for v, n in zip(items, numbers, strict=True) if n is None), None)
            if bad is not None:
                return spec, f"discreteValues: {bad!r} is not a number."
            spec["discreteValues"] = numbers
    if scale and kind != "CATEGORICAL":
        spec["scaleType"] = scale
    return spec, None


class ParamEditScreen(ModalScreen[dict[str, Any] | None]):
    """Dismisses with the ParameterSpec (wire form), or None on escape."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Cancel", id="param.cancel"),
        Binding("ctrl+s", "save", "Done", id="param.done"),
    ]

    def __init__(self, spec: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        self.spec = dict(spec or {"type": "DOUBLE"})

    def compose(self) -> ComposeResult:
        spec = self.spec
        kind = spec.get("type") if spec.get("type") in PARAMETER_TYPES else "DOUBLE"
        listed = spec.get("categoricalValues") or spec.get("discreteValues") or []
        with Vertical(id="param-dialog"):
            yield Label("Edit parameter" if spec.get("parameterName") else "Add parameter")
            for label, widget in (
                ("Name", Input(str(spec.get("parameterName") or ""), id="param-name")),
                (
                    "Type",
                    Select(
                        [(t, t) for t in PARAMETER_TYPES],
                        value=kind,
                        allow_blank=False,
                        id="param-type",
                        compact=True,
                    ),
                ),
                (
                    "Min",
                    Input(
                        format_number(spec["minValue"]) if "minValue" in spec else "",
                        id="param-min",
                    ),
                ),
                (
                    "Max",
                    Input(
                        format_number(spec["maxValue"]) if "maxValue" in spec else "",
                        id="param-max",
                    ),
                ),
                (
                    "Values",
                    Input(
                        ", ".join(format_number(v) for v in listed),
                        placeholder="comma-separated",
                        id="param-values",
                    ),
                ),
                (
                    "Scale",
                    Select(
                        [(SCALE_LABELS[s], s) for s in SCALE_TYPES],
                        value=spec.get("scaleType") if spec.get("scaleType") in SCALE_TYPES else "",
                        allow_blank=False,
                        id="param-scale",
                        compact=True,
                    ),
                ),
            ):
                with Horizontal(classes="param-row", id=f"row-{widget.id}"):
                    yield Label(label, classes="param-label")
                    yield widget
            yield Static("", id="param-error")
            yield Static(
                "[b]enter[/b]/[b]ctrl+s[/b] done · [b]esc[/b] cancel · [b]tab[/b] next field",
                id="param-hint",
            )

    def on_mount(self) -> None:
        for box in self.query(Input):
            box.compact = True
        self._show_rows()
        self.query_one("#param-name", Input).focus()

    def _kind(self) -> str:
        value = self.query_one("#param-type", Select).value
        return value if isinstance(value, str) else "DOUBLE"

    def _show_rows(self) -> None:
        kind = self._kind()
        ranged = kind in ("DOUBLE", "INTEGER")
        self.query_one("#row-param-min").display = ranged
        self.query_one("#row-param-max").display = ranged
        self.query_one("#row-param-values").display = not ranged
        self.query_one("#row-param-scale").display = kind != "CATEGORICAL"

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "param-type":
            self._show_rows()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_save()

    def action_save(self) -> None:
        scale = self.query_one("#param-scale", Select).value
        spec, why = spec_from_fields(
            self.query_one("#param-name", Input).value,
            self._kind(),
            self.query_one("#param-min", Input).value,
            self.query_one("#param-max", Input).value,
            self.query_one("#param-values", Input).value,
            scale if isinstance(scale, str) else "",
        )
        if why:
            self.query_one("#param-error", Static).update(why)
            return
        self.dismiss(spec)
