"""``trial_of``: a trial's own entry of ``trainingOutput.trials``, which its logs pane follows."""

from __future__ import annotations

from tui_app.model.views.trials import trial_of

JOB = {
    "state": "RUNNING",
    "trainingOutput": {
        "trials": [
            {"trialId": "1", "state": "SUCCEEDED", "endTime": "2026-11-27T02:00:00Z"},
            {"trialId": "2", "state": "RUNNING"},
        ]
    },
}


def test_finds_the_trial_by_id() -> None:
    assert trial_of(JOB, "1") == JOB["trainingOutput"]["trials"][0]  # type: ignore[index]
    assert trial_of(JOB, "2") == {"trialId": "2", "state": "RUNNING"}


def test_a_trial_not_listed_yet_or_a_malformed_job_is_none() -> None:
    assert trial_of(JOB, "3") is None
    assert trial_of({}, "1") is None
    assert trial_of({"trainingOutput": {"trials": "oops"}}, "1") is None
    assert trial_of({"trainingOutput": {"trials": [None, {"trialId": 1}]}}, "1") == {"trialId": 1}
