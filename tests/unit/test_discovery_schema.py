"""The discovery-schema checker catches what it must, so the request tests cannot pass vacuously.

Each test starts from a body the checker accepts and breaks one thing the server (or a silent
drop) would care about: an unknown field, an int64 sent as a number, an int32 sent as a string,
an enum value, a duration, an output-only field in a request.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.support.discovery_schema import discovery_document, method, violations

CUSTOM_JOB = "GoogleCloudAiplatformV1CustomJob"
TUNING_JOB = "GoogleCloudAiplatformV1HyperparameterTuningJob"
IMAGE = "us-docker.pkg.dev/vertex-ai/training/tf-gpu.2-11.py310:latest"

VALID_CUSTOM_JOB: dict[str, Any] = {
    "displayName": "mnist_1",
    "labels": {"team": "vision"},
    "encryptionSpec": {"kmsKeyName": "projects/p/locations/us-central1/keyRings/r/cryptoKeys/k"},
    "jobSpec": {
        "workerPoolSpecs": [
            {
                "machineSpec": {
                    "machineType": "n1-standard-8",
                    "acceleratorType": "NVIDIA_TESLA_T4",
                    "acceleratorCount": 1,
                },
                "replicaCount": "1",
                "diskSpec": {"bootDiskType": "pd-ssd", "bootDiskSizeGb": 100},
                "pythonPackageSpec": {
                    "executorImageUri": IMAGE,
                    "packageUris": ["gs://b/trainer-0.1.tar.gz"],
                    "pythonModule": "trainer.task",
                    "args": ["--epochs=5"],
                },
            },
            {},
            {},
            {
                "machineSpec": {"machineType": "n1-standard-4"},
                "replicaCount": "2",
                "containerSpec": {"imageUri": "gcr.io/p/img:1", "command": ["python"]},
            },
        ],
        "scheduling": {"timeout": "7200s"},
        "baseOutputDirectory": {"outputUriPrefix": "gs://b/out"},
        "serviceAccount": "sa@p.iam.gserviceaccount.com",
        "enableWebAccess": True,
    },
}

VALID_TUNING_JOB: dict[str, Any] = {
    "displayName": "hp_1",
    "maxTrialCount": 8,
    "parallelTrialCount": 2,
    "studySpec": {
        "metrics": [{"metricId": "accuracy", "goal": "MAXIMIZE"}],
        "parameters": [
            {
                "parameterId": "lr",
                "doubleValueSpec": {"minValue": 0.0001, "maxValue": 0.1},
                "scaleType": "UNIT_LOG_SCALE",
            },
            {"parameterId": "layers", "integerValueSpec": {"minValue": "1", "maxValue": "5"}},
        ],
        "algorithm": "RANDOM_SEARCH",
    },
    "trialJobSpec": copy.deepcopy(VALID_CUSTOM_JOB["jobSpec"]),
}


def _broken(base: dict[str, Any], path: tuple[str | int, ...], value: object) -> dict[str, Any]:
    """A deep copy of ``base`` with the item at ``path`` set to ``value``."""
    out = copy.deepcopy(base)
    target: Any = out
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    return out


@pytest.mark.parametrize(
    ("schema", "body"), [(CUSTOM_JOB, VALID_CUSTOM_JOB), (TUNING_JOB, VALID_TUNING_JOB)]
)
def test_valid_bodies_pass(schema: str, body: dict[str, Any]) -> None:
    assert violations("aiplatform", "v1", schema, body, request=True) == []


POOL = ("jobSpec", "workerPoolSpecs", 0)
CASES = [
    pytest.param((*POOL, "machineSpec", "machineTyp"), "n1-standard-8", "unknown field", id="typo"),
    pytest.param(("jobSpec", "worker_pool_specs"), [], "unknown field", id="snake-case"),
    pytest.param((*POOL, "replicaCount"), 1, "expected a string", id="int64-as-number"),
    pytest.param((*POOL, "replicaCount"), "one", "not an int64", id="int64-not-digits"),
    pytest.param(
        (*POOL, "machineSpec", "acceleratorCount"), "1", "expected an integer", id="int32-string"
    ),
    pytest.param(
        (*POOL, "machineSpec", "acceleratorCount"), 2**31, "int32 range", id="int32-overflow"
    ),
    pytest.param((*POOL, "diskSpec", "bootDiskSizeGb"), 1.5, "expected an integer", id="float"),
    pytest.param(
        (*POOL, "machineSpec", "acceleratorType"), "TPU_V2_POD", "is not one of", id="bad-enum"
    ),
    pytest.param(("jobSpec", "scheduling", "timeout"), "2h", "duration", id="bad-duration"),
    pytest.param(("jobSpec", "scheduling", "timeout"), 7200, "expected a string", id="dur-num"),
    pytest.param(("jobSpec", "enableWebAccess"), "true", "expected a boolean", id="bool-string"),
    pytest.param(("jobSpec", "workerPoolSpecs"), {}, "expected an array", id="not-array"),
    pytest.param(("labels",), {"team": 1}, "expected a string", id="label-value-type"),
    pytest.param(
        (*POOL, "pythonPackageSpec", "packageUris"), "gs://b/p.tgz", "array", id="str-not-list"
    ),
    pytest.param(("jobSpec",), [], "expected an object", id="not-object"),
]


@pytest.mark.parametrize(("path", "value", "expected"), CASES)
def test_each_kind_of_mistake_is_reported(
    path: tuple[str | int, ...], value: object, expected: str
) -> None:
    found = violations("aiplatform", "v1", CUSTOM_JOB, _broken(VALID_CUSTOM_JOB, path, value))
    assert len(found) == 1, found
    assert expected in found[0]


def test_the_path_of_a_mistake_is_reported() -> None:
    found = violations(
        "aiplatform", "v1", CUSTOM_JOB, _broken(VALID_CUSTOM_JOB, (*POOL, "replicaCount"), 3)
    )
    assert found == [
        f"{CUSTOM_JOB}.jobSpec.workerPoolSpecs[0].replicaCount: expected a string, got 3"
    ]


def test_int64_in_tuning_specs_must_be_strings() -> None:
    body = _broken(
        VALID_TUNING_JOB, ("studySpec", "parameters", 1, "integerValueSpec", "minValue"), 1
    )
    assert any(
        "minValue: expected a string" in v for v in violations("aiplatform", "v1", TUNING_JOB, body)
    )
    body = _broken(VALID_TUNING_JOB, ("maxTrialCount",), "8")
    assert any(
        "maxTrialCount: expected an integer" in v
        for v in violations("aiplatform", "v1", TUNING_JOB, body)
    )


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("name", "projects/p/locations/us-central1/customJobs/1"),
        ("state", "JOB_STATE_RUNNING"),
        ("createTime", "2024-01-01T00:00:00Z"),
        ("webAccessUris", {"workerpool0-0": "https://x"}),
    ],
)
def test_output_only_fields_are_errors_in_requests_only(key: str, value: object) -> None:
    body = {**VALID_CUSTOM_JOB, key: value}
    assert violations("aiplatform", "v1", CUSTOM_JOB, body) == []
    found = violations("aiplatform", "v1", CUSTOM_JOB, body, request=True)
    assert found == [f"{CUSTOM_JOB}: {key!r} is output only"]


def test_timestamps_must_be_rfc3339() -> None:
    body = {**VALID_CUSTOM_JOB, "createTime": "2024-01-01 00:00:00"}
    assert violations("aiplatform", "v1", CUSTOM_JOB, body) == [
        f"{CUSTOM_JOB}.createTime: '2024-01-01 00:00:00' is not an RFC 3339 timestamp"
    ]


def test_method_and_document_lookups() -> None:
    create = method("aiplatform", "v1", "aiplatform.projects.locations.customJobs.create")
    assert create["request"]["$ref"] == CUSTOM_JOB
    assert create["httpMethod"] == "POST"
    tuning = method(
        "aiplatform", "v1", "aiplatform.projects.locations.hyperparameterTuningJobs.create"
    )
    assert tuning["request"]["$ref"] == TUNING_JOB
    with pytest.raises(KeyError):
        method("aiplatform", "v1", "aiplatform.projects.locations.customJobs.frobnicate")
    assert discovery_document("aiplatform", "v1") is discovery_document("aiplatform", "v1")
