"""A modal that shows an error (or any text) a person needs to read, copyable, never a traceback."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static


class MessageScreen(ModalScreen[str]):
    """Dismisses with the id of the button pressed (``close`` by default)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "dismiss('close')", "Close", id="message.close"),
        Binding("c", "copy", "Copy", id="message.copy"),
    ]

    def __init__(self, title: str, text: str, buttons: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__()
        self.title_text = title
        self.text = text
        self.buttons = buttons or (("close", "Close"),)

    def compose(self) -> ComposeResult:
        with Vertical(id="message-dialog"):
            yield Label(self.title_text, id="message-title")
            with VerticalScroll(id="message-body"):
                yield Static(self.text, markup=False)
            with Horizontal(id="message-buttons"):
                for ident, label in self.buttons:
                    yield Button(label, id=ident)

    def on_mount(self) -> None:
        self.query(Button).first().focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id or "close")

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(self.text)
        self.notify("Copied (OSC 52).")
