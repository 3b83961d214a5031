"""A tuning job's trials as the detail pane's trials table and plot show them (no Textual here).

``trial_rows`` reads ``trainingOutput.trials`` (ml v1 ``HyperparameterOutput``) into display rows,
best first by the job's goal (``trainingInput.hyperparameters.goal``: MAXIMIZE unless it says
MINIMIZE); trials without an objective yet come after, by trial id. A running trial has no
``finalMetric`` (or one the service keeps updating): its objective is the latest reported, from
``allMetrics`` or ``finalMetric``, shown as provisional and never marked best (only a finished
trial's objective is final). ``objective_series`` is the plot's data: one point per trial in
trial-id order, and ``scatter_positions`` places them on a small grid.

Jobs come from any backend, so every field may be missing or odd: nothing here raises on a
malformed trial, it shows what it can read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from tui_app.model.jobs.states import STATE_SYMBOL, JobState
from tui_app.model.jobs.wire import as_float, as_int, as_list, as_mapping, parse_time
from tui_app.model.views.job_view import format_elapsed

MAXIMIZE = "MAXIMIZE"
MINIMIZE = "MINIMIZE"
BEST_GLYPH = "★"
NO_METRIC = "no metric"
"""A finished trial that reported no value for the metric tag (hypertune or summary events)."""
SHARED_GLYPH = "⚠"
TRIAL_OUTPUT_FIELD = "output"
"""The local service's addition to each trial of ``trainingOutput.trials``: where it wrote
(``directory``, ``objects``), whom it shared a directory with (``sharedDirectory``,
``sharedWith``) and where its metric came from (``metricFrom``: ``hypertune`` or ``events``).
Other backends leave it out, and nothing is shown."""
LIVE_STATES = frozenset({"QUEUED", "PREPARING", "RUNNING", "CANCELLING"})
"""A trial in one of these has no final objective yet, whatever its metric says so far."""


@dataclass(frozen=True, slots=True)
class TrialRow:
    """One trial as the table shows it; keyed by ``trial_id``."""

    trial_id: str
    hyperparameters: str
    """``lr=0.01, layers=3``: the trial's parameters by name."""
    objective: float | None
    final: bool
    """``objective`` is the trial's final metric (not the latest of a running trial)."""
    step: int | None
    state: str
    stopped_early: bool
    duration: str
    """Start to end, or to now while the trial runs; "" before it starts."""
    best: bool = False
    output: str = ""
    """Where the trial wrote, relative to the job dir when under it (``1/``); "" if unknown."""
    shared_with: tuple[str, ...] = ()
    """Other trials that wrote files into one of this trial's directories."""
    history: tuple[float, ...] = ()
    """The metric at each reported step, oldest first (``allMetrics``): the sparkline."""
    params: tuple[tuple[str, str], ...] = ()
    """The trial's parameters, (name, value) in the trial's order."""

    @property
    def objective_text(self) -> str:
        if self.objective is None and self.state == JobState.SUCCEEDED.value:
            return NO_METRIC
        return format_objective(self.objective)

    @property
    def output_text(self) -> str:
        """``1/``, or ``job dir ⚠ shared with 2, 3`` when other trials wrote there too."""
        if not self.shared_with:
            return self.output
        return f"{self.output} {SHARED_GLYPH} shared with {', '.join(self.shared_with)}".strip()

    @property
    def step_text(self) -> str:
        return "" if self.step is None else str(self.step)

    @property
    def state_text(self) -> str:
        """``✓ SUCCEEDED``, ``⊘ CANCELLED early``: a symbol, so colour is never the only cue."""
        try:
            symbol = STATE_SYMBOL[JobState(self.state)]
        except ValueError:
            symbol = "?"
        text = f"{symbol} {self.state}"
        return text + " early" if self.stopped_early else text


@dataclass(frozen=True, slots=True)
class PlotPoint:
    """One trial on the objective plot (x is its place in trial-id order)."""

    trial_id: str
    objective: float | None
    final: bool
    best: bool


def is_tuning_job(job: Mapping[str, Any]) -> bool:
    """A hyperparameter tuning job: the service says so, or the input asks for one."""
    out = as_mapping(job.get("trainingOutput"))
    ti = as_mapping(job.get("trainingInput"))
    return bool(out.get("isHyperparameterTuningJob")) or bool(as_mapping(ti.get("hyperparameters")))


def goal_of(job: Mapping[str, Any]) -> str:
    """``MAXIMIZE`` or ``MINIMIZE`` (the API's default, GOAL_TYPE_UNSPECIFIED, maximises)."""
    hp = as_mapping(as_mapping(job.get("trainingInput")).get("hyperparameters"))
    return MINIMIZE if str(hp.get("goal", "")).upper() == MINIMIZE else MAXIMIZE


def metric_tag(job: Mapping[str, Any]) -> str | None:
    out = as_mapping(job.get("trainingOutput"))
    hp = as_mapping(as_mapping(job.get("trainingInput")).get("hyperparameters"))
    tag = out.get("hyperparameterMetricTag") or hp.get("hyperparameterMetricTag")
    return str(tag) if tag else None


def final_objectives(job: Mapping[str, Any]) -> dict[str, float]:
    """Each finished trial's final objective, by trial id: what the best trial is chosen from
    (``metric_goals.best_trial``). A running trial's value so far is left out: it may still
    change, and the view must not crown a trial that has not finished."""
    finals: dict[str, float] = {}
    for entry in as_list(as_mapping(job.get("trainingOutput")).get("trials")):
        trial = as_mapping(entry)
        trial_id = str(trial.get("trialId") or "")
        if not trial_id or str(trial.get("state") or "") in LIVE_STATES:
            continue
        value = as_float(as_mapping(trial.get("finalMetric")).get("objectiveValue"))
        if value is not None:
            finals[trial_id] = value
    return finals


def objective_points(metrics: object) -> list[tuple[int, float]]:
    """``(step, value)`` of each ``HyperparameterMetric`` in ``metrics`` (``allMetrics``), by
    step; a report without a step keeps its place in the list, a step reported twice keeps its
    last value, NaN is kept (a blown-up trial)."""
    by_step: dict[int, float] = {}
    for i, m in enumerate(as_list(metrics)):
        metric = as_mapping(m)
        value = as_float(metric.get("objectiveValue"), keep_nan=True)
        if value is None:
            continue
        step = as_int(metric.get("trainingStep"))
        by_step[step if step is not None else i] = value
    return sorted(by_step.items())


def objective_history(trial: Mapping[str, Any]) -> tuple[float, ...]:
    """The trial's reported objective by step, oldest first (``objective_points`` of its
    ``allMetrics``)."""
    return tuple(v for _, v in objective_points(trial.get("allMetrics")))


def completed_trials(job: Mapping[str, Any]) -> int | None:
    """``trainingOutput.completedTrialCount`` (an int64 string), or None when missing."""
    return as_int(as_mapping(job.get("trainingOutput")).get("completedTrialCount"))


def trial_of(job: Mapping[str, Any], trial_id: str) -> Mapping[str, Any] | None:
    """The trial ``trial_id`` of ``trainingOutput.trials``; None before it starts (or on a
    backend that does not list it). A trial's logs follow its own ``state`` and ``endTime``,
    not the job's: the other trials keep the job running long after this one ended."""
    for entry in as_list(as_mapping(job.get("trainingOutput")).get("trials")):
        trial = as_mapping(entry)
        if str(trial.get("trialId", "")) == trial_id:
            return trial
    return None


def trial_rows(job: Mapping[str, Any], now: datetime) -> list[TrialRow]:
    """The job's trials, best first (see the module docstring); the best one has ``best``."""
    goal = goal_of(job)
    trials = [as_mapping(t) for t in as_list(as_mapping(job.get("trainingOutput")).get("trials"))]
    job_dir = str(as_mapping(job.get("trainingInput")).get("jobDir") or "")
    rows = [_row(t, i, now, job_dir) for i, t in enumerate(trials)]
    rows.sort(key=lambda r: _sort_key(r, goal))
    best = next((r for r in rows if r.final and r.objective is not None), None)
    return [_with_best(r) if r is best else r for r in rows]


def objective_series(rows: Sequence[TrialRow]) -> list[PlotPoint]:
    """The plot's points: every trial in trial-id order, its objective or None."""
    ordered = sorted(rows, key=lambda r: trial_order(r.trial_id))
    return [PlotPoint(r.trial_id, r.objective, r.final, r.best) for r in ordered]


def scatter_positions(
    values: Sequence[float | None], columns: int, rows: int
) -> list[tuple[int, int] | None]:
    """Where each value goes on a ``columns`` x ``rows`` grid: ``(column, row)``, row 0 on top.

    Values are spread evenly left to right in their order (several share a column when there
    are more values than columns); the lowest value is on the bottom row and the highest on the
    top one. None (no objective yet) has no place.
    """
    if columns <= 0 or rows <= 0:
        return [None] * len(values)
    known = [v for v in values if v is not None]
    low, high = (min(known), max(known)) if known else (0.0, 0.0)
    n = len(values)
    spread = min(columns, n)
    out: list[tuple[int, int] | None] = []
    for i, v in enumerate(values):
        if v is None:
            out.append(None)
            continue
        column = i * spread // n if n else 0
        if spread < columns:  # few trials: space them out across the width
            column = column * columns // spread + (columns // spread) // 2
        level = 0.5 if high == low else (v - low) / (high - low)
        out.append((min(columns - 1, column), round((1 - level) * (rows - 1))))
    return out


def format_objective(value: float | None) -> str:
    """Six significant digits: ``0.0132``, ``1234.57``, ``1.5e-07``; "" for None."""
    if value is None:
        return ""
    return f"{value:.6g}"


def trial_order(trial_id: object) -> tuple[int, str]:
    """Numeric order of trial ids ("2" before "10"); anything else after, as text."""
    text = str(trial_id)
    return (int(text), "") if text.isdigit() else (1 << 62, text)


# -- parsing ------------------------------------------------------------------------------------


def relative_output(directory: str, job_dir: str) -> str:
    """A trial's directory as the table shows it: relative to the job dir when under it."""
    base = job_dir.rstrip("/") + "/" if job_dir else ""
    if not directory or not base:
        return directory
    if directory.rstrip("/") + "/" == base:
        return "job dir"
    return directory[len(base) :] if directory.startswith(base) else directory


def _row(trial: Mapping[str, Any], index: int, now: datetime, job_dir: str = "") -> TrialRow:
    trial_id = str(trial.get("trialId") or index + 1)
    state = str(trial.get("state") or "STATE_UNSPECIFIED")
    final_metric = as_mapping(trial.get("finalMetric"))
    objective = as_float(final_metric.get("objectiveValue"))
    step = as_int(final_metric.get("trainingStep"))
    live = state in LIVE_STATES
    final = objective is not None and not live
    if objective is None or live:
        # A running trial's value so far: the latest report, wherever the service put it.
        latest = _latest_metric([*as_list(trial.get("allMetrics")), final_metric])
        if latest is not None:
            objective, step = latest
    params = as_mapping(trial.get("hyperparameters"))
    started = parse_time(trial.get("startTime"))
    ended = parse_time(trial.get("endTime"))
    duration = ""
    if started is not None:
        duration = format_elapsed((ended or now) - started)
    output = as_mapping(trial.get(TRIAL_OUTPUT_FIELD))
    return TrialRow(
        trial_id=trial_id,
        hyperparameters=", ".join(f"{k}={v}" for k, v in params.items()),
        objective=objective,
        final=final,
        step=step,
        state=state,
        stopped_early=bool(trial.get("isTrialStoppedEarly")),
        duration=duration,
        output=relative_output(str(output.get("directory") or ""), job_dir),
        shared_with=tuple(str(t) for t in as_list(output.get("sharedWith"))),
        history=objective_history(trial),
        params=tuple((str(k), str(v)) for k, v in params.items()),
    )


def params_column(rows: Sequence[TrialRow]) -> tuple[str, list[str]]:
    """The trials table's parameter column: a header and one cell per row. When every trial
    has the same parameters (a tuning job's always do), the header names them and the cells
    hold the values alone (``learning_rate, batch`` over ``0.1, 64``), so the values fit at 80
    columns; otherwise ``name=value`` in each cell under ``Hyperparameters``."""
    names = {tuple(name for name, _ in row.params) for row in rows if row.params}
    if len(names) == 1:
        (shared,) = names
        cells = [", ".join(v for _, v in row.params) if row.params else "" for row in rows]
        return ", ".join(shared), cells
    return "Hyperparameters", [row.hyperparameters for row in rows]


def _latest_metric(metrics: object) -> tuple[float, int | None] | None:
    """The metric at the highest training step (the last one reported when steps are missing)."""
    best: tuple[int, int, float, int | None] | None = None
    for i, m in enumerate(as_list(metrics)):
        metric = as_mapping(m)
        value = as_float(metric.get("objectiveValue"))
        if value is None:
            continue
        step = as_int(metric.get("trainingStep"))
        key = (step if step is not None else -1, i, value, step)
        if best is None or key[:2] > best[:2]:
            best = key
    return None if best is None else (best[2], best[3])


def _sort_key(row: TrialRow, goal: str) -> tuple[int, float, tuple[int, str]]:
    if row.objective is None:
        return (1, 0.0, trial_order(row.trial_id))
    value = -row.objective if goal == MAXIMIZE else row.objective
    return (0, value, trial_order(row.trial_id))


def _with_best(row: TrialRow) -> TrialRow:
    return replace(row, best=True)
