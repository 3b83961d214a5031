"""Restart recovery: ``kill -9`` of the service while jobs live, then a new service on the same
state dir and port takes them over.

Replicas outlive the service (their supervisors have their own sessions), so the new service
adopts them, tails their files on from the offsets the store committed and finishes the jobs as
the normal rules say. The ground truth for "no line lost or duplicated" is each replica's own
stdout/stderr files in the job's work dir: every line of them is stored exactly once, in order.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import psutil

from tests.conftest import unique_id
from tests.support.live_service import PROJECT, basic_job
from tests.support.restartable import (
    CLUSTER,
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


def test_a_killed_service_leaves_replicas_running_and_the_next_one_finishes_the_job(
    restartable_service: tuple[Restartable, str],
) -> None:
    r, uri = restartable_service
    job_id = unique_id("recover_run")
    args = ("--steps", "120", "--sleep", "0.05", "--log-every", "1")
    r.svc.client().create(basic_job(job_id, uri, *args, **CLUSTER, workerCount="2"))
    r.svc.wait_state(job_id, ("RUNNING",), timeout=60)
    wait_for(lambda: len(supervisors(r.svc, job_id)) == 3, what="three supervisors")
    sups = supervisors(r.svc, job_id)
    wait_for(
        lambda: len(steps_in(stored_lines(r.svc, job_id, "master-replica-0"))) >= 5, what="steps"
    )

    r.kill9()
    time.sleep(1.0)  # lines keep arriving in the files while nobody tails them
    assert all(alive(p) for p in sups.values()), "kill -9 took replicas down"

    svc = r.restart()
    job = svc.wait_state(job_id, timeout=90)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    assert job.get("endTime")
    tasks = task_names(svc, job_id)
    assert tasks == ["master-replica-0", "worker-replica-0", "worker-replica-1"]
    assert_every_line_once(svc, job_id, tasks)
    notes = stored_lines(svc, job_id, "service")
    assert any("resumed the job with 3 running replicas" in n for n in notes), notes


def test_a_replica_that_ends_while_the_service_is_down_counts_by_its_status(
    restartable_service: tuple[Restartable, str],
) -> None:
    r, uri = restartable_service
    ok, bad = unique_id("recover_ok"), unique_id("recover_bad")
    args = ("--steps", "60", "--sleep", "0.1", "--log-every", "1")
    client = r.svc.client()
    client.create(basic_job(ok, uri, *args))
    client.create(basic_job(bad, uri, *args, "--fail-at-step", "40"))
    for job_id in (ok, bad):
        r.svc.wait_state(job_id, ("RUNNING",), timeout=60)
        wait_for(lambda j=job_id: len(supervisors(r.svc, j)) == 1, what="the supervisor")
    sups = {j: supervisors(r.svc, j) for j in (ok, bad)}
    r.kill9()
    assert all(alive(p) for s in sups.values() for p in s.values()), "ended too soon"
    # Both end while nobody watches; their supervisors record how.
    wait_for(
        lambda: not any(alive(p) for s in sups.values() for p in s.values()),
        timeout=30,
        what="replicas to end",
    )
    svc = r.restart()
    done = svc.wait_state(ok, timeout=30)
    assert done["state"] == "SUCCEEDED", done.get("errorMessage")
    failed = svc.wait_state(bad, timeout=30)
    assert failed["state"] == "FAILED"
    assert "exited with a non-zero status of 1" in failed["errorMessage"]
    assert "RuntimeError: Injected failure at step 40" in failed["errorMessage"]
    for job_id in (ok, bad):
        assert_every_line_once(svc, job_id, ["master-replica-0"])
        notes = stored_lines(svc, job_id, "service")
        assert any("ended meanwhile: master-replica-0" in n for n in notes), notes


def test_queued_jobs_are_scheduled_again_and_adopted_ones_keep_their_slots(
    tmp_path: Path, trainer_sdist: Path
) -> None:
    r = Restartable(tmp_path / "state", "--slots", "1")
    try:
        uri = r.svc.stage(trainer_sdist)
        first, second = unique_id("recover_first"), unique_id("recover_second")
        client = r.svc.client()
        client.create(basic_job(first, uri, "--steps", "40", "--sleep", "0.1", "--log-every", "1"))
        r.svc.wait_state(first, ("RUNNING",), timeout=60)
        client.create(basic_job(second, uri, "--steps", "3"))
        assert r.svc.wait_state(second, ("QUEUED",), timeout=10)["jobPosition"] == "1"
        r.kill9()
        svc = r.restart()
        # The adopted job holds the only slot: the queued one still waits behind it.
        assert svc.client().get(second)["state"] == "QUEUED"
        assert svc.wait_state(first, timeout=60)["state"] == "SUCCEEDED"
        job = svc.wait_state(second, timeout=60)
        assert job["state"] == "SUCCEEDED", job.get("errorMessage")
        assert_every_line_once(svc, first, ["master-replica-0"])
        assert_every_line_once(svc, second, ["master-replica-0"])
    finally:
        r.stop()


def test_a_cancel_right_after_the_restart_stops_the_adopted_replicas(
    restartable_service: tuple[Restartable, str],
) -> None:
    r, uri = restartable_service
    job_id = unique_id("recover_cancel")
    args = ("--steps", "100000", "--sleep", "0.05", "--log-every", "1")
    r.svc.client().create(basic_job(job_id, uri, *args, **CLUSTER, workerCount="1"))
    r.svc.wait_state(job_id, ("RUNNING",), timeout=60)
    wait_for(lambda: len(supervisors(r.svc, job_id)) == 2, what="two supervisors")
    sups = supervisors(r.svc, job_id)
    # Each replica has trained a step (what the last check needs): started is not enough when
    # replicas run below the test's priority on a busy machine.
    wait_for(
        lambda: all(
            steps_in(file_lines(r.svc, job_id, task)[0])
            for task in ("master-replica-0", "worker-replica-0")
        ),
        what="a step from each replica",
    )
    r.kill9()
    svc = r.restart()
    svc.client().cancel(job_id)
    job = svc.wait_state(job_id, timeout=30)
    assert job["state"] == "CANCELLED" and job.get("endTime")
    assert not any(alive(p) for p in sups.values())
    assert_every_line_once(svc, job_id, task_names(svc, job_id))


def test_a_job_cancelling_when_the_service_died_finishes_cancelling(
    restartable_service: tuple[Restartable, str],
) -> None:
    r, uri = restartable_service
    job_id = unique_id("recover_cancelling")
    # Ignores SIGTERM: it stays CANCELLING for the grace period, long enough to kill -9 then.
    args = ("--steps", "100000", "--sleep", "0.05", "--ignore-sigterm")
    r.svc.client().create(basic_job(job_id, uri, *args))
    r.svc.wait_state(job_id, ("RUNNING",), timeout=60)
    wait_for(lambda: len(supervisors(r.svc, job_id)) == 1, what="the supervisor")
    sups = supervisors(r.svc, job_id)
    r.svc.client().cancel(job_id)
    assert r.svc.client().get(job_id)["state"] == "CANCELLING"
    r.kill9()
    svc = r.restart()
    job = svc.wait_state(job_id, timeout=30)
    assert job["state"] == "CANCELLED" and job.get("endTime")
    assert not any(alive(p) for p in sups.values())


def test_a_recycled_pid_is_not_taken_for_a_supervisor(
    restartable_service: tuple[Restartable, str],
) -> None:
    """A runtime record naming a pid that is now someone else's: the replica counts as lost
    with its machine (no supervisor, no status: it is started again), and that process is left
    alone."""
    r, uri = restartable_service
    job_id = unique_id("recover_reuse")
    r.svc.client().create(basic_job(job_id, uri, "--steps", "100000", "--sleep", "0.05"))
    r.svc.wait_state(job_id, ("RUNNING",), timeout=60)
    wait_for(lambda: len(supervisors(r.svc, job_id)) == 1, what="the supervisor")
    sup = supervisors(r.svc, job_id)["master-replica-0"]
    r.kill9()
    # Make the supervisor vanish without a status, and point its record at a stranger.
    stranger = psutil.Popen(["sleep", "60"])
    try:
        for child in psutil.Process(sup).children(recursive=True):
            child.kill()
        psutil.Process(sup).kill()
        wait_for(lambda: not alive(sup))
        job_dir = r.state / "jobs" / PROJECT / job_id / "master-replica-0"
        spec = json.loads((job_dir / "pid.json").read_text())
        spec["supervisor"] = stranger.pid
        (job_dir / "pid.json").write_text(json.dumps(spec))
        db = sqlite3.connect(r.state / "jobs.sqlite")
        (runtime,) = db.execute("SELECT runtime FROM jobs WHERE job_id=?", (job_id,)).fetchone()
        data = json.loads(runtime)
        data["replicas"][0]["supervisor"] = stranger.pid
        db.execute("UPDATE jobs SET runtime=? WHERE job_id=?", (json.dumps(data), job_id))
        db.commit()
        db.close()
        svc = r.restart()
        client = svc.client()
        wait_for(lambda: client.get(job_id).get("replicaRestarts"), what="the restart")
        (restart,) = client.get(job_id)["replicaRestarts"]
        assert restart["taskName"] == "master-replica-0" and restart["count"] == 1
        wait_for(
            lambda: (
                supervisors(svc, job_id).get("master-replica-0") not in (None, sup, stranger.pid)
            ),
            what="a new supervisor",
        )
        assert stranger.is_running() and stranger.status() != "zombie"
        client.cancel(job_id)
        assert svc.wait_state(job_id, timeout=30)["state"] == "CANCELLED"
        assert stranger.is_running() and stranger.status() != "zombie"
    finally:
        stranger.kill()
        stranger.wait()
