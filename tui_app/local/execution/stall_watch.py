"""Noticing a hung job before anyone looks: the service's side of ``model/running/stalls.py``.

Each tick (the metrics sampler's interval) it reads, for every live replica of every live job,
when its last line arrived (its log sources) and its latest CPU sample (the sampler's
``latest``), keeps since when each replica has been idle, and asks the rules whether the job is
stalled. The job resource's ``stall`` field is written only when the answer changes (a replica
turns quiet or stalled, or prints again), so a long hang costs no writes.

The moment a job turns stalled the stacks of all its live replicas are taken once and kept with
the job (``stall-stacks.json`` in its dir): the stack from the moment it hung is still there
after someone cancels it or it crashes. Its log gets a WARNING saying so, which gcloud's
stream-logs shows too.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from tui_app.local.service_loop import ServiceLoop
from tui_app.local.timefmt import job_time
from tui_app.model.logs.severity import SEVERITIES
from tui_app.model.running.stalls import (
    IDLE_CPU_PERCENT,
    ReplicaActivity,
    Stall,
    job_stall,
)
from tui_app.model.views.describe import format_duration

if TYPE_CHECKING:
    from tui_app.local.execution.runner import JobRunner

log = logging.getLogger(__name__)

STALL_STACKS_FILE = "stall-stacks.json"
"""The stacks taken when the job turned stalled, in its dir (the ``:stacks`` wire format)."""

JobKey = tuple[str, str]
ReplicaKey = tuple[str, str, str, str]
"""(project, job id, trial id or "", task name), as the sampler keys ``latest``."""


class StallHost(Protocol):
    """What the watch needs of the service (``jobs.JobService``)."""

    @property
    def runners(self) -> Mapping[JobKey, JobRunner]: ...

    def set_stall(self, project: str, job_id: str, stall: dict[str, Any] | None) -> None: ...

    def service_log(
        self,
        project: str,
        job_id: str,
        message: str,
        severity: int,
        trial: str | None = None,
    ) -> None: ...

    async def keep_stall_stacks(self, project: str, job_id: str) -> str | None:
        """Take the job's stacks and keep them; when they were taken (None: not taken)."""


def stall_resource(stall: Stall, stacks_taken_at: str | None = None) -> dict[str, Any]:
    """The job resource's ``stall`` field (docs/stalls.md has its format)."""
    replicas = []
    for r in stall.replicas:
        entry: dict[str, Any] = {
            "taskName": r.task_name,
            "state": r.state,
            "since": job_time(r.since),
        }
        if r.trial_id:
            entry["trialId"] = r.trial_id
        if r.last_line is not None:
            entry["lastLine"] = r.last_line[:500]
        if r.last_output is not None:
            entry["lastOutputTime"] = job_time(r.last_output)
        if r.cpu_percent is not None:
            entry["cpuPercent"] = round(r.cpu_percent, 1)
        replicas.append(entry)
    out: dict[str, Any] = {"since": job_time(stall.since), "replicas": replicas}
    if stacks_taken_at:
        out["stacksTakenAt"] = stacks_taken_at
    return out


class StallWatch:
    """Watches every live job for a stall (see the module doc)."""

    def __init__(
        self,
        host: StallHost,
        latest: Callable[[], Mapping[ReplicaKey, tuple[float, float]]],
        threshold: float,
        interval: float,
    ) -> None:
        self._host = host
        self._latest = latest
        self.threshold = threshold
        self.interval = max(0.05, min(interval, threshold / 4))
        self._idle: dict[ReplicaKey, tuple[float, float]] = {}
        """Replica -> (since when it is idle, the time of the sample last seen)."""
        self._shown: dict[JobKey, tuple[Any, ...]] = {}
        """What each job's ``stall`` field says now, by its replicas' (name, state)."""
        self._taken: dict[JobKey, str | None] = {}
        """When each job's stacks were kept (once, at its first stall): every later write of
        its ``stall`` field says so too."""
        self._rounds = ServiceLoop("stall-watch")

    def start(self) -> None:
        self._rounds.start(self._loop)

    async def stop(self) -> None:
        await self._rounds.stop()

    async def _loop(self) -> None:
        while not self._rounds.stopping.is_set():
            try:
                await self.check(time.time())
            except Exception:  # a bug here must not stop the service
                log.exception("watching for stalled jobs failed")
            await self._rounds.pause(self.interval)

    def _activities(self, project: str, job_id: str, runner: JobRunner) -> list[ReplicaActivity]:
        latest = self._latest()
        out = []
        for trial, handle in runner.live_replicas():
            name = handle.replica.task_name
            key = (project, job_id, trial or "", name)
            sample = latest.get(key)
            cpu = sample[1] if sample else None
            if sample is None or sample[1] >= IDLE_CPU_PERCENT:
                self._idle.pop(key, None)
            elif key not in self._idle:
                # Idle from the first low sample on, never from before the replica started.
                self._idle[key] = (max(sample[0], handle.started), sample[0])
            outputs = [s.last_line_at for s in handle.sources if s.last_line_at is not None]
            last = max(outputs, default=None)
            line = None
            if last is not None:
                line = next(s.last_line for s in handle.sources if s.last_line_at == last)
            idle = self._idle.get(key)
            out.append(
                ReplicaActivity(
                    name,
                    started=handle.started,
                    last_output=last,
                    idle_since=idle[0] if idle else None,
                    cpu_percent=cpu,
                    last_line=line,
                    trial_id=trial,
                )
            )
        return out

    async def check(self, now: float) -> None:
        """One look at every live job."""
        live: set[JobKey] = set()
        for (project, job_id), runner in list(self._host.runners.items()):
            live.add((project, job_id))
            activities = self._activities(project, job_id, runner)
            if not activities:
                # No replica runs (the job is ending, or between a restart's runs): what its
                # field says stands; a stall it ended with is part of its record.
                continue
            stall = job_stall(activities, now, self.threshold)
            shown = () if stall is None else tuple((r.task_name, r.state) for r in stall.replicas)
            if shown == self._shown.get((project, job_id), ()):
                continue
            self._shown[(project, job_id)] = shown
            if stall is None:
                self._host.set_stall(project, job_id, None)
                continue
            key = (project, job_id)
            if key not in self._taken and stall.stalled:
                self._taken[key] = None
                self._say_stalled(project, job_id, stall, now)
                self._taken[key] = await self._host.keep_stall_stacks(project, job_id)
            self._host.set_stall(project, job_id, stall_resource(stall, self._taken.get(key)))
        for gone in set(self._shown) - live:
            del self._shown[gone]
        self._taken = {k: v for k, v in self._taken.items() if k in live}
        self._idle = {k: v for k, v in self._idle.items() if (k[0], k[1]) in live}

    def _say_stalled(self, project: str, job_id: str, stall: Stall, now: float) -> None:
        names = ", ".join(
            f"{r.task_name} (trial {r.trial_id})" if r.trial_id else r.task_name
            for r in stall.stalled
        )
        self._host.service_log(
            project,
            job_id,
            f"Job stalled: {names} printed nothing and used no CPU for "
            f"{format_duration(now - stall.since)}; the stacks of its replicas were taken "
            f"(tui-app jobs stacks {job_id} --at-stall).",
            SEVERITIES["WARNING"],
        )
