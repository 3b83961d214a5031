"""A job's detail as a person reads it, like ``gcloud ai-platform jobs describe --summarize``.

``summarize`` turns a Job resource into titled sections of ``(key, value)`` rows; the describe pane
renders them as a table and the headless CLI prints ``render_text``. Jobs come from any backend and
any age, so every field may be missing or odd: a summary never raises, it leaves out what it cannot
read. ``job_yaml`` is the other view: the raw resource, exactly as ``gcloud describe`` prints it.
"""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any

import yaml

from tui_app.model.jobs import states
from tui_app.model.jobs.cluster import ml_units_per_hour, replica_groups
from tui_app.model.jobs.engine_label import engine_label
from tui_app.model.jobs.job_images import replica_image
from tui_app.model.jobs.job_spec import DEFAULT_METRIC_TAG, duration_seconds
from tui_app.model.jobs.tiers import (
    ACCELERATORS,
    DEFAULT_SCALE_TIER,
    MACHINE_TYPES,
    SCALE_TIERS,
    ReplicaGroup,
    Role,
)
from tui_app.model.jobs.vertex_resources import CUSTOM_JOBS, TUNING_JOBS, VERTEX_FIELD
from tui_app.model.jobs.wire import as_int, as_list, as_mapping, parse_time, plain_data
from tui_app.model.logs.failure_cause import split_failure
from tui_app.model.logs.log_records import TRACEBACK_START
from tui_app.model.running.queue_wait import wait_rows
from tui_app.model.running.restarts import WHOLE_JOB, ReplicaRestarts, restarts_from_job
from tui_app.model.running.stalls import stall_from_job
from tui_app.model.stacks import JobStacks, fold
from tui_app.model.stacks import render_text as stacks_text
from tui_app.model.views.job_view import format_elapsed
from tui_app.model.views.replica_nodes import PlacedReplica, placement_rows
from tui_app.model.views.trials import SHARED_GLYPH, TRIAL_OUTPUT_FIELD, trial_order

_ALGORITHMS = {
    "ALGORITHM_UNSPECIFIED": "Bayesian optimization",
    "GRID_SEARCH": "Grid search",
    "RANDOM_SEARCH": "Random search",
}
_ROLE_NAMES: dict[Role, tuple[str, str]] = {
    Role.MASTER: ("master", "masters"),
    Role.WORKER: ("worker", "workers"),
    Role.PARAMETER_SERVER: ("parameter server", "parameter servers"),
    Role.EVALUATOR: ("evaluator", "evaluators"),
}
# The sign in "master: 1 x standard" (a real multiplication sign, not the letter x).
TIMES = "\N{MULTIPLICATION SIGN}"


@dataclass(frozen=True)
class Section:
    """A titled group of ``(key, value)`` rows.

    A row with an empty key continues the row above it (one replica group or package per row);
    a value may span several lines (the error message).
    """

    title: str
    rows: list[tuple[str, str]]


def summarize(
    job: Mapping[str, Any],
    now: datetime,
    *,
    tz: tzinfo = UTC,
    environment: Mapping[str, Any] | None = None,
    queue: Mapping[str, Any] | None = None,
    engine: Mapping[str, Any] | None = None,
    placement: Sequence[PlacedReplica] = (),
    stall_stacks: JobStacks | None = None,
) -> list[Section]:
    """The job's summary: overview, training input, training output and the error, if any.

    Sections with nothing to show are left out; so are rows whose field is missing.

    Args:
        job: A Job resource as the API returns it (camelCase keys, int64 fields as strings).
        now: The current time, for the elapsed time of a job that is still running.
        tz: The time zone to show times in.
        environment: The local service's ``:environment`` answer for the job, when it has one:
            a "Runtime environment" section says which Python and frameworks the job got.
        queue: The local service's ``:queue`` answer for a QUEUED job: a "Waiting for
            resources" section says what it needs and who holds it (``queue_wait``).
        engine: The local service's ``containerEngine`` (its ``/healthz``): a custom-container
            job's "Engine" row says what runs its images there (``engine_label``).
        placement: The replicas that run on other nodes (the local service's Ray executor,
            from its ``:metrics`` answer): a "Replicas" section names each one's node. Left
            out when every replica runs on the service's own machine.
        stall_stacks: The stacks the local service kept when the job stalled (``:stacks``
            ``?at=stall``): the "Stall" section shows them, folded, under its replicas.

    Returns:
        The sections, in reading order.
    """
    sections = [
        Section("Job Overview", _overview(job, now, tz)),
        Section("Waiting for resources", _waiting(job, queue)),
        # Right under the overview, cause first: the traceback's last line is what triage
        # reads, and a long traceback under the inputs put it pages down.
        Section("Error", _error(job.get("errorMessage"))),
        # A hung job has no error: why it is stuck takes the error's place.
        Section("Stall", stall_rows(job, now, tz, stall_stacks)),
        # Why a live job's run is longer than its steps explain, or a failed one's cause came
        # late: which replicas were started again, how often, and the last reason.
        Section("Restarts", restart_rows(restarts_from_job(job), tz)),
        Section("Training Input", _training_input(as_mapping(job.get("trainingInput")), engine)),
        # Next to the cluster it places: which node each of its replicas landed on.
        Section("Replicas", placement_rows(placement)),
        Section("Training Output", _training_output(job)),
    ]
    sections.append(Section("Runtime environment", environment_rows(environment or {})))
    sections.append(Section("Vertex AI", _vertex(as_mapping(job.get(VERTEX_FIELD)))))
    return [s for s in sections if s.rows]


def restart_rows(restarts: Sequence[ReplicaRestarts], tz: tzinfo = UTC) -> list[tuple[str, str]]:
    """One row per replica that was restarted (``replicaRestarts``), the whole job's retries
    last: ``master-replica-0: 2 restarts, last 2026-12-07 12:00:00 UTC: its machine restarted``.
    None for a job that never restarted (the section is left out)."""
    rows: list[tuple[str, str]] = []
    ordered = sorted(restarts, key=lambda r: r.task_name == WHOLE_JOB)  # stable: resource order
    for r in ordered:
        plural = "s" if r.count != 1 else ""
        if r.task_name == WHOLE_JOB:
            key, value = "Whole job", f"retried {r.count} time{plural}"
        else:
            key, value = r.task_name, f"{r.count} restart{plural}"
        when = format_time(r.last_time, tz) or r.last_time
        if when:
            value += f", last {when}"
        if r.last_cause:
            value += f": {r.last_cause}"
        rows.append((key, value))
    return rows


def stall_rows(
    job: Mapping[str, Any], now: datetime, tz: tzinfo = UTC, stacks: JobStacks | None = None
) -> list[tuple[str, str]]:
    """The service's ``stall`` of a job: since when, each quiet or stalled replica with its
    last line and CPU, then the stacks kept at the stall (folded). None when it never
    stalled (the section is left out)."""
    stall = stall_from_job(job)
    if stall is None:
        return []
    raw = as_mapping(job.get("stall"))
    since = _epoch_time(stall.since, tz)
    if job.get("state") not in {s.value for s in states.TERMINAL_STATES}:
        since += f" ({format_duration(now.timestamp() - stall.since)} ago)"
    rows: list[tuple[str, str]] = [("Since", since)]
    for r in stall.replicas:
        name = f"trial {r.trial_id} {r.task_name}" if r.trial_id else r.task_name
        parts: list[str] = [r.state]
        if r.cpu_percent is not None:
            parts.append(f"CPU {r.cpu_percent:.1f}%")
        if r.last_output is not None:
            when = _epoch_time(r.last_output, tz)
            line = f": {r.last_line}" if r.last_line else ""
            parts.append(f"last line at {when}{line}")
        else:
            parts.append("has printed nothing")
        rows.append((name, "; ".join(parts)))
    if stacks is not None:
        text = "\n".join(stacks_text(fold(stacks.replicas), locals=stacks.locals))
        rows.append((f"Stacks at {format_time(stacks.taken_at, tz) or stacks.taken_at}", text))
    elif raw.get("stacksTakenAt"):
        taken = format_time(raw.get("stacksTakenAt"), tz) or str(raw.get("stacksTakenAt"))
        rows.append(("Stacks", f"taken {taken}"))
    return rows


def _epoch_time(seconds: float, tz: tzinfo) -> str:
    """``format_time`` of a moment given in seconds since the epoch."""
    return format_time(datetime.fromtimestamp(seconds, UTC).isoformat(), tz) or ""


FRAMEWORK_ROWS: tuple[str, ...] = ("tensorflow", "tensorflow-cpu", "tensorflow-gpu", "tf-keras")
FRAMEWORK_ROWS += ("keras", "scikit-learn", "xgboost", "pandas", "numpy", "scipy")
FRAMEWORK_ROWS += ("google-cloud-storage",)


def environment_rows(env: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The runtime environment a job got: runtime, Python, whether it is the runtime's own
    versions, the frameworks installed, and every substitution; none before it is known."""
    rows: list[tuple[str, str]] = []
    if not env or not env.get("interpreter"):
        return rows
    runtime = _text(env.get("runtimeVersion"))
    python = _text(env.get("pythonVersion")) or "?"
    if runtime is None:
        _add(rows, "Runtime", f"none: the service's own Python {python}, the job's packages only")
    else:
        how = "exact" if env.get("exact") else "substituted"
        _add(rows, "Runtime", f"{runtime} on Python {python} ({how})")
    _add(rows, "Interpreter", _text(env.get("interpreter")))
    _add(rows, "Environment", _text(env.get("environment")))
    packages = as_mapping(env.get("packages"))
    _add_lines(
        rows,
        "Frameworks",
        [f"{name} {packages[name]}" for name in FRAMEWORK_ROWS if name in packages],
    )
    _add_lines(rows, "Substituted", [str(x) for x in _items(env.get("substitutions"))])
    subs = {str(x) for x in _items(env.get("substitutions"))}
    notes = [str(x) for x in _items(env.get("notes")) if str(x) not in subs]
    _add_lines(rows, "Notes", notes)
    return rows


def render_text(sections: Iterable[Section]) -> str:
    """Plain text of the sections: each title, then its rows as aligned ``Key: value`` lines.

    Args:
        sections: What ``summarize`` returned.

    Returns:
        The text, sections separated by a blank line, ending in a newline.
    """
    blocks = []
    for section in sections:
        width = max((len(key) for key, _ in section.rows), default=0) + 1
        lines = [section.title]
        for key, value in section.rows:
            label = f"{key}:" if key else ""
            first, *rest = value.split("\n")
            lines.append(f"  {label:<{width}} {first}".rstrip())
            lines.extend(f"  {'':<{width}} {line}".rstrip() for line in rest)
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n" if blocks else ""


class ReadableDumper(yaml.SafeDumper):
    """safe_dump, with multi-line strings (errorMessage's traceback) as ``|`` block scalars:
    as they were written, not quoted, escaped and re-wrapped. ``jobs describe --yaml`` and
    ``jobs diff`` both write with it, so a diff shows a traceback's lines that differ."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        # PyYAML falls back to a quoted scalar by itself where a block cannot hold the text
        # exactly (trailing spaces on a line, control characters).
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_str(value)


ReadableDumper.add_representer(str, _represent_str)


def job_yaml(job: Mapping[str, Any]) -> str:
    """The raw Job as YAML with sorted keys, as ``gcloud ai-platform jobs describe`` prints it.

    Args:
        job: A Job resource.

    Returns:
        The YAML text; it reads back as the same data.
    """
    return readable_yaml(job, sort_keys=True)


def readable_yaml(data: Mapping[str, Any], *, sort_keys: bool) -> str:
    """``data`` as the describe pane and the diff show YAML: block style, text as it is, and
    a line as long as it was (the pane wraps; a diff would show a folded value twice)."""
    return yaml.dump(
        plain_data(data),
        Dumper=ReadableDumper,
        sort_keys=sort_keys,
        allow_unicode=True,
        default_flow_style=False,
        width=10_000,
    )


def format_time(value: object, tz: tzinfo = UTC) -> str | None:
    """``2026-11-22 08:30:00 UTC`` for an RFC3339 timestamp, or None when it is not one.

    Args:
        value: The timestamp as the API sends it (``2026-11-22T08:30:00.123456789Z``).
        tz: The time zone to show it in.

    Returns:
        The time to the second with the zone's name, or None.
    """
    moment = parse_time(value)
    if moment is None:
        return None
    local = moment.astimezone(tz)
    return f"{local:%Y-%m-%d %H:%M:%S} {local.tzname() or ''}".rstrip()


def format_duration(seconds: float) -> str:
    """A duration in the one format of every view (``job_view.format_elapsed``): ``45s``,
    ``3m05s``, ``1h02m``, ``2d03h``.

    Args:
        seconds: The duration; negative values (clock skew) count as zero.

    Returns:
        The duration, most significant unit first.
    """
    return format_elapsed(timedelta(seconds=max(0.0, seconds)))


def _overview(job: Mapping[str, Any], now: datetime, tz: tzinfo) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    _add(rows, "Job ID", _text(job.get("jobId")))
    state = _text(job.get("state"))
    if state:
        known = state in states.JobState.__members__
        symbol = states.STATE_SYMBOL.get(states.JobState(state)) if known else None
        _add(rows, "State", f"{symbol} {state}" if symbol else state)
    for key, field in (("Created", "createTime"), ("Started", "startTime"), ("Ended", "endTime")):
        _add(rows, key, format_time(job.get(field), tz))
    created = parse_time(job.get("createTime"))
    started = parse_time(job.get("startTime"))
    ended = parse_time(job.get("endTime"))
    until = ended
    if until is None and state not in states.TERMINAL_STATES:
        until = now if now.tzinfo else now.replace(tzinfo=UTC)
    # The wait and the run apart: one figure counting from creation, then from the start,
    # jumped back to 0s when the job started.
    left_queue = started or until
    if created is not None and left_queue is not None:
        _add(rows, "Queued", format_elapsed(left_queue - created))
    if started is not None and until is not None:
        _add(rows, "Run time", format_elapsed(until - started))
    if state == states.JobState.QUEUED:
        position = as_int(job.get("jobPosition"))
        if position:
            _add(rows, "Queue position", str(position))
    labels = as_mapping(job.get("labels"))
    if labels:
        pairs = sorted(f"{k}={v}" for k, v in labels.items())
        _add(rows, "Labels", ", ".join(pairs))
    return rows


def _waiting(job: Mapping[str, Any], queue: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """Why a QUEUED job waits; nothing once it has left the queue (the answer may be older)."""
    if job.get("state") != states.JobState.QUEUED or not queue:
        return []
    return wait_rows(queue)


def _error(message: object) -> list[tuple[str, str]]:
    """The cause, the replica's exit line, then the rest (the traceback), each once."""
    if not isinstance(message, str) or not message.strip():
        return []
    failure = split_failure(message)
    rows = [("Cause", failure.cause)]
    _add(rows, "Exit", failure.exit_line or None)
    if failure.details and failure.details != failure.cause:
        key = "Traceback" if TRACEBACK_START in failure.details else "Message"
        _add(rows, key, failure.details)
    return rows


def _vertex(vj: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Where a job from the Vertex AI backend lives: its numeric id is what Vertex's own tools
    (the console, ``gcloud ai custom-jobs``) and its logs know it by."""
    rows: list[tuple[str, str]] = []
    kind = {CUSTOM_JOBS: "custom job", TUNING_JOBS: "hyperparameter tuning job"}
    numeric = _text(vj.get("id"))
    if numeric:
        what = kind.get(str(vj.get("collection")), "")
        _add(rows, "ID", f"{numeric} ({what})" if what else numeric)
    _add(rows, "Resource", _text(vj.get("name")))
    _add(rows, "Vertex state", _text(vj.get("state")))
    _add(rows, "Image", _text(vj.get("executorImageUri")))
    _add(rows, "Console", _text(vj.get("consoleUrl")))
    uris = as_mapping(vj.get("webAccessUris"))
    _add_lines(rows, "Web access", [f"{k}: {v}" for k, v in sorted(uris.items())])
    # What the translation notes for the job as read back (the builder shows the same notes
    # before submit): fields Vertex runs differently, and where a tuning job's trials write.
    notes = [as_mapping(n) for n in vj.get("notes") or [] if isinstance(n, Mapping)]
    _add_lines(
        rows,
        "Notes",
        [
            f"{str(n.get('field', '')).removeprefix('trainingInput.')}: "
            + str(n.get("description", "")).removeprefix("Ignored: ")
            for n in notes
        ],
    )
    return rows


def _training_input(
    ti: Mapping[str, Any], engine: Mapping[str, Any] | None = None
) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    if not ti:
        return rows
    _add(rows, "Region", _text(ti.get("region")))
    tier = _text(ti.get("scaleTier")) or DEFAULT_SCALE_TIER
    described = SCALE_TIERS.get(tier)
    _add(rows, "Scale tier", f"{tier} — {described.description}" if described else tier)
    _add_lines(rows, "Cluster", [_group_line(g) for g in _groups(ti)])
    rows += image_rows(ti, engine)
    _add(rows, "Python module", _text(ti.get("pythonModule")))
    _add_lines(rows, "Packages", [str(p) for p in _items(ti.get("packageUris"))])
    args = _items(ti.get("args"))
    if args:
        _add(rows, "Args", shlex.join(str(a) for a in args))
    _add(rows, "Job dir", _text(ti.get("jobDir")))
    _add(rows, "Runtime version", _text(ti.get("runtimeVersion")))
    _add(rows, "Python version", _text(ti.get("pythonVersion")))
    _add(rows, "Scheduling", _scheduling(as_mapping(ti.get("scheduling"))))
    _add(rows, "Service account", _text(ti.get("serviceAccount")))
    _add(rows, "Network", _text(ti.get("network")))
    hp = as_mapping(ti.get("hyperparameters"))
    if hp:
        rows += _hyperparameters(hp)
    return rows


def image_rows(
    ti: Mapping[str, Any], engine: Mapping[str, Any] | None = None
) -> list[tuple[str, str]]:
    """A custom-container job's images and, with ``engine``, what runs them; none for a
    Python-package job.

    One "Container image" row when every replica runs the master's image; otherwise the
    master's, then each role of the cluster whose own image differs (``job_images``).
    """
    master = _text(replica_image(ti, Role.MASTER))
    if master is None:
        return []
    own: list[str] = []
    for group in _groups(ti):
        image = _text(replica_image(ti, group.role))
        if group.role != Role.MASTER and image is not None and image != master:
            singular, plural = _ROLE_NAMES.get(group.role, (str(group.role), str(group.role)))
            own.append(f"{singular if group.count == 1 else plural}: {image}")
    rows: list[tuple[str, str]] = []
    _add_lines(rows, "Container image", [f"master: {master}", *own] if own else [master])
    if engine is not None:
        _add(rows, "Engine", engine_label(engine))
    return rows


def _groups(ti: Mapping[str, Any]) -> tuple[ReplicaGroup, ...]:
    try:
        return replica_groups(ti)
    except (KeyError, TypeError, ValueError, AttributeError):
        return ()  # an unknown tier or a garbled count: show the rest of the job


def _group_line(group: ReplicaGroup) -> str:
    singular, plural = _ROLE_NAMES.get(group.role, (str(group.role), str(group.role)))
    line = f"{singular if group.count == 1 else plural}: {group.count} {TIMES} {group.machine_type}"
    machine = MACHINE_TYPES.get(group.machine_type)
    if machine is not None:
        line += f" ({machine.summary()})"
    if group.accelerator_type and group.accelerator_count:
        acc = ACCELERATORS.get(group.accelerator_type)
        label = acc.label if acc else group.accelerator_type
        line += f" + {group.accelerator_count}{TIMES} {label}"
        if group.count > 1:
            line += " each"
    return line


def _scheduling(s: Mapping[str, Any]) -> str | None:
    parts = []
    for key, label in (("maxRunningTime", "max running time"), ("maxWaitTime", "max wait time")):
        value = _text(s.get(key))
        if value:
            parts.append(f"{label} {_duration_text(value)}")
    priority = s.get("priority")
    if priority is not None:
        parts.append(f"priority {priority}")
    return ", ".join(parts) or None


def _duration_text(value: str) -> str:
    try:
        return format_duration(duration_seconds(value))
    except ValueError:
        return value


def _hyperparameters(hp: Mapping[str, Any]) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    goal = _text(hp.get("goal"))
    _add(rows, "HP goal", "MAXIMIZE" if goal in (None, "GOAL_TYPE_UNSPECIFIED") else goal)
    _add(rows, "HP metric tag", _text(hp.get("hyperparameterMetricTag")) or DEFAULT_METRIC_TAG)
    trials = f"at most {as_int(hp.get('maxTrials')) or 1}"
    trials += f", {as_int(hp.get('maxParallelTrials')) or 1} in parallel"
    failed = as_int(hp.get("maxFailedTrials"))
    if failed:
        trials += f", stop after {failed} failed"
    _add(rows, "HP trials", trials)
    algorithm = _text(hp.get("algorithm")) or "ALGORITHM_UNSPECIFIED"
    _add(rows, "HP algorithm", _ALGORITHMS.get(algorithm, algorithm))
    if hp.get("enableTrialEarlyStopping"):
        _add(rows, "HP early stopping", "enabled")
    _add(rows, "HP resumes job", _text(hp.get("resumePreviousJobId")))
    params = [_param_line(as_mapping(p)) for p in _items(hp.get("params"))]
    _add_lines(rows, "HP parameters", params)
    return rows


def _param_line(p: Mapping[str, Any]) -> str:
    name = _text(p.get("parameterName")) or "?"
    kind = _text(p.get("type")) or "PARAMETER_TYPE_UNSPECIFIED"
    if kind in ("DOUBLE", "INTEGER"):
        what = f"{_number(p.get('minValue'))} to {_number(p.get('maxValue'))}"
    elif kind == "CATEGORICAL":
        what = ", ".join(str(v) for v in _items(p.get("categoricalValues")))
    elif kind == "DISCRETE":
        what = ", ".join(_number(v) for v in _items(p.get("discreteValues")))
    else:
        what = ""
    line = f"{name}: {kind} {what}".rstrip()
    scale = _text(p.get("scaleType"))
    if scale and scale != "NONE":
        line += f" ({scale})"
    return line


def _training_output(job: Mapping[str, Any]) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    out = as_mapping(job.get("trainingOutput"))
    units = out.get("consumedMLUnits")
    if isinstance(units, int | float) and not isinstance(units, bool):
        _add(rows, "Consumed ML units", _number(units))
    ti = as_mapping(job.get("trainingInput"))
    if ti and not job.get(VERTEX_FIELD):  # Vertex AI bills machine hours, not ML units
        # An unknown tier or machine type has no price: leave the row out.
        with contextlib.suppress(KeyError, TypeError, ValueError, AttributeError):
            _add(rows, "ML units per hour", _number(ml_units_per_hour(ti)))
    if out.get("isHyperparameterTuningJob"):
        _add(rows, "Hyperparameter tuning", "yes")
        _add(rows, "Metric tag", _text(out.get("hyperparameterMetricTag")))
    completed = as_int(out.get("completedTrialCount"))
    if completed is not None:
        _add(rows, "Completed trials", str(completed))
    trials = [as_mapping(t) for t in _items(out.get("trials"))]
    # gcloud sorts trial ids as strings ("10" before "2"); numeric order is what a person wants.
    trials.sort(key=lambda t: trial_order(t.get("trialId")))
    _add_lines(rows, "Trials", [_trial_line(t) for t in trials])
    if out.get("isBuiltInAlgorithmJob"):
        _add(rows, "Built-in algorithm", "yes")
    return rows


def _trial_line(t: Mapping[str, Any]) -> str:
    line = f"#{_text(t.get('trialId')) or '?'}"
    metric = as_mapping(t.get("finalMetric"))
    state = _text(t.get("state"))
    output = as_mapping(t.get(TRIAL_OUTPUT_FIELD))
    if "objectiveValue" in metric:
        line += f" objective {_number(metric.get('objectiveValue'))}"
        step = as_int(metric.get("trainingStep"))
        if step is not None:
            line += f" at step {step}"
        if output.get("metricFrom") == "events":
            line += " (from summary events)"
    elif state == states.JobState.SUCCEEDED:
        line += " no metric reported"
    if state and state != states.JobState.SUCCEEDED:
        line += f" [{state}]"
    params = as_mapping(t.get("hyperparameters"))
    if params:
        line += " (" + ", ".join(sorted(f"{k}={v}" for k, v in params.items())) + ")"
    directory = _text(output.get("directory"))
    if directory:
        line += f", wrote to {directory}"
    shared = [str(x) for x in _items(output.get("sharedWith"))]
    if shared:
        line += f" {SHARED_GLYPH} shared with trial{'s' if len(shared) > 1 else ''} "
        line += ", ".join(shared)
    return line


def _add(rows: list[tuple[str, str]], key: str, value: str | None) -> None:
    if value:
        rows.append((key, value))


def _add_lines(rows: list[tuple[str, str]], key: str, values: list[str]) -> None:
    for i, value in enumerate(values):
        rows.append((key if i == 0 else "", value))


def _text(value: object) -> str | None:
    if value is None or isinstance(value, Mapping | list):
        return None
    text = str(value)
    return text or None


def _number(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, int) or (value.is_integer() and abs(value) < 1e15):
        return f"{int(value):,}"
    if abs(value) < 1e-4:
        return f"{value:.3g}"
    return f"{value:,.4f}".rstrip("0").rstrip(".")


def _items(value: object) -> list[Any]:
    # Tuples too: the summary also reads jobs and environments the program built itself.
    return as_list(value, tuples=True)
