"""A metric series' old points, summarised in a fixed number of buckets that cover all of them.

A training job can log a scalar every step for days: a million points per tag, twenty tags. A
chart never draws more than two points per terminal column, so keeping every point would spend
memory on detail nobody sees. Instead the points that leave a series' raw tail
(``metric_series``) are folded, in order, into at most ``max_buckets`` buckets. Every bucket but
the last holds exactly ``span`` points; when all are in use, neighbours merge pairwise and
``span`` doubles, so the buckets keep covering the whole history at an even resolution (a million
points in 2048 buckets is 512 points a bucket: four buckets per column of a 120-column chart).

A bucket keeps what a chart and a legend ask of its points (one record of :data:`BUCKET_DTYPE`):
first and last step and wall time; the smallest and largest finite value with their step, wall
time and position in the bucket (so a chart draws each extreme where it happened, in the order it
happened); sum and count of the finite values (their mean, for smoothing); how many values were
NaN, +-inf or <= 0 (a log axis hides those); and the last value. Merging two buckets is exact for
all of these, so a bucket's record does not depend on when its merges happened.

The one approximation is :meth:`BucketHistory.truncate` (a trainer restarted from a checkpoint):
a bucket that straddles the restart step is kept whole, see there.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["BUCKET_DTYPE", "BucketHistory", "Records", "summarise"]

BUCKET_DTYPE = np.dtype(
    [
        ("first_step", np.int64),
        ("last_step", np.int64),
        ("first_wall", np.float64),
        ("last_wall", np.float64),
        ("min", np.float64),
        ("min_step", np.int64),
        ("min_wall", np.float64),
        ("min_pos", np.int64),
        ("max", np.float64),
        ("max_step", np.int64),
        ("max_wall", np.float64),
        ("max_pos", np.int64),
        ("sum", np.float64),
        ("count", np.int64),
        ("points", np.int64),
        ("nan", np.int64),
        ("inf", np.int64),
        ("nonpositive", np.int64),
        ("last", np.float64),
    ]
)
"""One bucket. ``count`` is its finite values, ``points`` all of them; ``min_pos`` and
``max_pos`` count points from the bucket's first; ``min``/``max`` are +inf/-inf when ``count``
is 0; ``last`` is the newest value, NaN included; ``nonpositive`` counts finite values <= 0."""

Records = npt.NDArray[np.void]
"""An array of :data:`BUCKET_DTYPE` records."""

_ADDED = ("sum", "count", "points", "nan", "inf", "nonpositive")
_FIRST_CAPACITY = 64


def summarise(
    steps: npt.NDArray[np.int64],
    walls: npt.NDArray[np.float64],
    values: npt.NDArray[np.float64],
    span: int,
) -> Records:
    """One record per ``span`` consecutive points (``len(values)`` must be a multiple of it).

    Reshaping to ``(buckets, span)`` makes every reduction one numpy call over the whole batch,
    which is what lets a series ingest a million points a second.
    """
    rows = len(values) // span
    v = values.reshape(rows, span)
    s = steps.reshape(rows, span)
    w = walls.reshape(rows, span)
    out = np.empty(rows, BUCKET_DTYPE)
    out["first_step"] = s[:, 0]
    out["last_step"] = s[:, -1]
    out["first_wall"] = w[:, 0]
    out["last_wall"] = w[:, -1]
    out["last"] = v[:, -1]
    out["points"] = span
    finite = np.isfinite(v)
    if finite.all():
        low = high = v
        out["count"] = span
        out["nan"] = 0
        out["inf"] = 0
        out["sum"] = v.sum(axis=1)
        out["nonpositive"] = np.count_nonzero(v <= 0, axis=1)
    else:
        low = np.where(finite, v, np.inf)
        high = np.where(finite, v, -np.inf)
        count = np.count_nonzero(finite, axis=1)
        nan = np.count_nonzero(np.isnan(v), axis=1)
        out["count"] = count
        out["nan"] = nan
        out["inf"] = span - count - nan
        out["sum"] = np.where(finite, v, 0.0).sum(axis=1)
        out["nonpositive"] = np.count_nonzero(finite & (v <= 0), axis=1)
    index = np.arange(rows)
    # argmin/argmax return the first occurrence: a bucket's extreme is where it first happened.
    at_min = low.argmin(axis=1)
    at_max = high.argmax(axis=1)
    out["min"] = low[index, at_min]
    out["min_step"] = s[index, at_min]
    out["min_wall"] = w[index, at_min]
    out["min_pos"] = at_min
    out["max"] = high[index, at_max]
    out["max_step"] = s[index, at_max]
    out["max_wall"] = w[index, at_max]
    out["max_pos"] = at_max
    return out


def combine(left: Records, right: Records) -> Records:
    """Each ``left[i]`` followed by ``right[i]``, as one bucket (exact: see the module doc)."""
    out = np.empty(len(left), BUCKET_DTYPE)
    for name in ("first_step", "first_wall"):
        out[name] = left[name]
    for name in ("last_step", "last_wall", "last"):
        out[name] = right[name]
    # Ties keep the left (earlier) extreme, as argmin/argmax do within a bucket.
    for extreme, right_wins in (
        ("min", right["min"] < left["min"]),
        ("max", right["max"] > left["max"]),
    ):
        for name in (extreme, f"{extreme}_step", f"{extreme}_wall"):
            out[name] = np.where(right_wins, right[name], left[name])
        pos = f"{extreme}_pos"
        out[pos] = np.where(right_wins, right[pos] + left["points"], left[pos])
    for name in _ADDED:
        out[name] = left[name] + right[name]
    return out


class BucketHistory:
    """Up to ``max_buckets`` buckets over every point folded in so far, oldest first."""

    def __init__(self, max_buckets: int) -> None:
        if max_buckets < 2 or max_buckets % 2:
            raise ValueError(f"max_buckets must be even and at least 2, not {max_buckets}")
        self.max_buckets = max_buckets
        self.span = 1
        """Points in every bucket but the last (which holds 1 to ``span``)."""
        self.points = 0
        """Points folded in and not truncated away: the global index of the next one."""
        self._records: Records = np.empty(min(_FIRST_CAPACITY, max_buckets), BUCKET_DTYPE)
        self._n = 0

    def __len__(self) -> int:
        return self._n

    @property
    def records(self) -> Records:
        """The buckets, oldest first (a view: valid until the next fold or truncate)."""
        return self._records[: self._n]

    @property
    def nbytes(self) -> int:
        """Memory held by the records (allocated capacity, not just the used part)."""
        return int(self._records.nbytes)

    def ends(self) -> npt.NDArray[np.int64]:
        """Global index (0 = the first point ever kept) of each bucket's last point."""
        return np.cumsum(self.records["points"]) - 1

    def fold(
        self,
        steps: npt.NDArray[np.int64],
        walls: npt.NDArray[np.float64],
        values: npt.NDArray[np.float64],
    ) -> None:
        """Add points (newer than every point already here) to the buckets."""
        total = len(values)
        i = 0
        while i < total:
            if self._n and self._records["points"][self._n - 1] < self.span:
                # Top up the partial last bucket first, so only the last is ever partial.
                take = min(self.span - int(self._records["points"][self._n - 1]), total - i)
                part = summarise(
                    steps[i : i + take], walls[i : i + take], values[i : i + take], take
                )
                last = self._records[self._n - 1 : self._n]
                self._records[self._n - 1] = combine(last, part)[0]
                i += take
                continue
            if self._n == self.max_buckets:
                self._merge_pairs()
                continue
            whole = min((total - i) // self.span, self.max_buckets - self._n)
            take = whole * self.span if whole else total - i
            span = self.span if whole else take
            new = summarise(steps[i : i + take], walls[i : i + take], values[i : i + take], span)
            self._reserve(self._n + len(new))
            self._records[self._n : self._n + len(new)] = new
            self._n += len(new)
            i += take
        self.points += total

    def truncate(self, step: int) -> None:
        """Forget the points at ``step`` and after (a trainer went back to ``step``).

        Steps only increase within a history, so this drops a suffix of buckets. A bucket whose
        first step is before ``step`` but whose last is not straddles the restart and is kept
        whole: re-reading its points is impossible, and it is at most one bucket of
        ``max_buckets`` (its min/max/mean may include up to ``span - 1`` orphaned values). Its
        steps are clamped to ``step - 1`` so that steps keep increasing from bucket to bucket
        and into the points that follow; an extreme that happened at or after ``step`` is then
        drawn at ``step - 1``.
        """
        records = self.records
        keep = int(np.searchsorted(records["first_step"], step, side="left"))
        self._n = keep
        if not keep:
            self.span = 1
        else:
            last = self._records[keep - 1 : keep]
            for name in ("last_step", "min_step", "max_step"):
                np.minimum(last[name], step - 1, out=last[name])
        self.points = int(self.records["points"].sum())

    def _merge_pairs(self) -> None:
        n = self._n
        pairs = n // 2
        merged = combine(self._records[0 : 2 * pairs : 2], self._records[1 : 2 * pairs : 2])
        self._records[:pairs] = merged
        if n % 2:
            self._records[pairs] = self._records[n - 1]
        self._n = pairs + n % 2
        self.span *= 2

    def _reserve(self, size: int) -> None:
        if size <= len(self._records):
            return
        capacity = min(max(size, 2 * len(self._records)), self.max_buckets)
        grown = np.empty(capacity, BUCKET_DTYPE)
        grown[: self._n] = self._records[: self._n]
        self._records = grown
