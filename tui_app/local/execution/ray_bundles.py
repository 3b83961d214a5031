"""What a replica asks of a Ray node, and why a job waits for (or can never get) a placement.

Each replica becomes one placement-group bundle sized from its machine type, through the same
table the builder and the cost figures use (``tiers.MACHINE_TYPES``; the scale tiers through
``cluster.replica_groups``): ``CPU`` is the machine's vCPUs, ``memory`` its memory in bytes (Ray's
``memory`` resource), ``GPU`` the accelerators it holds (TPUs are not GPUs here: a Ray cluster
declares TPUs as it likes, so a TPU replica asks for none). Pure rules: the executor reads the
nodes; this module only compares numbers and words the result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tui_app.model.jobs.cluster import Replica, replica_groups
from tui_app.model.jobs.roles import ROLE_FIELDS
from tui_app.model.jobs.tiers import MACHINE_TYPES

GIB = 1024**3
_MEMORY_SLACK = 0.999
"""Ray rounds declared memory; a node declared with exactly a machine's size still holds it."""


@dataclass(frozen=True)
class NodeResources:
    """One live Ray node: its address, what it declares and what is free on it now."""

    address: str
    total: Mapping[str, float]
    free: Mapping[str, float]


def _gpus_by_role(training_input: Mapping[str, Any]) -> dict[tuple[str, str], int]:
    return {
        (g.role.value, g.machine_type): g.gpus_per_replica for g in replica_groups(training_input)
    }


def bundle_for(training_input: Mapping[str, Any], replica: Replica) -> dict[str, float]:
    """The Ray resources one replica holds: ``{"CPU", "memory"[, "GPU"]}``."""
    machine = MACHINE_TYPES[replica.machine_type]
    bundle: dict[str, float] = {
        "CPU": float(machine.vcpus),
        "memory": float(int(machine.memory_gb * GIB)),
    }
    gpus = _gpus_by_role(training_input).get((replica.role.value, replica.machine_type), 0)
    if gpus:
        bundle["GPU"] = float(gpus)
    return bundle


def _fits(bundle: Mapping[str, float], have: Mapping[str, float]) -> bool:
    for name, want in bundle.items():
        got = float(have.get(name, 0.0))
        if name == "memory":
            got /= _MEMORY_SLACK
        if got < want:
            return False
    return True


def describe_bundle(bundle: Mapping[str, float]) -> str:
    """``8 vCPU, 30 GB, 1 GPU``."""
    parts = [f"{bundle.get('CPU', 0):g} vCPU", f"{bundle.get('memory', 0) / GIB:.3g} GB"]
    if bundle.get("GPU"):
        parts.append(f"{bundle['GPU']:g} GPU")
    return ", ".join(parts)


def _field_of(training_input: Mapping[str, Any], replica: Replica) -> str:
    if (training_input.get("scaleTier") or "BASIC") != "CUSTOM":
        return "trainingInput.scaleTier"
    for rf in ROLE_FIELDS:
        if rf.role is replica.role:
            return f"trainingInput.{rf.type_field}"
    return "trainingInput.scaleTier"


def fits_nowhere(
    training_input: Mapping[str, Any], nodes: Sequence[NodeResources]
) -> tuple[str, str] | None:
    """(field, message) when some replica is bigger than every node the cluster has, so the
    job could never start; None when each replica fits some node (it may still wait its turn).
    """
    from tui_app.model.jobs.cluster import replicas

    for replica in replicas(training_input):
        bundle = bundle_for(training_input, replica)
        if any(_fits(bundle, n.total) for n in nodes):
            continue
        largest = max(
            nodes,
            key=lambda n: (n.total.get("CPU", 0), n.total.get("memory", 0)),
            default=None,
        )
        has = (
            "it has no live node"
            if largest is None
            else (f"its largest node ({largest.address}) has {describe_bundle(largest.total)}")
        )
        return (
            _field_of(training_input, replica),
            f"{replica.task_name} ({replica.machine_type}) needs {describe_bundle(bundle)} on one "
            f"Ray node and {has}: choose a smaller machine type, or add a bigger node to the "
            "cluster.",
        )
    return None


def placement_reason(
    bundles: Sequence[Mapping[str, float]],
    reps: Sequence[Replica],
    nodes: Sequence[NodeResources],
) -> str:
    """Why a run's placement group waits, in words: what it needs against what is free.

    ``Waiting for the Ray cluster: the job needs 4 replicas (4 of 4 vCPU, 15 GB); the cluster
    has 3 nodes, with 8, 4 and 0 vCPU free.``
    """
    groups: dict[str, int] = {}
    for b in bundles:
        label = describe_bundle(b)
        groups[label] = groups.get(label, 0) + 1
    needs = "; ".join(f"{n} × {label}" for label, n in groups.items())
    free = ", ".join(f"{n.free.get('CPU', 0):g}" for n in nodes)
    count = len(nodes)
    fits = (
        sum(
            max(
                0,
                int(
                    min(
                        (float(n.free.get(k, 0)) / v for k, v in bundles[0].items() if v > 0),
                        default=0,
                    )
                ),
            )
            for n in nodes
        )
        if bundles
        else 0
    )
    wanted = sum(b.get("CPU", 0) for b in bundles)
    total = sum(float(n.total.get("CPU", 0)) for n in nodes)
    never = (
        f" That is more than the cluster's {total:g} vCPU in all: it starts only once nodes join."
        if wanted > total
        else ""
    )
    return (
        f"Waiting for the Ray cluster: the job needs {len(reps)} replica"
        f"{'s' if len(reps) != 1 else ''} ({needs}) placed at once; the cluster has {count} "
        f"node{'s' if count != 1 else ''} with {free or 'no'} vCPU free (room for {fits} now)."
        f"{never}"
    )
