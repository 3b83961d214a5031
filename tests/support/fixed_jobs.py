"""Fixed job data for snapshot tests: the app's data feed, not the thing under test.

Snapshots check what the screens draw; they need the same jobs and the same clock every run, which
a live service cannot give (createTime is now). Everything else is tested against the real service.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from tui_app.api.connection import Connection
from tui_app.api.errors import ApiCallError
from tui_app.shell.jobs_source import JobsSource

BASE = {
    "region": "us-central1",
    "pythonModule": "trainer.task",
    "packageUris": ["gs://demo-bucket/packages/trainer-0.1.0.tar.gz"],
}
CUSTOM = {
    **BASE,
    "scaleTier": "CUSTOM",
    "masterType": "n1-standard-8",
    "workerType": "n1-standard-8",
    "workerCount": "2",
    "parameterServerType": "standard",
    "parameterServerCount": "1",
    "workerConfig": {"acceleratorConfig": {"count": "1", "type": "NVIDIA_TESLA_T4"}},
}
TRACEBACK = (
    "The replica worker 1 exited with a non-zero status of 1.\n"
    "Traceback (most recent call last):\n"
    '  File "/trainer/task.py", line 88, in <module>\n'
    "    main()\n"
    "RuntimeError: loss is NaN at step 1200"
)


def _job(job_id: str, state: str, created: str, **extra: Any) -> dict[str, Any]:
    job: dict[str, Any] = {
        "jobId": job_id,
        "state": state,
        "createTime": created,
        "etag": "AAAAAAAAAAA=",
        "trainingInput": dict(BASE),
    }
    job.update(extra)
    return job


JOBS: list[dict[str, Any]] = [
    _job(
        "mnist_20261122_083000",
        "RUNNING",
        "2026-11-22T08:30:00Z",
        startTime="2026-11-22T08:31:10Z",
        labels={"owner": "ann"},
        trainingOutput={"consumedMLUnits": 0.5},
    ),
    _job(
        "mnist_20261121_170000",
        "SUCCEEDED",
        "2026-11-21T17:00:00Z",
        startTime="2026-11-21T17:01:00Z",
        endTime="2026-11-21T17:41:30Z",
        trainingOutput={"consumedMLUnits": 0.3821},
    ),
    _job(
        "mnist_20261120_090000",
        "CANCELLED",
        "2026-11-20T09:00:00Z",
        startTime="2026-11-20T09:00:40Z",
        endTime="2026-11-20T09:05:00Z",
        errorMessage="Job cancelled by user.",
    ),
    _job(
        "census_dist_20261122_070000",
        "FAILED",
        "2026-11-22T07:00:00Z",
        startTime="2026-11-22T07:00:30Z",
        endTime="2026-11-22T07:20:00Z",
        errorMessage=TRACEBACK,
        trainingInput=CUSTOM,
        labels={"owner": "bob", "team": "ads"},
        trainingOutput={"consumedMLUnits": 2.9},
    ),
    _job(
        "census_dist_20261122_090000",
        "QUEUED",
        "2026-11-22T09:00:00Z",
        jobPosition="2",
        trainingInput=CUSTOM,
    ),
    _job(
        "bert_large_20261122_091500",
        "PREPARING",
        "2026-11-22T09:15:00Z",
        trainingInput={**BASE, "scaleTier": "STANDARD_1"},
    ),
    _job(
        "bert_large_20261122_092000",
        "CANCELLING",
        "2026-11-22T09:20:00Z",
        startTime="2026-11-22T09:21:00Z",
        trainingInput={**BASE, "scaleTier": "BASIC_GPU"},
    ),
    _job(
        "adhoc",
        "SUCCEEDED",
        "2026-11-19T12:00:00Z",
        startTime="2026-11-19T12:00:05Z",
        endTime="2026-11-19T12:03:05Z",
    ),
]

RESTARTS: list[dict[str, Any]] = [
    {
        "taskName": "master-replica-0",
        "count": 1,
        "lastCause": "its machine restarted",
        "lastTime": "2026-11-22T09:12:00Z",
    },
    {
        "taskName": "worker-replica-1",
        "count": 2,
        "lastCause": "it exited with status 3",
        "lastTime": "2026-11-22T09:20:00Z",
    },
]
"""``replicaRestarts`` as the local service writes it (issue 42): three restarts in all."""
RESTARTED_JOB = _job(
    "restarted_20261122_090500",
    "RUNNING",
    "2026-11-22T09:05:00Z",
    startTime="2026-11-22T09:05:30Z",
    trainingInput=CUSTOM,
    replicaRestarts=RESTARTS,
)
"""A live job whose replicas were restarted; kept out of JOBS, whose snapshots have none."""


class FixedClient:
    """Answers like JobsClient from a fixed list."""

    def __init__(self, jobs: list[dict[str, Any]]) -> None:
        self.jobs = {j["jobId"]: j for j in jobs}

    def list_jobs(self, filter_text: str | None = None) -> list[dict[str, Any]]:
        return list(self.jobs.values())

    def iter_jobs(self, filter_text: str | None = None) -> Iterator[dict[str, Any]]:
        yield from self.jobs.values()

    def get(self, job_id: str) -> dict[str, Any]:
        if job_id not in self.jobs:
            raise ApiCallError("The specified job was not found.", 404, "NOT_FOUND")
        return self.jobs[job_id]


class FixedSource(JobsSource):
    def __init__(self, jobs: list[dict[str, Any]] | None = None) -> None:
        super().__init__(self._no_connect, "demo-project")
        self.fixed = FixedClient(JOBS if jobs is None else jobs)
        self.label = "local (127.0.0.1:8470)"

    @staticmethod
    def _no_connect() -> Connection:
        raise AssertionError("fixed data never connects")

    def call(self, fn: Callable[[Any], Any]) -> Any:
        return fn(self.fixed)


# -- hyperparameter tuning jobs (issue 7) ------------------------------------------------------


def _trial(
    trial_id: str,
    state: str,
    start: str | None,
    end: str | None,
    params: dict[str, str],
    objective: float | None = None,
    step: int | None = None,
    **extra: Any,
) -> dict[str, Any]:
    trial: dict[str, Any] = {"trialId": trial_id, "hyperparameters": params, "state": state}
    if start:
        trial["startTime"] = f"2026-11-22T{start}Z"
    if end:
        trial["endTime"] = f"2026-11-22T{end}Z"
    if objective is not None:
        trial["finalMetric"] = {"trainingStep": str(step), "objectiveValue": objective}
    trial.update(extra)
    return trial


def _hp(lr: str, units: str, opt: str) -> dict[str, str]:
    return {"learning-rate": lr, "hidden-units": units, "optimizer": opt}


TUNING_INPUT = {
    **BASE,
    "args": ["--train-steps", "1000"],
    "hyperparameters": {
        "goal": "MINIMIZE",
        "hyperparameterMetricTag": "rmse",
        "maxTrials": 12,
        "maxParallelTrials": 2,
        "maxFailedTrials": 3,
        "algorithm": "ALGORITHM_UNSPECIFIED",
        "params": [
            {
                "parameterName": "learning-rate",
                "type": "DOUBLE",
                "minValue": 0.0001,
                "maxValue": 0.5,
                "scaleType": "UNIT_LOG_SCALE",
            },
            {"parameterName": "hidden-units", "type": "DISCRETE", "discreteValues": [32, 64, 128]},
            {
                "parameterName": "optimizer",
                "type": "CATEGORICAL",
                "categoricalValues": ["sgd", "adam"],
            },
        ],
    },
}
TUNING_TRIALS = [
    _trial("1", "SUCCEEDED", "08:41:00", "08:44:20", _hp("0.0123", "64", "adam"), 0.4210, 1000),
    _trial("2", "SUCCEEDED", "08:41:05", "08:45:10", _hp("0.31", "32", "sgd"), 0.8871, 1000),
    _trial("3", "SUCCEEDED", "08:44:30", "08:47:40", _hp("0.0042", "128", "adam"), 0.1377, 1000),
    _trial("4", "FAILED", "08:45:20", "08:45:50", _hp("0.48", "128", "sgd")),
    _trial("5", "SUCCEEDED", "08:46:00", "08:49:30", _hp("0.0031", "128", "adam"), 0.0132, 1000),
    _trial(
        "6",
        "SUCCEEDED",
        "08:47:50",
        "08:49:00",
        _hp("0.09", "32", "sgd"),
        0.6502,
        400,
        isTrialStoppedEarly=True,
    ),
    _trial("7", "SUCCEEDED", "08:49:40", "08:53:00", _hp("0.0008", "64", "adam"), 0.0915, 1000),
    _trial("8", "SUCCEEDED", "08:49:10", "08:52:15", _hp("0.0019", "128", "sgd"), 0.2544, 1000),
    _trial("9", "SUCCEEDED", "08:53:10", "08:56:45", _hp("0.0025", "128", "adam"), 0.0297, 1000),
    _trial(
        "10",
        "RUNNING",
        "09:27:30",
        None,
        _hp("0.0036", "128", "adam"),
        allMetrics=[
            {"trainingStep": "200", "objectiveValue": 0.3121},
            {"trainingStep": "600", "objectiveValue": 0.0517},
        ],
    ),
    _trial("11", "RUNNING", "09:28:40", None, _hp("0.0061", "64", "adam")),
]
TUNING_JOBS: list[dict[str, Any]] = [
    _job(
        "hptune_20261122_084000",
        "RUNNING",
        "2026-11-22T08:40:00Z",
        startTime="2026-11-22T08:40:50Z",
        labels={"owner": "ann"},
        trainingInput=TUNING_INPUT,
        trainingOutput={
            "isHyperparameterTuningJob": True,
            "hyperparameterMetricTag": "rmse",
            "completedTrialCount": "9",
            "consumedMLUnits": 1.25,
            "trials": TUNING_TRIALS,
        },
    ),
    _job(
        "hptune_20261122_075500",
        "SUCCEEDED",
        "2026-11-22T07:55:00Z",
        startTime="2026-11-22T07:55:40Z",
        endTime="2026-11-22T08:10:00Z",
        trainingInput={
            **BASE,
            "hyperparameters": {
                "goal": "MAXIMIZE",
                "maxTrials": 3,
                "params": [
                    {"parameterName": "layers", "type": "INTEGER", "minValue": 1, "maxValue": 4}
                ],
            },
        },
        trainingOutput={
            "isHyperparameterTuningJob": True,
            "completedTrialCount": "3",
            "trials": [
                _trial("1", "SUCCEEDED", "08:00:00", "08:05:00", {"layers": "1"}, 0.71, 500),
                _trial("2", "SUCCEEDED", "08:00:00", "08:06:00", {"layers": "4"}, 0.93, 500),
                _trial("3", "SUCCEEDED", "08:06:00", "08:09:00", {"layers": "2"}, 0.88, 500),
            ],
        },
    ),
]
