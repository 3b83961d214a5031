"""Event file reading: ``python benchmarks/event_read_bench.py [--size-mb 100] [--runs 5]``.

The metrics view reads every event file of a job as it grows, a piece at a time, through
``tui_app.model.metrics.tf_events.EventFileReader``. This prints how fast that reader goes through
typical files (goal: at least 50 MB/s on this project's 2-core machines):

1. A TF 2 file: ``tf.summary.scalar`` events as TF 2 and Keras write them (a float tensor and
   the "scalars" metadata, about 70 bytes a record), 20 tags written at every step,
   interleaved.
2. The same as simple values (TF 1, Estimators, PyTorch's ``add_scalar``), about 50 bytes a
   record.
3. For scale: the TF 2 file again, a tenth of it, with every record decoded by the general
   decoder (the path a file in an unusual layout takes).
4. A live file: the cost of one poll that finds about 1 KiB appended (the per-feed overhead).

Each file is written by ``tests/support/event_files.py`` into a temporary folder, after this
script has checked that the writer gives the bytes real TensorFlow wrote for the fixtures in
``tests/fixtures/tf_events``. Each run reads the file the way a poller does: seek to the
reader's offset, read 1 MiB, feed it; the file is in the page cache. MB/s and points/s are the
median (min-max) of ``--runs`` runs, each with a fresh reader. Run it with the project's
virtualenv (``.venv/bin/python``): it imports ``tui_app``.
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import struct
import sys
import time
from pathlib import Path

from bench_report import (  # beside this script
    Figure,
    Results,
    machine_line,
    print_table,
    raise_interrupt,
    workspace,
)
from service_bench import med_range, verdict

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures" / "tf_events"
FEED = 1 << 20
GOAL_MB_S = 50.0


def check_writer() -> int:
    """Every scalar event of the single-value fixtures, rewritten by our writer, must be the
    record TensorFlow wrote, byte for byte. Returns how many were compared."""
    from tui_app.model.metrics.tf_event_writer import event_record

    expected = json.loads((FIXTURES / "expected.json").read_text())
    compared = 0
    for folder, tensor in (("tf2_scalar", True), ("keras/train", True), ("tf1_simple", False)):
        name = next(n for n in expected if n.startswith(folder + "/"))
        data = (FIXTURES / name).read_bytes()
        records = []
        at = 0
        while at < len(data):
            (length,) = struct.unpack_from("<Q", data, at)
            records.append(data[at : at + 16 + length])
            at += 16 + length
        for record, (tag, step, value, wall) in zip(records[1:], expected[name], strict=True):
            if event_record(step, wall, tag, value, tensor=tensor) != record:
                raise SystemExit(f"the writer differs from TensorFlow on {name}, {tag} {step}")
            compared += 1
    return compared


def read_file(path: Path, common_layouts: bool) -> tuple[float, int, int]:
    """Seconds, points and corrupt records of one poller-style read of the whole file."""
    from tui_app.model.metrics.tf_events import EventFileReader

    reader = EventFileReader(common_layouts=common_layouts)
    count = 0
    start = time.perf_counter()
    with path.open("rb") as f:
        while True:
            f.seek(reader.offset)
            piece = f.read(FEED)
            if not piece:
                break
            count += reader.feed(piece).point_count
    seconds = time.perf_counter() - start
    if reader.offset != path.stat().st_size or reader.problem:
        raise SystemExit(f"{path.name}: stopped at {reader.offset}: {reader.problem}")
    return seconds, count, reader.corrupt


def bench(
    res: Results, section: str, path: Path, runs: int, common_layouts: bool, goal: bool
) -> None:
    size = path.stat().st_size
    results = [read_file(path, common_layouts) for _ in range(runs)]
    rates = [size / s / 1e6 for s, _, _ in results]
    points = [p / s for s, p, _ in results]
    count = results[0][1]
    med = statistics.median(rates)
    res.add(
        Figure(
            section,
            f"{size / 1e6:.0f} MB, {count:,} points, 1 MiB feeds",
            runs,
            med_range(rates, 1, 1, " MB/s"),
            f"≥ {GOAL_MB_S:g} MB/s" if goal else "",
            verdict(med >= GOAL_MB_S, f"min {min(rates):.1f}") if goal else "",
        )
    )
    res.add(Figure(section, "points per second", runs, med_range(points, 1e-6, 2, " M/s")))
    if any(corrupt for _, _, corrupt in results):
        res.notes.append(f"{path.name}: corrupt records reported in a file without any")


def bench_polls(res: Results, path: Path, polls: int) -> None:
    """A live file: each poll finds about 1 KiB appended (some 14 records, and a torn one)."""
    from tui_app.model.metrics.tf_events import EventFileReader

    data = path.read_bytes()[: polls * 1024]
    reader = EventFileReader()
    times = []
    for end in range(1024, len(data) + 1, 1024):
        start = time.perf_counter()
        reader.feed(data[reader.offset : end])
        times.append(time.perf_counter() - start)
    res.add(
        Figure(
            "4 live polls, TF 2 file",
            "one poll of ~1 KiB appended",
            len(times),
            med_range(times, 1e6, 0, " µs"),
        )
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size-mb", type=float, default=100, help="size of each file (default 100)")
    p.add_argument("--runs", type=int, default=5, help="reads of each file (default 5)")
    p.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = p.parse_args()
    signal.signal(signal.SIGTERM, raise_interrupt)
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))  # the generator is the tests' own
    from tests.support.event_files import training_file_of_size

    print(machine_line())
    print(f"writer checked against {check_writer()} records TensorFlow wrote")
    res = Results()
    size = int(args.size_mb * 1e6)
    with workspace("event-read-bench-", args.keep) as root:
        files = {}
        for name, tensor, bytes_ in (
            ("tf2", True, size),
            ("simple", False, size),
            ("tf2-small", True, size // 10),
        ):
            start = time.perf_counter()
            path = files[name] = root / f"events.out.tfevents.1795000000.bench.{name}"
            path.write_bytes(training_file_of_size(bytes_, tensor=tensor))
            seconds = time.perf_counter() - start
            print(f"wrote {path.name}: {path.stat().st_size / 1e6:.1f} MB in {seconds:.1f} s")
        bench(res, "1 TF 2 tf.summary.scalar, 20 tags", files["tf2"], args.runs, True, True)
        bench(res, "2 simple values, 20 tags", files["simple"], args.runs, True, True)
        bench(
            res,
            "3 TF 2, general decoder only",
            files["tf2-small"],
            max(1, args.runs // 2),
            False,
            False,
        )
        bench_polls(res, files["tf2-small"], 2000)
    print_table(res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
