"""Goal helpers for tuning jobs: the best trial, and a sparkline per trial."""

from __future__ import annotations

import math

import pytest

from tui_app.model.metrics.metric_goals import best_trial, sparkline


def test_best_trial_by_goal() -> None:
    finals = {"1": 0.5, "2": 0.9, "3": 0.1}
    assert best_trial(finals, "MAXIMIZE") == "2"
    assert best_trial(finals, "MINIMIZE") == "3"


def test_nonfinite_values_never_win() -> None:
    finals = {"1": math.nan, "2": math.inf, "3": -math.inf, "4": 0.2, "5": 0.3}
    assert best_trial(finals, "MAXIMIZE") == "5"
    assert best_trial(finals, "MINIMIZE") == "4"
    assert best_trial({"1": math.nan}, "MINIMIZE") is None
    assert best_trial({}, "MAXIMIZE") is None


def test_ties_go_to_the_lower_trial_id() -> None:
    assert best_trial({"10": 1.0, "2": 1.0, "3": 0.5}, "MAXIMIZE") == "2"  # 2 < 10 as numbers
    assert best_trial({"b": 1.0, "a": 1.0, "7": 1.0}, "MINIMIZE") == "7"
    assert best_trial({"b": 1.0, "a": 1.0}, "MINIMIZE") == "a"


def test_best_trial_checks_the_goal() -> None:
    with pytest.raises(ValueError, match="MAXIMIZE or MINIMIZE"):
        best_trial({"1": 1.0}, "BEST")  # type: ignore[arg-type]


def test_sparkline_maps_the_range_onto_eight_blocks() -> None:
    assert sparkline([0, 1, 2, 3, 4, 5, 6, 7], 8) == "▁▂▃▄▅▆▇█"
    assert sparkline([0, 7], 8) == "▁█"  # fewer values than width: one block each


def test_sparkline_averages_columns() -> None:
    # 8 values into 4 columns: means 0.5, 2.5, 10.5, 14.5 over [0.5, 14.5].
    assert sparkline([0, 1, 2, 3, 10, 11, 14, 15], 4) == "▁▂▆█"
    assert len(sparkline(list(range(1000)), 20)) == 20


def test_sparkline_marks_nan_and_draws_flat_series_flat() -> None:
    assert sparkline([1.0, math.nan, 3.0], 3) == "▁×█"
    assert sparkline([1.0, 2.0, 3.0, math.inf, 5.0, 6.0], 3) == "▁×█"  # a column holding inf
    assert sparkline([1.0, 2.0, 3.0, math.inf], 2) == "▄×"  # one finite column: flat
    assert sparkline([5.0] * 10, 4) == "▄▄▄▄"
    assert sparkline([math.nan, math.nan], 5) == "××"


def test_sparkline_of_nothing_is_empty() -> None:
    assert sparkline([], 10) == ""
    assert sparkline([1.0, 2.0], 0) == ""


def test_sparkline_copes_with_the_widest_ranges() -> None:
    assert sparkline([-1.7e308, 1.7e308], 2) == "▁█"
