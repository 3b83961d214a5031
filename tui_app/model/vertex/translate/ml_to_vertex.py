"""ml v1 training jobs as Vertex AI custom jobs and hyperparameter tuning jobs (no I/O).

``to_vertex`` builds the request that runs an ml v1 ``Job`` (its ``trainingInput``) on Vertex
AI; ``vertex_notes`` gives the builder the same notes without a request. What cannot run as
written is refused with every such field named (``TranslationError``); what runs differently,
or is dropped, is a note, so nothing changes silently. ``vertex_to_ml`` reads the answers back
and relies on what is sent here being reversible.

Facts come from the aiplatform v1 discovery document that ships in google-api-python-client
(field names, types, enums, and the descriptions quoted below), Google's Vertex AI pages (cited
by address where used), ``tiers.py`` (machine types and accelerators) and ``vertex_images.py``
(prebuilt images). Where Vertex AI has no equivalent the choice is ours, marked [M].
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from pydantic import BaseModel
from pydantic.alias_generators import to_camel

from tui_app.model.jobs.job_spec import (
    DEFAULT_METRIC_TAG,
    DURATION,
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
from tui_app.model.jobs.roles import ROLE_FIELDS, RoleFields, role_fields
from tui_app.model.jobs.tiers import (
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
from tui_app.model.jobs.vertex_resources import CUSTOM_JOBS, TUNING_JOBS
from tui_app.model.jobs.wire import as_int, as_list, as_mapping, as_number, as_str
from tui_app.model.vertex.vertex_images import (
    LIST_URL,
    TrainingImage,
    find_tf_image,
    machine_kind,
    runtimes_with_images,
    tf_images,
)

MAX_DISPLAY_NAME = 128
TPU_MACHINE_TYPE = "cloud-tpu"
"""Vertex AI's machine type for a single-host TPU VM; the TPU type is the accelerator."""
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


_P = "trainingInput"


@dataclass
class _Pool:
    """One used worker pool before its code is added."""

    role: RoleFields
    machine_spec: dict[str, Any]
    count: int
    config: Mapping[str, Any]
    """The ml v1 ReplicaConfig whose code, container and disk this pool runs."""
    config_path: str

    @property
    def gpu(self) -> bool:
        return pool_hardware(self.machine_spec)[0]

    @property
    def tpu(self) -> bool:
        return pool_hardware(self.machine_spec)[1]


def pool_hardware(machine_spec: Mapping[str, Any]) -> tuple[bool, bool]:
    """Whether a machineSpec has GPUs, and whether it is a TPU VM: what picks a pool's prebuilt
    image, here and when a job read back is matched to the image it was given."""
    kind = ACCELERATORS.get(str(machine_spec.get("acceleratorType", "")))
    gpu = kind is not None and not kind.is_tpu
    return gpu, machine_spec.get("machineType") == TPU_MACHINE_TYPE


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
    kms = as_mapping(ti.get("encryptionConfig")).get("kmsKeyName")
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
    scheduling = as_mapping(ti.get("scheduling"))
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
    scheduling = as_mapping(ti.get("scheduling"))
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
    for role in ROLE_FIELDS:
        if as_mapping(ti.get(role.config_field)).get("tpuTfVersion") is not None:
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
    master_config = as_mapping(ti.get("masterConfig"))
    master_path = f"{_P}.masterConfig"
    if not isinstance(tier, str) or tier not in SCALE_TIERS:
        t.refuse(
            f"{_P}.scaleTier",
            f"Unknown scale tier {tier!r}; the tiers are {', '.join(SCALE_TIERS)}.",
        )
        return pools
    if tier != "CUSTOM":
        for role in ROLE_FIELDS:
            if ti.get(role.type_field):
                t.note(
                    f"{_P}.{role.type_field}",
                    f"Ignored: scaleTier {tier} sets the machines; only CUSTOM reads "
                    f"{role.type_field}.",
                )
    if tier in SCALE_TIER_TPUS:
        spec = _tpu_machine_spec(master_config, master_path, t)
        pools[0] = _Pool(ROLE_FIELDS[0], spec, 1, master_config, master_path)
        t.note(f"{_P}.scaleTier", _tpu_vm_note(f"{tier} ran", spec))
        return pools
    if tier != "CUSTOM":
        for group in SCALE_TIERS[tier].groups:
            role = role_fields(group.role)
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
                config = as_mapping(ti.get(role.config_field))
                pools[role.position] = _Pool(role, machine, group.count, config, config_path)
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
    for role in ROLE_FIELDS:
        mtype = ti.get(role.type_field)
        count = 1 if role.count_field is None else _count(ti, role.count_field, t)
        if not mtype or not count:
            continue
        type_path = f"{_P}.{role.type_field}"
        config = as_mapping(ti.get(role.config_field))
        config_path = f"{_P}.{role.config_field}"
        if not isinstance(mtype, str):
            t.refuse(type_path, "A machine type is a name such as n1-standard-8.")
            continue
        machine = MACHINE_TYPES.get(mtype)
        if machine is None or not machine.is_tpu:
            spec = _machine_spec(mtype, config, type_path, config_path, t)
            if spec is not None:
                pools[role.position] = _Pool(role, spec, count, config, config_path)
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
    master_config = as_mapping(ti.get("masterConfig"))
    pools[0] = _Pool(ROLE_FIELDS[0], spec, 1, master_config, f"{_P}.masterConfig")
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
        kind, count = vertex_gpus(machine)
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


def vertex_gpus(machine: MachineType) -> tuple[str | None, int]:
    """A machine's built-in GPUs as Vertex AI runs them: retired ones replaced (reading a job
    back keys legacy machine types on this, so a name translates back to the same machine)."""
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
    kind = as_str(acc.get("type"))
    count = as_int(acc.get("count"), whole_floats=True)
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
    disk = as_mapping(config.get("diskConfig"))
    out: dict[str, Any] = {}
    if disk.get("bootDiskType"):
        out["bootDiskType"] = str(disk["bootDiskType"])
    if disk.get("bootDiskSizeGb") is not None:
        size = as_int(disk["bootDiskSizeGb"], whole_floats=True)
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
    count = as_int(value, whole_floats=True)
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
    master = as_mapping(ti.get("masterConfig"))
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
            as_str(ti.get("runtimeVersion")),
            as_str(ti.get("pythonVersion")),
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
        value = default if raw is None else as_int(raw, whole_floats=True)
        if raw is not None and (value is None or value < low):
            t.refuse(f"{path}.{ml_name}", f"{ml_name} must be a whole number, {low} or more.")
        elif value is not None:
            out[vertex_name] = value  # gcloud fills in 1 for unset counts, and so do we
    return out


def _tuning_machines(spec: Mapping[str, Any], t: _Translation) -> None:
    """Google's page on tuning jobs says Vertex AI "doesn't support hyperparameter tuning jobs
    that require TPUs" (https://cloud.google.com/vertex-ai/docs/training/
    using-hyperparameter-tuning), so such a job is refused here rather than by the server."""
    pools = [as_mapping(p) for p in as_list(spec.get("workerPoolSpecs"))]
    if any(as_mapping(p.get("machineSpec")).get("machineType") == TPU_MACHINE_TYPE for p in pools):
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
    pools = [as_mapping(p) for p in as_list(spec.get("workerPoolSpecs"))]
    if sum(as_int(p.get("replicaCount"), whole_floats=True) or 0 for p in pools) != 1:
        return
    base = as_str(as_mapping(spec.get("baseOutputDirectory")).get("outputUriPrefix"))
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
        p = as_mapping(raw)
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
            low, high = as_number(p.get("minValue")), as_number(p.get("maxValue"))
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
            numbers = [as_number(v) for v in as_list(p.get("discreteValues"))]
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


def _strings(value: object, path: str, t: _Translation) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        t.refuse(path, "Must be a list of strings.")
        return []
    return list(value)
