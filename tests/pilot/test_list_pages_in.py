"""A first list that takes long (100k jobs are a thousand pages, some 5 s) pages in: the jobs
read so far are shown, sorted, with ``listing…`` in the header, until the whole list replaces
them. Both ways in: the poll's own first round, and the round begun at launch.

The listing stops half way at a gate the test opens, so the part shown is the state the test
set up, not a moment in time; the thresholds are lowered so that 300 jobs are worth a part.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

import tui_app.shell.app as shell_app
from tests.pilot.conftest import wait_for
from tests.support.fixed_jobs import FixedClient, FixedSource
from tui_app.config.settings import Settings
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


def _app(source: GatedSource, first: FirstList | None) -> JobsApp:
    return JobsApp(
        Settings(refresh_seconds=0.5),
        lambda **_: None,  # type: ignore[arg-type]  # never called: fixed source
        "demo-project",
        "local",
        clock=lambda: datetime(2026, 11, 22, 12, 0, tzinfo=UTC),
        source=source if first is None else None,
        first_list=first,
    )


def _header(app: JobsApp) -> str:
    return app.screen.query_one(StatusHeader).render().plain


def _rows(app: JobsApp) -> int:
    return app.screen.query_one(JobTable).row_count


def _sorted_ids(app: JobsApp) -> bool:
    table = app.screen.query_one(JobTable)
    shown = list(app.last_rows)
    return table.row_count == len(shown) and shown == sorted(shown, key=default_key)


async def _pages_in(app: JobsApp, source: GatedSource) -> None:
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: _rows(app) == GATE_AT)
        assert "✓300 succeeded" in _header(app) and "listing…" in _header(app)
        assert _sorted_ids(app)  # the part is in the list's order, not the API's
        source.gate.set()
        await wait_for(pilot, lambda: _rows(app) == TOTAL)
        await wait_for(pilot, lambda: "listing…" not in _header(app))
        assert f"✓{TOTAL} succeeded" in _header(app)
        assert _sorted_ids(app)


def _first_frame_rows(app: JobsApp) -> list[int]:
    """How many rows the list's table had in each frame painted, from the first."""
    seen: list[int] = []
    display = app._display

    def counting(screen: Any, renderable: Any) -> None:
        if renderable is not None:
            seen.append(_rows(app) if app.screen.query(JobTable) else 0)
        display(screen, renderable)

    app._display = counting  # type: ignore[method-assign]
    return seen


async def test_the_polls_first_list_pages_in() -> None:
    source = GatedSource()
    await _pages_in(_app(source, None), source)


async def test_the_list_begun_at_launch_pages_in_from_the_first_frame(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(shell_app, "FIRST_FRAME_WAIT_SECONDS", 60.0)  # waits for the part
    source = GatedSource()
    app = _app(source, FirstList.start(source))
    frames = _first_frame_rows(app)
    await _pages_in(app, source)
    assert frames[0] == GATE_AT  # the first frame already shows the part


async def test_the_list_begun_at_launch_pages_in_after_the_first_frame(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(shell_app, "FIRST_FRAME_WAIT_SECONDS", 0.0)
    source = GatedSource()
    source.start.clear()  # nothing is read before the first frame: the poll shows the part
    app = _app(source, FirstList.start(source))
    frames = _first_frame_rows(app)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: bool(frames))
        assert frames[0] == 0
        source.start.set()
        await wait_for(pilot, lambda: _rows(app) == GATE_AT)
        assert "listing…" in _header(app) and _sorted_ids(app)
        source.gate.set()
        await wait_for(pilot, lambda: _rows(app) == TOTAL and "listing…" not in _header(app))
