"""``tui-light``: a light palette for bright rooms and light terminals.

State colours are darkened so each keeps at least 4.5:1 contrast against the near-white background
and against the cursor row (WCAG AA).
"""

from __future__ import annotations

from textual.theme import Theme

BACKGROUND = "#f6f7f9"
FOREGROUND = "#1f2430"
CURSOR_ROW = "#dbe6f3"

TUI_LIGHT = Theme(
    name="tui-light",
    primary="#1a5f9e",
    secondary="#4d5f85",
    accent="#9c4f00",
    foreground=FOREGROUND,
    background=BACKGROUND,
    surface="#ffffff",
    panel="#e4e8ee",
    success="#17692f",
    warning="#8a5000",
    error="#b0302a",
    dark=False,
    variables={
        "text-muted": "#58626f",
        # Textual 8 ignores Theme(boost=) once panel is set; the variable still works.
        "boost": "#0000000a",
        "block-cursor-background": CURSOR_ROW,
        "block-cursor-foreground": FOREGROUND,
        "block-cursor-text-style": "bold",
        "block-cursor-blurred-background": "#e6ecf4",
        "footer-key-foreground": "#1a5f9e",
        "input-selection-background": "#1a5f9e 25%",
        "button-color-foreground": "#ffffff",
        "border-blurred": "#c9d0da",
    },
)
