"""The main screens as a person sees them, at 80x24 and 120x40 (issue 3, done-when 1).

Fixed jobs and a frozen clock (tests/support/fixed_jobs.py): the pictures must not change
between runs. Behaviour is tested against the real service in tests/pilot.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from tests.support.fixed_jobs import FixedSource
from tests.support.settle import settled, wait_until
from tui_app.shell.app import JobsApp
from tui_app.shell.screens.confirm_screen import ConfirmScreen
from tui_app.config.settings import Settings
from tui_app.widgets.job_table import JobTable

NOW = datetime(2026, 11, 22, 9, 30, 0, tzinfo=UTC)
SIZES = [(80, 24), (120, 40)]


@pytest.fixture(autouse=True)
def _no_cursor_blink(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Input, "_toggle_cursor", lambda self: None)


def make_app(tmp_path: Path) -> JobsApp:
    return JobsApp(
        Settings(), lambda: None, "demo-project", "local",  # type: ignore[arg-type,return-value]
        settings_file=tmp_path / "settings.yaml", clock=lambda: NOW, source=FixedSource(),
    )


async def _loaded(pilot: Pilot[Any]) -> None:
    """The list drawn from every fixed job, the table focused (the footer shows its keys)."""
    app = pilot.app
    assert isinstance(app, JobsApp)
    await wait_until(
        pilot,
        lambda: app.last_rows and isinstance(app.focused, JobTable),
        "the jobs listed and the table focused",
    )
    await settled(pilot)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_job_list(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    """The list: header with counts per state, jobs grouped by base name newest first,
    every state with its symbol, the queue position, a truncated error; the footer's keys."""
    assert snap_compare(make_app(tmp_path), run_before=_loaded, terminal_size=size)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_job_detail(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    """The detail of the FAILED CUSTOM job: overview, cluster with a T4 per worker, the
    output, and the full errorMessage with its traceback."""

    async def open_detail(pilot: Pilot[Any]) -> None:
        await _loaded(pilot)
        await pilot.press("slash", *"census_dist_20261122_07", "enter", "enter")
        await wait_until(
            pilot,
            lambda: getattr(pilot.app.screen, "job", None) is not None,
            "the detail of census_dist_20261122_07…",
        )
        await settled(pilot)

    assert snap_compare(make_app(tmp_path), run_before=open_detail, terminal_size=size)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_cancel_confirm(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    """The cancel confirmation naming the two marked bert_large jobs, with No focused."""

    async def confirm(pilot: Pilot[Any]) -> None:
        await _loaded(pilot)
        await pilot.press("slash", *"bert", "enter")  # the filter stays, the list has focus
        await pilot.press("home", "space", "space", "x")
        await wait_until(
            pilot, lambda: isinstance(pilot.app.screen, ConfirmScreen), "the confirmation"
        )
        await settled(pilot)

    assert snap_compare(make_app(tmp_path), run_before=confirm, terminal_size=size)
