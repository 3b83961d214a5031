"""Themes for the TUI (dark, light, high contrast): Textual Theme objects and their registration."""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.theme import Theme

from tui_app.themes.dark import TUI_DARK
from tui_app.themes.high_contrast import TUI_HIGH_CONTRAST
from tui_app.themes.light import TUI_LIGHT

__all__ = ["DEFAULT_THEME", "THEMES", "register_themes"]

THEMES: tuple[Theme, ...] = (TUI_DARK, TUI_LIGHT, TUI_HIGH_CONTRAST)
"""Our themes, in the order the theme picker should list them."""

DEFAULT_THEME = TUI_DARK.name
"""The theme a fresh install starts with."""


def register_themes(app: App[Any]) -> None:
    """Register every theme of ours with ``app`` (Textual's built-in themes stay available).

    Args:
        app: The app to register the themes with; call before setting ``app.theme``.
    """
    for theme in THEMES:
        app.register_theme(theme)
