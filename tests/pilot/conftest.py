"""Fixtures for driving the whole app with Pilot, against a real service or fixed data."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from textual.app import App
from textual.notifications import Notification, Notifications
from textual.widgets import Input

from tests.support.live_service import PROJECT, LiveService
from tui_app.config.settings import Profile, Settings
from tui_app.entry.launch import connector
from tui_app.shell.app import JobsApp

if TYPE_CHECKING:
    from tui_app.shell.screens.search_screen import SearchScreen


@pytest.fixture(autouse=True)
def _no_cursor_blink(monkeypatch: pytest.MonkeyPatch) -> None:
    """Freeze every Input's cursor so snapshots do not depend on timing."""
    monkeypatch.setattr(Input, "_toggle_cursor", lambda self: None)


@pytest.fixture(autouse=True)
def _every_toast_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep a record of every toast an app raises, for ``raised_toasts``.

    ``app._notifications`` drops a toast once its timeout has passed (1.5 s for "Sorted by",
    5 s by default), counted from when it was raised: on a loaded machine a test that looked
    for a toast after a slow step found it gone, and one that counted toasts saw the count
    fall.
    """
    add = Notifications.add

    def add_and_keep(self: Notifications, notification: Notification) -> Notifications:
        self.__dict__.setdefault("_raised", []).append(notification)
        return add(self, notification)

    monkeypatch.setattr(Notifications, "add", add_and_keep)


def raised_toasts(app: App[Any]) -> list[Notification]:
    """Every toast ``app`` has raised so far, oldest first, whether still shown or not (to
    check what is on screen now, read ``app._notifications``)."""
    return list(app._notifications.__dict__.get("_raised", []))


def toast_messages(app: App[Any]) -> list[str]:
    """The messages of ``raised_toasts``."""
    return [n.message for n in raised_toasts(app)]


LIST_REFRESH_SECONDS = 0.3
"""live_app's poll of the job list: tests that watch jobs change state do not wait long."""
QUIET_REFRESH_SECONDS = 2.0
"""The product's default poll, for tests that do not watch the list change (a form, the log
pane; the first poll and the one after an action come at once): every poll costs the app and
the service CPU (the builder's tests took a sixth to a third more CPU at 0.3 s), and three
test workers share two cores."""


def live_app(
    service: LiveService,
    tmp_path: Path,
    project: str = PROJECT,
    refresh_seconds: float = LIST_REFRESH_SECONDS,
    **kw: Any,
) -> JobsApp:
    """The real app on a real service, polling the list every ``refresh_seconds``."""
    settings = Settings(refresh_seconds=refresh_seconds)
    return JobsApp(
        settings,
        connector(Profile("local"), service.state_dir),
        project,
        "local",
        settings_file=tmp_path / "settings.yaml",
        **kw,
    )


async def wait_for(
    pilot: Any,
    condition: Callable[[], bool],
    timeout: float = 20.0,
    describe: Callable[[], str] = lambda: "",
) -> None:
    """Let the app run until ``condition`` holds (polling, not sleeping blindly).

    Between checks the test only sleeps: the app runs in the same event loop and goes on
    meanwhile. ``pilot.pause`` would also post a callback to every widget of the screen and
    wait for each (a large form has hundreds), which at 20 checks a second cost more CPU than
    the app itself.
    """
    import asyncio
    import time

    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met in time {describe()}")
        await asyncio.sleep(0.05)


async def search_for(
    pilot: Any, search: SearchScreen, text: str, describe: Callable[[], str] = lambda: ""
) -> None:
    """Type ``text`` into the log search view and wait for its answer to the whole text: one to
    a pause mid-word may come first on a slow machine, and a search may still be reading on."""
    await pilot.press(*text)
    await wait_for(
        pilot,
        lambda: search.shown_filter == f'"{text}"' and not search.searching,
        describe=describe,
    )


FROZEN_NOW = datetime(2026, 11, 22, 9, 30, 0, tzinfo=UTC)


def fixed_app(tmp_path: Path, jobs: list[dict[str, Any]] | None = None, **settings: Any) -> JobsApp:
    """The real app on the fixed jobs (tests/support/fixed_jobs.py; ``jobs``: a copy of these
    instead, the test may change it), its clock at FROZEN_NOW: what a screen shows, the same
    every run."""
    import copy

    from tests.support.fixed_jobs import FixedSource

    return JobsApp(
        Settings(**settings),
        lambda: None,  # type: ignore[arg-type,return-value]
        "demo-project",
        "local",
        settings_file=tmp_path / "settings.yaml",
        clock=lambda: FROZEN_NOW,
        source=FixedSource(None if jobs is None else copy.deepcopy(jobs)),
    )
