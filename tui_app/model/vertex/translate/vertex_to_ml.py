"""Vertex AI custom jobs and hyperparameter tuning jobs as the ml v1 jobs the TUI shows (no I/O).

``from_vertex`` turns what Vertex AI returns into an ml v1 ``Job`` (``trainingInput``, state,
trials), so the views built for ml v1 show it, and so that a job that went out comes back as a
config that translates to the same request (resubmit, edit-and-resubmit): every choice here
undoes one ``ml_to_vertex`` made. Vertex AI resources are read as untrusted JSON: an odd one
shows what can be read, and nothing raises. Choices that are ours, not Vertex AI's, are
marked [M].
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from pydantic.alias_generators import to_camel

from tui_app.model.jobs.job_spec import RUNTIME_PYTHON, FieldViolation, TrainingInput
from tui_app.model.jobs.roles import ROLE_FIELDS, RoleFields
from tui_app.model.jobs.tiers import MACHINE_TYPES, Role
from tui_app.model.jobs.vertex_resources import TUNING_JOBS, VERTEX_FIELD
from tui_app.model.jobs.wire import as_int, as_list, as_mapping, as_number, as_str
from tui_app.model.vertex.translate.ml_to_vertex import (
    MEDIAN_STOPPING,
    TPU_MACHINE_TYPE,
    pool_hardware,
    vertex_gpus,
    vertex_notes,
)
from tui_app.model.vertex.vertex_images import image_of_uri, tf_image

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
OTHER_STOPPING = {
    "decayCurveStoppingSpec": "decay-curve",
    "convexAutomatedStoppingSpec": "convex",
}
"""Vertex AI's other automated stopping rules: they read back as early stopping, with a note."""
_NAME = re.compile(r"^projects/(?P<project>[^/]+)/locations/(?P<region>[^/]+)/(?P<rest>.+)$")


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
    r = as_mapping(resource)
    tuning = collection == TUNING_JOBS
    name = as_str(r.get("name")) or ""
    where = _NAME.match(name)
    region = where.group("region") if where else None
    spec = as_mapping(r.get("trialJobSpec" if tuning else "jobSpec"))
    training_input, image = _training_input(spec, region)
    job: dict[str, Any] = {"jobId": job_id or as_str(r.get("displayName")) or resource_id(name)}
    if as_mapping(r.get("labels")):
        job["labels"] = dict(as_mapping(r.get("labels")))
    kms = as_mapping(r.get("encryptionSpec")).get("kmsKeyName")
    if kms:
        training_input["encryptionConfig"] = {"kmsKeyName": kms}
    if tuning:
        training_input["hyperparameters"] = _hyperparameters(r)
    job["trainingInput"] = _ordered(training_input)
    for key in ("createTime", "startTime", "endTime"):
        if r.get(key):
            job[key] = r[key]
    job["state"] = ml_state(as_str(r.get("state")))
    message = as_mapping(r.get("error")).get("message")
    if message:
        job["errorMessage"] = str(message)
    if tuning:
        job["trainingOutput"] = _training_output(r)
    job["etag"] = _etag(r)
    vertex: dict[str, Any] = {
        "name": name,
        "id": resource_id(name),
        "collection": collection,
        "state": as_str(r.get("state")) or "JOB_STATE_UNSPECIFIED",
    }
    if where:
        vertex["consoleUrl"] = _console_url(
            where.group("project"), where.group("region"), resource_id(name), tuning
        )
    if image:
        vertex["executorImageUri"] = image
    if as_mapping(r.get("webAccessUris")):
        vertex["webAccessUris"] = dict(as_mapping(r.get("webAccessUris")))
    # A tuning job's detail says what its trials meet on Vertex AI (where they write, how they
    # are stopped). Custom jobs are left out: the list reads every job on every refresh, and the
    # translation would triple the cost of reading one for notes the builder already gave.
    notes: list[FieldViolation] = []
    if tuning:
        notes += _stopping_notes(as_mapping(r.get("studySpec")))
        notes += vertex_notes(job["trainingInput"], region=region, executor_image=image)
    if notes:
        vertex["notes"] = [{"field": n.field, "description": n.description} for n in notes]
    job[VERTEX_FIELD] = vertex
    return job


def _stopping_notes(study: Mapping[str, Any]) -> list[FieldViolation]:
    """What ml v1's on/off ``enableTrialEarlyStopping`` cannot say about a study's stopping rule:
    a resubmit sends ``MEDIAN_STOPPING_SPEC``, so any other rule or measure changes."""
    path = "trainingInput.hyperparameters.enableTrialEarlyStopping"
    for key, rule in OTHER_STOPPING.items():
        if study.get(key) is not None:
            return [
                FieldViolation(
                    path,
                    f"Vertex AI stops this job's trials by its {rule} rule ({key}); ml v1 has "
                    "only on or off, so a resubmit uses the median rule.",
                )
            ]
    if as_mapping(study.get(MEDIAN_STOPPING)).get("useElapsedDuration") is True:
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
    (m.compute_engine_equivalent, vertex_gpus(m)[1], vertex_gpus(m)[0]): m.name
    for m in MACHINE_TYPES.values()
    if m.legacy and not m.is_tpu
}


def _training_input(
    spec: Mapping[str, Any], region: str | None
) -> tuple[dict[str, Any], str | None]:
    """A CustomJobSpec in ml v1 terms, and the executor image when no runtime explains it."""
    pools = [as_mapping(p) for p in as_list(spec.get("workerPoolSpecs"))][:4]
    ti: dict[str, Any] = {"scaleTier": "CUSTOM"}
    base = as_str(as_mapping(spec.get("baseOutputDirectory")).get("outputUriPrefix"))
    job_dir, strip = _job_dir_arg(pools, base)
    names = _ml_machine_names(pools)
    master_image: str | None = None
    containers: list[tuple[RoleFields, Mapping[str, Any]]] = []
    for role, pool in zip(ROLE_FIELDS, pools, strict=False):
        machine = as_mapping(pool.get("machineSpec"))
        if not machine.get("machineType"):
            continue
        config: dict[str, Any] = {}
        mtype, accelerator = names[role.position]
        ti[role.type_field] = mtype
        if role.count_field:
            ti[role.count_field] = str(as_int(pool.get("replicaCount"), whole_floats=True) or 1)
        if accelerator:
            config["acceleratorConfig"] = accelerator
        disk = as_mapping(pool.get("diskSpec"))
        if disk:
            config["diskConfig"] = dict(disk)
        container = as_mapping(pool.get("containerSpec"))
        if container:
            image = as_str(container.get("imageUri"))
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
    timeout = as_mapping(spec.get("scheduling")).get("timeout")
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
        machine = as_mapping(pool.get("machineSpec"))
        mtype = as_str(machine.get("machineType"))
        if not mtype:
            continue  # a skipped pool ({})
        kind = as_str(machine.get("acceleratorType"))
        count = as_int(machine.get("acceleratorCount"), whole_floats=True) or 0
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
        code = as_mapping(pool.get("pythonPackageSpec")) or as_mapping(pool.get("containerSpec"))
        args = as_list(code.get("args"))
        last = args[-1] if args else None
        if isinstance(last, str) and last.startswith("--job-dir="):
            value = last.removeprefix("--job-dir=")
            if value.rstrip("/") == base.rstrip("/"):
                return value, last
    return base, None


def _stripped(args: object, strip: str | None) -> list[str]:
    out = [str(a) for a in as_list(args)]
    if strip is not None and out and out[-1] == strip:
        out.pop()
    return out


def _container_args(
    ti: dict[str, Any], containers: list[tuple[RoleFields, Mapping[str, Any]]], strip: str | None
) -> None:
    """Container commands and args: ``trainingInput.args`` when every pool got the same and no
    command (how ``to_vertex`` spreads them), else each role's containerCommand/containerArgs."""
    if not containers:
        return
    each = [(_stripped(c.get("args"), strip), as_list(c.get("command"))) for _, c in containers]
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
        (i, as_mapping(p.get("pythonPackageSpec")))
        for i, p in enumerate(pools)
        if as_mapping(p.get("pythonPackageSpec"))
    ]
    if not python:
        return None
    first = python[0][1]
    ti["packageUris"] = [str(u) for u in as_list(first.get("packageUris"))]
    if first.get("pythonModule"):
        ti["pythonModule"] = str(first["pythonModule"])
    args = _stripped(first.get("args"), strip)
    if args:
        ti["args"] = args
    image = as_str(first.get("executorImageUri"))
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
    gpu, tpu = pool_hardware(as_mapping(pool.get("machineSpec")))
    return tf_image(runtime, gpu=gpu, tpu=tpu, region=region, python_version=python_version)


def _hyperparameters(r: Mapping[str, Any]) -> dict[str, Any]:
    study = as_mapping(r.get("studySpec"))
    metric = as_mapping(next(iter(as_list(study.get("metrics"))), {}))
    hp: dict[str, Any] = {}
    if metric.get("goal"):
        hp["goal"] = metric["goal"]
    params = [_parameter(as_mapping(p)) for p in as_list(study.get("parameters"))]
    if params:
        hp["params"] = params
    for vertex_name, ml_name in (
        ("maxTrialCount", "maxTrials"),
        ("parallelTrialCount", "maxParallelTrials"),
        ("maxFailedTrialCount", "maxFailedTrials"),
    ):
        if as_int(r.get(vertex_name), whole_floats=True) is not None:
            hp[ml_name] = as_int(r.get(vertex_name), whole_floats=True)
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
        bounds = as_mapping(p.get("doubleValueSpec"))
        out["type"] = "DOUBLE"
        out["minValue"] = as_number(bounds.get("minValue"))
        out["maxValue"] = as_number(bounds.get("maxValue"))
    elif p.get("integerValueSpec") is not None:
        bounds = as_mapping(p.get("integerValueSpec"))
        out["type"] = "INTEGER"
        out["minValue"] = as_int(bounds.get("minValue"), whole_floats=True)
        out["maxValue"] = as_int(bounds.get("maxValue"), whole_floats=True)
    elif p.get("categoricalValueSpec") is not None:
        out["type"] = "CATEGORICAL"
        out["categoricalValues"] = list(
            as_list(as_mapping(p["categoricalValueSpec"]).get("values"))
        )
    elif p.get("discreteValueSpec") is not None:
        out["type"] = "DISCRETE"
        out["discreteValues"] = list(as_list(as_mapping(p["discreteValueSpec"]).get("values")))
    if p.get("scaleType") and p["scaleType"] != "SCALE_TYPE_UNSPECIFIED":
        out["scaleType"] = p["scaleType"]
    return out


def _training_output(r: Mapping[str, Any]) -> dict[str, Any]:
    """ml v1's HyperparameterOutput view of the trials, which the trials table already reads."""
    metric = as_mapping(next(iter(as_list(as_mapping(r.get("studySpec")).get("metrics"))), {}))
    tag = as_str(metric.get("metricId"))
    trials = [_trial(as_mapping(t), tag) for t in as_list(r.get("trials"))]
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
        str(as_mapping(p).get("parameterId")): _value_text(as_mapping(p).get("value"))
        for p in as_list(trial.get("parameters"))
    }
    if params:
        out["hyperparameters"] = params
    for key in ("startTime", "endTime"):
        if trial.get(key):
            out[key] = trial[key]
    out["state"] = _TRIAL_STATES.get(as_str(trial.get("state")) or "", "STATE_UNSPECIFIED")
    final = _metric(as_mapping(trial.get("finalMeasurement")), tag)
    if final:
        out["finalMetric"] = final
    history = [_metric(as_mapping(m), tag) for m in as_list(trial.get("measurements"))]
    if any(history):
        out["allMetrics"] = [m for m in history if m]
    return out


def _metric(measurement: Mapping[str, Any], tag: str | None) -> dict[str, Any]:
    """A Measurement as ml v1's HyperparameterOutput.HyperparameterMetric (the study's metric)."""
    metrics = [as_mapping(m) for m in as_list(measurement.get("metrics"))]
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
