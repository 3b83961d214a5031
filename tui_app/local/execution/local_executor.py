"""The default executor: every replica a supervisor process on the service's own machine.

Admission and capacity stay with the service's scheduler (CPU slots and GPUs of this machine);
this module only starts supervisors, finds them again after a restart and cleans up after them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
import weakref
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import psutil

from tui_app.local.execution.cluster_env import REPLICA_MARKER, free_ports
from tui_app.local.execution.executor import Endpoint, Note, ReplicaProcess, RunKey
from tui_app.local.execution.stack_dumps import Dump, DumpFailed, dump_tree
from tui_app.local.execution.supervisor import stop_signals_held
from tui_app.model.jobs.cluster import Replica
from tui_app.model.jobs.tiers import Role
from tui_app.model.running.capacity import Capacity, Demand, shortfall_notes

SUPERVISOR_MODULE = "tui_app.local.execution.supervisor"
ADOPTED_POLL_SECONDS = 0.1
SWEEP_SECONDS = 5.0


class StartedSupervisor:
    """A supervisor this service started: its child, waited on directly."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self._proc = proc
        try:
            self._created: float | None = psutil.Process(proc.pid).create_time()
        except psutil.Error:
            self._created = None

    @property
    def pid(self) -> int:
        return self._proc.pid

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode

    node = None
    lost = None
    gpus: tuple[str, ...] = ()

    def send_signal(self, sig: int) -> None:
        self._proc.send_signal(sig)

    async def wait(self) -> int:
        return await self._proc.wait()

    def kill_tree(self) -> None:
        _kill_tree(self.pid if self.returncode is None else None)

    def record(self) -> dict[str, Any]:
        return {"supervisor": self.pid, "supervisor_started": self._created}


class AdoptedSupervisor:
    """A supervisor an earlier run of the service started (after a crash): not our child, so it
    is watched by polling, and signalled only while it is still that same process (psutil
    checks its create time, so a recycled pid is never signalled)."""

    def __init__(self, proc: psutil.Process | None, record: Mapping[str, Any]) -> None:
        self._proc = proc
        self.pid = proc.pid if proc is not None else 0
        self._record = {k: record.get(k) for k in ("supervisor", "supervisor_started")}

    node = None
    lost = None
    gpus: tuple[str, ...] = ()

    @property
    def returncode(self) -> int | None:
        """None while the supervisor runs; 0 once it is gone (its replica's status is in the
        status file, as for a supervisor this service started)."""
        if self._proc is None:
            return 0
        try:
            alive = self._proc.is_running() and self._proc.status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            alive = False
        if not alive:
            self._proc = None
            return 0
        return None

    def send_signal(self, sig: int) -> None:
        if self._proc is None:
            raise ProcessLookupError(self.pid)
        try:
            self._proc.send_signal(sig)
        except psutil.Error as exc:
            raise ProcessLookupError(self.pid) from exc

    async def wait(self) -> int:
        while self.returncode is None:
            await asyncio.sleep(ADOPTED_POLL_SECONDS)
        return 0

    def kill_tree(self) -> None:
        _kill_tree(self.pid if self.returncode is None else None)

    def record(self) -> dict[str, Any]:
        return dict(self._record)


def find_supervisor(rep: Mapping[str, Any]) -> psutil.Process | None:
    """The live supervisor a runtime record names, or None when it is gone.

    It must be the same process: its command line runs the supervisor on this replica's spec and,
    when recorded, its create time matches (a recycled pid fails both).
    """
    pid = rep.get("supervisor")
    if not isinstance(pid, int) or pid <= 0:
        return None
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return None
        cmdline = proc.cmdline()
        started = rep.get("supervisor_started")
        if isinstance(started, (int, float)) and abs(proc.create_time() - started) > 1.0:
            return None
    except psutil.Error:
        return None
    spec = str(Path(rep.get("dir", "")) / "spec.json")
    if SUPERVISOR_MODULE not in cmdline or spec not in cmdline:
        return None
    return proc


class LocalPlacement:
    """Ports on 127.0.0.1 for the run's cluster members; supervisors started as children."""

    def __init__(self, reps: Sequence[Replica]) -> None:
        members = sum(r.role is not Role.EVALUATOR for r in reps)
        ports = iter(free_ports(members))
        self._endpoints = [
            Endpoint("127.0.0.1", 0 if r.role is Role.EVALUATOR else next(ports)) for r in reps
        ]

    def endpoint(self, index: int) -> Endpoint:
        return self._endpoints[index]

    async def prepare(self, reps: Sequence[Replica], pythonpath: Path | None) -> None:
        """Nothing: replicas run where the service installed the packages."""

    async def start(
        self, index: int, replica: Replica, spec: dict[str, Any], pythonpath: Path | None
    ) -> ReplicaProcess:
        workdir = Path(spec["cwd"])
        spec_path = workdir / "spec.json"
        # The supervisor gets its own copy of the log fd; ours closes right after the spawn.
        # One spawn at a time: the signal mask is the thread's, and two holds overlapping
        # across the await would restore each other's masks out of order, leaving the
        # service's own SIGTERM blocked.
        async with _spawn_lock():
            with open(workdir / "supervisor.log", "ab") as sup_log, stop_signals_held():
                proc = await asyncio.create_subprocess_exec(
                    sys.executable,
                    "-m",
                    SUPERVISOR_MODULE,
                    str(spec_path),
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.DEVNULL,
                    stderr=sup_log,
                    start_new_session=True,
                )
        return StartedSupervisor(proc)


_SPAWNING: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
    weakref.WeakKeyDictionary()
)


def _spawn_lock() -> asyncio.Lock:
    """Held while a supervisor is spawned (``LocalPlacement.start``): one per event loop, as
    an asyncio lock belongs to the loop it first waited on."""
    loop = asyncio.get_running_loop()
    lock = _SPAWNING.get(loop)
    if lock is None:
        lock = _SPAWNING[loop] = asyncio.Lock()
    return lock


class LocalExecutor:
    """Replicas as supervisor processes on this machine (see the module doc)."""

    name = "local"
    ships_output = False
    """Replicas write their files in the state dir themselves (their supervisors do)."""

    def describe(self) -> str:
        return "replicas run as processes on this machine"

    def refuse(self, training_input: Mapping[str, Any]) -> None:
        """Nothing is refused for size: a job bigger than the machine is cut down to it
        (``model.capacity.fit``) and time-shares the CPUs."""

    async def place(
        self, key: RunKey, training_input: Mapping[str, Any], reps: Sequence[Replica], note: Note
    ) -> LocalPlacement:
        return LocalPlacement(reps)

    def waiting(self, key: RunKey) -> str | None:
        return None

    def adopt(self, key: RunKey, record: Mapping[str, Any]) -> ReplicaProcess:
        return AdoptedSupervisor(find_supervisor(record), record)

    async def release(self, key: RunKey) -> None:
        return None

    async def reclaim(self, live: set[tuple[str, str]]) -> int:
        return 0  # leftover processes are found by the runners' sweeps

    async def sweep(self, workdirs: Sequence[Path]) -> int:
        return await asyncio.to_thread(sweep_leftovers, {str(w) for w in workdirs})

    def shortfall(self, demand: Demand, fitted: Demand, capacity: Capacity) -> list[str]:
        return shortfall_notes(demand, fitted, capacity)

    def admission(self, machine: Capacity) -> Capacity:
        return machine

    def usage(self, records: Sequence[Mapping[str, Any]]) -> dict[int, tuple[float, int]]:
        return {}  # the sampler reads this machine's process trees itself

    def stacks(self, record: Mapping[str, Any], with_locals: bool) -> Dump:
        sup = find_supervisor(record)
        if sup is None:
            raise DumpFailed("it ended meanwhile")
        return dump_tree(sup.pid, skip_root=True, with_locals=with_locals)

    async def start(self) -> None:
        return None

    async def close(self) -> None:
        return None


def local_executor(state_root: Path, options: object) -> LocalExecutor:
    """The ``executor.ExecutorFactory`` ``config/executors.py`` registers for ``local``: it
    needs none of the service's options."""
    return LocalExecutor()


def _kill_tree(pid: int | None) -> None:
    """Kill a supervisor and its replica's whole tree."""
    procs: list[psutil.Process] = []
    if pid is not None:
        try:
            sup = psutil.Process(pid)
            procs = [sup, *sup.children(recursive=True)]
        except psutil.Error:
            pass
    for p in procs:
        with contextlib.suppress(psutil.Error):
            p.kill()


def _marked(proc: psutil.Process, workdirs: Collection[str]) -> bool:
    env = proc.info.get("environ") or {}
    return env.get(REPLICA_MARKER) in workdirs and proc.info.get("status") != psutil.STATUS_ZOMBIE


def sweep_leftovers(workdirs: Collection[str], seconds: float = SWEEP_SECONDS) -> int:
    """SIGKILL every live process whose environment marks it as one of these replicas'.

    A replica's tree normally dies with its supervisor (a child subreaper that kills all it
    adopted); this catches what a supervisor killed from outside left behind, whose orphans
    init adopted. Repeated until none is left (a dying parent may fork meanwhile) or for at most
    ``seconds``. Returns how many processes were killed.
    """
    killed: set[int] = set()
    deadline = time.monotonic() + seconds
    while True:
        found = [
            p
            for p in psutil.process_iter(["environ", "status"])
            if p.pid != os.getpid() and _marked(p, workdirs)
        ]
        for p in found:
            with contextlib.suppress(psutil.Error):
                p.kill()
                killed.add(p.pid)
        if not found or time.monotonic() > deadline:
            return len(killed)
        time.sleep(0.02)
