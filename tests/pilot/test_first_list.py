"""The list begun at launch (shell/first_list.py): painted in the first frame when it is in by
then; otherwise, or when it failed, the poll takes it over as its own first round.

The source is fixed data behind a gate the test opens, so each path is reached by the state
the test sets up, not by timing: the first frame waits ``FIRST_FRAME_WAIT_SECONDS`` at most.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable
from typing import Any

import pytest

import tui_app.shell.app as shell_app
from tests.pilot.conftest import wait_for
from tests.support.first_frames import app_on, rows_per_frame, table_rows
from tests.support.fixed_jobs import JOBS, FixedSource
from tui_app.api.errors import ApiCallError
from tui_app.shell import start_gc
from tui_app.shell.first_list import FirstList


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


async def test_a_list_in_by_the_first_frame_is_painted_in_it() -> None:
    source = GatedSource()
    source.gate.set()
    first = FirstList.start(source)
    first.result()  # in before the app starts
    app = app_on(source, first, refresh_seconds=0.2)
    frames = rows_per_frame(app)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: bool(frames))
        assert frames[0] == len(JOBS)  # no frame of an empty, loading list
        # The poll goes on from that round: the next list is its second call, not a repeat.
        await wait_for(pilot, lambda: source.calls >= 2)
        assert table_rows(app) == len(JOBS)


async def test_the_collector_held_off_for_the_start_is_on_after_the_first_frame() -> None:
    """tui-app holds the cyclic collector off while it starts (shell/start_gc.py); the app
    turns it on again once its first frame is drawn, not at exit."""
    source = GatedSource()
    source.gate.set()
    app = app_on(source, FirstList.start(source))
    frames = rows_per_frame(app)
    start_gc.hold()
    try:
        assert not gc.isenabled()
        async with app.run_test(size=(120, 30)) as pilot:
            await wait_for(pilot, lambda: bool(frames) and gc.isenabled())
            assert frames[0] == len(JOBS)
    finally:
        start_gc._held = False
        gc.unfreeze()
        gc.enable()


async def test_a_slow_first_list_is_shown_by_the_poll_when_it_comes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(shell_app, "FIRST_FRAME_WAIT_SECONDS", 0.0)
    source = GatedSource()
    first = FirstList.start(source)
    app = app_on(source, first, refresh_seconds=0.2)
    frames = rows_per_frame(app)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: bool(frames))
        assert frames[0] == 0  # the list is not in: the frame does not wait for it
        assert source.calls == 1  # and the poll does not ask a second time meanwhile
        source.gate.set()
        await wait_for(pilot, lambda: table_rows(app) == len(JOBS))
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
    app = app_on(source, first, refresh_seconds=0.2)
    async with app.run_test(size=(120, 30)) as pilot:
        banner = app.screen.query_one("#banner")
        await wait_for(pilot, lambda: app.connection_error is not None)
        assert "Cannot reach the jobs API" in str(app.connection_error)
        await wait_for(pilot, lambda: table_rows(app) == len(JOBS))
        await wait_for(pilot, lambda: not banner.display)
        assert app.connection_error is None
