"""The search over every job's logs at 80x24 and 120x35, drawn from fixed hits.

A live search's hits carry the times their lines were written, so the view is handed a fixed
answer (``SearchScreen._show_hits``, as an answer from the service is shown) over the fixed job
list, and the app's clock is frozen. The search against a real service is in
tests/pilot/test_search_screen.py and test_search_scope.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from tests.snapshots.test_screens_snap import make_app
from tests.support.settle import settled, wait_until
from tui_app.model.logs.log_line import LogLine
from tui_app.model.logs.log_search import SearchHit
from tui_app.shell.app import JobsApp
from tui_app.shell.screens.search_screen import SearchScreen

SIZES = [(80, 24), (120, 35)]
OOM = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.78 GiB total)"


def _hits() -> list[SearchHit]:
    """Newest first: five in a failed job (three shown, two folded), one in a trial."""
    hits = [
        SearchHit(
            "census_dist_20261122_070000",
            LogLine(f"2026-11-22T07:2{9 - i}:0{i}.000000Z", f"{900 - i:018d}", "master-replica-0",
                    500, OOM),
        )
        for i in range(5)
    ]  # fmt: skip
    hits.append(
        SearchHit(
            "mnist_20261121_170000",
            LogLine("2026-11-21T17:12:40.000000Z", f"{500:018d}", "worker-replica-1", 400,
                    "warning: close to out of memory at batch 512", trial_id="3"),
        )
    )  # fmt: skip
    return hits


async def _searched(pilot: Pilot[Any]) -> None:
    app = pilot.app
    assert isinstance(app, JobsApp)
    await wait_until(pilot, lambda: bool(app.last_rows), "the jobs listed")
    screen = SearchScreen("", app.last_rows)
    await app.push_screen(screen)
    box = screen.query_one(Input)
    with box.prevent(Input.Changed):
        box.value = "out of memory"
    screen._show_hits(_hits(), "more", ("out of memory",), '"out of memory"')
    screen.action_to_hits()
    await settled(pilot)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_search_hits_grouped_by_job(
    snap_compare: Any, tmp_path: Path, size: tuple[int, int]
) -> None:
    """The reviewer should see:

    - the title "Search every job's logs │ window: all │ 6 hits in 2 jobs │ more: m";
    - the box holding "out of memory";
    - "census_dist_20261122_070000  ✗ FAILED  5 hits so far · m reads on", then three of its
      hits ("M0  11-22 07:29:00  RuntimeError: CUDA out of memory. …", the match reversed,
      the line cut with "…" at 80 columns), the first under the cursor, and "… 2 more in this
      job: enter" dim;
    - "mnist_20261121_170000  ✓ SUCCEEDED  1 hit so far · m reads on" and its hit
      "3·W1  11-21 17:12:40  warning: close to out of memory at batch 512";
    - the footer: t Window, m More, / Query, esc Back, f Jobs, ? Help.
    """
    assert snap_compare(make_app(tmp_path), run_before=_searched, terminal_size=size)
