"""What a job asks of the machine, and how the machine's CPU slots and GPUs are shared out.

Pure rules for the local service's scheduler. A replica takes one CPU slot and its GPUs (the tier
table's ``ReplicaGroup.gpus_per_replica``); a job starts whole or not at all, as the platform
started every replica of a cluster together.

A job that asks for more than the whole machine has is cut down to the machine (``fit``) rather
than refused: CPU slots are time-shared, so a 31-replica PREMIUM_1 job on a 16-core machine only
runs slower; and a GPU job on a machine with fewer GPUs runs with the ones there are (none on a
laptop), so a config written for the cloud runs locally unchanged. Cut down, it needs all of that
resource to itself, which an idle machine always has: no job waits forever.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tui_app.model.jobs.cluster import Replica, replica_groups

PCI_BUS_ORDER = "PCI_BUS_ID"
"""``CUDA_DEVICE_ORDER`` under which CUDA numbers GPUs as ``nvidia-smi`` does (its default,
FASTEST_FIRST, may not)."""

_SMI_GPU = re.compile(r"^GPU (\d+): .*\(UUID: (GPU-[^)]+)\)")
_SMI_MIG = re.compile(r"^\s+MIG .*\(UUID: (MIG-[^)]+)\)")


@dataclass(frozen=True)
class Demand:
    """What one job asks for: CPU slots and each replica's GPUs."""

    task_names: tuple[str, ...]
    gpus: tuple[int, ...]
    """GPUs per replica, in ``task_names`` order."""
    slots: int
    """CPU slots: one per replica, unless cut down to the machine (``fit``)."""

    @property
    def total_gpus(self) -> int:
        """GPUs of the whole job."""
        return sum(self.gpus)


@dataclass(frozen=True)
class Capacity:
    """The machine as the scheduler shares it out."""

    slots: int
    gpu_ids: tuple[str, ...] = ()
    """Device names as ``CUDA_VISIBLE_DEVICES`` takes them (indices, or MIG UUIDs)."""
    device_order: str | None = None
    """``CUDA_DEVICE_ORDER`` to give replicas so that the names mean the same devices."""
    gpu_source: str = "none"
    """Where the GPUs came from, for the service's start-up line."""

    def describe(self) -> str:
        """``4 CPU slots, 2 GPUs (0,1 from nvidia-smi)``."""
        gpus = _gpus(len(self.gpu_ids))
        if self.gpu_ids:
            gpus += f" ({','.join(self.gpu_ids)} from {self.gpu_source})"
        elif self.gpu_source != "none":
            gpus += f" ({self.gpu_source})"
        return f"{self.slots} CPU slot{'' if self.slots == 1 else 's'}, {gpus}"


def job_demand(training_input: Mapping[str, Any]) -> Demand:
    """The slots and GPUs of a (validated) trainingInput, replica by replica."""
    names: list[str] = []
    gpus: list[int] = []
    for group in replica_groups(training_input):
        for index in range(group.count):
            names.append(Replica(group.role, index, group.machine_type).task_name)
            gpus.append(group.gpus_per_replica)
    return Demand(tuple(names), tuple(gpus), len(names))


def fit(demand: Demand, capacity: Capacity) -> Demand:
    """``demand`` cut down to what the whole machine has.

    Slots: at most all of them. GPUs: handed out in replica order (the master first, whose exit
    decides the job) until the machine's are used up; later replicas get fewer or none.
    """
    left = len(capacity.gpu_ids)
    gpus = []
    for want in demand.gpus:
        got = min(want, left)
        gpus.append(got)
        left -= got
    return Demand(demand.task_names, tuple(gpus), min(demand.slots, max(1, capacity.slots)))


def assign_gpus(gpus: Sequence[int], free: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    """Each replica's device names, taken in order from ``free`` (lowest first).

    Raises:
        ValueError: ``free`` has fewer devices than ``gpus`` adds up to.
    """
    if sum(gpus) > len(free):
        raise ValueError(f"{sum(gpus)} GPUs asked for, {len(free)} free")
    out = []
    at = 0
    for count in gpus:
        out.append(tuple(free[at : at + count]))
        at += count
    return tuple(out)


def shortfall_notes(demand: Demand, fitted: Demand, capacity: Capacity) -> list[str]:
    """What a person should know when the job was cut down to the machine (else nothing)."""
    notes = []
    if fitted.slots < demand.slots:
        notes.append(
            f"The job has {demand.slots} replicas and this machine {capacity.slots} CPU slots: "
            "it runs when no other job does, its replicas sharing the CPUs."
        )
    if fitted.gpus != demand.gpus:
        short = [
            f"{name} {got} of {want}"
            for name, want, got in zip(demand.task_names, demand.gpus, fitted.gpus, strict=True)
            if got < want
        ]
        notes.append(
            f"The job asks for {_gpus(demand.total_gpus)} and this machine has "
            f"{len(capacity.gpu_ids)}: it runs with {fitted.total_gpus} "
            f"(GPUs per replica: {', '.join(short)})."
        )
    return notes


def _gpus(count: int) -> str:
    return f"{count} GPU{'' if count == 1 else 's'}"


def parse_nvidia_smi_list(text: str) -> tuple[str, ...]:
    """The devices ``nvidia-smi -L`` lists, as ``CUDA_VISIBLE_DEVICES`` names them.

    A whole GPU is its index (with ``CUDA_DEVICE_ORDER=PCI_BUS_ID``, CUDA's numbering is
    nvidia-smi's); a GPU split by MIG is its MIG instances, which CUDA only takes by UUID.
    """
    devices: list[str] = []
    current: str | None = None
    migs: list[str] = []
    for line in text.splitlines():
        gpu = _SMI_GPU.match(line)
        if gpu:
            devices += migs or ([current] if current is not None else [])
            current, migs = gpu.group(1), []
            continue
        mig = _SMI_MIG.match(line)
        if mig and current is not None:
            migs.append(mig.group(1))
    devices += migs or ([current] if current is not None else [])
    return tuple(devices)


def parse_visible_devices(value: str) -> tuple[str, ...]:
    """The devices of a ``CUDA_VISIBLE_DEVICES`` value, as CUDA reads it.

    CUDA stops at the first entry that is not a device (``-1``, or an empty value hides all).
    """
    devices: list[str] = []
    for entry in (e.strip() for e in value.split(",")):
        if not entry or entry.startswith("-") or entry.lower() == "nodevfiles":
            break
        if entry not in devices:
            devices.append(entry)
    return tuple(devices)


def first_gpus(detected: Sequence[str], count: int) -> tuple[str, ...]:
    """``count`` device names: the first of ``detected``, or pretend ones ``0..count-1`` when
    the machine has fewer (``--gpus`` beyond the hardware is for tests and demos)."""
    if count <= len(detected):
        return tuple(detected[:count])
    return tuple(str(i) for i in range(count))
