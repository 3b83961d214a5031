"""Resubmitting a job, and the job as gcloud's ``--config`` YAML file.

Resubmit keeps the base name and the whole trainingInput and stamps a new id
(``mnist_20261122_083000`` becomes ``mnist_20261122_091500``). "Edit, then resubmit" goes through
``to_config_yaml`` and ``from_config_yaml``: the same file ``gcloud ai-platform jobs submit training
--config`` reads, validated by the same rules as jobs.create, so what the editor accepts the service
accepts too.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import yaml
from pydantic.alias_generators import to_camel

from tui_app.model.jobs.job_id import new_job_id
from tui_app.model.jobs.job_spec import FieldViolation, JobSpecError, TrainingInput, parse_job

# The only fields a client sends to jobs.create for a training job; the rest are output only.
SUBMITTED_FIELDS = ("jobId", "labels", "trainingInput")

CONFIG_HEADER = """\
# An AI Platform Training job (ml v1 Job: jobId, labels, trainingInput).
# Edit and save to resubmit; gcloud ai-platform jobs submit training --config accepts this file too
# (the job id given to gcloud, and any flags, override what is written here).
"""

# trainingInput's keys in the order the API documents them (tier, machines, code, ...), which is
# the order a person edits them in; unknown keys follow, sorted.
_TRAINING_INPUT_ORDER = tuple(to_camel(name) for name in TrainingInput.model_fields)
_COUNT_FIELDS = ("workerCount", "parameterServerCount", "evaluatorCount")
_REPLICA_CONFIGS = ("masterConfig", "workerConfig", "parameterServerConfig", "evaluatorConfig")


class ConfigError(ValueError):
    """A config file that is not a valid job: bad YAML, not a mapping, or rule violations.

    Attributes:
        message: Every problem, one per line (``trainingInput.workerType: <why>``).
        violations: The rule violations, empty for a YAML error.
        line: 1-based line of a YAML error, when YAML reported one.
        column: 1-based column of a YAML error, when YAML reported one.
    """

    def __init__(
        self,
        message: str,
        violations: list[FieldViolation] | None = None,
        *,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.violations = list(violations or [])
        self.line = line
        self.column = column


def resubmission(job: Mapping[str, Any], now: datetime | None = None) -> dict[str, Any]:
    """The jobs.create body that runs ``job`` again under a fresh ``<base>_<YYYYMMDD_HHMMSS>`` id.

    The id may equal the old one when both were stamped in the same second; jobs.create then
    answers 409 and the caller says so, rather than this function inventing another name.

    Args:
        job: The Job resource to run again (any state).
        now: The submit time for the new id; the current time when None.

    Returns:
        ``jobId``, ``trainingInput`` and ``labels`` (when it has any), copied; nothing output only.
        A ``jobDir`` named after the old job (``gs://b/mnist_20261122_083000``) is renamed
        after the new one: trainers resume from the checkpoints they find in their job dir, so
        a rerun in the old dir would pick up where the old job ended instead of training.
    """
    body = submitted_fields(job)
    old_id = str(job["jobId"])
    body["jobId"] = new_job_id(old_id, now)
    ti = body.get("trainingInput")
    job_dir = ti.get("jobDir") if isinstance(ti, dict) else None
    if isinstance(job_dir, str) and isinstance(ti, dict):
        head, sep, last = job_dir.rstrip("/").rpartition("/")
        if sep and last == old_id:
            ti["jobDir"] = f"{head}/{body['jobId']}"
    return body


def submitted_fields(job: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of the fields a client submits (``jobId``, ``labels``, ``trainingInput``).

    Args:
        job: A Job resource.

    Returns:
        The fields present in ``job``, in that order; empty labels are dropped.
    """
    body: dict[str, Any] = {}
    for field in SUBMITTED_FIELDS:
        value = job.get(field)
        if value is None or (field == "labels" and not value):
            continue
        body[field] = _plain(value)
    return body


PACKAGE_FOLDER_COMMENT = "# tui-app package folder: "
"""How a saved config keeps the builder's package folder. gcloud's config format has no field
for it (it is a ``--package-path`` flag), and without it a reopened config had no code to run;
a comment travels with the file and gcloud ignores it."""


def package_folder_of(text: str) -> str | None:
    """The package folder a saved config names in its ``PACKAGE_FOLDER_COMMENT``, if any."""
    for line in text.splitlines():
        if line.startswith(PACKAGE_FOLDER_COMMENT):
            return line[len(PACKAGE_FOLDER_COMMENT) :].strip() or None
        if line and not line.startswith("#"):
            return None  # only the header comment counts
    return None


def to_config_yaml(job: Mapping[str, Any], package_folder: str | None = None) -> str:
    """The job as a ``--config`` file: a header comment, ``jobId``, ``labels``, ``trainingInput``.

    ``package_folder`` (the folder holding setup.py that the builder builds) is kept as a header
    comment (``PACKAGE_FOLDER_COMMENT``), read back by ``package_folder_of``.

    Counts that travel as strings (``workerCount: "2"``) are written as numbers, as people write
    them by hand; ``from_config_yaml`` and gcloud accept both.

    Args:
        job: A Job resource (output-only fields are dropped) or a jobs.create body.

    Returns:
        The YAML text.
    """
    body = submitted_fields(job)
    if isinstance(body.get("trainingInput"), dict):
        body["trainingInput"] = _readable_training_input(body["trainingInput"])
    text = yaml.dump(
        body, Dumper=_ConfigDumper, sort_keys=False, allow_unicode=True, default_flow_style=False
    )
    kept = f"{PACKAGE_FOLDER_COMMENT}{package_folder}\n" if package_folder else ""
    return CONFIG_HEADER + kept + text


def from_config_yaml(text: str, *, job_id: str | None = None) -> dict[str, Any]:
    """Read a ``--config`` file and validate it as a jobs.create body.

    Args:
        text: The YAML text.
        job_id: The id to submit under, replacing the file's ``jobId`` the way gcloud's ``JOB``
            argument does; most hand-written configs have none, since gcloud takes it there.

    Returns:
        The normalised body, as ``parse_job`` returns it (int64 fields as strings).

    Raises:
        ConfigError: The YAML does not parse, is not a mapping, or breaks a rule of the Job
            resource; the message names every problem.
    """
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise _yaml_error(exc) from None
    if data is None:
        raise ConfigError("The file is empty; write a job with jobId, labels and trainingInput.")
    if not isinstance(data, Mapping):
        raise ConfigError(
            f"The file holds a {_yaml_kind(data)}; it must be a mapping with jobId, labels "
            "and trainingInput."
        )
    if job_id is not None:
        data = {**data, "jobId": job_id}
    try:
        return parse_job(data)
    except JobSpecError as exc:
        message = "\n".join(f"{v.field}: {v.description}" for v in exc.violations)
        raise ConfigError(message, exc.violations) from None


# YAML folds these inside quoted scalars (NEL, LS, PS, CR): such strings must be written
# double-quoted with escapes, or an argument like "\x85" comes back as a space.
_LINE_BREAKS = frozenset("\x85\u2028\u2029\r")


class _ConfigDumper(yaml.SafeDumper):
    """safe_dump, but strings YAML would alter on reading come out double-quoted and escaped."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if any(ch in _LINE_BREAKS or (not ch.isprintable() and ch != "\n") for ch in value):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')
    return dumper.represent_str(value)


_ConfigDumper.add_representer(str, _represent_str)


def _yaml_error(exc: yaml.YAMLError) -> ConfigError:
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        if exc.context and exc.problem:
            problem = f"{problem} ({exc.context})"
        if mark is not None:
            line, column = mark.line + 1, mark.column + 1
            return ConfigError(f"Line {line}, column {column}: {problem}", line=line, column=column)
        return ConfigError(f"Invalid YAML: {problem}")
    return ConfigError(f"Invalid YAML: {exc}")


def _yaml_kind(data: object) -> str:
    if isinstance(data, list):
        return "list"
    if isinstance(data, str):
        return "string"
    return type(data).__name__


def _readable_training_input(ti: dict[str, Any]) -> dict[str, Any]:
    ordered = {k: ti[k] for k in _TRAINING_INPUT_ORDER if k in ti}
    ordered.update({k: ti[k] for k in sorted(ti) if k not in ordered})
    for key in _COUNT_FIELDS:
        if key in ordered:
            ordered[key] = _as_int(ordered[key])
    for key in _REPLICA_CONFIGS:
        config = ordered.get(key)
        acc = config.get("acceleratorConfig") if isinstance(config, dict) else None
        if isinstance(acc, dict) and "count" in acc:
            acc["count"] = _as_int(acc["count"])
    return ordered


def _as_int(value: Any) -> Any:
    """``"2"`` as ``2``; anything else unchanged (validation reports it, not this)."""
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return value


def _plain(value: Any) -> Any:
    """A deep copy with every mapping a dict and every sequence a list, for yaml.safe_dump."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return copy.deepcopy(value)
