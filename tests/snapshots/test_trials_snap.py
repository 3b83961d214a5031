"""The trials of a tuning job in the detail pane, at 80x24 and 120x40 (issue 7).

Fixed jobs and a frozen clock (tests/support/fixed_jobs.py TUNING_JOBS): the pictures must not
change between runs. Behaviour against the real service is in tests/pilot/test_trials_view.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.snapshots.test_screens_snap import NOW, SIZES
from tests.support.fixed_jobs import TUNING_JOBS, FixedSource
from tests.support.settle import settled, wait_until
from tui_app.shell.app import JobsApp
from tui_app.shell.screens.describe_screen import DescribeScreen
from tui_app.config.settings import Settings
from tui_app.widgets.trials_table import TrialsTable

JOB_ID = "hptune_20261122_084000"


def make_app(tmp_path: Path) -> JobsApp:
    return JobsApp(
        Settings(), lambda: None, "demo-project", "local",  # type: ignore[arg-type,return-value]
        settings_file=tmp_path / "settings.yaml", clock=lambda: NOW,
        source=FixedSource(TUNING_JOBS),
    )  # fmt: skip


async def open_trials(pilot: Pilot[Any]) -> None:
    """The detail of the running tuning job, its trials table focused (``t``)."""
    screen = DescribeScreen(JOB_ID)
    pilot.app.push_screen(screen)
    await wait_until(pilot, lambda: screen.job is not None, f"the detail of {JOB_ID}")
    # Laid out first: focusing the table scrolls it into view, and a scroll worked out while
    # the detail still grew left it one row off, in either direction, from run to run.
    await settled(pilot)
    await pilot.press("t")
    await wait_until(
        pilot, lambda: isinstance(pilot.app.focused, TrialsTable), "the trials focused"
    )
    await settled(pilot)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_trials(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    """The reviewer should see:

    - the "Trials" section under the summary (scrolled into view by ``t``): a dim caption
      "11 trials, 9 completed · goal MINIMIZE rmse · ★ best · enter a trial's logs · M its
      metrics" (cut at 80 columns);
    - a 4-row scatter of the objective by trial id, 0.8871 on the top tick and 0.0132 on the
      bottom one, trial 5's green ★ among the points on the bottom row, trial 10's latest value
      a hollow ○, no point for trials 4 (failed) and 11 (nothing reported yet);
    - the table best first: ★ 5 0.0132, 9 0.0297, 10 0.0517… (running, its latest value, dim),
      7, 3, 8, 1, 6 "✓ SUCCEEDED early" at step 400, 2 0.8871, then 4 "✗ FAILED" (red) and 11
      "▶ RUNNING" with no objective; durations (running ones up to the frozen 09:30);
    - a Curve column, empty but for trial 10's two reports (▇ then ▁: the others reported only
      a final metric);
    - the row cursor on trial 5; the hyperparameters last, cut at the right edge at 80 columns;
    - the footer with "Trial logs" (enter), "Trial metrics" (M) and "Trials" (t); the summary
      above without the text list of trials (the table replaces it).
    """
    assert snap_compare(make_app(tmp_path), run_before=open_trials, terminal_size=size)
