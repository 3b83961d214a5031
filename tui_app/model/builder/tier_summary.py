"""What a scale tier (or a CUSTOM cluster) means, as rows a person can read: the builder's panel.

Everything comes from the one tier table (``tiers.py``): each replica group's machine type gives
its vCPUs, memory, built-in GPUs and ML units per hour, an ``acceleratorConfig`` adds its GPUs or
TPU and their units. The form is usually half-typed, so nothing here raises: an unknown machine
type or a count that is not a number becomes a row with the figures it cannot know left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tui_app.model.jobs.roles import ROLE_FIELDS
from tui_app.model.jobs.tiers import (
    ACCELERATORS,
    DEFAULT_SCALE_TIER,
    MACHINE_TYPES,
    SCALE_TIERS,
    Accelerator,
    ReplicaGroup,
    Role,
)
from tui_app.model.jobs.wire import as_int

ROLE_LABELS: dict[Role, str] = {
    Role.MASTER: "master",
    Role.WORKER: "workers",
    Role.PARAMETER_SERVER: "param servers",
    Role.EVALUATOR: "evaluators",
}
"""How the panel names each role (plural: a row is a group of replicas)."""

# BASIC_TPU's master runs beside a Cloud TPU worker; the tier table lists the master only, and
# the published tier figure (13.9743) is exactly the master's plus cloud_tpu's units.
_BASIC_TPU_WORKER = "cloud_tpu"


@dataclass(frozen=True)
class SummaryRow:
    """One group of identical replicas."""

    role: str
    """``master``, ``workers``, ``param servers``, ``evaluators`` or ``TPU worker``."""
    count: int
    machine_type: str
    vcpus: int | None
    """Per replica; None for an unknown machine type."""
    memory_gb: float | None
    """Per replica; None for an unknown machine type."""
    gpus: int
    """GPUs per replica: the machine's own plus its acceleratorConfig's."""
    accelerator: str
    """Short label of the GPU or TPU (``K80``, ``T4``, ``TPU v2``), empty when none."""
    tpu_cores: int
    """TPU cores per replica (a legacy cloud_tpu, or a TPU acceleratorConfig counts 8 each)."""
    ml_units_per_hour: float | None
    """The whole group's units per hour; None when a figure is unknown."""


@dataclass(frozen=True)
class TierSummary:
    """A cluster laid out by role, with totals."""

    tier: str
    description: str
    rows: tuple[SummaryRow, ...]
    replicas: int
    vcpus: int
    memory_gb: float
    gpus: int
    tpu_cores: int
    ml_units_per_hour: float | None
    """The tier's published figure, or the sum of the rows; None when a row's is unknown."""
    notes: tuple[str, ...] = ()
    """What the panel should also say (unknown machine types, an empty CUSTOM cluster)."""


def short_accelerator(acc: Accelerator) -> str:
    """``NVIDIA_TESLA_K80`` as ``K80``, ``TPU_V3_POD`` as ``TPU v3 Pod``."""
    if acc.is_tpu:
        return acc.name.replace("_POD", " Pod").replace("TPU_V", "TPU v")
    return acc.name.removeprefix("NVIDIA_TESLA_").removeprefix("NVIDIA_")


def _count(value: object) -> int | None:
    # A minus sign typed into a count makes it "not a whole number" here: a count is never
    # negative, and the panel says so rather than leaving the role out without a word.
    if isinstance(value, str) and value.strip().startswith("-"):
        return None
    return as_int(value)


def _row(
    role: str,
    count: int,
    machine_type: str,
    acc_type: str | None = None,
    acc_count: int = 0,
) -> tuple[SummaryRow, str | None]:
    """The row of ``count`` replicas and, when a figure cannot be known, a note saying why."""
    machine = MACHINE_TYPES.get(machine_type)
    acc = ACCELERATORS.get(acc_type or "")
    note = None
    if machine is None:
        note = f"{machine_type or '(no machine type)'} is not a known machine type."
    elif acc_type and acc is None and acc_type != "ACCELERATOR_TYPE_UNSPECIFIED":
        note = f"{acc_type} is not a known accelerator type."
    gpus = machine.gpus if machine else 0
    label = ""
    tpu_cores = machine.tpu_cores if machine else 0
    if machine and machine.gpu_type:
        label = short_accelerator(ACCELERATORS[machine.gpu_type])
    if machine and machine.tpu_cores:
        label = "TPU v2"
    if acc is not None and acc_count > 0:
        label = short_accelerator(acc)
        if acc.is_tpu:
            tpu_cores += 8 * acc_count
        else:
            gpus += acc_count
    units: float | None = None
    if machine is not None and note is None:
        group = ReplicaGroup(
            Role.MASTER, machine_type, count, acc.name if acc else None, acc_count if acc else 0
        )
        units = round(group.ml_units_per_hour, 4)
    row = SummaryRow(
        role=role,
        count=count,
        machine_type=machine_type,
        vcpus=machine.vcpus if machine else None,
        memory_gb=machine.memory_gb if machine else None,
        gpus=gpus,
        accelerator=label,
        tpu_cores=tpu_cores,
        ml_units_per_hour=units,
    )
    return row, note


def summarize_cluster(training_input: Mapping[str, Any]) -> TierSummary:
    """The replicas ``training_input`` runs, by role, with per-role figures and totals.

    Args:
        training_input: A (possibly invalid, half-filled) trainingInput in wire form.

    Returns:
        The summary. A non-CUSTOM tier shows its predefined layout and published ML units;
        CUSTOM shows each role that has a machine type and a count above zero.
    """
    tier_name = str(training_input.get("scaleTier") or DEFAULT_SCALE_TIER)
    tier = SCALE_TIERS.get(tier_name)
    if tier is None:
        why = f"{tier_name} is not one of {', '.join(SCALE_TIERS)}."
        return TierSummary(tier_name, "Not a scale tier.", (), 0, 0, 0.0, 0, 0, None, (why,))
    rows: list[SummaryRow] = []
    notes: list[str] = []
    if tier_name != "CUSTOM":
        for group in tier.groups:
            row, _ = _row(ROLE_LABELS[group.role], group.count, group.machine_type)
            rows.append(row)
        if tier_name == "BASIC_TPU":
            row, _ = _row("TPU worker", 1, _BASIC_TPU_WORKER)
            rows.append(row)
    else:
        for fields in ROLE_FIELDS:
            role, count_field = fields.role, fields.count_field
            mtype = training_input.get(fields.type_field)
            count = 1 if count_field is None else _count(training_input.get(count_field))
            raw = training_input.get(count_field) if count_field else None
            if count is None and raw not in (None, ""):
                notes.append(f"{count_field} is not a whole number.")
            if not mtype or not count or count <= 0:
                if role is Role.MASTER:
                    notes.append("A CUSTOM cluster needs a master machine type.")
                continue
            config = training_input.get(fields.config_field)
            acc = config.get("acceleratorConfig") if isinstance(config, Mapping) else None
            acc_type = acc.get("type") if isinstance(acc, Mapping) else None
            acc_count = (_count(acc.get("count")) or 0) if isinstance(acc, Mapping) else 0
            row, note = _row(ROLE_LABELS[role], count, str(mtype), acc_type, acc_count)
            rows.append(row)
            if note:
                notes.append(note)
    known = all(r.ml_units_per_hour is not None for r in rows)
    if tier.published_ml_units_per_hour is not None:
        units: float | None = tier.published_ml_units_per_hour
    elif known and rows:
        units = round(sum(r.ml_units_per_hour or 0.0 for r in rows), 4)
    else:
        units = None
    return TierSummary(
        tier=tier_name,
        description=tier.description,
        rows=tuple(rows),
        replicas=sum(r.count for r in rows),
        vcpus=sum((r.vcpus or 0) * r.count for r in rows),
        memory_gb=round(sum((r.memory_gb or 0.0) * r.count for r in rows), 1),
        gpus=sum(r.gpus * r.count for r in rows),
        tpu_cores=sum(r.tpu_cores * r.count for r in rows),
        ml_units_per_hour=units,
        notes=tuple(notes),
    )
