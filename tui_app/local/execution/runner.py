"""One job's life: QUEUED -> PREPARING -> RUNNING -> SUCCEEDED | FAILED, or CANCELLED.

The runner installs the packages, starts a supervisor per replica, watches them, and decides the
outcome the way the platform did: the master's exit decides the job, a failing worker or
evaluator fails it, and whatever still runs when the job ends (parameter servers, workers) is
stopped. The job turns terminal only after every byte its replicas wrote is in the log store.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from tui_app.local.environments import containers, packages
from tui_app.local.environments.runtime_envs import RuntimeEnvError
from tui_app.local.execution.cluster_env import (
    REPLICA_MARKER,
    cluster_addresses,
    gpu_env,
    replica_env,
)
from tui_app.local.execution.executor import ExecutorError, Placement, ReplicaProcess, RunKey
from tui_app.local.execution.scheduler import Grant
from tui_app.local.logs.log_ingest import LogSource
from tui_app.local.storage.storage_env import REPLICA_OUTPUT_FILES, STATUS_MAX_BYTES
from tui_app.local.timefmt import job_time, parse_job_time
from tui_app.local.untrusted_files import opened_beneath, read_at, read_beneath
from tui_app.model.jobs.cluster import Replica, replicas
from tui_app.model.jobs.job_images import container_entry, job_images, replica_image
from tui_app.model.jobs.runtimes import RuntimeRefused, missing_module_hint
from tui_app.model.jobs.states import JobState
from tui_app.model.jobs.tiers import MACHINE_TYPES, Role
from tui_app.model.logs.failure_cause import job_failed_line
from tui_app.model.logs.severity import SEVERITIES
from tui_app.model.logs.tracebacks import error_summary
from tui_app.model.running.capacity import Demand, fit, job_demand
from tui_app.model.running.limits import TimeLimit, running_limit, wait_limit
from tui_app.model.running.queue_wait import wait_summary
from tui_app.model.running.restarts import (
    JOB_RETRY_LIMIT,
    NODE_WAIT_SECONDS,
    PERMANENT_STATUSES,
    WHOLE_JOB,
    Attempt,
    Cause,
    Ending,
    RestartHistory,
    Verdict,
    attempt_lines,
    decide,
    exit_is_permanent,
    job_retry_line,
    restarts_resource,
)

if TYPE_CHECKING:
    from tui_app.local.execution.runner_host import RunnerHost

log = logging.getLogger(__name__)

STDERR_TAIL_BYTES = 256 * 1024
SUPERVISOR_SLACK_SECONDS = 5.0


PACKAGE_COPIES = ".packages"
"""The folder in a job's dir its packages are copied to while they install (a dot: no replica's
task name starts with one)."""


@dataclass
class ReplicaHandle:
    """A running replica: its supervisor process and its files."""

    replica: Replica
    workdir: Path
    proc: ReplicaProcess | None = None
    sources: list[LogSource] = field(default_factory=list)
    status: dict[str, Any] | None = None
    container: str | None = None
    """The container's name, for a replica of a custom-container job."""
    started: float = field(default_factory=time.time)
    """When this run of it started (or was adopted): a replica that never printed is silent
    since then (``stall_watch``)."""

    @property
    def status_path(self) -> Path:
        return self.workdir / "status.json"

    @property
    def stderr_path(self) -> Path:
        return self.workdir / "stderr.log"

    def read_status(self) -> dict[str, Any]:
        # A Ray replica's status arrives over the output route: read it as a file a replica
        # wrote (``untrusted_files``), within the route's cap.
        try:
            data = read_beneath(self.workdir, "status.json", 0, STATUS_MAX_BYTES)
            return dict(json.loads(data))
        except (OSError, ValueError, TypeError):
            return {"exit_code": None, "signal": None, "lost": True}


def _out_of_memory(st: dict[str, Any], code: object) -> bool:
    """Whether a container replica's end (its status ``st``, its ``code``) is an OOM kill.

    podman on cgroup v1 does not always record an OOM kill; nothing else but the kernel
    SIGKILLs a container that nobody stopped, so a 137 under a memory limit is one."""
    limit = st.get("memory_limit") or 0
    return bool(
        st.get("oom_killed")
        or ("container" in st and code == 137 and limit and not st.get("stopped"))
    )


def _engine_failed(st: dict[str, Any], code: object) -> bool:
    """Whether a container replica never ran: the run's status is one the engine keeps for
    itself (``PERMANENT_STATUSES``) and the container recorded none of its own."""
    return "container" in st and code in PERMANENT_STATUSES and not st.get("container_exit_code")


def _signal_of_status(code: object) -> str | None:
    """The signal an exit status of 128 + N says killed the process (``SIGKILL``), else None."""
    if isinstance(code, int) and code > 128 and code - 128 in signal.valid_signals():
        return signal.Signals(code - 128).name
    return None


def _describe_exit(handle: ReplicaHandle, runtime: str | None = None) -> str:
    """``The replica worker 1 exited with a non-zero status of 1.`` plus its traceback."""
    st = handle.status or {}
    r = handle.replica
    code = st.get("exit_code")
    tail = _traceback_tail(handle.stderr_path)
    if code is None:
        head = f"The replica {r.role.value} {r.index} ended without recording an exit status."
    elif "container" in st:
        return _describe_container_exit(r, st, tail)
    else:
        head = f"The replica {r.role.value} {r.index} exited with a non-zero status of {code}."
        if st.get("signal"):
            head = head[:-1] + f" ({signal.Signals(st['signal']).name})."
    hint = missing_module_hint(tail, runtime)
    return head + ("\n" + tail if tail else "") + ("\n" + hint if hint else "")


def _describe_container_exit(r: Replica, st: dict[str, Any], tail: str) -> str:
    """The platform's words for a container replica's end, from what the engine recorded."""
    # A container that never started reads exit code 0 (state "created"): the run's status
    # (125-127, the engine's own) is the one that says what happened then.
    code = st.get("container_exit_code") or st.get("exit_code")
    where = f"The replica {r.role.value} {r.index}"
    if _out_of_memory(st, code):
        head = (
            f"{where} ran out-of-memory and exited with a non-zero status of {code} (SIGKILL): "
            f"its container's memory limit is {_mib(st.get('memory_limit') or 0)}."
        )
    elif _engine_failed(st, code):
        why = PERMANENT_STATUSES[cast(int, code)]
        head = f"{where} could not start its container: {why} (status {code})."
    else:
        head = f"{where} exited with a non-zero status of {code}."
        killed = _signal_of_status(code)
        if killed:
            head = head[:-1] + f" ({killed})."
    hint = containers.engine_hint(tail)
    return head + ("\n" + tail if tail else "") + ("\n" + hint if hint else "")


def _size(path: Path) -> int:
    """A file's size, 0 when there is none (yet)."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _output_base(workdir: Path) -> dict[str, int]:
    """What earlier runs of a replica left in its output files, by stream: a replica on another
    node ships its own output from there on (``ray_replica.OutputShipper``)."""
    return {stream: _size(workdir / name) for stream, name in REPLICA_OUTPUT_FILES.items()}


def _clear_stale(workdir: Path) -> None:
    """Remove the status and pid files of a replica's earlier run (or of a start a restart cut
    short) before it starts: a new supervisor writes its own."""
    for stale in ("status.json", "pid.json"):
        (workdir / stale).unlink(missing_ok=True)


def _mib(size: int) -> str:
    mib = size / (1024 * 1024)
    return f"{mib / 1024:.1f} GiB" if mib >= 1024 else f"{mib:.0f} MiB"


def _traceback_tail(path: Path) -> str:
    """The last exception in a stderr file (or its last lines), for errorMessage.

    Reads the file's last ``STDERR_TAIL_BYTES``: enough for a TensorFlow error whose message
    carries a long original stack trace, with shutdown noise after it.
    """
    try:
        with opened_beneath(path.parent, path.name) as fd:
            size = os.fstat(fd).st_size
            data = read_at(fd, max(0, size - STDERR_TAIL_BYTES), STDERR_TAIL_BYTES)
    except OSError:
        return ""
    if size > STDERR_TAIL_BYTES:  # the first line is cut: drop it
        data = data[data.find(b"\n") + 1 :]
    return error_summary(data.decode("utf-8", "replace"))


class JobRunner:
    """Drives one job from QUEUED to a terminal state."""

    def __init__(self, host: RunnerHost, project: str, job_id: str) -> None:
        self.host = host
        self.project = project
        self.job_id = job_id
        self.cancel_requested = asyncio.Event()
        self.stop_reason: tuple[JobState, str] = (JobState.CANCELLED, "Job cancelled by user.")
        """How the job ends when stopped from outside: a user's cancel or the service stopping."""
        self.handles: list[ReplicaHandle] = []
        self.task: asyncio.Task[None] | None = None
        self.created = time.time()
        """When this runner was made: the job's creation, to the microsecond (createTime has
        whole seconds), unless the runner took over an older job."""
        self._timers: list[asyncio.TimerHandle] = []
        self.mode: Literal["new", "adopt", "restart"] = "new"
        """``new``: from admission on; ``adopt``: watch replicas an earlier run of the service
        started (set by ``recover``); ``restart``: stop a half-started cluster, then as new."""
        self._ended_while_down: list[str] = []
        self._lost_while_down: list[ReplicaHandle] = []
        """Adopted replicas that died with the machine: no supervisor, no exit status."""
        self._runtime: dict[str, Any] = {}
        """The job's runtime record as last saved (its replicas, their restarts)."""
        self.trial: str | None = None
        """The trial id (``"1"``...) when this runs one trial of a tuning job (trials.py)."""
        self.extra_args: list[str] = []
        """Arguments after the job's own: a trial's ``--<parameterName>=<value>``."""
        self.placement: Placement | None = None
        """Where the executor put this run's replicas (``place``), before they start."""
        self._started_with: tuple[Path | None, Path | None, Grant] | None = None
        """What the replicas were first started with (packages, job dir, grant): a run placed
        again after a node died starts them the same way."""
        self.gpu_variant = False
        """The job was granted GPUs: its runtime environment has the GPU builds."""

    places_at_admission = True
    """A job's replicas are placed while it is QUEUED; a tuning job's trials each when their
    turn comes."""

    @property
    def run_key(self) -> RunKey:
        """This run of replicas, as the executor names it."""
        return (self.project, self.job_id, self.trial)

    def cancel(self) -> None:
        """The user cancelled the job."""
        self.cancel_requested.set()

    def abort(self, message: str) -> None:
        """The service is going away: stop the replicas and fail the job with ``message``."""
        self.stop_reason = (JobState.FAILED, message)
        self.cancel_requested.set()

    def start(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self._guarded(), name=self.job_id)

    def note(self, message: str, severity: str = "INFO") -> None:
        """A ``service`` log entry for this job."""
        self.host.service_log(self.project, self.job_id, message, SEVERITIES[severity])

    def live_replicas(self) -> list[tuple[str | None, ReplicaHandle]]:
        """The replicas running now, each with its trial id (None for a job's own)."""
        return [
            (self.trial, h)
            for h in self.handles
            if h.proc is not None and h.proc.returncode is None
        ]

    # -- taking over after a service restart ------------------------------------------------

    def recover(self, job: dict[str, Any], runtime: dict[str, Any]) -> None:
        """Take over a job an earlier run of the service left live (it was killed).

        A job whose replicas all started (RUNNING, CANCELLING, or PREPARING just before the
        switch to RUNNING) is adopted: its supervisors are found again (or their status files
        read, for replicas that ended meanwhile), its log files tailed on from the offsets the
        store committed, and its slots and GPUs held again. A job still waiting or installing
        goes back through admission; one whose cluster was half started is stopped first.
        Synchronous, so that every adopted job holds its capacity before any queued one asks.
        """
        recorded = runtime.get("replicas") or []
        state = JobState(job["state"])
        ti: dict[str, Any] = job["trainingInput"]
        complete = bool(recorded) and (
            runtime.get("complete", True) and len(recorded) == len(replicas(ti))
        )
        if state is JobState.CANCELLING:
            self.cancel_requested.set()
        if not recorded:
            return  # QUEUED, or PREPARING before any replica: as a new job
        self._runtime = runtime
        by_name = {r.task_name: r for r in replicas(ti)}
        for rep in recorded:
            replica = by_name.get(rep.get("task_name", ""))
            if replica is None:
                continue
            handle = ReplicaHandle(replica, Path(rep["dir"]))
            box = rep.get("container")
            handle.container = box if isinstance(box, str) else None
            handle.proc = self.host.executor.adopt(self.run_key, rep)
            if handle.proc.returncode is not None:
                if handle.proc.lost is None and handle.read_status().get("lost"):
                    # Its supervisor is gone without writing how the replica ended: both died
                    # at once, as in a power cut. The platform started such a replica again.
                    self._lost_while_down.append(handle)
                else:
                    self._ended_while_down.append(replica.task_name)
            self._follow_logs(handle)  # from the offsets the store committed
            self.handles.append(handle)
        if not complete and state is JobState.PREPARING:
            self.mode = "restart"
            return
        self.mode = "adopt"
        held = self._recorded_grant(ti, runtime)
        self.host.scheduler.adopt((self.project, self.job_id), held.demand, held.gpus)

    def _recorded_grant(self, ti: dict[str, Any], runtime: dict[str, Any]) -> Grant:
        """What an adopted job holds, from its runtime record: each started replica's GPUs and
        the slots it was admitted with (fitted to this machine again where none is recorded)."""
        recorded = runtime.get("replicas") or []
        gpus = tuple(tuple(str(d) for d in rep.get("gpus") or ()) for rep in recorded)
        slots = runtime.get("slots")
        if not isinstance(slots, int):
            slots = fit(job_demand(ti), self.host.scheduler.capacity).slots
        names = tuple(str(rep.get("task_name")) for rep in recorded)
        return Grant(Demand(names, tuple(len(g) for g in gpus), slots), gpus)

    async def _resume(self) -> None:
        """Watch an adopted job to its end, as ``_run`` would have."""
        job = self.host.stored(self.project, self.job_id)
        ti: dict[str, Any] = job["trainingInput"]
        gone = {*self._ended_while_down, *(h.replica.task_name for h in self._lost_while_down)}
        running = len(self.handles) - len(gone)
        ended = ""
        if self._ended_while_down:
            ended = f"; ended meanwhile: {', '.join(self._ended_while_down)}"
        if self._lost_while_down:
            names = ", ".join(h.replica.task_name for h in self._lost_while_down)
            ended += f"; lost with the machine: {names}"
        boxes = [
            h.container for h in self.handles if h.container and h.replica.task_name not in gone
        ]
        adopted = f" (containers {', '.join(boxes)})" if boxes else ""
        self.note(
            "The local jobs service restarted: resumed the job with "
            f"{running} running replica{'s' if running != 1 else ''}{adopted}{ended}.",
            "NOTICE",
        )
        if job["state"] == JobState.PREPARING.value:
            self.host.transition(self.project, self.job_id, JobState.RUNNING, startTime=True)
            job = self.host.stored(self.project, self.job_id)
        if self.cancel_requested.is_set():
            await self._end(*self.stop_reason)
            return
        started = parse_job_time(job["startTime"]) if job.get("startTime") else time.time()
        self._arm(running_limit(ti), started)
        if self._lost_while_down:
            endings = [
                Ending(h.replica.task_name, Cause.MACHINE_LOST, "its machine restarted")
                for h in self._lost_while_down
            ]
            again = await self._start_again(ti, endings)
            if isinstance(again, tuple):
                await self._end(*again)
                return
        state, message = await self._watch()
        await self._end(state, message)

    # -- restarts (model/running/restarts.py decides; this starts) ----------------------------

    async def _start_again(
        self, ti: dict[str, Any], endings: list[Ending]
    ) -> tuple[JobState, str | None] | list[ReplicaHandle]:
        """Start the replicas of ``endings`` again, as the platform did: same task, same
        ``TF_CONFIG`` (its spec as first written, ports included), same job dir and log files
        (the supervisor appends; the log follower goes on from its offset). A replica out of
        restarts retries the whole job; out of retries, the job fails listing every attempt.
        Returns how the job ends instead, or the replicas started again."""
        history = RestartHistory.from_json(self._runtime.get("restarts"))
        by_name = {h.replica.task_name: h for h in self.handles}
        again: list[ReplicaHandle] = []
        delay = 0.0
        for ending in endings:
            outcome = decide(history, ending)
            delay = max(delay, outcome.delay)
            if outcome.verdict is Verdict.FAIL:
                return JobState.FAILED, outcome.message
            if outcome.verdict is Verdict.RETRY_JOB:
                history.job_retries += 1
                history.attempts.append(Attempt(WHOLE_JOB, ending.detail, job_time()))
                self.note(outcome.message, "WARNING")
                await self._stop_replicas()
                await self._sweep()
                again = list(self.handles)
                break
            history.attempts.append(Attempt(ending.task_name, ending.detail, job_time()))
            self.note(outcome.message, "NOTICE")
            again.append(by_name[ending.task_name])
        self._runtime["restarts"] = history.as_json()
        self.record_runtime(self._runtime)
        self.host.set_restarts(self.project, self.job_id, restarts_resource(history))
        if delay:
            delay *= self.host.restart_backoff_scale
            cancelled, _ = await self._until_cancelled(asyncio.sleep(delay))
            if cancelled:
                return self.stop_reason
        cancelled, _ = await self._until_cancelled(self.host.listening.wait())
        if cancelled or self.cancel_requested.is_set():
            return self.stop_reason
        await self._respawn(ti, again)
        return again

    async def _respawn(self, ti: dict[str, Any], handles: list[ReplicaHandle]) -> None:
        """Start each replica's supervisor again on the spec it first ran with, and record the
        new supervisors so that another restart of the service finds them.

        Raises:
            ExecutorError: a replica could not be started again (the job fails with it).
        """
        reps = replicas(ti)
        index = {r.task_name: i for i, r in enumerate(reps)}
        placement = self.placement
        if placement is None:
            placement = self.placement = await self._place(ti)
        stored = self._runtime.get("pythonpath")
        pythonpath = Path(stored) if isinstance(stored, str) else None
        records = {r.get("task_name"): r for r in self._runtime.get("replicas") or []}
        engine = self.host.container_engine
        for handle in handles:
            spec = json.loads((handle.workdir / "spec.json").read_text())
            # This service may listen elsewhere than the one that wrote the spec (the embedded
            # one takes a free port): gs:// must reach this one, with a credential it issued.
            task = handle.replica.task_name
            spec["env"].update(
                self.host.replica_storage_env(self.project, self.job_id, self.trial, task)
            )
            spec["output_base"] = _output_base(handle.workdir)
            (handle.workdir / "spec.json").write_text(json.dumps(spec))
            _clear_stale(handle.workdir)
            container = spec.get("container")
            if isinstance(container, dict) and engine is not None:
                # What is left of the old container would make ``run`` refuse the name.
                await asyncio.to_thread(containers.remove, engine, [str(container["name"])])
            handle.status = None
            handle.started = time.time()
            handle.proc = await placement.start(index[task], handle.replica, spec, pythonpath)
            record = records.get(task)
            if record is not None:
                record.update(handle.proc.record())
        self.record_runtime(self._runtime)

    async def _restart(self) -> None:
        """A cluster the dead service had only half started: stop it, then start over."""
        self.note(
            "The local jobs service restarted while the job's replicas were starting; "
            "starting them again.",
            "WARNING",
        )
        await self._stop_replicas()
        await self._sweep()
        await self._drain()
        self.handles = []
        await self._run()

    async def _guarded(self) -> None:
        try:
            if self.mode == "adopt":
                await self._resume()
            elif self.mode == "restart":
                await self._restart()
            else:
                await self._run()
        except asyncio.CancelledError:
            raise
        except ExecutorError as exc:  # a replica could not be placed or started where it was
            self.note(str(exc), "ERROR")
            await self._stop_replicas()
            await self._sweep()
            await self._drain()
            self.host.finish(self.project, self.job_id, JobState.FAILED, str(exc))
        except Exception as exc:  # a bug here must not leave a job live forever
            log.exception("runner for %s failed", self.job_id)
            await self._stop_replicas()
            await self._sweep()
            await self._drain()
            self.host.finish(
                self.project,
                self.job_id,
                JobState.FAILED,
                f"Internal error in the local jobs service: {exc!r}",
            )
        finally:
            self._disarm()
            with contextlib.suppress(Exception):  # what is left on a cluster is its to reclaim
                await self.host.executor.release(self.run_key)
            self.host.runner_done(self.project, self.job_id)
            self.host.scheduler.release((self.project, self.job_id))

    # -- scheduling limits ---------------------------------------------------------------------

    def _arm(self, limit: TimeLimit, since: float) -> None:
        """Cancel the job ``limit.seconds`` after ``since`` (seconds since the epoch)."""
        delay = max(0.0, since + limit.seconds - time.time())
        loop = asyncio.get_running_loop()
        self._timers.append(loop.call_later(delay, self._limit_reached, limit))

    def _disarm(self) -> None:
        for timer in self._timers:
            timer.cancel()
        self._timers.clear()

    def _limit_reached(self, limit: TimeLimit) -> None:
        """A scheduling limit ran out: the job is cancelled as a user's cancel would, and its
        errorMessage says which limit did it."""
        if self.cancel_requested.is_set():
            return
        message = limit.message()
        self.stop_reason = (JobState.CANCELLED, message)
        self.host.transition(self.project, self.job_id, JobState.CANCELLING)
        self.note(message, "WARNING")
        self.cancel_requested.set()

    def _created_at(self, job: dict[str, Any]) -> float:
        """The job's creation: this runner's own start when it was made by jobs.create (the
        stored createTime is cut to the second), else the latest instant createTime allows."""
        return min(self.created, parse_job_time(job["createTime"]) + 1.0)

    async def _until_cancelled(self, coro: Any) -> tuple[bool, Any]:
        """Run ``coro`` unless cancel comes first; returns (cancelled, result)."""
        work = asyncio.ensure_future(coro)
        stop = asyncio.ensure_future(self.cancel_requested.wait())
        done, _ = await asyncio.wait({work, stop}, return_when=asyncio.FIRST_COMPLETED)
        if work in done:
            stop.cancel()
            return False, work.result()
        work.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await work
        return True, None

    async def _run(self) -> None:
        job = self.host.stored(self.project, self.job_id)
        ti: dict[str, Any] = job["trainingInput"]
        if self.cancel_requested.is_set():
            self._stopped()
            return
        grant = await self._admit(job)
        if grant is not None:
            self.gpu_variant = any(grant.gpus)  # GPU builds of the frameworks (runtimes.py)
        if grant is None:
            self._stopped()
            return

        cancelled, prepared = await self._until_cancelled(self._prepare(ti))
        if cancelled:
            self._stopped()
            return
        if isinstance(prepared, str):
            self.note(prepared, "ERROR")
            self.host.finish(self.project, self.job_id, JobState.FAILED, prepared)
            return
        pythonpath, job_dir = prepared
        await self._train(ti, pythonpath, job_dir, grant)

    async def _train(
        self, ti: dict[str, Any], pythonpath: Path | None, job_dir: Path | None, grant: Grant
    ) -> None:
        """Run the admitted, prepared job to its end (a tuning job runs trials instead)."""
        self._started_with = (pythonpath, job_dir, grant)
        self.note("Waiting for training program to start.")
        await self._start_replicas(ti, pythonpath, job_dir, grant)
        if self.cancel_requested.is_set():
            await self._end(*self.stop_reason)
            return
        self._now_running(ti)
        self.note("Job is running.")
        state, message = await self._watch()
        await self._end(state, message)

    def _now_running(self, ti: dict[str, Any]) -> None:
        """RUNNING from now: maxWaitTime no longer applies, and maxRunningTime starts counting."""
        self._disarm()
        self.host.transition(self.project, self.job_id, JobState.RUNNING, startTime=True)
        self._arm(running_limit(ti), time.time())

    async def _admit(self, job: dict[str, Any]) -> Grant | None:
        """Wait for the scheduler to admit the job (maxWaitTime counting from its creation),
        then make it PREPARING; None when it was cancelled while it waited."""
        ti: dict[str, Any] = job["trainingInput"]
        scheduler = self.host.scheduler
        wait = wait_limit(ti, scheduler.max_wait_scale)
        if wait is not None:
            self._arm(wait, self._created_at(job))
        demand = job_demand(ti)
        admitted = scheduler.request((self.project, self.job_id), demand, job_priority(ti))
        if not admitted.done():  # it waits: say for what, once, where the job's log is read
            self.note(wait_summary(self.host.queue(self.project, self.job_id)))
        cancelled, grant = await self._until_cancelled(admitted)
        if cancelled:
            return None
        if self.places_at_admission:
            # Still QUEUED: on a cluster, the job waits here until all its replicas fit.
            cancelled, placement = await self._until_cancelled(self._place(ti))
            if cancelled:
                return None
            self.placement = placement
        self.host.transition(self.project, self.job_id, JobState.PREPARING)
        self.note("Waiting for job to be provisioned.")
        for warning in self.host.executor.shortfall(demand, grant.demand, scheduler.capacity):
            self.note(warning, "WARNING")
        return cast(Grant, grant)

    async def _place(self, ti: dict[str, Any]) -> Placement:
        return await self.host.executor.place(self.run_key, ti, replicas(ti), self.note)

    async def _prepare(self, ti: dict[str, Any]) -> tuple[Path | None, Path | None] | str:
        """Packages installed (or images pulled) and the job dir mapped, or the reason the job
        fails."""
        target: Path | None = None
        images = job_images(ti)
        try:
            if images:
                puller = self.host.image_puller
                if puller is None:
                    return self.host.container_problem
                for image in images:
                    await puller.ensure(image, self.note)
            else:
                target = await self._install_packages(ti)
        except (
            packages.PackageError,
            RuntimeEnvError,
            RuntimeRefused,
            containers.ContainerError,
        ) as exc:
            return str(exc)
        job_dir: Path | None = None
        # A gs:// jobDir stays a URI (replicas write through the storage API, whose uploads
        # create the bucket); only a local job dir is made here.
        if ti.get("jobDir") and not ti["jobDir"].startswith("gs://"):
            uri = ti["jobDir"]
            job_dir = Path(uri.removeprefix("file://"))
            try:
                job_dir.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                return f"The job dir {uri} cannot be created: {exc.strerror}."
        return target, job_dir

    async def _install_packages(self, ti: dict[str, Any]) -> Path | None:
        """The job's own copies of its packages (hashed as they are copied, for
        ``:environment``) installed on its runtime, or on the service's Python without one.

        Raises:
            PackageError, RuntimeEnvError, RuntimeRefused: the job fails with the message.
        """
        state = self.host.state
        copies = self.replica_root() / PACKAGE_COPIES
        try:
            fetched = await asyncio.to_thread(
                packages.fetch, state, ti.get("packageUris") or [], copies
            )
            runtime = await self.host.runtime_environment(
                self.project, self.job_id, ti, self.gpu_variant, self.note, fetched.as_json()
            )
            if runtime is not None:
                return await packages.install_layer(state, runtime, fetched, self.note)
            return await packages.install(state, fetched, self.note) if fetched.packages else None
        finally:
            # Installed (or cached) by content: the copies served their one install.
            await asyncio.to_thread(shutil.rmtree, copies, True)

    async def _start_replicas(
        self, ti: dict[str, Any], pythonpath: Path | None, job_dir: Path | None, grant: Grant
    ) -> None:
        reps = replicas(ti)
        order = self.host.scheduler.capacity.device_order
        placement = self.placement
        if placement is None:  # a trial: placed when its turn comes
            placement = self.placement = await self._place(ti)
        # Every machine ready before any replica starts (a Ray node may build the runtime
        # environment for minutes: replicas started elsewhere meanwhile could end the job before
        # that one began). A cancel meanwhile stops waiting at once; the caller ends the job.
        cancelled, _ = await self._until_cancelled(placement.prepare(reps, pythonpath))
        if cancelled:
            return
        cluster = cluster_addresses(reps, [placement.endpoint(i) for i in range(len(reps))])
        base = self.replica_root()
        tail = list(self.extra_args)
        if ti.get("jobDir"):
            # As the platform passed it: a gs:// URI unchanged, a local folder as its path.
            given = ti["jobDir"]
            tail += ["--job-dir", given if given.startswith("gs://") else str(job_dir)]
        python = packages.interpreter(pythonpath)  # a runtime environment's, or ours
        argv: list[str] = []  # a container job's replicas each get the engine's command
        if not job_images(ti):
            argv = [python, "-m", ti["pythonModule"], *(ti.get("args") or []), *tail]
        runtime: dict[str, Any] = {
            "replicas": [],
            "slots": grant.demand.slots,
            "complete": False,
            "pythonpath": str(pythonpath) if pythonpath else None,
            **({"restarts": self._runtime["restarts"]} if "restarts" in self._runtime else {}),
        }
        self._runtime = runtime
        prepared: list[
            tuple[ReplicaHandle, dict[str, Any], tuple[str, ...], dict[str, Any] | None, str | None]
        ] = []
        following = {h.replica.task_name: h.sources for h in self.handles}
        self.handles = []
        for rep, gpus in zip(reps, grant.gpus, strict=True):
            workdir = base / rep.task_name
            workdir.mkdir(parents=True, exist_ok=True)
            _clear_stale(workdir)
            handle = ReplicaHandle(rep, workdir)
            env = {k: v for k, v in os.environ.items() if not k.startswith("TUI_APP_")}
            env.update(replica_env(self.job_id, ti, rep, cluster, self.trial))
            if self.trial is not None:
                env["CLOUD_ML_TRIAL_ID"] = self.trial
            env.update(gpu_env(gpus, order))
            storage = self.host.replica_storage_env(
                self.project, self.job_id, self.trial, rep.task_name
            )
            env.update(storage)  # gs:// reaches the service, with this replica's credential
            env[REPLICA_MARKER] = str(workdir)
            env["PYTHONUNBUFFERED"] = "1"
            env["CLOUD_ML_HP_METRIC_FILE"] = str(workdir / "hypertune" / "output.metrics")
            env["PYTHONPATH"] = str(pythonpath) if pythonpath and python == sys.executable else ""
            env.update(packages.runtime_variables(pythonpath))
            image = replica_image(ti, rep.role)
            container: dict[str, Any] | None = None
            replica_argv = argv
            if image is not None:
                replica_argv, container = await self._container_spec(
                    ti, rep, image, gpus, env, storage, workdir, job_dir, tail
                )
            spec = {
                "argv": replica_argv,
                "cwd": str(workdir),
                "env": env,
                "stdout_path": str(workdir / "stdout.log"),
                "stderr_path": str(handle.stderr_path),
                "status_path": str(handle.status_path),
                "pid_path": str(workdir / "pid.json"),
                "grace_seconds": self.host.grace_seconds,
                "nice": self.host.replica_nice,
            }
            if container is not None:
                spec["container"] = container
                handle.container = container["name"]
            spec["output_base"] = _output_base(workdir)
            (workdir / "spec.json").write_text(json.dumps(spec))
            if rep.task_name in following:  # started again: its files are followed already
                handle.sources = following[rep.task_name]
            else:
                self._follow_logs(handle)
            prepared.append((handle, spec, gpus, container, image))
        # All at once: on a Ray cluster each start is a call to an actor on its node, which
        # forks the supervisor there (0.1-0.5 s on a busy node); one after another they took
        # most of two seconds for a 4-replica job.
        started = await asyncio.gather(
            *(
                placement.start(index, handle.replica, spec, pythonpath)
                for index, (handle, spec, *_) in enumerate(prepared)
            ),
            return_exceptions=True,
        )
        failed: BaseException | None = None
        for (handle, _spec, gpus, container, image), proc in zip(prepared, started, strict=True):
            if isinstance(proc, BaseException):
                failed = failed or proc
                continue
            rep = handle.replica
            handle.proc = proc
            self.handles.append(handle)
            node = handle.proc.node
            runtime["replicas"].append(
                {
                    "task_name": rep.task_name,
                    "dir": str(handle.workdir),
                    **handle.proc.record(),
                    "gpus": list(gpus),
                    **({"container": container["name"]} if container else {}),
                }
            )
            shown = tuple(gpus) or handle.proc.gpus  # the service's assignment, else Ray's
            on_gpus = f", GPU {','.join(shown)}" if shown else ""
            as_container = f", container {container['name']} of {image}" if container else ""
            on_node = f", on node {node['address']}" if node else ""
            self.note(
                f"Started {rep.task_name} ({rep.machine_type}{on_gpus}{as_container}{on_node})."
            )
        # Recorded before anything else can fail, so a restarted service finds every replica
        # that started.
        self.record_runtime(runtime)
        if failed is not None:
            raise failed
        runtime["complete"] = True
        self.record_runtime(runtime)

    async def _container_spec(
        self,
        ti: dict[str, Any],
        rep: Replica,
        image: str,
        gpus: tuple[str, ...],
        env: dict[str, str],
        storage: dict[str, str],
        workdir: Path,
        job_dir: Path | None,
        tail: list[str],
    ) -> tuple[list[str], dict[str, Any]]:
        """The engine command that runs ``rep`` as a container, and what its supervisor needs to
        stop, read and remove that container. ``env`` becomes the engine's own environment; the
        container gets only the platform's variables from it, by name."""
        engine = self.host.container_engine
        assert engine is not None  # _prepare failed the job otherwise
        key = containers.service_key(self.host.state.root)
        name = containers.container_name(key, self.job_id, self.trial, rep.task_name)
        inside = {
            key
            for key in env
            if key.startswith(("TF_", "CLUSTER_SPEC", "CLOUD_ML_", "MASTER_", "WORLD_SIZE", "RANK"))
        }
        inside |= set(storage) | {"PYTHONUNBUFFERED"}
        inside.discard("CUDA_VISIBLE_DEVICES")  # the engine maps the granted GPUs from 0
        inside.discard("CUDA_DEVICE_ORDER")
        (workdir / "hypertune").mkdir(exist_ok=True)
        env["CLOUD_ML_HP_METRIC_FILE"] = f"{containers.HYPERTUNE_DIR}/output.metrics"
        mounts = [containers.Mount(str(workdir / "hypertune"), containers.HYPERTUNE_DIR)]
        if job_dir is not None:
            mounts.append(containers.Mount(str(job_dir), str(job_dir)))
        ca_bundle = storage.get("CURL_CA_BUNDLE")
        if ca_bundle:
            mounts.append(containers.Mount(ca_bundle, ca_bundle, read_only=True))
        command, given = container_entry(ti, rep.role)
        args = given if given is not None else [str(a) for a in ti.get("args") or []]
        machine = MACHINE_TYPES.get(rep.machine_type)
        memory = int(machine.memory_gb * 1024**3) if machine and machine.memory_gb else None
        argv = containers.run_command(
            engine,
            name=name,
            image=image,
            env_names=sorted(inside),
            labels={
                containers.LABEL_SERVICE: key,
                containers.LABEL_JOB: f"{self.project}/{self.job_id}",
                containers.LABEL_TASK: rep.task_name
                + (f"/trial-{self.trial}" if self.trial is not None else ""),
            },
            mounts=mounts,
            gpus=gpus,
            memory_bytes=memory,
            entrypoint=command[0] if command else None,
            args=[*command[1:], *args, *tail],
        )
        fmt = "{{.State.ExitCode}} {{.State.OOMKilled}} {{.HostConfig.Memory}}"
        grace = str(max(1, round(self.host.grace_seconds)))
        container = {
            "name": name,
            "stop": engine.command("stop", "-t", grace, name),
            "inspect": engine.command("inspect", "--format", fmt, name),
            "remove": engine.command("rm", "-f", name),
        }
        # A name left by a start that a restart cut short would make ``run`` fail.
        await asyncio.to_thread(containers.remove, engine, [name])
        return argv, container

    def _follow_logs(self, handle: ReplicaHandle) -> None:
        """Store the replica's stdout and stderr as its log, whether the replica was started
        here or adopted after a restart (then from the offsets the store committed)."""
        task = handle.replica.task_name
        log_name = f"projects/{self.project}/logs/{task}"
        for name, is_err in (("stdout.log", False), ("stderr.log", True)):
            src = LogSource(
                handle.workdir / name, self.project, self.job_id, task, log_name, is_err, self.trial
            )
            handle.sources.append(src)
            self.host.follow_log(src)

    def _runtime_version(self) -> str | None:
        """The job's runtimeVersion, for the hint about a module its environment lacks."""
        try:
            ti = self.host.stored(self.project, self.job_id).get("trainingInput") or {}
        except Exception:  # the hint is optional; the job's outcome is not
            return None
        return ti.get("runtimeVersion") or None

    def replica_root(self) -> Path:
        """The dir holding one work dir per replica."""
        return self.host.state.job_dir(self.project, self.job_id)

    def record_runtime(self, runtime: dict[str, Any]) -> None:
        """Persist what a restarted service needs to find the replicas again."""
        self.host.save_runtime(self.project, self.job_id, runtime)

    async def _watch(self) -> tuple[JobState, str | None]:
        """Wait until the replicas decide the job, or a cancel. A replica lost with its node,
        or that exits non-zero without a permanent error, starts again (``_place_again``,
        ``_restart_exited``) and is watched anew."""
        waits: dict[asyncio.Future[Any], ReplicaHandle] = {
            asyncio.ensure_future(h.proc.wait()): h for h in self.handles if h.proc
        }
        stop: asyncio.Future[Any] = asyncio.ensure_future(self.cancel_requested.wait())
        try:
            while True:
                done, _ = await asyncio.wait({*waits, stop}, return_when=asyncio.FIRST_COMPLETED)
                if stop in done:
                    return self.stop_reason
                for fut in done:
                    handle = waits.pop(fut, None)
                    if handle is None:  # a replica of a run that an earlier one replaced
                        continue
                    lost = handle.proc.lost if handle.proc is not None else None
                    if lost is not None:
                        gone = f"The replica {handle.replica.task_name} was lost: {lost}."
                        if self.trial is not None:  # a trial fails; the study goes on
                            return JobState.FAILED, gone
                        again = await self._place_again(handle, lost, gone)
                    else:
                        handle.status = handle.read_status()
                        code = handle.status.get("exit_code")
                        if handle.replica.role is Role.MASTER and code == 0:
                            return JobState.SUCCEEDED, None
                        if code == 0:
                            self.note(f"{handle.replica.task_name} finished.")
                            continue
                        ending = self._transient_exit(handle)
                        if ending is None:
                            return JobState.FAILED, _describe_exit(handle, self._runtime_version())
                        again = await self._restart_exited(handle, ending)
                    if isinstance(again, tuple):
                        return again
                    waits = self._rewatch(waits, again)
                if not waits:  # cannot happen: a job always has a master
                    return JobState.FAILED, "The job has no master replica."
        finally:
            stop.cancel()
            for fut in waits:
                fut.cancel()

    def _rewatch(
        self, waits: dict[asyncio.Future[Any], ReplicaHandle], again: list[ReplicaHandle]
    ) -> dict[asyncio.Future[Any], ReplicaHandle]:
        """``waits`` after a restart: the replicas started ``again`` watched anew, and those of
        a run placed again (no longer among ``self.handles``) not at all."""
        kept: dict[asyncio.Future[Any], ReplicaHandle] = {}
        for fut, handle in waits.items():
            if handle in again or handle not in self.handles:
                fut.cancel()
            else:
                kept[fut] = handle
        for handle in again:
            if handle.proc is not None:
                kept[asyncio.ensure_future(handle.proc.wait())] = handle
        return kept

    async def _restart_exited(
        self, handle: ReplicaHandle, ending: Ending
    ) -> tuple[JobState, str | None] | list[ReplicaHandle]:
        """Start a replica that exited without a permanent error again, where it ran; a job
        that runs out of restarts fails listing them, then how the replica last ended."""
        if self.host.executor.ships_output:
            # On a cluster the replica's actor is spent: the run is placed again, as after a
            # node's death.
            last = _describe_exit(handle, self._runtime_version())
            return await self._place_again(handle, ending.detail, last)
        ti = self.host.stored(self.project, self.job_id)["trainingInput"]
        again = await self._start_again(ti, [ending])
        if isinstance(again, tuple) and again[0] is JobState.FAILED:
            last = _describe_exit(handle, self._runtime_version())
            return JobState.FAILED, f"{again[1]}\n{last}"
        return again

    async def _place_again(
        self, handle: ReplicaHandle, lost: str, gone: str
    ) -> tuple[JobState, str | None] | list[ReplicaHandle]:
        """A replica's node died: place the run again and start every replica anew, as Vertex
        AI's ``restartJobOnWorkerRestart`` does. Moving only the lost replica would change its
        address under the others' ``TF_CONFIG``, so a run of more than one replica counts as a
        whole-job retry; a run of one, as that replica's restart. Waits for room for at most
        ``NODE_WAIT_SECONDS`` (scaled as the restart waits are), saying so, then fails naming
        the node. ``lost`` is the cause in a few words, ``gone`` how the replica ended in the
        platform's words (the errorMessage if the job fails). Returns how the job ends
        instead, or the replicas started again."""
        task = handle.replica.task_name
        history = RestartHistory.from_json(self._runtime.get("restarts"))
        ending = Ending(task, Cause.MACHINE_LOST, lost)
        if len(self.handles) == 1:
            outcome = decide(history, ending)
            if outcome.verdict is Verdict.FAIL:
                return JobState.FAILED, f"{outcome.message}\n{gone}"
            history.attempts.append(Attempt(task, lost, job_time()))
            self.note(outcome.message, "NOTICE")
        else:
            if history.job_retries >= JOB_RETRY_LIMIT:
                tried = "\n".join(attempt_lines(history))
                return JobState.FAILED, (
                    f"{gone}\nThe whole job was already restarted {JOB_RETRY_LIMIT} times:\n{tried}"
                )
            history.job_retries += 1
            history.attempts.append(Attempt(WHOLE_JOB, f"{task}: {lost}", job_time()))
            self.note(
                job_retry_line(
                    history.job_retries,
                    JOB_RETRY_LIMIT,
                    f"{task} was lost ({lost}); its {len(self.handles)} replicas start again "
                    "on nodes with room, under new addresses.",
                ),
                "WARNING",
            )
        self._runtime["restarts"] = history.as_json()
        self.record_runtime(self._runtime)
        self.host.set_restarts(self.project, self.job_id, restarts_resource(history))
        await self._stop_replicas()
        await self._sweep()
        await self.host.executor.release(self.run_key)
        self.placement = None
        ti: dict[str, Any] = self.host.stored(self.project, self.job_id)["trainingInput"]
        limit = NODE_WAIT_SECONDS * self.host.restart_backoff_scale
        try:
            cancelled, placement = await asyncio.wait_for(
                self._until_cancelled(self._place(ti)), limit
            )
        except TimeoutError:
            return JobState.FAILED, (
                f"{gone} No node had room for the job's replicas within {limit:.0f} s."
            )
        if cancelled:
            return self.stop_reason
        self.placement = placement
        pythonpath, job_dir, grant = self._started_with or self._adopted_start(ti)
        await self._start_replicas(ti, pythonpath, job_dir, grant)
        return list(self.handles)

    def _adopted_start(self, ti: dict[str, Any]) -> tuple[Path | None, Path | None, Grant]:
        """What an adopted job's replicas were started with, from its runtime record (a
        restarted service did not start them itself)."""
        stored = self._runtime.get("pythonpath")
        pythonpath = Path(stored) if isinstance(stored, str) else None
        given = ti.get("jobDir") or ""
        job_dir = (
            Path(given.removeprefix("file://")) if given and not given.startswith("gs://") else None
        )
        grant = self._recorded_grant(ti, self._runtime)
        reps = replicas(ti)
        if len(grant.gpus) != len(reps):  # a record of a half-started run: no device was held
            names = tuple(r.task_name for r in reps)
            none = tuple(() for _ in reps)
            grant = Grant(Demand(names, tuple(0 for _ in reps), grant.demand.slots), none)
        return pythonpath, job_dir, grant

    def _transient_exit(self, handle: ReplicaHandle) -> Ending | None:
        """How a replica's non-zero exit reads to the restart rules, or None when it fails the
        job at once: a permanent error (its own traceback, out of memory, a command or image
        that cannot start: ``exit_is_permanent``), or a trial of a tuning job (its trials are
        not restarted yet)."""
        if self.trial is not None:
            return None
        st = handle.status or {}
        if st.get("lost"):  # no status at all: told apart only after a restart of the service
            return None
        code = st.get("container_exit_code") or st.get("exit_code")
        permanent = exit_is_permanent(
            code if isinstance(code, int) else None,
            traceback="Traceback (most recent call last)" in _traceback_tail(handle.stderr_path),
            out_of_memory=_out_of_memory(st, code),
            engine_error=_engine_failed(st, code),
        )
        if permanent:
            return None
        signum = st.get("signal")
        killed = signal.Signals(signum).name if signum else _signal_of_status(code)
        detail = f"it was killed by {killed}" if killed else f"it exited with status {code}"
        return Ending(handle.replica.task_name, Cause.EXITED, detail)

    async def _stop_replicas(self) -> None:
        """SIGTERM every live supervisor; they escalate to SIGKILL after the grace period."""
        live = [h for h in self.handles if h.proc and h.proc.returncode is None]
        for h in live:
            assert h.proc is not None
            with contextlib.suppress(ProcessLookupError):
                h.proc.send_signal(signal.SIGTERM)
        if not live:
            return
        timeout = self.host.grace_seconds + SUPERVISOR_SLACK_SECONDS
        waiters = [h.proc.wait() for h in live if h.proc]
        try:
            await asyncio.wait_for(asyncio.gather(*waiters), timeout)
        except TimeoutError:
            for h in live:
                if h.proc is not None:
                    h.proc.kill_tree()
        for h in live:
            if h.status is None:
                h.status = h.read_status()

    async def _sweep(self) -> None:
        """Kill whatever of the job outlived its supervisors (one that was itself killed
        leaves its replica's tree to init), and say so in the job's log."""
        if not self.handles:
            return
        killed = await self.host.executor.sweep([h.workdir for h in self.handles])
        if killed:
            self.note(
                f"Killed {killed} process{'es' if killed > 1 else ''} of the job that outlived "
                "their replica's supervisor.",
                "WARNING",
            )
        # A supervisor that ended normally removed its container and said so in its status.
        left = [
            h.container
            for h in self.handles
            if h.container and "container" not in (h.status or h.read_status())
        ]
        engine = self.host.container_engine
        if left and engine is not None:
            await asyncio.to_thread(containers.remove, engine, left)

    async def _drain(self) -> None:
        sources = [s for h in self.handles for s in h.sources]
        if sources:
            await asyncio.wrap_future(self.host.drain_logs(sources))

    async def _end(self, state: JobState, message: str | None) -> None:
        self._disarm()  # the outcome is decided: no limit may turn it into a cancel now
        await self._stop_replicas()
        await self._sweep()
        await self._drain()
        self.note(end_note(state, message), "ERROR" if state is JobState.FAILED else "INFO")
        self.host.finish(self.project, self.job_id, state, message)

    def _stopped(self) -> None:
        """Stopped before any replica started."""
        state, message = self.stop_reason
        self.note("Job cancelled." if state is JobState.CANCELLED else message)
        self.host.finish(self.project, self.job_id, state, message)


def end_note(state: JobState, message: str | None) -> str:
    """The service's last line in a job's log. A failure says why, as the job list's ERROR
    column does (``failure_cause``: a traceback's exception line, a message's first line), so
    whoever reads only the log (``gcloud ai-platform jobs stream-logs``, the logs view) sees
    the cause where it ends."""
    if state is JobState.FAILED:
        return job_failed_line(message)
    return "Job completed successfully." if state is JobState.SUCCEEDED else "Job cancelled."


def job_priority(ti: dict[str, Any]) -> int:
    """``scheduling.priority``, 0 when unset: a tuning job's further trials queue with it too."""
    return int((ti.get("scheduling") or {}).get("priority") or 0)
