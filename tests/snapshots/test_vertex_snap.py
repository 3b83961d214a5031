"""The job list and a job's detail on a Vertex AI profile, as a person sees them (issue 8).

The jobs come from the replayed Vertex AI server (tests/fixtures/vertex) through the real
``VertexJobsClient``; the clock is frozen, so the pictures do not change between runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from tests.pilot.test_vertex_views import FAILED_NAME, HP_NAME, STATES, vertex_app
from tests.support.settle import settled, wait_until
from tests.support.vertex_replay import VertexReplay
from tui_app.widgets.job_table import JobTable


async def _loaded(pilot: Pilot[Any]) -> None:
    """Every job listed and the table focused (the footer shows the focused widget's keys)."""

    def ready() -> bool:
        table = pilot.app.screen.query_one(JobTable)
        return len(table.rows) >= len(STATES) and pilot.app.focused is table

    await wait_until(pilot, ready, "every job listed and the table focused")
    await settled(pilot)


def _detail_end(job_id: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    """Filter the list down to ``job_id``, open its detail and scroll to its end."""

    async def run(pilot: Pilot[Any]) -> None:
        await _loaded(pilot)
        await pilot.press("slash", *job_id, "enter", "enter")
        await wait_until(
            pilot,
            lambda: getattr(pilot.app.screen, "job", None) is not None,
            f"the detail of {job_id}",
        )
        await settled(pilot)
        await pilot.press("end")
        await settled(pilot)

    return run


def test_vertex_job_list(snap_compare: Any, tmp_path: Path) -> None:
    """Custom and tuning jobs together, by display name, with their states mapped to ml v1."""
    app = vertex_app(tmp_path, VertexReplay(), poll=True)
    assert snap_compare(app, run_before=_loaded, terminal_size=(120, 40))


def test_vertex_failed_job_detail(snap_compare: Any, tmp_path: Path) -> None:
    """The failed job: its cluster read back from the worker pools, Vertex's error message,
    and the Vertex AI section with the numeric id, the resource and the console link."""

    app = vertex_app(tmp_path, VertexReplay(), poll=True)
    assert snap_compare(app, run_before=_detail_end(FAILED_NAME), terminal_size=(120, 40))


def test_vertex_tuning_job_detail(snap_compare: Any, tmp_path: Path) -> None:
    """The tuning job's trials (best first) under its Vertex AI section."""

    app = vertex_app(tmp_path, VertexReplay(), poll=True)
    assert snap_compare(app, run_before=_detail_end(HP_NAME), terminal_size=(120, 40))
