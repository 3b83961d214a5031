"""Replicas whose stacks are the same, folded into one: what a reader of a job's dumps sees.

A distributed job that hangs has most replicas waiting in the same place, and the one that is
elsewhere is the clue; thirty-two copies of one stack would bury it. So replicas fold when their
threads stand at the same lines of the same functions (thread ids, pids and locals differ from
replica to replica and never count), each group is named by its replicas in the platform's
terms (``worker 0-3``) and summed up in one line (``in `pull` ← `recv_into` (idle)``): the
program's own function it is in, and the library call it waits on.

What is "own" code is told from the path alone: the standard library lives under
``…/lib/pythonX.Y/`` and third-party packages under ``site-packages`` or ``dist-packages``;
everything else is the trainer's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from tui_app.model.jobs.cluster import task_from_vertex
from tui_app.model.stacks.py_spy import Frame, ThreadStack
from tui_app.model.stacks.replica_stacks import ReplicaStacks

__all__ = [
    "LINE_WIDTH",
    "MAIN_THREAD",
    "LineKind",
    "Origin",
    "Signature",
    "StackGroup",
    "StackLine",
    "fold",
    "frame_origin",
    "group_label",
    "group_lines",
    "main_thread",
    "render_text",
    "replica_label",
    "signature",
    "where",
]

MAIN_THREAD = "MainThread"
"""The name Python gives the thread a program starts in: where a trainer's loop runs."""

LINE_WIDTH = 120
"""The widest line ``render_text`` writes below a group's heading (a long repr is cut):
readable in a 120-column terminal, and the TUI wraps or scrolls the rest."""

_TASK = re.compile(r"([a-z][a-z0-9_]*(?:-[a-z][a-z0-9_]*)*?)-replica-(\d{1,9})", re.ASCII)
"""The platform's task name: ``<role>-replica-<index>``."""

_ROLE_RANK = {
    "master": 0,
    "chief": 0,
    "worker": 1,
    "ps": 2,
    "parameter-server": 2,
    "parameter_server": 2,
    "evaluator": 3,
}
"""The order roles are named in: the cluster's own (master first); other roles after them."""
_OTHER_RANK = 4


def _ranges(numbers: Iterable[int]) -> str:
    """``0-3``, ``0, 2, 5-7``: sorted, each run of three or more as a range (two read better
    as ``3, 4`` than as ``3-4``)."""
    ordered = sorted(set(numbers))
    parts: list[str] = []
    start = 0
    while start < len(ordered):
        end = start
        while end + 1 < len(ordered) and ordered[end + 1] == ordered[end] + 1:
            end += 1
        if end - start >= 2:
            parts.append(f"{ordered[start]}-{ordered[end]}")
        else:
            parts.extend(str(n) for n in ordered[start : end + 1])
        start = end + 1
    return ", ".join(parts)


def replica_label(task_names: Sequence[str], *, trial_id: str | None = None) -> str:
    """The replicas named as a reader counts them: ``master 0, worker 0-3``.

    Roles come in the cluster's order (master or chief, workers, parameter servers,
    evaluators, then any other role in the order given), each with its indices as ranges;
    Vertex AI's names (``workerpool1-0``) read as the platform's. A name of another shape is
    kept as it is, after the roles. ``trial_id`` puts ``trial 3`` before it all.
    """
    indices: dict[str, list[int]] = {}
    others: list[str] = []
    for name in task_names:
        match = _TASK.fullmatch(task_from_vertex(name))
        if match:
            indices.setdefault(match[1], []).append(int(match[2]))
        elif name not in others:
            others.append(name)
    roles = sorted(indices, key=lambda role: _ROLE_RANK.get(role, _OTHER_RANK))
    label = ", ".join([*(f"{role} {_ranges(indices[role])}" for role in roles), *others])
    return f"trial {trial_id} {label}" if trial_id is not None else label


_TRIAL_NUMBER = re.compile(r"0|[1-9][0-9]{0,8}")
"""A trial id that is a number as written (``3``, not ``03``): it may join a range."""


def _trial_order(trial_id: str | None) -> tuple[int, int, str]:
    """Replicas outside any trial first, then trials by number (``2`` before ``10``), then
    trials with other ids."""
    if trial_id is None:
        return (0, 0, "")
    if _TRIAL_NUMBER.fullmatch(trial_id):
        return (1, int(trial_id), trial_id)
    return (2, 0, trial_id)


def group_label(replicas: Sequence[ReplicaStacks]) -> str:
    """The replicas of a group named (``replica_label``), trial by trial: trials with the same
    replicas share one name, ``trials 1-3, 5 master 0``; different ones are set apart by
    ``;`` (``trial 1 master 0, worker 0; trial 2 master 0``)."""
    by_trial: dict[str | None, list[str]] = {}
    for replica in replicas:
        by_trial.setdefault(replica.trial_id, []).append(replica.task_name)
    trials_of: dict[str, list[str | None]] = {}
    for trial_id in sorted(by_trial, key=_trial_order):
        trials_of.setdefault(replica_label(by_trial[trial_id]), []).append(trial_id)
    parts = []
    for names, trial_ids in trials_of.items():
        if None in trial_ids:
            parts.append(names)
        ids = [t for t in trial_ids if t is not None]
        if len(ids) == 1:
            parts.append(f"trial {ids[0]} {names}")
        elif ids:
            numbers = [int(t) for t in ids if _trial_order(t)[0] == 1]
            words = [t for t in ids if _trial_order(t)[0] != 1]
            parts.append(f"trials {', '.join(filter(None, [_ranges(numbers), *words]))} {names}")
    return "; ".join(parts)


class Origin(Enum):
    """Whose code a frame runs."""

    OWN = "own"
    """The program's: the trainer and whatever it ships beside it."""
    LIBRARY = "library"
    """Python's standard library (or its frozen modules)."""
    THIRD_PARTY = "third-party"
    """An installed package: ``site-packages``, ``dist-packages``."""


_INSTALLED = re.compile(r"(?:^|/)(?:site|dist)-packages/")
_STDLIB = re.compile(r"(?:^|/)lib(?:64)?/python\d+(?:\.\d+)?t?/")


def frame_origin(filename: str) -> Origin:
    """Whose code ``filename`` holds, from its path alone (a replica's files cannot be
    opened from here, and need not be)."""
    path = filename.replace("\\", "/")
    if _INSTALLED.search(path):
        return Origin.THIRD_PARTY
    if path.startswith("<frozen") or _STDLIB.search(path):
        return Origin.LIBRARY
    return Origin.OWN


FrameKey = tuple[str, str, int]
ThreadKey = tuple[bool, str, bool, tuple[FrameKey, ...]]
Signature = tuple[str | None, tuple[ThreadKey, ...]]
"""What two replicas share when their stacks are the same: an error's text, or each thread's
name, activity and frames, in an order of their own (not the dump's)."""


def _thread_key(thread: ThreadStack) -> ThreadKey:
    """A thread less what differs between replicas that stand at the same place: its id
    (and the process's), its locals, whether it holds the GIL at that instant."""
    frames = tuple((f.name, f.short_filename, f.line) for f in thread.frames)
    return (thread.name is None, thread.name or "", thread.active, frames)


def signature(replica: ReplicaStacks) -> Signature:
    """What makes two replicas' stacks the same (``fold``): equal error text, or the same
    threads by name and activity standing at the same lines of the same functions. Threads are
    sorted by their own content, so two processes that list them in another order still
    match."""
    if replica.error is not None:
        return (replica.error, ())
    return (None, tuple(sorted(_thread_key(t) for t in replica.threads)))


def main_thread(threads: Sequence[ThreadStack]) -> ThreadStack | None:
    """The thread a one-line summary is about: ``MainThread`` (where a trainer's loop runs),
    else the first one running, else the first; None when there are none."""
    for thread in threads:
        if thread.name == MAIN_THREAD:
            return thread
    return next((t for t in threads if t.active), threads[0] if threads else None)


def _own_frame(frames: Sequence[Frame]) -> int | None:
    """The index of the innermost frame in the program's own code, if any."""
    return next((i for i, f in enumerate(frames) if frame_origin(f.filename) is Origin.OWN), None)


def where(replica: ReplicaStacks) -> str:
    """Where a replica is, in one line: ``in `pull` ← `recv_into` (idle)`` is its main
    thread's innermost function of the program's own (``pull``) and the innermost of all
    (``recv_into``, what it waits on), the arrow left out when they are one frame; ``(idle)``
    when that thread was not running. A replica without a dump says why."""
    if replica.error is not None:
        return replica.error
    thread = main_thread(replica.threads)
    if thread is None:
        return "no threads"
    idle = "" if thread.active else " (idle)"
    if not thread.frames:
        return f"no Python frames{idle}"
    leaf = thread.frames[0]
    own = _own_frame(thread.frames)
    if own is None or own == 0:
        return f"in `{leaf.name}`{idle}"
    return f"in `{thread.frames[own].name}` ← `{leaf.name}`{idle}"


@dataclass(frozen=True)
class StackGroup:
    """Replicas whose stacks are the same (``signature``), in the order they came."""

    replicas: tuple[ReplicaStacks, ...]
    label: str
    """The replicas named (``group_label``): ``worker 0-3``."""
    summary: str
    """Where they are (``where`` of the first), or their common error."""

    @property
    def error(self) -> str | None:
        """The group's error, when its replicas could not be dumped."""
        return self.replicas[0].error


def fold(replicas: Sequence[ReplicaStacks]) -> list[StackGroup]:
    """The replicas folded by ``signature``: one group per distinct stacks (or error), in the
    order each group's first replica appears."""
    groups: dict[Signature, list[ReplicaStacks]] = {}
    for replica in replicas:
        groups.setdefault(signature(replica), []).append(replica)
    return [
        StackGroup(tuple(members), group_label(members), where(members[0]))
        for members in groups.values()
    ]


def _whose(group: StackGroup, *, with_locals: bool) -> str | None:
    """The line that says whose process the shown stacks are: a folded group shows one
    member's thread ids (and locals), which differ from the others'."""
    first = group.replicas[0]
    process = " ".join(
        filter(
            None,
            [
                f"pid {first.pid}" if first.pid is not None else "",
                f"on {first.node}" if first.node is not None else "",
            ],
        )
    )
    if len(group.replicas) == 1:
        return f"  ({process})" if process else None
    what = "thread ids and locals" if with_locals else "thread ids"
    member = replica_label([first.task_name], trial_id=first.trial_id)
    return f"  ({what} of {member}{', ' + process if process else ''})"


class LineKind(Enum):
    """What a line of a group's listing is (``group_lines``), for a view to style it."""

    HEADING = "heading"
    """The group's replicas, how many when folded, and where they are, or their error."""
    PROCESS = "process"
    """Whose process is shown: pid, node, and which member's ids a folded group shows."""
    THREAD = "thread"
    """A thread's id, name and state."""
    FRAME = "frame"
    """A function and its ``(file:line)``."""
    LOCAL = "local"
    """One local of the frame above: ``name = repr``."""
    NO_FRAMES = "no-frames"
    """A thread with no Python frames."""


@dataclass(frozen=True)
class StackLine:
    """One line of a group's listing: its text as ``render_text`` writes it, and what a view
    needs to style its parts without writing the text again (the TUI shows the CLI's words)."""

    kind: LineKind
    text: str
    """Indented and cut to ``LINE_WIDTH``, as ``render_text`` writes it."""
    split: int = 0
    """Where the line's second part starts (past the cut, when it was cut): a heading's
    summary or error after its replicas' names, a frame's ``(file:line)`` after its function,
    a local's value after its name."""
    origin: Origin | None = None
    """A frame's: whose code it runs (``frame_origin``)."""
    active: bool | None = None
    """A thread's: whether it was running; a heading's: whether the thread its summary is
    about was (None for an error, or a replica without threads)."""
    error: bool = False
    """A heading that gives the group's error instead of where it is."""


def _cut(kind: LineKind, head: str, tail: str, **facts: Any) -> StackLine:
    """A line of ``head`` then ``tail`` cut to ``LINE_WIDTH`` columns, ``…`` marking the cut."""
    line = head + tail
    if len(line) > LINE_WIDTH:
        line = line[: LINE_WIDTH - 1] + "…"
    return StackLine(kind, line, len(head), **facts)


def _thread_lines(thread: ThreadStack, *, with_locals: bool) -> list[StackLine]:
    """One thread as ``py-spy dump`` lists it: a heading, then its frames innermost first,
    each with its locals below when asked for."""
    state = "active" if thread.active else "idle"
    if thread.owns_gil:
        state += ", holds the GIL"
    name = f' "{thread.name}"' if thread.name is not None else ""
    heading = f"  Thread {thread.thread_id}{name} "
    lines = [_cut(LineKind.THREAD, heading, f"({state})", active=thread.active)]
    if not thread.frames:
        lines.append(StackLine(LineKind.NO_FRAMES, "    (no Python frames)"))
    for frame in thread.frames:
        origin = frame_origin(frame.filename)
        where_at = f"({frame.short_filename}:{frame.line})"
        lines.append(_cut(LineKind.FRAME, f"    {frame.name} ", where_at, origin=origin))
        if with_locals and frame.locals:
            for local in frame.locals:
                value = local.repr if local.repr is not None else "(unreadable)"
                lines.append(_cut(LineKind.LOCAL, f"        {local.name} = ", value))
    return lines


def group_lines(group: StackGroup, *, locals: bool) -> list[StackLine]:  # noqa: A002
    """One group's listing (``render_text`` joins them): a heading (its replicas, how many
    when folded, where they are, or their error), whose process is shown, then each thread
    of its first replica (the one the summary is about first). ``locals`` lists each frame's
    locals under it."""
    count = len(group.replicas)
    if group.error is not None:
        many = f" ({count} replicas)" if count > 1 else ""
        return [_cut(LineKind.HEADING, f"{group.label}{many}: ", group.error, error=True)]
    threads = group.replicas[0].threads
    first = main_thread(threads)
    many = f" ({count} replicas, the same stacks)" if count > 1 else ""
    active = first.active if first is not None else None
    lines = [_cut(LineKind.HEADING, f"{group.label}{many}: ", group.summary, active=active)]
    whose = _whose(group, with_locals=locals)
    if whose is not None:
        lines.append(StackLine(LineKind.PROCESS, whose))
    for thread in sorted(threads, key=lambda t: t is not first):
        lines.extend(_thread_lines(thread, with_locals=locals))
    return lines


def render_text(groups: Sequence[StackGroup], *, locals: bool) -> list[str]:  # noqa: A002
    """The groups as text, for the CLI to print and the TUI to copy: each group's listing
    (``group_lines``), a blank line between groups. ``locals`` lists each frame's locals
    (``name = repr``) under it; the name is the service's flag, shadowing the builtin on
    purpose."""
    lines: list[str] = []
    for group in groups:
        if lines:
            lines.append("")
        lines.extend(line.text for line in group_lines(group, locals=locals))
    return lines
