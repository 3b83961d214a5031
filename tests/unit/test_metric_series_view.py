"""Series.view: at most two points per column (min and max, in order), ranges, axes, marks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui_app.model.metrics.metric_series import Series
from tui_app.model.metrics.metric_view import column_extremes


def filled(values: list[float] | np.ndarray, **options: int) -> Series:
    series = Series(**options)
    steps = np.arange(len(values))
    series.extend(steps, 1000.0 + 2.0 * steps, values)
    return series


def naive_extremes(xs: np.ndarray, ys: np.ndarray, columns: int) -> list[int]:
    """Per column (over [min, max] of xs), the first min and first max, in index order."""
    low, high = xs.min(), xs.max()
    column = np.minimum(((xs - low) * (columns / (high - low))).astype(int), columns - 1)
    out: list[int] = []
    for c in range(columns):
        idx = np.flatnonzero(column == c)
        if len(idx):
            lo = idx[np.argmin(ys[idx])]
            hi = idx[np.argmax(ys[idx])]
            out.extend(sorted({int(lo), int(hi)}))
    return out


@settings(max_examples=100, deadline=None)
@given(
    ys=st.lists(st.floats(-100, 100), min_size=1, max_size=400),
    columns=st.integers(1, 50),
)
def test_column_extremes_are_each_columns_min_and_max_in_order(
    ys: list[float], columns: int
) -> None:
    xs = np.arange(len(ys), dtype=np.float64) * 1.5
    values = np.array(ys)
    picked = column_extremes(xs, values, columns)
    assert len(picked) <= max(2 * columns, 0) or len(picked) == len(ys)
    if len(ys) <= 2 * columns:
        assert picked.tolist() == list(range(len(ys)))
    else:
        assert picked.tolist() == naive_extremes(xs, values, columns)


def test_column_extremes_group_by_column_when_x_goes_back() -> None:
    xs = np.array([0.0, 10.0, 1.0, 9.0, 2.0, 8.0])
    ys = np.array([5.0, 1.0, 3.0, 2.0, 4.0, 6.0])
    # Two columns: [0, 5) holds indices 0, 2, 4; [5, 10] holds 1, 3, 5.
    assert column_extremes(xs, ys, 1).tolist() == [1, 5]
    assert column_extremes(xs, ys, 2, (0.0, 10.0)).tolist() == [0, 2, 1, 5]


def test_a_small_series_is_shown_whole() -> None:
    series = filled([3.0, 1.0, math.nan, 2.0])
    view = series.view(columns=80)
    assert view.xs.tolist() == [0.0, 1.0, 3.0]
    assert view.ys.tolist() == [3.0, 1.0, 2.0]
    assert view.smoothed is view.ys
    assert view.nonfinite_xs.tolist() == [2.0]
    assert view.x_range == (0.0, 3.0)
    assert (view.stats.count, view.stats.nan_count, view.stats.last_step) == (3, 1, 3)


def test_a_raw_series_gives_each_columns_exact_min_and_max() -> None:
    rng = np.random.default_rng(1)
    values = rng.standard_normal(3000)
    series = filled(values, tail_points=4000)
    view = series.view(columns=40)
    xs = np.arange(3000, dtype=np.float64)
    expected = naive_extremes(xs, values, 40)
    assert view.xs.tolist() == [float(i) for i in expected]
    assert view.ys.tolist() == values[expected].tolist()
    assert len(view) <= 80


@settings(max_examples=40, deadline=None)
@given(
    size=st.integers(0, 5000),
    columns=st.integers(1, 60),
    last_steps=st.one_of(st.none(), st.integers(0, 6000)),
    x_axis=st.sampled_from(["step", "wall", "relative"]),
    smoothing=st.sampled_from([0.0, 0.6]),
    log_y=st.booleans(),
)
def test_a_view_never_has_more_than_two_points_a_column(
    size: int,
    columns: int,
    last_steps: int | None,
    x_axis: str,
    smoothing: float,
    log_y: bool,
) -> None:
    """Whatever the arguments: the bound, x order, the range, and smoothed beside ys."""
    values = np.sin(np.arange(size) / 50.0) * 10
    values[::97] = np.nan
    series = filled(values, tail_points=64, max_buckets=16)
    view = series.view(
        x_axis=x_axis,  # type: ignore[arg-type]
        last_steps=last_steps,
        columns=columns,
        smoothing=smoothing,
        log_y=log_y,
    )
    assert len(view.xs) == len(view.ys) == len(view.smoothed) <= 2 * columns
    assert (np.diff(view.xs) >= 0).all()
    if len(view.xs):
        assert view.x_range is not None
        assert view.x_range[0] <= view.xs.min() and view.xs.max() <= view.x_range[1]
    if log_y:
        assert (view.ys > 0).all()
    assert np.isfinite(view.ys).all()
    if last_steps is not None and len(view.xs) and x_axis == "step":
        assert view.xs.min() > size - 1 - last_steps


def test_last_steps_is_exact_within_the_tail() -> None:
    values = np.cos(np.arange(10_000) / 7.0)
    series = filled(values, tail_points=1000, max_buckets=8)
    view = series.view(last_steps=100, columns=200)
    assert view.xs.tolist() == [float(s) for s in range(9900, 10_000)]
    assert view.ys.tolist() == values[9900:].tolist()
    assert view.x_range == (9900.0, 9999.0)


def test_last_steps_beyond_the_tail_comes_from_the_buckets() -> None:
    values = np.arange(10_000, dtype=np.float64)
    series = filled(values, tail_points=100, max_buckets=8)
    view = series.view(last_steps=5000, columns=500)
    # Within range only, the tail exact, and each bucket's min and max where they happened.
    assert view.xs.min() > 4999
    assert view.xs[-100:].tolist() == [float(s) for s in range(9900, 10_000)]
    records = series.buckets
    in_range = records[records["first_step"] > 4999]
    for record in in_range:
        assert float(record["min_step"]) in view.xs and float(record["max_step"]) in view.xs
    assert view.ys.tolist() == view.xs.tolist()  # value == step: every point is a real one


def test_wall_and_relative_axes() -> None:
    series = Series()
    series.extend([1, 2, 3], [1_700_000_000.0, 1_700_000_010.0, 1_700_000_030.0], [1.0, 2.0, 3.0])
    series.append(4, 1_700_000_040.0, math.inf)
    assert series.view(x_axis="wall").xs.tolist() == [
        1_700_000_000.0,
        1_700_000_010.0,
        1_700_000_030.0,
    ]
    relative = series.view(x_axis="relative")
    assert relative.xs.tolist() == [0.0, 10.0, 30.0]
    assert relative.nonfinite_xs.tolist() == [40.0]
    assert relative.nonfinite_values.tolist() == [math.inf]
    assert relative.x_range == (0.0, 40.0)


def test_log_y_leaves_out_and_counts_values_that_are_not_positive() -> None:
    series = filled([1.0, -2.0, 0.0, 4.0, math.nan, 8.0])
    view = series.view(log_y=True, smoothing=0.5)
    assert view.ys.tolist() == [1.0, 4.0, 8.0]
    assert view.hidden_nonpositive == 2
    assert len(view.smoothed) == 3
    assert series.view().hidden_nonpositive == 0


def test_log_y_counts_what_buckets_hide() -> None:
    values = np.where(np.arange(1000) % 10 == 0, -1.0, 1.0)
    series = filled(values, tail_points=50, max_buckets=8)
    assert series.view(log_y=True).hidden_nonpositive == 100
    assert series.view(log_y=True, last_steps=50).hidden_nonpositive == 5


def test_marks_outside_the_range_are_left_out() -> None:
    values = np.ones(100)
    values[[10, 95]] = np.nan
    series = filled(values)
    assert series.view().nonfinite_xs.tolist() == [10.0, 95.0]
    assert series.view(last_steps=20).nonfinite_xs.tolist() == [95.0]


def test_views_are_cached_until_something_changes() -> None:
    series = filled(np.arange(50.0))
    first = series.view(columns=10)
    assert series.view(columns=10) is first
    assert series.view(columns=11) is not first
    series.append(50, 2000.0, 1.0)
    again = series.view(columns=10)
    assert again is not first and again.stats.last_step == 50
    with pytest.raises(ValueError, match="read-only"):
        again.xs[0] = 5.0


def test_view_arguments_are_checked() -> None:
    series = filled([1.0])
    with pytest.raises(ValueError, match="smoothing"):
        series.view(smoothing=1.0)
    with pytest.raises(ValueError, match="columns"):
        series.view(columns=0)
    with pytest.raises(ValueError, match="x axis"):
        series.view(x_axis="epoch")  # type: ignore[arg-type]


def test_an_empty_series_has_an_empty_view() -> None:
    view = Series().view(smoothing=0.6, last_steps=10, log_y=True)
    assert (len(view), view.x_range, view.hidden_nonpositive) == (0, None, 0)
    assert view.stats.minimum is None
