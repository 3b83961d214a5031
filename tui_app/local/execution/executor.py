"""The one seam between "run replica R of job J with this spec" and wherever a process runs it.

The runner (``runner.py``, ``trials.py``) decides everything about a job: admission order,
packages, the replicas' environment, limits, the outcome. An executor only places and runs what
it is given, and answers for it: where each replica's cluster address is, whether it still runs,
how it ended, what it uses, how to stop it, and how a restarted service finds it again. The
service, the scheduler and the recovery code hold an ``Executor`` and never ask which one it is;
the one thing they learn beyond that is the node a replica reports, to show it.

Two implement it: ``local_executor.LocalExecutor`` (every replica a supervisor process on this
machine: the default) and ``ray_executor.RayExecutor`` (replicas on a Ray cluster's nodes, one
placement group per job). ``config/executors.py`` registers each by name with the factory that
builds it (``ExecutorFactory``), which ``factory_for`` imports only when that executor is asked for.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from tui_app.config.executors import executor_entry
from tui_app.local.execution.stack_dumps import Dump
from tui_app.model.jobs.cluster import Replica
from tui_app.model.running.capacity import Capacity, Demand

RunKey = tuple[str, str, str | None]
"""(project, job id, trial id or None): one run of replicas (a job, or one trial of it)."""

Note = Callable[[str], None]
"""Writes a line to the job's log (the executor says what it waits for)."""


class ExecutorError(Exception):
    """An executor cannot be used as configured (the message says why and what to do)."""


@dataclass(frozen=True)
class Endpoint:
    """Where a replica is reached by the others: its node's address and a port kept for it."""

    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


class ReplicaProcess(Protocol):
    """A replica as the runner watches it, started here or adopted after a restart."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None:
        """None while the replica runs; an int once it has ended (its status says how)."""

    @property
    def node(self) -> dict[str, str] | None:
        """Where it runs (``{"address", "id"}``), None for this machine."""

    @property
    def lost(self) -> str | None:
        """Why the replica is gone without an end of its own (its node died), else None."""

    @property
    def gpus(self) -> tuple[str, ...]:
        """The GPU ids the executor itself gave the replica (Ray's, on its node); empty where
        the service assigned them (the runner's own assignment says which)."""

    def send_signal(self, sig: int) -> None:
        """Ask it to stop (SIGTERM: the supervisor escalates to SIGKILL after the grace)."""

    async def wait(self) -> int: ...

    def kill_tree(self) -> None:
        """Last resort when it does not stop: kill its whole process tree now."""

    def record(self) -> dict[str, Any]:
        """What a restarted service needs to find it again (goes in the job's runtime)."""


class Placement(Protocol):
    """The replicas of one run, placed: their addresses are known before any starts."""

    def endpoint(self, index: int) -> Endpoint:
        """Where replica ``index`` (in the run's order) listens, for TF_CONFIG and torch."""

    async def prepare(self, reps: Sequence[Replica], pythonpath: Path | None) -> None:
        """Make the job's installed packages (``pythonpath``) usable wherever the run's
        replicas will start, before any starts (a Ray node may build a runtime environment).

        Raises:
            ExecutorError: a replica's machine cannot run them; the message names it and why.
        """

    async def start(
        self, index: int, replica: Replica, spec: dict[str, Any], pythonpath: Path | None
    ) -> ReplicaProcess:
        """Start replica ``index``'s supervisor on ``spec`` (its paths under the service's work
        dir for the replica, ``spec["cwd"]``); the output files end up in that dir whatever
        node ran it."""


class Executor(Protocol):
    """Where a service's replicas run (see the module doc)."""

    name: str
    """Its name in ``config/executors.py`` (``local``, ``ray``), for ``/healthz`` and
    ``:environment``."""

    ships_output: bool
    """Whether its replicas send their output files to the service over HTTP
    (``storage/replica_output.py``): only then may their credentials use that route."""

    def describe(self) -> str:
        """One line for the service's start-up output."""

    def refuse(self, training_input: Mapping[str, Any]) -> None:
        """Raise ApiError INVALID_ARGUMENT, naming the field, when a replica of this job could
        never be placed (no node is big enough); return when it may wait its turn."""

    async def place(
        self, key: RunKey, training_input: Mapping[str, Any], reps: Sequence[Replica], note: Note
    ) -> Placement:
        """Reserve what the run's replicas need, all or nothing; waits (the caller cancels the
        wait) until every replica fits, saying why it waits through ``note`` once."""

    def waiting(self, key: RunKey) -> str | None:
        """Why ``place`` still waits for this run, in words; None when it does not."""

    def adopt(self, key: RunKey, record: Mapping[str, Any]) -> ReplicaProcess:
        """The replica a runtime record names, found again after a service restart (one that
        is gone answers ``returncode`` at once)."""

    async def release(self, key: RunKey) -> None:
        """The run is over: give back what ``place`` reserved and whatever still runs."""

    async def reclaim(self, live: set[tuple[str, str]]) -> int:
        """At start, after recovery: give back what runs of jobs that are no longer live still
        hold (a service stopped while a placement was in flight); ``live`` is (project, job id)
        of every job taken over. How many runs were reclaimed."""

    async def sweep(self, workdirs: Sequence[Path]) -> int:
        """Kill processes of these replicas that outlived their supervisors; how many."""

    def shortfall(self, demand: Demand, fitted: Demand, capacity: Capacity) -> list[str]:
        """What to tell the user when the job got less than it asked for."""

    def admission(self, machine: Capacity) -> Capacity:
        """What the service's scheduler shares out, in order of priority and arrival: this
        machine's slots and GPUs for the local executor; for a cluster, whose own scheduler
        decides what fits where, no limit at all."""

    def usage(self, records: Sequence[Mapping[str, Any]]) -> dict[int, tuple[float, int]]:
        """CPU seconds used so far and RSS bytes, by position in ``records``, of the replicas
        this executor measures itself (the local one leaves its processes to the sampler)."""

    def stacks(self, record: Mapping[str, Any], with_locals: bool) -> Dump:
        """The Python stacks of the live replica a runtime record names, taken where it runs
        (blocking; ``stack_dumps``).

        Raises:
            DumpFailed: they cannot be taken; the message says why, for the user.
        """

    async def start(self) -> None: ...

    async def close(self) -> None: ...


class ExecutorFactory(Protocol):
    """How the service builds the executor its ``--executor`` names (``service_cli``).

    ``options`` is the service's ``service_cli.ServiceOptions``, which this room may not import
    (an import-linter contract): each factory reads only the fields it needs, typed by a
    protocol of its own (``ray_executor.RayServiceOptions``)."""

    def __call__(self, state_root: Path, options: Any) -> Executor: ...


def factory_for(name: str) -> ExecutorFactory:
    """The factory ``config/executors.py`` registers for the executor ``name``, its module
    imported now: only the Ray executor's modules import Ray (an import-linter contract), and
    the service imports them only when ``--executor ray`` asks for them.

    Raises:
        KeyError: no executor is registered as ``name``.
    """
    module, _, attribute = executor_entry(name).factory.partition(":")
    factory: ExecutorFactory = getattr(importlib.import_module(module), attribute)
    return factory
