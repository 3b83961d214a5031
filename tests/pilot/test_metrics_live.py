"""The metrics view on the real service (issue 26): the sample trainer writes TensorBoard event
files to its gs:// job dir while it runs, and the view, opened with ``M`` from the list, shows
their points as they are flushed, then stops reading once the job has ended.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import unique_id
from tests.pilot.conftest import live_app, wait_for
from tests.support.live_service import LiveService, basic_job
from tui_app.shell.screens.jobs_screen import JobsScreen
from tui_app.shell.screens.metrics_screen import MetricsScreen
from tui_app.widgets.job_table import JobTable

PROJECT = "metrics-project"


def metrics_screen(screen: object) -> MetricsScreen:
    assert isinstance(screen, MetricsScreen), screen
    return screen


async def test_a_running_trainers_event_files_are_drawn_live(
    service: LiveService, package_uri: str, tmp_path: Path
) -> None:
    job_id = unique_id("curves")
    service.client(PROJECT).create(
        basic_job(
            job_id,
            package_uri,
            "--steps", "200", "--log-every", "10", "--sleep", "0.03",
            jobDir=f"gs://test-bucket/{job_id}",
        )
    )  # fmt: skip
    app = live_app(service, tmp_path, PROJECT)
    async with app.run_test(size=(120, 35)) as pilot:
        await wait_for(pilot, lambda: any(r.job_id == job_id for r in app.last_rows))
        table = app.screen.query_one(JobTable)
        assert isinstance(app.screen, JobsScreen)
        await wait_for(pilot, lambda: table.move_to_key(job_id) and table.cursor_key == job_id)
        await pilot.press("M")
        await wait_for(pilot, lambda: isinstance(app.screen, MetricsScreen))
        screen = metrics_screen(app.screen)

        def loss_step() -> int:
            for chart in screen.charts():
                for line in chart.lines:
                    if chart.tag == "loss" and line.source == "events" and line.label == "train":
                        return line.series.last_step or 0
            return 0

        def state() -> str:
            sources = str(screen.query_one("#metrics-sources").render())
            return f"state {screen.job and screen.job.get('state')}: {sources}"

        await wait_for(pilot, lambda: loss_step() > 0, timeout=60, describe=state)
        first = loss_step()
        assert screen.job is not None and screen.job["state"] == "RUNNING", state()
        # Points flushed after the view opened reach the chart while the job still runs.
        await wait_for(pilot, lambda: loss_step() > first, timeout=30, describe=state)
        (chart,) = (c for c in screen.charts() if c.tag == "loss")
        assert "train" in [line.label for line in chart.lines]
        sources = str(screen.query_one("#metrics-sources").render())
        assert f"gs://test-bucket/{job_id}" in sources and "train" in sources
        # The job ends: the view reads once more (the last points), then stops.
        await wait_for(pilot, lambda: not screen.polling, timeout=90, describe=state)
        assert screen.ended
        assert loss_step() == 200
        assert "SUCCEEDED" in str(screen.query_one("#metrics-title").render())
