"""What replicas a TrainingInput runs: the tier table applied to one job."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tui_app.model.jobs.roles import ROLE_FIELDS
from tui_app.model.jobs.tiers import DEFAULT_SCALE_TIER, SCALE_TIERS, ReplicaGroup, Role


@dataclass(frozen=True)
class Replica:
    """One replica process of a job."""

    role: Role
    index: int
    machine_type: str

    @property
    def task_name(self) -> str:
        """The platform's name: ``master-replica-0``, ``worker-replica-1``, ``ps-replica-0``."""
        return f"{self.role.value}-replica-{self.index}"


_POOL_TASK = re.compile(r"workerpool([0-3])-(\d+)", re.ASCII)
_ROLE_TASK = re.compile(r"(master|worker|ps|evaluator)-replica-(\d+)", re.ASCII)
_POOL_ROLES: tuple[Role, ...] = tuple(Role)
"""Vertex AI's worker pools are the platform's roles in cluster order: pool 0 is the master."""


def task_from_vertex(task_name: str) -> str:
    """``workerpool1-0`` (Vertex AI's task name) as the platform's ``worker-replica-0``.

    Anything else (``service``, a name already in the platform's form) comes back unchanged,
    so one log view shows both backends' lines under the same replica names.
    """
    m = _POOL_TASK.fullmatch(task_name)
    return f"{_POOL_ROLES[int(m[1])].value}-replica-{m[2]}" if m else task_name


def task_to_vertex(task_name: str) -> str:
    """The platform's ``ps-replica-0`` as Vertex AI's ``workerpool2-0``; others unchanged."""
    m = _ROLE_TASK.fullmatch(task_name)
    if m is None:
        return task_name
    return f"workerpool{_POOL_ROLES.index(Role(m[1]))}-{m[2]}"


def replica_groups(training_input: Mapping[str, Any]) -> tuple[ReplicaGroup, ...]:
    """The groups of replicas a (validated) trainingInput runs, master first."""
    tier = training_input.get("scaleTier") or DEFAULT_SCALE_TIER
    if tier != "CUSTOM":
        return SCALE_TIERS[tier].groups
    groups = []
    for r in ROLE_FIELDS:
        mtype = training_input.get(r.type_field)
        count = 1 if r.count_field is None else int(training_input.get(r.count_field) or 0)
        if not mtype or count <= 0:
            continue
        acc = (training_input.get(r.config_field) or {}).get("acceleratorConfig") or {}
        groups.append(
            ReplicaGroup(r.role, mtype, count, acc.get("type"), int(acc.get("count") or 0))
        )
    return tuple(groups)


def replicas(training_input: Mapping[str, Any]) -> tuple[Replica, ...]:
    """Every replica of the job, in the platform's order (master, workers, ps, evaluators)."""
    return tuple(
        Replica(g.role, i, g.machine_type)
        for g in replica_groups(training_input)
        for i in range(g.count)
    )


def ml_units_per_hour(training_input: Mapping[str, Any]) -> float:
    """What the job's cluster costs per hour, in ML units."""
    tier = training_input.get("scaleTier") or DEFAULT_SCALE_TIER
    if tier != "CUSTOM":
        return SCALE_TIERS[tier].ml_units_per_hour
    return round(sum(g.ml_units_per_hour for g in replica_groups(training_input)), 4)
