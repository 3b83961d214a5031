"""Scalar metric series of a training job, held in bounded memory, and what a chart draws of them.

Points arrive as ``(step, wall_time, value)`` per series from TensorFlow event files,
cloudml-hypertune reports and metrics parsed from log lines, a batch at a time while the job
runs. A :class:`Series` keeps:

- a raw **tail** of the newest points, at least ``tail_points`` (4096) of them, so zooming into
  the last few thousand steps is exact. It grows by ``tail_points // 4`` before those oldest
  points are folded away, so single appends fold in batches (amortised cost per point: nothing),
  while smoothing a whole tail from scratch stays a few milliseconds of Python (a smoothing
  change does that once);
- every older point in at most ``max_buckets`` (2048) **buckets** (``metric_buckets``): enough
  for 2 points per column on a 1000-column plot, and 2048 records of 152 bytes are 300 KB;
- running stats for the legend, and the steps of the newest ``max_marks`` (1024) non-finite
  values, for marks on the x axis;
- the newest ``max_resumes`` (32) resumes (:class:`Resume`), for marks where a restarted trainer
  went back to its checkpoint.

A series therefore holds at most about 0.7 MB however long it runs (twenty tags of a million
points each: about 15 MB, against 480 MB for the raw points), and a view looks at no more than
``2 * max_buckets + tail`` candidate points.

Steps within a series only increase. A step that goes back (a trainer restarted from its
checkpoint writes step 500 again after step 900) forgets what was recorded from that step on,
as TensorBoard discards orphaned points; a point for the newest step again (log metrics re-print
an epoch's final values) replaces it. Both are the same truncation, see :meth:`Series.extend`.
The first is also remembered as a :class:`Resume` when time went on (the restarted trainer wrote
it later than the newest point): the curve is drawn as one, and the chart marks the restart.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np
import numpy.typing as npt

from tui_app.model.metrics.metric_buckets import BucketHistory, Records
from tui_app.model.metrics.metric_smoothing import EmaCache
from tui_app.model.metrics.metric_tags import tag_sort_key
from tui_app.model.metrics.metric_view import Resume, SeriesStats, SeriesView, XAxis, build_view

__all__ = [
    "MAX_BUCKETS",
    "MAX_MARKS",
    "MAX_RESUMES",
    "TAIL_POINTS",
    "MetricSet",
    "Resume",
    "Series",
    "SeriesKey",
    "SeriesStats",
    "SeriesView",
    "Source",
    "XAxis",
]

Source = Literal["events", "hypertune", "logs"]

TAIL_POINTS = 4096
MAX_BUCKETS = 2048
MAX_MARKS = 1024
MAX_RESUMES = 32
"""Resumes a series remembers, the newest: a job restarted more often than that is marked
where it restarted last, which is where a user looks."""
MAX_SMOOTHING_CACHES = 2
"""Weights whose smoothing state a series keeps: the one shown and the one before it, so that
toggling smoothing off and on (or between two weights) costs nothing."""

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True, order=True)
class SeriesKey:
    """Which series: a tag, from one source, of one run (and one trial of a tuning job)."""

    source: Source
    """``events`` (TensorFlow event files), ``hypertune`` (cloudml-hypertune reports) or
    ``logs`` (metrics parsed from log lines)."""
    run: str
    """For events, the directory the event files are in, relative to the job's output dir
    (Keras writes ``train`` and ``validation``; an Estimator its model dir ``.`` and ``eval``);
    for logs the replica (``master-replica-0``); ``""`` for hypertune."""
    tag: str
    trial: str = ""
    """The trial id within a tuning job, ``""`` otherwise."""

    def __post_init__(self) -> None:
        if self.source not in get_args(Source):
            raise ValueError(f"unknown metric source {self.source!r}")


_ViewKey = tuple[str, int | None, int, float, bool, int]


class Series:
    """One scalar series in bounded memory (see the module doc for what is kept and why)."""

    def __init__(
        self,
        *,
        tail_points: int = TAIL_POINTS,
        max_buckets: int = MAX_BUCKETS,
        max_marks: int = MAX_MARKS,
        max_resumes: int = MAX_RESUMES,
    ) -> None:
        if tail_points < 1 or max_marks < 0 or max_resumes < 0:
            raise ValueError(
                "tail_points must be positive, and max_marks and max_resumes not negative"
            )
        self.tail_points = tail_points
        self._tail_cap = tail_points + max(1, tail_points // 4)
        self.max_marks = max_marks
        self.max_resumes = max_resumes
        self.version = 0
        """Bumped by every change: a chart redraws a series whose version moved."""
        self._history = BucketHistory(max_buckets)
        size = min(256, self._tail_cap)
        self._steps: Ints = np.empty(size, np.int64)
        self._walls: Floats = np.empty(size, np.float64)
        self._values: Floats = np.empty(size, np.float64)
        self._n = 0
        self._mark_steps: Ints = np.empty(0, np.int64)
        self._mark_walls: Floats = np.empty(0, np.float64)
        self._mark_values: Floats = np.empty(0, np.float64)
        self._resumes: tuple[Resume, ...] = ()
        self._resumes_dropped = False
        self._smoothing: dict[float, EmaCache] = {}
        self._last_view: tuple[_ViewKey, SeriesView] | None = None
        self._count = 0
        self._min = math.inf
        self._max = -math.inf
        self._last: float | None = None
        self._last_step: int | None = None
        self._first_wall: float | None = None
        self._nan = 0
        self._inf = 0

    # -- stats --------------------------------------------------------------------------------

    @property
    def count(self) -> int:
        """Finite values recorded (NaN and inf are counted apart)."""
        return self._count

    @property
    def minimum(self) -> float | None:
        """The least finite value; a zero is always ``0.0`` (``+ 0.0`` drops the sign, which
        ``min`` and numpy's ``min`` keep differently for ``0.0`` and ``-0.0``)."""
        return self._min + 0.0 if self._count else None

    @property
    def maximum(self) -> float | None:
        """The greatest finite value; a zero is always ``0.0``, as for ``minimum``."""
        return self._max + 0.0 if self._count else None

    @property
    def last(self) -> float | None:
        return self._last

    @property
    def last_step(self) -> int | None:
        return self._last_step

    @property
    def first_wall_time(self) -> float | None:
        return self._first_wall

    @property
    def nan_count(self) -> int:
        return self._nan

    @property
    def inf_count(self) -> int:
        return self._inf

    @property
    def stats(self) -> SeriesStats:
        return SeriesStats(
            count=self._count,
            minimum=self.minimum,
            maximum=self.maximum,
            last=self._last,
            last_step=self._last_step,
            first_wall_time=self._first_wall,
            nan_count=self._nan,
            inf_count=self._inf,
        )

    @property
    def points(self) -> int:
        """Points kept, raw or in buckets, non-finite ones included."""
        return self._history.points + self._n

    @property
    def bucket_count(self) -> int:
        return len(self._history)

    @property
    def tail_count(self) -> int:
        """Points kept raw (the newest)."""
        return self._n

    @property
    def nbytes(self) -> int:
        """Memory held in arrays (allocated capacity): bounded whatever the series' length."""
        arrays = (
            self._steps,
            self._walls,
            self._values,
            self._mark_steps,
            self._mark_walls,
            self._mark_values,
        )
        caches = sum(cache.nbytes for cache in self._smoothing.values())
        return self._history.nbytes + sum(int(a.nbytes) for a in arrays) + caches

    def nonfinite_marks(self) -> tuple[Ints, Floats, Floats]:
        """Step, wall time and value of the newest non-finite values, oldest first."""
        return self._mark_steps, self._mark_walls, self._mark_values

    @property
    def resumes(self) -> tuple[Resume, ...]:
        """Where the trainer resumed from a checkpoint, oldest first: the newest
        ``max_resumes`` of those whose points are still kept, steps increasing."""
        return self._resumes

    @property
    def resumes_dropped(self) -> bool:
        """Whether older resumes than ``resumes`` happened and were let go (the bound): a
        legend then says "at least"."""
        return self._resumes_dropped

    # -- adding points ------------------------------------------------------------------------

    def append(self, step: int, wall_time: float, value: float) -> None:
        """Add one point (see :meth:`extend` for steps that repeat or go back)."""
        n = self._n
        if (
            self._last_step is not None
            and step > self._last_step
            and n < len(self._steps)
            and math.isfinite(value)
        ):
            # The common case without numpy's per-call overhead: a new finite point with room.
            self._steps[n] = step
            self._walls[n] = wall_time
            self._values[n] = value
            self._n = n + 1
            self._count += 1
            self._min = min(self._min, value)
            self._max = max(self._max, value)
            self._last = float(value)
            self._last_step = int(step)
            self.version += 1
            return
        self.extend([step], [wall_time], [value])

    def extend(
        self, steps: npt.ArrayLike, wall_times: npt.ArrayLike, values: npt.ArrayLike
    ) -> None:
        """Add points in the order they were written (equal-length sequences).

        A point whose step is not after the newest point's forgets every point from its step
        on first, then is added: a step that goes back is a restarted trainer (TensorBoard's
        orphaned points), and the newest step again replaces the newest value. Within the
        batch, consecutive points for one step keep only the last.

        A step that goes back with a wall time after the newest point's is recorded as a
        :class:`Resume`. One that goes back in time too is the same points read again (a log
        feed opened anew, an event file replaced and re-read from its start), not a restart,
        and is not marked; neither is the newest step again.
        """
        s = np.asarray(steps, dtype=np.int64).reshape(-1)
        w = np.asarray(wall_times, dtype=np.float64).reshape(-1)
        v = np.asarray(values, dtype=np.float64).reshape(-1)
        if not len(s) == len(w) == len(v):
            raise ValueError(
                f"steps, wall_times and values differ in length ({len(s)}, {len(w)}, {len(v)})"
            )
        if not len(s):
            return
        if len(s) > 1:
            changes = s[1:] != s[:-1]
            if not changes.all():
                keep = np.append(changes, True)
                s, w, v = s[keep], w[keep], v[keep]
        starts = [0, *(np.flatnonzero(s[1:] < s[:-1]) + 1).tolist(), len(s)]
        for start, end in itertools.pairwise(starts):
            first = int(s[start])
            if self._last_step is not None and first <= self._last_step:
                resumed = first < self._last_step and float(w[start]) > self._last_wall()
                resume = Resume(first, float(w[start]), self._last_step) if resumed else None
                self._truncate(first)
                if resume is not None:
                    self._add_resume(resume)
            self._add_increasing(s[start:end], w[start:end], v[start:end])
        self.version += 1

    def _add_increasing(self, s: Ints, w: Floats, v: Floats) -> None:
        """Points after every point kept, steps strictly increasing."""
        finite = np.isfinite(v)
        if finite.all():
            good = v
        else:
            good = v[finite]
            bad = ~finite
            nan = int(np.count_nonzero(np.isnan(v)))
            self._nan += nan
            self._inf += int(np.count_nonzero(bad)) - nan
            self._add_marks(s[bad], w[bad], v[bad])
        if len(good):
            self._count += len(good)
            self._min = min(self._min, float(good.min()))
            self._max = max(self._max, float(good.max()))
        if self._first_wall is None:
            self._first_wall = float(w[0])
        self._last = float(v[-1])
        self._last_step = int(s[-1])
        self._add_to_tail(s, w, v)

    def _add_to_tail(self, s: Ints, w: Floats, v: Floats) -> None:
        n, k = self._n, len(s)
        if n + k <= self._tail_cap:
            if n + k > len(self._steps):
                self._grow_tail(n + k)
            self._steps[n : n + k] = s
            self._walls[n : n + k] = w
            self._values[n : n + k] = v
            self._n = n + k
            return
        # Fold the oldest points into buckets, keeping exactly tail_points raw.
        evict = n + k - self.tail_points
        from_tail = min(evict, n)
        from_batch = evict - from_tail
        history = self._history
        old_ends, base = history.ends(), history.points
        history.fold(self._steps[:from_tail], self._walls[:from_tail], self._values[:from_tail])
        if from_batch:
            history.fold(s[:from_batch], w[:from_batch], v[:from_batch])
        new_ends = history.ends()
        for cache in self._smoothing.values():
            cache.carry(old_ends, base, from_tail, new_ends)
        kept = n - from_tail
        if len(self._steps) < self._tail_cap:
            self._grow_tail(self._tail_cap)
        for tail, batch in ((self._steps, s), (self._walls, w), (self._values, v)):
            tail[:kept] = tail[from_tail:n]
            tail[kept : self.tail_points] = batch[from_batch:]
        self._n = self.tail_points

    def _grow_tail(self, size: int) -> None:
        capacity = min(max(size, 2 * len(self._steps)), self._tail_cap)
        n = self._n
        for name in ("_steps", "_walls", "_values"):
            old = getattr(self, name)
            grown = np.empty(capacity, old.dtype)
            grown[:n] = old[:n]
            setattr(self, name, grown)

    def _add_marks(self, s: Ints, w: Floats, v: Floats) -> None:
        keep = self.max_marks
        self._mark_steps = np.concatenate([self._mark_steps, s])[-keep:] if keep else s[:0]
        self._mark_walls = np.concatenate([self._mark_walls, w])[-keep:] if keep else w[:0]
        self._mark_values = np.concatenate([self._mark_values, v])[-keep:] if keep else v[:0]

    def _last_wall(self) -> float:
        """The newest point's wall time (NaN for a source without them)."""
        if self._n:
            return float(self._walls[self._n - 1])
        records = self._history.records
        return float(records["last_wall"][-1]) if len(records) else math.nan

    def _add_resume(self, resume: Resume) -> None:
        """Remember ``resume`` (after :meth:`_truncate` to its step), the newest
        ``max_resumes`` kept. A resume at the step of the newest one kept is the trainer
        restarting from the same checkpoint again: that one's points are gone, this one
        takes its place."""
        kept = self._resumes
        if kept and kept[-1].step == resume.step:
            kept = kept[:-1]
        kept = (*kept, resume)
        if len(kept) > self.max_resumes:
            self._resumes_dropped = True
            kept = kept[len(kept) - self.max_resumes :]
        self._resumes = kept

    def _truncate(self, step: int) -> None:
        """Forget every point at ``step`` or later, and recount the stats from what is left.

        A resume after ``step`` goes with its points: the run it marks is orphaned too. One at
        ``step`` stays (the newest step printed again is not a restart; a restart to the same
        step replaces it in :meth:`_add_resume`)."""
        kept_tail = int(np.searchsorted(self._steps[: self._n], step, side="left"))
        history = self._history
        if kept_tail == 0:
            history.truncate(step)
        self._n = kept_tail
        for cache in self._smoothing.values():
            cache.truncate(len(history), kept_tail)
        marks = self._mark_steps < step
        self._mark_steps = self._mark_steps[marks]
        self._mark_walls = self._mark_walls[marks]
        self._mark_values = self._mark_values[marks]
        if self._resumes and self._resumes[-1].step > step:
            self._resumes = tuple(r for r in self._resumes if r.step <= step)
        if not self._n and not len(history):
            self._resumes_dropped = False  # nothing is left that an older resume could mark
        self._recount()

    def _recount(self) -> None:
        records = self._history.records
        values = self._values[: self._n]
        finite = values[np.isfinite(values)]
        self._count = int(records["count"].sum()) + len(finite)
        lows = [float(records["min"].min())] if len(records) else []
        highs = [float(records["max"].max())] if len(records) else []
        if len(finite):
            lows.append(float(finite.min()))
            highs.append(float(finite.max()))
        self._min = min(lows, default=math.inf)
        self._max = max(highs, default=-math.inf)
        nan = int(np.count_nonzero(np.isnan(values)))
        self._nan = int(records["nan"].sum()) + nan
        self._inf = int(records["inf"].sum()) + len(values) - len(finite) - nan
        self._last, self._last_step, self._first_wall = None, None, None
        if self._n:
            self._last = float(values[-1])
            self._last_step = int(self._steps[self._n - 1])
        elif len(records):
            self._last = float(records["last"][-1])
            self._last_step = int(records["last_step"][-1])
        if len(records):
            self._first_wall = float(records["first_wall"][0])
        elif self._n:
            self._first_wall = float(self._walls[0])

    # -- views --------------------------------------------------------------------------------

    def view(
        self,
        *,
        x_axis: XAxis = "step",
        last_steps: int | None = None,
        columns: int = 120,
        smoothing: float = 0.0,
        log_y: bool = False,
    ) -> SeriesView:
        """What a chart ``columns`` cells wide draws of this series.

        Args:
            x_axis: ``step``, ``wall`` (seconds since the epoch) or ``relative`` (seconds since
                the series' first point, TensorBoard's "relative").
            last_steps: None for everything, else only points with
                ``step > last_step - last_steps``: exact while the raw tail reaches that far
                back, else the buckets' extremes that fall in the range.
            columns: the plot's width in cells; at most ``2 * columns`` points come back.
            smoothing: TensorBoard's smoothing weight, 0 (off) to below 1 (``metric_smoothing``);
                computed over the whole history, whatever the range.
            log_y: leave out values <= 0 (a log axis cannot place them) and count them.

        Returns:
            The view, cached until the next change to the series or to these arguments.
        """
        if x_axis not in get_args(XAxis):
            raise ValueError(f"unknown x axis {x_axis!r}")
        if not 0.0 <= smoothing < 1.0:
            raise ValueError(f"smoothing must be in [0, 1), not {smoothing}")
        if columns < 1:
            raise ValueError(f"columns must be positive, not {columns}")
        key: _ViewKey = (x_axis, last_steps, columns, smoothing, log_y, self.version)
        if self._last_view is not None and self._last_view[0] == key:
            return self._last_view[1]
        result = build_view(self, x_axis, last_steps, columns, smoothing, log_y)
        self._last_view = (key, result)
        return result

    @property
    def buckets(self) -> Records:
        """The bucketed history, oldest first (``metric_buckets.BUCKET_DTYPE``; do not modify)."""
        return self._history.records

    def tail(self) -> tuple[Ints, Floats, Floats]:
        """Steps, wall times and values of the raw tail, oldest first (do not modify)."""
        n = self._n
        return self._steps[:n], self._walls[:n], self._values[:n]

    def smoothing_state(self, weight: float) -> EmaCache:
        """The smoothing state for ``weight``, brought up to date (kept for the newest two)."""
        cache = self._smoothing.pop(weight, None) or EmaCache(weight)
        self._smoothing[weight] = cache  # most recently used last
        while len(self._smoothing) > MAX_SMOOTHING_CACHES:
            del self._smoothing[next(iter(self._smoothing))]
        cache.update(self._history.records, self._values[: self._n])
        return cache


class MetricSet:
    """The series of one job (or one trial), keyed by :class:`SeriesKey`, each with a version."""

    def __init__(self, **options: int) -> None:
        """``options``: :class:`Series`' keyword arguments (``tail_points``, ``max_buckets``,
        ``max_marks``, ``max_resumes``) for every series the set makes; their defaults are
        ``Series``' own."""
        self._options = options
        self._series: dict[SeriesKey, Series] = {}
        self._tags: list[str] | None = None
        self._by_tag: dict[str, list[SeriesKey]] = {}
        """Each tag's keys, kept as series are made: a chart asks for its tag's series at every
        redraw, and a job may have 10,000 tags."""

    def __len__(self) -> int:
        return len(self._series)

    def __contains__(self, key: object) -> bool:
        return key in self._series

    def __iter__(self) -> Iterator[SeriesKey]:
        return iter(self._series)

    def series(self, key: SeriesKey) -> Series:
        """The series for ``key``; KeyError if no point was ever added to it."""
        return self._series[key]

    def add_points(
        self,
        key: SeriesKey,
        steps: npt.ArrayLike,
        wall_times: npt.ArrayLike,
        values: npt.ArrayLike,
    ) -> int:
        """Add points to ``key``'s series (created on first use); returns its new version."""
        series = self._series.get(key)
        if series is None:
            series = self._series[key] = Series(**self._options)
            self._tags = None
            self._by_tag.setdefault(key.tag, []).append(key)
        series.extend(steps, wall_times, values)
        return series.version

    def version(self, key: SeriesKey) -> int:
        """``key``'s version: 0 for a series that does not exist yet."""
        series = self._series.get(key)
        return series.version if series is not None else 0

    def changed_since(self, seen: Mapping[SeriesKey, int]) -> list[SeriesKey]:
        """Keys whose version differs from ``seen`` (new series included): what to redraw."""
        return [key for key, series in self._series.items() if seen.get(key) != series.version]

    def tags(self) -> list[str]:
        """Every tag, once, in TensorBoard's natural order (``step2`` before ``step10``)."""
        if self._tags is None:
            self._tags = sorted({key.tag for key in self._series}, key=tag_sort_key)
        return list(self._tags)

    def keys_for(self, tag: str) -> list[SeriesKey]:
        """The series of one tag (one chart), by source, run and trial."""
        return sorted(
            self._by_tag.get(tag, ()),
            key=lambda k: (k.source, tag_sort_key(k.run), tag_sort_key(k.trial)),
        )


def drawn_keys(keys: Iterable[SeriesKey]) -> list[SeriesKey]:
    """The series a view draws, of ``keys``: printed metrics (source ``logs``) only while no
    event file has given a point.

    A trainer that writes summaries usually prints the same numbers too, and the log lines may
    be read before its first event file appears (the reader stops reading them then); drawn
    twice, one curve would look like two runs."""
    given = list(keys)
    if any(k.source == "events" for k in given):
        return [k for k in given if k.source != "logs"]
    return given


def run_labels(runs: Iterable[str]) -> dict[str, str]:
    """Each run as a legend names it: without the folders every run shares.

    Runs are folders relative to the job's output folder, so Keras' callback pointed at
    ``<job-dir>/keras_tensorboard`` gives ``keras_tensorboard/train`` and
    ``keras_tensorboard/validation``; TensorBoard pointed at that log dir would say ``train``
    and ``validation``, and so does the legend (a lone run keeps its whole name)."""
    names = sorted(set(runs))
    if len(names) < 2:
        return {n: n for n in names}
    parts = [n.split("/") for n in names]
    shared = 0
    for column in zip(*(p[:-1] for p in parts), strict=False):
        if len(set(column)) != 1:
            break
        shared += 1
    return {n: "/".join(p[shared:]) for n, p in zip(names, parts, strict=True)}
