"""The Jobs API's behaviour, independent of HTTP: create, get, list, cancel, patch.

Handlers in ``server.py`` only translate HTTP to these calls; everything a client can observe about
a job (state changes, etags, endTime, queue position) is decided here.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import concurrent.futures
import contextlib
import json
import logging
import os
import sqlite3
import struct
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tui_app.local import job_stacks
from tui_app.local.environments import containers, interpreters, packages, runtime_envs
from tui_app.local.errors import ApiError, invalid, invalid_field, not_found_job
from tui_app.local.execution.executor import Executor
from tui_app.local.execution.local_executor import LocalExecutor
from tui_app.local.execution.replica_priority import DEFAULT_REPLICA_NICE
from tui_app.local.execution.runner import JobRunner
from tui_app.local.execution.scheduler import Scheduler, machine_capacity
from tui_app.local.execution.stall_watch import StallWatch
from tui_app.local.execution.trials import make_runner
from tui_app.local.job_changes import JobChanges
from tui_app.local.job_filter import compile_job_filter
from tui_app.local.logs.log_index import progress
from tui_app.local.logs.log_ingest import LogSource
from tui_app.local.logs.log_limits import DEFAULT_SCAN_SECONDS
from tui_app.local.logs.log_retention import (
    DEFAULT_MAX_BYTES,
    DEFAULT_RETENTION_DAYS,
    LogRetention,
    used_bytes,
)
from tui_app.local.logs.log_writer import LogWriter, ServiceEntry
from tui_app.local.metrics import MetricsSampler
from tui_app.local.page_tokens import NOT_OURS, decode_page_token, encode_page_token, fingerprint
from tui_app.local.paths import StateDir
from tui_app.local.storage.storage_env import (
    ObjectWrite,
    ReplicaCredentials,
    ReplicaWriter,
    StorageProxyInfo,
    WriteLog,
    replica_storage_env,
)
from tui_app.local.store import DuplicateJobError, JobStore, LogStore, StoreError, job_text
from tui_app.local.timefmt import job_time, log_time, parse_job_time
from tui_app.model.filters.filter_expr import FilterSyntaxError
from tui_app.model.jobs import runtimes
from tui_app.model.jobs.job_images import job_images
from tui_app.model.jobs.job_spec import (
    FieldViolation,
    JobSpecError,
    label_violations,
    parse_job,
)
from tui_app.model.jobs.roles import ROLE_FIELDS
from tui_app.model.jobs.states import CANCELLABLE_STATES, LIVE_STATES, JobState
from tui_app.model.logs.severity import SEVERITIES
from tui_app.model.running.capacity import job_demand
from tui_app.model.running.cost import consumed_ml_units
from tui_app.model.running.stalls import DEFAULT_STALL_SECONDS
from tui_app.model.running.storage_scope import StorageScope, package_objects, replica_scope

log = logging.getLogger(__name__)

NO_AUTH_CONTAINERS = (
    "This local jobs service runs without its token (--no-auth), and a container replica "
    "shares the machine's network, so it could reach the jobs API and run code outside its "
    "container. Start the service with its token (without --no-auth) to run custom "
    'containers; `eval "$(tui-app service env)"` points gcloud at the token.'
)
"""Why a service without its token refuses container jobs (docs/threat-model.md)."""

DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 100
PATCHABLE = frozenset({"labels", "etag"})
METERED_STATES = frozenset({JobState.RUNNING.value, JobState.CANCELLING.value})
"""States whose answer is not the stored job: ``render`` counts their ML units up to now."""


def new_etag() -> str:
    """A fresh etag: valid base64, because gcloud decodes it (a ``format: byte`` field), and one
    that does not decode makes ``jobs describe`` and the whole of ``jobs list`` crash."""
    return base64.urlsafe_b64encode(os.urandom(8)).decode()


def live_etag(stored: str, units: float) -> str:
    """The etag of a job whose ML units are counted as it is read.

    An etag must change with every field a client can see: the TUI's list rebuilds only rows
    whose etag changed, so a running job's ML units stood still at their first figure. The
    stored etag's 8 bytes are kept in front (a PATCH checks them, see ``same_version``) and the
    units follow, so the etag moves with the figure and stays valid base64 for gcloud."""
    try:
        raw = base64.urlsafe_b64decode(stored)[:8]
    except (ValueError, binascii.Error):
        raw = stored.encode()[:8]
    return base64.urlsafe_b64encode(raw + struct.pack(">d", units)).decode()


def same_version(client_etag: object, stored: str) -> bool:
    """Whether an etag a client read names the stored version: the stored etag itself, or a
    ``live_etag`` made from it (the units it carries may be older than now)."""
    if client_etag == stored:
        return True
    if not isinstance(client_etag, str):
        return False
    try:
        raw = base64.urlsafe_b64decode(client_etag)
        own = base64.urlsafe_b64decode(stored)
    except (ValueError, binascii.Error):
        return False
    return len(raw) == 16 and raw[:8] == own[:8]


def storage_error(exc: StoreError) -> ApiError:
    """A write the store refused, as the API answers it. Disk full is RESOURCE_EXHAUSTED (429):
    google.rpc.Code names "the entire file system is out of space" as its case, and gcloud
    shows a 4xx at once, where a 5xx would be retried silently for ~26 s first. Anything else
    (a read-only file system...) is UNAVAILABLE (503): the service cannot store right now."""
    if exc.full:
        return ApiError(
            "RESOURCE_EXHAUSTED",
            f"{exc} Nothing was changed; free some space and retry.",
        )
    return ApiError("UNAVAILABLE", f"{exc} Nothing was changed.")


class JobService:
    """All jobs of all projects in one state dir, and the runners of the live ones."""

    def __init__(
        self,
        state: StateDir,
        grace_seconds: float = 5.0,
        slots: int | None = None,
        gpus: int | None = None,
        max_wait_scale: float = 1.0,
        restart_backoff_scale: float = 1.0,
        pythons: tuple[str, ...] = (),
        replica_nice: int = DEFAULT_REPLICA_NICE,
        engine: containers.EngineStatus | None = None,
        executor: Executor | None = None,
        no_auth: bool = False,
        stall_seconds: float = DEFAULT_STALL_SECONDS,
        log_retention_days: float = DEFAULT_RETENTION_DAYS,
        log_max_bytes: int = DEFAULT_MAX_BYTES,
        log_scan_seconds: float = DEFAULT_SCAN_SECONDS,
    ) -> None:
        state.ensure()
        self.log_scan_seconds = log_scan_seconds
        """How long one ``entries:list`` page may read lines by scan before it answers with
        what it found (``logs/entries``: ``--log-scan-seconds``)."""
        self.no_auth = no_auth
        """Started without its token (``--no-auth``): container jobs are refused (below)."""
        self.executor: Executor = executor if executor is not None else LocalExecutor()
        """Where replicas run (``execution/executor.py``); the service never asks which."""
        self.engine_status = engine if engine is not None else containers.find_engine()
        """The container engine found (or named) at start, or why there is none."""
        self.container_engine = self.engine_status.engine
        self.container_problem = self.engine_status.problem
        if no_auth and self.container_engine is not None:
            self.container_problem = NO_AUTH_CONTAINERS
        self.image_puller = (
            containers.ImagePuller(self.container_engine)
            if self.container_engine and not no_auth
            else None
        )
        self.replica_nice = replica_nice
        """Nice steps each replica runs below the service (``replica_priority``)."""
        self.pythons = pythons
        """Interpreters named with ``--python``, besides those found (``interpreters.py``)."""
        self._interpreters: dict[str, str] | None = None
        self.state = state
        self.grace_seconds = grace_seconds
        self.jobs = JobStore(state.jobs_db)
        self.logs = LogStore(state.logs_db)
        self.writer = LogWriter(
            self.logs,
            retention=LogRetention(lambda: list(self.runners), log_retention_days, log_max_bytes),
        )
        self.runners: dict[tuple[str, str], JobRunner] = {}
        self.scheduler = Scheduler(
            self.executor.admission(machine_capacity(slots, gpus)),
            self._positions_changed,
            max_wait_scale,
        )
        self.metrics = MetricsSampler(
            self.jobs, state.jobs_db, engine=self.container_engine, executor=self.executor
        )
        self.replica_credentials = ReplicaCredentials(state.root / "replica-credentials.json")
        self.url: str | None = None
        """Where replicas reach the service (``http://127.0.0.1:PORT``), set once it listens."""
        self.storage_proxy: StorageProxyInfo | None = None
        """The storage proxy for libcurl clients (``gcs_proxy``), set once it listens."""
        self.restart_backoff_scale = restart_backoff_scale
        """Multiplies the restart rules' waits: between a replica's restarts and for a node
        with room (``--restart-backoff-scale``)."""
        self.listening = asyncio.Event()
        """Set once ``url`` and ``storage_proxy`` are known: a replica started again after a
        restart waits for it, as its storage environment names this service's address."""
        self._write_log = WriteLog()
        self._write_callbacks: list[Callable[[ReplicaWriter, str, str], None]] = []
        self._scopes: dict[tuple[str, str], StorageScope] = {}
        """Each job's replica storage scope, made on its replicas' first request."""
        self._staged_packages: set[tuple[str, str]] = set()
        """(bucket, name) of every job's gs:// package: read-only to replicas."""
        self.changes = JobChanges()
        """Wakes the ``:wait`` long polls of a job when ``_save`` writes it."""
        self.stalls = StallWatch(
            self, lambda: self.metrics.latest, stall_seconds, self.metrics.interval
        )
        """Flags a hung job (``stall_watch``: ``--stall-seconds``, 10 minutes by default)."""

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        await self.executor.start()
        self.writer.start()
        self.metrics.start()
        self.stalls.start()
        await asyncio.to_thread(self._load_staged_packages)
        await self._recover()

    async def close(self) -> None:
        """Stop every live job (their replicas too), then the log writer."""
        self.changes.close()
        runners = list(self.runners.values())
        for r in runners:
            r.abort("The local jobs service stopped while the job was running.")
        tasks = [r.task for r in runners if r.task]
        if tasks:
            await asyncio.wait(tasks, timeout=self.grace_seconds + 10)
        for project, job, _ in self.jobs.in_states([s.value for s in LIVE_STATES]):
            self.finish(
                project,
                job["jobId"],
                JobState.FAILED,
                "The local jobs service stopped while the job was running.",
            )
        await self.stalls.stop()
        await self.metrics.stop()
        self.writer.stop()
        await asyncio.to_thread(self.writer.join, 10)
        self.jobs.close()
        await self.executor.close()

    def _remove_orphans(self, keep: set[str]) -> None:
        """Remove this service's containers that no adopted replica owns: what a crash left
        between a container's start and its record, or of jobs that cannot be taken over."""
        assert self.container_engine is not None
        found = containers.ours(self.container_engine, containers.service_key(self.state.root))
        orphans = sorted(name for name in found if name not in keep)
        if orphans:
            log.warning("removing %d orphaned container(s): %s", len(orphans), ", ".join(orphans))
            containers.remove(self.container_engine, orphans)

    async def _recover(self) -> None:
        """Take over the jobs a service that died (kill -9, a crash) left live.

        Replicas outlive the service (their supervisors run in their own sessions): running
        jobs are adopted and finish as they would have, replicas that ended meanwhile count by
        their recorded exit status, and every log file is tailed on from the offset the store
        committed with its last lines, so no line is lost or stored twice. Jobs that were
        waiting or installing go through admission again; a cancel in progress completes.
        Every adopted job holds its slots and GPUs before any waiting one is admitted.
        """
        live = self.jobs.in_states([s.value for s in LIVE_STATES])
        recovered: list[JobRunner] = []
        for project, job, runtime in live:
            runner = make_runner(self, project, job)
            self.runners[(project, job["jobId"])] = runner
            try:
                runner.recover(job, runtime)
            except Exception:  # one bad record must not keep the service from starting
                log.exception("cannot recover %s", job["jobId"])
                self.runners.pop((project, job["jobId"]), None)
                message = "The local jobs service could not take the job over after a restart."
                self.service_log(project, job["jobId"], message, SEVERITIES["ERROR"])
                self.finish(project, job["jobId"], JobState.FAILED, message)
                continue
            recovered.append(runner)
        if self.container_engine is not None:
            keep = {
                h.container
                for r in recovered
                if r.mode == "adopt"
                for h in r.handles
                if h.container and h.proc is not None and h.proc.returncode is None
            }
            await asyncio.to_thread(self._remove_orphans, keep)
        # What a run of an ended job still holds elsewhere (a Ray placement) goes back.
        await self.executor.reclaim({(r.project, r.job_id) for r in recovered})
        # Adopted jobs first: their capacity is already held; queued ones then ask in order.
        for runner in sorted(recovered, key=lambda r: r.mode != "adopt"):
            runner.start()
            if self.no_auth and any(h.container for h in runner.handles):
                # Started with a token, taken over without one: its containers would now reach
                # an open jobs API. Queued container jobs fail at their start the same way.
                runner.abort(NO_AUTH_CONTAINERS)
        if recovered:
            log.warning("recovered %d live job(s) after an unclean stop", len(recovered))

    # -- state changes (runner_host.RunnerHost: what runners may ask) ----------------------

    def stored(self, project: str, job_id: str) -> dict[str, Any]:
        job = self.jobs.get(project, job_id)
        if job is None:
            raise not_found_job(f"projects/{project}/jobs/{job_id}")
        return job

    def find_job(self, project: str, job_id: str) -> dict[str, Any] | None:
        return self.jobs.get(project, job_id)

    def runner_done(self, project: str, job_id: str) -> None:
        self.runners.pop((project, job_id), None)

    def _save(self, project: str, job: dict[str, Any]) -> dict[str, Any]:
        job["etag"] = new_etag()
        try:
            self.jobs.update(project, job)
        except StoreError as exc:
            log.error("%s", exc)
            raise storage_error(exc) from None
        self.changes.changed(project, job["jobId"])
        return job

    def transition(
        self, project: str, job_id: str, state: JobState, startTime: bool = False
    ) -> dict[str, Any]:
        job = self.stored(project, job_id)
        if JobState(job["state"]).is_terminal:
            return job
        job["state"] = state.value
        if state is not JobState.QUEUED:
            job.pop("jobPosition", None)
        if startTime:
            job["startTime"] = job_time()
        return self._save(project, job)

    def finish(
        self, project: str, job_id: str, state: JobState, error: str | None = None
    ) -> dict[str, Any]:
        """Make the job terminal: endTime always, errorMessage when there is one."""
        job = self.stored(project, job_id)
        if JobState(job["state"]).is_terminal:
            return job
        job["state"] = state.value
        job["endTime"] = job_time()
        job.pop("jobPosition", None)
        if error:
            job["errorMessage"] = error
        job.setdefault("trainingOutput", {})["consumedMLUnits"] = self._ml_units(job)
        self.replica_credentials.revoke_job(project, job_id)
        return self._save(project, job)

    def _positions_changed(self, positions: dict[tuple[str, str], int]) -> None:
        """Keep every QUEUED job's jobPosition current (int64: a string on the wire)."""
        for project, job_id in list(self.runners):
            try:
                job = self.stored(project, job_id)
            except ApiError:
                continue
            if job["state"] != JobState.QUEUED.value:
                continue
            position = positions.get((project, job_id))
            wanted = str(position) if position else None
            if job.get("jobPosition") != wanted:
                if wanted is None:
                    job.pop("jobPosition", None)
                else:
                    job["jobPosition"] = wanted
                with contextlib.suppress(ApiError):  # logged; the next change writes it
                    self._save(project, job)

    def set_training_output(self, project: str, job_id: str, output: dict[str, Any]) -> None:
        """Replace a live job's trainingOutput (a tuning job's trials as they run)."""
        self._set_live_field(project, job_id, "trainingOutput", output)

    def set_restarts(self, project: str, job_id: str, restarts: list[dict[str, Any]]) -> None:
        """``replicaRestarts`` of a live job: ml v1's Job has no field for them, and gcloud,
        like the clients here, shows a field it does not know as it came (``jobs describe``
        prints it)."""
        self._set_live_field(project, job_id, "replicaRestarts", restarts)

    def _set_live_field(self, project: str, job_id: str, key: str, value: Any) -> None:
        """Set one field of a live job (an ended job stays as it ended); a failed write is
        logged and left to the next change."""
        job = self.stored(project, job_id)
        if JobState(job["state"]).is_terminal:
            return
        job[key] = value
        with contextlib.suppress(ApiError):
            self._save(project, job)

    def set_stall(self, project: str, job_id: str, stall: dict[str, Any] | None) -> None:
        """``stall`` of a live job (``stall_watch``): set while it is stalled, removed once a
        replica prints again. An extension ml v1 clients show as it came, like
        ``replicaRestarts``."""
        if stall is not None:
            self._set_live_field(project, job_id, "stall", stall)
            return
        job = self.stored(project, job_id)
        if "stall" in job and not JobState(job["state"]).is_terminal:
            del job["stall"]
            with contextlib.suppress(ApiError):
                self._save(project, job)

    # -- stacks (job_stacks.py) ---------------------------------------------------------------

    async def stacks(
        self,
        project: str,
        job_id: str,
        replica: str | None = None,
        trial: str | None = None,
        with_locals: bool = False,
    ) -> dict[str, Any]:
        """Every live replica's Python threads now (or the ones asked for)."""
        job = self.stored(project, job_id)
        stalled = job_stacks.kept(self.state.job_dir(project, job_id))
        chosen = job_stacks.pick(self.runners.get((project, job_id)), job, replica, trial, stalled)
        got = await job_stacks.take(self.executor, self.container_engine, chosen, with_locals)
        return got.to_json()

    def stall_stacks(self, project: str, job_id: str) -> dict[str, Any]:
        """The stacks kept when the job turned stalled."""
        self.stored(project, job_id)
        return job_stacks.saved(self.state.job_dir(project, job_id), job_id)

    async def keep_stall_stacks(self, project: str, job_id: str) -> str | None:
        runner = self.runners.get((project, job_id))
        live = runner.live_replicas() if runner is not None else []
        if not live:
            return None
        got = await job_stacks.take(self.executor, self.container_engine, live, False)
        try:
            await asyncio.to_thread(job_stacks.keep, self.state.job_dir(project, job_id), got)
        except OSError as exc:
            log.error("keeping the stacks of stalled job %s failed: %s", job_id, exc)
            return None
        return got.taken_at

    def save_runtime(self, project: str, job_id: str, runtime: dict[str, Any]) -> None:
        job = self.stored(project, job_id)
        try:
            self.jobs.update(project, job, runtime)
        except StoreError as exc:
            log.error("%s", exc)
            raise storage_error(exc) from None

    # -- Cloud Storage writes by replicas --------------------------------------------------

    def replica_storage_env(
        self, project: str, job_id: str, trial: str | None, task_name: str
    ) -> dict[str, str]:
        """The storage environment of a replica about to start, with a credential of its own
        (valid until the job ends); empty while the service's address is not known yet."""
        if self.url is None:
            return {}
        writer = ReplicaWriter(project, job_id, trial, task_name, self.executor.ships_output)
        secret = self.replica_credentials.issue(writer)
        return replica_storage_env(self.url, secret, project, self.storage_proxy)

    def on_object_written(
        self, callback: Callable[[ReplicaWriter, str, str], None]
    ) -> Callable[[], None]:
        """Call ``callback(writer, bucket, name)`` after every object a replica commits; the
        answer removes the callback again (a tuning runner listens while its job runs).

        ``writer`` is a ``storage_env.ReplicaWriter`` (project, job_id, trial or None,
        task_name). Callbacks run on the service's event loop thread right after the write,
        before the client gets its answer: keep them quick and non-blocking. An exception in
        one is logged and does not fail the write. Writes made with the service's own token
        (a user's gcloud) are not reported: only a replica's credential names a writer.
        """
        self._write_callbacks.append(callback)

        def remove() -> None:
            with contextlib.suppress(ValueError):
                self._write_callbacks.remove(callback)

        return remove

    def objects_written(self, project: str, job_id: str) -> list[ObjectWrite]:
        """Every object write the job's replicas (and its trials') made, oldest first; an
        object written twice appears twice. Kept in the job's folder across restarts."""
        return self._write_log.read(self.state.job_dir(project, job_id))

    def object_written(self, writer: ReplicaWriter, bucket: str, name: str) -> None:
        """The storage API's hook: record the write, then tell the callbacks."""
        try:
            self._write_log.append(
                self.state.job_dir(writer.project, writer.job_id),
                ObjectWrite(writer, bucket, name, time.time()),
            )
        except (OSError, ValueError):
            log.exception("cannot record the write of gs://%s/%s", bucket, name)
        for callback in list(self._write_callbacks):
            try:
                callback(writer, bucket, name)
            except Exception:
                log.exception("object-written callback failed for gs://%s/%s", bucket, name)

    # -- what a replica's storage credential may reach (model/running/storage_scope.py) -

    MAX_CACHED_SCOPES = 4096
    """Scopes kept in memory; the oldest go first (a job's is made again if it still runs)."""

    async def replica_scope(self, writer: ReplicaWriter) -> StorageScope:
        """The storage API's ``on_scope``: the paths the replicas of ``writer``'s job may reach.

        It runs on the event loop for every replica request, so it answers from a cache per
        job (a job's trainingInput never changes) and reads the job's record in a thread only
        the first time. A job with no record (never, for a live credential) reaches nothing.
        """
        key = (writer.project, writer.job_id)
        scope = self._scopes.get(key)
        if scope is not None:
            return scope
        job = await asyncio.to_thread(self.jobs.get, *key)
        if job is None:
            return StorageScope(writer.job_id)
        scope = replica_scope(writer.job_id, job.get("trainingInput"))
        if len(self._scopes) >= self.MAX_CACHED_SCOPES:
            self._scopes.pop(next(iter(self._scopes)))
        self._scopes[key] = scope
        return scope

    def is_staged_package(self, bucket: str, name: str) -> bool:
        """The storage API's ``is_package``: whether ``gs://bucket/name`` is the package of any
        job on this service, which no replica may write or delete (a replaced package would
        run its writer's code in the next job that installs it)."""
        return (bucket, name) in self._staged_packages

    def _load_staged_packages(self) -> None:
        """Every stored job's packages, read once at start (``create`` adds new jobs')."""
        every_state = [s.value for s in JobState]
        for _project, job, _runtime in self.jobs.in_states(every_state):
            self._staged_packages |= package_objects(job.get("trainingInput") or {})

    def service_log(
        self, project: str, job_id: str, message: str, severity: int, trial: str | None = None
    ) -> None:
        self.writer.emit(ServiceEntry.of_job(project, job_id, message, severity, trial))

    def log_index_status(self) -> dict[str, Any]:
        """``/healthz``'s ``logIndex``: how many lines wait to be indexed, the store's size in
        use and its oldest line (a few rowid lookups and pragmas), what retention deleted."""
        try:
            conn = self.logs.reader()
            got = progress(conn)
            size = used_bytes(conn)
            first = conn.execute("SELECT ts_us FROM log_entries ORDER BY id LIMIT 1").fetchone()
        except sqlite3.Error as exc:
            return {"error": f"Cannot read the log store: {exc}"}
        out: dict[str, Any] = {"behind": got.behind, "storeBytes": size}
        if first is not None:
            out["oldestLine"] = log_time(int(first[0]))
        kept = self.writer.retention.state if self.writer.retention else None
        if kept is not None:
            out["deleted"] = kept.deleted
        errors = [e for e in (self.writer.index.error, kept and kept.error) if e]
        if errors:
            out["error"] = "; ".join(str(e) for e in errors)
        return out

    def follow_log(self, source: LogSource) -> None:
        self.writer.add_source(source)

    def drain_logs(self, sources: Iterable[LogSource]) -> concurrent.futures.Future[None]:
        return self.writer.drain(sources)

    # -- runtime environments (runtimes.py, runtime_envs.py) --------------------------------

    def interpreters(self) -> dict[str, str]:
        """The host's Pythons by version, found once per service (each probe runs one)."""
        if self._interpreters is None:
            self._interpreters = interpreters.find(extra=self.pythons)
        return self._interpreters

    def runtime_plan(self, ti: dict[str, Any], gpu: bool) -> runtimes.Plan | None:
        """The runtime environment the job gets; None without a runtimeVersion.

        Raises:
            runtimes.RuntimeRefused: the runtime cannot be honoured on this host.
        """
        runtime = ti.get("runtimeVersion")
        if not runtime:
            return None
        return runtimes.plan(
            runtime, ti.get("pythonVersion"), gpu, self.interpreters(), interpreters.own()
        )

    def environment_file(self, project: str, job_id: str) -> Path:
        """What ``:environment`` answers for the job, written when its environment is ready."""
        return self.state.job_dir(project, job_id) / "environment.json"

    async def runtime_environment(
        self,
        project: str,
        job_id: str,
        ti: dict[str, Any],
        gpu: bool,
        log: Callable[[str], None],
        trainer_packages: Sequence[Mapping[str, str]] = (),
    ) -> runtime_envs.Environment | None:
        """Build (or reuse) the job's runtime environment, and record it for ``:environment``
        with the job's ``trainer_packages`` (``trainerPackages``: each one's uri, name, sha256
        and sizeBytes, in ``packageUris`` order).

        Raises:
            runtimes.RuntimeRefused, runtime_envs.RuntimeEnvError: the job fails with the message.
        """
        plan = self.runtime_plan(ti, gpu)
        if plan is None:
            python, path = interpreters.own()
            log(
                f"No runtimeVersion: replicas run on the service's own Python {python} "
                f"({path}) with only the job's packages installed."
            )
            self._record_environment(
                project,
                job_id,
                {
                    "runtimeVersion": None,
                    "pythonVersion": python,
                    "interpreter": path,
                    "exact": False,
                    "packages": {},
                    "substitutions": [],
                    "notes": [
                        "No runtimeVersion: the service's own Python, the job's packages only."
                    ],
                    "trainerPackages": [dict(p) for p in trainer_packages],
                },
            )
            return None
        how = "exact" if plan.exact else "substituted"
        log(
            f"Runtime {plan.runtime} on Python {plan.python} ({plan.interpreter}, "
            f"{plan.variant}, {how})."
        )
        for line in plan.notes():
            log(f"Runtime {plan.runtime}: {line}.")
        env = await runtime_envs.ensure(self.state.root, plan, log)
        self._record_environment(
            project,
            job_id,
            {
                "runtimeVersion": plan.runtime,
                "pythonVersion": plan.python,
                "requestedPythonVersion": ti.get("pythonVersion")
                or runtimes.default_python(plan.runtime),
                "interpreter": plan.interpreter,
                "variant": plan.variant,
                "exact": plan.exact,
                "environment": env.root.name,
                "packages": env.packages,
                "substitutions": [s.text() for s in plan.substitutions],
                "notes": plan.notes(),
                "trainerPackages": [dict(p) for p in trainer_packages],
            },
        )
        return env

    def _record_environment(self, project: str, job_id: str, data: dict[str, Any]) -> None:
        path = self.environment_file(project, job_id)
        with contextlib.suppress(OSError):  # the job's log says the same
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(data, sort_keys=True))

    def environment(self, project: str, job_id: str) -> dict[str, Any]:
        """The ``:environment`` answer: ``{}`` until the job's environment is ready."""
        self.stored(project, job_id)  # 404 for an unknown job
        try:
            data = json.loads(self.environment_file(project, job_id).read_text())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def queue(self, project: str, job_id: str) -> dict[str, Any]:
        """The ``:queue`` answer: why a QUEUED job waits, in numbers a client words
        (``model/running/queue_wait.py``; docs/wire-formats.md); ``{}`` for a job that does not
        wait."""
        self.stored(project, job_id)  # 404 for an unknown job
        wait = self.scheduler.wait_info((project, job_id))
        if wait is None:
            reason = self.executor.waiting((project, job_id, None))
            return {"reason": reason} if reason else {}
        capacity = self.scheduler.capacity

        def job_entry(key: tuple[str, str], slots: int, gpus: int) -> dict[str, Any]:
            entry: dict[str, Any] = {"jobId": key[1], "slots": slots, "gpus": gpus}
            if key[0] != project:
                entry["project"] = key[0]
            return entry

        running = []
        for key, slots, gpus in wait.running:
            entry = job_entry(key, slots, gpus)
            job = self.jobs.get(*key)
            if job is not None:
                entry["state"] = job["state"]
                if job.get("startTime"):
                    entry["startTime"] = job["startTime"]
            running.append(entry)
        return {
            "position": wait.position,
            "needs": {
                "replicas": len(wait.demand.task_names),
                "slots": wait.demand.slots,
                "gpus": wait.demand.total_gpus,
            },
            "machine": {"slots": capacity.slots, "gpus": len(capacity.gpu_ids)},
            "free": {"slots": wait.free_slots, "gpus": wait.free_gpus},
            "running": running,
            "ahead": [job_entry(*a) for a in wait.ahead],
        }

    @staticmethod
    def _ml_units(job: dict[str, Any]) -> float:
        start = parse_job_time(job["startTime"]) if job.get("startTime") else None
        # Now, to the whole second as endTime will be written: the figure never goes down.
        end = parse_job_time(job.get("endTime") or job_time())
        return consumed_ml_units(job.get("trainingInput") or {}, start, end)

    def render(self, job: dict[str, Any]) -> dict[str, Any]:
        """The Job as clients see it: ML units counted up to now while its replicas run (a
        cancelled job's run until they are stopped); finish() stores the final figure."""
        if job.get("state") in METERED_STATES:
            units = self._ml_units(job)
            job.setdefault("trainingOutput", {})["consumedMLUnits"] = units
            if isinstance(job.get("etag"), str):
                job["etag"] = live_etag(job["etag"], units)
        return job

    # -- API ---------------------------------------------------------------------------------

    def _check_container_job(self, ti: dict[str, Any]) -> None:
        """A container job can run here: an engine answers, each image is an image reference,
        and GPUs it asks for exist (a container cannot be handed a GPU the host lacks)."""
        if self.no_auth:
            raise invalid_field("trainingInput.masterConfig.imageUri", NO_AUTH_CONTAINERS)
        if self.container_engine is None:
            raise invalid_field(
                "trainingInput.masterConfig.imageUri",
                "Custom containers need a container engine on the machine running the local "
                f"jobs service. {self.container_problem}",
            )
        gpu_field = "trainingInput.scaleTier"
        for rf in ROLE_FIELDS:
            config = ti.get(rf.config_field) or {}
            image = config.get("imageUri")
            if image is not None:
                problem = containers.image_problem(str(image))
                if problem:
                    raise invalid_field(f"trainingInput.{rf.config_field}.imageUri", problem)
            if config.get("acceleratorConfig") and gpu_field == "trainingInput.scaleTier":
                gpu_field = f"trainingInput.{rf.config_field}.acceleratorConfig"
        if job_demand(ti).total_gpus and not self.scheduler.capacity.gpu_ids:
            raise invalid_field(
                gpu_field,
                "This machine has no GPU to give a container (nvidia-smi lists none and none "
                "were named with --gpus): ask for no accelerators to run on CPUs, or use a "
                "Vertex AI profile.",
            )

    def create(self, project: str, body: object) -> dict[str, Any]:
        try:
            job = parse_job(body)
        except JobSpecError as exc:
            raise invalid(exc.violations) from None
        ti = job["trainingInput"]
        self.executor.refuse(ti)
        if job_images(ti):
            self._check_container_job(ti)
        try:
            packages.resolve_all(self.state, ti.get("packageUris") or [])
        except packages.PackageError as exc:
            raise invalid_field(exc.field or "trainingInput.packageUris", str(exc)) from None
        try:
            self.runtime_plan(ti, gpu=False)  # the variant never decides whether it can run
        except runtimes.RuntimeRefused as exc:
            raise invalid_field(exc.field, str(exc)) from None
        if ti.get("jobDir", "").startswith("gs://"):
            try:
                self.state.gcs_path(ti["jobDir"])
            except ValueError as exc:
                raise invalid_field("trainingInput.jobDir", str(exc)) from None
        job.update(state=JobState.QUEUED.value, createTime=job_time(), etag=new_etag())
        try:
            self.jobs.insert(project, job, {})
        except StoreError as exc:
            log.error("%s", exc)
            raise storage_error(exc) from None
        except DuplicateJobError:
            raise ApiError(
                "ALREADY_EXISTS",
                "Field: job.job_id Error: A job with this id already exists.",
                [FieldViolation("job.job_id", "A job with this id already exists.")],
            ) from None
        self.service_log(
            project, job["jobId"], "Validating job requirements...", SEVERITIES["INFO"]
        )
        self.service_log(
            project,
            job["jobId"],
            "Job creation request has been successfully validated.",
            SEVERITIES["INFO"],
        )
        self._staged_packages |= package_objects(ti)
        runner = make_runner(self, project, job)
        self.runners[(project, job["jobId"])] = runner
        runner.start()
        return job

    def get(self, project: str, job_id: str) -> dict[str, Any]:
        return self.render(self.stored(project, job_id))

    async def wait(
        self, project: str, job_id: str, etag: str | None, timeout: float
    ) -> dict[str, Any]:
        """The ``:wait`` answer: the job once it is another version than ``etag`` names (at
        once when it already is, or when no etag is given), else as it is after ``timeout``
        seconds.

        "Another version" is ``same_version``'s: a running job's etag also carries its ML
        units, which grow every second; were that a change, a wait on a running job would
        answer every second, and a waiter would be polling after all. Every change a client
        acts on (state, errorMessage, trials, labels) writes a new stored etag.

        Raises:
            ApiError: NOT_FOUND for an unknown job (or one removed while it was waited on).
        """
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            job = self.stored(project, job_id)
            left = deadline - asyncio.get_running_loop().time()
            changed = not etag or not same_version(etag, str(job.get("etag")))
            if changed or left <= 0 or self.changes.closed:
                return self.render(job)
            await self.changes.wait(project, job_id, left)

    def list(
        self, project: str, page_size: str | None, page_token: str | None, filter_text: str | None
    ) -> str:
        """The ListJobsResponse, as JSON text. A job whose answer is the stored one (any state
        but ``METERED_STATES``) goes into the page as the store's text: decoding and encoding
        each job again was most of a long list's time here, and 100k jobs are 1,000 pages."""
        size = DEFAULT_PAGE_SIZE
        if page_size not in (None, ""):
            try:
                size = int(page_size)
            except ValueError:
                raise invalid_field("pageSize", f"{page_size[:20]!r} is not an integer.") from None
            size = DEFAULT_PAGE_SIZE if size <= 0 else min(size, MAX_PAGE_SIZE)
        text = filter_text or ""
        matches: Callable[[dict[str, Any]], bool] | None = None
        if text.strip():
            try:
                matches = compile_job_filter(text)
            except (FilterSyntaxError, ValueError) as exc:
                raise invalid_field("filter", f"Invalid filter: {exc}") from None
        before: int | None = None
        if page_token:
            data = decode_page_token(page_token)
            if data.get("p") != project or data.get("f") != fingerprint(text):
                raise invalid_field(
                    "pageToken", "The page token belongs to another project or filter."
                )
            seq = data.get("s")
            # SQLite integers are int64: a forged token past that range would be a 500.
            if not isinstance(seq, int) or isinstance(seq, bool) or not 0 <= seq < 2**63:
                raise invalid_field("pageToken", NOT_OURS)
            before = seq
        out: list[str] = []
        last_seq: int | None = None
        more = False
        for seq, state, body in self.jobs.iter_newest_first(project, before, batch=size + 1):
            job = None
            if matches is not None:
                job = json.loads(body)
                if not matches(job):
                    continue
            if len(out) == size:
                more = True
                break
            if state in METERED_STATES:
                body = job_text(self.render(job or json.loads(body)))  # as the store writes it
            out.append(body)
            last_seq = seq
        fields: list[str] = []
        if out:
            fields.append(f'"jobs":[{",".join(out)}]')
        if more and last_seq is not None:
            token = encode_page_token({"p": project, "s": last_seq, "f": fingerprint(text)})
            fields.append(f'"nextPageToken":{json.dumps(token)}')
        return "{" + ",".join(fields) + "}"

    def cancel(self, project: str, job_id: str) -> dict[str, Any]:
        job = self.stored(project, job_id)
        state = JobState(job["state"])
        if state not in CANCELLABLE_STATES:
            raise ApiError(
                "FAILED_PRECONDITION",
                f"Cannot cancel an already completed job (state {state.value}).",
            )
        runner = self.runners.get((project, job_id))
        if state is not JobState.CANCELLING:
            self.transition(project, job_id, JobState.CANCELLING)
            self.service_log(project, job_id, "Job cancellation requested.", SEVERITIES["NOTICE"])
        if runner is not None:
            runner.cancel()
        else:  # no runner (should not happen): end it here rather than leave it CANCELLING
            self.finish(project, job_id, JobState.CANCELLED, "Job cancelled by user.")
        return {}

    def patch(
        self, project: str, job_id: str, body: object, update_mask: str | None
    ) -> dict[str, Any]:
        job = self.stored(project, job_id)
        if not update_mask:
            raise invalid_field(
                "updateMask", "updateMask is required; the fields that can change are labels, etag."
            )
        fields = [f.strip() for f in update_mask.split(",") if f.strip()]
        bad = [f for f in fields if f not in PATCHABLE]
        if bad or not fields:
            raise invalid_field(
                "updateMask",
                f"Cannot update {', '.join(bad) or 'nothing'}: only labels and etag may change.",
            )
        if not isinstance(body, dict):
            raise invalid_field("job", "The request body must be a JSON object (a Job).")
        if "etag" in fields and not same_version(body.get("etag"), str(job.get("etag"))):
            raise ApiError(
                "ABORTED",
                "The job was changed since it was read (etag mismatch); read it again and retry.",
            )
        if "labels" in fields:
            labels = body.get("labels") or {}
            if not isinstance(labels, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in labels.items()
            ):
                raise invalid_field("labels", "labels must be a map of strings to strings.")
            problems = label_violations(labels)
            if problems:
                raise invalid(problems)
            if labels:
                job["labels"] = labels
            else:
                job.pop("labels", None)
        return self.render(self._save(project, job))
