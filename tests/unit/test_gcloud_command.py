"""The ``gcloud ai-platform jobs submit training`` line the builder shows for a job.

Table tests pin the command for typical jobs. The properties hold for any valid job: the command
reads back through a shell unchanged, uses only flags that gcloud 528 has, and, merged the way
gcloud merges ``--config`` and flags (``BuildTrainingJob`` in the SDK), submits the job itself.
``tests/gcloud/test_gcloud_config.py`` runs such commands through the real gcloud.
"""

from __future__ import annotations

import copy
import shlex
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

from tests.support.config_corpus import SETTINGS, VALID, load_corpus_file, valid_jobs
from tui_app.model.jobs.gcloud_command import (
    GCLOUD_SUBMIT,
    JOB_ID_PLACEHOLDER,
    config_fields,
    format_command,
    submit_command,
)
from tui_app.model.jobs.job_config import from_config_yaml, to_config_yaml
from tui_app.model.jobs.job_spec import parse_job

GCLOUD_SUBMIT_FLAGS = frozenset(
    (
        "--async",
        "--config",
        "--enable-web-access",
        "--job-dir",
        "--kms-key",
        "--kms-keyring",
        "--kms-location",
        "--kms-project",
        "--labels",
        "--master-accelerator",
        "--master-image-uri",
        "--master-machine-type",
        "--module-name",
        "--package-path",
        "--packages",
        "--parameter-server-accelerator",
        "--parameter-server-count",
        "--parameter-server-image-uri",
        "--parameter-server-machine-type",
        "--python-version",
        "--region",
        "--runtime-version",
        "--scale-tier",
        "--service-account",
        "--staging-bucket",
        "--stream-logs",
        "--use-chief-in-tf-config",
        "--worker-accelerator",
        "--worker-count",
        "--worker-image-uri",
        "--worker-machine-type",
    )
)
"""The command's own flags in ``gcloud ai-platform jobs submit training --help`` (SDK 528.0.0)."""

PKG = "gs://tui-app-demo/packages/trainer-0.1.0.tar.gz"


def training(**ti: Any) -> dict[str, Any]:
    """A BASIC job of the sample trainer, with ``ti`` merged into its trainingInput."""
    base: dict[str, Any] = {"region": "us-central1", "pythonModule": "trainer.task"}
    return {"jobId": "mnist_1", "trainingInput": {**base, "packageUris": [PKG], **ti}}


# -- table tests -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("job", "expected"),
    [
        (
            training(args=["--steps", "5"]),
            f"mnist_1 --region us-central1 --module-name trainer.task --packages {PKG}"
            " -- --steps 5",
        ),
        (
            {
                **training(
                    scaleTier="CUSTOM",
                    masterType="n1-standard-8",
                    masterConfig={"acceleratorConfig": {"count": "1", "type": "NVIDIA_TESLA_T4"}},
                    workerType="n1-standard-8",
                    workerCount="2",
                    workerConfig={"acceleratorConfig": {"count": 2, "type": "NVIDIA_TESLA_V100"}},
                    parameterServerType="n1-highmem-8",
                    parameterServerCount=1,
                    runtimeVersion="2.11",
                    pythonVersion="3.7",
                    jobDir="gs://my-bucket/out",
                ),
                "labels": {"team": "ml", "run": ""},
            },
            "mnist_1 --region us-central1 --scale-tier custom"
            " --master-machine-type n1-standard-8"
            " --worker-machine-type n1-standard-8 --worker-count 2"
            " --parameter-server-machine-type n1-highmem-8 --parameter-server-count 1"
            " --master-accelerator count=1,type=nvidia-tesla-t4"
            " --worker-accelerator count=2,type=nvidia-tesla-v100"
            f" --module-name trainer.task --packages {PKG} --job-dir gs://my-bucket/out"
            " --runtime-version 2.11 --python-version 3.7 --labels team=ml,run=",
        ),
        (
            {
                "jobId": "tf2_container",
                "trainingInput": {
                    "region": "europe-west4",
                    "scaleTier": "BASIC_GPU",
                    "masterConfig": {"imageUri": "gcr.io/p/img:1"},
                    "workerConfig": {"imageUri": "gcr.io/p/worker:1"},
                    "useChiefInTfConfig": True,
                    "enableWebAccess": True,
                    "serviceAccount": "sa@p.iam.gserviceaccount.com",
                    "encryptionConfig": {
                        "kmsKeyName": "projects/p/locations/l/keyRings/r/cryptoKeys/k"
                    },
                },
            },
            "tf2_container --region europe-west4 --scale-tier basic-gpu"
            " --master-image-uri gcr.io/p/img:1 --worker-image-uri gcr.io/p/worker:1"
            " --service-account sa@p.iam.gserviceaccount.com --enable-web-access"
            " --use-chief-in-tf-config true"
            " --kms-key projects/p/locations/l/keyRings/r/cryptoKeys/k",
        ),
        (
            # Only gs:// packages stay remote; gcloud uploads a local path, so file:// is opened.
            training(packageUris=[PKG, "file:///opt/dep.whl", "/opt/extra.tar.gz"]),
            "mnist_1 --region us-central1 --module-name trainer.task"
            f" --packages {PKG},/opt/dep.whl,/opt/extra.tar.gz",
        ),
        (
            # The form has no id yet, nor a region: the line still reads as a command.
            {"trainingInput": {"pythonModule": "trainer.task", "packageUris": [PKG]}},
            f"{JOB_ID_PLACEHOLDER} --module-name trainer.task --packages {PKG}",
        ),
    ],
    ids=["basic", "custom-accelerators-labels", "containers", "local-packages", "no-id"],
)
def test_flags_for_what_gcloud_has_flags_for(job: dict[str, Any], expected: str) -> None:
    assert submit_command(job) == [*GCLOUD_SUBMIT, *shlex.split(expected)]
    assert config_fields(job) == []


@pytest.mark.parametrize(
    ("ti", "fields"),
    [
        (
            {"hyperparameters": {"params": []}, "scheduling": {"priority": 5}},
            ["trainingInput.hyperparameters", "trainingInput.scheduling"],
        ),
        # gcloud's worker group takes a type *and* a count of at least 1.
        (
            {"scaleTier": "CUSTOM", "masterType": "standard", "workerType": "standard"},
            ["trainingInput.workerType"],
        ),
        (
            {"scaleTier": "CUSTOM", "masterType": "standard", "workerCount": 0},
            ["trainingInput.workerCount"],
        ),
        (
            {"scaleTier": "CUSTOM", "evaluatorType": "standard", "evaluatorCount": 1},
            ["trainingInput.evaluatorType", "trainingInput.evaluatorCount"],
        ),
        (
            {
                "masterConfig": {
                    "imageUri": "gcr.io/p/img:1",
                    "containerArgs": ["--x"],
                    "diskConfig": {"bootDiskSizeGb": 200},
                },
                "evaluatorConfig": {"imageUri": "gcr.io/p/eval:1"},
            },
            [
                "trainingInput.masterConfig.containerArgs",
                "trainingInput.masterConfig.diskConfig",
                "trainingInput.evaluatorConfig",
            ],
        ),
        # --job-dir parses a gs:// object; gcloud passes the file's local path through untouched.
        ({"jobDir": "/tmp/out"}, ["trainingInput.jobDir"]),
        ({"network": "projects/1/global/networks/n"}, ["trainingInput.network"]),
        ({"encryptionConfig": {"kmsKeyName": "short-name"}}, ["trainingInput.encryptionConfig"]),
    ],
)
def test_the_rest_goes_through_config(ti: dict[str, Any], fields: list[str]) -> None:
    job = training(**ti)
    assert config_fields(job) == fields
    argv = submit_command(job, config_path="jobs/my config.yaml")
    assert argv[5:8] == ["mnist_1", "--config", "jobs/my config.yaml"]


def test_package_path_and_staging_bucket() -> None:
    job = training(packageUris=[PKG], args=["--steps", "5"])
    argv = submit_command(job, package_path="trainer", staging_bucket="gs://staging")
    assert argv[argv.index("--packages") :] == [
        *("--packages", PKG, "--package-path", "trainer", "--staging-bucket", "gs://staging"),
        *("--", "--steps", "5"),
    ]
    # A staging bucket is named only when gcloud has something to upload.
    assert "--staging-bucket" not in submit_command(job, staging_bucket="gs://staging")
    local = training(packageUris=[PKG, "file:///opt/dep.whl"])
    assert submit_command(local, staging_bucket="gs://staging")[-4:] == [
        *("--packages", f"{PKG},/opt/dep.whl", "--staging-bucket", "gs://staging")
    ]
    # A value argparse would read as an option is attached with '='.
    assert "--package-path=-pkg" in submit_command(job, package_path="-pkg")


def test_false_and_empty_values_need_no_flag() -> None:
    job = training(enableWebAccess=False, args=[])
    expected = f"mnist_1 --region us-central1 --module-name trainer.task --packages {PKG}"
    assert submit_command(job) == [*GCLOUD_SUBMIT, *shlex.split(expected)]


def test_format_puts_one_flag_per_line() -> None:
    argv = submit_command(
        {**training(args=["--name", "my run", "--", "it's"]), "labels": {"team": "ml"}}
    )
    assert format_command(argv) == (
        "gcloud ai-platform jobs submit training mnist_1 \\\n"
        "  --region us-central1 \\\n"
        "  --module-name trainer.task \\\n"
        f"  --packages {PKG} \\\n"
        "  --labels team=ml \\\n"
        "  -- --name 'my run' -- 'it'\"'\"'s'"
    )


def test_format_is_what_a_shell_runs() -> None:
    argv = submit_command(training(args=["$HOME", "a\nb", "*", "", "--x=;|&"]))
    out = subprocess.run(
        ["bash", "-c", 'printf "%s\\0" ' + format_command(argv)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.split("\0")[:-1] == argv


# -- properties --------------------------------------------------------------------------------


def shell_words(text: str) -> list[str]:
    """``text`` split as a POSIX shell would, line continuations included."""
    return shlex.split(text.replace("\\\n", ""))


def used_flags(argv: Sequence[str]) -> list[str]:
    """gcloud's flags in ``argv`` (not the trainer's, after ``--``)."""
    words = list(argv[len(GCLOUD_SUBMIT) + 1 :])
    if "--" in words:
        words = words[: words.index("--")]
    return [w.partition("=")[0] for w in words if w.startswith("--")]


_FLAG_FIELDS = {
    "--region": "region",
    "--module-name": "pythonModule",
    "--job-dir": "jobDir",
    "--runtime-version": "runtimeVersion",
    "--python-version": "pythonVersion",
    "--service-account": "serviceAccount",
    "--master-machine-type": "masterType",
    "--worker-machine-type": "workerType",
    "--parameter-server-machine-type": "parameterServerType",
    "--worker-count": "workerCount",
    "--parameter-server-count": "parameterServerCount",
}
_ROLE_CONFIGS = {
    "--master": "masterConfig",
    "--worker": "workerConfig",
    "--parameter-server": "parameterServerConfig",
}


def gcloud_job(argv: Sequence[str], config: dict[str, Any] | None) -> dict[str, Any]:
    """The Job gcloud 528 sends for ``argv``, ``config`` being the ``--config`` file's job.

    Mirrors ``BuildTrainingJob`` (api_lib/ml_engine/jobs.py): the file first, then every flag
    given overrides its field; ``--packages`` (default ``[]``) always replaces ``packageUris``,
    ``--enable-web-access`` (default false) always replaces ``enableWebAccess``, and ``args``
    are replaced only when ``--`` brings some.
    """
    words = list(argv[len(GCLOUD_SUBMIT) :])
    job_id, words = words[0], words[1:]
    user_args = None
    if "--" in words:
        words, user_args = words[: words.index("--")], words[words.index("--") + 1 :]
    flags: dict[str, str] = {}
    stream = iter(words)
    for word in stream:
        name, eq, value = word.partition("=")
        flags[name] = "" if name == "--enable-web-access" else (value if eq else next(stream))
    job = copy.deepcopy(config) if "--config" in flags and config else {}
    job["jobId"] = job_id
    if "--labels" in flags:
        job["labels"] = dict(kv.split("=", 1) for kv in flags["--labels"].split(","))
    ti = job.setdefault("trainingInput", {})
    for flag, field in _FLAG_FIELDS.items():
        if flag in flags:
            ti[field] = flags[flag]
    if "--scale-tier" in flags:
        ti["scaleTier"] = flags["--scale-tier"].upper().replace("-", "_")
    for prefix, field in _ROLE_CONFIGS.items():
        if f"{prefix}-image-uri" in flags:
            ti.setdefault(field, {})["imageUri"] = flags[f"{prefix}-image-uri"]
        if f"{prefix}-accelerator" in flags:
            acc = dict(kv.split("=") for kv in flags[f"{prefix}-accelerator"].split(","))
            acc["type"] = acc["type"].upper().replace("-", "_")
            ti.setdefault(field, {}).setdefault("acceleratorConfig", {}).update(acc)
    if "--use-chief-in-tf-config" in flags:
        ti["useChiefInTfConfig"] = flags["--use-chief-in-tf-config"] == "true"
    if "--kms-key" in flags:
        ti["encryptionConfig"] = {"kmsKeyName": flags["--kms-key"]}
    ti["packageUris"] = flags["--packages"].split(",") if "--packages" in flags else []
    ti["enableWebAccess"] = "--enable-web-access" in flags
    if user_args:
        ti["args"] = user_args
    sent: dict[str, Any] = without_empty_lists(job)
    return sent


def without_empty_lists(value: Any) -> Any:
    """``value`` as apitools serialises it: an empty repeated field is not sent at all."""
    if isinstance(value, dict):
        return {k: without_empty_lists(v) for k, v in value.items() if v != []}
    if isinstance(value, list):
        return [without_empty_lists(v) for v in value]
    return value


def as_submitted(job: dict[str, Any]) -> dict[str, Any]:
    """``job`` as gcloud can send it: web access spelled out, ``file://`` packages as paths."""
    out: dict[str, Any] = without_empty_lists(parse_job(job))
    ti = out["trainingInput"]
    ti.setdefault("enableWebAccess", False)
    if "packageUris" in ti:
        ti["packageUris"] = [u.removeprefix("file://") for u in ti["packageUris"]]
    return out


@SETTINGS
@given(job=valid_jobs())
def test_any_valid_job_submits_itself(job: dict[str, Any]) -> None:
    argv = submit_command(job)
    assert shell_words(format_command(argv)) == argv
    assert set(used_flags(argv)) <= GCLOUD_SUBMIT_FLAGS
    assert ("--config" in argv) == bool(config_fields(job))
    config = from_config_yaml(to_config_yaml(job))
    submitted = gcloud_job(argv, config)
    assert {f.partition(".")[0] for f in config_fields(job)} <= {"trainingInput", "labels"}
    assert without_empty_lists(parse_job(submitted)) == as_submitted(job)


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_every_corpus_config_submits_itself(path: Path) -> None:
    job = load_corpus_file(path)
    argv = submit_command(job, config_path=str(path))
    assert set(used_flags(argv)) <= GCLOUD_SUBMIT_FLAGS
    assert without_empty_lists(parse_job(gcloud_job(argv, job))) == as_submitted(job)


def test_package_path_is_the_package_not_the_folder_with_setup_py() -> None:
    from tui_app.model.jobs.gcloud_command import gcloud_package_path

    assert gcloud_package_path("examples/trainer", "trainer.task") == "examples/trainer/trainer"
    assert gcloud_package_path("/src/proj/", "pkg.sub.main") == "/src/proj/pkg"
    assert gcloud_package_path("proj", "") == "proj"
