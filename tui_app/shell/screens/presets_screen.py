"""The builder's presets: save the form under a name, load one, delete one."""

from __future__ import annotations

from typing import ClassVar, Literal

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList, Static

from tui_app.config.presets import preset_name_error

PresetAction = tuple[Literal["save", "load", "delete"], str]


class PresetsScreen(ModalScreen[PresetAction | None]):
    """Dismisses with ``("save"|"load"|"delete", name)``, or None on escape.

    The name box saves (enter); the list loads (enter) or deletes (``d``/``delete``).
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Close", id="presets.close"),
    ]

    def __init__(self, names: list[str], suggested: str = "") -> None:
        super().__init__()
        self.names = names
        self.suggested = suggested

    def compose(self) -> ComposeResult:
        with Vertical(id="presets-dialog"):
            yield Label("Presets", id="presets-title")
            yield Input(
                self.suggested,
                placeholder="name to save the form as",
                id="preset-name",
                select_on_focus=False,
                compact=True,
            )
            yield Static("", id="preset-error")
            if self.names:
                yield PresetList(*self.names, id="preset-list")
            else:
                yield Static("No presets saved yet.", id="preset-empty")
            yield Static(
                "[b]enter[/b] in the name: save · [b]enter[/b] on a preset: load · "
                "[b]d[/b]: delete · [b]tab[/b] switch · [b]esc[/b] close",
                id="presets-hint",
            )

    def on_mount(self) -> None:
        if self.names:
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
        self.dismiss(("load", self.names[event.option_index]))

    def on_preset_list_delete_requested(self, event: PresetList.DeleteRequested) -> None:
        self.dismiss(("delete", self.names[event.index]))


class PresetList(OptionList):
    """The saved presets; ``d`` or ``delete`` asks to delete the highlighted one."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("d,delete", "delete", "Delete preset", id="presets.delete"),
    ]

    class DeleteRequested(Message):
        """Request to delete the preset at ``index``."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def action_delete(self) -> None:
        if self.highlighted is not None:
            self.post_message(self.DeleteRequested(self.highlighted))
