"""A power cut: the service and every replica process killed -9 at once, then the service
started again on the same state dir and port, as after a reboot.

The platform started a replica whose machine went away again, with the same task and
``TF_CONFIG``, and a trainer that checkpoints to ``--job-dir`` went on from its last checkpoint
(``tui_app/model/running/restarts.py``). The sample trainer checkpoints every N steps and says
"Resumed from checkpoint at step S" when it finds one.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

import psutil
import pytest

from tests.conftest import unique_id
from tests.support.live_service import CLUSTER, PROJECT, LiveService, basic_job, free_port
from tests.support.restartable import (
    Restartable,
    alive,
    assert_every_line_once,
    file_lines,
    steps_in,
    stored_lines,
    supervisors,
    task_names,
    wait_for,
)
from tui_app.local.execution.cluster_env import REPLICA_MARKER

CLUSTER_WITH_PS = {**CLUSTER, "workerCount": "1"}
"""A master, a worker and a parameter server."""


def _job_processes(svc: LiveService, job_id: str) -> list[psutil.Process]:
    """Every live process of the job's replicas: supervisors (by their pid files) and whatever
    carries a replica's work dir in its environment (trainers and their children)."""
    base = svc.state_dir / "jobs" / PROJECT / job_id
    found = {pid: psutil.Process(pid) for pid in supervisors(svc, job_id).values() if alive(pid)}
    for proc in psutil.process_iter(["environ"]):
        marker = (proc.info.get("environ") or {}).get(REPLICA_MARKER, "")
        if marker.startswith(str(base)) and proc.pid != os.getpid():
            found[proc.pid] = proc
    return list(found.values())


def power_cut(r: Restartable, job_id: str) -> None:
    """kill -9 the service and every process of the job's replicas, as a power cut does."""
    procs = _job_processes(r.svc, job_id)
    assert procs, "the job runs no process"
    os.kill(r.svc.proc.pid, signal.SIGKILL)
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.send_signal(signal.SIGKILL)
    r.svc.proc.wait(10)
    wait_for(lambda: not any(alive(p.pid) for p in procs), what="every replica process gone")


def _job_dir(r: Restartable, job_id: str) -> str:
    path = r.state.parent / "job-dir" / job_id
    path.mkdir(parents=True, exist_ok=True)
    return str(path)


@pytest.mark.parametrize(
    ("case", "training"),
    [("one_replica", {}), ("master_worker_ps", CLUSTER_WITH_PS)],
)
def test_a_power_cut_restarts_the_lost_replicas_and_the_job_resumes(
    restartable_service: tuple[Restartable, str], case: str, training: dict[str, str]
) -> None:
    r, uri = restartable_service
    job_id = unique_id(f"power_{case}")
    args = ("--steps", "200", "--sleep", "0.03", "--log-every", "1", "--checkpoint-every", "20")
    body = basic_job(job_id, uri, *args, jobDir=_job_dir(r, job_id), **training)
    r.svc.client().create(body)
    r.svc.wait_state(job_id, ("RUNNING",), timeout=60)
    ckpts = r.state.parent / "job-dir" / job_id / "checkpoints"
    wait_for(lambda: any(ckpts.glob("ckpt-*.json")), timeout=60, what="a checkpoint")
    tasks = task_names(r.svc, job_id)

    power_cut(r, job_id)
    svc = r.restart()

    job = svc.wait_state(job_id, timeout=120)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    restarts = {e["taskName"]: e for e in job.get("replicaRestarts") or []}
    assert set(restarts) == set(tasks), job.get("replicaRestarts")
    assert all(e["count"] == 1 for e in restarts.values())
    assert all(e["lastCause"] == "its machine restarted" for e in restarts.values())
    notes = stored_lines(svc, job_id, "service")
    for task in tasks:
        line = f"{task} restarted (1 of 5): its machine restarted; resuming"
        assert line in notes, notes
    out, _ = file_lines(svc, job_id, "master-replica-0")
    assert any(line.startswith("Resumed from checkpoint at step ") for line in out), out[-20:]
    # The master's steps after the resume go on from the checkpoint, not from 0.
    at = next(i for i, line in enumerate(out) if line.startswith("Resumed from checkpoint"))
    resumed = int(out[at].rsplit(" ", 1)[1])
    assert resumed >= 20
    # (With parameter servers the step is global: the worker's steps count too.)
    assert resumed < steps_in(out[at:])[0] <= resumed + 5
    # Every line of every replica, before and after the cut, stored once: none lost, none twice.
    assert_every_line_once(svc, job_id, tasks, resumed=True)


def test_a_cancel_before_the_restart_wins(restartable_service: tuple[Restartable, str]) -> None:
    r, uri = restartable_service
    job_id = unique_id("power_cancel")
    args = ("--steps", "100000", "--sleep", "0.05", "--ignore-sigterm")
    r.svc.client().create(basic_job(job_id, uri, *args))
    r.svc.wait_state(job_id, ("RUNNING",), timeout=60)
    wait_for(lambda: len(supervisors(r.svc, job_id)) == 1, what="the supervisor")
    r.svc.client().cancel(job_id)  # CANCELLING: the trainer ignores SIGTERM for the grace
    power_cut(r, job_id)
    svc = r.restart()
    job = svc.wait_state(job_id, timeout=30)
    assert job["state"] == "CANCELLED", job.get("errorMessage")
    assert not job.get("replicaRestarts")
    assert not _job_processes(svc, job_id)


def test_a_service_back_on_another_port_gives_the_restarted_replica_its_address(
    restartable_service: tuple[Restartable, str],
) -> None:
    """The embedded service takes a free port each start: a replica started again must write
    its gs:// job dir through the new one (its spec's address and credential are renewed)."""
    r, uri = restartable_service
    job_id = unique_id("power_port")
    args = ("--steps", "150", "--sleep", "0.03", "--log-every", "1", "--checkpoint-every", "20")
    r.svc.client().create(basic_job(job_id, uri, *args, jobDir=f"gs://test-bucket/{job_id}"))
    r.svc.wait_state(job_id, ("RUNNING",), timeout=60)
    ckpts = r.state / "gcs" / "test-bucket" / job_id / "checkpoints"
    wait_for(lambda: any(ckpts.glob("ckpt-*.json")), timeout=60, what="a checkpoint")
    power_cut(r, job_id)
    old = r.port
    r.port = free_port()
    assert r.port != old
    svc = r.restart()
    job = svc.wait_state(job_id, timeout=120)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    out, _ = file_lines(svc, job_id, "master-replica-0")
    assert any(line.startswith("Resumed from checkpoint at step ") for line in out), out[-10:]
    assert (r.state / "gcs" / "test-bucket" / job_id / "checkpoints" / "ckpt-150.json").exists()


def test_a_power_cut_under_a_tuning_job_runs_its_cut_off_trials_again_and_the_study_goes_on(
    restartable_service: tuple[Restartable, str],
) -> None:
    """Two trials running when the power goes: after the restart each runs again with its id
    and values, resumes from its own checkpoint (the trainer keeps them under its trial's job
    dir), and the study goes on to its third trial. Every replica line is stored once."""
    r, uri = restartable_service
    job_id = unique_id("power_tuning")
    hp = {
        "goal": "MINIMIZE",
        "algorithm": "GRID_SEARCH",
        "maxTrials": 3,
        "maxParallelTrials": 2,
        "params": [
            {"parameterName": "learning_rate", "type": "DISCRETE", "discreteValues": [0.02, 0.1]},
            {"parameterName": "batch_size", "type": "INTEGER", "minValue": 4, "maxValue": 5},
        ],
    }
    args = ("--steps", "150", "--sleep", "0.03", "--log-every", "1", "--checkpoint-every", "20")
    body = basic_job(job_id, uri, *args, jobDir=_job_dir(r, job_id), hyperparameters=hp)
    r.svc.client().create(body)
    r.svc.wait_state(job_id, ("RUNNING",), timeout=60)
    job_dir = r.state.parent / "job-dir" / job_id
    for trial in ("1", "2"):
        ckpts = job_dir / trial / "checkpoints"
        wait_for(lambda c=ckpts: any(c.glob("ckpt-*.json")), timeout=60, what=f"trial {trial}")
    before = {t["trialId"]: t for t in r.svc.client().get(job_id)["trainingOutput"]["trials"]}
    assert {t["state"] for t in before.values()} == {"RUNNING"}

    power_cut(r, job_id)
    svc = r.restart()

    job = svc.wait_state(job_id, timeout=120)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    trials = {t["trialId"]: t for t in job["trainingOutput"]["trials"]}
    assert sorted(trials) == ["1", "2", "3"]
    assert {t["state"] for t in trials.values()} == {"SUCCEEDED"}
    assert job["trainingOutput"]["completedTrialCount"] == "3"
    for trial_id, t in before.items():  # the same points, the same first start
        assert trials[trial_id]["hyperparameters"] == t["hyperparameters"]
        assert trials[trial_id]["startTime"] == t["startTime"]
    points = {tuple(sorted(t["hyperparameters"].items())) for t in trials.values()}
    assert len(points) == 3  # the grid ran no point twice
    notes = stored_lines(svc, job_id, "service")
    for trial_id in before:
        line = f"Trial {trial_id}: master-replica-0 restarted (1 of 5): its machine restarted"
        assert f"{line}; resuming" in notes, notes
    assert not any(n.startswith("Trial 3: master-replica-0 restarted") for n in notes)
    assert [(e["taskName"], e["count"]) for e in job["replicaRestarts"]] == [
        ("master-replica-0", 2)
    ]
    base = svc.state_dir / "jobs" / PROJECT / job_id / "trials"
    entries = svc.entries(
        f'resource.labels.job_id="{job_id}" AND resource.labels.task_name="master-replica-0" '
        'AND timestamp>="1970-01-01T00:00:00Z"'
    )
    for trial_id in ("1", "2", "3"):
        work = base / trial_id / "master-replica-0"
        out = (work / "stdout.log").read_text().splitlines()
        err = (work / "stderr.log").read_text().splitlines()
        resumed = [line for line in out if line.startswith("Resumed from checkpoint at step ")]
        assert bool(resumed) == (trial_id in before), (trial_id, out[:5])
        stored = [
            str(e["jsonPayload"]["message"])
            for e in entries
            if e["labels"]["ml.googleapis.com/trial_id"] == trial_id
        ]
        assert sorted(stored) == sorted(out + err), trial_id  # none lost, none twice


def test_a_tuning_job_cancelled_before_the_power_cut_ends_cancelled(
    restartable_service: tuple[Restartable, str],
) -> None:
    r, uri = restartable_service
    job_id = unique_id("power_tuning_cancel")
    hp = {
        "maxTrials": 2,
        "params": [{"parameterName": "lr", "type": "DOUBLE", "minValue": 0.01, "maxValue": 0.1}],
    }
    args = ("--steps", "100000", "--sleep", "0.05", "--ignore-sigterm")
    r.svc.client().create(basic_job(job_id, uri, *args, hyperparameters=hp))
    r.svc.wait_state(job_id, ("RUNNING",), timeout=60)
    wait_for(lambda: len(supervisors(r.svc, job_id)) == 1, what="the trial's supervisor")
    r.svc.client().cancel(job_id)  # CANCELLING: the trainer ignores SIGTERM for the grace
    power_cut(r, job_id)
    svc = r.restart()
    job = svc.wait_state(job_id, timeout=30)
    assert job["state"] == "CANCELLED", job.get("errorMessage")
    assert [t["state"] for t in job["trainingOutput"]["trials"]] == ["CANCELLED"]
    assert not job.get("replicaRestarts")
    assert not _job_processes(svc, job_id)


def test_a_tuning_job_keeps_its_trials_capacity_over_a_power_cut(
    tmp_path: Path, trainer_sdist: Path
) -> None:
    """On a 2-slot machine, two trials run and a job waits behind them. After the power cut
    the cut-off trials hold their slots again before the waiting job is admitted, as adopted
    jobs do: the waiting job starts only once one of them has ended."""
    r = Restartable(tmp_path / "state", "--slots", "2")
    try:
        uri = r.svc.stage(trainer_sdist)
        job_id = unique_id("power_tuning_slots")
        hp = {
            "algorithm": "GRID_SEARCH",
            "maxTrials": 2,
            "maxParallelTrials": 2,
            "params": [
                {"parameterName": "batch_size", "type": "INTEGER", "minValue": 4, "maxValue": 5}
            ],
        }
        args = ("--steps", "150", "--sleep", "0.03", "--checkpoint-every", "20")
        body = basic_job(job_id, uri, *args, jobDir=_job_dir(r, job_id), hyperparameters=hp)
        r.svc.client().create(body)
        for trial in ("1", "2"):
            ckpts = r.state.parent / "job-dir" / job_id / trial / "checkpoints"
            wait_for(lambda c=ckpts: any(c.glob("ckpt-*.json")), timeout=60, what=f"trial {trial}")
        waiting = unique_id("power_waiting")
        r.svc.client().create(basic_job(waiting, uri, "--steps", "5"))
        assert r.svc.client().get(waiting)["state"] == "QUEUED"  # both slots are the trials'

        power_cut(r, job_id)
        svc = r.restart()

        job = svc.wait_state(job_id, timeout=120)
        assert job["state"] == "SUCCEEDED", job.get("errorMessage")
        other = svc.wait_state(waiting, timeout=60)
        assert other["state"] == "SUCCEEDED", other.get("errorMessage")
        ends = [t["endTime"] for t in job["trainingOutput"]["trials"]]
        assert other["startTime"] >= min(ends), (other["startTime"], ends)
    finally:
        r.stop()
