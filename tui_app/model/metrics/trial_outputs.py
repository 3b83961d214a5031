"""Where each trial of a tuning job wrote, and which trials wrote into the same place.

The platform gave every trial the same ``--job-dir``; the trial id reached the trainer only
through ``TF_CONFIG``'s ``task.trial`` (and ``CLOUD_ML_TRIAL_ID``), and a trainer was expected
to append it to its output path itself (Google's samples do
``os.path.join(job_dir, tf_config['task'].get('trial', ''))``). A trainer without that idiom
writes every trial into one directory, where parallel trials overwrite each other's
checkpoints and a later trial restores an earlier one's and trains zero steps. Nobody told the
user. The local service knows which objects each trial's replicas wrote, so it can: this module
turns those writes into one line per trial and the warning.

Paths are ``gs://bucket/name`` URIs (or any ``/``-separated paths): only their text matters.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from tui_app.model.metrics.tf_events import is_event_file


@dataclass(frozen=True, slots=True)
class TrialOutput:
    """What one trial wrote."""

    trial_id: str
    directory: str
    """The deepest directory holding everything the trial wrote (``gs://b/job/3/``)."""
    objects: int
    event_files: tuple[str, ...] = ()
    """TensorFlow event files among them (where a metric can be read back from)."""


@dataclass(frozen=True, slots=True)
class SharedDirectory:
    """A directory into which more than one trial wrote files."""

    directory: str
    trials: tuple[str, ...]


def parent(path: str) -> str:
    """``gs://b/a/x.txt`` -> ``gs://b/a/`` (a trailing ``/`` marks a directory)."""
    head, sep, _ = path.rstrip("/").rpartition("/")
    if not sep or head.endswith(":/"):  # "x.txt" or "gs://b": the bucket root itself
        return path if path.endswith("/") else (head + sep if sep else "")
    return head + "/"


def directory_of(path: str) -> str:
    """The directory a path lands in: itself for a ``dir/`` placeholder, else its parent."""
    return path if path.endswith("/") else parent(path)


def common_directory(paths: Iterable[str]) -> str:
    """The deepest directory that holds every file ("" when they share none).

    Directory placeholders (``a/b/``, which TensorFlow and gcsfs create for each level of a
    path they make) count only when nothing else was written: a trial that wrote
    ``job/1/ckpt`` and, on the way, the placeholder ``job/`` wrote into ``job/1/``."""
    given = list(paths)
    files = [p for p in given if not p.endswith("/")] or given
    dirs = [directory_of(p) for p in files]
    if not dirs:
        return ""
    parts = [d.split("/") for d in dirs]
    shared: list[str] = []
    for column in zip(*parts, strict=False):
        if any(c != column[0] for c in column):
            break
        shared.append(column[0])
    text = "/".join(shared)
    return text if text.endswith("/") or not text else text + "/"


def trial_outputs(writes: Mapping[str, Iterable[str]]) -> list[TrialOutput]:
    """One ``TrialOutput`` per trial that wrote anything, in trial-id order."""
    out = []
    for trial_id in sorted(writes, key=_order):
        paths = sorted(set(writes[trial_id]))
        if not paths:
            continue
        events = tuple(p for p in paths if is_event_file(p))
        out.append(TrialOutput(trial_id, common_directory(paths), len(paths), events))
    return out


def shared_directories(writes: Mapping[str, Iterable[str]]) -> list[SharedDirectory]:
    """Directories that two or more trials wrote files into, with those trials.

    Compared by the directory each file lands in (not the trials' common directories): trials
    that write ``job/1/...`` and ``job/2/...`` share nothing, though both are under ``job/``.
    """
    by_dir: dict[str, set[str]] = {}
    for trial_id, paths in writes.items():
        for path in paths:
            if path.endswith("/"):  # a placeholder: every trial's path passes through them
                continue
            by_dir.setdefault(parent(path), set()).add(trial_id)
    return [
        SharedDirectory(directory, tuple(sorted(trials, key=_order)))
        for directory, trials in sorted(by_dir.items())
        if len(trials) > 1
    ]


def sharing_warning(shared: SharedDirectory) -> str:
    """The warning for the job's log and ``describe``: what happened and what to change."""
    trials = ", ".join(shared.trials)
    return (
        f"Trials {trials} wrote into the same directory {shared.directory}: they overwrite "
        "each other's checkpoints and outputs (a later trial may restore an earlier one's "
        "checkpoint and train 0 steps). Every trial gets the same --job-dir, as on AI Platform; "
        "append the trial id to it in the trainer: os.path.join(job_dir, "
        "json.loads(os.environ.get('TF_CONFIG', '{}')).get('task', {}).get('trial', ''))."
    )


def _order(trial_id: str) -> tuple[int, str]:
    return (int(trial_id), "") if trial_id.isdigit() else (1 << 62, trial_id)
