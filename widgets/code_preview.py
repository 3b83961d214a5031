"""CodePreview: read-only, syntax-coloured text (a config.yaml, a shell command) that ``c`` copies.

It scrolls, takes focus (so the keyboard reaches it and ``c`` knows what to copy) and copies with
``App.copy_to_clipboard``, which writes OSC 52: the copy works over SSH and in tmux
(``set -g set-clipboard on``).
"""

from __future__ import annotations

from typing import ClassVar, Unpack

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import ScrollableContainer
from textual.content import Content
from textual.highlight import highlight
from textual.reactive import reactive
from textual.widgets import Static

from tui_app.widgets.widget_options import WidgetOptions


class CodePreview(ScrollableContainer, can_focus=True):
    """Shows ``text`` coloured as ``language``; its border title names what it is."""

    DEFAULT_CSS = """
    CodePreview {
        height: 1fr;
        border: round $border-blurred;
        border-title-color: $text-muted;
        background: $surface;
        padding: 0 1;
        scrollbar-size-horizontal: 1;
    }
    CodePreview:focus {
        border: round $primary;
        border-title-color: $primary;
        background-tint: $foreground 3%;
    }
    /* Never soft-wrapped: a wrapped "- gs://..." reads as different YAML. Long lines scroll. */
    CodePreview > Static {
        width: auto;
        min-width: 100%;
        text-wrap: nowrap;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "copy", "Copy", id="builder.copy", tooltip="Copy it (OSC 52)"),
    ]

    text: reactive[str] = reactive("", init=False)
    """The text shown and copied."""

    def __init__(
        self,
        language: str,
        title: str,
        *,
        hidden_prefix: str = "",
        what: str = "",
        **options: Unpack[WidgetOptions],
    ) -> None:
        super().__init__(**options)
        self.hidden_prefix = hidden_prefix
        """Leading text copied but not shown (a file's fixed header comment)."""
        self.language = language
        self.border_title = title
        self.what = what or title
        """How the copy notification names the text ("the gcloud command")."""

    def compose(self) -> ComposeResult:
        yield Static(self._highlighted(""), classes="code-preview--body")

    def _highlighted(self, text: str) -> Content:
        # Textual's highlighter styles tokens with the theme's variables ($text-accent...), so
        # the preview follows the theme, light and high-contrast included. Long lines wrap.
        return highlight(text, language=self.language) if text else Content("")

    def watch_text(self, text: str) -> None:
        self.query_one(Static).update(self._highlighted(text.removeprefix(self.hidden_prefix)))

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(self.text)
        self.notify(f"Copied {self.what} ({len(self.text.splitlines())} lines, OSC 52).")
