"""A trial's metric history (the trials table's sparkline) and the finished trials' finals (the
metrics view's best trial): model.trials."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from tui_app.model.metrics.metric_goals import best_trial
from tui_app.model.views.trials import final_objectives, objective_history, trial_rows


def reports(*pairs: tuple[object, object]) -> list[dict[str, Any]]:
    return [{"trainingStep": s, "objectiveValue": v} for s, v in pairs]


def test_history_is_by_step_the_last_report_of_a_step_winning() -> None:
    trial = {"allMetrics": reports(("300", 0.2), ("100", 0.9), ("200", 0.5), ("300", 0.1))}
    assert objective_history(trial) == (0.9, 0.5, 0.1)


def test_history_keeps_nan_and_skips_what_is_not_a_number() -> None:
    trial = {"allMetrics": reports((1, 0.5), (2, "NaN"), (3, None), (4, "x"), (5, 0.25))}
    history = objective_history(trial)
    assert len(history) == 3 and math.isnan(history[1])
    assert (history[0], history[2]) == (0.5, 0.25)
    assert objective_history({}) == ()


def test_rows_carry_each_trials_history() -> None:
    job = {
        "trainingInput": {"hyperparameters": {"goal": "MINIMIZE"}},
        "trainingOutput": {
            "trials": [
                {"trialId": "1", "state": "RUNNING", "allMetrics": reports((1, 3.0), (2, 2.0))},
                {"trialId": "2", "state": "SUCCEEDED"},
            ]
        },
    }
    rows = {r.trial_id: r for r in trial_rows(job, datetime(2026, 1, 1, tzinfo=UTC))}
    assert rows["1"].history == (3.0, 2.0)
    assert rows["2"].history == ()


def test_finals_are_of_finished_trials_only() -> None:
    job = {
        "trainingOutput": {
            "trials": [
                {"trialId": "1", "state": "SUCCEEDED", "finalMetric": {"objectiveValue": 0.3}},
                # Running: its value so far may still change; it cannot be best yet.
                {"trialId": "2", "state": "RUNNING", "finalMetric": {"objectiveValue": 0.01}},
                {"trialId": "3", "state": "FAILED"},
                {"trialId": "4", "state": "SUCCEEDED", "finalMetric": {"objectiveValue": "0.2"}},
                {"state": "SUCCEEDED", "finalMetric": {"objectiveValue": 0.0}},
            ]
        }
    }
    finals = final_objectives(job)
    assert finals == {"1": 0.3, "4": 0.2}
    assert best_trial(finals, "MINIMIZE") == "4"
    assert best_trial(finals, "MAXIMIZE") == "1"
    assert final_objectives({}) == {}
