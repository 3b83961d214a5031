"""Metrics read from log lines: ``python benchmarks/log_metrics_bench.py [--lines N] [--runs R]``.

Feeds ``tui_app.model.metrics.log_metrics.LogMetricParser`` (one parser per run, as the metrics view
keeps one per replica) with generated lines of each kind and prints lines/s, median (min-max)
of R runs, each run timing N lines with ``time.perf_counter`` around the loop:

1. Non-metric text (goal: at least 200k lines/s): what most of a trainer's log is. TensorFlow
   and absl start-up lines, Python logging lines, a traceback, pip output, the sample trainer's
   flood filler, 1 in 20 a tqdm bar redrawn with ``\\r`` and coloured with ANSI codes.
2. Keras epoch lines: ``Epoch N/M`` headers, then tf.keras verbose=1 as a log file gets it (one
   ETA update per line, then the epoch's final line), and Keras 3's one line per epoch (ANSI
   colours, 20 ``\\r`` frames).
3. key=value lines: the sample trainer's ``step N loss=...``, TF Estimator's ``loss = ...,
   step = ...``, a ``step=... loss=... lr=... grad_norm=...`` line.
4. Dict lines: Hugging Face Trainer's printed dicts and JSON lines.

Then the bounds on one line's work: a line of 500 ``key=value`` pairs against one of 2,000
(time per character should stay flat: linear, not quadratic), and a 1 MiB line (only the first
``SCAN_LIMIT`` characters are looked at). Pure Python, no service: it imports ``tui_app``, so
run it with the project's virtualenv (``.venv/bin/python``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable

from bench_report import Figure, Results, machine_line, print_table  # beside this script

from tui_app.model.metrics.log_metrics import SCAN_LIMIT, LogMetricParser

GOAL_NON_METRIC = 200_000
"""Lines/s of non-metric text (most of a log), so reading metrics never slows the log view."""


def non_metric(n: int) -> list[str]:
    """``n`` lines of the text trainers print around their metrics."""
    templates: list[Callable[[int], str]] = [
        lambda i: (
            f"2025-05-01 12:00:{i % 60:02d}.{i % 1000:03d}: I tensorflow/core/platform/"
            f"cpu_feature_guard.cc:182] This TensorFlow binary is optimized to use available CPU "
            f"instructions in performance-critical operations."
        ),
        lambda i: (
            f"I0501 12:00:{i % 60:02d}.{i:06d} 140213 checkpoint_manager.py:{i % 900} "
            f"Saving checkpoint to /tmp/job/model/ckpt-{i}"
        ),
        lambda i: (
            f"2025-05-01 12:00:00,{i % 1000:03d} INFO root Loading shard {i % 100} of 100 "
            f"from gs://bucket/data/train-{i % 100:05d}-of-00100.tfrecord"
        ),
        lambda i: (
            f"WARNING:tensorflow:Callback method `on_train_batch_end` is slow compared to "
            f"the batch time (batch time: 0.00{i % 10}s vs `on_train_batch_end` time: 0.01s)."
        ),
        lambda i: (
            f'  File "/usr/lib/python3.11/site-packages/trainer/task.py", line {i % 400}, in train'
        ),
        lambda i: f"    raise RuntimeError(f'Injected failure at worker {i % 8}')",
        lambda i: (
            f"Requirement already satisfied: numpy>=1.{i % 30} in /usr/lib/python3/dist-"
            f"packages (from trainer==0.1) (1.26.4)"
        ),
        lambda i: f"flood {i} " + "x" * 80,
        lambda i: f"master-replica-0: connecting to 2 parameter server(s): 127.0.0.1:{20000 + i}",
        lambda i: (
            f"Downloading model.safetensors: {i % 100}%|#####     | {i % 500}M/500M "
            f"[00:{i % 60:02d}<00:30, 16.6MB/s]"
        ),
        lambda i: f"{i % 7}it [00:01, 50.{i % 10}it/s]",
        lambda i: (
            f"2025-05-01 12:00:00 DEBUG urllib3.connectionpool Starting new HTTPS "
            f"connection ({i % 5}): storage.googleapis.com:443"
        ),
        lambda i: "Traceback (most recent call last):",
        lambda i: (
            f"tensorflow.python.framework.errors_impl.InvalidArgumentError: Graph execution "
            f"error: Detected at node 'loss/{i % 9}' defined at (most recent call last):"
        ),
        lambda i: f"  {i % 40:3d}/1000 [>.............................] examples read",
        lambda i: "",
        lambda i: "Epoch ends are summarised in the table below; see --help for the columns.",
        lambda i: f'Model: "sequential_{i % 4}"',
        lambda i: f" dense_{i % 4} (Dense)                (None, 128)               100480",
    ]
    lines = []
    for i in range(n):
        if i % 20 == 19:
            bar = f"\r\x1b[32m{i % 100:3d}%\x1b[0m|\x1b[34m{'█' * (i % 10)}\x1b[0m| {i}/10000"
            lines.append("\r" + bar * 3 + f" [00:{i % 60:02d}<00:12, 811.2it/s]")
        else:
            lines.append(templates[i % len(templates)](i))
    return lines


def keras_lines(n: int) -> list[str]:
    """About ``n`` lines of ``model.fit`` output, tf.keras (non-tty) and Keras 3 epochs."""
    lines: list[str] = []
    epoch = 0
    while len(lines) < n:
        epoch += 1
        lines.append(f"Epoch {epoch}/100000")
        if epoch % 2:
            for i in range(1, 100, 10):
                lines.append(
                    f"{i:3d}/100 [{'=' * (i * 30 // 100)}>{'.' * (29 - i * 30 // 100)}] - ETA: 1s"
                    f" - loss: {1 / (i + epoch):.4f} - accuracy: {0.5 + i / 250:.4f}"
                )
            lines.append(
                "100/100 [==============================] - 2s 20ms/step - loss: 0.3105 - "
                "accuracy: 0.8812 - val_loss: 0.2051 - val_accuracy: 0.9100"
            )
        else:
            frames = [
                f"\x1b[1m{i:3d}/100\x1b[0m \x1b[32m{'━' * (i // 5)}\x1b[0m\x1b[37m"
                f"{'━' * (20 - i // 5)}\x1b[0m \x1b[1m{i // 50}s\x1b[0m 20ms/step - accuracy: "
                f"{0.5 + i / 250:.4f} - loss: {1 / (i + epoch):.4f}"
                for i in range(5, 101, 5)
            ]
            lines.append("\r" + "\x08\x08\r".join(frames) + " - val_accuracy: 0.91 - val_loss: 0.2")
    return lines[:n]


def pair_lines(n: int) -> list[str]:
    """``n`` key=value lines: the sample trainer, TF Estimator, a generic training loop."""
    out = []
    for i in range(n):
        kind = i % 3
        if kind == 0:
            out.append(f"step {i} loss={1 / (i + 1):.6f} task=master-replica-0")
        elif kind == 1:
            out.append(f"INFO:tensorflow:loss = {1 / (i + 1):.7f}, step = {i} (0.512 sec)")
        else:
            out.append(
                f"2025-05-01 12:00:00,000 INFO step={i} loss={1 / (i + 1):.4f} lr=3.0e-04 "
                f"grad_norm={i % 7}.25 tok/s={1000 + i}"
            )
    return out


def dict_lines(n: int) -> list[str]:
    """``n`` dict lines: Hugging Face Trainer's printed dicts and JSON lines."""
    out = []
    for i in range(n):
        if i % 2:
            out.append(
                f"{{'loss': {1 / (i + 1):.4f}, 'grad_norm': {i % 9}.5, 'learning_rate': "
                f"4.9e-05, 'epoch': {i / 1000:.2f}}}"
            )
        else:
            out.append(f'{{"step": {i}, "loss": {1 / (i + 1):.5f}, "lr": 0.0001, "ok": true}}')
    return out


def rate(lines: list[str], runs: int) -> tuple[list[float], int]:
    """Lines/s of each run, and how many points the last run gave (a check it parsed)."""
    rates = []
    points = 0
    for _ in range(runs):
        parser = LogMetricParser()
        feed = parser.feed
        points = 0
        start = time.perf_counter()
        for line in lines:
            points += len(feed(line))
        rates.append(len(lines) / (time.perf_counter() - start))
    return rates, points


def per_call(line: str, runs: int, repeat: int) -> list[float]:
    """Seconds per ``feed(line)``, best of ``repeat`` calls, for each of ``runs`` runs."""
    out = []
    for _ in range(runs):
        parser = LogMetricParser()
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            parser.feed(line)
            best = min(best, time.perf_counter() - start)
        out.append(best)
    return out


def med_range(values: list[float], digits: int = 0, unit: str = "") -> str:
    return (
        f"{statistics.median(values):,.{digits}f} "
        f"({min(values):,.{digits}f}-{max(values):,.{digits}f}){unit}"
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lines", type=int, default=200_000, help="lines per run (default 200000)")
    p.add_argument("--runs", type=int, default=5, help="runs per figure (default 5)")
    args = p.parse_args()
    print(machine_line())
    print(f"python {sys.version.split()[0]}; SCAN_LIMIT {SCAN_LIMIT:,} characters")
    res = Results()
    section = "lines/s"
    for name, lines in (
        ("non-metric text", non_metric(args.lines)),
        ("Keras epoch lines", keras_lines(args.lines)),
        ("key=value lines", pair_lines(args.lines)),
        ("dict lines (HF, JSON)", dict_lines(args.lines)),
    ):
        rates, points = rate(lines, args.runs)
        goal = verdict = ""
        if name == "non-metric text":
            goal = f">= {GOAL_NON_METRIC:,}"
            ok = statistics.median(rates) >= GOAL_NON_METRIC and points == 0
            verdict = ("PASS" if ok else "FAIL") + f" ({points} points)"
        else:
            verdict = f"{points:,} points"
        res.add(Figure(section, name, args.runs, med_range(rates), goal, verdict))

    section = "one line's work"
    small = " ".join(f"k{i}={i * 0.001:.4f}" for i in range(500))
    large = " ".join(f"k{i}={i * 0.001:.4f}" for i in range(2000))
    assert len(large) < SCAN_LIMIT, "the 2,000-pair line must be read whole"
    t_small = per_call("step 1 " + small, args.runs, 20)
    t_large = per_call("step 1 " + large, args.runs, 20)
    ns_small = [t / len(small) * 1e9 for t in t_small]
    ns_large = [t / len(large) * 1e9 for t in t_large]
    res.add(
        Figure(section, "500 pairs: ms/line", args.runs, med_range([t * 1e3 for t in t_small], 2))
    )
    res.add(Figure(section, "500 pairs: ns/char", args.runs, med_range(ns_small, 1)))
    res.add(Figure(section, "2,000 pairs: ns/char", args.runs, med_range(ns_large, 1)))
    ratio = statistics.median(ns_large) / statistics.median(ns_small)
    res.add(
        Figure(
            section,
            "ns/char, 2,000 pairs / 500 pairs",
            args.runs,
            f"{ratio:.2f}",
            "< 1.5 (linear)",
            "PASS" if ratio < 1.5 else "FAIL",
        )
    )
    mib = "step 1 loss=0.5 " + "k=1 " * (1 << 18)
    res.add(
        Figure(
            section,
            "1 MiB key=value line: ms",
            args.runs,
            med_range([t * 1e3 for t in per_call(mib, args.runs, 3)], 2),
        )
    )
    junk = "\r".join("x" * 1023 for _ in range(1024))
    res.add(
        Figure(
            section,
            "1 MiB of \\r frames: ms",
            args.runs,
            med_range([t * 1e3 for t in per_call(junk, args.runs, 3)], 2),
        )
    )
    print_table(res, "value")
    return 0


if __name__ == "__main__":
    sys.exit(main())
