"""Restart recovery: ``kill -9`` of the service while jobs live, then a new service on the same
state dir and port takes them over.

Replicas outlive the service (their supervisors have their own sessions), so the new service
adopts them, tails their files on from the offsets the store committed and finishes the jobs as
the normal rules say. The ground truth for "no line lost or duplicated" is each replica's own
stdout/stderr files in the job's work dir: every line of them is stored exactly once, in order.
"""

from __future__ import annotations

import collections
import json
import os
import re
import signal
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.conftest import _start, _stop, unique_id
from tests.support.live_service import PROJECT, LiveService, basic_job, free_port

CLUSTER = {"scaleTier": "CUSTOM", "masterType": "standard", "workerType": "standard"}


class Restartable:
    """A service on a fixed state dir and port that a test can ``kill -9`` and start again."""

    def __init__(self, state: Path, *extra: str) -> None:
        self.state, self.extra, self.port = state, extra, free_port()
        self.svc = _start(state, *extra, port=self.port)

    def kill9(self) -> None:
        """SIGKILL the service process alone (not its process group: that is what a crash or
        the OOM killer does), and wait until it is gone."""
        os.kill(self.svc.proc.pid, signal.SIGKILL)
        self.svc.proc.wait(10)

    def restart(self) -> LiveService:
        self.svc = _start(self.state, *self.extra, port=self.port)
        return self.svc

    def stop(self) -> None:
        _stop(self.svc)


@pytest.fixture
def restartable(tmp_path: Path, trainer_sdist: Path) -> Iterator[tuple[Restartable, str]]:
    r = Restartable(tmp_path / "state")
    uri = r.svc.stage(trainer_sdist)
    try:
        yield r, uri
    finally:
        r.stop()


def _supervisors(svc: LiveService, job_id: str) -> dict[str, int]:
    """task name -> supervisor pid, from the pid files the supervisors wrote."""
    base = svc.state_dir / "jobs" / PROJECT / job_id
    out = {}
    for pid_file in base.glob("*/pid.json"):
        out[pid_file.parent.name] = int(json.loads(pid_file.read_text())["supervisor"])
    return out


def _alive(pid: int) -> bool:
    """The process runs (a zombie whose new parent has not reaped it yet does not)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _wait(predicate: Any, timeout: float = 30.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(0.05)


def _stored(svc: LiveService, job_id: str, task: str) -> list[str]:
    flt = (
        f'resource.labels.job_id="{job_id}" AND resource.labels.task_name="{task}" '
        'AND timestamp>="1970-01-01T00:00:00Z"'
    )
    entries = svc.entries(flt)
    return [str(e["jsonPayload"]["message"]) for e in entries]


def _file_lines(svc: LiveService, job_id: str, task: str) -> tuple[list[str], list[str]]:
    work = svc.state_dir / "jobs" / PROJECT / job_id / task
    out = (work / "stdout.log").read_text(errors="replace").splitlines()
    err = (work / "stderr.log").read_text(errors="replace").splitlines()
    return out, err


def _steps(lines: list[str]) -> list[int]:
    return [int(m.group(1)) for ln in lines if (m := re.match(r"step (\d+) loss=", ln))]


def _assert_every_line_once(svc: LiveService, job_id: str, tasks: list[str]) -> None:
    for task in tasks:
        stored = _stored(svc, job_id, task)
        out, err = _file_lines(svc, job_id, task)
        assert collections.Counter(stored) == collections.Counter(out + err), task
        # stdout alone keeps its order in the store, and its step numbers strictly increase.
        in_out = set(out)
        assert [s for s in stored if s in in_out] == out, task
        steps = _steps(stored)
        assert steps and steps == sorted(set(steps)), task


def _tasks(svc: LiveService, job_id: str) -> list[str]:
    base = svc.state_dir / "jobs" / PROJECT / job_id
    return sorted(p.name for p in base.iterdir() if (p / "spec.json").exists())


def test_a_killed_service_leaves_replicas_running_and_the_next_one_finishes_the_job(
    restartable: tuple[Restartable, str],
) -> None:
    r, uri = restartable
    job_id = unique_id("recover_run")
    args = ("--steps", "120", "--sleep", "0.05", "--log-every", "1")
    r.svc.client().create(basic_job(job_id, uri, *args, **CLUSTER, workerCount="2"))
    r.svc.wait_state(job_id, ("RUNNING",), timeout=60)
    _wait(lambda: len(_supervisors(r.svc, job_id)) == 3, what="three supervisors")
    sups = _supervisors(r.svc, job_id)
    _wait(lambda: len(_steps(_stored(r.svc, job_id, "master-replica-0"))) >= 5, what="steps")

    r.kill9()
    time.sleep(1.0)  # lines keep arriving in the files while nobody tails them
    assert all(_alive(p) for p in sups.values()), "kill -9 took replicas down"

    svc = r.restart()
    job = svc.wait_state(job_id, timeout=90)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    assert job.get("endTime")
    tasks = _tasks(svc, job_id)
    assert tasks == ["master-replica-0", "worker-replica-0", "worker-replica-1"]
    _assert_every_line_once(svc, job_id, tasks)
    notes = _stored(svc, job_id, "service")
    assert any("resumed the job with 3 running replicas" in n for n in notes), notes


def test_a_replica_that_ends_while_the_service_is_down_counts_by_its_status(
    restartable: tuple[Restartable, str],
) -> None:
    r, uri = restartable
    ok, bad = unique_id("recover_ok"), unique_id("recover_bad")
    args = ("--steps", "60", "--sleep", "0.1", "--log-every", "1")
    client = r.svc.client()
    client.create(basic_job(ok, uri, *args))
    client.create(basic_job(bad, uri, *args, "--fail-at-step", "40", "--exit-code", "3"))
    for job_id in (ok, bad):
        r.svc.wait_state(job_id, ("RUNNING",), timeout=60)
        _wait(lambda j=job_id: len(_supervisors(r.svc, j)) == 1, what="the supervisor")
    sups = {j: _supervisors(r.svc, j) for j in (ok, bad)}
    r.kill9()
    assert all(_alive(p) for s in sups.values() for p in s.values()), "ended too soon"
    # Both end while nobody watches; their supervisors record how.
    _wait(
        lambda: not any(_alive(p) for s in sups.values() for p in s.values()),
        timeout=30,
        what="replicas to end",
    )
    svc = r.restart()
    done = svc.wait_state(ok, timeout=30)
    assert done["state"] == "SUCCEEDED", done.get("errorMessage")
    failed = svc.wait_state(bad, timeout=30)
    assert failed["state"] == "FAILED"
    assert "exited with a non-zero status of 3" in failed["errorMessage"]
    for job_id in (ok, bad):
        _assert_every_line_once(svc, job_id, ["master-replica-0"])
        notes = _stored(svc, job_id, "service")
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
        _assert_every_line_once(svc, first, ["master-replica-0"])
        _assert_every_line_once(svc, second, ["master-replica-0"])
    finally:
        r.stop()


def test_a_cancel_right_after_the_restart_stops_the_adopted_replicas(
    restartable: tuple[Restartable, str],
) -> None:
    r, uri = restartable
    job_id = unique_id("recover_cancel")
    args = ("--steps", "100000", "--sleep", "0.05", "--log-every", "1")
    r.svc.client().create(basic_job(job_id, uri, *args, **CLUSTER, workerCount="1"))
    r.svc.wait_state(job_id, ("RUNNING",), timeout=60)
    _wait(lambda: len(_supervisors(r.svc, job_id)) == 2, what="two supervisors")
    sups = _supervisors(r.svc, job_id)
    # Each replica has trained a step (what the last check needs): started is not enough when
    # replicas run below the test's priority on a busy machine.
    _wait(
        lambda: all(
            _steps(_file_lines(r.svc, job_id, task)[0])
            for task in ("master-replica-0", "worker-replica-0")
        ),
        what="a step from each replica",
    )
    r.kill9()
    svc = r.restart()
    svc.client().cancel(job_id)
    job = svc.wait_state(job_id, timeout=30)
    assert job["state"] == "CANCELLED" and job.get("endTime")
    assert not any(_alive(p) for p in sups.values())
    _assert_every_line_once(svc, job_id, _tasks(svc, job_id))


def test_a_job_cancelling_when_the_service_died_finishes_cancelling(
    restartable: tuple[Restartable, str],
) -> None:
    r, uri = restartable
    job_id = unique_id("recover_cancelling")
    # Ignores SIGTERM: it stays CANCELLING for the grace period, long enough to kill -9 then.
    args = ("--steps", "100000", "--sleep", "0.05", "--ignore-sigterm")
    r.svc.client().create(basic_job(job_id, uri, *args))
    r.svc.wait_state(job_id, ("RUNNING",), timeout=60)
    _wait(lambda: len(_supervisors(r.svc, job_id)) == 1, what="the supervisor")
    sups = _supervisors(r.svc, job_id)
    r.svc.client().cancel(job_id)
    assert r.svc.client().get(job_id)["state"] == "CANCELLING"
    r.kill9()
    svc = r.restart()
    job = svc.wait_state(job_id, timeout=30)
    assert job["state"] == "CANCELLED" and job.get("endTime")
    assert not any(_alive(p) for p in sups.values())


def test_a_recycled_pid_is_not_taken_for_a_supervisor(
    restartable: tuple[Restartable, str],
) -> None:
    """A runtime record naming a pid that is now someone else's: the replica counts as ended
    without a status (the job fails), and that process is left alone."""
    r, uri = restartable
    job_id = unique_id("recover_reuse")
    r.svc.client().create(basic_job(job_id, uri, "--steps", "100000", "--sleep", "0.05"))
    r.svc.wait_state(job_id, ("RUNNING",), timeout=60)
    _wait(lambda: len(_supervisors(r.svc, job_id)) == 1, what="the supervisor")
    sup = _supervisors(r.svc, job_id)["master-replica-0"]
    r.kill9()
    # Make the supervisor vanish without a status, and point its record at a stranger.
    stranger = psutil.Popen(["sleep", "60"])
    try:
        for child in psutil.Process(sup).children(recursive=True):
            child.kill()
        psutil.Process(sup).kill()
        _wait(lambda: not _alive(sup))
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
        job = svc.wait_state(job_id, timeout=30)
        assert job["state"] == "FAILED"
        assert "ended without recording an exit status" in job["errorMessage"]
        assert stranger.is_running() and stranger.status() != "zombie"
    finally:
        stranger.kill()
        stranger.wait()
