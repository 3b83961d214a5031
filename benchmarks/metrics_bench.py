"""Metric curves end to end: ``python benchmarks/metrics_bench.py [--tags 20] [--points N]``.

Starts its own local service (token auth, its own state dir, a free port), puts one event file
of ``--tags`` tags x ``--points`` steps (default 20 x 1M: 20M scalars, about 1.4 GB, as TF 2's
``tf.summary.scalar`` writes them) under a job's ``gs://`` output folder, and reads it the way
the metrics view does: ``JobScalars.poll()`` through the service's storage API
(google-cloud-storage, ranged reads of at most 16 MiB a poll) into the view's bounded series
(``MetricSet``). Prints:

1. the read rate end to end (goal: at least 50 MB/s): listing, HTTP, CRC checks, decoding and
   the series together;
2. the growth of this process's RSS for the 20M points, after the read and at its peak
   (goal: at most 100 MB), from a baseline taken after the file was written and one poll of
   an empty folder (the clients' imports and connections are a fixed cost, not the points');
3. one live poll on the read file (nothing new): its cost;
4. a live file written a record at a time at random moments while the view's poll loop runs
   (every ``POLL_SECONDS``): each point's wait from its write to its arrival (goal: within 2 s on
   screen).

The view's own figures (first chart on screen, redraws) are ``metrics_view_bench.py``'s; the
reader's in-process rate is ``event_read_bench.py``'s. Run it with the project's virtualenv.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil
from bench_report import Figure, Results, machine_line, print_table, workspace  # beside this
from service_bench import PROJECT, Service, verdict

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.event_files import training_records
from tui_app.api.connection import Connection
from tui_app.api.job_scalars import JobScalars
from tui_app.api.jobs_client import make_credentials
from tui_app.model.metrics.metric_series import MetricSet
from tui_app.model.metrics.tf_event_writer import file_version_record

READ_GOAL_MB_S = 50.0
RSS_GOAL_MB = 100.0
BUCKET = "bench-metrics"
CHUNK_STEPS = 20_000


def write_events(path: Path, tags: int, points: int) -> int:
    """The event file, written a chunk of steps at a time; its size."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        out.write(file_version_record(1_795_000_000.0))
        for first in range(1, points + 1, CHUNK_STEPS):
            steps = min(CHUNK_STEPS, points + 1 - first)
            out.write(b"".join(training_records(steps, tags=tags, first_step=first)))
            print(f"\r  writing the event file: step {first + steps - 1:,}", end="", flush=True)
    print()
    return path.stat().st_size


class PeakRss(threading.Thread):
    """This process's highest RSS while it runs, sampled every 20 ms."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.proc = psutil.Process()
        self.peak = self.proc.memory_info().rss
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.02):
            self.peak = max(self.peak, self.proc.memory_info().rss)


def live_latency(svc: Service, conn: Connection, res: Results, points: int) -> None:
    """Flush -> in the view's series, as a running trainer's points reach the view: a writer
    thread appends one record to a live event file at random moments (as TensorFlow's flush
    does on Cloud Storage: the whole object written again, one record longer), while the
    view's poll loop runs every ``POLL_SECONDS``; each point's wait from its write to the poll
    that brought it (goal: on screen within 2 s, of which a chart's redraw takes tens of ms)."""
    import random

    from tui_app.api.job_scalars import POLL_SECONDS
    from tui_app.model.metrics.tf_event_writer import event_record

    job_dir = f"gs://{BUCKET}/live"
    path = Path(svc.state.gcs_path(f"{job_dir}/train/events.out.tfevents.1795000001.bench"))
    path.parent.mkdir(parents=True, exist_ok=True)
    body = bytearray(file_version_record(1_795_000_000.0))
    written: dict[int, float] = {}
    job: dict[str, Any] = {
        "jobId": "live",
        "state": "RUNNING",
        "trainingInput": {"jobDir": job_dir},
    }
    scalars = JobScalars(lambda: conn, PROJECT, "live", read_job=lambda: job)
    scalars.poll()
    done = threading.Event()

    def write() -> None:
        rng = random.Random(1)
        for step in range(1, points + 1):
            time.sleep(rng.uniform(0.1, 0.6))
            body.extend(event_record(step, time.time(), "loss", 1.0 / step))
            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(body)
            written[step] = time.perf_counter()
            tmp.replace(path)  # a new generation, all at once, as an upload replaces an object
        done.set()

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    waits: list[float] = []
    while not (done.is_set() and len(waits) >= points):
        started = time.perf_counter()
        for batch in scalars.poll().batches:
            arrived = time.perf_counter()
            for step in batch.columns()[0]:
                waits.append(arrived - written[step])
        time.sleep(max(0.0, POLL_SECONDS - (time.perf_counter() - started)))
    writer.join()
    waits.sort()
    res.add(
        Figure(
            "live",
            "a flushed point -> in the view's series (median / max)",
            len(waits),
            f"{statistics.median(waits):.2f} s / {waits[-1]:.2f} s",
            "<= 2 s",
            verdict(waits[-1] <= 2.0, "the slowest"),
        )
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tags", type=int, default=20)
    parser.add_argument("--points", type=int, default=1_000_000, help="steps (points per tag)")
    parser.add_argument("--live-points", type=int, default=40, help="points of the live test")
    args = parser.parse_args()
    res = Results()
    print(machine_line())
    with workspace("metrics-bench-", keep=False) as root:
        svc = Service(root)
        svc.start()
        try:
            job_dir = f"gs://{BUCKET}/job"
            events = svc.state.gcs_path(f"{job_dir}/train/events.out.tfevents.1795000000.bench")
            size = write_events(Path(events), args.tags, args.points)
            conn = Connection(svc.url, make_credentials(svc.token), "bench", local=True)
            job: dict[str, Any] = {
                "jobId": "bench",
                "state": "SUCCEEDED",
                "trainingInput": {"jobDir": job_dir},
            }
            scalars = JobScalars(lambda: conn, PROJECT, "bench", read_job=lambda: job)
            store = MetricSet()
            # The baseline after one poll of an empty folder: the clients' imports and
            # connections are the view's fixed cost, not the points'.
            empty = {**job, "trainingInput": {"jobDir": f"gs://{BUCKET}/empty"}}
            JobScalars(lambda: conn, PROJECT, "bench", read_job=lambda: empty).poll()
            gc.collect()
            base = psutil.Process().memory_info().rss
            peak = PeakRss()
            peak.start()
            started = time.perf_counter()
            points = polls = 0
            while True:
                poll = scalars.poll()
                polls += 1
                for b in poll.batches:
                    store.add_points(b.key, b.steps, b.wall_times, b.values)
                    points += len(b.steps)
                if not poll.more:
                    break
            took = time.perf_counter() - started
            peak.stop.set()
            peak.join()
            del poll
            gc.collect()
            after = psutil.Process().memory_info().rss
            rate = size / took / 1e6
            sec = f"{args.tags} tags x {args.points:,} points ({size / 1e6:,.0f} MB)"
            res.add(
                Figure(
                    sec,
                    "read through the storage API into the series",
                    polls,
                    f"{rate:.0f} MB/s ({points / took / 1e6:.2f}M points/s, {took:.1f} s)",
                    f">= {READ_GOAL_MB_S:.0f} MB/s",
                    verdict(rate >= READ_GOAL_MB_S, ""),
                )
            )
            grown, peaked = (after - base) / 1e6, (peak.peak - base) / 1e6
            res.add(
                Figure(
                    sec,
                    "RSS growth after the read / at its peak",
                    1,
                    f"{grown:.0f} MB / {peaked:.0f} MB",
                    f"<= {RSS_GOAL_MB:.0f} MB",
                    verdict(grown <= RSS_GOAL_MB, "after the read"),
                )
            )
            assert points == args.tags * args.points, points
            quiet = []
            for _ in range(20):
                t = time.perf_counter()
                scalars.poll()
                quiet.append(time.perf_counter() - t)
            res.add(
                Figure(
                    sec,
                    "a live poll that finds nothing new (median)",
                    len(quiet),
                    f"{statistics.median(quiet) * 1000:.1f} ms",
                )
            )
            live_latency(svc, conn, res, args.live_points)
        finally:
            svc.stop()
    print_table(res)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
