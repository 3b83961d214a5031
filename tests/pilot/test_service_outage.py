"""The TUI when its service dies mid-session (``kill -9``): the disconnected banner, no crash,
actions that fail say so, and everything recovers when a service is back on the same port and
state dir (which adopts the job that kept running meanwhile)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from tests.conftest import _start, _stop
from tests.pilot.conftest import live_app, toast_messages, wait_for
from tests.support.live_service import basic_job
from tui_app.model.views.job_view import JobRow
from tui_app.shell.screens.confirm_screen import ConfirmScreen
from tui_app.shell.screens.jobs_screen import JobsScreen
from tui_app.shell.screens.message_screen import MessageScreen
from tui_app.widgets.job_table import JobTable

PROJECT = "outage-project"
JOB = "outage_20261122_010000"


def _state(table: JobTable, job_id: str) -> str | None:
    for row in table.rows:
        if isinstance(row, JobRow) and row.job_id == job_id:
            return row.state.value
    return None


async def test_actions_during_an_outage_say_they_failed_and_the_app_recovers(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, trainer_sdist: Path
) -> None:
    state = tmp_path_factory.mktemp("outage") / "state"
    svc = _start(state)
    port = int(svc.url.rsplit(":", 1)[1])
    uri = svc.stage(trainer_sdist)
    svc.client(PROJECT).create(basic_job(JOB, uri, "--steps", "100000", "--sleep", "0.05"))
    svc.wait_state(JOB, ("RUNNING",), project=PROJECT)
    app = live_app(svc, tmp_path, PROJECT)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            table = app.screen.query_one(JobTable)
            banner = app.screen.query_one("#banner")
            await wait_for(pilot, lambda: _state(table, JOB) == "RUNNING")
            os.kill(svc.proc.pid, signal.SIGKILL)
            svc.proc.wait(10)
            await wait_for(pilot, lambda: banner.display, timeout=15)
            assert "Disconnected" in str(banner.render())

            # Cancel: asked, answered yes, and the failure is shown with its reason.
            await pilot.press("x")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
            await pilot.press("y")
            await wait_for(pilot, lambda: isinstance(app.screen, MessageScreen), timeout=30)
            assert isinstance(app.screen, MessageScreen)
            assert "not cancelled" in app.screen.title_text
            assert JOB in app.screen.text and len(app.screen.text) > len(JOB) + 2
            await pilot.press("escape")
            await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen))

            # Resubmit: an error notification with the reason.
            await pilot.press("R")
            await wait_for(
                pilot, lambda: any("Resubmit failed" in n for n in toast_messages(app)), timeout=30
            )

            # Back on the same port and state: the banner goes, the list updates, and the job
            # that ran on meanwhile (adopted by the new service) can be cancelled now.
            svc = _start(state, port=port)
            await wait_for(pilot, lambda: not banner.display, timeout=20)
            await pilot.press("x")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
            await pilot.press("y")
            await wait_for(pilot, lambda: _state(table, JOB) == "CANCELLED", timeout=30)
            assert any(f"Cancelling {JOB}" in n for n in toast_messages(app))
    finally:
        _stop(svc)
