"""``tui-high-contrast``: white on pure black with saturated colours for low vision.

Every colour a job state or a key hint uses keeps at least 7:1 contrast against black (WCAG AAA)
and 4.5:1 against the cursor row.
"""

from __future__ import annotations

from textual.theme import Theme

BACKGROUND = "#000000"
FOREGROUND = "#ffffff"
CURSOR_ROW = "#2a2a2a"

TUI_HIGH_CONTRAST = Theme(
    name="tui-high-contrast",
    primary="#00d7ff",
    secondary="#87afff",
    accent="#ffff00",
    foreground=FOREGROUND,
    background=BACKGROUND,
    surface=BACKGROUND,
    panel="#1c1c1c",
    success="#00ff5f",
    warning="#ffd700",
    error="#ff6e6e",
    dark=True,
    variables={
        "text": FOREGROUND,
        # Muted text stays well above AAA: "muted" must not mean "hard to read" here.
        "text-muted": "#c8c8c8",
        "text-disabled": "#a0a0a0",
        # Textual 8 ignores Theme(boost=) once panel is set; the variable still works.
        "boost": "#ffffff1a",
        "block-hover-background": "#ffffff26",
        "block-cursor-background": CURSOR_ROW,
        "block-cursor-foreground": FOREGROUND,
        "block-cursor-text-style": "bold underline",
        "block-cursor-blurred-background": "#1c1c1c",
        "footer-key-foreground": "#ffff00",
        "footer-background": "#1c1c1c",
        "input-selection-background": "#00d7ff 40%",
        "button-color-foreground": BACKGROUND,
        "border": "#ffffff",
        "border-blurred": "#a0a0a0",
    },
)
