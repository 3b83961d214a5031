"""Hyperparameter tuning jobs on the live service: trials, their arguments, parallelism, failures,
the best trial, trial ids in the logs, cancel, early stopping and resume (issue 7)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import serve, unique_id
from tests.support.live_service import LiveService, basic_job

QUICK = ("--steps", "20", "--checkpoint-every", "10")


@pytest.fixture(scope="module")
def hp_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveService]:
    """Four slots: room for parallel single-replica trials, and a limit to respect."""
    yield from serve(tmp_path_factory, "svc-hp", "--slots", "4")


def _tuning_job(job_id: str, uri: str, hp: dict[str, Any], *args: str) -> dict[str, Any]:
    return basic_job(job_id, uri, *args, hyperparameters={"goal": "MINIMIZE", **hp})


def _trial_dir(svc: LiveService, job_id: str, trial: str) -> Path:
    [found] = list(svc.state_dir.rglob(f"{job_id}/trials/{trial}/master-replica-0"))
    return found


def _argv(svc: LiveService, job_id: str, trial: str) -> list[str]:
    spec = json.loads((_trial_dir(svc, job_id, trial) / "spec.json").read_text())
    return list(spec["argv"])


def _by_id(job: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["trialId"]: t for t in job["trainingOutput"]["trials"]}


def test_grid_runs_exactly_its_points_with_their_args_and_metrics(
    hp_service: LiveService, trainer_sdist: Path
) -> None:
    svc = hp_service
    uri = svc.stage(trainer_sdist)
    job_id = unique_id("grid")
    hp = {
        "algorithm": "GRID_SEARCH",
        "maxTrials": 10,  # more than the grid: the grid's 6 points run, once each
        "maxParallelTrials": 2,
        "params": [
            {"parameterName": "learning_rate", "type": "DISCRETE", "discreteValues": [0.02, 0.1]},
            {"parameterName": "batch_size", "type": "INTEGER", "minValue": 4, "maxValue": 6},
        ],
    }
    svc.client().create(_tuning_job(job_id, uri, hp, *QUICK))
    job = svc.wait_state(job_id, timeout=90)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    out = job["trainingOutput"]
    assert out["isHyperparameterTuningJob"] is True
    assert out["hyperparameterMetricTag"] == "training/hptuning/metric"
    assert out["completedTrialCount"] == "6"
    trials = _by_id(job)
    assert sorted(trials, key=int) == ["1", "2", "3", "4", "5", "6"]
    points = [
        (t["hyperparameters"]["learning_rate"], t["hyperparameters"]["batch_size"])
        for t in sorted(trials.values(), key=lambda t: int(t["trialId"]))
    ]
    assert points == [(lr, b) for lr in ("0.02", "0.1") for b in ("4", "5", "6")]
    best_id, best_value = "", float("inf")
    for trial_id, t in trials.items():
        assert t["state"] == "SUCCEEDED" and t["startTime"] and t["endTime"]
        argv = _argv(svc, job_id, trial_id)
        lr, batch = t["hyperparameters"]["learning_rate"], t["hyperparameters"]["batch_size"]
        assert argv[-2:] == [f"--learning_rate={lr}", f"--batch_size={batch}"]
        spec = json.loads((_trial_dir(svc, job_id, trial_id) / "spec.json").read_text())
        env = spec["env"]
        assert env["CLOUD_ML_TRIAL_ID"] == trial_id
        assert json.loads(env["TF_CONFIG"])["task"]["trial"] == trial_id
        metric_file = Path(env["CLOUD_ML_HP_METRIC_FILE"])
        assert _trial_dir(svc, job_id, trial_id) in metric_file.parents
        last = json.loads(metric_file.read_text().splitlines()[-1])
        assert last["trial"] == trial_id
        assert t["finalMetric"] == {
            "trainingStep": last["global_step"],
            "objectiveValue": float(last["training/hptuning/metric"]),
        }
        # Every report is in allMetrics, in order, ending with the final one (a view draws it).
        reports = [json.loads(line) for line in metric_file.read_text().splitlines()]
        assert t["allMetrics"] == [
            {
                "trainingStep": r["global_step"],
                "objectiveValue": float(r["training/hptuning/metric"]),
            }
            for r in reports
        ]
        if t["finalMetric"]["objectiveValue"] < best_value:
            best_id, best_value = trial_id, t["finalMetric"]["objectiveValue"]
    # The best trial by the metric files: a larger learning rate converges in 20 steps.
    assert trials[best_id]["hyperparameters"]["learning_rate"] == "0.1"

    # Every trial's replica lines carry its id; parallel trials never exceed maxParallelTrials.
    entries = svc.entries(
        f'resource.labels.job_id="{job_id}" AND resource.labels.task_name="master-replica-0"'
    )
    spans: dict[str, list[str]] = {}
    for e in entries:
        trial = e["labels"]["ml.googleapis.com/trial_id"]
        spans.setdefault(trial, []).append(e["timestamp"])
    assert set(spans) == set(trials)
    events = sorted(
        [(min(ts), 1) for ts in spans.values()] + [(max(ts), -1) for ts in spans.values()],
        key=lambda ev: (ev[0], ev[1]),
    )
    running = peak = 0
    for _, step in events:
        running += step
        peak = max(peak, running)
    assert peak <= 2


def test_parallel_trials_stay_within_max_parallel(
    hp_service: LiveService, trainer_sdist: Path
) -> None:
    svc = hp_service
    uri = svc.stage(trainer_sdist)
    job_id = unique_id("par")
    hp = {
        "algorithm": "RANDOM_SEARCH",
        "maxTrials": 5,
        "maxParallelTrials": 3,
        "params": [
            {
                "parameterName": "learning_rate",
                "type": "DOUBLE",
                "minValue": 0.01,
                "maxValue": 0.2,
                "scaleType": "UNIT_LOG_SCALE",
            }
        ],
    }
    client = svc.client()
    client.create(_tuning_job(job_id, uri, hp, "--steps", "30", "--sleep", "0.02"))
    peak = 0
    while True:
        job = client.get(job_id)
        running = [
            t for t in job.get("trainingOutput", {}).get("trials", []) if t["state"] == "RUNNING"
        ]
        peak = max(peak, len(running))
        if job["state"] in ("SUCCEEDED", "FAILED", "CANCELLED"):
            break
        time.sleep(0.05)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    assert 2 <= peak <= 3
    for t in job["trainingOutput"]["trials"]:
        assert 0.01 <= float(t["hyperparameters"]["learning_rate"]) <= 0.2


def test_failed_trials_count_toward_max_failed_trials(
    hp_service: LiveService, trainer_sdist: Path
) -> None:
    svc = hp_service
    uri = svc.stage(trainer_sdist)
    client = svc.client()
    fails = {"parameterName": "fail_at_step", "type": "DISCRETE", "discreteValues": [5, 1000]}
    # Below the limit: the failed trial is FAILED, the job still succeeds.
    ok_id = unique_id("somefail")
    hp = {"algorithm": "GRID_SEARCH", "maxTrials": 2, "maxFailedTrials": 2, "params": [fails]}
    client.create(_tuning_job(ok_id, uri, hp, *QUICK))
    job = svc.wait_state(ok_id, timeout=60)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    trials = _by_id(job)
    assert trials["1"]["state"] == "FAILED" and trials["2"]["state"] == "SUCCEEDED"
    assert job["trainingOutput"]["completedTrialCount"] == "1"
    # Reaching the limit fails the job and names the count; no further trial starts.
    bad_id = unique_id("allfail")
    hp = {
        "algorithm": "GRID_SEARCH",
        "maxTrials": 4,
        "maxFailedTrials": 2,
        "params": [
            {"parameterName": "fail_at_step", "type": "INTEGER", "minValue": 3, "maxValue": 6}
        ],
    }
    client.create(_tuning_job(bad_id, uri, hp, *QUICK))
    job = svc.wait_state(bad_id, timeout=60)
    assert job["state"] == "FAILED"
    assert "2 trials failed" in job["errorMessage"]
    assert "maxFailedTrials (2)" in job["errorMessage"]
    assert [t["state"] for t in job["trainingOutput"]["trials"]] == ["FAILED", "FAILED"]


def test_cancel_stops_running_trials(hp_service: LiveService, trainer_sdist: Path) -> None:
    svc = hp_service
    uri = svc.stage(trainer_sdist)
    client = svc.client()
    job_id = unique_id("hpcancel")
    hp = {
        "maxTrials": 4,
        "maxParallelTrials": 2,
        "params": [
            {"parameterName": "batch_size", "type": "INTEGER", "minValue": 4, "maxValue": 64}
        ],
    }
    client.create(_tuning_job(job_id, uri, hp, "--steps", "100000", "--sleep", "0.05"))
    deadline = time.monotonic() + 30
    while True:
        job = client.get(job_id)
        running = [
            t for t in job.get("trainingOutput", {}).get("trials", []) if t["state"] == "RUNNING"
        ]
        if len(running) == 2:
            break
        assert time.monotonic() < deadline, job
        time.sleep(0.1)
    time.sleep(0.5)
    client.cancel(job_id)
    job = svc.wait_state(job_id, timeout=30)
    assert job["state"] == "CANCELLED"
    trials = job["trainingOutput"]["trials"]
    assert len(trials) == 2
    assert all(t["state"] == "CANCELLED" and t["endTime"] for t in trials)
    for t in trials:  # each replica's supervisor recorded how its process ended
        status = json.loads((_trial_dir(svc, job_id, t["trialId"]) / "status.json").read_text())
        assert status.get("signal") or status.get("exit_code") is not None


def test_early_stopping_and_resume(hp_service: LiveService, trainer_sdist: Path) -> None:
    svc = hp_service
    uri = svc.stage(trainer_sdist)
    client = svc.client()
    # Grid order puts three good trials first; the bad learning rate is stopped at a checkpoint.
    params = [
        {
            "parameterName": "learning_rate",
            "type": "CATEGORICAL",
            "categoricalValues": ["0.08", "0.0003"],
        },
        {"parameterName": "seed", "type": "INTEGER", "minValue": 1, "maxValue": 3},
    ]
    first = unique_id("early")
    hp = {
        "algorithm": "GRID_SEARCH",
        "maxTrials": 5,
        "enableTrialEarlyStopping": True,
        "params": params,
    }
    args = ("--steps", "400", "--checkpoint-every", "20", "--sleep", "0.01")
    client.create(_tuning_job(first, uri, hp, *args))
    job = svc.wait_state(first, timeout=90)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    trials = _by_id(job)
    for t in ("1", "2", "3"):
        assert not trials[t].get("isTrialStoppedEarly")
        assert trials[t]["finalMetric"]["trainingStep"] == "400"
    for t in ("4", "5"):
        assert trials[t]["isTrialStoppedEarly"] is True
        assert trials[t]["state"] == "SUCCEEDED"
        assert int(trials[t]["finalMetric"]["trainingStep"]) < 400
    # Resume: the earlier trials count toward maxTrials; only the grid's last point runs.
    second = unique_id("resumed")
    hp = {
        "algorithm": "GRID_SEARCH",
        "maxTrials": 6,
        "resumePreviousJobId": first,
        "params": params,
    }
    client.create(_tuning_job(second, uri, hp, *QUICK))
    job = svc.wait_state(second, timeout=60)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    trials = _by_id(job)
    assert sorted(trials, key=int) == ["1", "2", "3", "4", "5", "6"]
    assert trials["6"]["hyperparameters"] == {"learning_rate": "0.0003", "seed": "3"}
    assert job["trainingOutput"]["completedTrialCount"] == "6"
    assert not list(svc.state_dir.rglob(f"{second}/trials/1"))  # carried over, not rerun


def test_resume_of_unknown_job_fails_it(hp_service: LiveService, trainer_sdist: Path) -> None:
    svc = hp_service
    uri = svc.stage(trainer_sdist)
    hp = {
        "resumePreviousJobId": "no_such_job",
        "params": [{"parameterName": "seed", "type": "INTEGER", "minValue": 1, "maxValue": 3}],
    }
    job_id = unique_id("noresume")
    svc.client().create(_tuning_job(job_id, uri, hp))
    job = svc.wait_state(job_id, timeout=30)
    assert job["state"] == "FAILED"
    assert "no_such_job does not exist" in job["errorMessage"]
