"""``:`` command mode (as in k9s): ``:jobs``, ``:logs``, ``:builder``, ``:new``, ``:q``."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.widgets import Input, Label

COMMANDS: dict[str, str] = {
    "jobs": "the job list",
    "logs": "logs of the selected job",
    "builder": "the config builder",
    "new": "the builder with a new job",
    "help": "every key",
    "q": "quit",
}
"""Each command and what it opens (the hint under the prompt lists them)."""
ALIASES: dict[str, str] = {"quit": "q", "job": "jobs", "log": "logs", "b": "builder", "j": "jobs"}


def resolve_command(text: str) -> str | None:
    """The command ``text`` names (``:jobs``, ``jobs``, ``quit``, ``bu``...), or None."""
    word = text.strip().lstrip(":").strip().lower()
    word = ALIASES.get(word, word)
    if word in COMMANDS or not word:
        return word or None
    # A unique prefix is enough (enter takes the suggestion shown): ":bu" is ":builder".
    matches = {ALIASES.get(name, name) for name in (*COMMANDS, *ALIASES) if name.startswith(word)}
    return matches.pop() if len(matches) == 1 else None


class CommandScreen(ModalScreen[str | None]):
    """A one-line prompt docked at the bottom; dismisses with the command or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Cancel", id="command.cancel"),
    ]

    def compose(self) -> ComposeResult:
        with Horizontal(id="command-bar"):
            yield Label(":", id="command-colon")
            yield Input(
                placeholder=" · ".join(COMMANDS),
                id="command-input",
                suggester=SuggestFromList([*COMMANDS, *ALIASES], case_sensitive=False),
            )

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        command = resolve_command(event.value)
        if command is None:
            if event.value.strip():
                self.notify(
                    f"Unknown command {event.value.strip()!r}; try {', '.join(COMMANDS)}.",
                    severity="warning",
                )
            return
        self.dismiss(command)
