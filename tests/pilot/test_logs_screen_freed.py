"""A closed logs screen is freed, lines and all (issue 45; log_bench's "LogsScreen kept after
gc.collect()").

Its views hold up to 100k lines each, so a screen that stays reachable after escape keeps them
for the rest of the session. Textual's thread workers used to leave the last worker each
executor thread ran (and through it the screen) in that thread's own context.
"""

from __future__ import annotations

import gc
import weakref
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from tests.pilot.conftest import QUIET_REFRESH_SECONDS, live_app, wait_for
from tests.support.live_service import LiveService
from tui_app.model.logs.log_line import LogLine
from tui_app.shell.app import JobsApp
from tui_app.shell.screens.jobs_screen import JobsScreen
from tui_app.shell.screens.logs_screen import ALL, LinesArrived, LogsScreen
from tui_app.widgets.log_view import LogView

LINES = 2_000


async def _open_with_lines(app: JobsApp, pilot: Pilot[None]) -> list[weakref.ref[Any]]:
    """Open a job's logs, let its thread workers run and fill its views with lines; weakrefs
    to the screen (first) and its views, and no reference to either left behind."""
    app.open_logs("no_such_job_20261207_000000")
    await wait_for(pilot, lambda: isinstance(app.screen, LogsScreen))
    logs = app.screen
    assert isinstance(logs, LogsScreen)
    # Its thread workers ran (the job read, the stream), and it holds lines.
    await wait_for(pilot, lambda: logs.stopped, timeout=30)
    stamp = "2026-12-07T01:00:00.{:06d}000Z"
    batch = [
        LogLine(stamp.format(i), f"{i:018d}", "master-replica-0", 200, f"n {i}")
        for i in range(LINES)
    ]
    logs.post_message(LinesArrived(batch))
    await wait_for(pilot, lambda: logs.view(ALL).line_count >= LINES, timeout=30)
    views = list(logs.query(LogView))
    assert views
    return [weakref.ref(logs), *(weakref.ref(view) for view in views)]


async def test_a_closed_logs_screen_and_its_lines_are_freed(
    service: LiveService, tmp_path: Path
) -> None:
    app = live_app(service, tmp_path, "freed-logs", refresh_seconds=QUIET_REFRESH_SECONDS)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen))
        refs = await _open_with_lines(app, pilot)

        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen))
        await pilot.pause(0.5)  # its workers see the cancellation and end
        gc.collect()
        assert refs[0]() is None, "the closed LogsScreen is still reachable"
        assert all(ref() is None for ref in refs[1:]), "a closed log view is still reachable"
