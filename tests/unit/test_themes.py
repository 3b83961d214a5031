"""Our themes: they register, they define what job states are drawn in, and they stay readable."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App
from textual.color import Color
from textual.theme import Theme

import tui_app.themes
from tui_app.themes import DEFAULT_THEME, THEMES, register_themes

REPO = Path(__file__).resolve().parents[2]
BY_NAME = {t.name: t for t in THEMES}
# What the job table draws states in (and the footer its keys in).
STATE_VARIABLES = ("primary", "success", "warning", "error", "text-muted")


def contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio of two opaque colours."""

    def luminance(color: str) -> float:
        r, g, b_ = (c / 255 for c in Color.parse(color).rgb)
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b_)]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def variables(theme: Theme) -> dict[str, str]:
    return theme.to_color_system().generate()


def test_ours_is_the_themes_package_in_this_repo() -> None:
    """PyPI has an unrelated package called `themes`; the one imported must be ours."""
    assert Path(tui_app.themes.__file__).resolve().is_relative_to(REPO)


def test_names_and_default() -> None:
    assert set(BY_NAME) == {"tui-dark", "tui-light", "tui-high-contrast"}
    assert len(BY_NAME) == len(THEMES)
    assert DEFAULT_THEME == "tui-dark"
    assert BY_NAME["tui-dark"].dark and BY_NAME["tui-high-contrast"].dark
    assert not BY_NAME["tui-light"].dark


@pytest.mark.parametrize("theme", THEMES, ids=lambda t: t.name)
def test_each_theme_sets_its_palette(theme: Theme) -> None:
    for attr in (
        "primary",
        "secondary",
        "accent",
        "foreground",
        "background",
        "surface",
        "panel",
        "success",
        "warning",
        "error",
    ):
        value = getattr(theme, attr)
        assert value, f"{theme.name} leaves {attr} to Textual's defaults"
        Color.parse(value)
    generated = variables(theme)
    for name in (*STATE_VARIABLES, "footer-key-foreground", "block-cursor-background"):
        assert name in generated


async def test_themes_register_and_apply() -> None:
    app: App[None] = App()
    register_themes(app)
    for theme in THEMES:
        assert theme.name in app.available_themes
    async with app.run_test():
        for theme in THEMES:
            app.theme = theme.name
            assert app.current_theme.name == theme.name
            css, generated = app.get_css_variables(), variables(theme)
            for name in ("background", *STATE_VARIABLES):
                assert css[name] == generated[name]


@pytest.mark.parametrize("theme", THEMES, ids=lambda t: t.name)
def test_state_colours_are_readable(theme: Theme) -> None:
    """Job states keep WCAG AA contrast on the background and on the cursor row."""
    generated = variables(theme)
    for backdrop in ("background", "block-cursor-background"):
        for name in (*STATE_VARIABLES, "foreground"):
            ratio = contrast(generated[name], generated[backdrop])
            assert ratio >= 4.5, f"{theme.name}: ${name} on ${backdrop} is only {ratio:.2f}:1"


def test_high_contrast_is_white_on_black_and_aaa() -> None:
    theme = BY_NAME["tui-high-contrast"]
    assert Color.parse(theme.background or "") == Color.parse("#000000")
    assert Color.parse(theme.foreground or "") == Color.parse("#ffffff")
    generated = variables(theme)
    for name in ("primary", "success", "warning", "error", "text-muted", "footer-key-foreground"):
        ratio = contrast(generated[name], "#000000")
        assert ratio >= 7, f"${name} is only {ratio:.2f}:1 on black"
