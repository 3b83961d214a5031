"""A yes/no question that defaults to No and names what it is about."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

MAX_LISTED = 8


class ConfirmScreen(ModalScreen[bool]):
    """Dismisses with True only on an explicit yes (``y`` or the Yes button)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
        Binding("left,h", "app.focus_previous", show=False),
        Binding("right,l", "app.focus_next", show=False),
    ]

    def __init__(self, question: str, items: list[str], yes_label: str = "Yes") -> None:
        super().__init__()
        self.question = question
        self.items = items
        self.yes_label = yes_label

    def compose(self) -> ComposeResult:
        listed = self.items[:MAX_LISTED]
        more = len(self.items) - len(listed)
        lines = "\n".join(f"  • {item}" for item in listed)
        if more > 0:
            lines += f"\n  … and {more} more"
        with Vertical(id="confirm-dialog"):
            yield Label(self.question, id="confirm-question")
            yield Static(lines, id="confirm-items")
            with Horizontal(id="confirm-buttons"):
                yield Button("No", id="no", variant="primary")
                yield Button(self.yes_label, id="yes", variant="error")
            yield Static("[b]y[/b] yes · [b]n[/b]/[b]esc[/b] no", id="confirm-hint")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
