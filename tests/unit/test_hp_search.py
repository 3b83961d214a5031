"""The suggestion logic of tuning jobs: grid, random and Bayesian search, scales, metric files."""

from __future__ import annotations

import itertools
import json
import math
from typing import Any

import pytest

from tui_app.model.running.hp_search import (
    Search,
    arguments,
    final_metric,
    format_value,
    grid_size,
    max_failed,
    metric_history,
    params_from_spec,
)

MIXED = [
    {
        "parameterName": "lr",
        "type": "DOUBLE",
        "minValue": 1e-4,
        "maxValue": 1.0,
        "scaleType": "UNIT_LOG_SCALE",
    },
    {
        "parameterName": "momentum",
        "type": "DOUBLE",
        "minValue": 0.5,
        "maxValue": 0.999,
        "scaleType": "UNIT_REVERSE_LOG_SCALE",
    },
    {"parameterName": "layers", "type": "INTEGER", "minValue": 1, "maxValue": 5},
    {"parameterName": "width", "type": "DISCRETE", "discreteValues": [16, 32, 64, 128]},
    {"parameterName": "act", "type": "CATEGORICAL", "categoricalValues": ["relu", "tanh"]},
]


def _run(hp: dict[str, Any], objective: Any, n: int | None = None) -> list[dict[str, Any]]:
    search = Search(hp, seed=7)
    seen = []
    for _ in range(n or int(hp.get("maxTrials") or 1)):
        s = search.ask()
        if s is None:
            break
        seen.append(s.values)
        search.tell(s, "complete", objective(s.values))
    return seen


def test_grid_runs_exactly_its_points_in_order() -> None:
    hp = {
        "algorithm": "GRID_SEARCH",
        "maxTrials": 100,
        "params": [
            {"parameterName": "a", "type": "DISCRETE", "discreteValues": [0.5, 2, 4]},
            {"parameterName": "b", "type": "INTEGER", "minValue": 1, "maxValue": 2},
            {"parameterName": "c", "type": "CATEGORICAL", "categoricalValues": ["x", "y"]},
        ],
    }
    assert grid_size(params_from_spec(hp)) == 12
    seen = _run(hp, lambda v: 0.0, n=100)
    assert [(v["a"], v["b"], v["c"]) for v in seen] == [
        (a, b, c) for a in (0.5, 2, 4) for b in (1, 2) for c in ("x", "y")
    ]


def test_grid_skips_points_of_a_resumed_study() -> None:
    hp = {
        "algorithm": "GRID_SEARCH",
        "params": [{"parameterName": "b", "type": "INTEGER", "minValue": 1, "maxValue": 3}],
    }
    search = Search(hp)
    assert search.seed_trial({"b": "2"}, 0.5)
    assert not search.seed_trial({"b": "9"}, 0.5)  # not a point of this spec
    points = []
    while (s := search.ask()) is not None:
        points.append(s.values["b"])
        search.tell(s, "complete", 1.0)
    assert points == [1, 3]


GRID = [
    {"parameterName": "width", "type": "DISCRETE", "discreteValues": [16, 32, 64]},
    {"parameterName": "act", "type": "CATEGORICAL", "categoricalValues": ["relu", "tanh"]},
]


@pytest.mark.parametrize(
    ("algorithm", "params"),
    [("GRID_SEARCH", GRID), ("RANDOM_SEARCH", MIXED), ("ALGORITHM_UNSPECIFIED", MIXED)],
)
def test_a_cut_off_trial_runs_again_with_its_own_values(
    algorithm: str, params: list[dict[str, Any]]
) -> None:
    """After a restart of the service the trials it ran are asked again, each with the values
    it had (as the job lists them), and a grid does not offer their points a second time."""
    hp = {"algorithm": algorithm, "maxTrials": 6, "params": params}
    first = Search(hp, seed=3)
    cut = [s.hyperparameters() for s in (first.ask(), first.ask()) if s is not None]
    assert len(cut) == 2
    again = Search(hp, seed=11)
    resumed = [again.again(values) for values in cut]
    assert [s.hyperparameters() if s else None for s in resumed] == cut
    for s in resumed:
        assert s is not None
        again.tell(s, "complete", 0.5)
    later = []
    for _ in range(4):
        s = again.ask()
        assert s is not None
        later.append(s.hyperparameters())
        again.tell(s, "complete", 0.1)
    if algorithm == "GRID_SEARCH":
        assert len({str(v) for v in later + cut}) == 6  # every point once
        assert again.ask() is None
    assert again.again({"width": "16"}) is None  # not a point of this spec


@pytest.mark.parametrize("algorithm", ["RANDOM_SEARCH", "ALGORITHM_UNSPECIFIED"])
def test_random_and_bayesian_respect_types_ranges_and_scales(algorithm: str) -> None:
    hp = {"algorithm": algorithm, "maxTrials": 40, "params": MIXED}
    seen = _run(hp, lambda v: -abs(math.log10(v["lr"]) + 2))
    assert len(seen) == 40
    for v in seen:
        assert isinstance(v["lr"], float) and 1e-4 <= v["lr"] <= 1.0
        assert isinstance(v["momentum"], float) and 0.5 <= v["momentum"] <= 0.999
        assert isinstance(v["layers"], int) and 1 <= v["layers"] <= 5
        assert v["width"] in (16, 32, 64, 128) and isinstance(v["width"], int)
        assert v["act"] in ("relu", "tanh")
    # Log scale: as many values below 1e-2 as above it (uniform in log space), far from the
    # 1% a linear scale would give.
    low = sum(v["lr"] < 1e-2 for v in seen[:10])
    assert low >= 2


def test_log_and_reverse_log_scales_sample_where_they_should() -> None:
    spec = {"parameterName": "x", "type": "DOUBLE", "minValue": 0.001, "maxValue": 1.0}
    logs = _run(
        {
            "algorithm": "RANDOM_SEARCH",
            "maxTrials": 400,
            "params": [dict(spec, scaleType="UNIT_LOG_SCALE")],
        },
        lambda v: 0.0,
    )
    rev = _run(
        {
            "algorithm": "RANDOM_SEARCH",
            "maxTrials": 400,
            "params": [dict(spec, scaleType="UNIT_REVERSE_LOG_SCALE")],
        },
        lambda v: 0.0,
    )
    lin = _run(
        {
            "algorithm": "RANDOM_SEARCH",
            "maxTrials": 400,
            "params": [dict(spec, scaleType="UNIT_LINEAR_SCALE")],
        },
        lambda v: 0.0,
    )

    def share(values: list[dict[str, Any]], test: Any) -> float:
        return sum(bool(test(v["x"])) for v in values) / len(values)

    # Log: a third of the draws in each decade; reverse log: that density mirrored to the top.
    assert 0.25 < share(logs, lambda x: x < 0.01) < 0.42
    assert share(rev, lambda x: x < 0.01) < 0.02
    assert 0.25 < share(rev, lambda x: x > 0.991) < 0.42
    assert 0.05 < share(lin, lambda x: x > 0.9) < 0.16
    assert all(0.001 <= v["x"] <= 1.0 for v in rev)


def test_reverse_log_integer_and_values_round_trip() -> None:
    hp = {
        "algorithm": "RANDOM_SEARCH",
        "maxTrials": 50,
        "params": [
            {
                "parameterName": "n",
                "type": "INTEGER",
                "minValue": 1,
                "maxValue": 1000,
                "scaleType": "UNIT_REVERSE_LOG_SCALE",
            }
        ],
    }
    seen = [v["n"] for v in _run(hp, lambda v: 0.0)]
    assert all(isinstance(n, int) and 1 <= n <= 1000 for n in seen)
    assert sum(n > 900 for n in seen) > len(seen) / 4
    [param] = params_from_spec(hp)
    assert param.value(param.internal("998")) == 998


def test_bayesian_beats_random_on_a_smooth_objective() -> None:
    params = [
        {
            "parameterName": "lr",
            "type": "DOUBLE",
            "minValue": 1e-4,
            "maxValue": 1.0,
            "scaleType": "UNIT_LOG_SCALE",
        }
    ]

    def loss(v: dict[str, Any]) -> float:
        return (math.log10(v["lr"]) + 1.3) ** 2

    bayes = _run({"goal": "MINIMIZE", "maxTrials": 16, "params": params}, loss)
    assert min(loss(v) for v in bayes) < 0.05
    assert sorted(loss(v) for v in bayes[-6:])[3] < 0.5  # it keeps sampling near the optimum


def test_categorical_and_format_and_arguments() -> None:
    [p] = params_from_spec(
        {
            "params": [
                {
                    "parameterName": "opt",
                    "type": "CATEGORICAL",
                    "categoricalValues": ["sgd", "adam"],
                }
            ]
        }
    )
    assert p.grid() == ["sgd", "adam"]
    assert format_value(4.0) == "4" and format_value(0.25) == "0.25" and format_value(3) == "3"
    assert arguments([p], {"opt": "adam"}) == ["--opt=adam"]


def test_early_stopping_uses_the_median_at_the_same_step() -> None:
    hp = {
        "algorithm": "GRID_SEARCH",
        "goal": "MAXIMIZE",
        "enableTrialEarlyStopping": True,
        "maxTrials": 5,
        "params": [{"parameterName": "k", "type": "INTEGER", "minValue": 1, "maxValue": 5}],
    }
    search = Search(hp)
    for good in (0.8, 0.9, 0.85):
        s = search.ask()
        assert s is not None
        search.report(s, 10, good)
        search.report(s, 20, good)
        assert not search.should_stop(s)
        search.tell(s, "complete", good)
    bad = search.ask()
    assert bad is not None
    search.report(bad, 10, 0.2)
    assert search.should_stop(bad)
    search.tell(bad, "stopped", 0.2)
    fine = search.ask()
    assert fine is not None
    search.report(fine, 10, 0.95)
    assert not search.should_stop(fine)


def test_final_metric_is_the_last_report_of_the_tag() -> None:
    lines = [
        {"accuracy": "0.5", "global_step": "10", "trial": "1", "timestamp": 1.0},
        {"loss": "9", "global_step": "15", "trial": "1", "timestamp": 1.5},
        {"accuracy": "0.75", "global_step": "20", "trial": "1", "timestamp": 2.0},
    ]
    text = "".join(json.dumps(e) + "\n" for e in lines) + '{"accuracy": "0.9", "glob'
    assert final_metric(text, "accuracy") == (20, 0.75)
    assert final_metric(text, "training/hptuning/metric") is None


def test_max_failed_default() -> None:
    assert max_failed({"maxTrials": 12, "maxFailedTrials": 2}) == 2
    assert max_failed({"maxTrials": 12}) == 6
    assert max_failed({"maxTrials": 2}) == 2
    assert max_failed({}) == 1


def test_metric_history_keeps_every_report_up_to_the_limit() -> None:
    series = [(10, 0.5), (20, 0.25)]
    assert metric_history(series) == [
        {"trainingStep": "10", "objectiveValue": 0.5},
        {"trainingStep": "20", "objectiveValue": 0.25},
    ]
    assert metric_history([]) == []


def test_metric_history_thins_evenly_and_keeps_both_ends() -> None:
    series = [(step, float(step)) for step in range(1, 10_001)]
    history = metric_history(series, limit=100)
    assert len(history) == 100
    steps = [int(h["trainingStep"]) for h in history]
    assert steps[0] == 1 and steps[-1] == 10_000
    assert steps == sorted(set(steps))
    gaps = {b - a for a, b in itertools.pairwise(steps)}
    assert max(gaps) - min(gaps) <= 1


def test_metric_history_writes_non_finite_values_as_proto3_json_does() -> None:
    history = metric_history([(1, math.nan), (2, math.inf), (3, -math.inf)])
    assert [h["objectiveValue"] for h in history] == ["NaN", "Infinity", "-Infinity"]
    assert json.loads(json.dumps(history)) == history  # valid JSON, no bare NaN
