"""Resubmission bodies and gcloud's `--config` YAML: written, read back, validated."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from tui_app.model.jobs.job_config import (
    CONFIG_HEADER,
    ConfigError,
    from_config_yaml,
    resubmission,
    to_config_yaml,
)
from tui_app.model.jobs.job_spec import OUTPUT_ONLY_FIELDS, parse_job

NOW = datetime(2026, 11, 22, 9, 15, 0, tzinfo=UTC)
PKG = "gs://my-bucket/trainer-0.1.0.tar.gz"


def custom_job() -> dict[str, Any]:
    """A finished CUSTOM job as the service returns it: accelerators, HP spec, labels."""
    return {
        "jobId": "mnist_20261122_083000",
        "labels": {"owner": "ann", "version": "1"},
        "state": "SUCCEEDED",
        "createTime": "2026-11-22T08:30:00Z",
        "startTime": "2026-11-22T08:31:00Z",
        "endTime": "2026-11-22T09:01:30Z",
        "etag": "5ohFnmWpXAo=",
        "jobPosition": "0",
        "errorMessage": "",
        "trainingInput": {
            "scaleTier": "CUSTOM",
            "region": "us-central1",
            "masterType": "n1-standard-8",
            "masterConfig": {"acceleratorConfig": {"count": "1", "type": "NVIDIA_TESLA_T4"}},
            "workerType": "n1-standard-8",
            "workerCount": "2",
            "workerConfig": {"acceleratorConfig": {"count": "2", "type": "NVIDIA_TESLA_T4"}},
            "parameterServerType": "n1-highmem-8",
            "parameterServerCount": "1",
            "evaluatorType": "n1-standard-4",
            "evaluatorCount": "1",
            "pythonModule": "trainer.task",
            "packageUris": [PKG],
            "args": ["--epochs", "3", "--name", "my run", "--flag=yes", "0.10"],
            "jobDir": "gs://my-bucket/out",
            "runtimeVersion": "2.11",
            "pythonVersion": "3.7",
            "enableWebAccess": False,
            "scheduling": {"maxRunningTime": "7200s"},
            "hyperparameters": {
                "goal": "MAXIMIZE",
                "hyperparameterMetricTag": "accuracy",
                "maxTrials": 8,
                "maxParallelTrials": 2,
                "params": [
                    {
                        "parameterName": "lr",
                        "type": "DOUBLE",
                        "minValue": 0.00001,
                        "maxValue": 0.1,
                        "scaleType": "UNIT_LOG_SCALE",
                    },
                    {"parameterName": "layers", "type": "INTEGER", "minValue": 1, "maxValue": 64},
                    {
                        "parameterName": "optimizer",
                        "type": "CATEGORICAL",
                        "categoricalValues": ["adam", "sgd", "yes", "null"],
                    },
                ],
            },
        },
        "trainingOutput": {
            "consumedMLUnits": 3.5,
            "completedTrialCount": "8",
            "isHyperparameterTuningJob": True,
        },
    }


def test_resubmission_stamps_a_new_id_and_keeps_the_input() -> None:
    job = custom_job()
    before = copy.deepcopy(job)
    body = resubmission(job, NOW)
    assert body == {
        "jobId": "mnist_20261122_091500",
        "labels": job["labels"],
        "trainingInput": job["trainingInput"],
    }
    for field in OUTPUT_ONLY_FIELDS:
        assert field not in body
    # A copy: editing the body never edits the job the list shows.
    body["trainingInput"]["args"].append("--more")
    body["labels"]["owner"] = "bob"
    assert job == before
    assert parse_job(body)  # a valid jobs.create body


def test_resubmission_appends_a_timestamp_to_an_unstamped_id() -> None:
    job = {**custom_job(), "jobId": "census"}
    assert resubmission(job, NOW)["jobId"] == "census_20261122_091500"


def test_resubmission_in_the_same_second_keeps_the_id() -> None:
    """The caller turns jobs.create's 409 into a message; the body doesn't invent a name."""
    job = {**custom_job(), "jobId": "mnist_20261122_091500"}
    assert resubmission(job, NOW)["jobId"] == "mnist_20261122_091500"


def test_resubmission_drops_everything_but_the_submitted_fields() -> None:
    job = {**custom_job(), "predictionOutput": {}, "somethingNew": 1}
    del job["labels"]
    assert set(resubmission(job, NOW)) == {"jobId", "trainingInput"}
    assert "labels" not in resubmission({**job, "labels": {}}, NOW)


def test_resubmission_uses_the_current_time_by_default() -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    new_id = resubmission(custom_job())["jobId"]
    stamp = datetime.strptime(new_id.removeprefix("mnist_"), "%Y%m%d_%H%M%S").replace(tzinfo=UTC)
    assert before <= stamp <= datetime.now(UTC)


def test_config_yaml_is_a_commented_gcloud_config() -> None:
    text = to_config_yaml(custom_job())
    assert text.startswith(CONFIG_HEADER)
    assert "--config" in CONFIG_HEADER
    data = yaml.safe_load(text)
    assert list(data) == ["jobId", "labels", "trainingInput"]
    assert data["jobId"] == "mnist_20261122_083000"
    ti = data["trainingInput"]
    assert next(iter(ti)) == "scaleTier"  # the tier first, as a person edits it
    assert ti["workerCount"] == 2  # counts as numbers, the way people write them
    assert ti["masterConfig"]["acceleratorConfig"]["count"] == 1
    assert ti["args"][-1] == "0.10" and data["labels"]["version"] == "1"  # strings stay strings
    for field in OUTPUT_ONLY_FIELDS:
        assert field not in data


def test_round_trip_equals_the_resubmission() -> None:
    job = custom_job()
    body = resubmission(job, NOW)
    assert from_config_yaml(to_config_yaml(body)) == parse_job(body)
    # Written from the job itself, only the id differs.
    assert from_config_yaml(to_config_yaml(job)) == {**parse_job(body), "jobId": job["jobId"]}


@given(
    args=st.lists(st.text(st.characters(exclude_characters="\x00")), max_size=5),
    workers=st.integers(min_value=0, max_value=1000),
    labels=st.dictionaries(
        st.from_regex(r"[a-z][a-z0-9_-]{0,10}", fullmatch=True),
        st.from_regex(r"[a-z0-9_-]{0,10}", fullmatch=True),
        max_size=4,
    ),
)
def test_round_trip_of_any_args_counts_and_labels(
    args: list[str], workers: int, labels: dict[str, str]
) -> None:
    body: dict[str, Any] = {
        "jobId": "j",
        "labels": labels,
        "trainingInput": {
            "scaleTier": "CUSTOM",
            "masterType": "standard",
            "workerType": "standard",
            "workerCount": str(workers),
            "region": "us-central1",
            "pythonModule": "trainer.task",
            "packageUris": [PKG],
            "args": args,
        },
    }
    assert from_config_yaml(to_config_yaml(body)) == parse_job(body)


def test_int64_fields_as_numbers_or_strings() -> None:
    text = """
jobId: j1
trainingInput:
  scaleTier: CUSTOM
  masterType: n1-standard-8
  masterConfig: {acceleratorConfig: {count: 2, type: NVIDIA_TESLA_T4}}
  workerType: n1-standard-8
  workerCount: "3"
  region: us-central1
  pythonModule: trainer.task
  packageUris: [gs://my-bucket/p.tar.gz]
"""
    ti = from_config_yaml(text)["trainingInput"]
    assert ti["workerCount"] == "3"
    assert ti["masterConfig"]["acceleratorConfig"]["count"] == "2"


def test_output_only_fields_in_a_config_are_ignored() -> None:
    text = to_config_yaml(custom_job()) + "state: FAILED\ncreateTime: 2026-11-22T08:30:00Z\n"
    body = from_config_yaml(text)
    assert "state" not in body and "createTime" not in body


def test_violations_are_all_listed_with_their_paths() -> None:
    text = """
jobId: 1bad
trainingInput:
  scaleTier: CUSTOM
  workerCount: 2
  region: us-central1
  pythonModule: trainer.task
  packageUris: [gs://my-bucket/p.tar.gz]
"""
    with pytest.raises(ConfigError) as err:
        from_config_yaml(text)
    fields = {v.field for v in err.value.violations}
    assert {"jobId", "trainingInput.masterType", "trainingInput.workerType"} <= fields
    lines = err.value.message.splitlines()
    assert len(lines) == len(err.value.violations)
    assert any(line.startswith("trainingInput.workerType: ") for line in lines)
    assert str(err.value) == err.value.message
    assert err.value.line is None


def test_unknown_fields_and_bad_values_are_reported() -> None:
    text = to_config_yaml(custom_job()).replace("scaleTier: CUSTOM", "scaleTier: HUGE")
    text += "trainingInputs: {}\n"
    with pytest.raises(ConfigError) as err:
        from_config_yaml(text)
    assert "trainingInput.scaleTier: " in err.value.message
    assert "trainingInputs: Unknown field" in err.value.message


def test_yaml_syntax_errors_say_where() -> None:
    text = "jobId: j1\ntrainingInput:\n  region: [us-central1\n  pythonModule: x\n"
    with pytest.raises(ConfigError) as err:
        from_config_yaml(text)
    assert err.value.line is not None and err.value.column is not None
    assert err.value.message.startswith(f"Line {err.value.line}, column {err.value.column}: ")
    assert err.value.violations == []

    with pytest.raises(ConfigError) as err:
        from_config_yaml("jobId: j1\n\tlabels: {}\n")
    assert err.value.line == 2


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "empty"),
        ("# only a comment\n", "empty"),
        ("- jobId: j1\n", "list"),
        ("just text\n", "string"),
        ("42\n", "int"),
    ],
)
def test_a_config_must_be_a_mapping(text: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        from_config_yaml(text)


def test_the_job_id_argument_replaces_the_files() -> None:
    """gcloud's JOB argument names the job; most hand-written configs have no jobId at all."""
    text = "trainingInput:\n  region: us-central1\n  pythonModule: t\n  packageUris: [/p.tgz]\n"
    assert from_config_yaml(text, job_id="j2")["jobId"] == "j2"
    assert from_config_yaml(f"jobId: j1\n{text}", job_id="j2")["jobId"] == "j2"
    with pytest.raises(ConfigError) as err:
        from_config_yaml(text)
    assert [v.field for v in err.value.violations] == ["jobId"]


@pytest.mark.parametrize(
    ("job_dir", "expected"),
    [
        ("gs://bucket/mnist_20261122_083000", "gs://bucket/mnist_20261122_091500"),
        ("gs://bucket/runs/mnist_20261122_083000/", "gs://bucket/runs/mnist_20261122_091500"),
        ("gs://bucket/runs/shared", "gs://bucket/runs/shared"),  # not named after the job: kept
        ("gs://bucket/mnist_20261122_083000/out", "gs://bucket/mnist_20261122_083000/out"),
    ],
)
def test_resubmission_moves_a_job_dir_named_after_the_old_job(job_dir: str, expected: str) -> None:
    """Trainers resume from checkpoints in their job dir: a rerun must not resume the old run."""
    job = custom_job()
    job["jobId"] = "mnist_20261122_083000"
    job["trainingInput"]["jobDir"] = job_dir
    body = resubmission(job, NOW)
    assert body["jobId"] == "mnist_20261122_091500"
    assert body["trainingInput"]["jobDir"] == expected
    assert job["trainingInput"]["jobDir"] == job_dir


def test_a_package_folder_travels_in_a_header_comment() -> None:
    from tui_app.model.jobs.job_config import package_folder_of

    job = {
        "jobId": "a_20260101_000000",
        "trainingInput": {
            "scaleTier": "BASIC",
            "region": "us-central1",
            "pythonModule": "trainer.task",
            "packageUris": ["gs://bucket/p.tar.gz"],
        },
    }
    text = to_config_yaml(job, "/src/trainer")
    assert package_folder_of(text) == "/src/trainer"
    assert from_config_yaml(text) == from_config_yaml(to_config_yaml(job))  # gcloud ignores it
    assert package_folder_of(to_config_yaml(job)) is None
    # Only the header counts: the same words inside the YAML's values do not.
    assert package_folder_of("trainingInput: {}\n# tui-app package folder: /x\n") is None
