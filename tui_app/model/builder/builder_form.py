"""The builder's form as plain values, and the job it stands for (both ways).

The screen keeps every field's text in a ``FormValues``; ``form_to_job`` turns it into the
jobs.create body the YAML preview, the gcloud line and submit use, and ``job_to_form`` fills the
form from a job (a resubmission, a config.yaml, a preset). Parts of a job the form has no field
for (``diskConfig``, ``network``, ``maxFailedTrials``...) ride along in ``extra`` untouched, so
opening a config and saving it again never drops anything.

Problems the form can see before validation (a count that is not a number, a duration it cannot
read, a label without ``=``) come back as ``FieldViolation``s with the same field paths the
Job rules use; ``field_key`` maps any path (ours, job_spec's, or a server's) to the form field
that shows it.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tui_app.model.jobs import roles
from tui_app.model.jobs.job_spec import DEFAULT_METRIC_TAG, OUTPUT_ONLY_FIELDS, FieldViolation
from tui_app.model.jobs.tiers import ACCELERATORS, MACHINE_TYPES, SCALE_TIERS, Role
from tui_app.model.jobs.wire import as_int

_ROLE_LABELS: dict[Role, str] = {
    Role.MASTER: "Master",
    Role.WORKER: "Workers",
    Role.PARAMETER_SERVER: "Param servers",
    Role.EVALUATOR: "Evaluators",
}


@dataclass(frozen=True)
class RoleFields(roles.RoleFields):
    """One replica role of a CUSTOM cluster as the form shows it: its trainingInput fields
    (``roles``), the form's label for it, and ``key``, the stem of its form keys."""

    label: str

    @property
    def key(self) -> str:
        """``master``, ``worker``, ``ps``, ``evaluator``: the role's own name, so a form key
        (``ps_type``) says which role it belongs to."""
        return self.role.value


ROLES: tuple[RoleFields, ...] = tuple(
    RoleFields(r.role, r.type_field, r.count_field, r.config_field, _ROLE_LABELS[r.role])
    for r in roles.ROLE_FIELDS
)
MASTER: RoleFields = next(r for r in ROLES if r.role is Role.MASTER)
"""The one role a predefined scale tier lets the form set: its image (any tier can run a
custom container; only CUSTOM names machines)."""

GOALS = ("MAXIMIZE", "MINIMIZE")
ALGORITHMS = ("", "GRID_SEARCH", "RANDOM_SEARCH")
"""``""`` is ALGORITHM_UNSPECIFIED: the service's default, Bayesian optimisation."""
PARAMETER_TYPES = ("DOUBLE", "INTEGER", "CATEGORICAL", "DISCRETE")
SCALE_TYPES = ("", "UNIT_LINEAR_SCALE", "UNIT_LOG_SCALE", "UNIT_REVERSE_LOG_SCALE")
DEFAULT_REGION = "us-central1"

# Plain text fields: form key -> trainingInput path (dotted below trainingInput).
_TEXT_FIELDS: tuple[tuple[str, str], ...] = (
    ("region", "region"),
    ("module", "pythonModule"),
    ("job_dir", "jobDir"),
    ("runtime_version", "runtimeVersion"),
    ("python_version", "pythonVersion"),
    ("service_account", "serviceAccount"),
)

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)([dhms])")
_UNIT_SECONDS = {"d": 86400, "h": 3600, "m": 60, "s": 1}
_LABEL_SPLIT = re.compile(r"[,\s]+")


def role_keys(role: str) -> tuple[str, ...]:
    """The form keys of one role: type, count (not for master), accelerator, count, image."""
    keys = [f"{role}_type"]
    if role != "master":
        keys.append(f"{role}_count")
    keys += [f"{role}_acc_type", f"{role}_acc_count", f"{role}_image"]
    return tuple(keys)


FIELD_KEYS: tuple[str, ...] = (
    "job_id",
    "region",
    "scale_tier",
    *(k for r in ROLES for k in role_keys(r.key)),
    "package_path",
    "package_uris",
    "module",
    "args",
    "job_dir",
    "runtime_version",
    "python_version",
    "max_running_time",
    "max_wait_time",
    "priority",
    "labels",
    "service_account",
    "hp_goal",
    "hp_metric",
    "hp_max_trials",
    "hp_max_parallel",
    "hp_algorithm",
)
"""Every simple field of the form, in the order the form shows them."""


@dataclass
class FormValues:
    """What the form holds: the text of each field, the parameter table, what rides along."""

    values: dict[str, str] = field(default_factory=dict)
    """Text per key of ``FIELD_KEYS``; a missing key is an empty field."""
    tune: bool = False
    """Whether the job tunes hyperparameters (the section's switch)."""
    params: list[dict[str, Any]] = field(default_factory=list)
    """The ParameterSpecs, in wire form, as the parameter table shows them."""
    extra: dict[str, Any] = field(default_factory=dict)
    """The parts of the job no field shows (``trainingInput.network``...), kept as they were."""

    def get(self, key: str) -> str:
        """The text of field ``key`` ("" when empty)."""
        return self.values.get(key, "")

    def copy(self) -> FormValues:
        """A deep copy (the screen keeps drafts and presets apart from the live form)."""
        return copy.deepcopy(self)


def new_form(job_id: str, region: str = DEFAULT_REGION) -> FormValues:
    """A fresh BASIC form with ``job_id``."""
    return FormValues(
        values={
            "job_id": job_id,
            "region": region,
            "scale_tier": "BASIC",
            "hp_goal": "MAXIMIZE",
            "hp_metric": DEFAULT_METRIC_TAG,
        }
    )


# -- form -> job ---------------------------------------------------------------------------------


def parse_duration(text: str) -> str | None:
    """``2h``, ``90m``, ``1h30m``, ``7200``, ``7200s`` or ``1d`` as a protobuf Duration (``7200s``).

    Returns:
        The duration string, or None when the text is not a duration.
    """
    text = text.strip().lower().replace(" ", "")
    if not text:
        return None
    if re.fullmatch(r"\d+(\.\d+)?", text):
        text += "s"
    pos, total = 0, 0.0
    for m in _DURATION_PART.finditer(text):
        if m.start() != pos:
            return None
        total += float(m.group(1)) * _UNIT_SECONDS[m.group(2)]
        pos = m.end()
    if pos != len(text):
        return None
    return f"{int(total)}s" if total.is_integer() else f"{total:g}s"


def parse_labels(text: str) -> tuple[dict[str, str], list[str]]:
    """``owner=ann, team=ml`` (commas, spaces or newlines between) as a label map.

    Returns:
        The labels and, for each item without ``=``, that item (the form says it is wrong).
    """
    labels: dict[str, str] = {}
    bad: list[str] = []
    for item in _LABEL_SPLIT.split(text.strip()):
        if not item:
            continue
        key, sep, value = item.partition("=")
        if not sep or not key:
            bad.append(item)
        else:
            labels[key] = value
    return labels, bad


def format_labels(labels: Mapping[str, Any]) -> str:
    """Labels as the form's text: ``owner=ann, team=ml``."""
    return ", ".join(f"{k}={v}" for k, v in labels.items())


def _lines(text: str) -> list[str]:
    """One item per line; blank lines are dropped (an argument may contain spaces)."""
    return [line.rstrip("\r") for line in text.split("\n") if line.strip()]


def _whole_number(
    text: str, path: str, problems: list[FieldViolation], *, as_string: bool = False
) -> int | str | None:
    """The whole number typed in a field, read as the wire's integers are; ``as_string`` keeps
    the text, as int64 fields travel. A problem names the field when it is not one."""
    text = text.strip()
    if not text:
        return None
    number = as_int(text)
    if number is None:
        problems.append(FieldViolation(path, f"{text!r} is not a whole number."))
        return None
    return text if as_string else number


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over`` merged into a copy of ``base``, mappings merged key by key."""
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def form_to_job(form: FormValues) -> tuple[dict[str, Any], list[FieldViolation]]:
    """The jobs.create body the form describes, and what the form itself can tell is wrong.

    A local package folder is not part of the body: ``packageUris`` gets its sdist at submit.

    Args:
        form: The form's values.

    Returns:
        ``{"jobId", "labels", "trainingInput"}`` (empty parts left out) merged over
        ``form.extra``, and the problems found while reading the fields.
    """
    v = form.get
    problems: list[FieldViolation] = []
    ti: dict[str, Any] = {}
    tier = v("scale_tier") or "BASIC"
    ti["scaleTier"] = tier
    custom = tier == "CUSTOM"
    for role in ROLES if custom else (MASTER,):
        _role_to_job(form, role, ti, problems, custom=custom)
    uris = _lines(v("package_uris"))
    if uris:
        ti["packageUris"] = [u.strip() for u in uris]
    for key, name in _TEXT_FIELDS:
        text = v(key).strip()
        if text:
            ti[name] = text
    args = _lines(v("args"))
    if args:
        ti["args"] = args
    scheduling: dict[str, Any] = {}
    for key, name in (("max_running_time", "maxRunningTime"), ("max_wait_time", "maxWaitTime")):
        text = v(key).strip()
        if text:
            duration = parse_duration(text)
            if duration is None:
                problems.append(
                    FieldViolation(
                        f"trainingInput.scheduling.{name}",
                        f"{text!r} is not a duration; write 7200s, 120m, 2h or 1d.",
                    )
                )
            else:
                scheduling[name] = duration
    priority = _whole_number(v("priority"), "trainingInput.scheduling.priority", problems)
    if priority is not None:
        scheduling["priority"] = priority
    if scheduling:
        ti["scheduling"] = scheduling
    if form.tune:
        ti["hyperparameters"] = _hyperparameters(form, problems)

    job: dict[str, Any] = {}
    job_id = v("job_id").strip()
    if job_id:
        job["jobId"] = job_id
    labels, bad = parse_labels(v("labels"))
    for item in bad:
        problems.append(FieldViolation("labels", f"{item!r} is not key=value."))
    if labels:
        job["labels"] = labels
    job["trainingInput"] = ti
    merged = _merge(form.extra, job)
    if not form.tune and isinstance(merged.get("trainingInput"), dict):
        # Tuning off means no spec at all, including the parts no field shows.
        merged["trainingInput"].pop("hyperparameters", None)
    # The key order a person reads: id, labels, then the training input.
    first: tuple[str, ...] = ("jobId", "labels", "trainingInput")
    ordered: dict[str, Any] = {k: merged[k] for k in first if k in merged}
    ordered.update({k: val for k, val in merged.items() if k not in ordered})
    return ordered, problems


def _role_to_job(
    form: FormValues,
    role: RoleFields,
    ti: dict[str, Any],
    problems: list[FieldViolation],
    *,
    custom: bool = True,
) -> None:
    """One role's fields into ``ti``. Under a predefined tier (not ``custom``) the tier picks
    the machines, so only the master's image is the form's: ``masterConfig.imageUri`` and no
    ``masterType`` (gcloud's ``--scale-tier basic --master-image-uri``)."""
    v = form.get
    p = "trainingInput"
    if not custom:
        image = v(f"{role.key}_image").strip()
        if image and role.role is Role.MASTER:
            ti[role.config_field] = {"imageUri": image}
        return
    mtype = v(f"{role.key}_type").strip()
    if mtype:
        ti[role.type_field] = mtype
    if role.count_field:
        count = _whole_number(
            v(f"{role.key}_count"), f"{p}.{role.count_field}", problems, as_string=True
        )
        if count is not None:
            ti[role.count_field] = count
    elif not mtype:
        return
    active = bool(mtype) and (
        role.count_field is None or ti.get(role.count_field) not in (None, "0")
    )
    config: dict[str, Any] = {}
    acc_type = v(f"{role.key}_acc_type").strip()
    if acc_type and active:
        apath = f"{p}.{role.config_field}.acceleratorConfig.count"
        acc_count = _whole_number(
            v(f"{role.key}_acc_count") or "1", apath, problems, as_string=True
        )
        config["acceleratorConfig"] = {"count": acc_count or "1", "type": acc_type}
    image = v(f"{role.key}_image").strip()
    if image and active:
        config["imageUri"] = image
    if config:
        ti[role.config_field] = config


def _hyperparameters(form: FormValues, problems: list[FieldViolation]) -> dict[str, Any]:
    v = form.get
    p = "trainingInput.hyperparameters"
    hp: dict[str, Any] = {}
    if v("hp_goal"):
        hp["goal"] = v("hp_goal")
    if form.params:
        hp["params"] = copy.deepcopy(form.params)
    for key, name in (("hp_max_trials", "maxTrials"), ("hp_max_parallel", "maxParallelTrials")):
        value = _whole_number(v(key), f"{p}.{name}", problems)
        if value is not None:
            hp[name] = value
    if v("hp_metric").strip():
        hp["hyperparameterMetricTag"] = v("hp_metric").strip()
    if v("hp_algorithm"):
        hp["algorithm"] = v("hp_algorithm")
    return hp


# -- job -> form ---------------------------------------------------------------------------------


def job_to_form(job: Mapping[str, Any]) -> tuple[FormValues, list[FieldViolation]]:
    """Fill the form from a job (wire or config form: counts may be ints or strings).

    Args:
        job: A Job resource, a jobs.create body or a parsed config.yaml; output-only fields are
            dropped.

    Returns:
        The form and the values it cannot show (an unknown scale tier or machine type, a field
        of the wrong kind), each naming its field path. Those values are left out of the form.
    """
    rest = {str(k): copy.deepcopy(v) for k, v in job.items() if k not in _OUTPUT_ONLY}
    problems: list[FieldViolation] = []
    values: dict[str, str] = {}
    job_id = rest.pop("jobId", None)
    if job_id is not None:
        values["job_id"] = str(job_id)
    labels = rest.pop("labels", None)
    if isinstance(labels, Mapping):
        values["labels"] = format_labels(labels)
    elif labels is not None:
        problems.append(FieldViolation("labels", "labels must be a mapping of key: value."))
    ti = rest.get("trainingInput")
    form = FormValues(values=values)
    if isinstance(ti, dict):
        _training_input_to_form(ti, form, problems)
        if not ti:
            del rest["trainingInput"]
    elif ti is not None:
        problems.append(FieldViolation("trainingInput", "trainingInput must be a mapping."))
        del rest["trainingInput"]
    values.setdefault("hp_goal", "MAXIMIZE")
    values.setdefault("hp_metric", DEFAULT_METRIC_TAG)
    form.extra = rest
    return form, problems


_OUTPUT_ONLY = frozenset(OUTPUT_ONLY_FIELDS)


def _choice(
    ti: dict[str, Any],
    name: str,
    choices: Mapping[str, Any] | tuple[str, ...],
    what: str,
    path: str,
    problems: list[FieldViolation],
) -> str | None:
    """Pop ``ti[name]`` when it is one of ``choices``; otherwise leave it and say why."""
    value = ti.get(name)
    if value is None:
        return None
    if isinstance(value, str) and value in choices:
        del ti[name]
        return value
    listed = ", ".join(list(choices)[:8])
    more = ", ..." if len(choices) > 8 else ""
    problems.append(
        FieldViolation(path, f"{value!r} is not a known {what}; one of {listed}{more}.")
    )
    del ti[name]
    return None


def _scalar_text(
    ti: dict[str, Any], name: str, path: str, problems: list[FieldViolation]
) -> str | None:
    value = ti.pop(name, None)
    if value is None:
        return None
    if isinstance(value, bool | list | dict):
        problems.append(FieldViolation(path, f"{name} must be a single value, not {value!r}."))
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def _scalars_to_form(
    source: dict[str, Any],
    fields: Iterable[tuple[str, str]],
    prefix: str,
    values: dict[str, str],
    problems: list[FieldViolation],
) -> None:
    """Each ``(form key, field name)`` of ``fields`` that ``source`` holds, taken out of it into
    ``values`` as text: how the trainingInput, scheduling and hyperparameters sections fill
    their fields (a list or a map there is a problem at ``prefix.name``)."""
    for key, name in fields:
        text = _scalar_text(source, name, f"{prefix}.{name}", problems)
        if text is not None:
            values[key] = text


def _list_text(
    ti: dict[str, Any], name: str, path: str, problems: list[FieldViolation]
) -> str | None:
    value = ti.pop(name, None)
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or any(isinstance(x, list | dict) for x in value):
        problems.append(FieldViolation(path, f"{name} must be a list of strings."))
        return None
    return "\n".join(str(x) for x in value)


def _training_input_to_form(
    ti: dict[str, Any], form: FormValues, problems: list[FieldViolation]
) -> None:
    p = "trainingInput"
    values = form.values
    tier = _choice(ti, "scaleTier", SCALE_TIERS, "scale tier", f"{p}.scaleTier", problems)
    values["scale_tier"] = tier or "BASIC"
    if values["scale_tier"] == "CUSTOM":
        for role in ROLES:
            _role_to_form(ti, role, values, problems)
    else:
        _image_to_form(ti, MASTER, values, problems)
    for key, name, reader in (
        ("package_uris", "packageUris", _list_text),
        ("args", "args", _list_text),
    ):
        text = reader(ti, name, f"{p}.{name}", problems)
        if text is not None:
            values[key] = text
    _scalars_to_form(ti, _TEXT_FIELDS, p, values, problems)
    scheduling = ti.get("scheduling")
    if isinstance(scheduling, dict):
        scheduling_fields = (
            ("max_running_time", "maxRunningTime"),
            ("max_wait_time", "maxWaitTime"),
            ("priority", "priority"),
        )
        _scalars_to_form(scheduling, scheduling_fields, f"{p}.scheduling", values, problems)
        if not scheduling:
            del ti["scheduling"]
    hp = ti.get("hyperparameters")
    if isinstance(hp, dict):
        form.tune = True
        hpp = f"{p}.hyperparameters"
        goal = _choice(
            hp, "goal", (*GOALS, "GOAL_TYPE_UNSPECIFIED"), "goal", f"{hpp}.goal", problems
        )
        values["hp_goal"] = "MAXIMIZE" if goal in (None, "GOAL_TYPE_UNSPECIFIED") else goal
        algorithm = _choice(
            hp,
            "algorithm",
            (*ALGORITHMS, "ALGORITHM_UNSPECIFIED"),
            "algorithm",
            f"{hpp}.algorithm",
            problems,
        )
        values["hp_algorithm"] = "" if algorithm in (None, "ALGORITHM_UNSPECIFIED") else algorithm
        hp_fields = (
            ("hp_metric", "hyperparameterMetricTag"),
            ("hp_max_trials", "maxTrials"),
            ("hp_max_parallel", "maxParallelTrials"),
        )
        _scalars_to_form(hp, hp_fields, hpp, values, problems)
        params = hp.pop("params", None)
        if isinstance(params, list) and all(isinstance(x, dict) for x in params):
            form.params = params
        elif params is not None:
            problems.append(FieldViolation(f"{hpp}.params", "params must be a list of mappings."))
        if not hp:
            del ti["hyperparameters"]


def _role_to_form(
    ti: dict[str, Any], role: RoleFields, values: dict[str, str], problems: list[FieldViolation]
) -> None:
    p = "trainingInput"
    mtype = _choice(
        ti, role.type_field, MACHINE_TYPES, "machine type", f"{p}.{role.type_field}", problems
    )
    if mtype:
        values[f"{role.key}_type"] = mtype
    if role.count_field:
        text = _scalar_text(ti, role.count_field, f"{p}.{role.count_field}", problems)
        if text is not None:
            values[f"{role.key}_count"] = text
    config = ti.get(role.config_field)
    if not isinstance(config, dict):
        return
    cpath = f"{p}.{role.config_field}"
    acc = config.get("acceleratorConfig")
    if isinstance(acc, dict):
        kind = _choice(
            acc,
            "type",
            ACCELERATORS,
            "accelerator type",
            f"{cpath}.acceleratorConfig.type",
            problems,
        )
        if kind:
            values[f"{role.key}_acc_type"] = kind
        count = _scalar_text(acc, "count", f"{cpath}.acceleratorConfig.count", problems)
        if count is not None:
            values[f"{role.key}_acc_count"] = count
        if not acc:
            del config["acceleratorConfig"]
    _image_to_form(ti, role, values, problems)


def _image_to_form(
    ti: dict[str, Any], role: RoleFields, values: dict[str, str], problems: list[FieldViolation]
) -> None:
    """The role's ``imageUri`` into its image field (under any tier, for the master); the rest
    of its ReplicaConfig stays in ``ti``, for ``extra``."""
    config = ti.get(role.config_field)
    if not isinstance(config, dict):
        return
    path = f"trainingInput.{role.config_field}.imageUri"
    image = _scalar_text(config, "imageUri", path, problems)
    if image is not None:
        values[f"{role.key}_image"] = image
    if not config:
        del ti[role.config_field]


# -- field paths -> form fields ------------------------------------------------------------------

_PATH_KEYS: dict[str, str] = {
    "jobId": "job_id",
    "labels": "labels",
    "trainingInput.scaleTier": "scale_tier",
    "trainingInput.region": "region",
    "trainingInput.packageUris": "package_uris",
    "trainingInput.pythonModule": "module",
    "trainingInput.args": "args",
    "trainingInput.jobDir": "job_dir",
    "trainingInput.runtimeVersion": "runtime_version",
    "trainingInput.pythonVersion": "python_version",
    "trainingInput.serviceAccount": "service_account",
    "trainingInput.scheduling.maxRunningTime": "max_running_time",
    "trainingInput.scheduling.maxWaitTime": "max_wait_time",
    "trainingInput.scheduling.priority": "priority",
    "trainingInput.hyperparameters.goal": "hp_goal",
    "trainingInput.hyperparameters.hyperparameterMetricTag": "hp_metric",
    "trainingInput.hyperparameters.maxTrials": "hp_max_trials",
    "trainingInput.hyperparameters.maxParallelTrials": "hp_max_parallel",
    "trainingInput.hyperparameters.algorithm": "hp_algorithm",
    "trainingInput.hyperparameters.params": "params",
    "trainingInput.hyperparameters": "params",
    "packagePath": "package_path",
}
for _role in ROLES:
    _PATH_KEYS[f"trainingInput.{_role.type_field}"] = f"{_role.key}_type"
    if _role.count_field:
        _PATH_KEYS[f"trainingInput.{_role.count_field}"] = f"{_role.key}_count"
    _c = f"trainingInput.{_role.config_field}"
    _PATH_KEYS[f"{_c}.acceleratorConfig"] = f"{_role.key}_acc_type"
    _PATH_KEYS[f"{_c}.acceleratorConfig.type"] = f"{_role.key}_acc_type"
    _PATH_KEYS[f"{_c}.acceleratorConfig.count"] = f"{_role.key}_acc_count"
    _PATH_KEYS[f"{_c}.imageUri"] = f"{_role.key}_image"

_INDEX = re.compile(r"\[\d+\]")


def _camel(segment: str) -> str:
    head, *rest = segment.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def normalize_path(path: str) -> str:
    """A field path as job_spec writes it: ``job.training_input.worker_type`` becomes
    ``trainingInput.workerType`` (servers write proto names, sometimes under ``job.``)."""
    path = path.strip()
    if path.startswith("job."):
        path = path[4:]
    return ".".join(_camel(part) if "_" in part else part for part in path.split("."))


def field_key(path: str) -> str | None:
    """The form field that shows a problem at ``path`` (None: no field; show it at the top).

    ``labels.owner`` shows under labels, ``...packageUris[2]`` under package URIs,
    ``...hyperparameters.params[1].minValue`` under the parameter table.
    """
    path = normalize_path(path)
    bare = _INDEX.sub("", path)
    while bare:
        if bare in _PATH_KEYS:
            return _PATH_KEYS[bare]
        if bare.startswith("labels."):
            return "labels"
        if "." not in bare:
            return None
        bare = bare.rsplit(".", 1)[0]
    return None


def param_index(path: str) -> int | None:
    """Which row of the parameter table ``...params[i]...`` names, if any."""
    m = re.search(r"hyperparameters\.params\[(\d+)\]", normalize_path(path))
    return int(m.group(1)) if m else None
