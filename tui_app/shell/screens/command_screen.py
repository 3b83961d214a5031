"""``:`` command mode (as in k9s): ``:jobs``, ``:logs [ID]``, ``:describe [ID]``,
``:metrics [ID]``, ``:diff [A [B]]``, ``:grep [TEXT]``, ``:builder``, ``:new``, ``:q``.

The App carries out the command the screen dismisses with, except ``:diff``: the job list does
that one itself (its ``D``, with the ids resolved against its rows), so the screen hands it
there and closes.
"""

from __future__ import annotations

from typing import ClassVar, NamedTuple

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.widgets import Input, Label

from tui_app.model.jobs.job_id import find_job_id
from tui_app.shell.app_protocol import shell_app
from tui_app.shell.screens.jobs_screen import JobsScreen
from tui_app.shell.screens.screen_toasts import ScreenToasts

COMMANDS: dict[str, str] = {
    "jobs": "the job list",
    "logs": "logs of the selected job, or of :logs ID",
    "describe": "detail of the selected job, or of :describe ID",
    "metrics": "metric curves of the selected job, or of :metrics ID",
    "diff": "two jobs side by side: :diff A B, or :diff A against its earlier run",
    "grep": "search every job's logs: :grep TEXT (or a Logging filter)",
    "builder": "the config builder",
    "new": "the builder with a new job",
    "help": "every key",
    "q": "quit",
}
"""Each command and what it opens (the hint under the prompt lists them)."""
TAKES_JOB_ID = frozenset({"logs", "describe", "metrics", "diff"})
"""Commands that may name a job: ``:logs mnist_20261122_083000`` (k9s's ``:logs <pod>``);
``:diff`` up to two."""
TAKES_TEXT = frozenset({"grep"})
"""Commands whose argument is free text, spaces and all: ``:grep out of memory``."""
ALIASES: dict[str, str] = {
    "quit": "q",
    "job": "jobs",
    "log": "logs",
    "b": "builder",
    "j": "jobs",
    "desc": "describe",
    "metric": "metrics",
    "compare": "diff",
    "search": "grep",
}


class Command(NamedTuple):
    name: str
    job_id: str = ""
    """The id typed after a command in ``TAKES_JOB_ID``, as typed (the App resolves it)."""
    text: str = ""
    """The text typed after a command in ``TAKES_TEXT`` (``:grep``'s query), as typed."""


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
    if name in TAKES_TEXT:
        return Command(name, text=rest)
    if rest and name not in TAKES_JOB_ID:
        takers = [f":{c}" for c in COMMANDS if c in TAKES_JOB_ID]
        listed = ", ".join(takers[:-1]) + " and " + takers[-1]
        return f":{name} takes no argument (only {listed} take a job id)."
    words = rest.split()
    if name == "diff" and len(words) > 2:
        return ":diff takes at most two job ids (:diff A B)."
    return Command(name, rest)


def _placeholder(command: str) -> str:
    if command == "diff":
        return "diff A B"
    if command in TAKES_TEXT:
        return f"{command} TEXT"
    return f"{command} ID" if command in TAKES_JOB_ID else command


class CommandScreen(ModalScreen[Command | None], ScreenToasts):
    """A one-line prompt docked at the bottom; dismisses with the command or None."""

    shell = shell_app()

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Cancel", id="command.cancel"),
    ]

    def compose(self) -> ComposeResult:
        with Horizontal(id="command-bar"):
            yield Label(":", id="command-colon")
            yield Input(
                placeholder=" · ".join(_placeholder(c) for c in COMMANDS),
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
        if command.name == "diff":
            self._diff(command.job_id.split())
            return
        self.dismiss(command)

    def _diff(self, typed: list[str]) -> None:
        """``:diff``: the list's ``D``; ``:diff A``: A against its earlier run; ``:diff A B``: A
        on the left, B on the right. Ids as ``:logs`` takes them (a unique prefix will do)."""
        jobs = next((s for s in self.app.screen_stack if isinstance(s, JobsScreen)), None)
        if jobs is None:  # the list is the App's first screen: not seen, but say so
            self.notify("The job list is not open.", severity="warning")
            return
        if typed and not jobs.rows:
            self.notify("The job list has not arrived yet; try again in a moment.")
            return
        ids: list[str] = []
        for text in typed:
            job_id, why = find_job_id(text, (r.job_id for r in jobs.rows))
            if job_id is None:
                self.notify(why, severity="warning")
                return
            ids.append(job_id)
        if len(ids) == 2 and ids[0] == ids[1]:
            self.notify(
                f"{typed[0]} and {typed[1]} both name {ids[0]}: nothing to compare.",
                severity="warning",
            )
            return
        # Without ids: the job the user is on (an open detail's or logs'), else the list's D.
        shown = next(
            (
                job_id
                for s in reversed(self.app.screen_stack)
                if isinstance(job_id := getattr(s, "job_id", None), str)
            ),
            None,
        )
        self.dismiss(None)
        if not ids and shown is not None:
            jobs.diff_with_partner(shown)
        elif not ids:
            jobs.action_diff()
        elif len(ids) == 1:
            jobs.diff_with_partner(ids[0])
        else:
            self.shell.open_diff(ids[0], ids[1], "as named on the command line")
