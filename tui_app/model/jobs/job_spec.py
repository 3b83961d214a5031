"""The Job resource as ml v1 accepts it: structure, types and the platform's cross-field rules.

One set of rules serves the local service (jobs.create answers 400 with these violations) and the
config builder (which shows the same messages inline), so a config that the builder accepts is one
the service accepts. Field paths are the camelCase paths of the JSON/YAML a user writes
(``trainingInput.masterConfig.acceleratorConfig.count``), so an error points into their file.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, ValidationError
from pydantic.alias_generators import to_camel

from tui_app.model.jobs.job_id import job_id_error
from tui_app.model.jobs.roles import ROLE_FIELDS, RoleFields
from tui_app.model.jobs.runtimes import PYTHON_VERSIONS as PYTHON_VERSIONS
from tui_app.model.jobs.runtimes import RUNTIME_PYTHON as RUNTIME_PYTHON
from tui_app.model.jobs.tiers import (
    ACCELERATORS,
    COMPUTE_ENGINE_MACHINE_TYPES,
    DEFAULT_SCALE_TIER,
    LEGACY_MACHINE_TYPES,
    MACHINE_TYPES,
    MachineType,
)

DEFAULT_METRIC_TAG = "training/hptuning/metric"
"""``hyperparameterMetricTag`` when a HyperparameterSpec leaves it out: the tag the platform's
cloudml-hypertune writes a trial's metric under unless the trainer names another."""

# int64 fields travel as strings on the wire (gcloud sends "workerCount": "9"); accept both.
Int64 = Annotated[int, PlainSerializer(lambda v: str(v), return_type=str, when_used="json")]

ScaleTierName = Literal["BASIC", "STANDARD_1", "PREMIUM_1", "BASIC_GPU", "BASIC_TPU", "CUSTOM"]
AcceleratorType = Literal[
    "ACCELERATOR_TYPE_UNSPECIFIED",
    "NVIDIA_TESLA_K80",
    "NVIDIA_TESLA_P100",
    "NVIDIA_TESLA_V100",
    "NVIDIA_TESLA_P4",
    "NVIDIA_TESLA_T4",
    "NVIDIA_TESLA_A100",
    "TPU_V2",
    "TPU_V3",
    "TPU_V2_POD",
    "TPU_V3_POD",
    "TPU_V4_POD",
]
ParameterType = Literal[
    "PARAMETER_TYPE_UNSPECIFIED", "DOUBLE", "INTEGER", "CATEGORICAL", "DISCRETE"
]
ScaleType = Literal["NONE", "UNIT_LINEAR_SCALE", "UNIT_LOG_SCALE", "UNIT_REVERSE_LOG_SCALE"]
Goal = Literal["GOAL_TYPE_UNSPECIFIED", "MAXIMIZE", "MINIMIZE"]
Algorithm = Literal["ALGORITHM_UNSPECIFIED", "GRID_SEARCH", "RANDOM_SEARCH"]

DURATION = re.compile(r"^\d{1,12}(\.\d{1,9})?s$")
MIN_MAX_WAIT_SECONDS = 1800
LABEL_KEY = re.compile(r"^[a-z][a-z0-9_-]{0,62}$")
LABEL_VALUE = re.compile(r"^[a-z0-9_-]{0,63}$")
MAX_LABELS = 64
MAX_PACKAGE_URIS = 100
# ml v1's only rule for ParameterSpec.parameterName (its discovery document: "Required. The
# parameter name must be unique amongst all ParameterConfigs in a HyperparameterSpec"): no
# character set, so Google's own tuning configs use `learning-rate`, `first-layer-size`, and the
# platform passed them on as `--first-layer-size=<value>`. Refused here, beyond that rule, only
# what no trainer could ever receive: '=' (every flag parser, argparse and absl alike, ends the
# flag's name at the first '=', so `--a=b=1` sets `a`) and control characters.
PARAMETER_NAME_UNUSABLE = re.compile(r"[=\x00-\x1f\x7f]")
NETWORK = re.compile(r"^projects/[^/]+/global/networks/[^/]+$")
SERVICE_ACCOUNT = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
BUCKET = re.compile(r"^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$")
OUTPUT_ONLY_FIELDS = (
    "createTime",
    "startTime",
    "endTime",
    "state",
    "errorMessage",
    "trainingOutput",
    "predictionOutput",
    "etag",
    "jobPosition",
)


class _Resource(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )


class AcceleratorConfig(_Resource):
    count: Int64 | None = None
    type: AcceleratorType | None = None


class DiskConfig(_Resource):
    boot_disk_size_gb: int | None = None
    boot_disk_type: Literal["pd-ssd", "pd-standard"] | None = None


class ReplicaConfig(_Resource):
    accelerator_config: AcceleratorConfig | None = None
    image_uri: str | None = None
    container_command: list[str] | None = None
    container_args: list[str] | None = None
    tpu_tf_version: str | None = None
    disk_config: DiskConfig | None = None


class Scheduling(_Resource):
    max_running_time: str | None = None
    max_wait_time: str | None = None
    priority: int | None = None


class ParameterSpec(_Resource):
    parameter_name: str | None = None
    type: ParameterType | None = None
    min_value: float | None = None
    max_value: float | None = None
    categorical_values: list[str] | None = None
    discrete_values: list[float] | None = None
    scale_type: ScaleType | None = None


class HyperparameterSpec(_Resource):
    goal: Goal | None = None
    params: list[ParameterSpec] | None = None
    max_trials: int | None = None
    max_parallel_trials: int | None = None
    max_failed_trials: int | None = None
    hyperparameter_metric_tag: str | None = None
    algorithm: Algorithm | None = None
    enable_trial_early_stopping: bool | None = None
    resume_previous_job_id: str | None = None


class EncryptionConfig(_Resource):
    kms_key_name: str | None = None


class TrainingInput(_Resource):
    scale_tier: ScaleTierName | None = None
    master_type: str | None = None
    worker_type: str | None = None
    parameter_server_type: str | None = None
    evaluator_type: str | None = None
    worker_count: Int64 | None = None
    parameter_server_count: Int64 | None = None
    evaluator_count: Int64 | None = None
    master_config: ReplicaConfig | None = None
    worker_config: ReplicaConfig | None = None
    parameter_server_config: ReplicaConfig | None = None
    evaluator_config: ReplicaConfig | None = None
    package_uris: list[str] | None = None
    python_module: str | None = None
    args: list[str] | None = None
    hyperparameters: HyperparameterSpec | None = None
    region: str | None = None
    job_dir: str | None = None
    runtime_version: str | None = None
    python_version: str | None = None
    scheduling: Scheduling | None = None
    service_account: str | None = None
    network: str | None = None
    enable_web_access: bool | None = None
    use_chief_in_tf_config: bool | None = None
    encryption_config: EncryptionConfig | None = None


class JobInput(_Resource):
    """What a client may send to jobs.create; output-only fields are accepted and dropped."""

    job_id: str | None = None
    labels: dict[str, str] | None = None
    training_input: TrainingInput | None = None
    prediction_input: dict[str, Any] | None = None
    create_time: Any = Field(default=None, exclude=True)
    start_time: Any = Field(default=None, exclude=True)
    end_time: Any = Field(default=None, exclude=True)
    state: Any = Field(default=None, exclude=True)
    error_message: Any = Field(default=None, exclude=True)
    training_output: Any = Field(default=None, exclude=True)
    prediction_output: Any = Field(default=None, exclude=True)
    etag: Any = Field(default=None, exclude=True)
    job_position: Any = Field(default=None, exclude=True)


@dataclass(frozen=True)
class FieldViolation:
    """One thing wrong with one field, as google.rpc.BadRequest reports it."""

    field: str
    description: str


class JobSpecError(ValueError):
    """The job is invalid; ``violations`` says where and why (all of them, not just the first)."""

    def __init__(self, violations: list[FieldViolation]) -> None:
        self.violations = violations
        super().__init__(format_violations(violations))


def format_violations(violations: list[FieldViolation]) -> str:
    """The message ml v1 uses: ``Field: <path> Error: <why>``, one per violation."""
    return "\n".join(f"Field: {v.field} Error: {v.description}" for v in violations)


def _path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _pydantic_violations(exc: ValidationError, prefix: str) -> list[FieldViolation]:
    found = []
    for err in exc.errors(include_url=False):
        path = _path(tuple(err["loc"]))
        path = f"{prefix}.{path}" if prefix and path else (prefix or path)
        kind = err["type"]
        if kind == "extra_forbidden":
            desc = "Unknown field: the ml v1 Job resource has no field by this name."
        elif kind == "literal_error":
            expected = err.get("ctx", {}).get("expected", "")
            desc = f"Invalid value {_show(err.get('input'))}; allowed values are {expected}."
        else:
            desc = f"{err['msg']} (got {_show(err.get('input'))})."
        found.append(FieldViolation(path, desc))
    return found


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def parse_job(body: object) -> dict[str, Any]:
    """Validate a jobs.create body and return the Job to store, normalised for the wire.

    Raises:
        JobSpecError: with every violation found.
    """
    if not isinstance(body, Mapping):
        raise JobSpecError(
            [FieldViolation("job", "The request body must be a JSON object (a Job).")]
        )
    try:
        job = JobInput.model_validate(dict(body))
    except ValidationError as exc:
        found = _pydantic_violations(exc, "")
        why = job_id_error(body.get("jobId"))
        if why and not any(v.field == "jobId" for v in found):
            found.insert(0, FieldViolation("jobId", why))
        raise JobSpecError(found) from None
    violations = [*job_violations(job), *nul_violations(body.get("trainingInput"), "trainingInput")]
    if violations:
        raise JobSpecError(violations)
    out: dict[str, Any] = job.model_dump(mode="json", by_alias=True, exclude_none=True)
    ti = out.get("trainingInput")
    if ti is not None and "scaleTier" not in ti:
        ti["scaleTier"] = DEFAULT_SCALE_TIER
    if not out.get("labels"):
        out.pop("labels", None)
    return out


def nul_violations(value: object, path: str) -> list[FieldViolation]:
    """Strings holding NUL: no argv, environment or path can carry one, so such a job would be
    accepted and then fail to start (found by fuzzing the service)."""
    if isinstance(value, str):
        return (
            [FieldViolation(path, "must not contain a NUL character (\\0).")]
            if "\0" in value
            else []
        )
    if isinstance(value, dict):
        return [v for k, item in value.items() for v in nul_violations(item, f"{path}.{k}")]
    if isinstance(value, list):
        return [v for i, item in enumerate(value) for v in nul_violations(item, f"{path}[{i}]")]
    return []


def job_violations(job: JobInput) -> list[FieldViolation]:
    """Every rule of jobs.create beyond types: id, labels, and the training input."""
    found: list[FieldViolation] = []
    why = job_id_error(job.job_id)
    if why:
        found.append(FieldViolation("jobId", why))
    found += label_violations(job.labels)
    if job.training_input is None and job.prediction_input is None:
        found.append(FieldViolation("trainingInput", "A job needs a trainingInput."))
    elif job.training_input is not None and job.prediction_input is not None:
        found.append(
            FieldViolation(
                "predictionInput", "Set exactly one of trainingInput and predictionInput."
            )
        )
    elif job.prediction_input is not None:
        found.append(
            FieldViolation(
                "predictionInput",
                "Batch prediction jobs are not supported here; only training jobs run.",
            )
        )
    if job.training_input is not None:
        found += training_input_violations(job.training_input)
    return found


def label_violations(
    labels: Mapping[str, str] | None, field: str = "labels"
) -> list[FieldViolation]:
    """Google Cloud's label rules: at most 64; lowercase keys and values of at most 63 chars."""
    found: list[FieldViolation] = []
    if not labels:
        return found
    if len(labels) > MAX_LABELS:
        found.append(
            FieldViolation(field, f"At most {MAX_LABELS} labels are allowed, got {len(labels)}.")
        )
    for key, value in labels.items():
        if not LABEL_KEY.match(key):
            found.append(
                FieldViolation(
                    f"{field}.{key[:63]}",
                    "A label key must start with a lowercase letter and contain only lowercase "
                    "letters, digits, '_' and '-', at most 63 characters.",
                )
            )
        if not LABEL_VALUE.match(value):
            found.append(
                FieldViolation(
                    f"{field}.{key[:63]}",
                    f"The label value {_show(value)} may contain only lowercase letters, digits, "
                    "'_' and '-', at most 63 characters.",
                )
            )
    return found


_PYTHON_MODULE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def training_input_violations(ti: TrainingInput) -> list[FieldViolation]:
    """The platform's cross-field rules for a TrainingInput (``docs/wire-formats.md``)."""
    p = "trainingInput"
    found: list[FieldViolation] = []
    if not ti.region:
        found.append(FieldViolation(f"{p}.region", "A region is required, e.g. us-central1."))
    found += _cluster_violations(ti, p)
    found += _code_violations(ti, p)
    found += _version_violations(ti, p)
    if ti.scheduling is not None:
        found += _scheduling_violations(ti.scheduling, f"{p}.scheduling")
    if ti.hyperparameters is not None:
        found += hyperparameter_violations(ti.hyperparameters, f"{p}.hyperparameters")
    if ti.network is not None and not NETWORK.match(ti.network):
        found.append(
            FieldViolation(
                f"{p}.network", "network must look like projects/<number>/global/networks/<name>."
            )
        )
    if ti.service_account is not None and not SERVICE_ACCOUNT.match(ti.service_account):
        found.append(
            FieldViolation(f"{p}.serviceAccount", "serviceAccount must be an email address.")
        )
    return found


def _cluster_violations(ti: TrainingInput, p: str) -> list[FieldViolation]:
    """Machine types, counts and replica configs: what each scale tier lets a job set."""
    tier = ti.scale_tier or DEFAULT_SCALE_TIER
    custom = tier == "CUSTOM"
    found: list[FieldViolation] = []
    families: set[bool] = set()
    for role in ROLE_FIELDS:
        mtype: str | None = getattr(ti, _snake(role.type_field))
        count: int | None = getattr(ti, _snake(role.count_field)) if role.count_field else None
        found += _machine_violations(role, mtype, count, tier, p)
        machine = MACHINE_TYPES.get(mtype or "")
        # cloud_tpu sits beside either family (a TPU worker of an n1 or a legacy master).
        if machine is not None and not machine.is_tpu:
            families.add(machine.legacy)
        config: ReplicaConfig | None = getattr(ti, _snake(role.config_field))
        if config is not None:
            found += _replica_config_violations(ti, role, config, custom, p)
    if custom and not ti.master_type:
        found.append(
            FieldViolation(f"{p}.masterType", "masterType is required when scaleTier is CUSTOM.")
        )
    if len(families) > 1:
        found.append(
            FieldViolation(
                f"{p}.masterType",
                "Use legacy machine types (standard, complex_model_m, ...) for every role or "
                "Compute Engine types (n1-standard-8, ...) for every role, not a mix.",
            )
        )
    return found


def _machine_violations(
    role: RoleFields, mtype: str | None, count: int | None, tier: str, p: str
) -> list[FieldViolation]:
    """One role's machine type and count: CUSTOM only, a known type, a count needs its type."""
    found: list[FieldViolation] = []
    type_field, count_field = role.type_field, role.count_field
    if tier != "CUSTOM" and mtype is not None:
        found.append(
            FieldViolation(
                f"{p}.{type_field}",
                f"{type_field} is only allowed with scaleTier CUSTOM (not {tier}).",
            )
        )
    if tier != "CUSTOM" and count:
        found.append(
            FieldViolation(
                f"{p}.{count_field}",
                f"{count_field} is only allowed with scaleTier CUSTOM (not {tier}).",
            )
        )
    if count is not None and count < 0:
        found.append(FieldViolation(f"{p}.{count_field}", f"{count_field} must be 0 or more."))
    if tier == "CUSTOM" and count and count > 0 and not mtype:
        found.append(
            FieldViolation(
                f"{p}.{type_field}", f"{type_field} is required when {count_field} is {count}."
            )
        )
    if mtype is not None and mtype not in MACHINE_TYPES:
        found.append(
            FieldViolation(
                f"{p}.{type_field}",
                f"Unknown machine type {_show(mtype)}; use a legacy type "
                f"({', '.join(LEGACY_MACHINE_TYPES[:5])}, ...), a Compute Engine type "
                f"({', '.join(COMPUTE_ENGINE_MACHINE_TYPES[:3])}, ...) or cloud_tpu.",
            )
        )
    return found


def _code_violations(ti: TrainingInput, p: str) -> list[FieldViolation]:
    """What runs: a Python package and module, or a custom container, and where it writes."""
    found: list[FieldViolation] = []
    image = ti.master_config.image_uri if ti.master_config else None
    if not image:
        for field, value in (("packageUris", ti.package_uris), ("pythonModule", ti.python_module)):
            if not value:
                found.append(
                    FieldViolation(
                        f"{p}.{field}",
                        f"{field} is required unless masterConfig.imageUri names a container.",
                    )
                )
    elif ti.runtime_version:
        found.append(
            FieldViolation(
                f"{p}.runtimeVersion",
                "Set either runtimeVersion or masterConfig.imageUri, not both.",
            )
        )
    for i, uri in enumerate(ti.package_uris or ()):
        why = package_uri_error(uri)
        if why:
            found.append(FieldViolation(f"{p}.packageUris[{i}]", why))
    if ti.package_uris and len(ti.package_uris) > MAX_PACKAGE_URIS:
        found.append(
            FieldViolation(
                f"{p}.packageUris", f"At most {MAX_PACKAGE_URIS} package URIs are allowed."
            )
        )
    if ti.python_module is not None and not _PYTHON_MODULE.match(ti.python_module):
        found.append(
            FieldViolation(
                f"{p}.pythonModule",
                f"{_show(ti.python_module)} is not a Python module name such as trainer.task.",
            )
        )
    if ti.job_dir is not None:
        why = storage_path_error(ti.job_dir)
        if why:
            found.append(FieldViolation(f"{p}.jobDir", why))
    if ti.use_chief_in_tf_config and not image:
        found.append(
            FieldViolation(
                f"{p}.useChiefInTfConfig",
                "useChiefInTfConfig applies only to custom containers (masterConfig.imageUri).",
            )
        )
    return found


def _replica_config_violations(
    ti: TrainingInput, role: RoleFields, config: ReplicaConfig, custom: bool, p: str
) -> list[FieldViolation]:
    """One role's ReplicaConfig: its accelerator, its container and its disk."""
    path = f"{p}.{role.config_field}"
    mtype: str | None = getattr(ti, _snake(role.type_field))
    found: list[FieldViolation] = []
    if config.accelerator_config is not None:
        found += _accelerator_violations(
            config.accelerator_config, f"{path}.acceleratorConfig", role, mtype, custom
        )
    found += _container_violations(ti, role, config, path)
    if config.disk_config is not None and config.disk_config.boot_disk_size_gb is not None:
        size = config.disk_config.boot_disk_size_gb
        if not 10 <= size <= 64000:
            found.append(
                FieldViolation(
                    f"{path}.diskConfig.bootDiskSizeGb",
                    "bootDiskSizeGb must be between 10 and 64000.",
                )
            )
    return found


def _accelerator_violations(
    acc: AcceleratorConfig, apath: str, role: RoleFields, mtype: str | None, custom: bool
) -> list[FieldViolation]:
    """An acceleratorConfig needs CUSTOM and a machine type that takes that accelerator."""
    found: list[FieldViolation] = []
    machine = MACHINE_TYPES.get(mtype or "")
    if not custom:
        found.append(
            FieldViolation(apath, "acceleratorConfig is only allowed with scaleTier CUSTOM.")
        )
    elif not mtype:
        found.append(
            FieldViolation(apath, f"acceleratorConfig needs a machine type in {role.type_field}.")
        )
    elif machine is not None and not machine.accepts_accelerators:
        found.append(
            FieldViolation(
                apath,
                f"acceleratorConfig needs a Compute Engine machine type in {role.type_field} "
                f"(such as n1-standard-8) or cloud_tpu; {mtype} is a legacy type.",
            )
        )
    elif machine is not None and acc.type in ACCELERATORS:
        found += _accelerator_fit_violations(acc, apath, mtype or "", machine)
    if acc.type in (None, "ACCELERATOR_TYPE_UNSPECIFIED"):
        found.append(
            FieldViolation(
                f"{apath}.type",
                f"An accelerator type is required; one of {', '.join(ACCELERATORS)}.",
            )
        )
    if acc.count is None or acc.count < 1:
        found.append(FieldViolation(f"{apath}.count", "The accelerator count must be 1 or more."))
    return found


def _accelerator_fit_violations(
    acc: AcceleratorConfig, apath: str, mtype: str, machine: MachineType
) -> list[FieldViolation]:
    """The accelerator type suits the machine; an A2 machine's count is its built-in GPUs."""
    kind = acc.type or ""
    if not machine.accepts_accelerator(kind):
        allowed = sorted(a for a in ACCELERATORS if machine.accepts_accelerator(a))
        return [
            FieldViolation(
                f"{apath}.type",
                f"{kind} cannot be attached to {mtype}; allowed are {', '.join(allowed)}.",
            )
        ]
    if machine.gpus and acc.count is not None and acc.count != machine.gpus:
        return [
            FieldViolation(
                f"{apath}.count",
                f"{mtype} has {machine.gpus} built-in {kind}; the count must be {machine.gpus}.",
            )
        ]
    return []


def _container_violations(
    ti: TrainingInput, role: RoleFields, config: ReplicaConfig, path: str
) -> list[FieldViolation]:
    """Container fields need an image, on the role itself or inherited from the master."""
    found: list[FieldViolation] = []
    master_image = ti.master_config.image_uri if ti.master_config else None
    if config.image_uri and not master_image:
        found.append(
            FieldViolation(
                f"{path}.imageUri",
                f"{role.config_field}.imageUri needs masterConfig.imageUri too: the master "
                "runs a container whenever another role does.",
            )
        )
    image = config.image_uri or master_image
    for field, value in (
        ("containerCommand", config.container_command),
        ("containerArgs", config.container_args),
        ("tpuTfVersion", config.tpu_tf_version),
    ):
        if value and not image:
            found.append(
                FieldViolation(
                    f"{path}.{field}", f"{field} applies only to a custom container (imageUri)."
                )
            )
    if (config.container_command or config.container_args) and ti.args:
        found.append(
            FieldViolation(
                "trainingInput.args",
                "Set either args or containerCommand/containerArgs, not both.",
            )
        )
    machine = MACHINE_TYPES.get(getattr(ti, _snake(role.type_field)) or "")
    if config.tpu_tf_version and image and not (machine and machine.is_tpu):
        found.append(
            FieldViolation(
                f"{path}.tpuTfVersion",
                f"tpuTfVersion applies only to a cloud_tpu {role.type_field}.",
            )
        )
    return found


def _version_violations(ti: TrainingInput, p: str) -> list[FieldViolation]:
    found: list[FieldViolation] = []
    rv, pv = ti.runtime_version, ti.python_version
    if rv is not None and rv not in RUNTIME_PYTHON:
        found.append(
            FieldViolation(
                f"{p}.runtimeVersion",
                f"Unknown runtime version {_show(rv)}; known versions are "
                f"{', '.join(RUNTIME_PYTHON)}.",
            )
        )
    if pv is not None:
        if pv not in PYTHON_VERSIONS:
            found.append(
                FieldViolation(
                    f"{p}.pythonVersion",
                    f"Unknown Python version {_show(pv)}; "
                    f"allowed are {', '.join(PYTHON_VERSIONS)}.",
                )
            )
        elif rv in RUNTIME_PYTHON and pv not in RUNTIME_PYTHON[rv]:
            found.append(
                FieldViolation(
                    f"{p}.pythonVersion",
                    f"Runtime version {rv} supports Python {', '.join(RUNTIME_PYTHON[rv])}, "
                    f"not {pv}.",
                )
            )
    return found


def duration_seconds(text: str) -> float:
    """Seconds of a protobuf Duration string such as ``7200s`` or ``1.5s``."""
    if not DURATION.match(text):
        raise ValueError(f"{text!r} is not a duration such as 7200s")
    return float(text[:-1])


def _scheduling_violations(s: Scheduling, p: str) -> list[FieldViolation]:
    found: list[FieldViolation] = []
    for name, value in (("maxRunningTime", s.max_running_time), ("maxWaitTime", s.max_wait_time)):
        if value is None:
            continue
        if not DURATION.match(value):
            found.append(
                FieldViolation(
                    f"{p}.{name}", f"{_show(value)} is not a duration; write seconds such as 7200s."
                )
            )
        elif name == "maxWaitTime" and duration_seconds(value) < MIN_MAX_WAIT_SECONDS:
            found.append(
                FieldViolation(
                    f"{p}.{name}", f"maxWaitTime must be at least {MIN_MAX_WAIT_SECONDS}s."
                )
            )
        elif duration_seconds(value) <= 0:
            found.append(FieldViolation(f"{p}.{name}", f"{name} must be more than 0s."))
    if s.priority is not None and not 0 <= s.priority <= 1000:
        found.append(FieldViolation(f"{p}.priority", "priority must be between 0 and 1000."))
    return found


def hyperparameter_violations(hp: HyperparameterSpec, p: str) -> list[FieldViolation]:
    """Rules of HyperparameterSpec and its ParameterSpecs (``docs/wire-formats.md``)."""
    found: list[FieldViolation] = []
    if not hp.params:
        found.append(FieldViolation(f"{p}.params", "At least one parameter is required."))
    for name, value, low in (
        ("maxTrials", hp.max_trials, 1),
        ("maxParallelTrials", hp.max_parallel_trials, 1),
        ("maxFailedTrials", hp.max_failed_trials, 0),
    ):
        if value is not None and value < low:
            found.append(FieldViolation(f"{p}.{name}", f"{name} must be {low} or more."))
    if hp.resume_previous_job_id is not None:
        why = job_id_error(hp.resume_previous_job_id)
        if why:
            found.append(FieldViolation(f"{p}.resumePreviousJobId", why))
    seen: set[str] = set()
    for i, param in enumerate(hp.params or ()):
        found += _parameter_violations(param, f"{p}.params[{i}]", hp.algorithm, seen)
    return found


def _parameter_violations(
    sp: ParameterSpec, p: str, algorithm: str | None, seen: set[str]
) -> list[FieldViolation]:
    found: list[FieldViolation] = []
    name = sp.parameter_name
    if not name:
        found.append(
            FieldViolation(
                f"{p}.parameterName",
                "A parameter name is required: each trial passes it to the trainer as "
                "--<parameterName>=<value>, e.g. learning_rate or first-layer-size.",
            )
        )
    elif PARAMETER_NAME_UNUSABLE.search(name):
        found.append(
            FieldViolation(
                f"{p}.parameterName",
                f"The parameter name {_show(name)} cannot be passed as --<parameterName>=<value>:"
                " it must not contain '=' or control characters (letters, digits, '-', '_', "
                "'.' and the like are fine).",
            )
        )
    elif name in seen:
        found.append(FieldViolation(f"{p}.parameterName", f"Parameter {name!r} is defined twice."))
    else:
        seen.add(name)
    kind = sp.type
    if kind in (None, "PARAMETER_TYPE_UNSPECIFIED"):
        found.append(
            FieldViolation(
                f"{p}.type", "A type is required: DOUBLE, INTEGER, CATEGORICAL or DISCRETE."
            )
        )
        return found
    if kind in ("DOUBLE", "INTEGER"):
        if sp.min_value is None or sp.max_value is None:
            found.append(
                FieldViolation(f"{p}.minValue", f"{kind} parameters need minValue and maxValue.")
            )
        elif not (math.isfinite(sp.min_value) and math.isfinite(sp.max_value)):
            found.append(FieldViolation(f"{p}.minValue", "minValue and maxValue must be finite."))
        elif sp.min_value > sp.max_value:
            found.append(
                FieldViolation(f"{p}.maxValue", "maxValue must not be less than minValue.")
            )
        elif kind == "INTEGER" and not (
            float(sp.min_value).is_integer() and float(sp.max_value).is_integer()
        ):
            found.append(
                FieldViolation(
                    f"{p}.minValue", "INTEGER parameters need whole minValue and maxValue."
                )
            )
        elif sp.scale_type in ("UNIT_LOG_SCALE", "UNIT_REVERSE_LOG_SCALE") and sp.min_value <= 0:
            found.append(
                FieldViolation(f"{p}.minValue", f"{sp.scale_type} needs minValue greater than 0.")
            )
        if sp.categorical_values or sp.discrete_values:
            found.append(
                FieldViolation(
                    f"{p}.type", f"{kind} parameters take minValue/maxValue, not a list of values."
                )
            )
        if algorithm == "GRID_SEARCH" and kind == "DOUBLE":
            found.append(
                FieldViolation(
                    f"{p}.type",
                    "GRID_SEARCH works only with INTEGER, CATEGORICAL and DISCRETE parameters.",
                )
            )
    elif kind == "CATEGORICAL":
        if not sp.categorical_values:
            found.append(
                FieldViolation(
                    f"{p}.categoricalValues", "CATEGORICAL parameters need categoricalValues."
                )
            )
        elif len(set(sp.categorical_values)) != len(sp.categorical_values):
            found.append(FieldViolation(f"{p}.categoricalValues", "Values must be distinct."))
        if (
            sp.min_value is not None
            or sp.max_value is not None
            or sp.scale_type not in (None, "NONE")
        ):
            found.append(
                FieldViolation(
                    f"{p}.type",
                    "CATEGORICAL parameters take categoricalValues only (no range/scale).",
                )
            )
    elif kind == "DISCRETE":
        values = sp.discrete_values or []
        if not values:
            found.append(
                FieldViolation(f"{p}.discreteValues", "DISCRETE parameters need discreteValues.")
            )
        elif any(b <= a for a, b in itertools.pairwise(values)):
            found.append(
                FieldViolation(f"{p}.discreteValues", "discreteValues must be strictly increasing.")
            )
        elif len(values) > 1000:
            found.append(FieldViolation(f"{p}.discreteValues", "At most 1000 discrete values."))
        elif sp.scale_type in ("UNIT_LOG_SCALE", "UNIT_REVERSE_LOG_SCALE") and values[0] <= 0:
            found.append(
                FieldViolation(
                    f"{p}.discreteValues", f"{sp.scale_type} needs values greater than 0."
                )
            )
        if sp.min_value is not None or sp.max_value is not None:
            found.append(
                FieldViolation(f"{p}.type", "DISCRETE parameters take discreteValues, not a range.")
            )
    return found


def package_uri_error(uri: str) -> str | None:
    """Why a packageUris entry cannot be used, or None."""
    if uri.startswith("gs://"):
        return storage_path_error(uri)
    if uri.startswith("file://") or uri.startswith("/"):
        return None
    return (
        f"{_show(uri)} is not a package location; use gs://bucket/path/pkg.tar.gz, "
        "file:///path/pkg.tar.gz or an absolute path."
    )


def storage_path_error(uri: str) -> str | None:
    """Why a gs:// (or local) path is unusable, or None."""
    if uri.startswith("gs://"):
        bucket, _, rest = uri[5:].partition("/")
        if not BUCKET.match(bucket):
            return (
                f"{_show(uri)} has an invalid bucket name: 3-222 characters of lowercase "
                "letters, digits, '-', '_' and '.'."
            )
        if any(part in ("..", ".") for part in rest.split("/")):
            return f"{_show(uri)} may not contain '.' or '..' path segments."
        return None
    if uri.startswith("file://") or uri.startswith("/"):
        return None
    return f"{_show(uri)} must be a gs:// URI or an absolute local path."
