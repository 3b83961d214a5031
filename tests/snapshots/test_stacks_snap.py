"""The stacks view at 80x24 and 120x35, drawn from fixed stacks.

A live replica's dump has thread ids, pids and line numbers that change from run to run, so the
view is handed a fixed ``:stacks`` answer (tests/support/fixed_stacks.py: a hung cluster, a busy
worker and a replica that ended meanwhile) and reads nothing (``StacksScreen(stacks=...)``); the
app's clock is frozen, so the time in the title is the same every run. Behaviour against the
real service, with a hung job of the sample trainer, is in tests/pilot/test_stacks_screen.py.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.snapshots.test_screens_snap import make_app
from tests.support.fixed_stacks import JOB_ID, fixed_stacks
from tests.support.settle import settled, wait_until
from tui_app.shell.screens.stacks_screen import StackSections, StacksScreen

SIZES = [(80, 24), (120, 35)]


def _opened(*keys: str, with_locals: bool = False) -> Callable[[Pilot[Any]], Awaitable[None]]:
    async def run_before(pilot: Pilot[Any]) -> None:
        screen = StacksScreen(JOB_ID, stacks=fixed_stacks(with_locals=with_locals))
        await pilot.app.push_screen(screen)
        await wait_until(
            pilot,
            lambda: len(screen.query_one(StackSections).sections()) == 4,
            "the four groups drawn",
        )
        await pilot.press(*keys)
        await settled(pilot)

    return run_before


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_stacks_of_a_hung_cluster(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    """The reviewer should see:

    - "Stacks of census_dist_20261122_091000 · taken 09:29:41 · 6 replicas in 4 groups"
      (wrapped at 80 columns);
    - the first section marked "▶" with an accent bar, its heading on a band: "master 0,
      worker 0, 1 (3 replicas, the same stacks): in `ParameterClient._call` ←
      `SocketIO.readinto` (idle)"; under it "(thread ids of master 0, pid 1749)", dim;
    - its threads: "Thread … "MainThread" (idle)" then the frames innermost first, the
      trainer's own (ParameterClient._call, ParameterClient.pull, train, main, <module>) in
      bold, the library's (SocketIO.readinto, HTTPResponse.begin, Transport.request) dim,
      every "(file:line)" dim; then the "loader" thread;
    - (at 120x35, further down) "worker 2: in `train_step` ← `dot` (active)", its heading in
      the success colour and its thread bold "(active, holds the GIL)", numpy's frame dim;
      "ps 0 … (idle)" with its request thread in `ParameterShard._hang`;
    - the footer: [ ] Group, o Locals, K At stall, r Take again, y Copy, esc Back, ? Help.
    """
    assert snap_compare(make_app(tmp_path), run_before=_opened(), terminal_size=size)


def test_stacks_with_locals_at_the_last_group(snap_compare: Any, tmp_path: Path) -> None:
    """With locals, after ``]`` three times at 120x35: the title ends "· locals"; the view
    scrolled to the end, the "▶" and the accent bar on "evaluator 0", under which "⚠ it ended
    meanwhile" in the warning colour; above it ps 0's two threads and worker 2's; at the top
    the end of the trainers' listing, "step = 5" in italics under ParameterClient.pull."""
    opened = _opened(*["right_square_bracket"] * 3, with_locals=True)
    assert snap_compare(make_app(tmp_path), run_before=opened, terminal_size=(120, 35))
