"""TensorBoard's smoothing: exact on a raw series, close on a bucketed one, over all history."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui_app.model.metrics.metric_series import Series
from tui_app.model.metrics.metric_smoothing import smooth_points


def tensorboard(values: Sequence[float], weight: float) -> list[float]:
    """TensorBoard's scalar smoothing, as its scalar card's ``classicSmoothing`` writes it."""
    last, n = 0.0, 0
    constant = all(v == values[0] for v in values)
    out = []
    for v in values:
        if constant or not math.isfinite(v):
            out.append(v)
        else:
            last = last * weight + (1 - weight) * v
            n += 1
            out.append(last / (1 - weight**n))
    return out


def series_of(values: Sequence[float] | np.ndarray, **options: int) -> Series:
    series = Series(**options)
    steps = np.arange(len(values))
    series.extend(steps, steps * 1.0, values)
    return series


weights = st.sampled_from([0.0, 0.1, 0.5, 0.6, 0.9, 0.95, 0.99, 0.999])


@settings(max_examples=100, deadline=None)
@given(
    values=st.lists(
        st.one_of(st.floats(-1e3, 1e3), st.just(math.nan), st.just(math.inf)), max_size=200
    ),
    weight=weights,
)
def test_a_raw_series_is_smoothed_exactly_as_tensorboard_does(
    values: list[float], weight: float
) -> None:
    series = series_of(values)
    view = series.view(smoothing=weight, columns=200)
    expected = tensorboard(values, weight) if values else []
    finite = [i for i, v in enumerate(values) if math.isfinite(v)]
    assert view.xs.tolist() == [float(i) for i in finite]
    assert view.smoothed.tolist() == [expected[i] for i in finite]  # ==, not approx


def test_smooth_points_passes_nonfinite_values_through_and_continues() -> None:
    smoothed, lasts, ns = smooth_points(np.array([1.0, math.nan, 3.0, -math.inf]), 0.5)
    expected = tensorboard([1.0, math.nan, 3.0, -math.inf], 0.5)
    assert smoothed[[0, 2]].tolist() == [expected[0], expected[2]]
    assert math.isnan(smoothed[1]) and smoothed[3] == -math.inf
    assert lasts.tolist() == [0.5, 0.5, 1.75, 1.75]
    assert ns.tolist() == [1, 1, 2, 2]


@pytest.mark.parametrize("weight", [0.5, 0.9, 0.99])
def test_smoothing_in_pieces_equals_tensorboard_at_once(weight: float) -> None:
    """Past a few hundred points the debiasing divides by exactly 1 and is skipped: still ==."""
    values = np.random.default_rng(5).standard_normal(5000)
    split = 41
    first, lasts, counts = smooth_points(values[:split], weight)
    rest, _, _ = smooth_points(values[split:], weight, float(lasts[-1]), int(counts[-1]))
    expected = tensorboard(values.tolist(), weight)
    assert np.concatenate([first, rest]).tolist() == expected
    assert smooth_points(values, weight)[0].tolist() == expected


def test_a_constant_series_is_not_smoothed() -> None:
    """TensorBoard passes it through whole: dividing would show rounding noise as wiggles."""
    series = series_of([0.1] * 50)
    view = series.view(smoothing=0.95)
    assert view.smoothed.tolist() == [0.1] * 50


@pytest.mark.parametrize("weight", [0.3, 0.6, 0.9, 0.99, 0.999])
def test_a_bucketed_series_stays_close_to_the_exact_smoothing(weight: float) -> None:
    """Tolerances: 1% of the curve's range for a smooth curve; twice the noise's sigma on top.

    200k points in 2048 buckets of 64 (a default series); the exact value at each drawn point
    is TensorBoard's formula over all 200k raw values. Measured worst cases: 0.5% and 1 sigma.
    """
    steps = np.arange(200_000)
    curve = np.exp(-steps / 60_000) + 0.2 * np.sin(steps / 5000)
    sigma = 0.05
    noisy = curve + sigma * np.random.default_rng(7).standard_normal(len(steps))
    spread = float(curve.max() - curve.min())
    for values, tolerance in ((curve, 0.01 * spread), (noisy, 0.01 * spread + 2 * sigma)):
        series = series_of(values)
        assert len(series.buckets) > 1000  # really bucketed
        exact = np.array(smooth_points(values, weight)[0])
        view = series.view(smoothing=weight, columns=300)
        error = np.abs(view.smoothed - exact[view.xs.astype(np.int64)])
        assert error.max() <= tolerance


def test_smoothing_covers_history_outside_the_range() -> None:
    """A zoomed view's EMA carries everything before it, as a full view's does."""
    values = np.concatenate([np.full(500, 10.0), np.zeros(50)])
    values[0] = 11.0  # not constant
    series = series_of(values)
    zoomed = series.view(smoothing=0.9, last_steps=50)
    exact = tensorboard(values.tolist(), 0.9)
    assert zoomed.smoothed.tolist() == exact[500:]
    assert zoomed.smoothed[0] > 8  # still remembers the 10s before the range


def test_a_series_smoothed_as_it_grows_stays_exact_in_its_tail() -> None:
    """Points the smoothing saw raw keep their exact state when they move into buckets."""
    values = np.sin(np.arange(20_000) / 300.0) + np.arange(20_000) / 5000.0
    watched = Series(tail_points=512, max_buckets=64)
    for start in range(0, len(values), 100):
        chunk = np.arange(start, start + 100)
        watched.extend(chunk, chunk * 1.0, values[chunk])
        watched.view(smoothing=0.8)
    assert len(watched.buckets) > 32
    exact = tensorboard(values.tolist(), 0.8)
    view = watched.view(smoothing=0.8, last_steps=512, columns=512)
    assert view.smoothed.tolist() == exact[-512:]
    # A series smoothed only at the end used bucket means: close, but not bit for bit.
    late = series_of(values, tail_points=512, max_buckets=64).view(
        smoothing=0.8, last_steps=512, columns=512
    )
    assert late.smoothed.tolist() != exact[-512:]
    spread = float(values.max() - values.min())
    assert late.smoothed == pytest.approx(exact[-512:], abs=0.01 * spread)


def test_switching_weights_back_and_forth_gives_the_same_curves() -> None:
    values = np.cos(np.arange(30_000) / 700.0)
    series = series_of(values, tail_points=256, max_buckets=32)
    first = series.view(smoothing=0.6).smoothed.copy()
    series.view(smoothing=0.95)
    series.view(smoothing=0.3)  # the 0.6 state is dropped here (two are kept)
    assert series.view(smoothing=0.6).smoothed.tolist() == first.tolist()
    assert series.view(smoothing=0.0).smoothed.tolist() == series.view().ys.tolist()


def test_smoothing_after_a_restart_forgets_the_orphaned_points() -> None:
    series = series_of([1.0, 5.0, 2.0, 8.0, 3.0])
    series.view(smoothing=0.5)  # smoothing state exists before the restart
    series.extend([2, 3], [10.0, 11.0], [4.0, 6.0])
    view = series.view(smoothing=0.5)
    assert view.smoothed.tolist() == tensorboard([1.0, 5.0, 4.0, 6.0], 0.5)


def test_smoothing_follows_a_restart_into_the_buckets() -> None:
    values = np.arange(400, dtype=np.float64) % 17
    series = series_of(values, tail_points=16, max_buckets=8)
    series.view(smoothing=0.7)
    series.extend(np.arange(100, 130), np.arange(100, 130) * 1.0, np.full(30, 3.0))
    fresh = series_of(values, tail_points=16, max_buckets=8)
    fresh.extend(np.arange(100, 130), np.arange(100, 130) * 1.0, np.full(30, 3.0))
    # What the cache kept through the restart equals a state computed from scratch.
    assert series.view(smoothing=0.7).smoothed.tolist() == pytest.approx(
        fresh.view(smoothing=0.7).smoothed.tolist(), abs=1e-12
    )
