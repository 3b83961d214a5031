"""The ``:stacks`` extension: every live replica's Python threads now, or as they were when the
job stalled.

::

    GET /v1/projects/{project}/jobs/{job}:stacks[?replica=TASK][&trialId=ID][&locals=true]
    GET /v1/projects/{project}/jobs/{job}:stacks?at=stall

The answer is ``tui_app.model.stacks``'s wire format (docs/stalls.md): one entry per replica, its
threads, or ``error`` saying why that replica's could not be taken. Dumps run in threads, all
replicas at once (py-spy takes ~15 ms each; a Ray replica's is taken on its node).

Locals are left out unless asked for: they can hold secrets (a token in a config object), and a
dump kept with the job when it stalled never has them.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_app.local.environments import containers
from tui_app.local.errors import ApiError
from tui_app.local.execution.stack_dumps import Dump, DumpFailed, dump_tree
from tui_app.local.execution.stall_watch import STALL_STACKS_FILE
from tui_app.local.timefmt import log_time
from tui_app.model.jobs.states import JobState
from tui_app.model.stacks import JobStacks, ReplicaStacks, StackFormatError, parse_dump

if TYPE_CHECKING:
    from tui_app.local.execution.executor import Executor
    from tui_app.local.execution.runner import JobRunner, ReplicaHandle

SAVED_MAX_BYTES = 16 << 20


def _node(handle: ReplicaHandle) -> str | None:
    node = handle.proc.node if handle.proc is not None else None
    return node.get("address") if node else None


def _take(
    executor: Executor,
    engine: containers.Engine | None,
    trial: str | None,
    handle: ReplicaHandle,
    with_locals: bool,
) -> ReplicaStacks:
    """One replica's stacks, or why not (blocking)."""
    name = handle.replica.task_name
    try:
        if handle.proc is None or handle.proc.returncode is not None:
            raise DumpFailed("it ended meanwhile")
        got: Dump
        if handle.container and engine is not None and handle.proc.node is None:
            pid = containers.host_pid(engine, handle.container)
            if pid is None:
                raise DumpFailed(f"its container {handle.container} is not running")
            got = dump_tree(pid, skip_root=False, with_locals=with_locals)
        else:
            # The record as the runtime keeps it: an executor checks the process is still the
            # replica's (its spec in the command line) before reading it.
            record = {**handle.proc.record(), "dir": str(handle.workdir), "task_name": name}
            got = executor.stacks(record, with_locals)
        threads = parse_dump(got.threads)
        if not threads:
            # The replica's process runs, but no Python thread is there to read yet (its
            # trainer is starting). A replica is sent with its threads or with why not: one
            # with neither is refused by every client (``ReplicaStacks.from_json``).
            raise DumpFailed("it has no Python thread to read yet (its trainer is starting)")
    except (DumpFailed, StackFormatError) as exc:
        return ReplicaStacks(name, trial, None, (), str(exc), _node(handle))
    return ReplicaStacks(name, trial, got.pid, threads, None, _node(handle))


async def take(
    executor: Executor,
    engine: containers.Engine | None,
    replicas: Sequence[tuple[str | None, ReplicaHandle]],
    with_locals: bool,
) -> JobStacks:
    """The stacks of ``replicas`` (trial id, handle), taken at once."""
    taken = log_time(int(time.time() * 1_000_000))
    got = await asyncio.gather(
        *(asyncio.to_thread(_take, executor, engine, t, h, with_locals) for t, h in replicas)
    )
    return JobStacks(taken, tuple(got), with_locals)


def pick(
    runner: JobRunner | None,
    job: dict[str, Any],
    replica: str | None,
    trial: str | None,
    stalled: bool = False,
) -> list[tuple[str | None, ReplicaHandle]]:
    """The live replicas asked for.

    ``stalled``: stacks were kept when the job stalled (the refusal says where they are).

    Raises:
        ApiError: FAILED_PRECONDITION when the job runs none; NOT_FOUND for a replica it does
            not run (the message lists those it runs).
    """
    live = runner.live_replicas() if runner is not None else []
    job_id = job["jobId"]
    if not live:
        state = JobState(job["state"])
        kept = " Its stacks from when it stalled: ?at=stall." if stalled else ""
        raise ApiError(
            "FAILED_PRECONDITION",
            f"The job {job_id} has no replica running now ({state.value}).{kept}",
        )
    chosen = [
        (t, h)
        for t, h in live
        if (replica is None or h.replica.task_name == replica) and (trial is None or t == trial)
    ]
    if not chosen:
        names = ", ".join(
            f"{h.replica.task_name} (trial {t})" if t else h.replica.task_name for t, h in live
        )
        asked = replica or ""
        if trial:
            asked = f"{asked} of trial {trial}".strip()
        raise ApiError("NOT_FOUND", f"The job {job_id} runs no replica {asked}; it runs {names}.")
    return chosen


def kept(job_dir: Path) -> bool:
    """Whether stacks were kept when the job stalled."""
    return (job_dir / STALL_STACKS_FILE).is_file()


def keep(job_dir: Path, stacks: JobStacks) -> None:
    """Keep the stacks taken when the job stalled (blocking)."""
    path = job_dir / STALL_STACKS_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(stacks.to_json()))
    tmp.replace(path)


def saved(job_dir: Path, job_id: str) -> dict[str, Any]:
    """The stacks kept when the job stalled.

    Raises:
        ApiError: NOT_FOUND when it never stalled (or they could not be kept).
    """
    path = job_dir / STALL_STACKS_FILE
    try:
        with path.open("rb") as f:
            data = f.read(SAVED_MAX_BYTES)
        return JobStacks.from_json(json.loads(data)).to_json()
    except (OSError, ValueError):
        raise ApiError(
            "NOT_FOUND", f"The job {job_id} has no stacks from a stall: it never stalled."
        ) from None
