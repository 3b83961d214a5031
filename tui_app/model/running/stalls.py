"""When a running job is stuck: quiet replicas, stalled replicas, a stalled job.

A hung job looks like a healthy one: RUNNING, no error. What gives it away is what it stops
doing. A replica is *quiet* once it has printed nothing for the threshold (its last line, or its
start when it never printed), and *stalled* once it has also used next to no CPU
(``IDLE_CPU_PERCENT``) for that same while: a replica busy computing without printing is quiet,
never stalled.

A job is *stalled* when every replica it runs is quiet and at least one of them is stalled. One
idle replica alone is not enough: a parameter server often prints nothing and waits on its
workers for hours while they train, and a job that still prints somewhere is still going. When
the job is stuck, the replicas waiting on the stuck one go quiet too, and then the job is
flagged, naming its stalled replicas.

``since`` is when a replica's silence and its idleness had both begun (the later of the two), so
"stalled 12m" says how long it has made no progress. docs/stalls.md gives the rules and why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from tui_app.model.jobs.wire import as_list, as_mapping, parse_time

__all__ = [
    "DEFAULT_STALL_SECONDS",
    "IDLE_CPU_PERCENT",
    "ReplicaActivity",
    "ReplicaStall",
    "Stall",
    "job_stall",
    "replica_stall",
    "stall_from_job",
]

DEFAULT_STALL_SECONDS = 600.0
"""Ten minutes without a line and without CPU: long past a checkpoint write or an evaluation
pass, short next to the hours a hung job burns until its maxRunningTime."""
IDLE_CPU_PERCENT = 2.0
"""Below this share of one core a replica is idle: a process blocked on a socket or a lock uses
~0%, while one that computes, even slowly in one thread, uses tens of percent."""

StallState = Literal["quiet", "stalled"]


@dataclass(frozen=True)
class ReplicaActivity:
    """What the service knows of one live replica, in epoch seconds."""

    task_name: str
    started: float
    """When its current run started (its restart, if it restarted)."""
    last_output: float | None
    """When its last line arrived; None while it has printed nothing."""
    idle_since: float | None
    """Since when every CPU sample was below ``IDLE_CPU_PERCENT``; None while it is busy or no
    sample is known yet."""
    cpu_percent: float | None
    """Its latest CPU sample, in percent of one core."""
    last_line: str | None = None
    trial_id: str | None = None


@dataclass(frozen=True)
class ReplicaStall:
    """A quiet or stalled replica, as the job resource carries it."""

    task_name: str
    state: StallState
    since: float
    last_line: str | None
    last_output: float | None
    cpu_percent: float | None
    trial_id: str | None = None


@dataclass(frozen=True)
class Stall:
    """A stalled job: since when, and its quiet and stalled replicas (the stalled first)."""

    since: float
    replicas: tuple[ReplicaStall, ...]

    @property
    def stalled(self) -> tuple[ReplicaStall, ...]:
        return tuple(r for r in self.replicas if r.state == "stalled")


def replica_stall(a: ReplicaActivity, now: float, threshold: float) -> ReplicaStall | None:
    """Whether ``a`` is quiet or stalled at ``now`` (None: neither)."""
    silent_since = a.last_output if a.last_output is not None else a.started
    if now - silent_since < threshold:
        return None
    state: StallState = "quiet"
    since = silent_since
    if a.idle_since is not None and now - a.idle_since >= threshold:
        state, since = "stalled", max(silent_since, a.idle_since)
    return ReplicaStall(
        a.task_name, state, since, a.last_line, a.last_output, a.cpu_percent, a.trial_id
    )


def job_stall(replicas: Sequence[ReplicaActivity], now: float, threshold: float) -> Stall | None:
    """The job's stall: every replica quiet, one at least stalled (see the module doc)."""
    if not replicas:
        return None
    found = [replica_stall(a, now, threshold) for a in replicas]
    quiet = [r for r in found if r is not None]
    if len(quiet) < len(found) or not any(r.state == "stalled" for r in quiet):
        return None
    quiet.sort(key=lambda r: (r.state != "stalled", r.trial_id or "", r.task_name))
    since = min(r.since for r in quiet if r.state == "stalled")
    return Stall(since, tuple(quiet))


def stall_from_job(job: Mapping[str, Any]) -> Stall | None:
    """The ``stall`` field of a job resource (the service's extension), read defensively: what
    cannot be read is left out; None when the job is not stalled."""
    body = as_mapping(job.get("stall"))
    since = _when(body.get("since"))
    if since is None:
        return None
    out = []
    for item in as_list(body.get("replicas")):
        entry = as_mapping(item)
        name, state = entry.get("taskName"), entry.get("state")
        when = _when(entry.get("since"))
        if not isinstance(name, str) or state not in ("quiet", "stalled") or when is None:
            continue
        line = entry.get("lastLine")
        cpu = entry.get("cpuPercent")
        trial = entry.get("trialId")
        out.append(
            ReplicaStall(
                name,
                state,
                when,
                line if isinstance(line, str) else None,
                _when(entry.get("lastOutputTime")),
                float(cpu) if isinstance(cpu, (int, float)) else None,
                trial if isinstance(trial, str) else None,
            )
        )
    return Stall(since, tuple(out))


def _when(value: object) -> float | None:
    if not isinstance(value, str):
        return None
    parsed = parse_time(value)
    return None if parsed is None else parsed.timestamp()
