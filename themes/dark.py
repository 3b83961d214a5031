"""``tui-dark``: the default theme, a calm blue-grey dark palette.

Job states are drawn in ``$success``/``$error``/``$warning``/``$primary``/``$text-muted``, so
each of those keeps at least 4.5:1 contrast against the background and the cursor row (WCAG AA).
"""

from __future__ import annotations

from textual.theme import Theme

BACKGROUND = "#1b1f27"
FOREGROUND = "#dce1ea"
# A muted cursor row: a bright primary bar would drown the state colours drawn on top of it.
CURSOR_ROW = "#2a3344"

TUI_DARK = Theme(
    name="tui-dark",
    primary="#6cb4e0",
    secondary="#8796b8",
    accent="#e8ad62",
    foreground=FOREGROUND,
    background=BACKGROUND,
    surface="#222732",
    panel="#2b3140",
    success="#74c894",
    warning="#e8bd62",
    error="#f07f88",
    dark=True,
    variables={
        "text-muted": "#959eae",
        # Textual 8 ignores Theme(boost=) once panel is set; the variable still works.
        "boost": "#ffffff0a",
        "block-hover-background": "#ffffff14",
        "block-cursor-background": CURSOR_ROW,
        "block-cursor-foreground": FOREGROUND,
        "block-cursor-text-style": "bold",
        "block-cursor-blurred-background": "#252c3a",
        "footer-key-foreground": "#6cb4e0",
        "input-selection-background": "#6cb4e0 30%",
        "button-color-foreground": BACKGROUND,
        "border-blurred": "#343b4b",
    },
)
