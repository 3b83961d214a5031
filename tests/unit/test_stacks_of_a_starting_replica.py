"""A replica whose process runs but holds no Python thread yet (its trainer is starting) is
answered with why not, never with an empty list of threads: clients refuse a replica with
neither, and a whole ``:stacks`` answer with it (seen as a flaky failure of
``tests/service/test_stalls.py`` when the stacks were asked for just after RUNNING)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from tui_app.local.execution.executor import Executor
from tui_app.local.execution.runner import ReplicaHandle
from tui_app.local.execution.stack_dumps import Dump
from tui_app.local.job_stacks import _take
from tui_app.model.stacks import JobStacks


class NoThreadsYet:
    """An executor whose dump finds the replica's process but no Python thread in it."""

    def stacks(self, record: dict[str, Any], with_locals: bool) -> Dump:
        return Dump(pid=4242, threads=[])


def test_a_replica_with_no_python_thread_yet_is_answered_with_why(tmp_path: Path) -> None:
    proc = SimpleNamespace(returncode=None, node=None, record=lambda: {"pid": 4242})
    handle = ReplicaHandle(
        replica=cast(Any, SimpleNamespace(task_name="master-replica-0")),
        workdir=tmp_path,
        proc=cast(Any, proc),
    )
    got = _take(cast(Executor, NoThreadsYet()), None, None, handle, with_locals=False)
    assert got.threads == ()
    assert got.error is not None and "no Python thread" in got.error
    # What the service sends is what a client reads back.
    wire = {"takenAt": "2026-12-07T21:00:00Z", "locals": False, "replicas": [got.to_json()]}
    (replica,) = JobStacks.from_json(wire).replicas
    assert replica.task_name == "master-replica-0" and replica.error == got.error
