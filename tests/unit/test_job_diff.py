"""The diff model: comparison documents, rows, the unified diff and the partner rule (issue 27)."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import yaml

from tui_app.model.job_diff import (
    UNKNOWN,
    DiffRow,
    JobFacts,
    comparison_document,
    diff_json,
    diff_partner,
    diff_sections,
    document_yaml,
    trial_document,
    unified_diff,
)

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
SHA_A = "a" * 64
SHA_B = "b" * 64
URI = "gs://bucket/packages/trainer-0.1.tar.gz"


def _job(job_id: str = "mnist_20260301_100000", **training: Any) -> dict[str, Any]:
    ti: dict[str, Any] = {
        "scaleTier": "CUSTOM",
        "masterType": "n1-standard-4",
        "workerType": "n1-standard-4",
        "workerCount": "2",
        "runtimeVersion": "2.11",
        "pythonVersion": "3.7",
        "pythonModule": "trainer.task",
        "packageUris": [URI],
        "args": ["--steps", "100", "--lr", "0.1", "--batch-size", "32"],
        "jobDir": "gs://bucket/out",
        "region": "us-central1",
    }
    ti.update(training)
    return {
        "jobId": job_id,
        "createTime": "2026-03-01T10:00:00Z",
        "startTime": "2026-03-01T10:00:05Z",
        "endTime": "2026-03-01T10:03:10Z",
        "state": "SUCCEEDED",
        "trainingInput": ti,
        "trainingOutput": {"consumedMLUnits": 0.25},
        "labels": {"owner": "ana"},
        "etag": "x",
    }


def _env(sha: str = SHA_A) -> dict[str, Any]:
    return {
        "runtimeVersion": "2.11",
        "pythonVersion": "3.7",
        "interpreter": "/usr/bin/python3.7",
        "variant": "cpu",
        "exact": True,
        "packages": {"tensorflow": "2.11.0", "numpy": "1.21.6"},
        "trainerPackages": [
            {"uri": URI, "name": "trainer-0.1.tar.gz", "sha256": sha, "sizeBytes": "1234"}
        ],
    }


def _doc(job: dict[str, Any], env: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    return comparison_document(JobFacts(job, "p", env if env is not None else _env(), **kw), NOW)


def _changed(left: dict[str, Any], right: dict[str, Any]) -> list[DiffRow]:
    return [row for section in diff_sections(left, right) for row in section.changed]


def _same_times(job: dict[str, Any], like: dict[str, Any]) -> dict[str, Any]:
    for key in ("createTime", "startTime", "endTime"):
        job[key] = like[key]
    return job


def test_document_sections_in_order_with_every_fact() -> None:
    doc = _doc(_job(), metrics={"loss": 0.5, "eval/accuracy": 0.9})
    assert list(doc) == [
        "job",
        "trainingInput",
        "labels",
        "packages",
        "environment",
        "outcome",
        "metrics",
    ]
    assert doc["job"] == {
        "jobId": "mnist_20260301_100000",
        "project": "p",
        "createTime": "2026-03-01 10:00:00 UTC",
        "startTime": "2026-03-01 10:00:05 UTC",
        "endTime": "2026-03-01 10:03:10 UTC",
    }
    assert doc["trainingInput"]["args"] == ["--steps", "100", "--lr", "0.1", "--batch-size", "32"]
    assert list(doc["trainingInput"])[:3] == ["scaleTier", "masterType", "workerType"]
    assert doc["labels"] == {"owner": "ana"}
    assert doc["packages"] == {"trainer-0.1.tar.gz": SHA_A}
    assert doc["environment"] == {
        "runtimeVersion": "2.11",
        "pythonVersion": "3.7",
        "variant": "cpu",
        "exact": True,
        "frameworks": {"numpy": "1.21.6", "tensorflow": "2.11.0"},
    }
    assert doc["outcome"] == {"state": "SUCCEEDED", "duration": "3m05s", "consumedMLUnits": 0.25}
    assert doc["metrics"] == {"eval/accuracy": 0.9, "loss": 0.5}
    # It is YAML-ready: it reads back as the same data.
    assert yaml.safe_load(document_yaml(doc)) == doc


def test_unknown_environment_and_package_hashes() -> None:
    doc = comparison_document(JobFacts(_job(), "p"), NOW)
    assert doc["packages"] == {"trainer-0.1.tar.gz": UNKNOWN}
    assert doc["environment"] == UNKNOWN
    assert "metrics" not in doc
    # Known against unknown is a difference, row by row: each known field against "unknown",
    # with no extra row for the word itself.
    rows = _changed(doc, _doc(_job()))
    paths = {r.path for r in rows}
    assert 'packages["trainer-0.1.tar.gz"]' in paths
    assert "environment" not in paths and "environment.runtimeVersion" in paths
    env_rows = [r for r in rows if r.path.startswith("environment.")]
    assert env_rows and all(r.left == UNKNOWN and r.right not in (None, UNKNOWN) for r in env_rows)


def test_one_changed_argument_is_one_changed_row() -> None:
    left = _doc(_job())
    right_job = _job(args=["--steps", "100", "--lr", "0.2", "--batch-size", "32"])
    right = _doc(right_job)
    rows = _changed(left, right)
    assert rows == [DiffRow("trainingInput.args[3]", "args[3]", "0.1", "0.2")]
    sections = {s.key: s for s in diff_sections(left, right)}
    assert sections["trainingInput"].title == "Training input"
    assert sections["trainingInput"].unchanged_count == len(sections["trainingInput"].rows) - 1
    assert sections["labels"].changed == ()
    text = unified_diff(left, right, "p/a", "p/b")
    changed = [
        line
        for line in text.splitlines()
        if line[:1] in "+-" and not line.startswith(("---", "+++"))
    ]
    assert changed == ["-  - '0.1'", "+  - '0.2'"]
    assert text.startswith("--- p/a\n+++ p/b\n")


def test_an_inserted_argument_is_one_row_not_a_cascade() -> None:
    left = _doc(_job())
    args = ["--steps", "100", "--verbose", "--lr", "0.1", "--batch-size", "32"]
    right = _doc(_job(args=args))
    rows = _changed(left, right)
    assert rows == [DiffRow("trainingInput.args[2]", "args[2]", None, "--verbose")]
    # The rows after it are the same arguments, named by their place in the newer job.
    arg_rows = [r for s in diff_sections(left, right) for r in s.rows if r.label.startswith("args")]
    assert [r.label for r in arg_rows] == [f"args[{i}]" for i in range(7)]
    assert arg_rows[3] == DiffRow("trainingInput.args[3]", "args[3]", "--lr", "--lr")
    diff_lines = unified_diff(left, right, "a", "b").splitlines()
    assert [x for x in diff_lines if x.startswith("+") and not x.startswith("+++")] == [
        "+  - --verbose"
    ]
    removed = _changed(right, left)
    assert removed == [DiffRow("trainingInput.args[2]", "args[2]", "--verbose", None)]


def test_same_uri_different_bytes_is_a_difference() -> None:
    job = _job()
    left, right = _doc(job), _doc(copy.deepcopy(job), _env(SHA_B))
    assert [(r.path, r.label, r.left, r.right) for r in _changed(left, right)] == [
        ('packages["trainer-0.1.tar.gz"]', "trainer-0.1.tar.gz", SHA_A, SHA_B)
    ]
    assert f"-  trainer-0.1.tar.gz: {SHA_A}" in unified_diff(left, right, "a", "b")


def test_identical_documents() -> None:
    doc = _doc(_job(), metrics={"loss": float("nan")})
    again = _doc(copy.deepcopy(_job()), metrics={"loss": float("nan")})
    assert unified_diff(doc, again, "a", "b") == ""
    assert _changed(doc, again) == []
    assert diff_json(doc, again, "p/a", "p/b") == {
        "left": "p/a",
        "right": "p/b",
        "equal": True,
        "differences": [],
    }


def test_ids_times_and_outcome_differ_for_a_resubmitted_failure() -> None:
    failed = _job()
    failed["state"] = "FAILED"
    failed["errorMessage"] = (
        "The replica master 0 exited with a non-zero status of 1.\n"
        "Traceback (most recent call last):\n"
        '  File "task.py", line 3, in <module>\n'
        "ValueError: learning rate too high"
    )
    again = _same_times(_job("mnist_20260301_110000"), failed)
    again["endTime"] = "2026-03-01T10:05:05Z"
    left, right = _doc(failed), _doc(again)
    assert left["outcome"]["cause"] == "ValueError: learning rate too high"
    found = diff_json(left, right, "p/mnist_20260301_100000", "p/mnist_20260301_110000")
    assert not found["equal"]
    assert [d["path"] for d in found["differences"]] == [
        "job.jobId",
        "job.endTime",
        "outcome.state",
        "outcome.duration",
        "outcome.cause",
        "outcome.errorMessage",
    ]
    assert found["differences"][-1]["right"] is None
    # The traceback is a block in the YAML: its lines show as lines of the unified diff.
    text = unified_diff(left, right, "a", "b")
    assert "-    ValueError: learning rate too high\n" in text


def test_values_with_newlines_and_odd_characters() -> None:
    odd = "line one\nline two \x1b[31mred\x1b[0m \u202e end\r"
    left = _doc(_job(), metrics=None)
    job = _job()
    job["labels"] = {"owner": "ana", "note": "tab\there"}
    job["trainingInput"]["args"] = ["--title", odd, *job["trainingInput"]["args"][0:]]
    right = _doc(job)
    rows = _changed(left, right)
    assert DiffRow("trainingInput.args[1]", "args[1]", None, odd) in rows
    assert DiffRow("labels.note", "note", None, "tab\there") in rows
    text = unified_diff(left, right, "a", "b")
    # YAML escapes what a terminal would act on: the text holds no raw ESC or CR.
    assert "\x1b" not in text and "\r" not in text
    # It is still the data: the right document's YAML reads back with the same value.
    assert yaml.safe_load(document_yaml(right))["trainingInput"]["args"][1] == odd
    # A value with a newline is one row, not one per line.
    assert sum(1 for r in rows if r.right == odd) == 1


def test_a_key_that_is_not_a_plain_name_is_quoted_in_the_path() -> None:
    left = {"packages": {"a.b c": "1"}}
    right = {"packages": {"a.b c": "2"}}
    assert _changed(left, right) == [DiffRow('packages["a.b c"]', "a.b c", "1", "2")]


def test_nested_fields_and_hyperparameters_by_name() -> None:
    hp: dict[str, Any] = {
        "goal": "MINIMIZE",
        "maxTrials": 4,
        "params": [
            {"parameterName": "lr", "type": "DOUBLE", "minValue": 0.001, "maxValue": 0.1},
            {"parameterName": "opt", "type": "CATEGORICAL", "categoricalValues": ["sgd", "adam"]},
        ],
    }
    accel = {"acceleratorConfig": {"count": "1", "type": "NVIDIA_TESLA_T4"}}
    left = _doc(_job(hyperparameters=hp, masterConfig=accel))
    hp2 = copy.deepcopy(hp)
    hp2["params"].insert(
        0, {"parameterName": "batch", "type": "DISCRETE", "discreteValues": [16, 32]}
    )
    hp2["params"][2]["categoricalValues"] = ["sgd", "rmsprop", "adam"]
    accel2 = {"acceleratorConfig": {"count": "2", "type": "NVIDIA_TESLA_T4"}}
    right = _doc(_job(hyperparameters=hp2, masterConfig=accel2))
    paths = [(r.path, r.left, r.right) for r in _changed(left, right)]
    assert paths == [
        ("trainingInput.masterConfig.acceleratorConfig.count", "1", "2"),
        # An inserted categorical value is one row; the parameter added is its own rows.
        ("trainingInput.hyperparameters.params.opt.categoricalValues[1]", None, "rmsprop"),
        ("trainingInput.hyperparameters.params.batch.discreteValues[0]", None, "16"),
        ("trainingInput.hyperparameters.params.batch.discreteValues[1]", None, "32"),
        ("trainingInput.hyperparameters.params.batch.type", None, "DISCRETE"),
    ]


def test_a_job_dir_named_after_its_job_is_no_difference() -> None:
    left = _doc(_job("m_20260301_100000", jobDir="gs://b/runs/m_20260301_100000"))
    right = _doc(_job("m_20260301_110000", jobDir="gs://b/runs/m_20260301_110000/"))
    assert left["trainingInput"]["jobDir"] == "gs://b/runs/<jobId>"
    assert [r.path for r in _changed(left, right)] == ["job.jobId"]
    elsewhere = _doc(_job("m_20260301_110000", jobDir="gs://b/runs/m_20260301_100000"))
    assert [r.path for r in _changed(left, elsewhere)] == ["job.jobId", "trainingInput.jobDir"]


def test_an_unset_tier_is_basic() -> None:
    plain = _job()
    del plain["trainingInput"]["scaleTier"]
    said = _job(scaleTier="BASIC")
    assert _changed(_doc(plain), _doc(said)) == []


def test_tuning_job_outcome_names_the_best_trial() -> None:
    job = _job(hyperparameters={"goal": "MINIMIZE", "hyperparameterMetricTag": "mse"})
    job["trainingOutput"] = {
        "isHyperparameterTuningJob": True,
        "completedTrialCount": "3",
        "trials": [
            {"trialId": "1", "state": "SUCCEEDED", "finalMetric": {"objectiveValue": 0.5}},
            {"trialId": "2", "state": "SUCCEEDED", "finalMetric": {"objectiveValue": 0.25}},
            {"trialId": "3", "state": "FAILED", "finalMetric": {"objectiveValue": float("nan")}},
        ],
    }
    outcome = _doc(job)["outcome"]
    assert outcome["bestTrial"] == "2" and outcome["bestObjective"] == 0.25
    assert outcome["completedTrials"] == 3


def _tuning_job() -> dict[str, Any]:
    job = _job(hyperparameters={"goal": "MAXIMIZE", "hyperparameterMetricTag": "acc"})
    job["trainingOutput"] = {
        "isHyperparameterTuningJob": True,
        "trials": [
            {
                "trialId": "1",
                "state": "SUCCEEDED",
                "hyperparameters": {"lr": "0.1", "layers": "2"},
                "startTime": "2026-03-01T10:00:05Z",
                "endTime": "2026-03-01T10:01:05Z",
                "finalMetric": {"objectiveValue": 0.8, "trainingStep": "100"},
                "allMetrics": [
                    {"trainingStep": "50", "objectiveValue": 0.85},
                    {"trainingStep": "100", "objectiveValue": 0.8},
                ],
            },
            {
                "trialId": "2",
                "state": "SUCCEEDED",
                "hyperparameters": {"lr": "0.01", "layers": "2"},
                "startTime": "2026-03-01T10:00:05Z",
                "endTime": "2026-03-01T10:02:05Z",
                "finalMetric": {"objectiveValue": 0.9, "trainingStep": "100"},
                "allMetrics": [{"trainingStep": "100", "objectiveValue": 0.9}],
                "isTrialStoppedEarly": True,
            },
        ],
    }
    return job


def test_trial_documents() -> None:
    job = _tuning_job()
    one, two = trial_document(job, "1", "p"), trial_document(job, "2", "p")
    assert list(one) == ["trial", "hyperparameters", "metrics"]
    assert one["trial"]["duration"] == "1m00s"
    assert one["metrics"] == {
        "metricTag": "acc",
        "finalMetric": 0.8,
        "finalStep": 100,
        "lastReported": 0.8,
        "bestReported": 0.85,
        "stoppedEarly": False,
    }
    found = diff_json(one, two, "p/j/1", "p/j/2")
    assert [d["path"] for d in found["differences"]] == [
        "trial.trialId",
        "trial.endTime",
        "trial.duration",
        "hyperparameters.lr",
        "metrics.finalMetric",
        "metrics.lastReported",
        "metrics.bestReported",
        "metrics.stoppedEarly",
    ]
    sections = diff_sections(one, two)
    assert [s.title for s in sections] == ["Trial", "Hyperparameters", "Metrics"]
    assert unified_diff(one, trial_document(job, "1", "p"), "a", "b") == ""
    missing = trial_document(job, "9", "p")
    assert missing["trial"] == {"jobId": job["jobId"], "project": "p", "trialId": "9"}


def test_notes_section_when_something_could_not_be_read() -> None:
    doc = _doc(_job(), notes=("metrics: not read (the service does not answer)",))
    assert list(doc)[-1] == "notes"
    assert diff_sections(doc, _doc(_job()))[-1].title == "Notes"


IDS = [
    "mnist_20260301_090000",
    "mnist_20260301_100000",
    "mnist_20260301_110000",
    "mnist_big_20260301_095000",
    "other_20260301_105000",
    "plain",
]


def test_partner_resubmitted_from_wins_when_listed() -> None:
    got = diff_partner(
        "mnist_20260301_110000", IDS, {"mnist_20260301_110000": "other_20260301_105000"}
    )
    assert got is not None
    assert (got.job_id, got.reason) == ("other_20260301_105000", "resubmitted from it")


def test_partner_else_the_newest_earlier_job_of_the_base_name() -> None:
    # The recorded source is gone from the list: the naming rule decides.
    gone = {"mnist_20260301_110000": "mnist_20250101_000000"}
    got = diff_partner("mnist_20260301_110000", IDS, gone)
    assert got is not None
    assert got.job_id == "mnist_20260301_100000"
    assert got.reason == "the newest earlier job named mnist"
    # Never a later job, nor one of another base that merely starts the same.
    first = diff_partner("mnist_20260301_090000", IDS, {})
    assert first is None
    assert diff_partner("mnist_big_20260301_095000", IDS, {}) is None


def test_partner_none() -> None:
    assert diff_partner("plain", IDS, {}) is None
    assert diff_partner("other_20260301_105000", IDS, {}) is None
    assert diff_partner("x_20260301_105000", [], {"x_20260301_105000": "x_20260301_105000"}) is None
