"""A queued job's detail says what it waits for (issue 29): which jobs hold the slots, what it
needs, what the machine has; and the section goes once the job runs."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console
from textual.widgets import Static

from tests.conftest import unique_id
from tests.pilot.conftest import live_app, wait_for
from tests.support.live_service import LiveService, basic_job
from tui_app.shell.app import JobsApp
from tui_app.shell.screens.describe_screen import DescribeScreen


def text_of(app: JobsApp) -> str:
    """The detail's text, "" until the screen is up."""
    if not isinstance(app.screen, DescribeScreen) or not app.screen.is_mounted:
        return ""
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(app.screen.query_one("#describe-content", Static).content)
    return console.export_text()


async def test_detail_of_a_queued_job_names_who_holds_the_slots(
    small_service: LiveService, trainer_sdist: Path, tmp_path: Path
) -> None:
    svc = small_service
    uri = svc.stage(trainer_sdist)
    client = svc.client()
    holder, waiting = unique_id("holder"), unique_id("waiting")
    # Three replicas on two slots: the holder takes the whole machine.
    client.create(
        basic_job(holder, uri, "--steps", "100000", "--sleep", "0.05", scaleTier="CUSTOM",
                  masterType="standard", workerType="standard", workerCount="2")
    )  # fmt: skip
    client.create(basic_job(waiting, uri))
    app = live_app(svc, tmp_path)
    try:
        svc.wait_state(holder, ("RUNNING",))
        async with app.run_test(size=(120, 40)) as pilot:
            app.push_screen(DescribeScreen(waiting))
            await wait_for(
                pilot, lambda: "Held by" in text_of(app), timeout=30, describe=lambda: text_of(app)
            )
            text = text_of(app)
            assert "Waiting for resources" in text
            assert f"Held by  {holder} (2 CPU slots, RUNNING)" in text
            assert "Machine  2 CPU slots; free now: 0 CPU slots" in text
            assert "Starts   when 1 more CPU slot is free" in text

            client.cancel(holder)
            await wait_for(
                pilot, lambda: "Waiting for resources" not in text_of(app), timeout=30,
                describe=lambda: text_of(app),
            )  # fmt: skip
    finally:
        svc.end_jobs([holder, waiting])
