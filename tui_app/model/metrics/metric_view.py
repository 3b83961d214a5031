"""What a chart draws of one metric series: a few hundred points, whatever the series' length.

A terminal plot has one cell per column, and a line through a column is decided by the lowest
and highest value in it. So a view returns, per column, the min and the max of the points in
that column, in the order they happened (a spike up then down reads differently from down then
up): never more than ``2 * columns`` points. The candidates are the raw tail's points and each
bucket's min and max, which a bucket records with their step, wall time and position, so their
order is known exactly; this also keeps a view of a million-point series to about ``2 * 2048 +
5120`` candidates and a few milliseconds.

The smoothed curve is evaluated at the same points, over the whole history (an EMA depends on
everything before), from the series' cached smoothing state (``metric_smoothing``).

Where a trainer resumed from a checkpoint (:class:`Resume`) comes along at its x on the axis in
use, so that a chart can mark it: the orphaned points are gone (the curve is one clean line), and
the mark says that the line was written by two runs of the trainer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np
import numpy.typing as npt

from tui_app.model.metrics.metric_buckets import Records
from tui_app.model.metrics.metric_smoothing import EmaCache

__all__ = [
    "Resume",
    "SeriesStats",
    "SeriesView",
    "ViewedSeries",
    "XAxis",
    "build_view",
    "column_extremes",
]

XAxis = Literal["step", "wall", "relative"]

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class SeriesStats:
    """What a legend says of a whole series (not just of the part in view)."""

    count: int
    """Finite values recorded."""
    minimum: float | None
    """Of the finite values; None while there are none."""
    maximum: float | None
    last: float | None
    """The newest value, NaN or inf included (a legend should show that a run diverged)."""
    last_step: int | None
    first_wall_time: float | None
    """Wall time of the oldest point kept: the origin of the ``relative`` x axis."""
    nan_count: int
    inf_count: int
    """Values +inf or -inf."""

    @property
    def nonfinite_count(self) -> int:
        return self.nan_count + self.inf_count


@dataclass(frozen=True, slots=True)
class Resume:
    """A trainer resumed from a checkpoint: its steps went back, and time went on.

    The points from ``step`` on that were there before are gone (TensorBoard's orphaned
    points); the points from ``step`` on now are the resumed run's. Kept so that a chart can
    say where the restart happened: without a mark, one clean curve hides that a machine was
    lost and the steps in between were trained twice.
    """

    step: int
    """The first step written again: the checkpoint's step, give or take a flush."""
    wall_time: float
    """When the resumed run wrote it (NaN for a source without wall times)."""
    from_step: int
    """The newest step before the restart: how far the lost run had got."""


class ViewedSeries(Protocol):
    """What a view reads of a series (``metric_series.Series`` is one): said here so that this
    module needs nothing of the series module, which builds and caches its views with it."""

    @property
    def buckets(self) -> Records: ...

    @property
    def stats(self) -> SeriesStats: ...

    def tail(self) -> tuple[Ints, Floats, Floats]: ...

    def smoothing_state(self, weight: float) -> EmaCache: ...

    def nonfinite_marks(self) -> tuple[Ints, Floats, Floats]: ...

    @property
    def resumes(self) -> tuple[Resume, ...]: ...


@dataclass(frozen=True, slots=True, eq=False)
class SeriesView:
    """What a chart draws of one series. Every array is read-only (views are cached)."""

    x_axis: XAxis
    xs: Floats
    """Per plot column at most two points, that column's min and max, in the order they
    happened; columns in x order. Step, wall time (seconds since the epoch) or seconds since
    the series' first point."""
    ys: Floats
    smoothed: Floats
    """TensorBoard's smoothing at the same xs (the same array as ``ys`` when smoothing is 0).
    With ``log_y``, NaN where the smoothed value is <= 0 (a gap)."""
    nonfinite_xs: Floats
    """Where a NaN or inf was recorded within the range (the series' newest ``max_marks``)."""
    nonfinite_values: Floats
    """The value at each of those: NaN, +inf or -inf (a chart may mark them differently)."""
    resumes: tuple[Resume, ...]
    """The series' resumes whose x lies within ``x_range`` (and after the zoom's start),
    oldest first."""
    resume_xs: Floats
    """Where each of ``resumes`` is on the x axis in use (its step, or its wall time)."""
    hidden_nonpositive: int
    """With ``log_y``: finite values <= 0 in the range, left out. A bucket straddling the
    range's start counts all of its values."""
    x_range: tuple[float, float] | None
    """The x extent of the data in range, which the columns divide evenly; None if empty."""
    stats: SeriesStats
    """The whole series' stats, for the legend."""

    def __len__(self) -> int:
        return len(self.xs)


def build_view(
    series: ViewedSeries,
    x_axis: XAxis,
    last_steps: int | None,
    columns: int,
    smoothing: float,
    log_y: bool,
) -> SeriesView:
    """The view :meth:`Series.view` returns (arguments checked and result cached there)."""
    records = series.buckets
    tail_steps, tail_walls, tail_values = series.tail()
    stats = series.stats
    after: int | None = None  # points with step > after are in range
    first_bucket, first_raw = 0, 0
    if last_steps is not None and stats.last_step is not None:
        after = stats.last_step - last_steps
        first_bucket = int(np.searchsorted(records["last_step"], after, side="right"))
        first_raw = int(np.searchsorted(tail_steps, after, side="right"))
    in_view = records[first_bucket:]
    origin = stats.first_wall_time or 0.0

    def x_of(steps: Ints, walls: Floats) -> Floats:
        if x_axis == "step":
            return steps.astype(np.float64)
        if x_axis == "wall":
            return walls.astype(np.float64, copy=True)
        return walls - origin

    # Candidates: each bucket's extremes (the earlier one first), then the raw points.
    b_steps, b_walls, b_values, b_positions, b_keep = _bucket_extremes(in_view)
    r_values = tail_values[first_raw:]
    r_finite = np.isfinite(r_values)
    steps = np.concatenate([b_steps.ravel(), tail_steps[first_raw:]])
    walls = np.concatenate([b_walls.ravel(), tail_walls[first_raw:]])
    values = np.concatenate([b_values.ravel(), r_values])
    keep = np.concatenate([b_keep.ravel(), r_finite])
    if after is not None:
        keep &= steps > after

    smoothed: Floats | None = None
    # TensorBoard passes a constant series through unsmoothed (see metric_smoothing).
    constant = stats.count > 0 and stats.minimum == stats.maximum and not stats.nonfinite_count
    if smoothing > 0 and not constant:
        state = series.smoothing_state(smoothing)
        inside = state.within_buckets(records, first_bucket, b_positions, b_values)
        smoothed = np.concatenate([inside.ravel(), state.tail_smoothed[first_raw:]])

    hidden = 0
    if log_y:
        hidden = int(in_view["nonpositive"].sum())
        hidden += int(np.count_nonzero(r_finite & (r_values <= 0)))
        keep &= values > 0

    mark_steps, mark_walls, mark_values = series.nonfinite_marks()
    if after is not None:
        marked = mark_steps > after
        mark_steps, mark_walls, mark_values = (
            mark_steps[marked],
            mark_walls[marked],
            mark_values[marked],
        )
    mark_xs = x_of(mark_steps, mark_walls)
    mark_values = mark_values.copy()
    resumes = tuple(r for r in series.resumes if after is None or r.step > after)

    xs_all = x_of(steps[keep], walls[keep])
    ys_all = values[keep]
    # The range also spans the buckets' first and last points, which are not drawn (only their
    # extremes are), so that the x axis covers every point in range.
    opens = in_view["first_step"] > (after if after is not None else np.iinfo(np.int64).min)
    extent = np.concatenate(
        [
            xs_all,
            mark_xs,
            x_of(in_view["first_step"][opens], in_view["first_wall"][opens]),
            x_of(in_view["last_step"], in_view["last_wall"]),
        ]
    )
    x_range = (float(extent.min()), float(extent.max())) if len(extent) else None
    resumes, resume_xs = _resumes_in(resumes, x_of, x_range)
    picked = column_extremes(xs_all, ys_all, columns, x_range)
    xs, ys = xs_all[picked], ys_all[picked]
    if smoothed is None:
        smooth = ys
    else:
        smooth = smoothed[keep][picked]
        if log_y:
            smooth = np.where(smooth > 0, smooth, np.nan)
    for array in (xs, ys, smooth, mark_xs, mark_values, resume_xs):
        array.flags.writeable = False
    return SeriesView(
        x_axis=x_axis,
        xs=xs,
        ys=ys,
        smoothed=smooth,
        nonfinite_xs=mark_xs,
        nonfinite_values=mark_values,
        resumes=resumes,
        resume_xs=resume_xs,
        hidden_nonpositive=hidden,
        x_range=x_range,
        stats=stats,
    )


def _resumes_in(
    resumes: tuple[Resume, ...],
    x_of: Callable[[Ints, Floats], Floats],
    x_range: tuple[float, float] | None,
) -> tuple[tuple[Resume, ...], Floats]:
    """``resumes`` whose x lies within ``x_range``, and their xs.

    A resume is at a point kept, so it is inside the data's extent on the step axis; on a time
    axis a source without wall times (hypertune: NaN) has no place, and a clock that stepped
    back may put one outside: those are left out rather than drawn at an edge."""
    steps = np.array([r.step for r in resumes], np.int64)
    walls = np.array([r.wall_time for r in resumes], np.float64)
    xs = x_of(steps, walls)
    if x_range is None:
        inside = np.zeros(len(xs), np.bool_)
    else:
        inside = (xs >= x_range[0]) & (xs <= x_range[1])  # NaN: False
    kept: Floats = xs[inside]
    return tuple(r for r, ok in zip(resumes, inside.tolist(), strict=True) if ok), kept


def _bucket_extremes(records: Records) -> tuple[Ints, Floats, Floats, Ints, Bools]:
    """Each bucket's min and max as two candidate points, the earlier first: shape (buckets, 2).

    Returns steps, walls, values, positions in the bucket, and ``keep``: the second of a pair
    is dropped when both are the same point, and both when the bucket has no finite value.
    """
    min_first = (records["min_pos"] <= records["max_pos"])[:, None]

    def pair(low: str, high: str, dtype: type[np.generic]) -> npt.NDArray[np.generic]:
        both = np.stack([records[low], records[high]], axis=1).astype(dtype)
        return np.where(min_first, both, both[:, ::-1])

    steps = pair("min_step", "max_step", np.int64)
    walls = pair("min_wall", "max_wall", np.float64)
    values = pair("min", "max", np.float64)
    positions = pair("min_pos", "max_pos", np.int64)
    has = records["count"] > 0
    keep = np.stack([has, has & (records["min_pos"] != records["max_pos"])], axis=1)
    return steps, walls, values, positions, keep  # type: ignore[return-value]


def column_extremes(
    xs: Floats, ys: Floats, columns: int, x_range: tuple[float, float] | None = None
) -> Ints:
    """Indices of the points a chart ``columns`` wide needs: per column its min and max.

    The columns divide ``x_range`` (default: ``[min(xs), max(xs)]``, which it must hold)
    evenly. Within a column the two come back in their original order (one index when they are
    the same point); columns in x order. With no more than ``2 * columns`` points, all of them.
    """
    n = len(xs)
    if n <= 2 * columns:
        return np.arange(n)
    low, high = x_range if x_range is not None else (float(xs.min()), float(xs.max()))
    if high > low:
        column = ((xs - low) * (columns / (high - low))).astype(np.int64)
        np.clip(column, 0, columns - 1, out=column)
    else:
        column = np.zeros(n, np.int64)
    order: Ints | None = None
    if np.any(column[1:] < column[:-1]):
        # x not increasing (a wall clock that stepped back): group by column, stably.
        order = np.argsort(column, kind="stable")
        column, ys = column[order], ys[order]
    starts = np.flatnonzero(np.concatenate([[True], column[1:] != column[:-1]]))
    group = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, n)))
    lows = _first_in_group(ys == np.minimum.reduceat(ys, starts)[group], group)
    highs = _first_in_group(ys == np.maximum.reduceat(ys, starts)[group], group)
    first, second = np.minimum(lows, highs), np.maximum(lows, highs)
    pairs = np.stack([first, second], axis=1).ravel()
    distinct = np.ones(len(pairs), np.bool_)
    distinct[1::2] = second != first
    picked: Ints = pairs[distinct]
    return order[picked] if order is not None else picked


def _first_in_group(hit: Bools, group: Ints) -> Ints:
    """The first index where ``hit`` is true in each group (every group has one)."""
    at = np.flatnonzero(hit)
    groups = group[at]
    first: Ints = at[np.concatenate([[True], groups[1:] != groups[:-1]])]
    return first
