"""Metric series benchmark: ``python benchmarks/metric_series_bench.py [--tags 20] [--points N]``.

What the metrics view asks of ``model.metrics.metric_series`` with 20 tags of a million points
each, as a reader of event files delivers them (batches of 10k, round robin over the tags):

1. Ingest (goal: >= 1M points/s). Only ``MetricSet.add_points`` is timed; making the batches
   is not (their wall time is printed beside it).
2. Memory (goal: <= 100 MB more RSS; the raw points are 24 bytes each, 480 MB). RSS before the
   first batch and after the last, both after ``gc.collect()``. Each batch is generated, added
   and dropped before the next, so the input itself is not counted.
3. Redraw (goal: a few ms per series, here <= 5 ms). ``view()`` 120 columns wide, per series,
   ``--runs`` times each (median, min-max over all of them):
   - the whole history, and the last 1000 steps: each run first appends one point, so the
     view is built anew (an unchanged series returns its cached view) as after new data;
   - a smoothing change: each run asks for a weight the series has not smoothed before, so the
     EMA runs over all of its buckets and its raw tail from scratch (the worst case);
   - live with smoothing on: a 10k batch arrives, then a view with the same weight as before.

Run it with the project's virtualenv: it imports ``tui_app``.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from functools import partial

import numpy as np
import numpy.typing as npt
import psutil
from bench_report import Figure, Results, machine_line, print_table  # beside this script

from tui_app.model.metrics.metric_series import MetricSet, Series, SeriesKey

INGEST_GOAL = 1_000_000
"""Points per second."""
RSS_GOAL_MB = 100.0
VIEW_GOAL_MS = 5.0
COLUMNS = 120
ZOOM_STEPS = 1000

Batch = tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], npt.NDArray[np.float64]]


def batches(points: int, size: int, tag: int) -> Iterator[Batch]:
    """One tag's points, a batch at a time: a noisy decaying loss, a few NaN, a step a point."""
    rng = np.random.default_rng(tag)
    start_wall = 1.7e9
    for start in range(0, points, size):
        steps = np.arange(start, min(start + size, points), dtype=np.int64)
        walls = (start_wall + steps * 0.01).astype(np.float64)
        values = 2.0 * np.exp(-steps / (points / 5)) + 0.05 * rng.standard_normal(len(steps))
        values[rng.random(len(steps)) < 1e-5] = np.nan
        yield steps, walls, values


def rss_mb() -> float:
    gc.collect()
    return psutil.Process().memory_info().rss / 2**20


def med_range(samples: list[float]) -> str:
    """``median (min-max) ms`` of samples in seconds."""
    ms = [s * 1e3 for s in samples]
    return f"{statistics.median(ms):.2f} ({min(ms):.2f}-{max(ms):.2f}) ms"


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def run(tags: int, points: int, batch: int, runs: int) -> int:
    res = Results()
    print(machine_line())
    keys = [SeriesKey("events", "train", f"tag_{i}") for i in range(tags)]
    metrics = MetricSet()
    warm = Series()  # numpy's lazy imports and first-call costs, outside the figures
    warm.extend(np.arange(10), np.arange(10.0), np.arange(10.0))
    warm.view(smoothing=0.5)
    del warm

    section = f"ingest: {tags} tags x {points:,} points, batches of {batch:,}"
    rss_before = rss_mb()
    feeds = [batches(points, batch, i) for i in range(tags)]
    spent, started = 0.0, time.perf_counter()
    for _ in range(-(-points // batch)):
        for key, feed in zip(keys, feeds, strict=True):
            steps, walls, values = next(feed)
            t = time.perf_counter()
            metrics.add_points(key, steps, walls, values)
            spent += time.perf_counter() - t
    wall = time.perf_counter() - started
    growth = rss_mb() - rss_before
    total = tags * points
    rate = total / spent
    res.add(
        Figure(
            section,
            "ingest rate (add_points only)",
            total,
            f"{rate / 1e6:.2f}M points/s ({spent:.2f} s; with making batches {wall:.2f} s)",
            f">= {INGEST_GOAL / 1e6:.0f}M points/s",
            verdict(rate >= INGEST_GOAL),
        )
    )
    res.add(
        Figure(
            section,
            "RSS growth",
            1,
            f"{growth:.1f} MB (raw points: {total * 24 / 2**20:.0f} MB)",
            f"<= {RSS_GOAL_MB:.0f} MB",
            verdict(growth <= RSS_GOAL_MB),
        )
    )
    held = sum(metrics.series(k).nbytes for k in keys)
    one = metrics.series(keys[0])
    res.add(
        Figure(
            section,
            "arrays held by the series",
            tags,
            f"{held / 2**20:.1f} MB ({one.bucket_count} buckets + {one.tail_count} raw each)",
        )
    )

    section = f"view(columns={COLUMNS}) per series, {runs} runs x {tags} series"
    next_step = points
    samples: dict[str, list[float]] = {"all": [], "zoom": [], "smooth": [], "live": []}
    weight = 0.5
    for r in range(runs):
        for i, key in enumerate(keys):
            series = metrics.series(key)
            series.append(next_step + r, 1.8e9, 0.1)
            samples["all"].append(timed(partial(series.view, columns=COLUMNS)))
            series.append(next_step + r + runs, 1.8e9, 0.1)
            zoom = partial(series.view, columns=COLUMNS, last_steps=ZOOM_STEPS)
            samples["zoom"].append(timed(zoom))
            weight = 0.5 + 0.4 * (r * tags + i) / (runs * tags)  # never smoothed before
            samples["smooth"].append(timed(partial(series.view, columns=COLUMNS, smoothing=weight)))
        next_step += 2 * runs
    live_start = next_step
    for _ in range(runs):
        for key in keys:
            series = metrics.series(key)
            steps = np.arange(live_start, live_start + batch, dtype=np.int64)
            series.extend(steps, 1.9e9 + steps * 0.01, np.full(batch, 0.2))
            samples["live"].append(timed(partial(series.view, columns=COLUMNS, smoothing=weight)))
        live_start += batch
    names = {
        "all": "whole history",
        "zoom": f"last {ZOOM_STEPS} steps",
        "smooth": "smoothing changed (EMA from scratch)",
        "live": f"smoothing on, after a {batch:,}-point batch",
    }
    ok_all = rate >= INGEST_GOAL and growth <= RSS_GOAL_MB
    for name, label in names.items():
        median_ms = statistics.median(samples[name]) * 1e3
        ok = median_ms <= VIEW_GOAL_MS
        ok_all &= ok
        res.add(
            Figure(
                section,
                label,
                len(samples[name]),
                med_range(samples[name]),
                f"median <= {VIEW_GOAL_MS:g} ms",
                verdict(ok),
            )
        )
    view = metrics.series(keys[0]).view(columns=COLUMNS)
    res.notes.append(
        f"a whole-history view holds {len(view)} points (at most {2 * COLUMNS}); "
        f"numpy {np.__version__}, Python {sys.version.split()[0]}."
    )
    print_table(res)
    return 0 if ok_all else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--tags", type=int, default=20)
    parser.add_argument("--points", type=int, default=1_000_000, help="per tag")
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=7, help="view timings per series")
    args = parser.parse_args(argv)
    return run(args.tags, args.points, args.batch, max(1, args.runs))


if __name__ == "__main__":
    sys.exit(main())
