"""tui_app.model.views.trials: a tuning job's trials as rows, best first, and the plot's points."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from tui_app.model.views.trials import (
    completed_trials,
    format_objective,
    goal_of,
    is_tuning_job,
    metric_tag,
    objective_series,
    scatter_positions,
    trial_rows,
)

NOW = datetime(2026, 11, 22, 9, 30, 0, tzinfo=UTC)


def job(*trials: dict[str, Any], goal: str | None = None, **output: Any) -> dict[str, Any]:
    hp: dict[str, Any] = {"params": [{"parameterName": "lr", "type": "DOUBLE"}]}
    if goal:
        hp["goal"] = goal
    return {
        "jobId": "hp",
        "trainingInput": {"hyperparameters": hp},
        "trainingOutput": {"isHyperparameterTuningJob": True, "trials": list(trials), **output},
    }


def trial(trial_id: str, objective: float | None = None, **extra: Any) -> dict[str, Any]:
    t: dict[str, Any] = {"trialId": trial_id, "state": "SUCCEEDED", **extra}
    if objective is not None:
        t["finalMetric"] = {"trainingStep": "100", "objectiveValue": objective}
    return t


def ids(rows: Any) -> list[str]:
    return [r.trial_id for r in rows]


def test_maximize_is_the_default_goal_and_puts_the_highest_first() -> None:
    rows = trial_rows(job(trial("1", 0.5), trial("2", 0.9), trial("3", 0.7)), NOW)
    assert ids(rows) == ["2", "3", "1"]
    assert [r.best for r in rows] == [True, False, False]
    assert goal_of(job()) == "MAXIMIZE"
    assert goal_of(job(goal="GOAL_TYPE_UNSPECIFIED")) == "MAXIMIZE"


def test_minimize_puts_the_lowest_first() -> None:
    rows = trial_rows(job(trial("1", 0.5), trial("2", 0.9), trial("3", -0.7), goal="MINIMIZE"), NOW)
    assert ids(rows) == ["3", "1", "2"]
    assert rows[0].best


def test_trials_without_an_objective_come_last_by_numeric_id() -> None:
    rows = trial_rows(
        job(
            trial("10", state="FAILED"),
            trial("2", state="QUEUED"),
            trial("3", 0.1),
            trial("1", state="RUNNING"),
        ),
        NOW,
    )
    assert ids(rows) == ["3", "1", "2", "10"]


def test_ties_go_by_trial_id() -> None:
    rows = trial_rows(job(trial("11", 0.5), trial("2", 0.5), trial("3", 0.5)), NOW)
    assert ids(rows) == ["2", "3", "11"]
    assert [r.best for r in rows] == [True, False, False]


def test_a_running_trial_shows_its_latest_metric_but_is_never_best() -> None:
    running = trial(
        "2",
        state="RUNNING",
        allMetrics=[
            {"trainingStep": "300", "objectiveValue": 0.99},
            {"trainingStep": "100", "objectiveValue": 0.10},
        ],
    )
    rows = trial_rows(job(trial("1", 0.5), running), NOW)
    assert ids(rows) == ["2", "1"]  # sorted by what it shows
    assert (rows[0].objective, rows[0].step, rows[0].final, rows[0].best) == (
        0.99,
        300,
        False,
        False,
    )
    assert rows[1].best


def test_no_final_objective_means_no_best() -> None:
    rows = trial_rows(job(trial("1", state="RUNNING"), trial("2", state="FAILED")), NOW)
    assert not any(r.best for r in rows)


def test_row_fields() -> None:
    t = trial(
        "4",
        0.01234567,
        hyperparameters={"lr": "0.01", "layers": "3"},
        startTime="2026-11-22T09:00:00Z",
        endTime="2026-11-22T09:04:05.123456789Z",
        isTrialStoppedEarly=True,
    )
    (row,) = trial_rows(job(t), NOW)
    assert row.hyperparameters == "lr=0.01, layers=3"
    assert row.objective_text == "0.0123457"
    assert row.step_text == "100"
    assert row.state_text == "✓ SUCCEEDED early"
    assert row.duration == "4m05s"


def test_a_running_trial_lasts_until_now() -> None:
    t = trial("1", state="RUNNING", startTime="2026-11-22T09:29:15Z")
    (row,) = trial_rows(job(t), NOW)
    assert row.duration == "45s"
    assert row.state_text == "▶ RUNNING"
    assert trial_rows(job(trial("2", state="QUEUED")), NOW)[0].duration == ""


@pytest.mark.parametrize(
    "bad",
    [
        {},
        {"trialId": None, "finalMetric": "x", "hyperparameters": [1], "state": "WEIRD"},
        {"finalMetric": {"objectiveValue": "NaN", "trainingStep": 3}},
        {"finalMetric": {"objectiveValue": True}},
        {"allMetrics": [None, {"objectiveValue": "bad"}], "startTime": "yesterday"},
    ],
)
def test_malformed_trials_never_raise(bad: dict[str, Any]) -> None:
    (row,) = trial_rows(job(bad), NOW)
    assert row.objective is None
    assert row.trial_id == "1"  # its place in the list stands in for a missing id
    assert row.state_text.startswith("?") or row.state_text.startswith("◷")


def test_a_job_without_output_has_no_trials() -> None:
    assert trial_rows({"jobId": "x"}, NOW) == []
    assert trial_rows({"trainingOutput": {"trials": "nope"}}, NOW) == []


def test_objective_as_special_string_values() -> None:
    (row,) = trial_rows(job({"finalMetric": {"objectiveValue": "Infinity"}}), NOW)
    assert row.objective == float("inf")


def test_tuning_job_detection_tag_and_count() -> None:
    assert is_tuning_job(job())
    assert is_tuning_job({"trainingInput": {"hyperparameters": {"maxTrials": 2}}})
    assert not is_tuning_job({"trainingInput": {"scaleTier": "BASIC"}})
    assert metric_tag(job(hyperparameterMetricTag="rmse")) == "rmse"
    assert metric_tag(job()) is None
    assert completed_trials(job(completedTrialCount="7")) == 7
    assert completed_trials(job()) is None


def test_objective_series_is_in_trial_id_order() -> None:
    rows = trial_rows(job(trial("10", 0.1), trial("2", 0.9), trial("3")), NOW)
    points = objective_series(rows)
    assert [(p.trial_id, p.objective, p.best) for p in points] == [
        ("2", 0.9, True),
        ("3", None, False),
        ("10", 0.1, False),
    ]


def test_scatter_positions_spread_and_scale() -> None:
    places = scatter_positions([0.0, 1.0, None, 0.5], columns=8, rows=5)
    assert places[2] is None
    assert [p[1] for p in places if p] == [4, 0, 2]  # low at the bottom, high on top
    columns = [p[0] for p in places if p]
    assert columns == sorted(columns) and len(set(columns)) == 3
    assert all(0 <= c < 8 for c in columns)


def test_scatter_positions_more_values_than_columns_share_columns() -> None:
    places = scatter_positions([float(i) for i in range(10)], columns=3, rows=2)
    assert {p[0] for p in places if p} == {0, 1, 2}


def test_scatter_positions_flat_and_empty() -> None:
    assert scatter_positions([2.0, 2.0], columns=4, rows=3) == [(1, 1), (3, 1)]
    assert scatter_positions([], columns=4, rows=3) == []
    assert scatter_positions([1.0], columns=0, rows=3) == [None]


def test_format_objective() -> None:
    assert format_objective(None) == ""
    assert format_objective(0.0132) == "0.0132"
    assert format_objective(1234.5678) == "1234.57"
    assert format_objective(1.5e-7) == "1.5e-07"


def test_a_running_trial_with_a_final_metric_so_far_is_provisional() -> None:
    """A service may keep a running trial's finalMetric up to date: still not final."""
    running = trial(
        "2",
        state="RUNNING",
        finalMetric={"trainingStep": "80", "objectiveValue": 0.01},
        allMetrics=[{"trainingStep": "40", "objectiveValue": 0.3}],
    )
    rows = trial_rows(job(trial("1", 0.5), running, goal="MINIMIZE"), NOW)
    assert ids(rows) == ["2", "1"]
    assert (rows[0].objective, rows[0].step, rows[0].final, rows[0].best) == (
        0.01,
        80,
        False,
        False,
    )
    assert rows[1].best


def test_a_finished_trial_without_a_metric_says_so() -> None:
    rows = trial_rows(job(trial("1"), trial("2", state="RUNNING"), trial("3", state="FAILED")), NOW)
    shown = {r.trial_id: r.objective_text for r in rows}
    assert shown == {"1": "no metric", "2": "", "3": ""}


def test_where_each_trial_wrote_relative_to_the_job_dir() -> None:
    data = job(
        trial("1", 0.5, output={"directory": "gs://b/job/1/", "objects": 4}),
        trial("2", 0.6, output={"directory": "gs://b/job/", "sharedWith": ["3"]}),
        trial("3", 0.7, output={"directory": "gs://elsewhere/x/", "sharedWith": ["2"]}),
        trial("4", 0.8),
    )
    data["trainingInput"]["jobDir"] = "gs://b/job"
    rows = {r.trial_id: r for r in trial_rows(data, NOW)}
    assert rows["1"].output_text == "1/"
    assert rows["2"].output_text == "job dir ⚠ shared with 3"
    assert rows["3"].output_text == "gs://elsewhere/x/ ⚠ shared with 2"
    assert rows["4"].output_text == ""
