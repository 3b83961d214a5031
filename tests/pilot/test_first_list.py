"""The list begun at launch (shell/first_list.py): painted in the first frame when it is in by
then; otherwise, or when it failed, the poll takes it over as its own first round.

The source is fixed data behind a gate the test opens, so each path is reached by the state
the test sets up, not by timing: the first frame waits ``FIRST_FRAME_WAIT_SECONDS`` at most.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

import tui_app.shell.app as shell_app
from tests.pilot.conftest import wait_for
from tests.support.fixed_jobs import JOBS, FixedSource
from tui_app.api.errors import ApiCallError
from tui_app.config.settings import Settings
from tui_app.shell.app import JobsApp
from tui_app.shell.first_list import FirstList
from tui_app.shell.screens.jobs_screen import JobsScreen
from tui_app.widgets.job_table import JobTable


class GatedSource(FixedSource):
    """Fixed jobs; each call waits for ``gate`` and fails while ``failures`` is above 0."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.failures = 0
        self.calls = 0

    def call(self, fn: Callable[[Any], Any]) -> Any:
        self.calls += 1
        assert self.gate.wait(60), "the test never opened the gate"
        if self.failures > 0:
            self.failures -= 1
            raise ApiCallError("Cannot reach the jobs API at http://127.0.0.1:9: refused", 0)
        return super().call(fn)


def _app(source: GatedSource, first: FirstList) -> JobsApp:
    return JobsApp(
        Settings(refresh_seconds=0.2),
        lambda **_: None,  # type: ignore[arg-type]  # never called: fixed source
        "demo-project",
        "local",
        clock=lambda: datetime(2026, 11, 22, 12, 0, tzinfo=UTC),
        first_list=first,
    )


def _frames_with_rows(app: JobsApp, seen: list[int]) -> None:
    """Record, for every frame painted, how many rows the list's table then had."""
    display = app._display

    def counting(screen: Any, renderable: Any) -> None:
        if renderable is not None and isinstance(app.screen, JobsScreen):
            seen.append(app.screen.query_one(JobTable).row_count)
        display(screen, renderable)

    app._display = counting  # type: ignore[method-assign]


def _table_rows(app: JobsApp) -> int:
    return app.screen.query_one(JobTable).row_count


async def test_a_list_in_by_the_first_frame_is_painted_in_it() -> None:
    source = GatedSource()
    source.gate.set()
    first = FirstList.start(source)
    first.result()  # in before the app starts
    app = _app(source, first)
    frames: list[int] = []
    _frames_with_rows(app, frames)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: bool(frames))
        assert frames[0] == len(JOBS)  # no frame of an empty, loading list
        # The poll goes on from that round: the next list is its second call, not a repeat.
        await wait_for(pilot, lambda: source.calls >= 2)
        assert _table_rows(app) == len(JOBS)


async def test_a_slow_first_list_is_shown_by_the_poll_when_it_comes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(shell_app, "FIRST_FRAME_WAIT_SECONDS", 0.0)
    source = GatedSource()
    first = FirstList.start(source)
    app = _app(source, first)
    frames: list[int] = []
    _frames_with_rows(app, frames)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: bool(frames))
        assert frames[0] == 0  # the list is not in: the frame does not wait for it
        assert source.calls == 1  # and the poll does not ask a second time meanwhile
        source.gate.set()
        await wait_for(pilot, lambda: _table_rows(app) == len(JOBS))
        assert source.calls == 1  # the poll took the launch's round as its first


async def test_a_failed_first_list_is_reported_by_the_poll_which_then_recovers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(shell_app, "RETRY_SECONDS", 0.05)
    source = GatedSource()
    source.failures = 1
    source.gate.set()
    first = FirstList.start(source)
    with pytest.raises(ApiCallError):
        first.result()
    app = _app(source, first)
    async with app.run_test(size=(120, 30)) as pilot:
        banner = app.screen.query_one("#banner")
        await wait_for(pilot, lambda: app.connection_error is not None)
        assert "Cannot reach the jobs API" in str(app.connection_error)
        await wait_for(pilot, lambda: _table_rows(app) == len(JOBS))
        await wait_for(pilot, lambda: not banner.display)
        assert app.connection_error is None
