"""A first list that takes long (100k jobs are a thousand pages, some 5 s) pages in: the jobs
read so far are shown, sorted, with ``listing…`` in the header, until the whole list replaces
them. Both ways in: the poll's own first round, and the round begun at launch.

The listing stops half way at a gate the test opens, so the part shown is the state the test
set up, not a moment in time; the thresholds are lowered so that 300 jobs are worth a part.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import tui_app.shell.app as shell_app
from tests.pilot.conftest import wait_for
from tests.support.first_frames import app_on, rows_per_frame, table_rows
from tests.support.fixed_jobs import FixedClient, FixedSource
from tui_app.model.views.job_view import default_key
from tui_app.shell import row_cache
from tui_app.shell.app import JobsApp
from tui_app.shell.first_list import FirstList
from tui_app.widgets.job_table import JobTable
from tui_app.widgets.status_header import StatusHeader

TOTAL = 600
GATE_AT = 300


def _jobs() -> list[dict[str, Any]]:
    return [
        {
            "jobId": f"model{i % 7}_202611{10 + i % 20}_{i:06d}",
            "state": "SUCCEEDED",
            "etag": f"e{i}",
            "createTime": f"2026-11-{10 + i % 20}T00:00:00Z",
        }
        for i in range(TOTAL)
    ]


class HalfThenGate(FixedClient):
    """Waits for ``start``, lists ``GATE_AT`` jobs, then waits for ``gate`` before the rest
    (a long listing)."""

    def __init__(
        self, jobs: list[dict[str, Any]], start: threading.Event, gate: threading.Event
    ) -> None:
        super().__init__(jobs)
        self.start = start
        self.gate = gate

    def iter_jobs(self, filter_text: str | None = None) -> Iterator[dict[str, Any]]:
        assert self.start.wait(60), "the test never let the listing start"
        for n, job in enumerate(self.jobs.values()):
            if n == GATE_AT:  # after 300 jobs (three pages): the part to show
                assert self.gate.wait(60), "the test never opened the gate"
            yield job


class GatedSource(FixedSource):
    def __init__(self) -> None:
        super().__init__(_jobs())
        self.start = threading.Event()
        self.start.set()
        self.gate = threading.Event()
        self.gated = HalfThenGate(_jobs(), self.start, self.gate)

    def call(self, fn: Callable[[Any], Any]) -> Any:
        return fn(self.gated)


@pytest.fixture(autouse=True)
def _parts_from_300_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(row_cache, "FIRST_PROGRESS_SECONDS", 0.0)
    monkeypatch.setattr(row_cache, "FIRST_PROGRESS_ROWS", 250)


def _header(app: JobsApp) -> str:
    return app.screen.query_one(StatusHeader).render().plain


def _sorted_ids(app: JobsApp) -> bool:
    table = app.screen.query_one(JobTable)
    shown = list(app.last_rows)
    return table.row_count == len(shown) and shown == sorted(shown, key=default_key)


async def _pages_in(app: JobsApp, source: GatedSource) -> None:
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: table_rows(app) == GATE_AT)
        assert "✓300 succeeded" in _header(app) and "listing…" in _header(app)
        assert _sorted_ids(app)  # the part is in the list's order, not the API's
        source.gate.set()
        await wait_for(pilot, lambda: table_rows(app) == TOTAL)
        await wait_for(pilot, lambda: "listing…" not in _header(app))
        assert f"✓{TOTAL} succeeded" in _header(app)
        assert _sorted_ids(app)


async def test_the_polls_first_list_pages_in() -> None:
    source = GatedSource()
    await _pages_in(app_on(source, None), source)


async def test_the_list_begun_at_launch_pages_in_from_the_first_frame(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(shell_app, "FIRST_FRAME_WAIT_SECONDS", 60.0)  # waits for the part
    source = GatedSource()
    app = app_on(source, FirstList.start(source))
    frames = rows_per_frame(app)
    await _pages_in(app, source)
    assert frames[0] == GATE_AT  # the first frame already shows the part


async def test_the_list_begun_at_launch_pages_in_after_the_first_frame(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(shell_app, "FIRST_FRAME_WAIT_SECONDS", 0.0)
    source = GatedSource()
    source.start.clear()  # nothing is read before the first frame: the poll shows the part
    app = app_on(source, FirstList.start(source))
    frames = rows_per_frame(app)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: bool(frames))
        assert frames[0] == 0
        source.start.set()
        await wait_for(pilot, lambda: table_rows(app) == GATE_AT)
        assert "listing…" in _header(app) and _sorted_ids(app)
        source.gate.set()
        await wait_for(pilot, lambda: table_rows(app) == TOTAL and "listing…" not in _header(app))
