"""The builder's presets: save the form under a name, load one, delete one.

The list holds the user's saved presets and the built-in starters (``model.starter_presets``),
each built-in marked as such with a line saying what it runs. Built-ins are read-only: ``d`` on
one says so here instead of asking the builder to delete a file that does not exist.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from tui_app.config.presets import preset_name_error
from tui_app.widgets.line_cursor import list_bindings

PresetAction = tuple[Literal["save", "load", "delete"], str]
PresetChoice = tuple[str, str | None]
"""A listed preset: its name, and what it runs when it is built in (None: the user's own)."""

BUILT_IN = "built in"
SAVED = "saved"


class PresetsScreen(ModalScreen[PresetAction | None]):
    """Dismisses with ``("save"|"load"|"delete", name)``, or None on escape.

    The name box saves (enter); the list loads (enter) or deletes a saved one (``d``/``delete``).
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Close", id="presets.close"),
    ]

    def __init__(self, choices: list[PresetChoice], suggested: str = "") -> None:
        super().__init__()
        self.choices = choices
        self.built_in = {name for name, summary in choices if summary is not None}
        self.suggested = suggested

    def compose(self) -> ComposeResult:
        with Vertical(id="presets-dialog"):
            yield Label("Presets", id="presets-title")
            yield Input(
                self.suggested,
                placeholder="e.g. mnist-gpu: a name to save the form as",
                id="preset-name",
                select_on_focus=False,
                compact=True,
            )
            yield Static("", id="preset-error")
            if self.choices:
                width = max(len(name) for name, _ in self.choices)
                yield PresetList(
                    *(
                        Option(_prompt(name, summary, width), id=name)
                        for name, summary in self.choices
                    ),
                    id="preset-list",
                )
            else:
                yield Static("No presets saved yet.", id="preset-empty")
            yield Static(
                "[b]enter[/b] load, or save the name typed · [b]d[/b] delete yours · "
                "[b]esc[/b] close",
                id="presets-hint",
            )

    def on_mount(self) -> None:
        if self.choices:
            self.query_one(PresetList).focus()
        else:
            self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        name = event.value.strip()
        why = preset_name_error(name)
        if why:
            self.query_one("#preset-error", Static).update(why)
            return
        self.dismiss(("save", name))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option_id is not None:
            self.dismiss(("load", event.option_id))

    def on_preset_list_delete_requested(self, event: PresetList.DeleteRequested) -> None:
        name = self.choices[event.index][0]
        if name in self.built_in:
            self.query_one("#preset-error", Static).update(
                f"{name} is built in and cannot be deleted; a preset you save under its name "
                "is listed instead of it."
            )
            return
        self.dismiss(("delete", name))


def _prompt(name: str, summary: str | None, width: int) -> Content:
    """``BASIC       built in · one machine: ...`` or ``mnist-gpu   saved``."""
    mark = f"{BUILT_IN} · {summary}" if summary is not None else SAVED
    return Content.assemble((name.ljust(width), "bold"), "  ", (mark, "dim"))


class PresetList(OptionList):
    """The presets; ``d`` or ``delete`` asks to delete the highlighted one."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *list_bindings("presets"),
        Binding("d,delete", "delete", "Delete preset", id="presets.delete"),
    ]

    @dataclass
    class DeleteRequested(Message):
        """Request to delete the preset at ``index``."""

        index: int

    def action_delete(self) -> None:
        if self.highlighted is not None:
            self.post_message(self.DeleteRequested(self.highlighted))
