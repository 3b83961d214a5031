"""``:`` command mode (as in k9s): ``:jobs``, ``:logs [ID]``, ``:describe [ID]``,
``:metrics [ID]``, ``:builder``, ``:new``, ``:q``."""

from __future__ import annotations

from typing import ClassVar, NamedTuple

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.widgets import Input, Label

from tui_app.shell.screens.screen_toasts import ScreenToasts

COMMANDS: dict[str, str] = {
    "jobs": "the job list",
    "logs": "logs of the selected job, or of :logs ID",
    "describe": "detail of the selected job, or of :describe ID",
    "metrics": "metric curves of the selected job, or of :metrics ID",
    "builder": "the config builder",
    "new": "the builder with a new job",
    "help": "every key",
    "q": "quit",
}
"""Each command and what it opens (the hint under the prompt lists them)."""
TAKES_JOB_ID = frozenset({"logs", "describe", "metrics"})
"""Commands that may name a job: ``:logs mnist_20261122_083000`` (k9s's ``:logs <pod>``)."""
ALIASES: dict[str, str] = {
    "quit": "q",
    "job": "jobs",
    "log": "logs",
    "b": "builder",
    "j": "jobs",
    "desc": "describe",
    "metric": "metrics",
}


class Command(NamedTuple):
    name: str
    job_id: str = ""
    """The id typed after a command in ``TAKES_JOB_ID``, as typed (the App resolves it)."""


def resolve_command(text: str) -> Command | str:
    """The command ``text`` names (``:jobs``, ``logs ID``, ``quit``, ``bu``...), or why not."""
    word, _, rest = text.strip().lstrip(":").strip().partition(" ")
    word, rest = word.lower(), rest.strip()
    name = ALIASES.get(word, word)
    if name not in COMMANDS:
        # A unique prefix is enough (enter takes the suggestion shown): ":bu" is ":builder".
        found = {ALIASES.get(n, n) for n in (*COMMANDS, *ALIASES) if word and n.startswith(word)}
        if len(found) != 1:
            return f"Unknown command {text.strip()!r}; try {', '.join(COMMANDS)}."
        name = found.pop()
    if rest and name not in TAKES_JOB_ID:
        takers = [f":{c}" for c in COMMANDS if c in TAKES_JOB_ID]
        listed = ", ".join(takers[:-1]) + " and " + takers[-1]
        return f":{name} takes no argument (only {listed} take a job id)."
    return Command(name, rest)


class CommandScreen(ModalScreen[Command | None], ScreenToasts):
    """A one-line prompt docked at the bottom; dismisses with the command or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Cancel", id="command.cancel"),
    ]

    def compose(self) -> ComposeResult:
        with Horizontal(id="command-bar"):
            yield Label(":", id="command-colon")
            yield Input(
                placeholder=" · ".join(f"{c} ID" if c in TAKES_JOB_ID else c for c in COMMANDS),
                id="command-input",
                suggester=SuggestFromList([*COMMANDS, *ALIASES], case_sensitive=False),
            )

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if not event.value.strip():
            return
        command = resolve_command(event.value)
        if isinstance(command, str):
            self.notify(command, severity="warning")
            return
        self.dismiss(command)
