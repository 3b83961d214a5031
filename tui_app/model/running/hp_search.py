"""Which hyperparameters the next trial tries: grid, random and Bayesian search (no IO).

A ``HyperparameterSpec`` (``trainingInput.hyperparameters``; its fields and defaults are in
``docs/wire-formats.md``) becomes a list of ``Param`` and one ``Search`` per
tuning job. Every algorithm runs through one optuna study (in memory), asked and told trial by
trial, so early stopping and resuming work the same whatever suggests the points:

- ``GRID_SEARCH``: every point of the grid of INTEGER, DISCRETE and CATEGORICAL values, in order
  (the first parameter varies slowest), enqueued into the study up to ``maxTrials``;
- ``RANDOM_SEARCH``: optuna's ``RandomSampler``, each value drawn uniformly on its scale;
- ``ALGORITHM_UNSPECIFIED`` (the platform's default, Bayesian optimisation): optuna's
  ``TPESampler``, with a constant liar so parallel trials do not all try the same region.

Scales: a DOUBLE or INTEGER with ``UNIT_LOG_SCALE`` is sampled uniformly in log space.
``UNIT_REVERSE_LOG_SCALE`` is the mirror image: values are dense near the *top* of the range
(useful for momentum-like values near 1). The study samples ``y`` log-uniformly in
``[min, max]`` and the trial gets ``x = min + max - y``, which stays within the range, keeps both
ends, and is exactly as fine near ``max`` as the log scale is near ``min``. DISCRETE values are
searched by their index (an ordered integer, so TPE sees neighbours as close); CATEGORICAL values
as categories.

Early stopping (``enableTrialEarlyStopping``) is optuna's ``MedianPruner``: a running trial stops
when its latest metric, at some step, is worse than the median of the completed trials' metrics at
that same step (once ``EARLY_STOP_MIN_TRIALS`` trials have completed).
"""

from __future__ import annotations

import itertools
import json
import math
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal

# The service's trials read the default tag from here, with the search it configures.
from tui_app.model.jobs.job_spec import DEFAULT_METRIC_TAG as DEFAULT_METRIC_TAG
from tui_app.model.jobs.wire import json_double

if TYPE_CHECKING:
    import optuna
    from optuna.distributions import BaseDistribution
    from optuna.pruners import BasePruner
    from optuna.samplers import BaseSampler

EARLY_STOP_MIN_TRIALS = 3
"""Completed trials needed before the median rule may stop one."""
GRID_TYPES = frozenset({"INTEGER", "DISCRETE", "CATEGORICAL"})

Value = float | int | str
Outcome = Literal["complete", "failed", "stopped"]


def _optuna() -> ModuleType:
    """optuna, imported on the first tuning job: with numpy and tqdm it is about a sixth of the
    service's start-up, which every ``service start`` and every plain job would pay."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


@dataclass(frozen=True)
class Param:
    """One ParameterSpec, normalised."""

    name: str
    type: str
    """DOUBLE, INTEGER, DISCRETE or CATEGORICAL."""
    low: float = 0.0
    high: float = 0.0
    values: tuple[Any, ...] = ()
    """DISCRETE: the numbers (increasing); CATEGORICAL: the strings."""
    scale: str = "NONE"

    @property
    def reverse(self) -> bool:
        return self.scale == "UNIT_REVERSE_LOG_SCALE" and self.type in ("DOUBLE", "INTEGER")

    def distribution(self) -> BaseDistribution:
        """The distribution the study searches (see the module doc for DISCRETE and reverse)."""
        from optuna.distributions import (
            CategoricalDistribution,
            FloatDistribution,
            IntDistribution,
        )

        log = self.scale in ("UNIT_LOG_SCALE", "UNIT_REVERSE_LOG_SCALE") and self.low > 0
        if self.type == "DOUBLE":
            return FloatDistribution(self.low, self.high, log=log)
        if self.type == "INTEGER":
            return IntDistribution(math.ceil(self.low), math.floor(self.high), log=log)
        if self.type == "DISCRETE":
            return IntDistribution(0, len(self.values) - 1)
        return CategoricalDistribution(list(self.values))

    def value(self, internal: Any) -> Value:
        """The trial's value of an internal (study) value."""
        if self.type == "DISCRETE":
            number = float(self.values[int(internal)])
            return int(number) if number.is_integer() else number
        if self.type == "CATEGORICAL":
            return str(internal)
        if self.type == "INTEGER":
            n = int(internal)
            return int(math.ceil(self.low) + math.floor(self.high) - n) if self.reverse else n
        x = float(internal)
        return min(self.high, max(self.low, self.low + self.high - x)) if self.reverse else x

    def internal(self, text: str) -> Any:
        """The study value of a trial value as trainingOutput shows it; ValueError when it is
        not one of this parameter's values (the spec changed since)."""
        if self.type == "CATEGORICAL":
            if text not in self.values:
                raise ValueError(text)
            return text
        number = float(text)
        if self.type == "DISCRETE":
            for i, v in enumerate(self.values):
                if math.isclose(float(v), number, rel_tol=1e-9, abs_tol=1e-12):
                    return i
            raise ValueError(text)
        if not self.low <= number <= self.high:
            raise ValueError(text)
        if self.type == "INTEGER":
            n = round(number)
            return int(math.ceil(self.low) + math.floor(self.high) - n) if self.reverse else n
        return self.low + self.high - number if self.reverse else number

    def grid(self) -> list[Any]:
        """Internal values of every grid point (GRID_TYPES only)."""
        if self.type == "INTEGER":
            return list(range(math.ceil(self.low), math.floor(self.high) + 1))
        if self.type == "DISCRETE":
            return list(range(len(self.values)))
        return list(self.values)


def format_value(value: Value) -> str:
    """A value as the trainer's argument and trainingOutput's hyperparameters show it: integral
    numbers without ``.0`` (an ``int()`` flag parser accepts them), others as Python prints."""
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def params_from_spec(hp: Mapping[str, Any]) -> list[Param]:
    """The spec's parameters (validated by ``job_spec``), in their order."""
    out: list[Param] = []
    for p in hp.get("params") or ():
        kind = str(p.get("type"))
        out.append(
            Param(
                name=str(p["parameterName"]),
                type=kind,
                low=float(p.get("minValue") or 0.0),
                high=float(p.get("maxValue") or 0.0),
                values=tuple(float(v) for v in p.get("discreteValues") or ())
                if kind == "DISCRETE"
                else tuple(str(v) for v in p.get("categoricalValues") or ()),
                scale=str(p.get("scaleType") or "NONE"),
            )
        )
    return out


def grid_points(params: Sequence[Param]) -> Iterator[dict[str, Any]]:
    """Internal values of every grid point, the first parameter varying slowest."""
    names = [p.name for p in params]
    for combo in itertools.product(*(p.grid() for p in params)):
        yield dict(zip(names, combo, strict=True))


def grid_size(params: Sequence[Param]) -> int:
    return math.prod(len(p.grid()) for p in params)


def arguments(params: Sequence[Param], values: Mapping[str, Value]) -> list[str]:
    """``--<parameterName>=<value>`` for each parameter, as the platform appended them."""
    return [f"--{p.name}={format_value(values[p.name])}" for p in params]


def max_failed(hp: Mapping[str, Any]) -> int:
    """Failed trials that fail the job. ``maxFailedTrials`` unset or 0 means "the service
    decides" (the docs give no number): here half the trials, at least 3 (or all of them when
    there are fewer), so a broken trainer stops the job early but an unlucky region does not."""
    given = int(hp.get("maxFailedTrials") or 0)
    if given > 0:
        return given
    trials = max(1, int(hp.get("maxTrials") or 1))
    return min(trials, max(3, math.ceil(trials / 2)))


@dataclass
class Suggestion:
    """One trial's point: its values by parameter name and its optuna trial."""

    number: int
    values: dict[str, Value]
    trial: optuna.trial.Trial = field(repr=False)
    steps: set[int] = field(default_factory=set)

    def hyperparameters(self) -> dict[str, str]:
        return {k: format_value(v) for k, v in self.values.items()}


class Search:
    """The suggestion side of one tuning job: ``ask`` for a point, ``report`` intermediate
    metrics, ``should_stop`` for early stopping, ``tell`` the outcome."""

    def __init__(self, hp: Mapping[str, Any], seed: int | None = None) -> None:
        self.params = params_from_spec(hp)
        self.algorithm = str(hp.get("algorithm") or "ALGORITHM_UNSPECIFIED")
        self.maximize = str(hp.get("goal") or "MAXIMIZE") != "MINIMIZE"
        self.max_trials = max(1, int(hp.get("maxTrials") or 1))
        parallel = max(1, int(hp.get("maxParallelTrials") or 1))
        self.distributions = {p.name: p.distribution() for p in self.params}
        opt = _optuna()
        sampler: BaseSampler
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", opt.exceptions.ExperimentalWarning)
            if self.algorithm == "ALGORITHM_UNSPECIFIED":
                sampler = opt.samplers.TPESampler(
                    seed=seed,
                    # A quarter of the budget explores at random first (optuna's default of 10
                    # would leave a 12-trial job almost nothing to optimise with).
                    n_startup_trials=max(2, min(10, self.max_trials // 4)),
                    multivariate=True,
                    constant_liar=parallel > 1,
                )
            else:
                sampler = opt.samplers.RandomSampler(seed=seed)
        pruner: BasePruner = (
            opt.pruners.MedianPruner(n_startup_trials=EARLY_STOP_MIN_TRIALS)
            if hp.get("enableTrialEarlyStopping")
            else opt.pruners.NopPruner()
        )
        self.study = opt.create_study(
            direction="maximize" if self.maximize else "minimize",
            sampler=sampler,
            pruner=pruner,
        )
        self._grid: Iterator[dict[str, Any]] | None = (
            grid_points(self.params) if self.algorithm == "GRID_SEARCH" else None
        )
        self._done_points: set[tuple[tuple[str, str], ...]] = set()
        self.seeded = 0

    def seed_trial(self, hyperparameters: Mapping[str, str], objective: float | None) -> bool:
        """Count a trial of an earlier job (``resumePreviousJobId``): a grid skips its point, the
        Bayesian optimiser learns from its objective. False when it does not fit this spec."""
        internal = self._done_point(hyperparameters)
        if internal is None:
            return False
        ok = objective is not None and math.isfinite(objective)
        opt = _optuna()
        self.study.add_trial(
            opt.trial.create_trial(
                params=internal,
                distributions=self.distributions,
                value=objective if ok else None,
                state=opt.trial.TrialState.COMPLETE if ok else opt.trial.TrialState.FAIL,
            )
        )
        self.seeded += 1
        return True

    def again(self, hyperparameters: Mapping[str, str]) -> Suggestion | None:
        """The point of a trial that was cut off (the service restarted under it), asked anew so
        that the trial runs again with the same values and its outcome teaches the optimiser
        as any trial's does. None when the values do not fit this spec."""
        internal = self._done_point(hyperparameters)
        if internal is None:
            return None
        self.study.enqueue_trial(internal)
        return self._asked()

    def _done_point(self, hyperparameters: Mapping[str, str]) -> dict[str, Any] | None:
        """A trial's values (as the API shows them) in the study's terms, its point marked as
        done for a grid; None when they do not fit this spec."""
        try:
            internal = {p.name: p.internal(str(hyperparameters[p.name])) for p in self.params}
        except (KeyError, ValueError):
            return None
        self._done_points.add(tuple(sorted(internal_key(internal).items())))
        return internal

    def _asked(self) -> Suggestion:
        """The study's next trial (an enqueued point first) as a Suggestion."""
        trial = self.study.ask(self.distributions)
        values = {p.name: p.value(trial.params[p.name]) for p in self.params}
        return Suggestion(trial.number, values, trial)

    def ask(self) -> Suggestion | None:
        """The next point, or None when a grid has none left."""
        if self._grid is not None:
            for point in self._grid:
                if tuple(sorted(internal_key(point).items())) in self._done_points:
                    continue
                self.study.enqueue_trial(point)
                break
            else:
                return None
        return self._asked()

    def report(self, s: Suggestion, step: int, value: float) -> None:
        """An intermediate metric of a running trial: each step counts once, and only steps on
        the reporting grid (``reported_step``), at most ``MAX_REPORTS`` of them: optuna's
        in-memory study copies a trial's intermediate values on every report, so its cost grows
        with the square of the reports (20k reports took 1.8 s), and a trainer that reports
        every step of a long run must not make the search the service's bottleneck."""
        if step in s.steps or not math.isfinite(value) or not reported_step(step):
            return
        if len(s.steps) >= MAX_REPORTS:
            return
        s.steps.add(step)
        s.trial.report(value, step)

    def should_stop(self, s: Suggestion) -> bool:
        """Early stopping: is the trial's latest metric worse than the median at its step?"""
        return bool(s.steps) and s.trial.should_prune()

    def tell(self, s: Suggestion, outcome: Outcome, objective: float | None) -> None:
        states = _optuna().trial.TrialState
        if outcome == "failed" or objective is None or not math.isfinite(objective):
            self.study.tell(s.trial, state=states.FAIL)
        elif outcome == "stopped":
            self.study.tell(s.trial, state=states.PRUNED)
        else:
            self.study.tell(s.trial, objective)

    def better(self, a: float, b: float) -> bool:
        """Whether objective ``a`` beats ``b`` under the goal."""
        return a > b if self.maximize else a < b


MAX_REPORTS = 4096
"""The most intermediate reports of one trial the search takes (``Search.report``)."""
DENSE_STEPS = 256
"""Steps below this are all reported; above, ``reported_step`` thins them by octave."""


def reported_step(step: int) -> bool:
    """Whether ``step`` is on the reporting grid: every step below ``DENSE_STEPS``, then 128
    steps per doubling (1024-2047 every 8th, 2048-4095 every 16th, ...). A function of the step
    alone, so every trial of a study keeps the same steps and early stopping compares a trial
    with the others at steps they all reported; a billion steps give about 3,000 reports."""
    magnitude = abs(step)
    if magnitude < DENSE_STEPS:
        return True
    stride = 1 << (magnitude.bit_length() - 8)
    return magnitude % stride == 0


class ThinSeries:
    """A trial's ``(step, value)`` reports in bounded memory, for ``allMetrics``: when it holds
    ``2 * limit`` points every other one is dropped (the first always stays, and ``points``
    ends with the newest report), so a trial reporting millions of times keeps an evenly spread
    curve of ``limit`` to ``2 * limit`` points."""

    def __init__(self, limit: int = 1000) -> None:
        self.limit = max(2, limit)
        self.last: tuple[int, float] | None = None
        """The newest report."""
        self._kept: list[tuple[int, float]] = []
        self._stride = 1
        self._seen = 0

    def extend(self, points: Sequence[tuple[int, float]]) -> None:
        for point in points:
            if self._seen % self._stride == 0:
                self._kept.append(point)
                if len(self._kept) >= 2 * self.limit:
                    del self._kept[1::2]
                    self._stride *= 2
            self._seen += 1
            self.last = point

    def points(self) -> list[tuple[int, float]]:
        """The kept points, oldest first, ending with the newest report."""
        if self.last is None or self._kept[-1] is self.last:
            return list(self._kept)
        return [*self._kept, self.last]


def internal_key(point: Mapping[str, Any]) -> dict[str, str]:
    return {k: repr(v) for k, v in point.items()}


def final_metric(text: str, tag: str) -> tuple[int, float] | None:
    """The last ``(global_step, value)`` reported for ``tag`` in a cloudml-hypertune metric file
    (JSON Lines, values as strings); None when there is none yet."""
    series = metric_series(text, tag)
    return series[-1] if series else None


def metric_series(text: str, tag: str) -> list[tuple[int, float]]:
    """Every ``(global_step, value)`` reported for ``tag``, in file order (bad lines skipped)."""
    return [p for line in text.splitlines() if (p := metric_point(line, tag)) is not None]


def metric_point(line: str | bytes, tag: str) -> tuple[int, float] | None:
    """The ``(global_step, value)`` one cloudml-hypertune line reports for ``tag``; None for a
    line about another tag, or one that is not such a report."""
    try:
        entry = json.loads(line)
        value = float(entry[tag])
        step = int(float(entry.get("global_step") or 0))
    except (ValueError, KeyError, TypeError, OverflowError, RecursionError):
        return None
    return step, value


METRIC_HISTORY_LIMIT = 1000
"""At most this many points of a trial's metric go into ``allMetrics``: the job resource is read
whole by every describe and list, and a trial that reports every step for a million steps must
not make it megabytes. TensorBoard keeps 1000 points per scalar tag by default for the same
reason; the newest point is always kept, so the curve ends where the trial is."""


def metric_history(
    series: Sequence[tuple[int, float]], limit: int = METRIC_HISTORY_LIMIT
) -> list[dict[str, Any]]:
    """``trials[].allMetrics`` from a trial's ``(step, value)`` reports: ml v1's
    ``HyperparameterMetric`` objects, thinned evenly to ``limit`` points.

    Non-finite values (a loss that blew up) are kept, written as proto3's JSON mapping writes a
    non-finite double (``"NaN"``, ``"Infinity"``, ``"-Infinity"``): the API client and gcloud
    read those strings back as numbers, and a view can show where the run went bad.
    """
    if limit < 1 or not series:
        return []
    if len(series) > limit:
        stride = (len(series) - 1) / (limit - 1) if limit > 1 else len(series)
        picked = [series[round(i * stride)] for i in range(limit - 1)] + [series[-1]]
    else:
        picked = list(series)
    return [
        {"trainingStep": str(step), "objectiveValue": json_double(value)} for step, value in picked
    ]
