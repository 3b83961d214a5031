"""The job summary (like `gcloud ai-platform jobs describe --summarize`) and the raw YAML view."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from tui_app.model.views.describe import (
    Section,
    format_duration,
    format_time,
    job_yaml,
    render_text,
    summarize,
)

NOW = datetime(2026, 11, 22, 10, 0, 0, tzinfo=UTC)
PKG = "gs://my-bucket/trainer-0.1.0.tar.gz"

TRACEBACK = (
    "The replica master 0 exited with a non-zero status of 1.\n"
    "Traceback (most recent call last):\n"
    '  File "/root/trainer/task.py", line 42, in <module>\n'
    "    main()\n"
    '  File "/root/trainer/task.py", line 37, in main\n'
    "    raise ValueError('learning rate must be positive')\n"
    "ValueError: learning rate must be positive"
)


def basic_job(**extra: Any) -> dict[str, Any]:
    job: dict[str, Any] = {
        "jobId": "mnist_20261122_083000",
        "state": "SUCCEEDED",
        "createTime": "2026-11-22T08:30:00Z",
        "startTime": "2026-11-22T08:31:00.123456789Z",
        "endTime": "2026-11-22T09:01:30Z",
        "etag": "5ohFnmWpXAo=",
        "trainingInput": {
            "scaleTier": "BASIC",
            "region": "us-central1",
            "pythonModule": "trainer.task",
            "packageUris": [PKG],
            "args": ["--epochs", "3", "--name", "my run"],
            "jobDir": "gs://my-bucket/out",
            "runtimeVersion": "2.11",
            "pythonVersion": "3.7",
        },
        "trainingOutput": {"consumedMLUnits": 0.28},
    }
    job.update(extra)
    return job


def custom_job() -> dict[str, Any]:
    return basic_job(
        trainingInput={
            "scaleTier": "CUSTOM",
            "region": "europe-west4",
            "masterType": "n1-standard-8",
            "masterConfig": {"acceleratorConfig": {"count": "1", "type": "NVIDIA_TESLA_T4"}},
            "workerType": "n1-standard-8",
            "workerCount": "2",
            "workerConfig": {"acceleratorConfig": {"count": "2", "type": "NVIDIA_TESLA_T4"}},
            "parameterServerType": "n1-highmem-8",
            "parameterServerCount": "3",
            "evaluatorType": "n1-standard-4",
            "evaluatorCount": "1",
            "pythonModule": "trainer.task",
            "packageUris": [PKG, "gs://my-bucket/extra-1.0.tar.gz"],
            "scheduling": {"maxRunningTime": "7200s", "maxWaitTime": "3600s", "priority": 500},
            "serviceAccount": "trainer@my-project.iam.gserviceaccount.com",
        }
    )


def hp_job() -> dict[str, Any]:
    job = basic_job()
    job["trainingInput"]["hyperparameters"] = {
        "goal": "MINIMIZE",
        "hyperparameterMetricTag": "val_loss",
        "maxTrials": 12,
        "maxParallelTrials": 3,
        "algorithm": "GRID_SEARCH",
        "params": [
            {"parameterName": "layers", "type": "INTEGER", "minValue": 1, "maxValue": 5},
            {
                "parameterName": "optimizer",
                "type": "CATEGORICAL",
                "categoricalValues": ["adam", "sgd"],
            },
            {"parameterName": "batch", "type": "DISCRETE", "discreteValues": [16, 32, 64]},
            {
                "parameterName": "lr",
                "type": "DOUBLE",
                "minValue": 0.0001,
                "maxValue": 0.1,
                "scaleType": "UNIT_LOG_SCALE",
            },
        ],
    }
    job["trainingOutput"] = {
        "consumedMLUnits": 3.5,
        "completedTrialCount": "3",
        "isHyperparameterTuningJob": True,
        "hyperparameterMetricTag": "val_loss",
        "trials": [
            {
                "trialId": "10",
                "hyperparameters": {"layers": "2"},
                "finalMetric": {"trainingStep": "500", "objectiveValue": 0.25},
            },
            {
                "trialId": "2",
                "hyperparameters": {"layers": "4"},
                "finalMetric": {"trainingStep": "500", "objectiveValue": 0.5},
                "state": "FAILED",
            },
        ],
    }
    return job


def section(sections: list[Section], title: str) -> dict[str, str]:
    """One section's rows as a dict; continuation rows are joined to their key with newlines."""
    (found,) = [s for s in sections if s.title == title]
    rows: dict[str, str] = {}
    last = ""
    for key, value in found.rows:
        if key:
            rows[key] = value
            last = key
        else:
            rows[last] += "\n" + value
    return rows


def titles(sections: list[Section]) -> list[str]:
    return [s.title for s in sections]


def test_basic_job() -> None:
    sections = summarize(basic_job(labels={"team": "vision", "owner": "ann"}), NOW)
    assert titles(sections) == ["Job Overview", "Training Input", "Training Output"]
    overview = section(sections, "Job Overview")
    assert overview["Job ID"] == "mnist_20261122_083000"
    assert overview["State"].endswith("SUCCEEDED")
    assert overview["Created"] == "2026-11-22 08:30:00 UTC"
    assert overview["Started"] == "2026-11-22 08:31:00 UTC"  # nanoseconds parsed, shown to the s
    assert overview["Ended"] == "2026-11-22 09:01:30 UTC"
    # The wait and the run apart (issue 29), in the one duration format of every view.
    assert overview["Queued"] == "1m00s"
    assert overview["Run time"] == "30m29s"
    assert "Elapsed" not in overview
    assert overview["Labels"] == "owner=ann, team=vision"
    assert "Queue position" not in overview

    ti = section(sections, "Training Input")
    assert ti["Region"] == "us-central1"
    assert ti["Scale tier"].startswith("BASIC") and "single worker" in ti["Scale tier"]
    assert ti["Cluster"] == "master: 1 \u00d7 standard (4 vCPU, 15 GB)"
    assert ti["Python module"] == "trainer.task"
    assert ti["Packages"] == PKG
    assert ti["Args"] == "--epochs 3 --name 'my run'"  # shell-quoted, pastes back into a shell
    assert ti["Job dir"] == "gs://my-bucket/out"
    assert ti["Runtime version"] == "2.11" and ti["Python version"] == "3.7"

    out = section(sections, "Training Output")
    assert out["Consumed ML units"] == "0.28"
    assert out["ML units per hour"] == "0.5661"


def test_custom_cluster_with_accelerators_and_evaluators() -> None:
    sections = summarize(custom_job(), NOW)
    ti = section(sections, "Training Input")
    assert ti["Scale tier"].startswith("CUSTOM")
    assert ti["Cluster"].split("\n") == [
        "master: 1 \u00d7 n1-standard-8 (8 vCPU, 30 GB) + 1\u00d7 NVIDIA Tesla T4",
        "workers: 2 \u00d7 n1-standard-8 (8 vCPU, 30 GB) + 2\u00d7 NVIDIA Tesla T4 each",
        "parameter servers: 3 \u00d7 n1-highmem-8 (8 vCPU, 52 GB)",
        "evaluator: 1 \u00d7 n1-standard-4 (4 vCPU, 15 GB)",
    ]
    assert ti["Packages"].split("\n") == [PKG, "gs://my-bucket/extra-1.0.tar.gz"]
    assert ti["Scheduling"] == "max running time 2h00m, max wait time 1h00m, priority 500"
    assert ti["Service account"] == "trainer@my-project.iam.gserviceaccount.com"
    # The cluster's price is the sum of its groups, accelerators included.
    n1_standard_8, t4 = 1.1322, 2.8308
    expected = (n1_standard_8 + t4) + 2 * (n1_standard_8 + 2 * t4) + 3 * 1.4111 + 0.5661
    units = float(section(sections, "Training Output")["ML units per hour"])
    assert units == pytest.approx(expected, abs=1e-3)


def test_hyperparameter_job() -> None:
    sections = summarize(hp_job(), NOW)
    ti = section(sections, "Training Input")
    assert ti["HP goal"] == "MINIMIZE"
    assert ti["HP metric tag"] == "val_loss"
    assert ti["HP trials"] == "at most 12, 3 in parallel"
    assert ti["HP algorithm"] == "Grid search"
    assert ti["HP parameters"].split("\n") == [
        "layers: INTEGER 1 to 5",
        "optimizer: CATEGORICAL adam, sgd",
        "batch: DISCRETE 16, 32, 64",
        "lr: DOUBLE 0.0001 to 0.1 (UNIT_LOG_SCALE)",
    ]
    out = section(sections, "Training Output")
    assert out["Hyperparameter tuning"] == "yes"
    assert out["Completed trials"] == "3"
    # Trials in numeric order (gcloud sorts "10" before "2"; people don't).
    assert out["Trials"].split("\n") == [
        "#2 objective 0.5 at step 500 [FAILED] (layers=4)",
        "#10 objective 0.25 at step 500 (layers=2)",
    ]


def test_hyperparameter_defaults() -> None:
    job = basic_job()
    job["trainingInput"]["hyperparameters"] = {
        "params": [{"parameterName": "lr", "type": "DOUBLE", "minValue": 0.01, "maxValue": 1}]
    }
    ti = section(summarize(job, NOW), "Training Input")
    assert ti["HP goal"] == "MAXIMIZE"
    assert ti["HP metric tag"] == "training/hptuning/metric"
    assert ti["HP trials"] == "at most 1, 1 in parallel"
    assert ti["HP algorithm"] == "Bayesian optimization"


def test_failed_job_shows_the_whole_error() -> None:
    job = basic_job(state="FAILED", errorMessage=TRACEBACK + "\n")
    sections = summarize(job, NOW)
    # Right under the overview, cause first, then the exit line, then the traceback.
    assert titles(sections)[:2] == ["Job Overview", "Error"]
    error = section(sections, "Error")
    assert list(error) == ["Cause", "Exit", "Traceback"]
    assert error["Cause"] == "ValueError: learning rate must be positive"
    assert error["Exit"] == TRACEBACK.split("\n", 1)[0]
    assert error["Traceback"] == TRACEBACK.split("\n", 1)[1]
    text = render_text(sections)
    for line in TRACEBACK.split("\n"):
        assert line in text  # every line, indentation kept
    assert text.index("ValueError: learning") < text.index("Traceback (most recent")


def test_a_one_line_error_is_shown_once() -> None:
    job = basic_job(state="FAILED", errorMessage="The job has no master replica.")
    error = section(summarize(job, NOW), "Error")
    assert error == {"Cause": "The job has no master replica."}


def test_queued_job_shows_its_position_and_its_wait_so_far() -> None:
    job = {
        "jobId": "mnist_20261122_095900",
        "state": "QUEUED",
        "createTime": "2026-11-22T09:59:00Z",
        "jobPosition": "3",
    }
    overview = section(summarize(job, NOW), "Job Overview")
    assert overview["Queue position"] == "3"
    assert overview["State"].endswith("QUEUED")
    assert overview["Queued"] == "1m00s"  # so far: NOW is 10:00
    assert "Run time" not in overview and "Started" not in overview
    # Once scheduled, the position is 0 and means nothing to show.
    scheduled = section(
        summarize({**job, "state": "RUNNING", "jobPosition": "0"}, NOW), "Job Overview"
    )
    assert "Queue position" not in scheduled


def test_running_job_counts_elapsed_time_to_now() -> None:
    job = basic_job(state="RUNNING", startTime="2026-11-22T07:59:58Z")
    del job["endTime"]
    overview = section(summarize(job, NOW), "Job Overview")
    assert overview["Run time"] == "2h00m"
    assert "Ended" not in overview


def test_times_in_another_zone() -> None:
    cet = timezone(timedelta(hours=1), "CET")
    overview = section(summarize(basic_job(), NOW, tz=cet), "Job Overview")
    assert overview["Created"] == "2026-11-22 09:30:00 CET"


@pytest.mark.parametrize(
    "job",
    [
        {"jobId": "only_an_id", "state": "RUNNING"},
        {"jobId": "x"},
        {},
        {"jobId": "x", "state": "NEW_STATE", "trainingInput": {}, "trainingOutput": {}},
        {
            "jobId": "garbled",
            "state": "FAILED",
            "createTime": "yesterday",
            "labels": ["not", "a", "map"],
            "jobPosition": "many",
            "errorMessage": "",
            "trainingInput": {
                "scaleTier": "GIGANTIC",
                "workerCount": "lots",
                "args": "--not-a-list",
                "hyperparameters": {"params": [{"type": "DOUBLE"}], "maxTrials": "x"},
                "scheduling": {"maxRunningTime": "soon"},
            },
            "trainingOutput": {"consumedMLUnits": "NaN", "trials": [None, {"trialId": 1}]},
        },
    ],
)
def test_missing_or_odd_fields_never_raise(job: dict[str, Any]) -> None:
    sections = summarize(job, NOW)
    render_text(sections)
    job_yaml(job)


def test_only_id_and_state() -> None:
    sections = summarize({"jobId": "only_an_id", "state": "RUNNING"}, NOW)
    assert titles(sections) == ["Job Overview"]
    assert section(sections, "Job Overview")["Job ID"] == "only_an_id"


@given(
    st.dictionaries(
        st.sampled_from(
            [
                "jobId",
                "state",
                "createTime",
                "startTime",
                "endTime",
                "jobPosition",
                "labels",
                "errorMessage",
                "trainingInput",
                "trainingOutput",
            ]
        ),
        st.none()
        | st.booleans()
        | st.integers()
        | st.text(max_size=20)
        | st.lists(st.text(max_size=5), max_size=3)
        | st.dictionaries(st.text(max_size=10), st.text(max_size=5) | st.integers(), max_size=3),
    )
)
def test_any_shape_of_job_is_summarised(job: dict[str, Any]) -> None:
    render_text(summarize(job, NOW))


def test_render_text_aligns_values() -> None:
    text = render_text(
        [
            Section("Job Overview", [("Job ID", "j1"), ("State", "RUNNING")]),
            Section("Training Input", [("Cluster", "master: 1"), ("", "workers: 2")]),
            Section("Error", [("Message", "first line\n  indented")]),
        ]
    )
    assert text == (
        "Job Overview\n"
        "  Job ID: j1\n"
        "  State:  RUNNING\n"
        "\n"
        "Training Input\n"
        "  Cluster: master: 1\n"
        "           workers: 2\n"
        "\n"
        "Error\n"
        "  Message: first line\n"
        "             indented\n"
    )
    assert render_text([]) == ""


def test_job_yaml_is_the_raw_resource_sorted() -> None:
    job = hp_job()
    text = job_yaml(job)
    assert yaml.safe_load(text) == job
    keys = [line.split(":")[0] for line in text.splitlines() if line and not line[0].isspace()]
    assert keys == sorted(keys)
    assert "workerCount" not in text and "completedTrialCount: '3'" in text  # strings stay strings


def test_job_yaml_keeps_unicode_and_multiline_text() -> None:
    job = basic_job(state="FAILED", errorMessage=TRACEBACK, labels={"owner": "zoë"})
    text = job_yaml(job)
    assert "zoë" in text
    assert yaml.safe_load(text)["errorMessage"] == TRACEBACK
    # Issue 29: the traceback as it was written, a block scalar, not a quoted escaped string.
    first, *rest = TRACEBACK.splitlines()
    assert f"errorMessage: |-\n  {first}\n" in text
    assert all(f"\n  {line}\n" in text + "\n" for line in rest)
    assert "\\n" not in text


def test_job_yaml_falls_back_to_quotes_only_where_a_block_cannot_hold_the_text() -> None:
    job = basic_job(errorMessage="trailing space \nthen\x07bell", labels={"note": "a\nb"})
    text = job_yaml(job)
    assert yaml.safe_load(text) == job
    assert "note: |-\n    a\n    b\n" in text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (45, "45s"),
        (185, "3m05s"),
        (3723, "1h02m"),
        (183900, "2d03h"),
        (-5, "0s"),
    ],
)
def test_format_duration(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


def test_format_time() -> None:
    assert format_time("2026-11-22T08:30:00Z") == "2026-11-22 08:30:00 UTC"
    assert format_time("2026-11-22T08:30:00.5+01:00") == "2026-11-22 07:30:00 UTC"
    assert format_time("not a time") is None
    assert format_time(None) is None


def test_trial_outputs_and_missing_metrics() -> None:
    job = hp_job()
    job["trainingOutput"]["trials"] = [
        {
            "trialId": "1",
            "state": "SUCCEEDED",
            "finalMetric": {"trainingStep": "200", "objectiveValue": 0.87},
            "output": {"directory": "gs://b/job/1/", "objects": 5, "metricFrom": "events"},
        },
        {
            "trialId": "2",
            "state": "SUCCEEDED",
            "output": {"directory": "gs://b/job/", "sharedWith": ["3", "4"]},
        },
    ]
    out = section(summarize(job, NOW), "Training Output")
    assert out["Trials"].split("\n") == [
        "#1 objective 0.87 at step 200 (from summary events), wrote to gs://b/job/1/",
        "#2 no metric reported, wrote to gs://b/job/ ⚠ shared with trials 3, 4",
    ]
