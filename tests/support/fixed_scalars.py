"""Fixed metric curves for the metrics view's tests: the view's data feed, not the thing under test.

Snapshots need the same curves every run, which a live trainer cannot give; ``JobsApp(scalars=
FixedScalars())`` hands the view these instead of ``JobScalars``. They answer ``poll()`` as
``JobScalars`` does (``ScalarPoll``: batches, one status line per source, the job, ended), from
the fixed jobs of tests/support/fixed_jobs.py. ``FedScalars`` is the live kind: a test adds
points and ends the job between polls. Behaviour against the real service and a real trainer is
tested too (tests/pilot/test_metrics_live.py).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

import numpy as np

from tests.support.fixed_jobs import JOBS, TUNING_JOBS
from tui_app.api.errors import ApiCallError
from tui_app.api.job_scalars import ScalarBatch, ScalarPoll, SourceStatus
from tui_app.model.metrics.metric_series import SeriesKey

MNIST_ID = "mnist_20261122_083000"
"""A running Keras-like job: ``epoch_loss`` and ``epoch_accuracy`` for train and validation,
``lr`` for train, and a loss that blew up twice (NaN, inf) in validation."""
TUNING_ID = "hptune_20261122_084000"
"""The running tuning job (MINIMIZE rmse): each trial's rmse reports; trial 5 is best."""
START = datetime(2026, 11, 22, 8, 31, 10, tzinfo=UTC).timestamp()
STEPS = np.arange(0, 1001, 10)


def _job(job_id: str) -> dict[str, Any]:
    for job in (*JOBS, *TUNING_JOBS):
        if job["jobId"] == job_id:
            return job
    raise ApiCallError("The specified job was not found.", 404, "NOT_FOUND")


def _curve(seed: int, start: float, end: float, noise: float) -> list[float]:
    """A loss-like curve from ``start`` to about ``end`` over ``STEPS``, with seeded noise."""
    rng = np.random.default_rng(seed)
    decay = np.exp(-STEPS / 250.0)
    values = end + (start - end) * decay + rng.normal(0.0, noise, len(STEPS)) * (0.3 + decay)
    return [float(v) for v in values]


def _batch(key: SeriesKey, values: list[float], steps: Iterable[int] = STEPS) -> ScalarBatch:
    steps = [int(s) for s in steps]
    return ScalarBatch(key, steps, [START + 1.8 * s for s in steps], values)


def mnist_batches() -> list[ScalarBatch]:
    validation = _curve(2, 2.4, 0.12, 0.03)
    validation[40] = math.nan
    validation[71] = math.inf
    accuracy = [1.0 - v / 2.6 for v in _curve(3, 2.3, 0.09, 0.01)]
    return [
        _batch(SeriesKey("events", "train", "epoch_loss"), _curve(1, 2.3, 0.08, 0.04)),
        _batch(SeriesKey("events", "validation", "epoch_loss"), validation),
        _batch(SeriesKey("events", "train", "epoch_accuracy"), accuracy),
        _batch(
            SeriesKey("events", "validation", "epoch_accuracy"),
            [1.0 - v / 2.6 for v in _curve(4, 2.4, 0.13, 0.01)],
        ),
        _batch(SeriesKey("events", "train", "lr"), [0.01 * 0.5 ** (s // 250) for s in STEPS]),
    ]


def tuning_batches() -> list[ScalarBatch]:
    """rmse by trial, ending at each finished trial's final objective (trial 10 is halfway)."""
    out: list[ScalarBatch] = []
    every = STEPS
    for trial in TUNING_JOBS[0]["trainingOutput"]["trials"]:
        final = trial.get("finalMetric", {}).get("objectiveValue")
        trial_id = trial["trialId"]
        if final is None:
            if trial_id != "10":
                continue
            final, steps = 0.0517, every[every <= 600]
        else:
            steps = every[every <= int(trial["finalMetric"]["trainingStep"])]
        values = _curve(100 + int(trial_id), 1.1, final, 0.01)[: len(steps)]
        values[-1] = final
        key = SeriesKey("hypertune", "", "rmse", trial_id)
        out.append(ScalarBatch(key, [int(s) for s in steps], [math.nan] * len(steps), values))
    return out


class FixedScalar:
    """One job's fixed curves: everything in the first poll, which says the job has ended (so
    the view stops polling and a snapshot is of a still picture)."""

    def __init__(self, job_id: str, trial: str | None) -> None:
        self.job = _job(job_id)
        self.trial = trial
        self.polls = 0

    def poll(self) -> ScalarPoll:
        self.polls += 1
        job_id = self.job["jobId"]
        if job_id == MNIST_ID:
            batches = mnist_batches() if self.polls == 1 else []
            statuses = [
                SourceStatus(
                    "events",
                    f"2 event files under gs://demo-bucket/{job_id} (runs: train, validation).",
                ),
                SourceStatus("logs", "Log lines: no longer read (event files found)."),
            ]
        elif job_id == TUNING_ID:
            batches = tuning_batches() if self.polls == 1 else []
            if self.trial is not None:
                batches = [b for b in batches if b.key.trial == self.trial]
            statuses = [
                SourceStatus(
                    "events",
                    "No TensorFlow event files under gs://demo-bucket/hptune yet; "
                    "looking again every 1 s.",
                ),
                SourceStatus("hypertune", "Hypertune: rmse reported by 10 trials."),
            ]
        else:
            batches = []
            statuses = [
                SourceStatus(
                    "events",
                    "gs://demo-bucket/out: 403 Forbidden: the caller may not list the bucket.",
                    problem=True,
                )
            ]
        return ScalarPoll(batches, statuses, self.job, ended=True)


class FixedScalars:
    """``JobsApp(scalars=FixedScalars())``: fixed curves for the fixed jobs."""

    def __init__(self) -> None:
        self.made: list[FixedScalar] = []

    def __call__(self, job_id: str, trial: str | None) -> FixedScalar:
        source = FixedScalar(job_id, trial)
        self.made.append(source)
        return source


class FedScalars:
    """A live source a test drives: ``add`` points, ``end`` the job; ``poll`` hands over what
    was added since the last poll, as ``JobScalars`` does."""

    def __init__(self, job: dict[str, Any]) -> None:
        self.job = dict(job)
        self._pending: list[ScalarBatch] = []
        self._lock = threading.Lock()
        self.polls = 0
        self.ended_polls = 0

    def __call__(self, job_id: str, trial: str | None) -> FedScalars:
        return self

    def add(
        self,
        key: SeriesKey,
        steps: list[int],
        values: list[float],
        wall_times: list[float] | None = None,
    ) -> None:
        """Points for the next poll; wall times ``START + step`` unless given (a trainer that
        resumed writes its steps again later: a test of that gives them)."""
        walls = wall_times if wall_times is not None else [START + s for s in steps]
        with self._lock:
            self._pending.append(ScalarBatch(key, steps, walls, values))

    def end(self) -> None:
        with self._lock:
            self.job = {**self.job, "state": "SUCCEEDED"}

    def poll(self) -> ScalarPoll:
        with self._lock:
            ended = self.job["state"] == "SUCCEEDED"
            batches, self._pending = self._pending, []
            self.polls += 1
            self.ended_polls += ended
            status = SourceStatus("logs", "Log lines: metrics printed by master-replica-0.")
            return ScalarPoll(batches, [status], dict(self.job), ended=ended)
