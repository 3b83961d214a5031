"""Series: bounded storage (buckets + raw tail), stats, non-finite values, restarts, repeats."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui_app.model.metrics.metric_buckets import BucketHistory
from tui_app.model.metrics.metric_series import (
    MAX_BUCKETS,
    TAIL_POINTS,
    MetricSet,
    Series,
    SeriesKey,
    drawn_keys,
    run_labels,
)

Point = tuple[int, float, float]


def add(series: Series, points: Sequence[Point]) -> None:
    steps, walls, values = zip(*points, strict=True) if points else ((), (), ())
    series.extend(steps, walls, values)


def check_against(series: Series, points: Sequence[Point]) -> None:
    """Every stat, and every bucket's record, equals what the raw points say."""
    values = np.array([v for _, _, v in points], np.float64)
    finite = values[np.isfinite(values)]
    assert series.points == len(points)
    assert series.count == len(finite)
    assert series.minimum == (finite.min() if len(finite) else None)
    assert series.maximum == (finite.max() if len(finite) else None)
    assert series.nan_count == int(np.isnan(values).sum())
    assert series.inf_count == int(np.isinf(values).sum())
    if points:
        last = series.last
        assert last is not None
        assert last == points[-1][2] or (math.isnan(last) and math.isnan(points[-1][2]))
        assert series.last_step == points[-1][0]
        assert series.first_wall_time == points[0][1]
    else:
        assert (series.last, series.last_step, series.first_wall_time) == (None, None, None)
    # The buckets and the tail hold the points in order, each bucket summarising its own.
    records = series.buckets
    start = 0
    for record in records:
        chunk = points[start : start + int(record["points"])]
        start += len(chunk)
        vals = np.array([v for _, _, v in chunk])
        ok = np.isfinite(vals)
        assert (record["first_step"], record["last_step"]) == (chunk[0][0], chunk[-1][0])
        assert (record["first_wall"], record["last_wall"]) == (chunk[0][1], chunk[-1][1])
        assert record["count"] == ok.sum()
        assert record["nan"] == np.isnan(vals).sum()
        assert record["inf"] == np.isinf(vals).sum()
        assert record["nonpositive"] == (ok & (vals <= 0)).sum()
        assert record["sum"] == pytest.approx(vals[ok].sum())
        if ok.any():
            low = int(np.argmin(np.where(ok, vals, np.inf)))
            high = int(np.argmax(np.where(ok, vals, -np.inf)))
            assert (record["min"], record["min_pos"]) == (vals[low], low)
            assert (record["min_step"], record["min_wall"]) == chunk[low][:2]
            assert (record["max"], record["max_pos"]) == (vals[high], high)
            assert (record["max_step"], record["max_wall"]) == chunk[high][:2]
    steps, walls, tail_values = series.tail()
    rest = points[start:]
    assert steps.tolist() == [p[0] for p in rest]
    assert walls.tolist() == [p[1] for p in rest]
    np.testing.assert_array_equal(tail_values, [p[2] for p in rest])


def shape_ok(series: Series, max_buckets: int, tail_points: int) -> None:
    records = series.buckets
    assert len(records) <= max_buckets
    assert series.tail_count <= tail_points + max(1, tail_points // 4)
    assert series.tail_count >= min(tail_points, series.points)
    if len(records) > 1:
        # Every bucket but the last holds the same number of points, a power of two.
        span = int(records["points"][0])
        assert set(records["points"][:-1].tolist()) == {span}
        assert span & (span - 1) == 0
        assert 1 <= records["points"][-1] <= span


values_st = st.one_of(
    st.floats(-1e6, 1e6, allow_nan=False),
    st.sampled_from([math.nan, math.inf, -math.inf, 0.0]),
)


@settings(max_examples=150, deadline=None)
@given(
    values=st.lists(values_st, max_size=300),
    cuts=st.lists(st.integers(0, 300), max_size=12),
    tail_points=st.integers(1, 12),
    max_buckets=st.sampled_from([2, 4, 8]),
)
def test_buckets_and_tail_hold_exactly_what_the_points_say(
    values: list[float], cuts: list[int], tail_points: int, max_buckets: int
) -> None:
    """Any batching of increasing steps: stats and every bucket record are exact."""
    points = [(3 * i + 1, 1000.0 + i, v) for i, v in enumerate(values)]
    series = Series(tail_points=tail_points, max_buckets=max_buckets)
    bounds = sorted({0, len(points), *(c for c in cuts if c <= len(points))})
    for lo, hi in itertools.pairwise(bounds):
        add(series, points[lo:hi])
        check_against(series, points[:hi])
        shape_ok(series, max_buckets, tail_points)


@settings(max_examples=50, deadline=None)
@given(values=st.lists(values_st, min_size=1, max_size=200), tail_points=st.integers(1, 10))
def test_append_one_by_one_records_what_extend_does(values: list[float], tail_points: int) -> None:
    one = Series(tail_points=tail_points, max_buckets=4)
    batch = Series(tail_points=tail_points, max_buckets=4)
    points = [(i, float(i), v) for i, v in enumerate(values)]
    for point in points:
        one.append(*point)
    add(batch, points)
    # Where the tail ends may differ (appends fold later), never what is recorded.
    assert repr(one.stats) == repr(batch.stats)  # repr: NaN == NaN
    check_against(one, points)
    check_against(batch, points)


def test_a_million_points_keep_memory_bounded() -> None:
    """Memory is bounded by the buckets and the tail, not by the points (24 MB raw here)."""
    series = Series()
    batch = 10_000
    held = []
    for start in range(0, 1_000_000, batch):
        steps = np.arange(start, start + batch)
        series.extend(steps, steps * 0.5, np.sin(steps / 1000.0))
        if start % 50_000 == 0:
            series.view(smoothing=0.6)  # the smoothing state is part of what is held
            series.view(smoothing=0.9)
        held.append(series.nbytes)
    assert series.points == series.count == 1_000_000
    assert len(series.buckets) <= MAX_BUCKETS
    assert series.tail_count == TAIL_POINTS
    assert max(held) < 1_000_000
    # It stopped growing long before the end: the last 800k points added nothing held.
    assert max(held[20:]) <= max(held[:20]) * 1.1


def test_bucket_history_merges_pairwise_and_doubles_the_span() -> None:
    history = BucketHistory(4)
    steps = np.arange(20)
    values = steps.astype(np.float64)

    def fold(lo: int, hi: int) -> None:
        history.fold(steps[lo:hi], values[lo:hi], values[lo:hi])

    fold(0, 4)
    assert (len(history), history.span) == (4, 1)
    fold(4, 5)
    assert (len(history), history.span) == (3, 2)
    assert history.records["points"].tolist() == [2, 2, 1]
    fold(5, 20)
    assert history.records["points"].tolist() == [8, 8, 4]
    assert history.records["min"].tolist() == [0, 8, 16]
    assert history.records["max"].tolist() == [7, 15, 19]
    assert history.ends().tolist() == [7, 15, 19]
    with pytest.raises(ValueError, match="even"):
        BucketHistory(3)


# ---------------------------------------------------------------------------------------------
# Non-finite values


def test_nonfinite_values_are_counted_and_marked_but_never_in_the_stats() -> None:
    series = Series()
    add(series, [(1, 10.0, 1.0), (2, 11.0, math.nan), (3, 12.0, math.inf), (4, 13.0, -math.inf)])
    add(series, [(5, 14.0, -2.0), (6, 15.0, math.nan)])
    assert (series.count, series.minimum, series.maximum) == (2, -2.0, 1.0)
    assert (series.nan_count, series.inf_count, series.stats.nonfinite_count) == (2, 2, 4)
    last = series.last
    assert last is not None and math.isnan(last)
    steps, walls, values = series.nonfinite_marks()
    assert steps.tolist() == [2, 3, 4, 6]
    assert walls.tolist() == [11.0, 12.0, 13.0, 15.0]
    assert [str(v) for v in values] == ["nan", "inf", "-inf", "nan"]


def test_only_the_newest_marks_are_kept() -> None:
    series = Series(max_marks=3)
    for step in range(10):
        series.append(step, float(step), math.nan if step % 2 else 1.0)
    assert series.nonfinite_marks()[0].tolist() == [5, 7, 9]
    assert series.nan_count == 5  # the count is not bounded, only the marks


def test_a_series_of_only_nan_has_no_minimum() -> None:
    series = Series(tail_points=2, max_buckets=2)
    for step in range(10):
        series.append(step, 0.0, math.nan)
    assert (series.count, series.minimum, series.maximum, series.nan_count) == (0, None, None, 10)
    assert len(series.view()) == 0


# ---------------------------------------------------------------------------------------------
# Restarts and repeated steps


def test_a_step_that_goes_back_forgets_the_orphaned_points() -> None:
    series = Series()
    add(series, [(s, float(s), float(s)) for s in range(0, 1000, 100)])  # 0..900
    series.append(500, 2000.0, -1.0)
    kept = [(s, float(s), float(s)) for s in range(0, 500, 100)]
    check_against(series, [*kept, (500, 2000.0, -1.0)])
    assert (series.maximum, series.last_step) == (400.0, 500)


def test_a_restart_inside_a_batch_is_a_restart() -> None:
    series = Series()
    add(series, [(1, 1.0, 1.0), (2, 2.0, 9.0), (3, 3.0, 3.0), (2, 4.0, 2.0), (3, 5.0, 4.0)])
    check_against(series, [(1, 1.0, 1.0), (2, 4.0, 2.0), (3, 5.0, 4.0)])


def test_the_newest_step_again_replaces_its_value() -> None:
    series = Series()
    add(series, [(1, 1.0, 5.0), (2, 2.0, 9.0)])
    series.append(2, 3.0, 7.0)  # an epoch's final value, printed again
    check_against(series, [(1, 1.0, 5.0), (2, 3.0, 7.0)])
    assert series.maximum == 7.0  # 9.0 is gone with the value it replaced
    add(series, [(3, 4.0, 1.0), (3, 5.0, 2.0), (3, 6.0, 3.0)])  # repeats within one batch
    check_against(series, [(1, 1.0, 5.0), (2, 3.0, 7.0), (3, 6.0, 3.0)])


def test_a_replaced_nan_is_no_longer_counted_or_marked() -> None:
    series = Series()
    add(series, [(1, 1.0, 1.0), (2, 2.0, math.nan)])
    series.append(2, 3.0, 2.0)
    assert (series.nan_count, series.count) == (0, 2)
    assert series.nonfinite_marks()[0].tolist() == []


def test_a_restart_into_the_buckets_keeps_a_straddling_bucket_whole() -> None:
    series = Series(tail_points=4, max_buckets=4)
    points = [(s, float(s), float(s)) for s in range(100)]
    add(series, points)
    records = series.buckets
    straddler = next(r for r in records if r["first_step"] < 40 <= r["last_step"])
    first, kept_points = int(straddler["first_step"]), int(straddler["points"])
    series.append(40, 500.0, -5.0)
    records = series.buckets
    # Buckets from step 40 on are gone; the one holding step 40 stays whole, clamped below 40.
    assert records["first_step"][-1] == first
    assert records["last_step"][-1] == 39
    assert (records["min_step"] <= 39).all() and (records["max_step"] <= 39).all()
    assert series.tail()[0].tolist() == [40]
    assert series.points == first + kept_points + 1
    assert series.count == series.points
    # The approximation: the straddler's orphaned values still count in the stats.
    assert series.maximum == first + kept_points - 1
    assert (series.minimum, series.last, series.last_step) == (-5.0, -5.0, 40)
    # Steps keep increasing from the history into the new points.
    series.append(41, 501.0, 1.0)
    assert series.buckets["last_step"][-1] < series.tail()[0][0]


def test_a_restart_before_everything_starts_over() -> None:
    series = Series(tail_points=4, max_buckets=4)
    add(series, [(s, 100.0 + s, float(s)) for s in range(10, 60)])
    series.append(3, 7.0, 1.5)
    check_against(series, [(3, 7.0, 1.5)])
    assert series.buckets.size == 0


def test_extend_checks_lengths_and_ignores_nothing() -> None:
    series = Series()
    with pytest.raises(ValueError, match="differ in length"):
        series.extend([1, 2], [1.0], [1.0, 2.0])
    series.extend([], [], [])
    assert series.version == 0 and series.points == 0
    series.extend(np.array([1, 2]), np.array([1.0, 2.0]), np.array([3, 4]))
    assert series.version == 1 and series.maximum == 4.0


# ---------------------------------------------------------------------------------------------
# MetricSet and SeriesKey


def test_metric_set_versions_say_what_changed() -> None:
    metrics = MetricSet()
    loss = SeriesKey("events", "train", "epoch_loss")
    val = SeriesKey("events", "validation", "epoch_loss")
    assert metrics.version(loss) == 0
    assert metrics.add_points(loss, [1, 2], [1.0, 2.0], [0.5, 0.4]) == 1
    metrics.add_points(val, [1], [1.5], [0.6])
    seen = {key: metrics.version(key) for key in metrics}
    assert metrics.changed_since(seen) == []
    metrics.add_points(loss, [3], [3.0], [0.3])
    assert metrics.changed_since(seen) == [loss]
    assert metrics.changed_since({}) == [loss, val]
    assert metrics.series(loss).count == 3
    assert loss in metrics and len(metrics) == 2
    with pytest.raises(KeyError):
        metrics.series(SeriesKey("logs", "master-replica-0", "loss"))


def test_metric_set_tags_are_distinct_and_natural() -> None:
    metrics = MetricSet()
    for run, tag in [("train", "step10"), ("train", "step2"), ("validation", "step2"), ("", "a")]:
        metrics.add_points(SeriesKey("events", run, tag), [1], [1.0], [1.0])
    metrics.add_points(SeriesKey("hypertune", "", "step2", trial="10"), [1], [1.0], [1.0])
    metrics.add_points(SeriesKey("hypertune", "", "step2", trial="2"), [1], [1.0], [1.0])
    assert metrics.tags() == ["a", "step2", "step10"]
    assert metrics.keys_for("step2") == [
        SeriesKey("events", "train", "step2"),
        SeriesKey("events", "validation", "step2"),
        SeriesKey("hypertune", "", "step2", trial="2"),
        SeriesKey("hypertune", "", "step2", trial="10"),
    ]


def test_series_key_names_a_known_source() -> None:
    assert SeriesKey("logs", "master-replica-0", "loss").trial == ""
    with pytest.raises(ValueError, match="source"):
        SeriesKey("tensorboard", "train", "loss")  # type: ignore[arg-type]


def test_printed_metrics_are_drawn_only_without_event_files() -> None:
    logs = SeriesKey("logs", "master-replica-0", "loss")
    events = SeriesKey("events", "train", "loss")
    tuned = SeriesKey("hypertune", "", "training/hptuning/metric", "1")
    assert drawn_keys([logs, tuned]) == [logs, tuned]
    assert drawn_keys([logs, events, tuned]) == [events, tuned]


def test_run_labels_drop_the_folders_every_run_shares() -> None:
    keras = ["keras_tensorboard/train", "keras_tensorboard/validation"]
    assert run_labels(keras) == {keras[0]: "train", keras[1]: "validation"}
    assert run_labels(["train"]) == {"train": "train"}
    assert run_labels([".", "eval"]) == {".": ".", "eval": "eval"}
    nested = ["a/b/train", "a/c/train"]
    assert run_labels(nested) == {"a/b/train": "b/train", "a/c/train": "c/train"}
