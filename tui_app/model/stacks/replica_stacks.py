"""A job's stacks as the service answers ``:stacks``: each replica's threads, or why it has none.

The service dumps every replica of a job at about the same moment and sends them in one answer,
so that a reader can see which replicas wait where (a hung collective shows as every worker in
the same ``recv``, one of them elsewhere). The answer is JSON in the API's manner: camelCase
keys, int64 values (thread ids) as decimal strings, RFC 3339 times; ``to_json`` writes it and
``from_json`` reads it back.

The client reads what a server sent, and a server may be another version or not the service at
all, so ``from_json`` checks as much as ``parse_dump`` does: the same bounds, clean strings,
and a ``StackFormatError`` that names the replica, the thread and the field that is wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tui_app.model.jobs.wire import parse_time
from tui_app.model.stacks.py_spy import (
    WIRE_KEYS,
    Frame,
    StackFormatError,
    ThreadStack,
    maybe_str,
    need_bool,
    need_int,
    need_list,
    need_mapping,
    need_str,
    read_threads,
)

__all__ = ["MAX_REPLICAS", "NO_STACKS_ENDPOINT", "JobStacks", "ReplicaStacks"]

NO_STACKS_ENDPOINT = "This endpoint has no stacks: only the local jobs service takes them."
"""What the view and ``tui-app jobs stacks`` say where the endpoint has no ``:stacks`` (a
cloud one)."""

MAX_REPLICAS = 1024
"""Replicas kept from one answer: more than any job the service runs (trials included)."""

_PID_END = 2**31
"""pids are positive 32-bit numbers on Linux (``pid_max`` is at most 2**22)."""


def _frame_json(frame: Frame) -> dict[str, Any]:
    """A frame in the wire's spelling; ``locals`` only when the dump read them."""
    out: dict[str, Any] = {
        "name": frame.name,
        "filename": frame.filename,
        "shortFilename": frame.short_filename,
        "line": frame.line,
    }
    if frame.locals is not None:
        out["locals"] = [{"name": v.name, "repr": v.repr, "arg": v.arg} for v in frame.locals]
    return out


def _thread_json(thread: ThreadStack) -> dict[str, Any]:
    """A thread in the wire's spelling: its id as a decimal string (an int64 above 2**53,
    which JavaScript and some JSON readers would round)."""
    return {
        "threadId": str(thread.thread_id),
        "name": thread.name,
        "active": thread.active,
        "ownsGil": thread.owns_gil,
        "frames": [_frame_json(f) for f in thread.frames],
    }


@dataclass(frozen=True)
class ReplicaStacks:
    """One replica's dump: its threads, or the ``error`` that says why there are none (``it
    is not a Python process (/usr/bin/bash)``). Where both are set, the error is what counts:
    the threads of a dump that failed halfway are not the replica's state."""

    task_name: str
    """``worker-replica-0``."""
    trial_id: str | None
    """The trial, for a replica of a tuning job's trial; else None."""
    pid: int | None
    """The process dumped; None when it could not be found."""
    threads: tuple[ThreadStack, ...]
    error: str | None
    node: str | None = None
    """The machine it runs on (``10.0.0.3``) when the job spans several; else None."""

    def to_json(self) -> dict[str, Any]:
        """The replica as the service sends it: optional keys left out when empty, and either
        ``threads`` or ``error``."""
        out: dict[str, Any] = {"taskName": self.task_name}
        if self.trial_id is not None:
            out["trialId"] = self.trial_id
        if self.pid is not None:
            out["pid"] = self.pid
        if self.node is not None:
            out["node"] = self.node
        if self.error is not None:
            out["error"] = self.error
        else:
            out["threads"] = [_thread_json(t) for t in self.threads]
        return out

    @classmethod
    def from_json(cls, raw: object, where: str = "replica") -> ReplicaStacks:
        """A replica as the service sent it; ``where`` names it in errors.

        Raises:
            StackFormatError: a field is missing or of the wrong type, or the replica has
                neither threads nor an error.
        """
        entry = need_mapping(raw, where)
        task_name = need_str(entry, "taskName", where)
        if not task_name:
            raise StackFormatError(f"{where}: 'taskName' is empty")
        here = f"{where} ({task_name})"
        pid = None
        if entry.get("pid") is not None:
            pid = need_int(entry, "pid", here, low=1, end=_PID_END, strings=True)
        trial_id = maybe_str(entry, "trialId", here)
        node = maybe_str(entry, "node", here)
        # One line: a dump's error may be py-spy's stderr, several lines of it.
        error = maybe_str(entry, "error", here, one_line=True)
        if error is not None:
            return cls(task_name, trial_id, pid, (), error or "the dump failed", node)
        threads = read_threads(
            entry.get("threads"), f"{here}: 'threads'", WIRE_KEYS, prefix=f"{here} "
        )
        if not threads:
            raise StackFormatError(f"{here} has neither threads nor an error")
        return cls(task_name, trial_id, pid, threads, None, node)


@dataclass(frozen=True)
class JobStacks:
    """The service's answer to ``:stacks``: every replica's dump, taken at about one time."""

    taken_at: str
    """When the dumps were taken (RFC 3339, the service's clock)."""
    replicas: tuple[ReplicaStacks, ...]
    locals: bool
    """Whether the dumps hold each frame's locals (``py-spy dump --locals``)."""

    def to_json(self) -> dict[str, Any]:
        """The answer as the service sends it."""
        return {
            "takenAt": self.taken_at,
            "locals": self.locals,
            "replicas": [r.to_json() for r in self.replicas],
        }

    @classmethod
    def from_json(cls, raw: object) -> JobStacks:
        """The answer as a client reads it: the first ``MAX_REPLICAS`` replicas, each checked
        (``ReplicaStacks.from_json``).

        Raises:
            StackFormatError: the answer or one of its replicas is malformed; the message
                says which and why.
        """
        body: Mapping[str, Any] = need_mapping(raw, "the stacks answer")
        taken_at = need_str(body, "takenAt", "the stacks answer")
        if parse_time(taken_at) is None:
            raise StackFormatError(f"the stacks answer: 'takenAt' is not a time ({taken_at!r})")
        with_locals = need_bool(body, "locals", "the stacks answer", default=False)
        items = need_list(body.get("replicas"), "the stacks answer: 'replicas'")
        replicas = tuple(
            ReplicaStacks.from_json(item, f"replica {index}")
            for index, item in enumerate(items[:MAX_REPLICAS])
        )
        return cls(taken_at, replicas, with_locals)
