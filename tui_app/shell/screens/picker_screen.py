"""Pick one item from a short list (the replica picker).

An item may be shown with a label of its own (a replica with the node it runs on): the label is
cut to one line of the dialog, never wrapped, and the choice is still the item.
"""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len, set_cell_size
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList

from tui_app.widgets.line_cursor import list_bindings

LABEL_CELLS = 40
"""The widest label that fits the dialog (``#picker-dialog``: 50 columns less its border,
padding and the list's scrollbar) on one line."""


def fitted(label: str, cells: int = LABEL_CELLS) -> str:
    """``label`` cut to ``cells`` columns with an ellipsis when it is wider."""
    if cell_len(label) <= cells:
        return label
    return set_cell_size(label, cells - 1) + "…"


class PickerList(OptionList):
    """The picker's options, moved with ``j``/``k``, ``g``/``G`` as every list is."""

    BINDINGS: ClassVar[list[BindingType]] = list_bindings("picker")


class PickerScreen(ModalScreen[str | None]):
    """Dismisses with the chosen item, or None on escape."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "dismiss(None)", "Close", id="picker.close")
    ]

    def __init__(self, title: str, items: list[str], labels: list[str] | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.items = items
        self.labels = [fitted(label) for label in labels] if labels is not None else None
        """What each item shows, one per item; None: the item itself."""

    def compose(self) -> ComposeResult:
        with Vertical(id="picker-dialog"):
            yield Label(self.title_text, id="picker-title")
            prompts: list[str | Content] = list(self.items)
            if self.labels is not None:  # plain text: a name and an address, never markup
                prompts = [Content(label) for label in self.labels]
            yield PickerList(*prompts, id="picker-options")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.items[event.option_index])
