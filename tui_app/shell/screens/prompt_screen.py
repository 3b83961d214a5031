"""Ask for one line of text (a file path, a preset name): enter answers, esc cancels."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.suggester import Suggester
from textual.widgets import Input, Label, Static
from textual.widgets.input import Selection

from tui_app.shell.screens.confirm_screen import ConfirmScreen


class PathSuggester(Suggester):
    """Completes a file path from what is on disk (``right`` or ``end`` takes the suggestion)."""

    def __init__(self) -> None:
        super().__init__(use_cache=False, case_sensitive=True)

    async def get_suggestion(self, value: str) -> str | None:
        if not value:
            return None
        folder, _, prefix = value.rpartition(os.sep)
        where = Path(folder or ".").expanduser()
        try:
            names = sorted(
                p.name + (os.sep if p.is_dir() else "")
                for p in where.iterdir()
                if p.name.startswith(prefix) and not p.name.startswith(".")
            )
        except OSError:
            return None
        if not names or names[0] == prefix:
            return None
        return f"{folder}{os.sep if folder or value.startswith(os.sep) else ''}{names[0]}"


def offered_selection(value: str, path: bool) -> Selection:
    """What of a prompt's value is selected when it opens (see ``PromptScreen.on_mount``)."""
    if not path:
        return Selection(0, len(value))
    start = value.rfind(os.sep) + 1
    dot = value.rfind(".")
    return Selection(start, dot if dot > start else len(value))


class PromptScreen(ModalScreen[str | None]):
    """Dismisses with the text entered (stripped), or None on escape."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Cancel", id="prompt.cancel"),
    ]

    def __init__(self, title: str, value: str = "", *, hint: str = "", paths: bool = False) -> None:
        super().__init__()
        self.title_text = title
        self.value = value
        self.hint = hint
        self.paths = paths

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt-dialog"):
            yield Label(self.title_text, id="prompt-title")
            yield Input(
                self.value,
                id="prompt-input",
                suggester=PathSuggester() if self.paths else None,
                select_on_focus=False,  # selected once, on open (below), not at every focus
            )
            yield Static(
                (self.hint + "\n" if self.hint else "") + "[b]enter[/b] ok · [b]esc[/b] cancel",
                id="prompt-hint",
            )

    def on_mount(self) -> None:
        box = self.query_one(Input)
        box.focus()
        # The value is offered selected, as a browser's address bar does: typing replaces it
        # (`z` then `50` is 50, not 100050), an arrow key keeps it to edit. A path offers its
        # file name without the extension, as a save dialog does: typing renames, the folder
        # stays.
        box.selection = offered_selection(box.value, self.paths)
        # Textual scrolls an Input to its cursor only once it has a width: a long pre-filled
        # path showed its start and hid the file name at its end.
        self.call_after_refresh(lambda: box.scroll_to(x=box.max_scroll_x, animate=False))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if text:
            self.dismiss(text)


def ask_where_to_save(
    app: App[Any],
    title: str,
    default: str,
    file_name: str,
    write: Callable[[Path], None],
    *,
    hint: str = "",
) -> None:
    """Ask for a path (pre-filled with ``default``, completed from disk), then ``write`` it.

    A folder means ``file_name`` in it; an existing file is overwritten only after a yes. Every
    save in the app goes through here (the builder's config.yaml, the logs' view), so none of
    them writes somewhere the user did not see, or over a file without asking. ``hint`` is
    the line under the box (default: where a relative path starts).
    """

    def chosen(text: str | None) -> None:
        if not text:
            return
        path = Path(text).expanduser()
        if path.is_dir():
            path = path / file_name
        if not path.exists():
            write(path)
            return
        app.push_screen(
            ConfirmScreen(f"{path.name} exists. Overwrite it?", [str(path.resolve())], "Overwrite"),
            lambda yes: write(path) if yes else None,
        )

    app.push_screen(
        PromptScreen(title, default, hint=hint or f"Relative to {Path.cwd()}", paths=True), chosen
    )
