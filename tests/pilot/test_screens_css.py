"""The other screens' layout (shell/screens.tcss) is parsed after the list's first frame, and
a screen shown before that is laid out as ever: its rules are read first."""

from __future__ import annotations

from pathlib import Path

import pytest

import tui_app.shell.app as shell_app
from tests.pilot.conftest import wait_for
from tests.support.first_frames import app_on, rows_per_frame
from tests.support.fixed_jobs import FixedSource
from tui_app.shell.screens.help_screen import HelpScreen


def _read(app: shell_app.JobsApp) -> bool:
    return (str(app.SCREENS_CSS), "") in app.stylesheet.source


async def test_read_after_the_first_frame_not_before() -> None:
    app = app_on(FixedSource())
    frames = rows_per_frame(app)
    read_at_first_frame: list[bool] = []
    display = app._display

    def noting(screen: object, renderable: object) -> None:
        if renderable is not None and not read_at_first_frame:
            read_at_first_frame.append(_read(app))
        display(screen, renderable)  # type: ignore[arg-type]

    app._display = noting  # type: ignore[method-assign]
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: bool(frames) and frames[-1] > 0)
        assert read_at_first_frame == [False]
        await wait_for(pilot, lambda: _read(app))  # then, with nothing shown but the list


async def test_a_screen_shown_first_is_laid_out_by_its_rules(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(shell_app, "SCREENS_CSS_DELAY_SECONDS", 3600.0)  # only the push reads
    app = app_on(FixedSource())
    async with app.run_test(size=(120, 30)) as pilot:
        assert not _read(app)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        title = app.screen.query_one("#help-title")
        assert title.styles.text_style.bold  # `#help-title { text-style: bold }`
        assert _read(app)


def test_no_rule_of_the_list_is_left_for_later() -> None:
    """The list screen is styled before the other rules are read: the later file names only
    other screens' nodes."""
    later = Path(shell_app.JobsApp.SCREENS_CSS).read_text()
    for name in ("JobsScreen", "JobTable", "#filter", "#banner", "ToastRack"):
        assert name not in later
