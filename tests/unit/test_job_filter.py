"""Tests for evaluating ml v1 jobs.list filters against Job resource dicts."""

from __future__ import annotations

from typing import Any

import pytest

from tui_app.local.job_filter import JOB_FIELDS, compile_job_filter
from tui_app.model.filters.filter_expr import FilterSyntaxError

JOBS: list[dict[str, Any]] = [
    {
        "jobId": "census_20261122_083000",
        "state": "SUCCEEDED",
        "labels": {"owner": "ann", "team": "data"},
        "createTime": "2026-11-22T08:30:00Z",
        "startTime": "2026-11-22T08:31:00.500Z",
        "endTime": "2026-11-22T09:00:00Z",
        "trainingInput": {"scaleTier": "BASIC", "packageUris": ["gs://b/census-0.1.tar.gz"]},
        "trainingOutput": {"consumedMLUnits": 0.5},
        "jobPosition": "0",
    },
    {
        "jobId": "rnn_big",
        "state": "FAILED",
        "labels": {"owner": "bob"},
        "createTime": "2026-11-21T10:00:00.000000+00:00",
        "errorMessage": "The replica master 0 exited with a non-zero status of 1.",
        "trainingInput": {
            "scaleTier": "CUSTOM",
            "masterType": "n1-standard-8",
            "workerCount": "2",
            "workerType": "n1-standard-4",
        },
        "trainingOutput": {
            "isHyperparameterTuningJob": True,
            "trials": [{"trialId": "1"}, {"trialId": "2"}],
        },
    },
    {
        "jobId": "rnn_small",
        "state": "RUNNING",
        "createTime": "2023-12-31T23:59:59Z",
        "trainingInput": {"scaleTier": "BASIC_GPU", "workerCount": "10"},
        "jobPosition": "3",
    },
]


def matching(text: str) -> list[str]:
    """Ids of the jobs in JOBS that `text` selects, in order."""
    predicate = compile_job_filter(text)
    return [job["jobId"] for job in JOBS if predicate(job)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ["census_20261122_083000", "rnn_big", "rnn_small"]),
        # The examples from the ml v1 discovery document and our notes.
        ("jobId:census*", ["census_20261122_083000"]),
        ("jobId:rnn* AND state:FAILED", ["rnn_big"]),
        ("state:FAILED", ["rnn_big"]),
        ("labels.owner=ann", ["census_20261122_083000"]),
        ("labels.owner:ann", ["census_20261122_083000"]),
        ("trainingInput.scaleTier=BASIC", ["census_20261122_083000"]),
        ('createTime>"2024-01-01T00:00:00Z"', ["census_20261122_083000", "rnn_big"]),
        ("createTime>2024-01-01", ["census_20261122_083000", "rnn_big"]),
    ],
)
def test_documented_examples(text: str, expected: list[str]) -> None:
    assert matching(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Globs: '*' anywhere, whole value, case-sensitive.
        ("jobId:*big", ["rnn_big"]),
        ("jobId:r*_*l", ["rnn_small"]),
        ("jobId:*", ["census_20261122_083000", "rnn_big", "rnn_small"]),
        ("jobId:RNN*", []),
        ("jobId:rnn", []),  # no '*': equality, not prefix
        ("errorMessage:*non-zero*", ["rnn_big"]),
        # ':' on a map tests its keys.
        ("labels:owner", ["census_20261122_083000", "rnn_big"]),
        ("labels:team", ["census_20261122_083000"]),
        ("labels:te*", ["census_20261122_083000"]),
        ("trainingInput:workerCount", ["rnn_big", "rnn_small"]),
        # Numbers compare numerically when both sides are numbers.
        ("trainingInput.workerCount=2.0", ["rnn_big"]),
        ("trainingInput.workerCount>3", ["rnn_small"]),
        ("trainingInput.workerCount>=2", ["rnn_big", "rnn_small"]),
        ("jobPosition<1", ["census_20261122_083000"]),
        ("trainingOutput.consumedMLUnits>0.25", ["census_20261122_083000"]),
        # Timestamps compare as instants whatever their spelling.
        ("createTime=2026-11-21T10:00:00Z", ["rnn_big"]),
        ("createTime<=2026-11-21T11:00:00+01:00", ["rnn_big", "rnn_small"]),
        ("startTime>2026-11-22T08:31:00.4Z", ["census_20261122_083000"]),
        ("startTime>2026-11-22T08:31:00.6Z", []),
        # Otherwise strings.
        ("state>RUNNING", ["census_20261122_083000"]),
        ("trainingInput.masterType=n1-standard-8", ["rnn_big"]),
        # Booleans read as true/false; lists fan out.
        ("trainingOutput.isHyperparameterTuningJob=true", ["rnn_big"]),
        ("trainingOutput.trials.trialId=2", ["rnn_big"]),
        ("trainingInput.packageUris:*census*", ["census_20261122_083000"]),
        # Missing fields: comparisons false, '!=' true.
        ("labels.owner!=ann", ["rnn_big", "rnn_small"]),
        ("labels.owner=bob OR NOT labels:owner", ["rnn_big", "rnn_small"]),
        ("endTime<2030-01-01", ["census_20261122_083000"]),
        ("endTime!=x", ["census_20261122_083000", "rnn_big", "rnn_small"]),
        ("trainingInput.masterType.deeper=x", []),
        # Comparing a whole map with '=' is false.
        ("labels=ann", []),
        # Boolean structure and precedence (OR binds tighter than AND).
        ("-state:FAILED", ["census_20261122_083000", "rnn_small"]),
        ("state:RUNNING OR state:FAILED jobId:*big", ["rnn_big"]),
        ("(state:RUNNING OR state:FAILED) AND jobId:*small", ["rnn_small"]),
        ("state:SUCCEEDED AND labels.owner=ann OR labels.owner=bob", ["census_20261122_083000"]),
        # A bare term searches jobId.
        ("rnn", ["rnn_big", "rnn_small"]),
        ('"_2026"', ["census_20261122_083000"]),
        ("small", ["rnn_small"]),
        ("SMALL", []),
    ],
)
def test_semantics(text: str, expected: list[str]) -> None:
    assert matching(text) == expected


def test_unknown_top_level_field_is_a_value_error_naming_it() -> None:
    with pytest.raises(ValueError, match="'scaleTier'") as info:
        compile_job_filter("state:FAILED AND scaleTier=BASIC")
    assert not isinstance(info.value, FilterSyntaxError)
    assert "trainingInput" in str(info.value)


def test_every_job_resource_field_is_allowed() -> None:
    for field in JOB_FIELDS:
        compile_job_filter(f"{field}:x")


def test_syntax_errors_propagate() -> None:
    with pytest.raises(FilterSyntaxError, match="position"):
        compile_job_filter("jobId:census* AND")


def test_hostile_glob_is_fast() -> None:
    predicate = compile_job_filter("jobId:" + "*a" * 200 + "*b")
    assert not predicate({"jobId": "a" * 128})
    assert predicate({"jobId": "a" * 200 + "b"})


def test_null_and_odd_values_are_missing() -> None:
    predicate = compile_job_filter("labels.owner!=ann")
    assert predicate({"jobId": "j", "labels": None})
    assert compile_job_filter("labels.owner:*")({"labels": {"owner": ""}})
    assert not compile_job_filter("labels.owner:*")({"labels": {"owner": None}})
    assert not compile_job_filter("trainingInput=x")({"trainingInput": [[1]]})
