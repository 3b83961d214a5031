"""Admission: which queued job may start, given the machine's CPU slots and GPUs.

Strictly in order (``scheduling.priority``, higher first, then creation), so ``jobPosition``
means what it says: a job starts only when every job ahead of it has. No backfilling: a small job
never overtakes a big one, which would otherwise wait as long as small jobs keep coming.

Each replica takes one slot and its GPUs; an admitted job is told which GPU devices each replica
holds. A job bigger than the machine is cut down to it (``model.running.capacity.fit``) and so
runs once the machine is free rather than waiting forever.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from tui_app.model.running.capacity import (
    PCI_BUS_ORDER,
    Capacity,
    Demand,
    assign_gpus,
    first_gpus,
    fit,
    parse_nvidia_smi_list,
    parse_visible_devices,
)

JobKey = tuple[str, str]
NVIDIA_SMI_TIMEOUT_SECONDS = 10.0
LANE_MARK = "#lane-"
"""A tuning job's extra trial lanes queue as ``<jobId>#lane-N`` (``trials.py``)."""


def job_of(key: JobKey) -> str:
    """The job id behind a scheduler key (a tuning job's lanes count as the job)."""
    return key[1].split(LANE_MARK, 1)[0]


@dataclass(frozen=True)
class Grant:
    """What an admitted job holds."""

    demand: Demand
    """The job's demand as admitted (cut down to the machine where it asked for more)."""
    gpus: tuple[tuple[str, ...], ...]
    """Each replica's GPU device names, in replica order (empty for a replica without GPUs)."""


@dataclass(frozen=True)
class Wait:
    """Why a queued job waits: what it needs, what is free, who holds the rest and who goes
    first (admission is strictly in order). Jobs are ``(project, jobId)`` with the slots and
    GPUs they hold or ask for; a tuning job's lanes add up as one job."""

    position: int
    demand: Demand
    """What it asks for, cut down to the machine (``fit``)."""
    free_slots: int
    free_gpus: int
    running: tuple[tuple[JobKey, int, int], ...]
    ahead: tuple[tuple[JobKey, int, int], ...]


@dataclass(order=True)
class Ticket:
    """A job waiting for its slots and GPUs."""

    sort_key: tuple[int, int]
    key: JobKey = field(compare=False)
    demand: Demand = field(compare=False)
    admitted: asyncio.Future[Grant] = field(compare=False)


class Scheduler:
    """Priority then FIFO; ``on_positions`` hears every change of queue positions."""

    def __init__(
        self,
        capacity: Capacity,
        on_positions: Callable[[dict[JobKey, int]], None] | None = None,
        max_wait_scale: float = 1.0,
    ) -> None:
        self.capacity = capacity
        self.max_wait_scale = max_wait_scale
        """Multiplies every maxWaitTime (whose minimum is 1800s), so tests can see one expire."""
        self.used_slots = 0
        self._free_gpus: list[str] = list(capacity.gpu_ids)
        self._queue: list[Ticket] = []
        self._running: dict[JobKey, Grant] = {}
        self._seq = 0
        self._on_positions = on_positions or (lambda positions: None)

    def request(self, key: JobKey, demand: Demand, priority: int = 0) -> asyncio.Future[Grant]:
        """Queue a job; the future completes with its grant when it may start."""
        fut: asyncio.Future[Grant] = asyncio.get_running_loop().create_future()
        self._seq += 1
        fitted = fit(demand, self.capacity)
        self._queue.append(Ticket((-priority, self._seq), key, fitted, fut))
        self._queue.sort()
        self._pump()
        return fut

    def adopt(self, key: JobKey, demand: Demand, gpus: tuple[tuple[str, ...], ...]) -> Grant:
        """Hold what a job already running holds (its replicas outlived a service restart):
        its slots and these GPU devices, as if it had been admitted. Adopted jobs go before any
        request. The machine may have shrunk meanwhile: then nothing starts until enough is
        released (a device this service does not hand out is held by nobody)."""
        held = {d for devices in gpus for d in devices}
        self._free_gpus = [d for d in self._free_gpus if d not in held]
        self.used_slots += demand.slots
        grant = Grant(demand, gpus)
        self._running[key] = grant
        return grant

    def release(self, key: JobKey) -> None:
        """The job ended (or left the queue): free its slots and GPUs, start who fits."""
        grant = self._running.pop(key, None)
        if grant is not None:
            self.used_slots -= grant.demand.slots
            freed = {d for devices in grant.gpus for d in devices}
            self._free_gpus = [
                d for d in self.capacity.gpu_ids if d in freed or d in self._free_gpus
            ]
        self._queue = [t for t in self._queue if t.key != key]
        self._pump()

    def positions(self) -> dict[JobKey, int]:
        """Each waiting job's 1-based place in the queue."""
        return {t.key: i + 1 for i, t in enumerate(self._queue)}

    def wait_info(self, key: JobKey) -> Wait | None:
        """Why ``key`` waits, in numbers; None when it does not wait."""
        at = next((i for i, t in enumerate(self._queue) if t.key == key), None)
        if at is None:
            return None
        holders: dict[JobKey, tuple[int, int]] = {}
        for held_key, grant in self._running.items():
            job = (held_key[0], job_of(held_key))
            slots, gpus = holders.get(job, (0, 0))
            holders[job] = (slots + grant.demand.slots, gpus + grant.demand.total_gpus)
        return Wait(
            position=at + 1,
            demand=self._queue[at].demand,
            free_slots=max(0, self.capacity.slots - self.used_slots),
            free_gpus=len(self._free_gpus),
            running=tuple((job, slots, gpus) for job, (slots, gpus) in holders.items()),
            ahead=tuple(
                ((t.key[0], job_of(t.key)), t.demand.slots, t.demand.total_gpus)
                for t in self._queue[:at]
            ),
        )

    def _fits(self, demand: Demand) -> bool:
        return self.used_slots + demand.slots <= self.capacity.slots and demand.total_gpus <= len(
            self._free_gpus
        )

    def _pump(self) -> None:
        # A ticket whose waiter gave up (its job was cancelled) is dropped, never admitted.
        self._queue = [t for t in self._queue if not t.admitted.done()]
        while self._queue and self._fits(self._queue[0].demand):
            head = self._queue.pop(0)
            gpus = assign_gpus(head.demand.gpus, self._free_gpus)
            taken = {d for devices in gpus for d in devices}
            self._free_gpus = [d for d in self._free_gpus if d not in taken]
            self.used_slots += head.demand.slots
            grant = Grant(head.demand, gpus)
            self._running[head.key] = grant
            head.admitted.set_result(grant)
        self._on_positions(self.positions())


def detect_gpus(env: Mapping[str, str]) -> tuple[tuple[str, ...], str | None, str]:
    """The GPUs this service may hand out: (device names, CUDA_DEVICE_ORDER, where from).

    A ``CUDA_VISIBLE_DEVICES`` of the service's own environment is a choice made for it (a
    person, or a cluster scheduler above us): its devices, in its terms. Otherwise every GPU
    ``nvidia-smi -L`` lists. No nvidia-smi, or one that fails: no GPUs.
    """
    if "CUDA_VISIBLE_DEVICES" in env:
        return parse_visible_devices(env["CUDA_VISIBLE_DEVICES"]), None, "CUDA_VISIBLE_DEVICES"
    smi = shutil.which("nvidia-smi", path=env.get("PATH"))
    if smi is None:
        return (), None, "no nvidia-smi"
    try:
        out = subprocess.run(
            [smi, "-L"],
            capture_output=True,
            text=True,
            timeout=NVIDIA_SMI_TIMEOUT_SECONDS,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return (), None, "nvidia-smi -L failed"
    return parse_nvidia_smi_list(out), PCI_BUS_ORDER, "nvidia-smi"


def machine_capacity(
    slots: int | None, gpus: int | None, env: Mapping[str, str] | None = None
) -> Capacity:
    """The capacity to schedule on: ``slots`` (default: the machine's cores) and ``gpus``
    (default: the detected ones; a number is the first that many of them, or pretend devices
    ``0..n-1`` beyond what the machine has, for tests and demos)."""
    env = os.environ if env is None else env
    cores = max(1, slots or os.cpu_count() or 1)
    if gpus == 0:
        return Capacity(cores, (), None, "--gpus 0")
    detected, order, source = detect_gpus(env)
    if gpus is None:
        return Capacity(cores, detected, order, source)
    chosen = first_gpus(detected, gpus)
    if chosen == detected[:gpus]:
        return Capacity(cores, chosen, order, f"{source}, --gpus {gpus}")
    return Capacity(cores, chosen, PCI_BUS_ORDER, f"--gpus {gpus}")
