"""Scale tiers, machine types and accelerators: the one table every layer reads.

Figures follow the platform's old pricing page (ML units per hour) and its machine-type docs
(summed up in ``docs/wire-formats.md``). A legacy GPU type's ML units are its host's plus its
GPUs', which reproduces every published legacy figure exactly; accelerator units come from that
decomposition (K80, P100, V100) or from the same units-per-dollar ratio (T4, P4, A100, TPU v3;
estimates).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Role(StrEnum):
    """Replica roles, in the order the platform lays a cluster out."""

    MASTER = "master"
    WORKER = "worker"
    PARAMETER_SERVER = "ps"
    EVALUATOR = "evaluator"


@dataclass(frozen=True)
class Accelerator:
    """An accelerator type of ``AcceleratorConfig.type``."""

    name: str
    label: str
    ml_units_per_hour: float
    is_tpu: bool = False


ACCELERATORS: dict[str, Accelerator] = {
    a.name: a
    for a in (
        Accelerator("NVIDIA_TESLA_K80", "NVIDIA Tesla K80", 1.3409),
        Accelerator("NVIDIA_TESLA_P4", "NVIDIA Tesla P4", 1.7879),
        Accelerator("NVIDIA_TESLA_T4", "NVIDIA Tesla T4", 2.8308),
        Accelerator("NVIDIA_TESLA_P100", "NVIDIA Tesla P100", 4.3502),
        Accelerator("NVIDIA_TESLA_V100", "NVIDIA Tesla V100", 7.3894),
        Accelerator("NVIDIA_TESLA_A100", "NVIDIA A100", 8.7307),
        Accelerator("TPU_V2", "Cloud TPU v2 (8 cores)", 13.4082, is_tpu=True),
        Accelerator("TPU_V3", "Cloud TPU v3 (8 cores)", 23.8368, is_tpu=True),
        Accelerator("TPU_V2_POD", "Cloud TPU v2 Pod slice", 13.4082, is_tpu=True),
        Accelerator("TPU_V3_POD", "Cloud TPU v3 Pod slice", 23.8368, is_tpu=True),
        Accelerator("TPU_V4_POD", "Cloud TPU v4 Pod slice", 23.8368, is_tpu=True),
    )
}


TPU_CORES_PER_DEVICE = 8
"""A TPU accelerator's ML units are per device of this many cores (``acceleratorConfig.count``
counts cores on ``cloud_tpu``)."""

A2_ACCELERATOR = "NVIDIA_TESLA_A100"
"""The GPU of the A2 machine family; it attaches to no other machine."""


@dataclass(frozen=True)
class MachineType:
    """A machine type as ``masterType``/``workerType``/... accept it."""

    name: str
    vcpus: int
    memory_gb: float
    ml_units_per_hour: float
    legacy: bool
    """Legacy names (``standard``...) take no acceleratorConfig; Compute Engine names do."""
    compute_engine_equivalent: str
    gpus: int = 0
    gpu_type: str | None = None
    tpu_cores: int = 0

    @property
    def accepts_accelerators(self) -> bool:
        """Compute Engine machine types may carry an ``acceleratorConfig``, and so may
        ``cloud_tpu`` (a TPU type and core count); the other legacy types may not."""
        return not self.legacy or self.is_tpu

    @property
    def is_tpu(self) -> bool:
        """``cloud_tpu``: a Cloud TPU, which sits beside either machine family in a cluster."""
        return self.tpu_cores > 0

    def accepts_accelerator(self, accelerator: str) -> bool:
        """Whether ``acceleratorConfig.type`` may be ``accelerator`` on this machine.

        GPUs attach to N1 machines, A100s only to A2 machines (which have them built in), TPU
        types only to ``cloud_tpu``.
        """
        kind = ACCELERATORS.get(accelerator)
        if kind is None or not self.accepts_accelerators:
            return False
        if self.is_tpu or kind.is_tpu:
            return self.is_tpu and kind.is_tpu
        if self.gpu_type is not None or accelerator == A2_ACCELERATOR:
            return accelerator == self.gpu_type
        return True

    def summary(self) -> str:
        """One line a person can read: ``8 vCPU, 30 GB, 1x NVIDIA Tesla K80``."""
        parts = [f"{self.vcpus} vCPU", f"{self.memory_gb:g} GB"]
        if self.gpus and self.gpu_type:
            parts.append(f"{self.gpus}x {ACCELERATORS[self.gpu_type].label}")
        if self.tpu_cores:
            parts.append(f"TPU v2 ({self.tpu_cores} cores)")
        return ", ".join(parts)


def _ce_family(
    prefix: str, sizes: tuple[int, ...], gb_per_vcpu: float, units_per_vcpu: float
) -> tuple[MachineType, ...]:
    return tuple(
        MachineType(
            f"{prefix}-{n}",
            n,
            round(n * gb_per_vcpu, 1),
            round(n * units_per_vcpu, 4),
            False,
            f"{prefix}-{n}",
        )
        for n in sizes
    )


# Compute Engine families; units per vCPU from the legacy types that are these machines
# (standard = n1-standard-4, large_model = n1-highmem-8, complex_model_s = n1-highcpu-8).
_COMPUTE_ENGINE: tuple[MachineType, ...] = (
    *_ce_family("n1-standard", (4, 8, 16, 32, 64, 96), 3.75, 0.5661 / 4),
    *_ce_family("n1-highmem", (2, 4, 8, 16, 32, 64, 96), 6.5, 1.4111 / 8),
    *_ce_family("n1-highcpu", (16, 32, 64, 96), 0.9, 0.845 / 8),
    *(
        MachineType(
            f"a2-highgpu-{g}g",
            12 * g,
            85.0 * g,
            round(g * (12 * 0.5661 / 4 + ACCELERATORS[A2_ACCELERATOR].ml_units_per_hour), 4),
            False,
            f"a2-highgpu-{g}g",
            gpus=g,
            gpu_type=A2_ACCELERATOR,
        )
        for g in (1, 2, 4, 8)
    ),
)
_CE = {m.name: m for m in _COMPUTE_ENGINE}
# Hosts of legacy types that are not themselves valid CUSTOM machine types: their vCPUs and
# memory still explain the legacy type (complex_model_s is an n1-highcpu-8).
_HOST_ONLY = {m.name: m for m in _ce_family("n1-highcpu", (8,), 0.9, 0.845 / 8)}


def _legacy(
    name: str, host: str, units: float, gpus: int = 0, gpu: str | None = None, tpu_cores: int = 0
) -> MachineType:
    h = _CE.get(host) or _HOST_ONLY.get(host)
    vcpus = h.vcpus if h else 0
    mem = h.memory_gb if h else 0.0
    return MachineType(name, vcpus, mem, units, True, host, gpus, gpu, tpu_cores)


_LEGACY: tuple[MachineType, ...] = (
    _legacy("standard", "n1-standard-4", 0.5661),
    _legacy("large_model", "n1-highmem-8", 1.4111),
    _legacy("complex_model_s", "n1-highcpu-8", 0.845),
    _legacy("complex_model_m", "n1-highcpu-16", 1.69),
    _legacy("complex_model_l", "n1-highcpu-32", 3.38),
    _legacy("standard_gpu", "n1-standard-8", 2.4731, 1, "NVIDIA_TESLA_K80"),
    _legacy("complex_model_m_gpu", "n1-standard-16", 7.6278, 4, "NVIDIA_TESLA_K80"),
    _legacy("complex_model_l_gpu", "n1-standard-32", 15.2555, 8, "NVIDIA_TESLA_K80"),
    _legacy("standard_p100", "n1-standard-8", 5.4824, 1, "NVIDIA_TESLA_P100"),
    _legacy("complex_model_m_p100", "n1-standard-16", 19.6653, 4, "NVIDIA_TESLA_P100"),
    _legacy("standard_v100", "n1-standard-8", 8.5216, 1, "NVIDIA_TESLA_V100"),
    _legacy("large_model_v100", "n1-highmem-8", 8.8005, 1, "NVIDIA_TESLA_V100"),
    _legacy("complex_model_m_v100", "n1-standard-16", 31.822, 4, "NVIDIA_TESLA_V100"),
    _legacy("complex_model_l_v100", "n1-standard-32", 63.6441, 8, "NVIDIA_TESLA_V100"),
    _legacy("cloud_tpu", "TPU v2", 13.4082, tpu_cores=8),
)

MACHINE_TYPES: dict[str, MachineType] = {m.name: m for m in (*_LEGACY, *_COMPUTE_ENGINE)}
LEGACY_MACHINE_TYPES: tuple[str, ...] = tuple(m.name for m in _LEGACY)
COMPUTE_ENGINE_MACHINE_TYPES: tuple[str, ...] = tuple(m.name for m in _COMPUTE_ENGINE)


@dataclass(frozen=True)
class ReplicaGroup:
    """``count`` replicas of one role on one machine type."""

    role: Role
    machine_type: str
    count: int
    accelerator_type: str | None = None
    accelerator_count: int = 0

    @property
    def ml_units_per_hour(self) -> float:
        """What this group costs per hour while it runs.

        Accelerators add to the machine's price, except where the machine's price already is
        theirs: an A2 machine's figure includes its built-in A100s, and on ``cloud_tpu`` the count
        is TPU cores of the named TPU, priced per device of eight cores instead of the v2 default.
        """
        machine = MACHINE_TYPES[self.machine_type]
        per = machine.ml_units_per_hour
        acc = ACCELERATORS.get(self.accelerator_type or "")
        if acc is not None and self.accelerator_count > 0:
            if acc.is_tpu:
                per = acc.ml_units_per_hour * self.accelerator_count / TPU_CORES_PER_DEVICE
            elif not machine.gpus:
                per += self.accelerator_count * acc.ml_units_per_hour
        return per * self.count

    @property
    def gpus_per_replica(self) -> int:
        """GPUs each replica holds: its acceleratorConfig's, else its machine's built-in ones
        (``standard_gpu``, A2 types). TPUs are not GPUs: a TPU replica holds none."""
        acc = ACCELERATORS.get(self.accelerator_type or "")
        if acc is not None and not acc.is_tpu and self.accelerator_count > 0:
            return self.accelerator_count
        return MACHINE_TYPES[self.machine_type].gpus


@dataclass(frozen=True)
class ScaleTier:
    """A predefined cluster layout (``TrainingInput.scaleTier``)."""

    name: str
    description: str
    groups: tuple[ReplicaGroup, ...] = field(default_factory=tuple)
    published_ml_units_per_hour: float | None = None
    """The pricing page's figure; the sum of the groups differs from it only by rounding."""

    @property
    def ml_units_per_hour(self) -> float:
        """Total ML units per hour of the whole cluster."""
        if self.published_ml_units_per_hour is not None:
            return self.published_ml_units_per_hour
        return round(sum(g.ml_units_per_hour for g in self.groups), 4)

    @property
    def replica_count(self) -> int:
        """How many replica processes the tier runs."""
        return sum(g.count for g in self.groups)


SCALE_TIERS: dict[str, ScaleTier] = {
    t.name: t
    for t in (
        ScaleTier(
            "BASIC",
            "A single worker instance; good for learning and small models.",
            (ReplicaGroup(Role.MASTER, "standard", 1),),
        ),
        ScaleTier(
            "STANDARD_1",
            "Many workers and a few parameter servers.",
            (
                ReplicaGroup(Role.MASTER, "complex_model_s", 1),
                ReplicaGroup(Role.WORKER, "complex_model_s", 4),
                ReplicaGroup(Role.PARAMETER_SERVER, "standard", 3),
            ),
            published_ml_units_per_hour=5.9234,
        ),
        ScaleTier(
            "PREMIUM_1",
            "A large number of workers with many parameter servers.",
            (
                ReplicaGroup(Role.MASTER, "complex_model_m", 1),
                ReplicaGroup(Role.WORKER, "complex_model_m", 19),
                ReplicaGroup(Role.PARAMETER_SERVER, "large_model", 11),
            ),
            published_ml_units_per_hour=49.323,
        ),
        ScaleTier(
            "BASIC_GPU",
            "A single worker instance with one NVIDIA Tesla K80 GPU.",
            (ReplicaGroup(Role.MASTER, "standard_gpu", 1),),
        ),
        ScaleTier(
            "BASIC_TPU",
            "A master VM and a Cloud TPU with eight TPU v2 cores.",
            (ReplicaGroup(Role.MASTER, "standard", 1),),
            published_ml_units_per_hour=13.9743,
        ),
        ScaleTier(
            "CUSTOM",
            "Your own cluster: machine types and counts for each role.",
        ),
    )
}
DEFAULT_SCALE_TIER = "BASIC"


# -- Vertex AI (aiplatform v1): the same hardware as Vertex AI custom training offers it ---------

CLOUD_TPU_DEFAULT_ACCELERATOR = "TPU_V2"
"""The TPU of ``cloud_tpu`` without an acceleratorConfig, and of BASIC_TPU: a v2 device of
``TPU_CORES_PER_DEVICE`` cores (v2-8)."""

SCALE_TIER_TPUS: dict[str, str] = {"BASIC_TPU": "cloud_tpu"}
"""Tiers that attach a Cloud TPU beside their groups, and its machine type. The groups list only
the VM because the TPU's price is in the tier's published figure."""

VERTEX_RETIRED_ACCELERATORS: dict[str, tuple[str, int]] = {
    "NVIDIA_TESLA_K80": ("NVIDIA_TESLA_T4", 4)
}
"""GPUs Vertex AI no longer offers (the K80 reached end of support; aiplatform v1 marks it
deprecated), with the nearest GPU it does offer on the same N1 machines and the most of that GPU
one N1 VM takes (a T4 attaches 1, 2 or 4 per VM; eight K80s have no eight-T4 equivalent)."""

VERTEX_POD_ACCELERATORS: frozenset[str] = frozenset({"TPU_V2_POD", "TPU_V3_POD", "TPU_V4_POD"})
"""TPU Pod slices, which an ml v1 ``cloud_tpu`` + core count cannot express on Vertex AI: its
machine spec has no v2 or v3 Pod types at all, and TPU v4 runs on ``ct4p-*`` machines with a
``tpuTopology`` instead of a core count."""
