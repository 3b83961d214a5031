"""The ``gcloud ai-platform jobs submit training`` command that submits a given job.

The builder shows this line beside the config so a job built here can be submitted from any shell
with the real gcloud (Cloud SDK 528). Flags carry what gcloud has flags for; everything else goes
through ``--config``, the file ``to_config_yaml`` writes for the same job. gcloud reads that file
first and then lets each flag it was given override the field (``BuildTrainingJob`` in the SDK), so
the flags here repeat the file's values and the job gcloud sends equals the file's job.

Three gcloud quirks decide what must be a flag even when ``--config`` is there (checked against
the local service): ``--region`` is required and replaces the file's region; ``--packages``
defaults to an empty list that *replaces* the file's ``packageUris``; and ``--enable-web-access``
defaults to false and replaces the file's ``enableWebAccess``.
"""

from __future__ import annotations

import copy
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tui_app.model.jobs.job_spec import OUTPUT_ONLY_FIELDS
from tui_app.model.jobs.tiers import ACCELERATORS, SCALE_TIERS

GCLOUD_SUBMIT = ("gcloud", "ai-platform", "jobs", "submit", "training")
"""The command's words before the job id."""

JOB_ID_PLACEHOLDER = "JOB_ID"
"""Stands in for a job id the form does not have yet, so the line still reads as a command."""

# (type field, count field, flag prefix): gcloud's worker and parameter-server groups need both
# the machine type and a count of at least 1; evaluators have no flags at all.
_GROUP_FLAGS = (
    ("workerType", "workerCount", "--worker"),
    ("parameterServerType", "parameterServerCount", "--parameter-server"),
)
_REPLICA_FLAGS = (
    ("masterConfig", "--master"),
    ("workerConfig", "--worker"),
    ("parameterServerConfig", "--parameter-server"),
)
_KMS_KEY = re.compile(r"^projects/[^/]+/locations/[^/]+/keyRings/[^/]+/cryptoKeys/[^/]+$")
# gcloud's --job-dir parses a gs:// object reference; a bucket alone or a local path stays in
# the config file, where gcloud passes it through untouched.
_GCS_OBJECT = re.compile(r"^gs://[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]/.+$")


def submit_command(
    job: Mapping[str, Any],
    *,
    config_path: str = "config.yaml",
    package_path: str | None = None,
    staging_bucket: str | None = None,
) -> list[str]:
    """The argv of the gcloud command that submits ``job``.

    Args:
        job: A Job in ml v1 wire form (``jobId``, ``labels``, ``trainingInput``); output-only
            fields are ignored. Counts may be ints or int64 strings.
        config_path: Where ``to_config_yaml(job)`` is (or will be) saved; named with
            ``--config`` only when some field has no gcloud flag.
        package_path: A local package folder for gcloud to build into an sdist and upload
            (``--package-path``); its upload is added to the job's ``packageUris``.
        staging_bucket: ``gs://bucket`` for gcloud's uploads (``--staging-bucket``); written
            only when there is something to upload: ``package_path`` or a local package.

    Returns:
        ``["gcloud", "ai-platform", "jobs", "submit", "training", JOB_ID, flags..., "--",
        args...]``, with ``--config config_path`` right after the id when it is needed.
    """
    flags, leftover = _split(job, package_path, staging_bucket)
    job_id = job.get("jobId")
    argv = [*GCLOUD_SUBMIT, str(job_id) if job_id else JOB_ID_PLACEHOLDER]
    if leftover:
        argv += _flag("--config", config_path)
    argv += flags
    ti = job.get("trainingInput")
    args = ti.get("args") if isinstance(ti, Mapping) else None
    if isinstance(args, list) and args:
        argv += ["--", *(str(a) for a in args)]
    return argv


def config_fields(job: Mapping[str, Any]) -> list[str]:
    """The fields of ``job`` that no gcloud flag can carry, as dotted paths.

    When this is empty ``submit_command`` needs no ``--config``; the builder can say which
    fields make the file necessary.

    Args:
        job: A Job in ml v1 wire form.

    Returns:
        Paths such as ``trainingInput.hyperparameters``, in the job's order.
    """
    _flags, leftover = _split(job)
    paths: list[str] = []
    for key, value in leftover.items():
        if key == "trainingInput":
            paths += [f"trainingInput.{p}" for p in _paths(value)]
        else:
            paths.append(key)
    return paths


def format_command(argv: Sequence[str]) -> str:
    """``argv`` as one shell command, one gcloud flag per line, for a narrow preview pane.

    Every word is ``shlex.quote``d; a `` \\`` and a newline plus two spaces go before each
    ``--flag`` and before the ``--`` that starts the trainer's arguments, which then stay on
    that last line (they are the trainer's, not gcloud's, so they are not split).

    Args:
        argv: A command such as ``submit_command`` returns.

    Returns:
        Text that a POSIX shell runs as exactly ``argv``.
    """
    lines: list[list[str]] = [[]]
    in_user_args = False
    for word in argv:
        if not in_user_args and word.startswith("--") and lines[-1]:
            lines.append([])
        in_user_args = in_user_args or word == "--"
        lines[-1].append(shlex.quote(word))
    return " \\\n  ".join(" ".join(line) for line in lines)


def _split(
    job: Mapping[str, Any], package_path: str | None = None, staging_bucket: str | None = None
) -> tuple[list[str], dict[str, Any]]:
    """gcloud's flags for ``job``, and the part of ``job`` that only ``--config`` can carry."""
    ti = job.get("trainingInput")
    flags, rest = _training_input_flags(
        ti if isinstance(ti, Mapping) else {}, package_path, staging_bucket
    )
    leftover: dict[str, Any] = {"trainingInput": rest} if rest else {}
    labels = job.get("labels")
    if isinstance(labels, Mapping) and labels and _labels_fit_flag(labels):
        flags += _flag("--labels", ",".join(f"{k}={v}" for k, v in labels.items()))
    elif labels:
        leftover["labels"] = labels
    for key, value in job.items():
        if (
            key not in ("jobId", "labels", "trainingInput", *OUTPUT_ONLY_FIELDS)
            and value is not None
        ):
            leftover[key] = value
    return flags, leftover


def _training_input_flags(
    ti: Mapping[str, Any], package_path: str | None = None, staging_bucket: str | None = None
) -> tuple[list[str], dict[str, Any]]:
    """The flags for ``ti`` and what is left of it for ``--config``.

    ``args``, ``packageUris`` and ``enableWebAccess`` are always covered: the first two by
    ``--``/``--packages`` (see ``submit_command``), the last because gcloud sends ``false``
    unless ``--enable-web-access`` is given.
    """
    rest: dict[str, Any] = copy.deepcopy(dict(ti))
    flags: list[str] = []

    def take(field: str, flag: str, convert: Callable[[Any], str | None] = _text) -> None:
        value = convert(rest.get(field))
        if value is not None:
            flags.extend(_flag(flag, value))
            del rest[field]

    take("region", "--region")
    take("scaleTier", "--scale-tier", _scale_tier_choice)
    take("masterType", "--master-machine-type")
    for type_field, count_field, prefix in _GROUP_FLAGS:
        mtype, count = _text(rest.get(type_field)), _positive_int(rest.get(count_field))
        if mtype is not None and count is not None:
            flags += [*_flag(f"{prefix}-machine-type", mtype), f"{prefix}-count", str(count)]
            del rest[type_field], rest[count_field]
    for config_field, prefix in _REPLICA_FLAGS:
        flags += _replica_flags(rest, config_field, prefix)
    take("pythonModule", "--module-name")
    flags += _package_flags(ti, package_path, staging_bucket)
    rest.pop("packageUris", None)
    rest.pop("args", None)
    take("jobDir", "--job-dir", _gcs_object)
    take("runtimeVersion", "--runtime-version")
    take("pythonVersion", "--python-version")
    take("serviceAccount", "--service-account")
    if rest.pop("enableWebAccess", None) is True:
        flags.append("--enable-web-access")
    take("useChiefInTfConfig", "--use-chief-in-tf-config", _bool_choice)
    encryption = rest.get("encryptionConfig")
    if isinstance(encryption, dict) and set(encryption) == {"kmsKeyName"}:
        key = _kms_key(encryption["kmsKeyName"])
        if key is not None:
            flags += _flag("--kms-key", key)
            del rest["encryptionConfig"]
    return flags, rest


def _replica_flags(rest: dict[str, Any], config_field: str, prefix: str) -> list[str]:
    """``--<role>-image-uri`` and ``--<role>-accelerator`` from one ReplicaConfig."""
    config = rest.get(config_field)
    if not isinstance(config, dict):
        return []
    flags: list[str] = []
    image = _text(config.get("imageUri"))
    if image:
        flags += _flag(f"{prefix}-image-uri", image)
        del config["imageUri"]
    acc = config.get("acceleratorConfig")
    if isinstance(acc, dict) and set(acc) <= {"type", "count"}:
        kind, count = acc.get("type"), _positive_int(acc.get("count"))
        if kind in ACCELERATORS and count is not None:
            choice = str(kind).lower().replace("_", "-")
            flags += [f"{prefix}-accelerator", f"count={count},type={choice}"]
            del config["acceleratorConfig"]
    if flags and not config:
        del rest[config_field]
    return flags


def gcloud_package_path(setup_folder: str, python_module: str) -> str:
    """What gcloud's ``--package-path`` wants for a project folder holding setup.py: the Python
    package itself (gcloud builds from its parent, using the setup.py there). The builder's
    package folder is the one holding setup.py, so the package is its child named by the
    module's first part: ``examples/trainer`` + ``trainer.task`` -> ``examples/trainer/trainer``.
    """
    top = python_module.split(".", 1)[0].strip()
    if not top:
        return setup_folder
    return f"{setup_folder.rstrip('/')}/{top}"


def _package_flags(
    ti: Mapping[str, Any], package_path: str | None, staging_bucket: str | None
) -> list[str]:
    """``--packages`` (always, when there are any) and the local build's flags.

    gcloud uploads every ``--packages`` entry that is not ``gs://``; a ``file://`` URI is given
    as the path it names, which is what gcloud can open.
    """
    flags: list[str] = []
    uris = ti.get("packageUris")
    paths = [str(u).removeprefix("file://") for u in uris] if isinstance(uris, list) else []
    if paths:
        flags += _flag("--packages", ",".join(paths))
    if package_path:
        flags += _flag("--package-path", package_path)
    uploads = package_path or any(not p.startswith("gs://") for p in paths)
    if staging_bucket and uploads:
        flags += _flag("--staging-bucket", staging_bucket)
    return flags


def _labels_fit_flag(labels: Mapping[Any, Any]) -> bool:
    """``--labels k=v,...`` can carry the map: no ``,`` or ``=`` inside a key or value."""
    return all(
        isinstance(k, str) and isinstance(v, str) and not re.search(r"[,=]", k + v) and k
        for k, v in labels.items()
    )


def _flag(flag: str, value: str) -> list[str]:
    """``--flag value`` as two words, or one ``--flag=value`` when argparse would take a value
    starting with ``-`` for another option."""
    return [f"{flag}={value}"] if value.startswith("-") else [flag, value]


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _scale_tier_choice(value: Any) -> str | None:
    """``STANDARD_1`` as gcloud's choice ``standard-1``."""
    return value.lower().replace("_", "-") if value in SCALE_TIERS else None


def _bool_choice(value: Any) -> str | None:
    return ("true" if value else "false") if isinstance(value, bool) else None


def _positive_int(value: Any) -> int | None:
    """An int64 field (int or decimal string) that is at least 1, as gcloud's flags demand."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    return value if isinstance(value, int) and value >= 1 else None


def _gcs_object(value: Any) -> str | None:
    return value if isinstance(value, str) and _GCS_OBJECT.match(value) else None


def _kms_key(value: Any) -> str | None:
    return value if isinstance(value, str) and _KMS_KEY.match(value) else None


def _paths(value: Mapping[str, Any]) -> list[str]:
    """The top-level keys, with each ReplicaConfig's remaining keys spelled out."""
    out: list[str] = []
    for key, sub in value.items():
        if key in ("masterConfig", "workerConfig", "parameterServerConfig") and isinstance(
            sub, dict
        ):
            out += [f"{key}.{k}" for k in sub]
        else:
            out.append(key)
    return out
