"""TensorBoard's scalar smoothing, over a series that keeps buckets and a raw tail.

TensorBoard smooths a scalar curve with a debiased exponential moving average (its scalar
card's ``classicSmoothing``, and ``resmoothDataset`` of the older dashboard, read in
tensorflow/tensorboard): over the points in order, from ``last = 0, n = 0``,

    last = last * w + (1 - w) * v;  n += 1;  smoothed = last / (1 - w ** n)

A non-finite value is passed through unsmoothed and not folded in; a constant series (every
value equal) is passed through whole (TensorBoard issue 786: the division would show rounding
noise as wiggles). The division debiases the zero start.

An EMA depends on everything before it, so even a view of the last 100 steps needs the whole
history. :class:`EmaCache` keeps one weight's state beside a series:

- raw tail points go through the formula above one by one, in Python floats, so a series still
  small enough to be all raw is smoothed bit for bit as TensorBoard's formula does;
- a bucket whose points the cache never saw raw is folded as ``count`` copies of its mean,
  ``last = last * w**count + (1 - w**count) * mean`` (the closed form of that many steps);
- when raw points the cache has smoothed move into buckets, the exact state at each bucket's
  last point is kept, so a history that was watched as it grew stays exact at bucket ends.

Between a bucket's ends (where a chart draws the bucket's min and max) the state is interpolated
as the same closed form with the mean that joins the two end states, then the point's own value
is folded in.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import numpy.typing as npt

from tui_app.model.metrics.metric_buckets import Records

__all__ = ["EmaCache", "debiased_from", "smooth_points"]

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]

_NO_FLOATS: Floats = np.empty(0, np.float64)
_NO_INTS: Ints = np.empty(0, np.int64)


@functools.lru_cache(maxsize=64)
def debiased_from(weight: float) -> int:
    """The count from which ``1 - weight ** n`` is exactly 1.0, so the debiasing divides by 1.

    From there on the smoothed value is ``last`` itself, bit for bit, and the per-point power
    can be skipped: after ``log(2**-54) / log(weight)`` points (73 at 0.6, 3,700 at 0.99).
    """
    if weight == 0.0:
        return 1
    n = max(1, int(math.log(2.0**-54) / math.log(weight)))
    while n > 1 and 1 - weight ** (n - 1) == 1.0:
        n -= 1
    while 1 - weight**n != 1.0:
        n += 1
    return n


def smooth_points(
    values: Floats, weight: float, last: float = 0.0, n: int = 0
) -> tuple[Floats, Floats, Ints]:
    """TensorBoard's formula over ``values`` continuing from state ``(last, n)``.

    Returns the smoothed value at each point (the value itself where it is not finite) and the
    state after each point (``last`` and ``n``), which is what a later bucket end needs.
    """
    w = weight
    u = 1 - w  # the same float TensorBoard's ``(1 - w)`` is at every point
    limit = debiased_from(w)
    smoothed: list[float] = []
    lasts: list[float] = []
    keep, keep_last = smoothed.append, lasts.append
    finite = np.isfinite(values)
    counts = n + np.cumsum(finite, dtype=np.int64)
    data = values.tolist()
    if finite.all():
        head = min(max(limit - 1 - n, 0), len(data))
        for v in data[:head]:
            last = last * w + u * v
            n += 1
            keep(last / (1 - w**n))
            keep_last(last)
        for v in data[head:]:  # the hot loop of a long series: n >= limit, the divisor is 1
            last = last * w + u * v
            keep_last(last)
        tail = np.array(lasts, np.float64)
        return np.concatenate([np.array(smoothed, np.float64), tail[head:]]), tail, counts
    for v in data:
        if math.isfinite(v):
            last = last * w + u * v
            n += 1
            keep(last / (1 - w**n) if n < limit else last)
        else:
            keep(v)
        keep_last(last)
    return np.array(smoothed, np.float64), np.array(lasts, np.float64), counts


class EmaCache:
    """One smoothing weight's state at each bucket end and each raw tail point of a series.

    Both are valid prefixes: ``bucket_last[i]`` is the state after bucket ``i`` for the first
    ``len(bucket_last)`` buckets, and the tail arrays cover its first ``len(tail_last)`` points.
    The tail is only ever valid when every bucket is (its states continue from the last bucket).
    """

    def __init__(self, weight: float) -> None:
        self.weight = weight
        self.bucket_last: Floats = _NO_FLOATS
        self.bucket_n: Ints = _NO_INTS
        self.tail_last: Floats = _NO_FLOATS
        self.tail_n: Ints = _NO_INTS
        self.tail_smoothed: Floats = _NO_FLOATS

    @property
    def nbytes(self) -> int:
        arrays = (self.bucket_last, self.bucket_n, self.tail_last, self.tail_n, self.tail_smoothed)
        return sum(int(a.nbytes) for a in arrays)

    def update(self, records: Records, tail_values: Floats) -> None:
        """Extend the valid prefixes to every bucket and every tail point."""
        w = self.weight
        done = len(self.bucket_last)
        if done < len(records):
            self._clear_tail()
            last, n = self._bucket_state(done)
            count = records["count"][done:]
            # count copies of the mean: last * w**count + (1 - w**count) * mean. The factors
            # are numpy's; only the recurrence itself needs a Python loop.
            decay = w ** count.astype(np.float64)
            with np.errstate(divide="ignore", invalid="ignore"):
                mean = np.where(count > 0, records["sum"][done:] / count, 0.0)
            lasts: list[float] = []
            keep = lasts.append
            for factor, add in zip(decay.tolist(), ((1 - decay) * mean).tolist(), strict=True):
                last = last * factor + add
                keep(last)
            self.bucket_last = np.concatenate([self.bucket_last, np.array(lasts, np.float64)])
            self.bucket_n = np.concatenate([self.bucket_n, n + np.cumsum(count)])
        seen = len(self.tail_last)
        if seen < len(tail_values):
            if seen:
                last, n = float(self.tail_last[-1]), int(self.tail_n[-1])
            else:
                last, n = self._bucket_state(len(records))
            smoothed, lasts_, ns_ = smooth_points(tail_values[seen:], w, last, n)
            self.tail_smoothed = np.concatenate([self.tail_smoothed, smoothed])
            self.tail_last = np.concatenate([self.tail_last, lasts_])
            self.tail_n = np.concatenate([self.tail_n, ns_])

    def carry(self, old_ends: Ints, base: int, evicted: int, new_ends: Ints) -> None:
        """The tail's first ``evicted`` points were folded into buckets (then maybe more points).

        ``old_ends`` and ``new_ends`` are the buckets' last-point global indices before and after
        the fold, ``base`` the global index of the tail's first point. A bucket keeps an exact
        state when its last point's state is known: an old bucket end (merges keep some of
        them) or a tail point this cache had smoothed.
        """
        seen = min(evicted, len(self.tail_last))
        known = np.concatenate([old_ends[: len(self.bucket_last)], base + np.arange(seen)])
        lasts = np.concatenate([self.bucket_last, self.tail_last[:seen]])
        ns = np.concatenate([self.bucket_n, self.tail_n[:seen]])
        valid = 0
        if len(known):
            at = np.searchsorted(known, new_ends)
            hit = (at < len(known)) & (known[np.minimum(at, len(known) - 1)] == new_ends)
            valid = len(hit) if hit.all() else int(np.argmin(hit))
            self.bucket_last = lasts[at[:valid]]
            self.bucket_n = ns[at[:valid]]
        else:
            self.bucket_last, self.bucket_n = _NO_FLOATS, _NO_INTS
        if valid < len(new_ends) or evicted >= len(self.tail_last):
            self._clear_tail()
        else:
            self.tail_last = self.tail_last[evicted:]
            self.tail_n = self.tail_n[evicted:]
            self.tail_smoothed = self.tail_smoothed[evicted:]

    def truncate(self, buckets: int, tail: int) -> None:
        """Only the first ``buckets`` buckets and ``tail`` tail points remain."""
        self.bucket_last = self.bucket_last[:buckets]
        self.bucket_n = self.bucket_n[:buckets]
        if len(self.bucket_last) < buckets:
            self._clear_tail()
        else:
            self.tail_last = self.tail_last[:tail]
            self.tail_n = self.tail_n[:tail]
            self.tail_smoothed = self.tail_smoothed[:tail]

    def within_buckets(
        self, records: Records, first: int, positions: Ints, values: Floats
    ) -> Floats:
        """The smoothed value at points inside buckets ``first:`` (after :meth:`update`).

        ``positions`` and ``values`` have one row per bucket: each point's position in its
        bucket (0-based, counting every point) and its value. The values before the point are
        taken as the mean that joins the previous bucket's end state to this one's (the closed
        form above, exact for a bucket's end), and the point itself is folded in as it is: the
        newest value weighs most in the average, and it is the one known exactly.
        """
        w = self.weight
        if first:
            prev_last = self.bucket_last[first - 1 : -1]
            prev_n = self.bucket_n[first - 1 : -1]
        else:
            prev_last = np.concatenate([[0.0], self.bucket_last[:-1]])
            prev_n = np.concatenate([np.zeros(1, np.int64), self.bucket_n[:-1]])
        count = records["count"][first:]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            mean = records["sum"][first:] / count
            # Finite values up to and including the point (exact when the bucket has no NaN).
            k = np.clip(positions + 1, 1, np.maximum(count, 1)[:, None]).astype(np.float64)
            before = w ** (k - 1)
            last = prev_last[:, None] * before + (1 - before) * mean[:, None]
            last = last * w + (1 - w) * values
            n = prev_n[:, None] + k
            return np.asarray(last / (1 - w**n), np.float64)

    def _bucket_state(self, index: int) -> tuple[float, int]:
        """The state before bucket ``index`` (after bucket ``index - 1``)."""
        if index == 0:
            return 0.0, 0
        return float(self.bucket_last[index - 1]), int(self.bucket_n[index - 1])

    def _clear_tail(self) -> None:
        self.tail_last, self.tail_n, self.tail_smoothed = _NO_FLOATS, _NO_INTS, _NO_FLOATS
