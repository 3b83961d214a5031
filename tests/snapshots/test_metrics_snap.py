"""The metrics view (issue 26) at 80x24 and 120x35.

Fixed jobs, fixed curves and a frozen clock (tests/support/fixed_jobs.py, fixed_scalars.py): the
pictures must not change between runs. Behaviour is in tests/pilot/test_metrics_view.py.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.snapshots.test_screens_snap import NOW
from tests.support.fixed_jobs import JOBS, TUNING_JOBS, FixedSource
from tests.support.fixed_scalars import MNIST_ID, START, TUNING_ID, FedScalars, FixedScalars
from tests.support.settle import settled, wait_until
from tui_app.config.settings import Settings
from tui_app.model.metrics.metric_series import SeriesKey
from tui_app.shell.app import JobsApp
from tui_app.shell.screens.metrics_screen import MetricsScreen
from tui_app.widgets.metric_chart import MetricChart

SIZES = [(80, 24), (120, 35)]


def make_app(tmp_path: Path, scalars: Any = None) -> JobsApp:
    return JobsApp(
        Settings(), lambda: None, "demo-project", "local",  # type: ignore[arg-type,return-value]
        settings_file=tmp_path / "settings.yaml", clock=lambda: NOW,
        source=FixedSource([*JOBS, *TUNING_JOBS]), scalars=scalars or FixedScalars(),
    )  # fmt: skip


def open_metrics(job_id: str, *keys: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    async def run_before(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, JobsApp)
        app.open_metrics(job_id)

        def drawn() -> bool:
            screen = app.screen
            return (
                isinstance(screen, MetricsScreen)
                and not screen.polling
                and bool(screen.charts())
                and all(c.builds for c in screen.charts())
            )

        await wait_until(pilot, drawn, f"the metrics of {job_id} drawn")
        if keys:
            await pilot.press(*keys)
        await settled(pilot)

    return run_before


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_metrics_of_a_keras_job(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    """The reviewer should see:

    - the title "Metrics  mnist_20261122_083000 · ▶ RUNNING" and "smooth 0.6 · x step";
    - the events source's line (2 event files, runs train and validation) and the logs' line;
    - the tag list on the left: three groups (epoch_accuracy, epoch_loss, lr), the cursor on
      the first;
    - at 120 columns three charts, two side by side and lr below; at 80 one, epoch_accuracy;
    - each chart its tag and "events" as title, round ticks (0.2 0.4 ...; 0 500 1k), the
      smoothed curves in braille (train) and quadrant blocks (validation), faint raw dots
      behind them, and a legend "⣿ train  last ... min ... max ...";
    - on epoch_loss (120 columns), two red × marks on the x axis and "1 NaN  1 inf" in the
      validation's legend line.
    """
    assert snap_compare(make_app(tmp_path), run_before=open_metrics(MNIST_ID), terminal_size=size)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_metrics_of_a_tuning_job(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    """The reviewer should see:

    - the title with "goal MINIMIZE rmse · ★ trial 5";
    - the events source's "No TensorFlow event files under gs://demo-bucket/hptune yet; looking
      again every 1 s." and "Hypertune: rmse reported by 10 trials.";
    - one chart, rmse, across the whole width beside the tag list: nine trials' curves falling
      from about 1.1, trial 5's in green quadrant blocks ending lowest, the others faint braille;
    - the legend "▚ ★ trial 5  last 0.0132 ..." first, two more trials, "+ 6 more".
    """
    assert snap_compare(make_app(tmp_path), run_before=open_metrics(TUNING_ID), terminal_size=size)


def test_metrics_options_at_80(snap_compare: Any, tmp_path: Path) -> None:
    """On epoch_loss (``]``), after ``L`` and ``x`` twice: log y (ticks 0.2 0.5 1 2), the x axis
    as time since the start (0s, 10m, 20m, 30m), the validation's NaN and inf as two red × on
    it; the title says "smooth 0.6 · x relative · log y"."""
    assert snap_compare(
        make_app(tmp_path),
        run_before=open_metrics(MNIST_ID, "right_square_bracket", "L", "x", "x"),
        terminal_size=(80, 24),
    )


def test_a_resumed_trainers_curve_at_80(snap_compare: Any, tmp_path: Path) -> None:
    """Issue 42 item 5. The reviewer should see one loss curve falling from 2.0, a jump down at
    step 500 where the trainer, lost at step 900, resumed from its checkpoint an hour later
    (the orphaned 500-900 are not drawn); a faint vertical line at 500 (the x axis' ``┴``
    under it) topped by ``↻``; the legend "⣿ train  last 0.4  ↻ resumed at step 500  min 0.4
    max 2"."""
    fed = FedScalars(next(j for j in JOBS if j["jobId"] == MNIST_ID))
    key = SeriesKey("events", "train", "loss")
    first = list(range(0, 910, 10))
    fed.add(key, first, [2.0 - s / 1000 for s in first])
    again = list(range(500, 1010, 10))
    fed.add(key, again, [1.4 - s / 1000 for s in again], [START + 3600.0 + s for s in again])
    fed.end()
    assert snap_compare(
        make_app(tmp_path, fed), run_before=open_metrics(MNIST_ID), terminal_size=(80, 24)
    )
