"""A service a test can ``kill -9`` and start again on the same state dir and port, and the
checks of what it took over: every replica's lines stored exactly once, in order.

The ground truth for "no line lost or duplicated" is each replica's own stdout/stderr files in
the job's work dir.
"""

from __future__ import annotations

import collections
import json
import os
import re
import signal
import time
from pathlib import Path
from typing import Any

import psutil

from tests.conftest import _start, _stop
from tests.support.live_service import PROJECT, LiveService, free_port

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


def supervisors(svc: LiveService, job_id: str) -> dict[str, int]:
    """Replica -> supervisor pid, from the pid files the supervisors wrote: the task name, or
    ``trials/<id>/<task name>`` for a tuning job's trial."""
    base = svc.state_dir / "jobs" / PROJECT / job_id
    out = {}
    for pid_file in [*base.glob("*/pid.json"), *base.glob("trials/*/*/pid.json")]:
        name = pid_file.parent.relative_to(base).as_posix()
        out[name] = int(json.loads(pid_file.read_text())["supervisor"])
    return out


def alive(pid: int) -> bool:
    """The process runs (a zombie whose new parent has not reaped it yet does not)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def wait_for(predicate: Any, timeout: float = 30.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(0.05)


def stored_lines(svc: LiveService, job_id: str, task: str) -> list[str]:
    flt = (
        f'resource.labels.job_id="{job_id}" AND resource.labels.task_name="{task}" '
        'AND timestamp>="1970-01-01T00:00:00Z"'
    )
    entries = svc.entries(flt)
    return [str(e["jsonPayload"]["message"]) for e in entries]


def file_lines(svc: LiveService, job_id: str, task: str) -> tuple[list[str], list[str]]:
    work = svc.state_dir / "jobs" / PROJECT / job_id / task
    out = (work / "stdout.log").read_text(errors="replace").splitlines()
    err = (work / "stderr.log").read_text(errors="replace").splitlines()
    return out, err


def steps_in(lines: list[str]) -> list[int]:
    return [int(m.group(1)) for ln in lines if (m := re.match(r"step (\d+) loss=", ln))]


def assert_every_line_once(
    svc: LiveService, job_id: str, tasks: list[str], *, resumed: bool = False
) -> None:
    """Every line of each replica's files stored exactly once, stdout in its order; its step
    numbers strictly increase unless the replica ``resumed`` from a checkpoint (then it
    writes again steps it already wrote)."""
    for task in tasks:
        stored = stored_lines(svc, job_id, task)
        out, err = file_lines(svc, job_id, task)
        assert collections.Counter(stored) == collections.Counter(out + err), task
        # stdout alone keeps its order in the store, and its step numbers strictly increase.
        in_out = set(out)
        assert [s for s in stored if s in in_out] == out, task
        if not resumed:
            steps = steps_in(stored)
            assert steps and steps == sorted(set(steps)), task


def task_names(svc: LiveService, job_id: str) -> list[str]:
    base = svc.state_dir / "jobs" / PROJECT / job_id
    return sorted(p.name for p in base.iterdir() if (p / "spec.json").exists())
