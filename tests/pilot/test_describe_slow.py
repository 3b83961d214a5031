"""The detail loads even when one jobs.get takes longer than the list's refresh interval.

Each refreshed list used to start a new fetch of the job and cancel the one in flight, so a get
slower than ``refresh_seconds`` (a busy service, a far cloud endpoint) never landed: the pane
stayed empty, and the usage charts' poller, which ends once it sees the job ended, never did.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tests.pilot.conftest import wait_for
from tests.support.fixed_jobs import JOBS, FixedClient, FixedSource
from tui_app.config.settings import Settings
from tui_app.shell.app import JobsApp
from tui_app.shell.screens.describe_screen import DescribeScreen

GET_SECONDS = 0.8


class SlowGets(FixedClient):
    def get(self, job_id: str) -> dict[str, Any]:
        time.sleep(GET_SECONDS)
        return super().get(job_id)


async def test_a_get_slower_than_the_refresh_still_lands(tmp_path: Path) -> None:
    source = FixedSource()
    source.fixed = SlowGets(JOBS)
    app = JobsApp(
        Settings(refresh_seconds=0.2),
        lambda: None,  # type: ignore[arg-type,return-value]
        "demo-project",
        "local",
        settings_file=tmp_path / "settings.yaml",
        source=source,
    )
    job_id = str(JOBS[0]["jobId"])
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: bool(getattr(app, "last_rows", None)))
        screen = DescribeScreen(job_id)
        app.push_screen(screen)
        await wait_for(pilot, lambda: screen.job is not None, timeout=6 * GET_SECONDS + 2)
        assert screen.job is not None and screen.job["jobId"] == job_id
