"""The builder's form <-> job mapping: nothing is lost, problems name their fields (issue 5)."""

from __future__ import annotations

from typing import Any

import pytest

from tui_app.model.builder.builder_form import (
    FormValues,
    field_key,
    form_to_job,
    job_to_form,
    new_form,
    param_index,
    parse_duration,
    parse_labels,
)
from tui_app.model.jobs.gcloud_command import GCLOUD_SUBMIT, submit_command
from tui_app.model.jobs.job_config import CONFIG_HEADER, from_config_yaml, to_config_yaml
from tui_app.model.jobs.job_spec import parse_job

CUSTOM: dict[str, Any] = {
    "jobId": "census_20261122_093000",
    "labels": {"owner": "ann", "team": "ml"},
    "trainingInput": {
        "scaleTier": "CUSTOM",
        "masterType": "n1-standard-8",
        "workerType": "n1-standard-8",
        "parameterServerType": "n1-standard-4",
        "evaluatorType": "n1-standard-4",
        "workerCount": "2",
        "parameterServerCount": "1",
        "evaluatorCount": "1",
        "masterConfig": {
            "acceleratorConfig": {"count": "1", "type": "NVIDIA_TESLA_T4"},
            "diskConfig": {"bootDiskSizeGb": 200},
        },
        "workerConfig": {"acceleratorConfig": {"count": "2", "type": "NVIDIA_TESLA_V100"}},
        "packageUris": ["gs://demo-bucket/trainer-0.1.tar.gz", "/abs/extra.tar.gz"],
        "pythonModule": "trainer.task",
        "args": ["--steps", "200", "--name", "with space"],
        "hyperparameters": {
            "goal": "MINIMIZE",
            "params": [
                {
                    "parameterName": "lr",
                    "type": "DOUBLE",
                    "minValue": 0.001,
                    "maxValue": 0.1,
                    "scaleType": "UNIT_LOG_SCALE",
                },
                {"parameterName": "act", "type": "CATEGORICAL", "categoricalValues": ["a", "b"]},
            ],
            "maxTrials": 8,
            "maxParallelTrials": 2,
            "maxFailedTrials": 1,
            "hyperparameterMetricTag": "loss",
            "algorithm": "RANDOM_SEARCH",
        },
        "region": "us-central1",
        "jobDir": "gs://demo-bucket/census",
        "runtimeVersion": "2.11",
        "pythonVersion": "3.7",
        "scheduling": {"maxRunningTime": "7200s", "maxWaitTime": "3600s", "priority": 5},
        "serviceAccount": "trainer@p.iam.gserviceaccount.com",
        "network": "projects/1/global/networks/default",
    },
}


def roundtrip(job: dict[str, Any]) -> dict[str, Any]:
    form, problems = job_to_form(job)
    assert problems == []
    back, problems = form_to_job(form)
    assert problems == []
    return back


def test_every_field_survives_form_and_back() -> None:
    """Fields without a form field (diskConfig, network, maxFailedTrials) ride along."""
    assert parse_job(roundtrip(CUSTOM)) == parse_job(CUSTOM)


@pytest.mark.parametrize("tier", ["BASIC", "STANDARD_1", "PREMIUM_1", "BASIC_GPU", "BASIC_TPU"])
def test_predefined_tiers_round_trip(tier: str) -> None:
    job = {
        "jobId": "a_1",
        "trainingInput": {
            "scaleTier": tier,
            "region": "europe-west1",
            "pythonModule": "m",
            "packageUris": ["gs://bucket-x/p.tar.gz"],
        },
    }
    assert roundtrip(job) == job


def test_output_only_fields_are_dropped() -> None:
    job = {**CUSTOM, "state": "SUCCEEDED", "etag": "AA==", "trainingOutput": {"x": 1}}
    form, _ = job_to_form(job)
    assert "state" not in form.extra and "etag" not in form.extra


def test_role_fields_only_count_for_custom() -> None:
    form, _ = job_to_form(CUSTOM)
    form.values["scale_tier"] = "BASIC"
    job, problems = form_to_job(form)
    ti = job["trainingInput"]
    assert not problems
    assert not {"masterType", "workerCount", "workerConfig"} & set(ti)
    # masterConfig.diskConfig was not a form field: it stays, and validation will say so.
    assert ti["masterConfig"] == {"diskConfig": {"bootDiskSizeGb": 200}}


IMAGE = "localhost/tui-app-test-trainer:1"

BASIC_IMAGE_YAML = f"""\
jobId: basic_img_1
trainingInput:
  scaleTier: BASIC
  masterConfig:
    imageUri: {IMAGE}
  args:
  - --steps
  - '20'
  - --sleep
  - '0.05'
  region: us-central1
  jobDir: gs://img-bucket/jobs/basic_img_1
"""


def test_a_basic_container_job_round_trips_through_the_form_the_file_and_gcloud() -> None:
    """ml v1 ran masterConfig.imageUri under any tier (gcloud --scale-tier basic
    --master-image-uri): the file fills the image field, and the field writes the same file
    and a gcloud line that needs no --config."""
    job = from_config_yaml(BASIC_IMAGE_YAML)
    form, problems = job_to_form(job)
    assert problems == []
    assert form.get("master_image") == IMAGE
    assert form.extra == {}  # the image is the field's, not a part riding along
    back, problems = form_to_job(form)
    assert problems == []
    assert back["trainingInput"]["masterConfig"] == {"imageUri": IMAGE}
    assert "masterType" not in back["trainingInput"]
    assert to_config_yaml(back).removeprefix(CONFIG_HEADER) == BASIC_IMAGE_YAML
    assert submit_command(back) == [
        *GCLOUD_SUBMIT,
        "basic_img_1",
        *("--region", "us-central1"),
        *("--scale-tier", "basic"),
        *("--master-image-uri", IMAGE),
        *("--job-dir", "gs://img-bucket/jobs/basic_img_1"),
        *("--", "--steps", "20", "--sleep", "0.05"),
    ]


@pytest.mark.parametrize("tier", ["BASIC", "STANDARD_1", "PREMIUM_1", "BASIC_GPU", "BASIC_TPU"])
def test_the_master_image_is_the_forms_under_every_tier(tier: str) -> None:
    form = new_form("j_1")
    form.values.update(scale_tier=tier, master_image=f" {IMAGE} ")
    job, problems = form_to_job(form)
    assert problems == []
    assert job["trainingInput"]["masterConfig"] == {"imageUri": IMAGE}
    assert parse_job(job)["trainingInput"]["masterConfig"] == {"imageUri": IMAGE}
    assert roundtrip(job) == job


def test_a_predefined_tier_takes_only_the_masters_image() -> None:
    """What a CUSTOM form left behind (machine types, accelerators, other roles' images) is not
    the job's once the tier is predefined: the tier picks the machines, and there is no
    masterType to go with the image."""
    form = new_form("j_1")
    form.values.update(
        scale_tier="CUSTOM",
        master_type="n1-standard-8",
        master_acc_type="NVIDIA_TESLA_T4",
        master_image=IMAGE,
        worker_type="n1-standard-8",
        worker_count="2",
        worker_image="gcr.io/p/worker:2",
    )
    form.values["scale_tier"] = "BASIC_GPU"
    ti = form_to_job(form)[0]["trainingInput"]
    assert ti["masterConfig"] == {"imageUri": IMAGE}
    assert not {"masterType", "workerType", "workerCount", "workerConfig"} & set(ti)
    # An empty field adds no masterConfig at all.
    form.values["master_image"] = "  "
    assert "masterConfig" not in form_to_job(form)[0]["trainingInput"]


def test_a_predefined_tiers_master_config_keeps_what_has_no_field() -> None:
    job = {
        "jobId": "j_1",
        "trainingInput": {
            "scaleTier": "STANDARD_1",
            "region": "us-central1",
            "masterConfig": {"imageUri": IMAGE, "containerCommand": ["python3", "-m", "t"]},
        },
    }
    form, problems = job_to_form(job)
    assert problems == []
    assert form.get("master_image") == IMAGE
    assert form.extra["trainingInput"] == {
        "masterConfig": {"containerCommand": ["python3", "-m", "t"]}
    }
    assert roundtrip(job) == job
    # Clearing the field drops the image and keeps the rest (validation then says it needs one).
    form.values["master_image"] = ""
    ti = form_to_job(form)[0]["trainingInput"]
    assert ti["masterConfig"] == {"containerCommand": ["python3", "-m", "t"]}


def test_a_predefined_tiers_image_the_form_cannot_show_is_reported() -> None:
    job = {"trainingInput": {"scaleTier": "BASIC", "masterConfig": {"imageUri": ["a", "b"]}}}
    form, problems = job_to_form(job)
    assert [p.field for p in problems] == ["trainingInput.masterConfig.imageUri"]
    assert form.get("master_image") == ""


def test_accelerator_and_image_need_an_active_role() -> None:
    form = new_form("j_1")
    form.values.update(
        scale_tier="CUSTOM",
        master_type="n1-standard-8",
        worker_acc_type="NVIDIA_TESLA_T4",  # no worker type: not a worker group
        master_acc_type="NVIDIA_TESLA_T4",  # count left empty: 1
        master_image="gcr.io/p/img",
    )
    ti = form_to_job(form)[0]["trainingInput"]
    assert "workerConfig" not in ti
    assert ti["masterConfig"] == {
        "acceleratorConfig": {"count": "1", "type": "NVIDIA_TESLA_T4"},
        "imageUri": "gcr.io/p/img",
    }


def test_form_problems_name_their_fields() -> None:
    form = FormValues(
        values={
            "job_id": "j_1",
            "scale_tier": "CUSTOM",
            "worker_count": "two",
            "max_running_time": "soon",
            "priority": "high",
            "labels": "owner=ann, oops",
        }
    )
    _, problems = form_to_job(form)
    fields = {p.field for p in problems}
    assert fields == {
        "trainingInput.workerCount",
        "trainingInput.scheduling.maxRunningTime",
        "trainingInput.scheduling.priority",
        "labels",
    }
    assert {field_key(f) for f in fields} == {
        "worker_count",
        "max_running_time",
        "priority",
        "labels",
    }


def test_values_the_form_cannot_show_are_reported() -> None:
    job = {
        "jobId": "j",
        "trainingInput": {
            "scaleTier": "HUGE",
            "args": "--one",
            "packageUris": {"a": 1},
        },
    }
    form, problems = job_to_form(job)
    assert {p.field for p in problems} == {"trainingInput.scaleTier", "trainingInput.packageUris"}
    assert form.get("scale_tier") == "BASIC"
    assert form.get("args") == "--one"  # a single string is a list of one
    custom = {"trainingInput": {"scaleTier": "CUSTOM", "masterType": "n9-huge"}}
    assert [p.field for p in job_to_form(custom)[1]] == ["trainingInput.masterType"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("7200s", "7200s"),
        ("7200", "7200s"),
        ("2h", "7200s"),
        ("90m", "5400s"),
        ("1h30m", "5400s"),
        ("1d", "86400s"),
        ("1.5s", "1.5s"),
        (" 2 h ", "7200s"),
        ("soon", None),
        ("2h x", None),
        ("h2", None),
        ("", None),
    ],
)
def test_durations(text: str, expected: str | None) -> None:
    assert parse_duration(text) == expected


def test_labels() -> None:
    assert parse_labels("owner=ann, team=ml\nenv=dev") == (
        {"owner": "ann", "team": "ml", "env": "dev"},
        [],
    )
    assert parse_labels("a=1 b =2") == ({"a": "1"}, ["b", "=2"])
    assert parse_labels("") == ({}, [])


@pytest.mark.parametrize(
    ("path", "key"),
    [
        ("jobId", "job_id"),
        ("job.job_id", "job_id"),  # what a server writes for a duplicate id
        ("training_input.worker_type", "worker_type"),
        ("trainingInput.packageUris[1]", "package_uris"),
        ("trainingInput.workerConfig.acceleratorConfig", "worker_acc_type"),
        ("trainingInput.parameterServerConfig.acceleratorConfig.count", "ps_acc_count"),
        ("trainingInput.masterConfig.imageUri", "master_image"),
        ("trainingInput.scheduling.maxWaitTime", "max_wait_time"),
        ("labels.Owner", "labels"),
        ("trainingInput.hyperparameters.params[2].minValue", "params"),
        ("trainingInput.hyperparameters.maxTrials", "hp_max_trials"),
        ("packagePath", "package_path"),
        ("trainingInput.network", None),
        ("trainingInput.masterConfig.diskConfig.bootDiskSizeGb", None),
        ("predictionInput", None),
    ],
)
def test_field_paths_map_to_form_fields(path: str, key: str | None) -> None:
    assert field_key(path) == key


def test_param_index() -> None:
    assert param_index("trainingInput.hyperparameters.params[2].minValue") == 2
    assert param_index("trainingInput.hyperparameters.maxTrials") is None


def test_tuning_off_drops_the_spec() -> None:
    form, _ = job_to_form(CUSTOM)
    assert form.tune and len(form.params) == 2
    form.tune = False
    assert "hyperparameters" not in form_to_job(form)[0]["trainingInput"]
