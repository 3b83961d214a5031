"""Series.resumes (issue 42 item 5): where a restarted trainer went back to its checkpoint, kept
beside the one clean curve, and carried into each view at its x on the axis in use."""

from __future__ import annotations

import math

import numpy as np

from tui_app.model.metrics.metric_buckets import Records
from tui_app.model.metrics.metric_series import MetricSet, Resume, Series, SeriesKey
from tui_app.model.metrics.metric_smoothing import EmaCache
from tui_app.model.metrics.metric_view import SeriesStats, XAxis, build_view
from tui_app.widgets.metric_chart import resume_figure

T0 = 1_700_000_000.0
LOST_FOR = 3600.0
"""How long after the lost run's last point the resumed run writes again."""


def run(series: Series, steps: range, wall_from: float = T0) -> None:
    """A trainer writing ``steps``, one a second from ``wall_from``: value = step."""
    s = np.array(steps, np.int64)
    series.extend(s, wall_from + (s - s[0]), s.astype(np.float64))


def resumed(series: Series, steps: range) -> None:
    """The trainer restarted: ``steps`` written again, after the newest point in time."""
    last_wall = float(series.view(x_axis="wall").x_range[1])  # type: ignore[index]
    run(series, steps, last_wall + LOST_FOR)


# ---------------------------------------------------------------------------------------------
# What a series records


def test_a_step_that_goes_back_later_is_a_resume_with_its_step_and_wall_time() -> None:
    series = Series()
    run(series, range(0, 901))  # lost at step 900, wall T0 + 900
    series.extend([500, 501], [T0 + 5000.0, T0 + 5001.0], [1.0, 2.0])
    assert series.resumes == (Resume(step=500, wall_time=T0 + 5000.0, from_step=900),)
    assert not series.resumes_dropped
    # The curve is still one: the orphaned 500..900 are gone.
    assert series.tail()[0].tolist() == [*range(500), 500, 501]


def test_a_restart_inside_one_batch_is_a_resume() -> None:
    series = Series()
    series.extend([1, 2, 3, 2, 3], [1.0, 2.0, 3.0, 9.0, 10.0], [1.0, 1.0, 1.0, 2.0, 2.0])
    assert series.resumes == (Resume(2, 9.0, 3),)


def test_the_newest_step_again_is_not_a_resume() -> None:
    """Printed metrics re-print an epoch's final values: the same step, a later time."""
    series = Series()
    series.extend([1, 2], [1.0, 2.0], [5.0, 9.0])
    series.append(2, 30.0, 7.0)
    series.extend([3, 3, 3], [40.0, 41.0, 42.0], [1.0, 2.0, 3.0])
    assert series.resumes == ()


def test_points_read_again_are_not_a_resume() -> None:
    """A log feed opened anew, or an event file replaced and read from its start, gives the
    same points with their old wall times: steps go back, time does not."""
    series = Series()
    run(series, range(0, 101))
    run(series, range(0, 101))
    assert series.resumes == ()
    no_walls = Series()  # hypertune reports: no wall time to tell a restart by
    no_walls.extend([1, 2, 3], [math.nan] * 3, [1.0, 2.0, 3.0])
    no_walls.extend([2], [math.nan], [5.0])
    assert no_walls.resumes == ()


def test_points_read_again_keep_the_resume_they_contain() -> None:
    """A feed read again from its start gives the lost run, then the resumed one: the resume
    is dropped with the orphaned points, then recorded again from the points themselves."""
    series = Series()
    run(series, range(0, 91))
    resumed(series, range(50, 121))
    before = series.resumes
    steps, walls, values = (np.array(a) for a in zip(*everything(series), strict=True))
    lost = np.arange(0, 91)
    series.extend(
        np.concatenate([lost, steps[steps >= 50]]),
        np.concatenate([T0 + lost, walls[steps >= 50]]),
        np.concatenate([lost.astype(np.float64), values[steps >= 50]]),
    )
    assert series.resumes == before


def everything(series: Series) -> list[tuple[int, float, float]]:
    steps, walls, values = series.tail()
    assert not len(series.buckets)
    return list(zip(steps.tolist(), walls.tolist(), values.tolist(), strict=True))


def test_a_restart_to_before_a_resume_forgets_it_and_one_to_its_step_replaces_it() -> None:
    series = Series()
    run(series, range(0, 101))
    resumed(series, range(60, 151))
    resumed(series, range(80, 201))
    assert [(r.step, r.from_step) for r in series.resumes] == [(60, 100), (80, 150)]
    # Lost again, back to step 70: the run that resumed at 80 is orphaned, its mark with it.
    resumed(series, range(70, 181))
    assert [(r.step, r.from_step) for r in series.resumes] == [(60, 100), (70, 200)]
    # And again from the same checkpoint: one mark at 70, the newest restart's.
    resumed(series, range(70, 91))
    assert [(r.step, r.from_step) for r in series.resumes] == [(60, 100), (70, 180)]
    assert series.resumes[-1].wall_time == series.tail()[1][series.tail()[0] == 70][0]
    # The newest step printed again after a resume at that step keeps the resume.
    resumed(series, range(85, 86))  # at 90, back to 85: one point so far
    series.append(85, series.resumes[-1].wall_time + 5.0, 1.0)
    assert [r.step for r in series.resumes] == [60, 70, 85]


def test_only_the_newest_resumes_are_kept() -> None:
    series = Series(max_resumes=3)
    run(series, range(0, 11))
    for back_to in range(5, 10):
        resumed(series, range(back_to, back_to + 10 + 6 * (back_to - 4)))
    assert ([r.step for r in series.resumes], series.resumes_dropped) == ([7, 8, 9], True)
    # A restart to before everything leaves nothing an older resume could mark.
    resumed(series, range(0, 5))
    assert ([r.step for r in series.resumes], series.resumes_dropped) == ([0], False)
    assert Series(max_resumes=0).resumes == ()
    none_kept = Series(max_resumes=0)
    run(none_kept, range(0, 11))
    resumed(none_kept, range(5, 8))
    assert none_kept.resumes == () and none_kept.resumes_dropped


def test_a_resume_survives_its_points_being_folded_into_buckets() -> None:
    series = Series(tail_points=8, max_buckets=4)
    run(series, range(0, 101))
    resumed(series, range(50, 120))
    (resume,) = series.resumes
    run(series, range(120, 2000), resume.wall_time + 70)
    assert len(series.buckets) and int(series.tail()[0][0]) > 50  # step 50 is in a bucket now
    assert series.resumes == (resume,)
    assert series.view().resume_xs.tolist() == [50.0]
    # A restart into the buckets past the resume keeps it.
    resumed(series, range(1000, 1010))
    assert [r.step for r in series.resumes] == [50, 1000]


def test_a_metric_set_passes_the_bound_on() -> None:
    metrics = MetricSet(max_resumes=1)
    key = SeriesKey("events", "train", "loss")
    for steps, wall in (([1, 2, 3], 0.0), ([2, 3], 10.0), ([1], 20.0)):
        metrics.add_points(key, steps, [wall + s for s in steps], [1.0] * len(steps))
    assert [r.step for r in metrics.series(key).resumes] == [1]


# ---------------------------------------------------------------------------------------------
# What a view carries


def restarted() -> Series:
    """Steps 0..900 from T0, lost; resumed at 500 an hour later, on to 1000."""
    series = Series()
    run(series, range(0, 901))
    resumed(series, range(500, 1001))
    return series


def test_a_view_has_each_resume_at_its_x_on_every_axis() -> None:
    series = restarted()
    (resume,) = series.resumes
    step = series.view(x_axis="step")
    assert step.resumes == (resume,) and step.resume_xs.tolist() == [500.0]
    assert series.view(x_axis="wall").resume_xs.tolist() == [resume.wall_time]
    relative = series.view(x_axis="relative")
    assert relative.resume_xs.tolist() == [resume.wall_time - T0]
    assert relative.x_range is not None and relative.x_range[0] <= resume.wall_time - T0
    # Read-only, as every array of a cached view.
    assert not step.resume_xs.flags.writeable


def test_a_zoom_past_the_resume_leaves_it_out() -> None:
    series = restarted()
    assert series.view(last_steps=600).resume_xs.tolist() == [500.0]
    zoomed = series.view(last_steps=400)  # steps after 600
    assert zoomed.resumes == () and zoomed.resume_xs.tolist() == []


def test_a_series_that_never_resumed_has_none_in_its_views() -> None:
    series = Series()
    run(series, range(0, 100))
    for axis in ("step", "wall", "relative"):
        view = series.view(x_axis=axis)
        assert view.resumes == () and view.resume_xs.tolist() == []
    assert Series().view().resumes == ()


class WithResumes:
    """A series with resumes a test chooses, as ``build_view`` reads one."""

    def __init__(self, series: Series, resumes: tuple[Resume, ...]) -> None:
        self._series = series
        self.resumes = resumes

    @property
    def buckets(self) -> Records:
        return self._series.buckets

    @property
    def stats(self) -> SeriesStats:
        return self._series.stats

    def tail(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self._series.tail()

    def smoothing_state(self, weight: float) -> EmaCache:
        return self._series.smoothing_state(weight)

    def nonfinite_marks(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self._series.nonfinite_marks()


def test_only_resumes_inside_the_x_range_come_along() -> None:
    """A resume whose x is outside the data's extent (a clock that stepped back) or has none
    (no wall time) is left out of that axis' view rather than drawn at its edge."""
    series = Series()
    run(series, range(10, 101))
    inside = Resume(50, T0 + 40, 90)
    clock_back = Resume(60, T0 - 500, 95)
    no_wall = Resume(70, math.nan, 99)
    viewed = WithResumes(series, (inside, clock_back, no_wall))

    def view(axis: XAxis) -> tuple[tuple[int, ...], list[float]]:
        v = build_view(viewed, axis, None, 120, 0.0, False)
        return tuple(r.step for r in v.resumes), v.resume_xs.tolist()

    assert view("step") == ((50, 60, 70), [50.0, 60.0, 70.0])
    assert view("wall") == ((50,), [T0 + 40])
    assert view("relative") == ((50,), [40.0])
    beyond = WithResumes(series, (Resume(5, T0 + 1, 9), Resume(200, T0 + 2, 190)))
    assert build_view(beyond, "step", None, 120, 0.0, False).resumes == ()


# ---------------------------------------------------------------------------------------------
# What a legend says


def test_the_legend_names_the_newest_resume_and_counts_them() -> None:
    series = Series(max_resumes=2)
    run(series, range(0, 2001))
    resumed(series, range(1500, 1601))
    assert resume_figure(series) == "↻ resumed at step 1.5k"
    resumed(series, range(1550, 1601))
    assert resume_figure(series) == "↻ resumed 2×, last at step 1.55k"
    resumed(series, range(1560, 1601))
    assert resume_figure(series) == "↻ resumed 2+×, last at step 1.56k"
