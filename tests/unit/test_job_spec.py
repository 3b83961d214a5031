"""The Job resource's validation: the rules jobs.create and the builder share."""

from __future__ import annotations

from typing import Any

import pytest

from tui_app.model.jobs.job_spec import JobSpecError, parse_job

PKG = "gs://my-bucket/trainer-0.1.0.tar.gz"


def job(**ti: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "region": "us-central1",
        "pythonModule": "trainer.task",
        "packageUris": [PKG],
    }
    base.update(ti)
    return {"jobId": "mnist_20261122_083000", "trainingInput": base}


def fields(body: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(JobSpecError) as err:
        parse_job(body)
    return {v.field: v.description for v in err.value.violations}


def test_gcloud_body_normalises() -> None:
    out = parse_job(
        {
            "jobId": "j1",
            "labels": {"owner": "ann"},
            "trainingInput": {
                "args": ["--foo", "bar"],
                "enableWebAccess": False,
                "packageUris": [PKG],
                "pythonModule": "trainer.task",
                "region": "us-central1",
                "scaleTier": "CUSTOM",
                "masterType": "n1-standard-8",
                "workerCount": 2,
                "workerType": "n1-standard-8",
                "masterConfig": {"acceleratorConfig": {"count": 1, "type": "NVIDIA_TESLA_T4"}},
                "hyperparameters": {
                    "params": [
                        {
                            "parameterName": "lr",
                            "type": "DOUBLE",
                            "minValue": 0.001,
                            "maxValue": 0.1,
                            "scaleType": "UNIT_LOG_SCALE",
                        }
                    ],
                    "maxTrials": 4,
                },
            },
            "state": "RUNNING",
            "etag": "abc",
            "createTime": "x",
        }
    )
    ti = out["trainingInput"]
    assert ti["workerCount"] == "2"  # int64 as a string on the wire
    assert ti["masterConfig"]["acceleratorConfig"] == {"count": "1", "type": "NVIDIA_TESLA_T4"}
    assert ti["hyperparameters"]["params"][0]["minValue"] == 0.001
    assert "state" not in out and "etag" not in out  # output-only fields dropped
    assert parse_job(job())["trainingInput"]["scaleTier"] == "BASIC"


@pytest.mark.parametrize(
    ("ti", "field", "words"),
    [
        ({"scaleTier": "CUSTOM"}, "trainingInput.masterType", "required when scaleTier is CUSTOM"),
        (
            {"scaleTier": "CUSTOM", "masterType": "standard", "workerCount": "3"},
            "trainingInput.workerType",
            "required when workerCount is 3",
        ),
        (
            {"masterType": "standard"},
            "trainingInput.masterType",
            "only allowed with scaleTier CUSTOM",
        ),
        (
            {"scaleTier": "CUSTOM", "masterType": "huge"},
            "trainingInput.masterType",
            "Unknown machine type",
        ),
        (
            {
                "scaleTier": "CUSTOM",
                "masterType": "standard",
                "workerType": "n1-standard-8",
                "workerCount": "1",
            },
            "trainingInput.masterType",
            "not a mix",
        ),
        (
            {
                "scaleTier": "CUSTOM",
                "masterType": "standard",
                "masterConfig": {"acceleratorConfig": {"count": "1", "type": "NVIDIA_TESLA_K80"}},
            },
            "trainingInput.masterConfig.acceleratorConfig",
            "Compute Engine machine type",
        ),
        (
            {
                "scaleTier": "CUSTOM",
                "masterType": "n1-standard-8",
                "masterConfig": {"acceleratorConfig": {"count": "0", "type": "NVIDIA_TESLA_K80"}},
            },
            "trainingInput.masterConfig.acceleratorConfig.count",
            "1 or more",
        ),
        (
            {
                "scaleTier": "CUSTOM",
                "masterType": "n1-standard-8",
                "masterConfig": {"acceleratorConfig": {"count": "8", "type": "TPU_V2"}},
            },
            "trainingInput.masterConfig.acceleratorConfig.type",
            "cannot be attached to n1-standard-8",
        ),
        (
            {
                "scaleTier": "CUSTOM",
                "masterType": "n1-standard-8",
                "masterConfig": {"acceleratorConfig": {"count": "1", "type": "NVIDIA_TESLA_A100"}},
            },
            "trainingInput.masterConfig.acceleratorConfig.type",
            "allowed are NVIDIA_TESLA_K80",
        ),
        (
            {
                "scaleTier": "CUSTOM",
                "masterType": "a2-highgpu-2g",
                "masterConfig": {"acceleratorConfig": {"count": "1", "type": "NVIDIA_TESLA_A100"}},
            },
            "trainingInput.masterConfig.acceleratorConfig.count",
            "the count must be 2",
        ),
        (
            {
                "scaleTier": "CUSTOM",
                "masterType": "n1-standard-8",
                "workerType": "cloud_tpu",
                "workerCount": "1",
                "workerConfig": {"acceleratorConfig": {"count": "8", "type": "NVIDIA_TESLA_T4"}},
            },
            "trainingInput.workerConfig.acceleratorConfig.type",
            "allowed are TPU_V2",
        ),
        (
            {
                "scaleTier": "CUSTOM",
                "masterType": "n1-standard-8",
                "evaluatorConfig": {"acceleratorConfig": {"count": "1", "type": "NVIDIA_TESLA_T4"}},
            },
            "trainingInput.evaluatorConfig.acceleratorConfig",
            "needs a machine type in evaluatorType",
        ),
        (
            {"masterConfig": {"acceleratorConfig": {"count": "1", "type": "NVIDIA_TESLA_T4"}}},
            "trainingInput.masterConfig.acceleratorConfig",
            "only allowed with scaleTier CUSTOM",
        ),
        (
            {"workerConfig": {"imageUri": "gcr.io/p/worker:1"}},
            "trainingInput.workerConfig.imageUri",
            "needs masterConfig.imageUri too",
        ),
        (
            {"masterConfig": {"containerCommand": ["python", "-m", "x"]}},
            "trainingInput.masterConfig.containerCommand",
            "only to a custom container",
        ),
        (
            {
                "masterConfig": {"imageUri": "gcr.io/p/img:1", "containerArgs": ["--x"]},
                "args": ["--y"],
            },
            "trainingInput.args",
            "not both",
        ),
        (
            {"masterConfig": {"imageUri": "gcr.io/p/img:1", "tpuTfVersion": "2.11"}},
            "trainingInput.masterConfig.tpuTfVersion",
            "only to a cloud_tpu masterType",
        ),
        (
            {"useChiefInTfConfig": True},
            "trainingInput.useChiefInTfConfig",
            "only to custom containers",
        ),
        ({"scaleTier": "BASIC", "workerCount": "2"}, "trainingInput.workerCount", "CUSTOM"),
        (
            {"scaleTier": "CUSTOM", "masterType": "standard", "evaluatorCount": "-1"},
            "trainingInput.evaluatorCount",
            "0 or more",
        ),
        ({"pythonVersion": "3.9"}, "trainingInput.pythonVersion", "allowed are 2.7, 3.5, 3.7"),
        (
            {"runtimeVersion": "2.1", "pythonVersion": "2.7"},
            "trainingInput.pythonVersion",
            "supports Python 3.7",
        ),
        (
            {"scheduling": {"maxRunningTime": "0s"}},
            "trainingInput.scheduling.maxRunningTime",
            "more than 0s",
        ),
        ({"serviceAccount": "robot"}, "trainingInput.serviceAccount", "email"),
        ({"jobDir": "relative/out"}, "trainingInput.jobDir", "gs:// URI"),
        (
            {
                "hyperparameters": {
                    "params": [
                        {
                            "parameterName": "lr",
                            "type": "DOUBLE",
                            "minValue": 0,
                            "maxValue": 1,
                            "scaleType": "UNIT_LOG_SCALE",
                        }
                    ]
                }
            },
            "trainingInput.hyperparameters.params[0].minValue",
            "greater than 0",
        ),
        (
            {
                "hyperparameters": {
                    "params": [
                        {
                            "parameterName": "opt",
                            "type": "CATEGORICAL",
                            "categoricalValues": ["a"],
                            "scaleType": "UNIT_LINEAR_SCALE",
                        }
                    ]
                }
            },
            "trainingInput.hyperparameters.params[0].type",
            "no range/scale",
        ),
        (
            {
                "hyperparameters": {
                    "params": [{"parameterName": "d", "type": "DISCRETE", "minValue": 1}]
                }
            },
            "trainingInput.hyperparameters.params[0].discreteValues",
            "need discreteValues",
        ),
        (
            {"hyperparameters": {"params": [{"parameterName": "x", "minValue": 1}]}},
            "trainingInput.hyperparameters.params[0].type",
            "A type is required",
        ),
        (
            {
                "hyperparameters": {
                    "params": [{"parameterName": "x", "type": "DOUBLE", "minValue": 1}]
                }
            },
            "trainingInput.hyperparameters.params[0].minValue",
            "need minValue and maxValue",
        ),
        (
            {
                "hyperparameters": {
                    "params": [
                        {"parameterName": "x", "type": "DOUBLE", "minValue": 2, "maxValue": 1}
                    ]
                }
            },
            "trainingInput.hyperparameters.params[0].maxValue",
            "not be less than minValue",
        ),
        (
            {
                "hyperparameters": {
                    "algorithm": "BAYES",
                    "params": [
                        {"parameterName": "x", "type": "DOUBLE", "minValue": 0, "maxValue": 1}
                    ],
                }
            },
            "trainingInput.hyperparameters.algorithm",
            "GRID_SEARCH",
        ),
        ({"region": None}, "trainingInput.region", "required"),
        ({"packageUris": None}, "trainingInput.packageUris", "required unless"),
        ({"pythonModule": "trainer/task.py"}, "trainingInput.pythonModule", "not a Python module"),
        ({"packageUris": ["gs://b/x.tar.gz"]}, "trainingInput.packageUris[0]", "invalid bucket"),
        ({"packageUris": ["http://x/y"]}, "trainingInput.packageUris[0]", "not a package location"),
        ({"runtimeVersion": "9.9"}, "trainingInput.runtimeVersion", "Unknown runtime version"),
        (
            {"runtimeVersion": "1.10", "pythonVersion": "3.7"},
            "trainingInput.pythonVersion",
            "supports Python 2.7, 3.5",
        ),
        (
            {"scheduling": {"maxWaitTime": "60s"}},
            "trainingInput.scheduling.maxWaitTime",
            "at least 1800s",
        ),
        (
            {"scheduling": {"maxRunningTime": "1h"}},
            "trainingInput.scheduling.maxRunningTime",
            "not a duration",
        ),
        (
            {"scheduling": {"priority": 5000}},
            "trainingInput.scheduling.priority",
            "between 0 and 1000",
        ),
        (
            {"masterConfig": {"imageUri": "gcr.io/x"}, "runtimeVersion": "2.1"},
            "trainingInput.runtimeVersion",
            "not both",
        ),
        ({"network": "default"}, "trainingInput.network", "projects/<number>"),
        (
            {"hyperparameters": {"params": []}},
            "trainingInput.hyperparameters.params",
            "At least one",
        ),
        (
            {
                "hyperparameters": {
                    "algorithm": "GRID_SEARCH",
                    "params": [
                        {"parameterName": "lr", "type": "DOUBLE", "minValue": 0.1, "maxValue": 1}
                    ],
                }
            },
            "trainingInput.hyperparameters.params[0].type",
            "GRID_SEARCH",
        ),
        (
            {
                "hyperparameters": {
                    "params": [{"parameterName": "n", "type": "DISCRETE", "discreteValues": [3, 2]}]
                }
            },
            "trainingInput.hyperparameters.params[0].discreteValues",
            "strictly increasing",
        ),
        (
            {
                "hyperparameters": {
                    "params": [
                        {"parameterName": "n", "type": "INTEGER", "minValue": 1.5, "maxValue": 4}
                    ]
                }
            },
            "trainingInput.hyperparameters.params[0].minValue",
            "whole",
        ),
        (
            {"hyperparameters": {"params": [{"parameterName": "c", "type": "CATEGORICAL"}]}},
            "trainingInput.hyperparameters.params[0].categoricalValues",
            "need categoricalValues",
        ),
        (
            {
                "hyperparameters": {
                    "params": [
                        {"parameterName": "a", "type": "DOUBLE", "minValue": 0, "maxValue": 1},
                        {"parameterName": "a", "type": "DOUBLE", "minValue": 0, "maxValue": 1},
                    ]
                }
            },
            "trainingInput.hyperparameters.params[1].parameterName",
            "defined twice",
        ),
        (
            {
                "hyperparameters": {
                    "maxTrials": 0,
                    "params": [
                        {"parameterName": "a", "type": "DOUBLE", "minValue": 0, "maxValue": 1}
                    ],
                }
            },
            "trainingInput.hyperparameters.maxTrials",
            "1 or more",
        ),
        ({"scaleTier": "basic"}, "trainingInput.scaleTier", "allowed values"),
        ({"workerCount": []}, "trainingInput.workerCount", "valid integer"),
        ({"bogus": 1}, "trainingInput.bogus", "Unknown field"),
    ],
)
def test_violations_name_the_field(ti: dict[str, Any], field: str, words: str) -> None:
    body = job(**ti)
    body["trainingInput"] = {k: v for k, v in body["trainingInput"].items() if v is not None}
    found = fields(body)
    assert field in found, found
    assert words in found[field]


def test_job_level_rules() -> None:
    assert "jobId" in fields({"trainingInput": job()["trainingInput"]})
    assert "jobId" in fields({"jobId": "9x", "trainingInput": {"scaleTier": 3}})
    assert "trainingInput" in fields({"jobId": "j"})
    assert "predictionInput" in fields({"jobId": "j", "predictionInput": {}})
    bad_labels = fields({**job(), "labels": {"Owner": "x", "ok": "Bad Value"}})
    assert set(bad_labels) == {"labels.Owner", "labels.ok"}
    assert "job" in fields([1, 2])  # type: ignore[arg-type]
    many = fields({**job(), "labels": {f"k{i}": "v" for i in range(65)}})
    assert "labels" in many


def test_every_violation_is_reported_at_once() -> None:
    found = fields({"jobId": "j", "trainingInput": {"scaleTier": "CUSTOM", "workerCount": "2"}})
    assert {
        "trainingInput.region",
        "trainingInput.masterType",
        "trainingInput.workerType",
        "trainingInput.packageUris",
        "trainingInput.pythonModule",
    } <= set(found)


@pytest.mark.parametrize(
    "ti",
    [
        # A TPU worker beside an n1 master: cloud_tpu belongs to neither machine family.
        {
            "scaleTier": "CUSTOM",
            "masterType": "n1-highcpu-16",
            "workerType": "cloud_tpu",
            "workerCount": "1",
            "workerConfig": {"acceleratorConfig": {"count": "8", "type": "TPU_V3"}},
            "runtimeVersion": "2.11",
        },
        {
            "scaleTier": "CUSTOM",
            "masterType": "a2-highgpu-2g",
            "masterConfig": {"acceleratorConfig": {"count": "2", "type": "NVIDIA_TESLA_A100"}},
        },
        # Custom containers: images per role, command and args on the container.
        {
            "packageUris": None,
            "pythonModule": None,
            "scaleTier": "CUSTOM",
            "masterType": "n1-standard-8",
            "masterConfig": {"imageUri": "gcr.io/p/img:1", "containerArgs": ["--epochs", "3"]},
            "workerType": "n1-standard-8",
            "workerCount": "2",
            "workerConfig": {"imageUri": "gcr.io/p/worker:1"},
            "useChiefInTfConfig": True,
        },
        {"scaleTier": "BASIC", "workerCount": "0", "useChiefInTfConfig": False},
    ],
)
def test_valid_clusters(ti: dict[str, Any]) -> None:
    body = job(**ti)
    body["trainingInput"] = {k: v for k, v in body["trainingInput"].items() if v is not None}
    assert parse_job(body)["trainingInput"]["scaleTier"] == ti["scaleTier"]


def test_a_nul_anywhere_in_the_training_input_is_refused_with_its_path() -> None:
    """No argv, environment or path can hold NUL: refuse at create instead of failing at start."""
    body = {
        "jobId": "nul_1",
        "trainingInput": {
            "scaleTier": "BASIC",
            "region": "us-central1",
            "pythonModule": "trainer.task",
            "packageUris": ["gs://bucket/trainer-0.1.tar.gz"],
            "args": ["--steps", "1\x002"],
            "jobDir": "gs://bucket/out\x00put",
        },
    }
    with pytest.raises(JobSpecError) as err:
        parse_job(body)
    fields = {v.field for v in err.value.violations}
    assert fields == {"trainingInput.args[1]", "trainingInput.jobDir"}
