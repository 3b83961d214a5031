"""What differs between two jobs (or two trials of one tuning job), field by field.

"Why did this run fail when yesterday's worked?" is answered by the difference between the two
runs: one changed flag, a package rebuilt under the same URI, another runtime, another machine
type. Each job becomes a *comparison document* (plain data in sections: what was asked, what it
ran with, how it ended), and two documents are compared two ways:

- ``diff_sections``: row by row, per section, for the TUI's side-by-side view (and the JSON of
  ``tui-app jobs diff --format json``). Lists of scalars are aligned with difflib, so one
  inserted value is one changed row, not a change of every value after it. The trainer's
  ``args`` are compared as a command line: a flag's value is named by its flag
  (``args --learning-rate``, whether written ``--learning-rate 0.1`` or ``--learning-rate=0.1``),
  so a row says what changed without counting arguments, and adding or removing a flag renames
  nothing else; only positional arguments keep a place (``args[3]``);
- ``unified_diff``: ``diff -u`` of the two documents' YAML, for ``tui-app jobs diff``: the
  documents as they are, whatever the rows call their fields.

A job that has not started (QUEUED, PREPARING) has no packages' bytes and no runtime yet: its
document says "not known yet" there (``NOT_KNOWN_YET``), and such a row is ``pending``: shown
as not known, never counted as a difference (unlike "unknown": what a started job's service
did not tell).

The document holds values as a person reads them (times as the describe view shows them, the
run time in the one duration format of every view); the service's facts that are not in the Job
resource (the trainer packages' content hashes, the runtime's framework versions, the last value
of each metric) come in ``JobFacts``, gathered by ``tui_app.api.job_compare``. Jobs come from
any backend and any age: nothing here raises on a missing or odd field, it compares what it can
read. Pure: no IO, no Textual.
"""

from __future__ import annotations

import difflib
import json
import math
import re
import shlex
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Final

from tui_app.model.jobs.job_id import split_job_id
from tui_app.model.jobs.job_spec import DEFAULT_METRIC_TAG
from tui_app.model.jobs.tiers import DEFAULT_SCALE_TIER
from tui_app.model.jobs.wire import as_float, as_int, as_list, as_mapping, parse_time
from tui_app.model.logs.failure_cause import split_failure
from tui_app.model.metrics.metric_goals import best_trial
from tui_app.model.views.describe import format_time, readable_yaml
from tui_app.model.views.job_view import JobRow, format_elapsed
from tui_app.model.views.trials import (
    MINIMIZE,
    final_objectives,
    goal_of,
    metric_tag,
    objective_points,
    trial_of,
)

__all__ = [
    "ELLIPSIS",
    "FLAG_PRESENT",
    "JOB_ID_PLACEHOLDER",
    "NOT_KNOWN_YET",
    "SECTION_TITLES",
    "UNKNOWN",
    "DiffRow",
    "DiffSection",
    "JobFacts",
    "Partner",
    "comparison_document",
    "diff_json",
    "diff_partner",
    "diff_sections",
    "document_yaml",
    "shorten_apart",
    "trial_document",
    "unified_diff",
]

UNKNOWN: Final = "unknown"
"""What a fact the service did not tell (a package's hash, the environment) reads as: the same
on both sides is no difference, and "unknown" against a hash is one."""

NOT_KNOWN_YET: Final = "not known yet"
"""What a job that has not started (QUEUED, PREPARING) has for the facts only its run tells (its
packages' bytes, its runtime): they will be known, so against anything it is no difference,
and a row holding it is ``pending``."""

FLAG_PRESENT: Final = "present"
"""A bare flag's value (``--verbose``, followed by another flag or by nothing): against a side
without the flag, the row reads present / (not set)."""

LEFT_ONLY: Final = " (left)"
"""Ends the label of a row only the left side has, named by its place there (``args[2] (left)``):
the same place on the right may hold another value, named ``args[2]`` in its own row."""

ELLIPSIS: Final = "…"

JOB_ID_PLACEHOLDER: Final = "<jobId>"
"""Stands for the job's own id at the end of a ``jobDir`` (``gs://b/<jobId>``)."""

SECTION_TITLES: Final[Mapping[str, str]] = {
    "job": "Job",
    "trainingInput": "Training input",
    "labels": "Labels",
    "packages": "Packages",
    "environment": "Runtime environment",
    "outcome": "Outcome",
    "metrics": "Metrics",
    "notes": "Notes",
    "trial": "Trial",
    "hyperparameters": "Hyperparameters",
}
"""Each section's title in the side-by-side view, in the order the documents put them."""

_TRAINING_INPUT_ORDER: Final = (
    "scaleTier",
    "masterType",
    "masterConfig",
    "workerType",
    "workerCount",
    "workerConfig",
    "parameterServerType",
    "parameterServerCount",
    "parameterServerConfig",
    "evaluatorType",
    "evaluatorCount",
    "evaluatorConfig",
    "runtimeVersion",
    "pythonVersion",
    "pythonModule",
    "packageUris",
    "args",
    "jobDir",
    "region",
    "hyperparameters",
    "scheduling",
)
"""trainingInput's fields in the order a person compares them (the cluster, what runs, where,
the search, the limits); any other field follows, by name."""

_PLAIN_KEY: Final = re.compile(r"[A-Za-z0-9_-]+")

_NOT_STARTED: Final = frozenset({"QUEUED", "PREPARING"})
"""States in which a job has run nothing: its packages and runtime are not known yet."""

_FACT_SECTIONS: Final = frozenset({"packages", "environment"})
"""The sections a job that has not started cannot fill yet (``NOT_KNOWN_YET``)."""

_ARGS_PATH: Final = "trainingInput.args"
"""The one list compared as a command line (flags by name)."""

_FLAG: Final = re.compile(r"(--?[A-Za-z_][A-Za-z0-9_.-]*)(?:=(.*))?", re.DOTALL)
"""A flag (``--lr``, ``-v``), with its value when written ``--lr=0.1``. A negative number
(``-0.5``) is no flag: it is a value."""


@dataclass(frozen=True)
class JobFacts:
    """One job as the diff compares it."""

    job: Mapping[str, Any]
    """The jobs.get answer."""
    project: str
    environment: Mapping[str, Any] | None = None
    """The local service's ``:environment`` answer; None when it is not known (a cloud
    backend, a job whose environment is not ready, an error)."""
    metrics: Mapping[str, float] | None = None
    """The last value of each scalar series (``tag``, or ``run/tag`` for a run other than the
    output folder itself), when they were read."""
    notes: tuple[str, ...] = field(default=())
    """What could not be gathered and why (the metrics could not be read): shown in the
    document's "notes" section rather than failing the comparison."""


@dataclass(frozen=True)
class DiffRow:
    """One compared value: a leaf of the two documents, at the same place in both."""

    path: str
    """Where in the document: ``labels.owner``, ``packages["trainer-0.1.tar.gz"]`` (a key other
    than letters, digits, ``_`` and ``-`` is quoted); a flag of the trainer's args by its name,
    ``trainingInput.args["--lr"]`` (a repeated flag with its occurrence,
    ``trainingInput.args["--layer"][1]``), a positional argument by its place,
    ``trainingInput.args[2]``. A place in a list is the right side's, or for a value only the
    left side has, the left's."""
    label: str
    """The first column of the side-by-side view: the path within its section (``args --lr``,
    ``args --layer[1]``, ``args[2]``, ``owner``, ``trainer-0.1.tar.gz``); a place only the
    left side has ends in ``LEFT_ONLY`` (``args[2] (left)``)."""
    left: str | None
    """Display text; None when the value is absent on that side."""
    right: str | None
    pending: bool = False
    """A side's value is ``NOT_KNOWN_YET`` (its job has not started): not known, so neither a
    difference nor the same."""

    @property
    def changed(self) -> bool:
        return not self.pending and self.left != self.right


@dataclass(frozen=True)
class DiffSection:
    """One section of the two documents, row by row."""

    key: str
    """``job``, ``trainingInput``, ``labels``, ``packages``, ``environment``, ``outcome``,
    ``metrics``, ``notes``; for trials ``trial``, ``hyperparameters``, ``metrics``."""
    title: str
    rows: tuple[DiffRow, ...]

    @property
    def changed(self) -> tuple[DiffRow, ...]:
        return tuple(r for r in self.rows if r.changed)

    @property
    def pending(self) -> tuple[DiffRow, ...]:
        """The rows not known yet on a side (``DiffRow.pending``): neither changed nor same."""
        return tuple(r for r in self.rows if r.pending)

    @property
    def unchanged_count(self) -> int:
        return sum(1 for r in self.rows if not r.changed and not r.pending)


@dataclass(frozen=True)
class Partner:
    """The job a one-job diff compares with, and why that one."""

    job_id: str
    reason: str
    """``resubmitted from it`` or ``the newest earlier job named mnist``."""


# -- the documents --------------------------------------------------------------------------------


def comparison_document(facts: JobFacts, now: datetime) -> dict[str, Any]:
    """The document that is compared, in sections (top-level keys, in this order).

    ``job`` (jobId, project, createTime, startTime, endTime), ``trainingInput`` (every field;
    args a list; the hyperparameter spec with its parameters by name; a jobDir named after the
    job itself ends in ``<jobId>``, as a resubmit's copy renames it), ``labels``,
    ``packages`` (by name: sha256, or "unknown"; a custom container's image by URI: digest),
    ``environment`` (runtimeVersion, pythonVersion, the interpreter's variant, whether the
    runtime was honoured exactly, frameworks {name: version}; "unknown" when not known), both
    "not known yet" where the job has not started (QUEUED, PREPARING) and the service has no
    environment for it yet,
    ``outcome`` (state, duration, consumedMLUnits, for a tuning job the best trial and its
    objective, errorMessage and its cause line), ``metrics`` (tag: last value) when known,
    ``notes`` when something could not be gathered.

    Args:
        facts: The job and what the service told of it.
        now: The current time: the run time of a job that still runs counts to it.

    Returns:
        Plain data (str, int, float, bool, dicts, lists) ready for YAML.
    """
    job = facts.job
    ti = as_mapping(job.get("trainingInput"))
    missing = NOT_KNOWN_YET if _not_started(job, facts.environment) else UNKNOWN
    doc: dict[str, Any] = {
        "job": _job_section(job, facts.project),
        "trainingInput": _training_input(ti, str(job.get("jobId") or "")),
        "labels": {str(k): _scalar(v) for k, v in sorted(as_mapping(job.get("labels")).items())},
        "packages": _packages(ti, facts.environment, missing),
        "environment": _environment(facts.environment, missing),
        "outcome": _outcome(job, now),
    }
    if facts.metrics is not None:
        doc["metrics"] = {str(k): facts.metrics[k] for k in sorted(facts.metrics)}
    if facts.notes:
        doc["notes"] = list(facts.notes)
    return doc


def trial_document(job: Mapping[str, Any], trial_id: str, project: str) -> dict[str, Any]:
    """One trial of a tuning job as it is compared with another trial of the same job.

    ``trial`` (jobId, project, trialId, state, startTime, endTime, duration),
    ``hyperparameters`` (the trial's values by name), ``metrics`` (the job's metric tag, the
    final metric and its step, the last and the best values reported, whether it was stopped
    early). A trial the job does not list has only its ids.
    """
    trial = as_mapping(trial_of(job, trial_id))
    head: dict[str, Any] = {
        "jobId": str(job.get("jobId") or ""),
        "project": project,
        "trialId": trial_id,
    }
    _put(head, "state", _scalar(trial.get("state")) or None)
    _put(head, "startTime", format_time(trial.get("startTime")))
    _put(head, "endTime", format_time(trial.get("endTime")))
    started, ended = parse_time(trial.get("startTime")), parse_time(trial.get("endTime"))
    if started is not None and ended is not None:
        head["duration"] = format_elapsed(ended - started)
    params = {
        str(k): _scalar(v) for k, v in sorted(as_mapping(trial.get("hyperparameters")).items())
    }
    metrics: dict[str, Any] = {"metricTag": metric_tag(job) or DEFAULT_METRIC_TAG}
    final = as_mapping(trial.get("finalMetric"))
    _put(metrics, "finalMetric", as_float(final.get("objectiveValue"), keep_nan=True))
    _put(metrics, "finalStep", as_int(final.get("trainingStep")))
    points = objective_points(trial.get("allMetrics"))
    if points:
        metrics["lastReported"] = points[-1][1]
        finite = [v for _, v in points if math.isfinite(v)]
        if finite:
            metrics["bestReported"] = min(finite) if goal_of(job) == MINIMIZE else max(finite)
    if trial:
        metrics["stoppedEarly"] = bool(trial.get("isTrialStoppedEarly"))
    return {"trial": head, "hyperparameters": params, "metrics": metrics}


def _job_section(job: Mapping[str, Any], project: str) -> dict[str, Any]:
    out: dict[str, Any] = {"jobId": str(job.get("jobId") or ""), "project": project}
    for key in ("createTime", "startTime", "endTime"):
        # As the describe view shows times, in UTC: the document must not depend on the reader.
        _put(out, key, format_time(job.get(key), UTC))
    return out


def _training_input(ti: Mapping[str, Any], job_id: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    ordered = [k for k in _TRAINING_INPUT_ORDER if k in ti]
    ordered += sorted(str(k) for k in ti if k not in _TRAINING_INPUT_ORDER)
    for key in ordered:
        value = _plain(ti[key])
        if key == "hyperparameters" and isinstance(value, dict):
            value = _hyperparameters(value)
        if value is not None and value != [] and value != {}:
            out[key] = value
    job_dir = out.get("jobDir")
    if job_id and isinstance(job_dir, str):
        head, sep, last = job_dir.rstrip("/").rpartition("/")
        if sep and last == job_id:
            # A folder named after its own job (what a resubmit's copy gets: the old one's
            # renamed) is no difference of its own: the ids already differ.
            out["jobDir"] = f"{head}/{JOB_ID_PLACEHOLDER}"
    # An unset tier is BASIC (the API's default): a job that says so is no different.
    if ti or "scaleTier" in out:
        out = {"scaleTier": out.get("scaleTier") or DEFAULT_SCALE_TIER, **out}
    return out


def _hyperparameters(hp: dict[str, Any]) -> dict[str, Any]:
    """The spec with its parameters keyed by name: one parameter added or removed is its own
    rows, not a shift of every parameter after it."""
    params = hp.get("params")
    if not isinstance(params, list):
        return hp
    names = [p.get("parameterName") if isinstance(p, dict) else None for p in params]
    if any(not isinstance(n, str) or not n for n in names) or len(set(names)) != len(names):
        return hp  # unnamed or repeated names: compare them by position instead
    by_name = {
        str(n): {k: v for k, v in p.items() if k != "parameterName"}
        for n, p in zip(names, params, strict=True)
    }
    return {**hp, "params": dict(sorted(by_name.items()))}


def _not_started(job: Mapping[str, Any], env: Mapping[str, Any] | None) -> bool:
    """The job has run nothing yet, and the service has no environment for it: its packages'
    bytes and its runtime will be known, they are not unknown."""
    return _scalar(job.get("state")) in _NOT_STARTED and not as_mapping(env).get("interpreter")


def _packages(
    ti: Mapping[str, Any], env: Mapping[str, Any] | None, missing: str = UNKNOWN
) -> dict[str, str]:
    """Each package by name: the sha256 of the bytes the job installed, or ``missing``
    ("unknown", "not known yet")."""
    out: dict[str, str] = {}
    env = as_mapping(env)
    trainer = [as_mapping(p) for p in as_list(env.get("trainerPackages"))]
    if trainer:
        for p in trainer:
            uri = _scalar(p.get("uri"))
            name = _scalar(p.get("name")) or uri.rsplit("/", 1)[-1]
            _put_unique(out, name, uri, _scalar(p.get("sha256")) or missing)
    else:
        for uri in (str(u) for u in as_list(ti.get("packageUris"))):
            _put_unique(out, uri.rstrip("/").rsplit("/", 1)[-1], uri, missing)
    image = as_mapping(env.get("image"))
    image_uri = _scalar(image.get("uri"))
    if image_uri:
        _put_unique(out, image_uri, image_uri, _scalar(image.get("digest")) or missing)
    return out


def _put_unique(out: dict[str, str], name: str, uri: str, value: str) -> None:
    """Two packages of one name from two places are keyed by their URIs instead."""
    out[uri if name in out or not name else name] = value


def _environment(env: Mapping[str, Any] | None, missing: str = UNKNOWN) -> dict[str, Any] | str:
    if not env or not env.get("interpreter"):
        return missing
    out: dict[str, Any] = {
        "runtimeVersion": _scalar(env.get("runtimeVersion")) or "none",
        "pythonVersion": _scalar(env.get("pythonVersion")) or UNKNOWN,
    }
    _put(out, "variant", _scalar(env.get("variant")) or None)
    out["exact"] = bool(env.get("exact"))
    packages = as_mapping(env.get("packages"))
    out["frameworks"] = {str(k): _scalar(packages[k]) for k in sorted(packages, key=str)}
    return out


def _outcome(job: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    out: dict[str, Any] = {"state": _scalar(job.get("state")) or "STATE_UNSPECIFIED"}
    now = now if now.tzinfo else now.replace(tzinfo=UTC)
    elapsed = JobRow.from_job(job).elapsed(now)
    if elapsed is not None:
        out["duration"] = format_elapsed(elapsed)
    output = as_mapping(job.get("trainingOutput"))
    _put(out, "consumedMLUnits", as_float(output.get("consumedMLUnits"), keep_nan=True))
    finals = final_objectives(job)
    if output.get("isHyperparameterTuningJob") or finals:
        _put(out, "completedTrials", as_int(output.get("completedTrialCount")))
        goal = goal_of(job)
        best = best_trial(finals, "MINIMIZE" if goal == MINIMIZE else "MAXIMIZE")
        if best is not None:
            out["bestTrial"] = best
            out["bestObjective"] = finals[best]
    message = job.get("errorMessage")
    if isinstance(message, str) and message.strip():
        out["cause"] = split_failure(message).cause
        out["errorMessage"] = message
    return out


def _put(out: dict[str, Any], key: str, value: object) -> None:
    if value is not None:
        out[key] = value


def _scalar(value: object) -> str:
    return "" if value is None else str(value)


def _plain(value: object) -> Any:
    """JSON-like data as dicts (keys sorted: two backends' orders are no difference) and lists;
    None and empty containers inside are left out."""
    if isinstance(value, Mapping):
        out = {str(k): _plain(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
        return {k: v for k, v in out.items() if v is not None and v != [] and v != {}}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


# -- comparing ------------------------------------------------------------------------------------


class _Missing:
    """A value that is not there (distinct from JSON null and from an empty string)."""


_MISSING: Final = _Missing()


def diff_sections(left: Mapping[str, Any], right: Mapping[str, Any]) -> list[DiffSection]:
    """Two comparison (or trial) documents field by field, section by section.

    Sections come in the left document's order, then any only the right one has. Mappings are
    compared key by key (the left's order, then the right's new keys); lists of scalars
    (packageUris, categorical values) are aligned with difflib, so one inserted value is one
    row with nothing on the left, not a change of every value after it; the trainer's args
    are paired flag by flag (``_args_rows``); other lists are compared by position. A value
    present on one side only is a row with None on the other. In the packages and the
    environment, a row with a side ``NOT_KNOWN_YET`` is ``pending``.
    """
    keys = list(left) + [k for k in right if k not in left]
    sections = []
    for key in keys:
        rows = tuple(_rows(left.get(key, _MISSING), right.get(key, _MISSING), key, ""))
        if key in _FACT_SECTIONS:
            rows = tuple(
                replace(r, pending=True) if NOT_KNOWN_YET in (r.left, r.right) else r for r in rows
            )
        sections.append(DiffSection(key, SECTION_TITLES.get(key, key), rows))
    return sections


def _rows(a: object, b: object, path: str, label: str) -> Iterator[DiffRow]:
    # Nothing on one side compares as an empty container of the other side's kind.
    if isinstance(a, _Missing) and not _is_leaf(b):
        a = {} if isinstance(b, Mapping) else []
    elif isinstance(b, _Missing) and not _is_leaf(a):
        b = {} if isinstance(a, Mapping) else []
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for k in list(a) + [k for k in b if k not in a]:
            yield from _rows(
                a.get(k, _MISSING), b.get(k, _MISSING), _key_path(path, k), _join(label, str(k))
            )
        return
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        if path == _ARGS_PATH and all(_is_leaf(v) for v in (*a, *b)):
            yield from _args_rows(list(a), list(b), path, label or "args")
        else:
            yield from _list_rows(list(a), list(b), path, label)
        return
    if _is_leaf(a) and _is_leaf(b):
        if not (isinstance(a, _Missing) and isinstance(b, _Missing)):
            yield DiffRow(path, label or path, _display(a), _display(b))
        return
    # A container on one side and a word on the other ("unknown": the service has not
    # recorded a queued job's environment yet): each field of the container against that
    # word, rather than every field "(not set)" and one more row for the word.
    if _is_leaf(b) and not isinstance(b, _Missing):
        yield from _rows(a, _shaped_like(a, b), path, label)
    elif _is_leaf(a) and not isinstance(a, _Missing):
        yield from _rows(_shaped_like(b, a), b, path, label)
    else:
        yield from _rows(a, _MISSING, path, label)
        yield from _rows(_MISSING, b, path, label)


def _shaped_like(container: object, word: object) -> object:
    """``container`` with every leaf replaced by ``word``."""
    if isinstance(container, Mapping):
        return {k: _shaped_like(v, word) for k, v in container.items()}
    if isinstance(container, list | tuple):
        return [_shaped_like(v, word) for v in container]
    return word


def _is_leaf(value: object) -> bool:
    return not isinstance(value, Mapping | list | tuple)


def _list_rows(a: list[Any], b: list[Any], path: str, label: str) -> Iterator[DiffRow]:
    base = label or path.rsplit(".", 1)[-1]
    if not all(_is_leaf(v) for v in a + b):
        for n in range(max(len(a), len(b))):
            yield from _rows(
                a[n] if n < len(a) else _MISSING,
                b[n] if n < len(b) else _MISSING,
                f"{path}[{n}]",
                f"{base}[{n}]",
            )
        return
    left, right = [_display(v) for v in a], [_display(v) for v in b]
    for i, j in _align(left, right):
        yield DiffRow(
            *_place(path, base, i, j),
            None if i is None else left[i],
            None if j is None else right[j],
        )


def _align(a: list[Any], b: list[Any]) -> list[tuple[int | None, int | None]]:
    """Which places of ``a`` and ``b`` hold the same item (difflib): equal runs paired, a
    replaced run paired in order, the rest alone (``(i, None)``, ``(None, j)``), in order."""
    pairs: list[tuple[int | None, int | None]] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for _tag, i1, i2, j1, j2 in matcher.get_opcodes():
        paired = min(i2 - i1, j2 - j1)
        pairs += [(i1 + k, j1 + k) for k in range(paired)]
        pairs += [(i, None) for i in range(i1 + paired, i2)]
        pairs += [(None, j) for j in range(j1 + paired, j2)]
    return pairs


def _place(path: str, label: str, i: int | None, j: int | None) -> tuple[str, str]:
    """The path and label of a list item at ``i`` on the left and ``j`` on the right.

    Named by its place on the right (the newer job, as a rule); an item only the left has, by
    its place there, its label saying so: without that, removing ``b`` from ``a b c`` named the
    removed ``b`` ``[1]``, the place where the right has ``c``.
    """
    if j is not None:
        return f"{path}[{j}]", f"{label}[{j}]"
    return f"{path}[{i}]", f"{label}[{i}]{LEFT_ONLY}"


@dataclass(frozen=True)
class _Arg:
    """One argument of a trainer's command line, as argparse would take it."""

    flag: str | None
    """``--lr``; None for a positional argument."""
    value: str | None
    """The flag's value (``0.1`` of ``--lr 0.1`` or ``--lr=0.1``), None for a bare flag; a
    positional argument's text."""
    spelled: str
    """As written: ``--lr 0.1``, ``--lr=0.1``, ``--verbose``, ``data.csv``."""
    at: int
    """Its place in the list (a flag's own)."""

    @property
    def shown(self) -> str:
        return FLAG_PRESENT if self.value is None else self.value


def _parse_args(args: list[str]) -> list[_Arg]:
    """``args`` as flags with their values and positional arguments.

    A flag takes the next argument as its value unless it is written ``--flag=value``, or the
    next is itself a flag (then it is a bare flag, ``--verbose``). After ``--``, everything is
    positional. The trainer's parser is not known: this is how argparse reads a command line,
    and what a person reads in it.
    """
    out: list[_Arg] = []
    options = True
    i = 0
    while i < len(args):
        token = args[i]
        flag = _FLAG.fullmatch(token) if options else None
        if flag is None:
            options = options and token != "--"
            out.append(_Arg(None, token, token, i))
            i += 1
            continue
        name, value = flag.group(1), flag.group(2)
        nxt = args[i + 1] if i + 1 < len(args) else None
        if value is None and nxt is not None and nxt != "--" and not _FLAG.fullmatch(nxt):
            out.append(_Arg(name, nxt, f"{token} {nxt}", i))
            i += 2
        else:
            out.append(_Arg(name, value, token, i))
            i += 1
    return out


def _args_rows(a: list[Any], b: list[Any], path: str, label: str) -> Iterator[DiffRow]:
    """The trainer's args row by row, each flag's value named by its flag.

    A flag's occurrences on the two sides are paired only with one another (a repeated flag's
    by difflib, each named by its place among that flag's: ``--layer[1]``), and the positional
    arguments only with one another: a flag added or removed is one row of its own, and
    renames no other. Rows come in the right side's order; a row only the left has comes
    after the row of the argument before it on the left.

    No difference of the two lists is lost: the same value written another way is shown as
    each side wrote it, and arguments both sides have, in another order (``--a 1 --b 2``,
    ``--b 2 --a 1``), add one last row, ``args order``, with each side's command line.
    """
    tokens = ([_display(v) or "" for v in a], [_display(v) or "" for v in b])
    left, right = _parse_args(tokens[0]), _parse_args(tokens[1])
    named: list[tuple[_Arg | None, _Arg | None, str, str]] = []
    lefts = [x for x in left if x.flag is None]
    rights = [y for y in right if y.flag is None]
    for i, j in _align([x.shown for x in lefts], [y.shown for y in rights]):
        x, y = _item(lefts, i), _item(rights, j)
        # A positional argument is named by its place in the whole list, as the YAML has it.
        places = (None if x is None else x.at, None if y is None else y.at)
        named.append((x, y, *_place(path, label, *places)))
    for flag in dict.fromkeys(x.flag for x in (*left, *right) if x.flag is not None):
        lefts = [x for x in left if x.flag == flag]
        rights = [y for y in right if y.flag == flag]
        flag_path = f"{path}[{json.dumps(flag, ensure_ascii=False)}]"
        flag_label = f"{label} {flag}"
        repeated = len(lefts) > 1 or len(rights) > 1
        for i, j in _align([x.shown for x in lefts], [y.shown for y in rights]):
            where = _place(flag_path, flag_label, i, j) if repeated else (flag_path, flag_label)
            named.append((_item(lefts, i), _item(rights, j), *where))

    partner = {x.at: y.at for x, y, _, _ in named if x is not None and y is not None}

    def order(row: tuple[_Arg | None, _Arg | None, str, str]) -> tuple[int, int, int]:
        x, y = row[0], row[1]
        if y is not None:
            return (y.at, 0, 0)
        at = -1 if x is None else x.at
        before = [k for k in partner if k < at]
        return (partner[max(before)] if before else -1, 1, at)

    for x, y, row_path, row_label in sorted(named, key=order):
        shown = (None if x is None else x.shown, None if y is None else y.shown)
        if x is not None and y is not None and shown[0] == shown[1] and x.spelled != y.spelled:
            # One value written two ways (--lr=0.1, --lr 0.1): the documents differ, so the
            # row does too, showing how each side wrote it.
            shown = (x.spelled, y.spelled)
        yield DiffRow(row_path, row_label, *shown)
    both = [(x.at, y.at) for x, y, _, _ in named if x is not None and y is not None]
    if sorted(both) != sorted(both, key=lambda pair: pair[1]):
        yield DiffRow(path, f"{label} order", shlex.join(tokens[0]), shlex.join(tokens[1]))


def _item(items: list[_Arg], i: int | None) -> _Arg | None:
    return None if i is None else items[i]


def _key_path(path: str, key: object) -> str:
    text = str(key)
    if _PLAIN_KEY.fullmatch(text):
        return f"{path}.{text}"
    return f"{path}[{json.dumps(text, ensure_ascii=False)}]"


def _join(label: str, key: str) -> str:
    return f"{label}.{key}" if label else key


def _display(value: object) -> str | None:
    """A value as one cell shows it: text as it is, booleans and numbers as YAML writes them
    (a float with every digit it has: 0.1 and 0.1000001 must not look the same)."""
    if isinstance(value, _Missing):
        return None
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


# -- the texts ------------------------------------------------------------------------------------


def document_yaml(document: Mapping[str, Any]) -> str:
    """The document as YAML, sections in their order (what ``unified_diff`` compares)."""
    return readable_yaml(document, sort_keys=False)


def unified_diff(
    left: Mapping[str, Any], right: Mapping[str, Any], left_name: str, right_name: str
) -> str:
    """``diff -u`` of the two documents' YAML (``--- left_name`` / ``+++ right_name``); ""
    when they are equal."""
    a, b = document_yaml(left), document_yaml(right)
    if a == b:
        return ""
    lines = difflib.unified_diff(
        a.splitlines(keepends=True), b.splitlines(keepends=True), left_name, right_name
    )
    return "".join(lines)


def diff_json(
    left: Mapping[str, Any], right: Mapping[str, Any], left_name: str, right_name: str
) -> dict[str, Any]:
    """``{"left": name, "right": name, "equal": bool, "differences": [{"path", "left",
    "right"}], "notKnownYet": [...]}``: every changed row, in the documents' order; an absent
    value is null. ``notKnownYet`` (only when there are any) holds the pending rows, the same
    way: a job that has not started yet, no differences."""
    sections = diff_sections(left, right)
    differences = [
        {"path": row.path, "left": row.left, "right": row.right}
        for section in sections
        for row in section.changed
    ]
    out: dict[str, Any] = {
        "left": left_name,
        "right": right_name,
        "equal": not differences,
        "differences": differences,
    }
    pending = [
        {"path": row.path, "left": row.left, "right": row.right}
        for section in sections
        for row in section.pending
    ]
    if pending:
        out["notKnownYet"] = pending
    return out


def shorten_apart(name: str, other: str, width: int) -> str:
    """``name`` in at most ``width`` characters, keeping what tells it from ``other``.

    The two sides of a diff often share most of their names: two trials of one tuning job
    (``mnist_hptuning_20261207_033400/4`` and ``.../6``), two runs of one base name. Cut at
    the end, as a narrow column cuts, both read the same. The part they share is shortened in
    its middle instead (``mnist_hpt…7_033400/4`` in 20 cells): its start still says which job,
    and what differs is kept whole with what leads up to it. Where what differs is too long
    for that, the start is kept when the difference begins within it, else the end.

    Args:
        name: The name to show (ASCII: job and trial ids, one cell a character).
        other: The other side's name.
        width: The cells there are; 0 or less: not known yet, ``name`` whole.
    """
    if width <= 0 or len(name) <= width:
        return name
    if width == 1:
        return ELLIPSIS
    cut = len(name) - width + 1  # the characters left out, for one "…"
    prefix = _shared(name, other)
    suffix = min(_shared(name[::-1], other[::-1]), min(len(name), len(other)) - prefix)
    for start, shared in ((0, prefix), (len(name) - suffix, suffix)):
        kept = shared - cut  # of the shared run: a character or more either side of the "…"
        if kept >= 2:
            head = start + (kept + 1) // 2
            return name[:head] + ELLIPSIS + name[head + cut :]
    if prefix < width - 1:
        return name[: width - 1] + ELLIPSIS
    return ELLIPSIS + name[len(name) - width + 1 :]


def _shared(a: str, b: str) -> int:
    """How many characters ``a`` and ``b`` start with alike."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


# -- which job to compare with --------------------------------------------------------------------


def diff_partner(
    job_id: str, job_ids: Iterable[str], resubmitted_from: Mapping[str, str]
) -> Partner | None:
    """What a diff of one job compares it with.

    The job it was resubmitted from, when that is still listed; else the newest earlier job of
    the same base name (by the ids' ``_YYYYMMDD_HHMMSS`` stamps: a later job is never taken);
    None when neither exists.

    Args:
        job_id: The job to compare.
        job_ids: The jobs listed (the candidates).
        resubmitted_from: New id -> the id it was resubmitted from (``ResubmitHistory``).
    """
    ids = job_ids if isinstance(job_ids, set | frozenset) else set(job_ids)
    source = resubmitted_from.get(job_id)
    if source and source != job_id and source in ids:
        return Partner(source, "resubmitted from it")
    base, stamp = split_job_id(job_id)
    if stamp is None:
        return None
    best: tuple[datetime, str] | None = None
    for other in ids:
        if other == job_id or not other.startswith(base):
            continue
        other_base, other_stamp = split_job_id(other)
        if other_base != base or other_stamp is None or other_stamp >= stamp:
            continue
        if best is None or (other_stamp, other) > best:
            best = (other_stamp, other)
    if best is None:
        return None
    return Partner(best[1], f"the newest earlier job named {base}")
