"""ml v1 training jobs as Vertex AI custom jobs, and Vertex AI jobs as ml v1 jobs (no I/O).

A ``vertex`` profile runs the configs people already have (ml v1 ``Job`` with ``trainingInput``)
on Vertex AI, and shows what Vertex AI returns in the views built for ml v1 jobs. So the
translation goes both ways, and a job that went out comes back as a config that translates to the
same request (resubmit, edit-and-resubmit).

Facts come from the aiplatform v1 discovery document that ships in google-api-python-client
(field names, types, enums, and the descriptions quoted below), Google's Vertex AI pages (cited by
address where used), ``tiers.py`` (machine types and accelerators) and ``vertex_images.py``
(prebuilt images). Where Vertex AI has no equivalent the choice is ours, marked [M]. What cannot
run as written is refused with every such field named (``TranslationError``); what runs
differently, or is dropped, is reported as a note, so nothing changes silently.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from pydantic import BaseModel
from pydantic.alias_generators import to_camel

from tui_app.model.describe import DEFAULT_METRIC_TAG
from tui_app.model.job_spec import (
    DURATION,
    RUNTIME_PYTHON,
    AcceleratorConfig,
    DiskConfig,
    EncryptionConfig,
    FieldViolation,
    HyperparameterSpec,
    JobSpecError,
    ParameterSpec,
    ReplicaConfig,
    Scheduling,
    TrainingInput,
    label_violations,
    storage_path_error,
)
from tui_app.model.tiers import (
    ACCELERATORS,
    CLOUD_TPU_DEFAULT_ACCELERATOR,
    DEFAULT_SCALE_TIER,
    MACHINE_TYPES,
    SCALE_TIER_TPUS,
    SCALE_TIERS,
    TPU_CORES_PER_DEVICE,
    VERTEX_POD_ACCELERATORS,
    VERTEX_RETIRED_ACCELERATORS,
    MachineType,
    Role,
)
from tui_app.model.vertex_images import (
    LIST_URL,
    TrainingImage,
    find_tf_image,
    image_of_uri,
    machine_kind,
    runtimes_with_images,
    tf_image,
    tf_images,
)
from tui_app.model.vertex_resources import CUSTOM_JOBS, TUNING_JOBS, VERTEX_FIELD

__all__ = [
    "CUSTOM_JOBS",
    "TUNING_JOBS",
    "VERTEX_FIELD",
    "TranslationError",
    "VertexRequest",
    "executor_image",
    "from_vertex",
    "ml_state",
    "resource_id",
    "to_vertex",
    "vertex_notes",
]


MAX_DISPLAY_NAME = 128
TPU_MACHINE_TYPE = "cloud-tpu"
"""Vertex AI's machine type for a single-host TPU VM; the TPU type is the accelerator."""
CONSOLE = "https://console.cloud.google.com/vertex-ai/training"

_VERTEX_STATES: dict[str, str] = {
    "JOB_STATE_UNSPECIFIED": "STATE_UNSPECIFIED",
    "JOB_STATE_QUEUED": "QUEUED",
    "JOB_STATE_PENDING": "PREPARING",
    "JOB_STATE_RUNNING": "RUNNING",
    "JOB_STATE_UPDATING": "RUNNING",
    "JOB_STATE_CANCELLING": "CANCELLING",
    "JOB_STATE_SUCCEEDED": "SUCCEEDED",
    "JOB_STATE_FAILED": "FAILED",
    "JOB_STATE_CANCELLED": "CANCELLED",
    # These should not occur for custom jobs; they ended without success, or wait on a person.
    "JOB_STATE_EXPIRED": "FAILED",
    "JOB_STATE_PARTIALLY_SUCCEEDED": "FAILED",
    "JOB_STATE_PAUSED": "QUEUED",
}
# [M]: Vertex trial states onto the ml v1 job states that ml v1 trials used.
_TRIAL_STATES: dict[str, str] = {
    "STATE_UNSPECIFIED": "STATE_UNSPECIFIED",
    "REQUESTED": "QUEUED",
    "ACTIVE": "RUNNING",
    "STOPPING": "CANCELLING",
    "SUCCEEDED": "SUCCEEDED",
    "INFEASIBLE": "FAILED",
}
# A Compute Engine machine type name (n1-standard-8, a2-highgpu-1g, g2-standard-4): Vertex AI
# takes names our table does not list, so these pass through rather than being refused.
_CE_NAME = re.compile(r"^[a-z][a-z0-9]*-[a-z0-9]+(-[a-z0-9]+)*$")
_WHITESPACE = re.compile(r"\s")
MEDIAN_STOPPING = "medianAutomatedStoppingSpec"
MEDIAN_STOPPING_SPEC: Mapping[str, Any] = {"useElapsedDuration": False}
"""``enableTrialEarlyStopping: true`` on Vertex AI: the median rule, which the local service
runs too (optuna's MedianPruner). The discovery document's StudySpec.medianAutomatedStoppingSpec
"stops a pending Trial if the Trial's best objective_value is strictly below the median
'performance' of all completed Trials reported up to the Trial's last measurement", performance
being the running average of a trial's measurements (MedianPruner compares the latest value at
the same step instead; both wait on completed trials, and ml v1 never said which rule it ran).
``useElapsedDuration`` false compares trials by step, the ``global_step`` ml v1 trainers report
with cloudml-hypertune, not by elapsed time, which varies with machine and load."""
OTHER_STOPPING = {
    "decayCurveStoppingSpec": "decay-curve",
    "convexAutomatedStoppingSpec": "convex",
}
"""Vertex AI's other automated stopping rules: they read back as early stopping, with a note."""
_NAME = re.compile(r"^projects/(?P<project>[^/]+)/locations/(?P<region>[^/]+)/(?P<rest>.+)$")


@dataclass(frozen=True)
class VertexRequest:
    """What to send to Vertex AI for one ml v1 job."""

    collection: str
    """``CUSTOM_JOBS`` or ``TUNING_JOBS``: the collection under ``projects/*/locations/*``."""
    body: dict[str, Any]
    """A CustomJob or HyperparameterTuningJob, camelCase, int64 fields as strings."""
    notes: tuple[FieldViolation, ...]
    """Fields Vertex AI ignores or that run differently, each naming the ml v1 field and why."""


class TranslationError(JobSpecError):
    """The job cannot run on Vertex AI as written; ``violations`` names every such field by its
    ml v1 path (``trainingInput.packageUris[0]``), says why and what would work."""


@dataclass(frozen=True)
class _Role:
    role: Role
    pool: int
    """Its fixed position in ``workerPoolSpecs``: primary, workers, parameter servers,
    evaluators, as Google's distributed training page orders them."""
    type_field: str
    count_field: str | None
    config_field: str


_ROLES = (
    _Role(Role.MASTER, 0, "masterType", None, "masterConfig"),
    _Role(Role.WORKER, 1, "workerType", "workerCount", "workerConfig"),
    _Role(
        Role.PARAMETER_SERVER,
        2,
        "parameterServerType",
        "parameterServerCount",
        "parameterServerConfig",
    ),
    _Role(Role.EVALUATOR, 3, "evaluatorType", "evaluatorCount", "evaluatorConfig"),
)
_BY_ROLE = {r.role: r for r in _ROLES}
_P = "trainingInput"


@dataclass
class _Pool:
    """One used worker pool before its code is added."""

    role: _Role
    machine_spec: dict[str, Any]
    count: int
    config: Mapping[str, Any]
    """The ml v1 ReplicaConfig whose code, container and disk this pool runs."""
    config_path: str

    @property
    def gpu(self) -> bool:
        kind = ACCELERATORS.get(str(self.machine_spec.get("acceleratorType", "")))
        return kind is not None and not kind.is_tpu

    @property
    def tpu(self) -> bool:
        return self.machine_spec.get("machineType") == TPU_MACHINE_TYPE


@dataclass
class _Translation:
    """Refusals and notes gathered while translating, so every problem is reported at once."""

    region: str | None
    executor_image: str | None
    today: date | None = None
    """When known, images past their end of availability on Google's list are noted."""
    refusals: list[FieldViolation] = field(default_factory=list)
    notes: list[FieldViolation] = field(default_factory=list)

    def refuse(self, path: str, why: str) -> None:
        if not any(v.field == path and v.description == why for v in self.refusals):
            self.refusals.append(FieldViolation(path, why))

    def note(self, path: str, why: str) -> None:
        if not any(v.field == path and v.description == why for v in self.notes):
            self.notes.append(FieldViolation(path, why))


# -- ml v1 -> Vertex AI -----------------------------------------------------------------------


def to_vertex(
    job: Mapping[str, Any],
    *,
    region: str,
    executor_image: str | None = None,
    today: date | None = None,
) -> VertexRequest:
    """The Vertex AI request that runs an ml v1 job.

    Args:
        job: An ml v1 Job (``jobId``, ``labels``, ``trainingInput``); output fields are ignored.
        region: Where the profile runs jobs; a different ``trainingInput.region`` is refused.
        executor_image: The profile's image for Python-package jobs; without it the image
            follows ``runtimeVersion`` and ``pythonVersion`` (``vertex_images.find_tf_image``).
        today: The date, when the caller knows it: an image Google's list says is no longer
            available on it is noted. This module never reads the clock itself.

    Returns:
        The collection, the body and the notes.

    Raises:
        TranslationError: naming every field that cannot run on Vertex AI.
    """
    t = _Translation(region, executor_image, today)
    collection, body = _translate(job, t)
    if t.refusals:
        raise TranslationError(t.refusals)
    return VertexRequest(collection, body, tuple(t.notes))


def vertex_notes(
    training_input: Mapping[str, Any],
    *,
    region: str | None = None,
    executor_image: str | None = None,
    today: date | None = None,
) -> list[FieldViolation]:
    """The fields of a trainingInput that Vertex AI ignores or runs differently (for the builder
    and, for a job read back from Vertex AI, for its detail).

    Never raises: refusals are ``to_vertex``'s business; these are the same notes it returns.

    Args:
        training_input: An ml v1 TrainingInput, valid or not.
        region: The profile's region, when known.
        executor_image: The profile's image for Python-package jobs, when it has one.
        today: The date, when known (see ``to_vertex``).

    Returns:
        The notes, [] for a config that runs on Vertex AI as written.
    """
    t = _Translation(region, executor_image, today)
    if isinstance(training_input, Mapping):
        _translate({"jobId": "notes", "trainingInput": training_input}, t)
    return t.notes


def executor_image(
    runtime_version: str | None,
    *,
    gpu: bool,
    tpu: bool,
    region: str,
    python_version: str | None = None,
) -> str:
    """The prebuilt image that runs a Python package written for an ml v1 runtime.

    Args:
        runtime_version: ``trainingInput.runtimeVersion``.
        gpu: The replica has GPUs.
        tpu: The replica is a TPU VM.
        region: Where the job runs.
        python_version: ``trainingInput.pythonVersion``; None lets the newest Python on Google's
            list for that TensorFlow run it.

    Returns:
        The image URI (``vertex_images.tf_image``).

    Raises:
        TranslationError: naming ``trainingInput.runtimeVersion`` (or ``pythonVersion``) when
            Google's list has no such image, with the runtimes it does have images for.
    """
    return _listed_image(runtime_version, python_version, machine_kind(gpu=gpu, tpu=tpu)).uri(
        region
    )


def _listed_image(runtime: str | None, python: str | None, kind: str) -> TrainingImage:
    """The row of Google's list that runs this runtime and Python on this kind of machine; a
    refusal names what the list has instead, since guessing an image name that does not exist
    would only fail later, on Vertex AI, with a less helpful message."""
    image = find_tf_image(runtime, kind=kind, python_version=python)
    if image is not None:
        return image
    machines = {"cpu": "CPU", "gpu": "GPU", "tpu": "TPU"}[kind]
    fix = "or set the profile's executor_image to an image that runs your package"
    exists = f"Google's list ({LIST_URL}) has {machines} images for TensorFlow " + (
        runtimes_with_images(kind)
    )
    same_runtime = tf_images(runtime, kind)
    if runtime and same_runtime and python:
        pythons = ", ".join(i.python for i in same_runtime)
        raise TranslationError(
            [
                FieldViolation(
                    f"{_P}.pythonVersion",
                    f"Google's list has TensorFlow {runtime} {machines} images for Python "
                    f"{pythons} only, not {python}; set pythonVersion to {same_runtime[0].python} "
                    f"or remove it, {fix}.",
                )
            ]
        )
    if not runtime:
        why = (
            f"runtimeVersion is not set, so no prebuilt Vertex AI image is known for the "
            f"package. {exists}: set one of those runtimes, {fix}."
        )
    else:
        why = (
            f"Vertex AI has no prebuilt TensorFlow {runtime} image for {machines} machines. "
            f"{exists}: use one of those runtimes, {fix}."
        )
    raise TranslationError([FieldViolation(f"{_P}.runtimeVersion", why)])


def _translate(job: object, t: _Translation) -> tuple[str, dict[str, Any]]:
    body: dict[str, Any] = {}
    # Jobs arrive from YAML files and other backends: the declared type is a hope, not a fact.
    if not isinstance(job, Mapping):
        t.refuse("job", "The job must be an ml v1 Job object (jobId, labels, trainingInput).")
        return CUSTOM_JOBS, body
    job_id = job.get("jobId")
    if not isinstance(job_id, str) or not job_id:
        t.refuse(
            "jobId",
            "A jobId is required: it becomes the Vertex AI display name (1 to "
            f"{MAX_DISPLAY_NAME} characters).",
        )
    elif len(job_id) > MAX_DISPLAY_NAME:
        t.refuse(
            "jobId",
            f"jobId has {len(job_id)} characters; Vertex AI display names have at most "
            f"{MAX_DISPLAY_NAME}.",
        )
    else:
        body["displayName"] = job_id
    labels = job.get("labels")
    if labels:
        if isinstance(labels, Mapping) and all(isinstance(v, str) for v in labels.values()):
            for v in label_violations(labels):
                t.refuse(v.field, v.description)
            body["labels"] = dict(labels)
        else:
            t.refuse("labels", "labels must map lowercase keys to lowercase string values.")
    if job.get("predictionInput") is not None:
        t.refuse(
            "predictionInput",
            "Batch prediction jobs do not translate to Vertex AI training; only trainingInput "
            "jobs run on a vertex profile.",
        )
    ti = job.get("trainingInput")
    if not isinstance(ti, Mapping):
        t.refuse("trainingInput", "A job needs a trainingInput object to run on Vertex AI.")
        return CUSTOM_JOBS, body
    _unknown_fields(ti, TrainingInput, _P, t)
    spec = _custom_job_spec(ti, t)
    kms = _mapping(ti.get("encryptionConfig")).get("kmsKeyName")
    if kms:
        body["encryptionSpec"] = {"kmsKeyName": str(kms)}
    hp = ti.get("hyperparameters")
    if isinstance(hp, Mapping) and hp:
        body.update(_tuning_fields(hp, f"{_P}.hyperparameters", t))
        _tuning_machines(spec, t)
        _trial_directory_note(spec, t)
        body["trialJobSpec"] = spec
        return TUNING_JOBS, body
    body["jobSpec"] = spec
    return CUSTOM_JOBS, body


def _unknown_fields(
    value: Mapping[str, Any], model: type[BaseModel], path: str, t: _Translation
) -> None:
    """Refuse keys ml v1 does not define: a typo would otherwise be dropped without a word."""
    known = {to_camel(name) for name in model.model_fields}
    nested: dict[str, type[BaseModel]] = {
        "masterConfig": ReplicaConfig,
        "workerConfig": ReplicaConfig,
        "parameterServerConfig": ReplicaConfig,
        "evaluatorConfig": ReplicaConfig,
        "acceleratorConfig": AcceleratorConfig,
        "diskConfig": DiskConfig,
        "scheduling": Scheduling,
        "encryptionConfig": EncryptionConfig,
        "hyperparameters": HyperparameterSpec,
    }
    for key, item in value.items():
        if key not in known:
            t.refuse(
                f"{path}.{key}",
                f"Unknown field: ml v1 has no {key!r} here, so it cannot be translated; "
                f"the fields are {', '.join(sorted(known))}.",
            )
        elif key in nested and isinstance(item, Mapping):
            _unknown_fields(item, nested[key], f"{path}.{key}", t)
        elif key == "params" and isinstance(item, list):
            for i, param in enumerate(item):
                if isinstance(param, Mapping):
                    _unknown_fields(param, ParameterSpec, f"{path}.params[{i}]", t)


def _custom_job_spec(ti: Mapping[str, Any], t: _Translation) -> dict[str, Any]:
    """The CustomJobSpec: pools, scheduling, output directory, identity and network."""
    job_region = ti.get("region")
    if t.region is not None and job_region and job_region != t.region:
        t.refuse(
            f"{_P}.region",
            f"This profile runs jobs in {t.region}, not {job_region}; remove region or set it "
            f"to {t.region} (or use a profile for {job_region}).",
        )
    region = t.region or (job_region if isinstance(job_region, str) else None) or "us-central1"
    _ignored_fields(ti, t)
    pools = _pools(ti, t)
    job_dir = _job_dir(ti, t)
    specs: list[dict[str, Any]] = []
    for slot in pools:
        if slot is None:
            specs.append({})
            continue
        spec: dict[str, Any] = {"machineSpec": slot.machine_spec, "replicaCount": str(slot.count)}
        disk = _disk_spec(slot.config, slot.config_path, t)
        if disk:
            spec["diskSpec"] = disk
        spec.update(_code_spec(ti, slot, job_dir, region, t))
        specs.append(spec)
    while specs and not specs[-1]:
        specs.pop()  # trailing skipped pools are left out; only gaps before a used pool stay {}
    out: dict[str, Any] = {"workerPoolSpecs": specs}
    scheduling = _mapping(ti.get("scheduling"))
    timeout = scheduling.get("maxRunningTime")
    if timeout is not None:
        if isinstance(timeout, str) and DURATION.match(timeout):
            out["scheduling"] = {"timeout": timeout}
        else:
            t.refuse(
                f"{_P}.scheduling.maxRunningTime",
                f"{timeout!r} is not a duration; write seconds such as 7200s.",
            )
    if job_dir:
        out["baseOutputDirectory"] = {"outputUriPrefix": job_dir}
    for name in ("serviceAccount", "network"):
        if ti.get(name):
            out[name] = str(ti[name])
    if ti.get("enableWebAccess") is True:
        out["enableWebAccess"] = True
    return out


def _ignored_fields(ti: Mapping[str, Any], t: _Translation) -> None:
    """Notes for the ml v1 fields Vertex AI has no place for."""
    scheduling = _mapping(ti.get("scheduling"))
    if scheduling.get("maxWaitTime") is not None:
        t.note(
            f"{_P}.scheduling.maxWaitTime",
            "Ignored: Vertex AI has no limit on how long a standard job waits to start "
            "(maxWaitDuration applies only to FLEX_START jobs); cancel the job if it has not "
            "started in time.",
        )
    if scheduling.get("priority") is not None:
        t.note(
            f"{_P}.scheduling.priority",
            "Ignored: Vertex AI custom jobs have no priority; jobs start in the order "
            "resources become free.",
        )
    if ti.get("useChiefInTfConfig") is not None:
        t.note(
            f"{_P}.useChiefInTfConfig",
            "Ignored: Vertex AI always names the primary replica 'chief' in TF_CONFIG (never "
            "'master'), as useChiefInTfConfig: true did.",
        )
    for role in _ROLES:
        if _mapping(ti.get(role.config_field)).get("tpuTfVersion") is not None:
            t.note(
                f"{_P}.{role.config_field}.tpuTfVersion",
                "Ignored: a TPU VM runs the TensorFlow of the job's image; there is no "
                "separate TPU software version.",
            )


# -- pools ------------------------------------------------------------------------------------


def _pools(ti: Mapping[str, Any], t: _Translation) -> list[_Pool | None]:
    """The four fixed pool positions, None where a role runs nothing."""
    pools: list[_Pool | None] = [None, None, None, None]
    tier = ti.get("scaleTier") or DEFAULT_SCALE_TIER
    master_config = _mapping(ti.get("masterConfig"))
    master_path = f"{_P}.masterConfig"
    if not isinstance(tier, str) or tier not in SCALE_TIERS:
        t.refuse(
            f"{_P}.scaleTier",
            f"Unknown scale tier {tier!r}; the tiers are {', '.join(SCALE_TIERS)}.",
        )
        return pools
    if tier != "CUSTOM":
        for role in _ROLES:
            if ti.get(role.type_field):
                t.note(
                    f"{_P}.{role.type_field}",
                    f"Ignored: scaleTier {tier} sets the machines; only CUSTOM reads "
                    f"{role.type_field}.",
                )
    if tier in SCALE_TIER_TPUS:
        spec = _tpu_machine_spec(master_config, master_path, t)
        pools[0] = _Pool(_ROLES[0], spec, 1, master_config, master_path)
        t.note(f"{_P}.scaleTier", _tpu_vm_note(f"{tier} ran", spec))
        return pools
    if tier != "CUSTOM":
        for group in SCALE_TIERS[tier].groups:
            role = _BY_ROLE[group.role]
            config_path = f"{_P}.{role.config_field}"
            machine = _machine_spec(
                group.machine_type,
                {},
                f"{_P}.scaleTier",
                config_path,
                t,
                label=f"scaleTier {tier} ({group.machine_type})",
            )
            if machine is not None:
                config = _mapping(ti.get(role.config_field))
                pools[role.pool] = _Pool(role, machine, group.count, config, config_path)
        return pools
    _custom_pools(ti, pools, t)
    return pools


def _custom_pools(ti: Mapping[str, Any], pools: list[_Pool | None], t: _Translation) -> None:
    """CUSTOM roles into their pools; a Cloud TPU takes the primary pool wherever ml v1 put
    it, because on Vertex AI the TPU VM is where the code runs."""
    if not ti.get("masterType"):
        t.refuse(
            f"{_P}.masterType",
            "masterType is required when scaleTier is CUSTOM (the primary replica's machine).",
        )
    for role in _ROLES:
        mtype = ti.get(role.type_field)
        count = 1 if role.count_field is None else _count(ti, role.count_field, t)
        if not mtype or not count:
            continue
        type_path = f"{_P}.{role.type_field}"
        config = _mapping(ti.get(role.config_field))
        config_path = f"{_P}.{role.config_field}"
        if not isinstance(mtype, str):
            t.refuse(type_path, "A machine type is a name such as n1-standard-8.")
            continue
        machine = MACHINE_TYPES.get(mtype)
        if machine is None or not machine.is_tpu:
            spec = _machine_spec(mtype, config, type_path, config_path, t)
            if spec is not None:
                pools[role.pool] = _Pool(role, spec, count, config, config_path)
            continue
        spec = _tpu_machine_spec(config, config_path, t)
        if role.role is Role.MASTER:
            pools[0] = _Pool(role, spec, 1, config, config_path)
        elif role.role is Role.WORKER:
            _tpu_worker(ti, spec, count, pools, t)
        else:
            t.refuse(
                type_path,
                f"A Cloud TPU cannot be a {role.role.value} replica on Vertex AI; use a Compute "
                "Engine machine type such as n1-standard-8 (a TPU runs the training code).",
            )


def _tpu_worker(
    ti: Mapping[str, Any],
    spec: dict[str, Any],
    count: int,
    pools: list[_Pool | None],
    t: _Translation,
) -> None:
    """ml v1's ``cloud_tpu`` worker was a TPU Node beside the master VM that ran the code; on
    Vertex AI the code runs on the TPU VM itself, so the TPU VM becomes the primary pool with
    the master's code and disk, and the master VM goes ([M], as for BASIC_TPU)."""
    path = f"{_P}.workerType"
    if count > 1:
        t.refuse(
            f"{_P}.workerCount",
            f"workerCount is {count} with workerType cloud_tpu; on Vertex AI a job's code runs "
            "on one TPU VM, so use workerCount 1 (or Compute Engine workers).",
        )
        return
    master_type = ti.get("masterType")
    if master_type == "cloud_tpu":
        t.refuse(path, "masterType is already cloud_tpu; a job runs on one TPU VM on Vertex AI.")
        return
    master_config = _mapping(ti.get("masterConfig"))
    pools[0] = _Pool(_ROLES[0], spec, 1, master_config, f"{_P}.masterConfig")
    pools[1] = None
    t.note(
        path,
        _tpu_vm_note("cloud_tpu ran", spec)
        + f" The masterType {master_type} VM is not used: the TPU VM runs the master's code.",
    )


def _tpu_vm_note(what: str, spec: Mapping[str, Any]) -> str:
    return (
        f"{what} your code on a VM beside a TPU Node; Vertex AI runs it on a TPU VM "
        f"({TPU_MACHINE_TYPE}, {spec['acceleratorType']}, {spec['acceleratorCount']} cores) as "
        "the primary replica, so code that connects to a TPU by name (TPUClusterResolver) may "
        "need changes."
    )


def _machine_spec(
    mtype: str,
    config: Mapping[str, Any],
    type_path: str,
    config_path: str,
    t: _Translation,
    *,
    label: str | None = None,
) -> dict[str, Any] | None:
    """A machineSpec for a legacy or Compute Engine machine type and its acceleratorConfig;
    ``label`` is what a note calls the machine (a tier's, by the tier)."""
    machine = MACHINE_TYPES.get(mtype)
    if machine is None and not _CE_NAME.match(mtype):
        t.refuse(
            type_path,
            f"Unknown machine type {mtype!r}; use a legacy type (standard, complex_model_m, "
            "...), a Compute Engine type (n1-standard-8, a2-highgpu-1g, ...) or cloud_tpu.",
        )
        return None
    spec: dict[str, Any] = {"machineType": machine.compute_engine_equivalent if machine else mtype}
    acc = config.get("acceleratorConfig")
    acc_path = f"{config_path}.acceleratorConfig"
    if isinstance(acc, Mapping) and acc:
        if machine is not None and machine.legacy:
            t.refuse(
                acc_path,
                f"{mtype} is a legacy machine type with its GPUs built in; remove "
                "acceleratorConfig or use a Compute Engine type such as n1-standard-8.",
            )
            return spec
        kind, count = _accelerator(acc, acc_path, t, tpu=False)
        if kind is not None and count is not None:
            spec["acceleratorType"] = kind
            spec["acceleratorCount"] = count
    elif machine is not None and machine.gpus and machine.gpu_type:
        kind, count = _vertex_gpus(machine)
        if kind != machine.gpu_type:
            more = " (the most one VM takes)" if count < machine.gpus else ""
            t.note(
                type_path,
                f"{label or mtype} has {machine.gpus}x {machine.gpu_type}, which Vertex AI no "
                f"longer offers (end of support); it runs on {spec['machineType']} with "
                f"{count}x {kind}{more} instead.",
            )
        spec["acceleratorType"] = kind
        spec["acceleratorCount"] = count
    return spec


def _vertex_gpus(machine: MachineType) -> tuple[str | None, int]:
    """A machine's built-in GPUs as Vertex AI runs them: retired ones replaced."""
    kind, count = machine.gpu_type, machine.gpus
    if kind in VERTEX_RETIRED_ACCELERATORS:
        new, most = VERTEX_RETIRED_ACCELERATORS[kind]
        return new, min(count, most)
    return kind, count


def _tpu_machine_spec(
    config: Mapping[str, Any], config_path: str, t: _Translation
) -> dict[str, Any]:
    """A single-host TPU VM: ml v1's core count is Vertex's acceleratorCount (8 for v2-8/v3-8)."""
    kind: str | None = CLOUD_TPU_DEFAULT_ACCELERATOR
    count: int | None = TPU_CORES_PER_DEVICE
    acc = config.get("acceleratorConfig")
    acc_path = f"{config_path}.acceleratorConfig"
    if isinstance(acc, Mapping) and acc:
        kind, count = _accelerator(acc, acc_path, t, tpu=True)
        if count is not None and count != TPU_CORES_PER_DEVICE:
            t.refuse(
                f"{acc_path}.count",
                f"A Vertex AI TPU VM has {TPU_CORES_PER_DEVICE} cores (v2-8, v3-8); "
                f"count {count} would need a Pod slice. Use count {TPU_CORES_PER_DEVICE}.",
            )
    return {
        "machineType": TPU_MACHINE_TYPE,
        "acceleratorType": kind or CLOUD_TPU_DEFAULT_ACCELERATOR,
        "acceleratorCount": TPU_CORES_PER_DEVICE,
    }


def _accelerator(
    acc: Mapping[str, Any], path: str, t: _Translation, *, tpu: bool
) -> tuple[str | None, int | None]:
    """An explicit acceleratorConfig's type and count, or None for what cannot be used."""
    kind = _str(acc.get("type"))
    count = _int(acc.get("count"))
    if count is None or count < 1:
        t.refuse(f"{path}.count", "The accelerator count must be a whole number, 1 or more.")
        count = None
    gpus = sorted(
        a.name
        for a in ACCELERATORS.values()
        if not a.is_tpu and a.name not in VERTEX_RETIRED_ACCELERATORS
    )
    tpus = sorted(
        a.name for a in ACCELERATORS.values() if a.is_tpu and a.name not in VERTEX_POD_ACCELERATORS
    )
    allowed = tpus if tpu else gpus
    if kind in VERTEX_RETIRED_ACCELERATORS:
        new = VERTEX_RETIRED_ACCELERATORS[kind][0]
        t.refuse(
            f"{path}.type",
            f"{kind} is no longer offered by Vertex AI (end of support); use {new} instead "
            f"(or {', '.join(g for g in gpus if g != new)}).",
        )
        return None, count
    if kind in VERTEX_POD_ACCELERATORS:
        t.refuse(
            f"{path}.type",
            f"{kind} Pod slices cannot be expressed as a Vertex AI custom job from an ml v1 "
            f"config; use a single TPU VM ({', '.join(tpus)} with count {TPU_CORES_PER_DEVICE}).",
        )
        return None, count
    accelerator = ACCELERATORS.get(kind or "")
    if accelerator is None or accelerator.is_tpu != tpu:
        where = "cloud_tpu" if tpu else "a Compute Engine machine"
        t.refuse(
            f"{path}.type",
            f"{kind!r} cannot be attached to {where} on Vertex AI; allowed are "
            f"{', '.join(allowed)}.",
        )
        return None, count
    return accelerator.name, count


def _disk_spec(config: Mapping[str, Any], config_path: str, t: _Translation) -> dict[str, Any]:
    disk = _mapping(config.get("diskConfig"))
    out: dict[str, Any] = {}
    if disk.get("bootDiskType"):
        out["bootDiskType"] = str(disk["bootDiskType"])
    if disk.get("bootDiskSizeGb") is not None:
        size = _int(disk["bootDiskSizeGb"])
        if size is None or size < 1:
            t.refuse(
                f"{config_path}.diskConfig.bootDiskSizeGb",
                "bootDiskSizeGb must be a whole number of GB (Vertex AI's default is 100).",
            )
        else:
            out["bootDiskSizeGb"] = size
    return out


def _count(ti: Mapping[str, Any], name: str, t: _Translation) -> int:
    value = ti.get(name)
    if value is None:
        return 0
    count = _int(value)
    if count is None or count < 0:
        t.refuse(f"{_P}.{name}", f"{name} must be a whole number, 0 or more.")
        return 0
    return count


# -- code -------------------------------------------------------------------------------------


def _job_dir(ti: Mapping[str, Any], t: _Translation) -> str | None:
    job_dir = ti.get("jobDir")
    if not job_dir:
        return None
    text = str(job_dir)
    why = storage_path_error(text) if text.startswith("gs://") else None
    if not text.startswith("gs://") or why:
        t.refuse(
            f"{_P}.jobDir",
            why
            or f"{text!r} is not in Cloud Storage; Vertex AI writes outputs only to gs:// "
            "paths, such as gs://bucket/jobs/name.",
        )
        return None
    return text


def _code_spec(
    ti: Mapping[str, Any], pool: _Pool, job_dir: str | None, region: str, t: _Translation
) -> dict[str, Any]:
    """One pool's containerSpec or pythonPackageSpec: ml v1 ran the same code on every replica,
    the master's image unless the role had its own, and passed ``--job-dir`` last."""
    master = _mapping(ti.get("masterConfig"))
    image = pool.config.get("imageUri") or master.get("imageUri")
    job_args = _strings(ti.get("args"), f"{_P}.args", t)
    tail = [f"--job-dir={job_dir}"] if job_dir else []
    if image:
        command = _strings(
            pool.config.get("containerCommand"), f"{pool.config_path}.containerCommand", t
        )
        container_args = _strings(
            pool.config.get("containerArgs"), f"{pool.config_path}.containerArgs", t
        )
        if (command or container_args) and job_args:
            # ml v1 made them exclusive: with containerCommand/containerArgs the entrypoint is
            # the person's own, and trainingInput.args had nowhere defined to go.
            t.refuse(
                f"{_P}.args",
                "Set either args or containerCommand/containerArgs, not both (as in ml v1).",
            )
        args = (container_args if command or container_args else job_args) + tail
        container: dict[str, Any] = {"imageUri": str(image)}
        if command:
            container["command"] = command
        if args:
            container["args"] = args
        if ti.get("runtimeVersion"):
            t.note(
                f"{_P}.runtimeVersion",
                "Ignored: a custom container brings its own runtime.",
            )
        if ti.get("pythonVersion"):
            t.note(f"{_P}.pythonVersion", "Ignored: a custom container brings its own Python.")
        return {"containerSpec": container}
    packages = _package_uris(ti, t)
    module = ti.get("pythonModule")
    if not module:
        t.refuse(
            f"{_P}.pythonModule",
            "pythonModule is required unless masterConfig.imageUri names a container.",
        )
    if t.executor_image:
        uri = t.executor_image
        for name in ("runtimeVersion", "pythonVersion"):
            if ti.get(name):
                t.note(
                    f"{_P}.{name}",
                    f"Ignored: the profile's executor_image {uri} runs the package.",
                )
    else:
        uri = _runtime_image(ti, pool, region, t)
    python: dict[str, Any] = {
        "executorImageUri": uri,
        "packageUris": packages,
        "pythonModule": str(module or ""),
    }
    if job_args + tail:
        python["args"] = job_args + tail
    return {"pythonPackageSpec": python}


def _runtime_image(ti: Mapping[str, Any], pool: _Pool, region: str, t: _Translation) -> str:
    """The listed image for the job's runtimeVersion and pythonVersion on this pool's machine
    (``vertex_images``), "" after a refusal."""
    try:
        image = _listed_image(
            _str(ti.get("runtimeVersion")),
            _str(ti.get("pythonVersion")),
            machine_kind(gpu=pool.gpu, tpu=pool.tpu),
        )
    except TranslationError as exc:
        for v in exc.violations:
            t.refuse(v.field, v.description)
        return ""
    if t.today is not None and image.end_of_availability < t.today:
        # Google's framework support policy: after this date "you can no longer use images for
        # this framework version" and services "might block the creation of new resources".
        t.note(
            f"{_P}.runtimeVersion",
            f"Runs on {image.tag} (TensorFlow {image.tensorflow}, Python {image.python}), whose "
            f"end of availability on Google's list ({LIST_URL}) was "
            f"{image.end_of_availability.isoformat()}: Vertex AI may refuse new jobs on it. If "
            "it does, set the profile's executor_image to a current image from that list.",
        )
    return image.uri(region)


def _package_uris(ti: Mapping[str, Any], t: _Translation) -> list[str]:
    uris = _strings(ti.get("packageUris"), f"{_P}.packageUris", t)
    if not uris:
        t.refuse(
            f"{_P}.packageUris",
            "packageUris is required unless masterConfig.imageUri names a container.",
        )
    for i, uri in enumerate(uris):
        why = storage_path_error(uri) if uri.startswith("gs://") else None
        if not uri.startswith("gs://"):
            why = (
                f"{uri!r} is a local path; Vertex AI installs packages only from Cloud "
                "Storage. Upload it (gcloud storage cp) and use its gs:// URI."
            )
        if why:
            t.refuse(f"{_P}.packageUris[{i}]", why)
    return uris


# -- hyperparameter tuning --------------------------------------------------------------------


def _tuning_fields(hp: Mapping[str, Any], path: str, t: _Translation) -> dict[str, Any]:
    """A HyperparameterTuningJob's own fields; the trial spec is the CustomJobSpec."""
    if hp.get("resumePreviousJobId"):
        t.refuse(
            f"{path}.resumePreviousJobId",
            "Vertex AI cannot continue an ml v1 study; remove resumePreviousJobId to start a "
            "new one.",
        )
    tag = hp.get("hyperparameterMetricTag") or DEFAULT_METRIC_TAG
    if not isinstance(tag, str) or _WHITESPACE.search(tag):
        t.refuse(
            f"{path}.hyperparameterMetricTag",
            f"{tag!r} contains whitespace; Vertex AI metric ids may not (e.g. val_accuracy).",
        )
    goal = hp.get("goal")
    study: dict[str, Any] = {
        "metrics": [
            {
                "metricId": str(tag),
                "goal": goal if goal in ("MAXIMIZE", "MINIMIZE") else "MAXIMIZE",
            }
        ],
        "parameters": _parameters(hp.get("params"), path, t),
    }
    if hp.get("algorithm"):
        study["algorithm"] = str(hp["algorithm"])
    if hp.get("enableTrialEarlyStopping") is True:
        study[MEDIAN_STOPPING] = dict(MEDIAN_STOPPING_SPEC)
    out: dict[str, Any] = {"studySpec": study}
    for ml_name, vertex_name, low, default in (
        ("maxTrials", "maxTrialCount", 1, 1),
        ("maxParallelTrials", "parallelTrialCount", 1, 1),
        ("maxFailedTrials", "maxFailedTrialCount", 0, None),
    ):
        raw = hp.get(ml_name)
        value = default if raw is None else _int(raw)
        if raw is not None and (value is None or value < low):
            t.refuse(f"{path}.{ml_name}", f"{ml_name} must be a whole number, {low} or more.")
        elif value is not None:
            out[vertex_name] = value  # gcloud fills in 1 for unset counts, and so do we
    return out


def _tuning_machines(spec: Mapping[str, Any], t: _Translation) -> None:
    """Google's page on tuning jobs says Vertex AI "doesn't support hyperparameter tuning jobs
    that require TPUs" (https://cloud.google.com/vertex-ai/docs/training/
    using-hyperparameter-tuning), so such a job is refused here rather than by the server."""
    pools = [_mapping(p) for p in _list(spec.get("workerPoolSpecs"))]
    if any(_mapping(p.get("machineSpec")).get("machineType") == TPU_MACHINE_TYPE for p in pools):
        t.refuse(
            f"{_P}.hyperparameters",
            "Vertex AI does not run hyperparameter tuning jobs on TPUs; tune on GPUs (scaleTier "
            "BASIC_GPU, or CUSTOM machines with an acceleratorConfig) and keep the TPU for a job "
            "without hyperparameters.",
        )


def _trial_directory_note(spec: Mapping[str, Any], t: _Translation) -> None:
    """Where each trial writes on Vertex AI, when an ml v1 trainer's way of finding out fails.

    ml v1 gave every trial the same ``--job-dir`` and the trial id in TF_CONFIG's ``task.trial``;
    Google's samples made one directory per trial with ``os.path.join(job_dir, json.loads(
    os.environ.get('TF_CONFIG', '{}')).get('task', {}).get('trial', ''))``. What Vertex AI gives
    a trial instead, from Google's pages (paraphrased):

    - TF_CONFIG is set on every replica of a distributed job, with ``task.trial`` holding the
      trial number (from 1) in a tuning job, but not at all on single-replica jobs; CLUSTER_SPEC
      is set on every replica, jobs of one replica included, and has the same ``task.trial``
      (https://cloud.google.com/vertex-ai/docs/training/distributed-training, "Environment
      variables for your cluster").
    - With ``baseOutputDirectory`` set, each trial's custom job gets the subdirectory named by
      the trial id as its own, so AIP_MODEL_DIR is ``<base>/<trial id>/model/``,
      AIP_CHECKPOINT_DIR ``<base>/<trial id>/checkpoints/`` and AIP_TENSORBOARD_LOG_DIR
      ``<base>/<trial id>/logs/`` (CustomJobSpec.baseOutputDirectory in the aiplatform v1
      discovery document; https://cloud.google.com/vertex-ai/docs/training/code-requirements,
      "Environment variables for special Cloud Storage directories").
    - CLOUD_ML_TRIAL_ID, which ml v1 set and cloudml-hypertune reads (trial 0 without it), is on
      none of Google's Vertex AI pages; Google's own Vertex samples read it as the trial id
      (GoogleCloudPlatform/vertex-ai-samples, ``community-content/vertex_model_garden/model_oss/
      util/hypertune_utils.py``). Undocumented, so the note does not advise it.

    So the idiom still works for trials of several replicas, and only single-replica trials,
    the common case, all write the one ``--job-dir``: that is when the note is given.
    """
    pools = [_mapping(p) for p in _list(spec.get("workerPoolSpecs"))]
    if sum(_int(p.get("replicaCount")) or 0 for p in pools) != 1:
        return
    base = _str(_mapping(spec.get("baseOutputDirectory")).get("outputUriPrefix"))
    head = (
        "Each trial runs on one machine, and Vertex AI sets TF_CONFIG only when a job has more "
        "than one, so the ml v1 idiom os.path.join(job_dir, TF_CONFIG's task.trial) finds no "
        "trial id"
    )
    cluster_spec = "CLUSTER_SPEC, set on every replica, has the trial id in task.trial"
    if base:
        base = base.rstrip("/")
        why = (
            f"{head} and every trial writes to the same --job-dir={base}. Each trial does get "
            f"its own directories: AIP_MODEL_DIR={base}/<trial id>/model/ (AIP_CHECKPOINT_DIR "
            f".../checkpoints/, AIP_TENSORBOARD_LOG_DIR .../logs/), and {cluster_spec}. In the "
            f"trainer, read CLUSTER_SPEC where it read TF_CONFIG (trials then write "
            f"{base}/<trial id> as on ml v1), or save to AIP_MODEL_DIR."
        )
    else:
        why = (
            f"{head}: trials cannot tell their outputs apart. {cluster_spec}: read it where "
            "the trainer read TF_CONFIG. Set jobDir to also give each trial its own "
            "AIP_MODEL_DIR, AIP_CHECKPOINT_DIR and AIP_TENSORBOARD_LOG_DIR under it."
        )
    t.note(f"{_P}.hyperparameters", why)


def _parameters(params: object, path: str, t: _Translation) -> list[dict[str, Any]]:
    if not isinstance(params, list) or not params:
        t.refuse(f"{path}.params", "At least one parameter is required.")
        return []
    out = []
    for i, raw in enumerate(params):
        p = _mapping(raw)
        ppath = f"{path}.params[{i}]"
        name = p.get("parameterName")
        # Vertex AI's rule for parameterId (aiplatform v1 discovery document): "Must not contain
        # whitespaces and must be unique"; hyphens (`first-layer-size`) are fine, and each trial
        # gets `--<parameterId>=<value>` as ml v1 trials got `--<parameterName>=<value>`.
        if not isinstance(name, str) or not name or _WHITESPACE.search(name):
            t.refuse(
                f"{ppath}.parameterName",
                "A parameter name is required, without whitespace: Vertex AI's parameterId may "
                "not contain any (learning-rate or learning_rate are fine).",
            )
        spec: dict[str, Any] = {"parameterId": str(name)}
        kind = p.get("type")
        if kind == "DOUBLE" or kind == "INTEGER":
            low, high = _number(p.get("minValue")), _number(p.get("maxValue"))
            if low is None or high is None:
                t.refuse(f"{ppath}.minValue", f"{kind} parameters need minValue and maxValue.")
            elif kind == "DOUBLE":
                spec["doubleValueSpec"] = {"minValue": low, "maxValue": high}
            elif not (low.is_integer() and high.is_integer()):
                t.refuse(
                    f"{ppath}.minValue", "INTEGER parameters need whole minValue and maxValue."
                )
            else:  # int64 bounds travel as strings
                spec["integerValueSpec"] = {"minValue": str(int(low)), "maxValue": str(int(high))}
        elif kind == "CATEGORICAL":
            values = _strings(p.get("categoricalValues"), f"{ppath}.categoricalValues", t)
            if not values:
                t.refuse(f"{ppath}.categoricalValues", "CATEGORICAL parameters need values.")
            spec["categoricalValueSpec"] = {"values": values}
        elif kind == "DISCRETE":
            numbers = [_number(v) for v in _list(p.get("discreteValues"))]
            if not numbers or any(n is None for n in numbers):
                t.refuse(f"{ppath}.discreteValues", "DISCRETE parameters need numeric values.")
            spec["discreteValueSpec"] = {"values": [n for n in numbers if n is not None]}
        else:
            t.refuse(
                f"{ppath}.type",
                f"Unknown parameter type {kind!r}; use DOUBLE, INTEGER, CATEGORICAL or DISCRETE.",
            )
        scale = p.get("scaleType")
        # NONE is ml v1's "no scaling": Vertex spells that by leaving scaleType out, and wants
        # it left out for CATEGORICAL parameters.
        if scale and scale != "NONE" and kind != "CATEGORICAL":
            spec["scaleType"] = str(scale)
        out.append(spec)
    return out


# -- Vertex AI -> ml v1 -----------------------------------------------------------------------


def ml_state(vertex_state: str | None) -> str:
    """The ml v1 job state a Vertex AI ``JOB_STATE_*`` reads as; unknown ones are
    STATE_UNSPECIFIED so a new state shows as unknown rather than as a wrong one."""
    return _VERTEX_STATES.get(vertex_state or "", "STATE_UNSPECIFIED")


def resource_id(name: str) -> str:
    """The server-assigned id at the end of a resource name (``.../customJobs/456`` -> ``456``)."""
    return name.rstrip("/").rsplit("/", 1)[-1]


def from_vertex(
    resource: Mapping[str, Any], collection: str, *, job_id: str | None = None
) -> dict[str, Any]:
    """A Vertex AI CustomJob or HyperparameterTuningJob as the ml v1 Job the TUI shows.

    Never raises on an odd resource: it shows what it can read. The trainingInput it builds
    translates back (``to_vertex``) to the same request for every job ``to_vertex`` made.

    Args:
        resource: The resource as the API returns it.
        collection: ``CUSTOM_JOBS`` or ``TUNING_JOBS``.
        job_id: The ml v1 job id to show, when the caller keeps its own map; else the
            display name.

    Returns:
        An ml v1 Job with ``VERTEX_FIELD`` holding the Vertex resource's name, id and state.
    """
    r = _mapping(resource)
    tuning = collection == TUNING_JOBS
    name = _str(r.get("name")) or ""
    where = _NAME.match(name)
    region = where.group("region") if where else None
    spec = _mapping(r.get("trialJobSpec" if tuning else "jobSpec"))
    training_input, image = _training_input(spec, region)
    job: dict[str, Any] = {"jobId": job_id or _str(r.get("displayName")) or resource_id(name)}
    if _mapping(r.get("labels")):
        job["labels"] = dict(_mapping(r.get("labels")))
    kms = _mapping(r.get("encryptionSpec")).get("kmsKeyName")
    if kms:
        training_input["encryptionConfig"] = {"kmsKeyName": kms}
    if tuning:
        training_input["hyperparameters"] = _hyperparameters(r)
    job["trainingInput"] = _ordered(training_input)
    for key in ("createTime", "startTime", "endTime"):
        if r.get(key):
            job[key] = r[key]
    job["state"] = ml_state(_str(r.get("state")))
    message = _mapping(r.get("error")).get("message")
    if message:
        job["errorMessage"] = str(message)
    if tuning:
        job["trainingOutput"] = _training_output(r)
    job["etag"] = _etag(r)
    vertex: dict[str, Any] = {
        "name": name,
        "id": resource_id(name),
        "collection": collection,
        "state": _str(r.get("state")) or "JOB_STATE_UNSPECIFIED",
    }
    if where:
        vertex["consoleUrl"] = _console_url(
            where.group("project"), where.group("region"), resource_id(name), tuning
        )
    if image:
        vertex["executorImageUri"] = image
    if _mapping(r.get("webAccessUris")):
        vertex["webAccessUris"] = dict(_mapping(r.get("webAccessUris")))
    # A tuning job's detail says what its trials meet on Vertex AI (where they write, how they
    # are stopped). Custom jobs are left out: the list reads every job on every refresh, and the
    # translation would triple the cost of reading one for notes the builder already gave.
    notes: list[FieldViolation] = []
    if tuning:
        notes += _stopping_notes(_mapping(r.get("studySpec")))
        notes += vertex_notes(job["trainingInput"], region=region, executor_image=image)
    if notes:
        vertex["notes"] = [{"field": n.field, "description": n.description} for n in notes]
    job[VERTEX_FIELD] = vertex
    return job


def _stopping_notes(study: Mapping[str, Any]) -> list[FieldViolation]:
    """What ml v1's on/off ``enableTrialEarlyStopping`` cannot say about a study's stopping rule:
    a resubmit sends ``MEDIAN_STOPPING_SPEC``, so any other rule or measure changes."""
    path = f"{_P}.hyperparameters.enableTrialEarlyStopping"
    for key, rule in OTHER_STOPPING.items():
        if study.get(key) is not None:
            return [
                FieldViolation(
                    path,
                    f"Vertex AI stops this job's trials by its {rule} rule ({key}); ml v1 has "
                    "only on or off, so a resubmit uses the median rule.",
                )
            ]
    if _mapping(study.get(MEDIAN_STOPPING)).get("useElapsedDuration") is True:
        return [
            FieldViolation(
                path,
                "Vertex AI compares this job's trials by elapsed time (useElapsedDuration); a "
                "resubmit compares them by step, as the local service does.",
            )
        ]
    return []


def _console_url(project: str, region: str, job: str, tuning: bool) -> str:
    # The custom job page's address is the console's; the tuning job page follows it [M].
    kind = "hyperparameter-tuning-jobs" if tuning else "custom-jobs"
    return f"{CONSOLE}/{kind}/locations/{region}/{kind}/{job}?project={project}"


def _etag(resource: Mapping[str, Any]) -> str:
    """A digest of the whole resource: it changes whenever anything the TUI shows does
    (a trial's metric can change without ``updateTime`` moving), and only then."""
    text = json.dumps(resource, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.blake2b(text.encode(), digest_size=10).hexdigest()


# Legacy machine types by the machineSpec to_vertex gives them: (host, GPUs, GPU type) -> name.
# Keyed on the Vertex form (a T4 where the type had K80s) so the name translates back to it.
_LEGACY_BY_HOST: dict[tuple[str, int, str | None], str] = {
    (m.compute_engine_equivalent, _vertex_gpus(m)[1], _vertex_gpus(m)[0]): m.name
    for m in MACHINE_TYPES.values()
    if m.legacy and not m.is_tpu
}


def _training_input(
    spec: Mapping[str, Any], region: str | None
) -> tuple[dict[str, Any], str | None]:
    """A CustomJobSpec in ml v1 terms, and the executor image when no runtime explains it."""
    pools = [_mapping(p) for p in _list(spec.get("workerPoolSpecs"))][:4]
    ti: dict[str, Any] = {"scaleTier": "CUSTOM"}
    base = _str(_mapping(spec.get("baseOutputDirectory")).get("outputUriPrefix"))
    job_dir, strip = _job_dir_arg(pools, base)
    names = _ml_machine_names(pools)
    master_image: str | None = None
    containers: list[tuple[_Role, Mapping[str, Any]]] = []
    for role, pool in zip(_ROLES, pools, strict=False):
        machine = _mapping(pool.get("machineSpec"))
        if not machine.get("machineType"):
            continue
        config: dict[str, Any] = {}
        mtype, accelerator = names[role.pool]
        ti[role.type_field] = mtype
        if role.count_field:
            ti[role.count_field] = str(_int(pool.get("replicaCount")) or 1)
        if accelerator:
            config["acceleratorConfig"] = accelerator
        disk = _mapping(pool.get("diskSpec"))
        if disk:
            config["diskConfig"] = dict(disk)
        container = _mapping(pool.get("containerSpec"))
        if container:
            image = _str(container.get("imageUri"))
            if role.role is Role.MASTER:
                master_image = image
            if image and (role.role is Role.MASTER or image != master_image):
                config["imageUri"] = image
            containers.append((role, container))
        if config:
            ti[role.config_field] = config
    _container_args(ti, containers, strip)
    image = _python_code(ti, pools, strip, region)
    if job_dir:
        ti["jobDir"] = job_dir
    if region:
        ti["region"] = region
    timeout = _mapping(spec.get("scheduling")).get("timeout")
    if timeout:
        ti["scheduling"] = {"maxRunningTime": timeout}
    for key in ("serviceAccount", "network", "enableWebAccess"):
        if spec.get(key) is not None:
            ti[key] = spec[key]
    return ti, image


def _ml_machine_names(
    pools: list[Mapping[str, Any]],
) -> dict[int, tuple[str, dict[str, Any] | None]]:
    """Each pool's ml v1 machine type and acceleratorConfig.

    Compute Engine names, unless a pool runs a machine ml v1 knew only as a legacy type's host
    (n1-highcpu-8 is ``complex_model_s``): then legacy names for every pool, as ml v1 allowed
    no mix, so the config stays one ml v1 accepts.
    """
    ce: dict[int, tuple[str, dict[str, Any] | None]] = {}
    legacy: dict[int, tuple[str, dict[str, Any] | None]] = {}
    needs_legacy = False
    for i, pool in enumerate(pools):
        machine = _mapping(pool.get("machineSpec"))
        mtype = _str(machine.get("machineType"))
        if not mtype:
            continue  # a skipped pool ({})
        kind = _str(machine.get("acceleratorType"))
        count = _int(machine.get("acceleratorCount")) or 0
        accelerator = (
            {"count": str(count), "type": kind}
            if kind and kind != "ACCELERATOR_TYPE_UNSPECIFIED" and count
            else None
        )
        if mtype == TPU_MACHINE_TYPE:
            ce[i] = legacy[i] = ("cloud_tpu", accelerator)
            continue
        ce[i] = (mtype, accelerator)
        key = (mtype, count if accelerator else 0, kind if accelerator else None)
        if key in _LEGACY_BY_HOST:
            legacy[i] = (_LEGACY_BY_HOST[key], None)
        known = MACHINE_TYPES.get(mtype)
        needs_legacy |= (known is None or known.legacy) and key in _LEGACY_BY_HOST
    if needs_legacy and len(legacy) == len(ce):
        return legacy
    return ce


def _job_dir_arg(pools: list[Mapping[str, Any]], base: str | None) -> tuple[str | None, str | None]:
    """The jobDir, and the ``--job-dir=`` argument ``to_vertex`` appended for it (to strip).

    The server may add a '/' to outputUriPrefix, so the argument (as sent) is the better copy.
    """
    if not base:
        return None, None
    for pool in pools:
        code = _mapping(pool.get("pythonPackageSpec")) or _mapping(pool.get("containerSpec"))
        args = _list(code.get("args"))
        last = args[-1] if args else None
        if isinstance(last, str) and last.startswith("--job-dir="):
            value = last.removeprefix("--job-dir=")
            if value.rstrip("/") == base.rstrip("/"):
                return value, last
    return base, None


def _stripped(args: object, strip: str | None) -> list[str]:
    out = [str(a) for a in _list(args)]
    if strip is not None and out and out[-1] == strip:
        out.pop()
    return out


def _container_args(
    ti: dict[str, Any], containers: list[tuple[_Role, Mapping[str, Any]]], strip: str | None
) -> None:
    """Container commands and args: ``trainingInput.args`` when every pool got the same and no
    command (how ``to_vertex`` spreads them), else each role's containerCommand/containerArgs."""
    if not containers:
        return
    each = [(_stripped(c.get("args"), strip), _list(c.get("command"))) for _, c in containers]
    if all(not command for _, command in each) and all(a == each[0][0] for a, _ in each):
        if each[0][0]:
            ti["args"] = each[0][0]
        return
    for (role, _), (args, command) in zip(containers, each, strict=True):
        config = ti.setdefault(role.config_field, {})
        if command:
            config["containerCommand"] = [str(c) for c in command]
        if args:
            config["containerArgs"] = args


def _python_code(
    ti: dict[str, Any], pools: list[Mapping[str, Any]], strip: str | None, region: str | None
) -> str | None:
    """Package, module and args from the first Python pool (ml v1 ran the same code on every
    replica); runtimeVersion when every pool's image is the one that runtime gives, else the
    image, which the caller keeps for resubmission."""
    python = [
        (i, _mapping(p.get("pythonPackageSpec")))
        for i, p in enumerate(pools)
        if _mapping(p.get("pythonPackageSpec"))
    ]
    if not python:
        return None
    first = python[0][1]
    ti["packageUris"] = [str(u) for u in _list(first.get("packageUris"))]
    if first.get("pythonModule"):
        ti["pythonModule"] = str(first["pythonModule"])
    args = _stripped(first.get("args"), strip)
    if args:
        ti["args"] = args
    image = _str(first.get("executorImageUri"))
    listed = image_of_uri(image)
    if listed is None or listed.tensorflow not in RUNTIME_PYTHON or not region:
        return image
    runtime = listed.tensorflow
    # The runtime alone when its default Python gives these images, else with pythonVersion
    # when ml v1 had that Python for the runtime (3.7 for 2.x); any other image is kept as is.
    for python_version in (None, listed.python):
        if python_version is not None and python_version not in RUNTIME_PYTHON[runtime]:
            continue
        if all(
            _pool_image(pools[i], runtime, python_version, region) == spec.get("executorImageUri")
            for i, spec in python
        ):
            ti["runtimeVersion"] = runtime
            if python_version is not None:
                ti["pythonVersion"] = python_version
            return None
    return image


def _pool_image(
    pool: Mapping[str, Any], runtime: str, python_version: str | None, region: str
) -> str | None:
    """The image ``to_vertex`` gives a pool with this machine for this runtime and Python."""
    machine = _mapping(pool.get("machineSpec"))
    kind = ACCELERATORS.get(_str(machine.get("acceleratorType")) or "")
    return tf_image(
        runtime,
        gpu=kind is not None and not kind.is_tpu,
        tpu=machine.get("machineType") == TPU_MACHINE_TYPE,
        region=region,
        python_version=python_version,
    )


def _hyperparameters(r: Mapping[str, Any]) -> dict[str, Any]:
    study = _mapping(r.get("studySpec"))
    metric = _mapping(next(iter(_list(study.get("metrics"))), {}))
    hp: dict[str, Any] = {}
    if metric.get("goal"):
        hp["goal"] = metric["goal"]
    params = [_parameter(_mapping(p)) for p in _list(study.get("parameters"))]
    if params:
        hp["params"] = params
    for vertex_name, ml_name in (
        ("maxTrialCount", "maxTrials"),
        ("parallelTrialCount", "maxParallelTrials"),
        ("maxFailedTrialCount", "maxFailedTrials"),
    ):
        if _int(r.get(vertex_name)) is not None:
            hp[ml_name] = _int(r.get(vertex_name))
    if metric.get("metricId"):
        hp["hyperparameterMetricTag"] = metric["metricId"]
    if study.get("algorithm"):
        hp["algorithm"] = study["algorithm"]
    if any(study.get(key) is not None for key in (MEDIAN_STOPPING, *OTHER_STOPPING)):
        hp["enableTrialEarlyStopping"] = True
    return hp


def _parameter(p: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"parameterName": p.get("parameterId")}
    if p.get("doubleValueSpec") is not None:
        bounds = _mapping(p.get("doubleValueSpec"))
        out["type"] = "DOUBLE"
        out["minValue"] = _number(bounds.get("minValue"))
        out["maxValue"] = _number(bounds.get("maxValue"))
    elif p.get("integerValueSpec") is not None:
        bounds = _mapping(p.get("integerValueSpec"))
        out["type"] = "INTEGER"
        out["minValue"] = _int(bounds.get("minValue"))
        out["maxValue"] = _int(bounds.get("maxValue"))
    elif p.get("categoricalValueSpec") is not None:
        out["type"] = "CATEGORICAL"
        out["categoricalValues"] = list(_list(_mapping(p["categoricalValueSpec"]).get("values")))
    elif p.get("discreteValueSpec") is not None:
        out["type"] = "DISCRETE"
        out["discreteValues"] = list(_list(_mapping(p["discreteValueSpec"]).get("values")))
    if p.get("scaleType") and p["scaleType"] != "SCALE_TYPE_UNSPECIFIED":
        out["scaleType"] = p["scaleType"]
    return out


def _training_output(r: Mapping[str, Any]) -> dict[str, Any]:
    """ml v1's HyperparameterOutput view of the trials, which the trials table already reads."""
    metric = _mapping(next(iter(_list(_mapping(r.get("studySpec")).get("metrics"))), {}))
    tag = _str(metric.get("metricId"))
    trials = [_trial(_mapping(t), tag) for t in _list(r.get("trials"))]
    out: dict[str, Any] = {
        "isHyperparameterTuningJob": True,
        "completedTrialCount": str(sum(1 for t in trials if t.get("state") == "SUCCEEDED")),
    }
    if tag:
        out["hyperparameterMetricTag"] = tag
    if trials:
        out["trials"] = trials
    return out


def _trial(trial: Mapping[str, Any], tag: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"trialId": str(trial.get("id", ""))}
    params = {
        str(_mapping(p).get("parameterId")): _value_text(_mapping(p).get("value"))
        for p in _list(trial.get("parameters"))
    }
    if params:
        out["hyperparameters"] = params
    for key in ("startTime", "endTime"):
        if trial.get(key):
            out[key] = trial[key]
    out["state"] = _TRIAL_STATES.get(_str(trial.get("state")) or "", "STATE_UNSPECIFIED")
    final = _metric(_mapping(trial.get("finalMeasurement")), tag)
    if final:
        out["finalMetric"] = final
    history = [_metric(_mapping(m), tag) for m in _list(trial.get("measurements"))]
    if any(history):
        out["allMetrics"] = [m for m in history if m]
    return out


def _metric(measurement: Mapping[str, Any], tag: str | None) -> dict[str, Any]:
    """A Measurement as ml v1's HyperparameterOutput.HyperparameterMetric (the study's metric)."""
    metrics = [_mapping(m) for m in _list(measurement.get("metrics"))]
    chosen = next((m for m in metrics if m.get("metricId") == tag), metrics[0] if metrics else {})
    out: dict[str, Any] = {}
    if measurement.get("stepCount") is not None:
        out["trainingStep"] = str(measurement["stepCount"])
    if chosen.get("value") is not None:
        out["objectiveValue"] = chosen["value"]
    return out


def _value_text(value: object) -> str:
    """A trial parameter as ml v1 showed it: a string, whole numbers without ``.0`` (Vertex
    sends INTEGER values as JSON numbers such as 3.0)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# trainingInput keys in ml v1's documented order, as job_config writes them.
_TRAINING_INPUT_ORDER = tuple(to_camel(name) for name in TrainingInput.model_fields)


def _ordered(ti: dict[str, Any]) -> dict[str, Any]:
    return {k: ti[k] for k in sorted(ti, key=_TRAINING_INPUT_ORDER.index)}


# -- reading untrusted JSON ---------------------------------------------------------------------


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _strings(value: object, path: str, t: _Translation) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        t.refuse(path, "Must be a list of strings.")
        return []
    return list(value)


def _int(value: object) -> int | None:
    """An int64/int32 as it may arrive: a number or a decimal string; None when neither."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip()):
        return int(value)
    return None


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)
