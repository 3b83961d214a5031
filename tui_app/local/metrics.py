"""Per-replica CPU and memory: a sampler in the service, the samples' store, the ``:metrics`` read.

Every ``TUI_APP_METRICS_SECONDS`` seconds (default 2) the sampler looks at each live replica's
whole process tree: everything under its supervisor (the trainer and whatever it spawned, setsid'd
or orphaned children included, since the supervisor is their subreaper), and stores one sample per
replica: the CPU the tree used since the last sample, in percent of one core (so 250 means two and
a half cores busy), and the sum of the tree's resident set sizes (RSS: shared pages count once per
process). psutil runs in a worker thread; the event loop never waits on ``/proc``. Samples stay for
the life of the job and after it, like its logs.

Bounded storage: a replica keeps every sample of its last 10 minutes (``RAW_SECONDS``); older
samples are merged, once a minute, into buckets of 30 s (``BUCKET_SECONDS``) that carry the mean
CPU, the highest CPU and the peak RSS of the samples in them. When a replica has more than 480
buckets (``MAX_BUCKETS``), adjacent pairs merge and the bucket width doubles, so buckets are always
of one width and evenly spaced. A replica therefore never holds more than
``RAW_SECONDS / interval + MAX_BUCKETS`` rows (780 at the default interval, ~50 kB) however long it
runs: a week-long job ends with 32-minute buckets.

The extension endpoint
----------------------
Not part of ml v1 (a cloud endpoint answers 404): ::

    GET /v1/projects/{project}/jobs/{job}:metrics[?since=RFC3339]

    200 {
      "sampleInterval": "2s",
      "replicas": [
        {"taskName": "master-replica-0",
         "samples": [
           {"time": "2026-11-22T09:30:00.123000Z", "cpuPercent": 97.5, "memoryBytes": "222298112"},
           {"time": "2026-11-22T09:10:00.000000Z", "span": "30s", "cpuPercent": 88.1,
            "cpuPercentMax": 180.2, "memoryBytes": "251658240"},
           ...]},
        {"taskName": "worker-replica-0", "samples": []},
        ...]}

- ``replicas``: every replica the job started, in the job's order (master, workers, parameter
  servers, evaluators), each with ``samples`` oldest first; ``[]`` before the job's replicas start.
  A replica that runs on another node (the Ray executor) also has ``node``:
  ``{"address": "10.0.0.3", "id": "<Ray node id>"}``; one on the service's own machine has none.
  A tuning job's trials' replicas on other nodes follow, each with ``trialId`` and no samples.
- A sample: ``time`` (RFC 3339 UTC, always ``.ffffffZ``), ``cpuPercent`` (percent of one core,
  mean over the sample's span), ``memoryBytes`` (int64 as a string: the tree's RSS; for a merged
  sample the peak). A merged sample also has ``span`` (its width, a Duration: it covers
  ``[time, time + span)``) and ``cpuPercentMax`` (the highest sample in it).
- ``since``: only samples whose ``time`` is later than it. A client that reads the newest
  ``time`` it got back as the next ``since`` gets every sample once, as long as it polls at least
  every 10 minutes (older samples are merged into buckets that start before its cursor). Every
  replica sampled at one moment shares one ``time``, written in one transaction.
- Errors (google.rpc bodies): 404 ``NOT_FOUND`` for an unknown job, 400 ``INVALID_ARGUMENT`` for a
  ``since`` that is not an RFC 3339 timestamp, 401 without the bearer token.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import sqlite3
import threading
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psutil

from tui_app.local.environments.containers import Engine
from tui_app.local.environments.containers import stats as container_stats
from tui_app.local.errors import invalid_field, not_found_job
from tui_app.local.execution.executor import Executor
from tui_app.local.execution.local_executor import SUPERVISOR_MODULE
from tui_app.local.service_loop import ServiceLoop
from tui_app.local.store import SAMPLES_SCHEMA, JobStore, connect
from tui_app.local.timefmt import log_time
from tui_app.model.jobs.states import JobState
from tui_app.model.jobs.wire import parse_time

log = logging.getLogger(__name__)

INTERVAL_ENV = "TUI_APP_METRICS_SECONDS"
DEFAULT_INTERVAL_SECONDS = 2.0
MIN_INTERVAL_SECONDS = 0.1
RAW_SECONDS = 600.0
"""Every sample of the last 10 minutes is kept as it was taken."""
BUCKET_SECONDS = 30.0
"""The width older samples are first merged into."""
MAX_BUCKETS = 480
"""More merged buckets than this per replica and adjacent pairs merge (the width doubles)."""
COMPACT_EVERY_SECONDS = 60.0
# The states in which a job may have replicas running (QUEUED ones have none yet).
_SAMPLED_STATES = (JobState.PREPARING.value, JobState.RUNNING.value, JobState.CANCELLING.value)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

Key = tuple[str, str, str]
"""(project, job id, task name)."""
LiveKey = tuple[str, str, str, str]
"""(project, job id, trial id or "", task name): one live replica, a trial's included."""


def interval_from_env() -> float:
    """The sampling interval: ``$TUI_APP_METRICS_SECONDS``, else 2 s (at least 0.1 s)."""
    raw = os.environ.get(INTERVAL_ENV, "").strip()
    if not raw:
        return DEFAULT_INTERVAL_SECONDS
    try:
        value = float(raw)
    except ValueError:
        log.warning(
            "%s=%r is not a number; sampling every %gs", INTERVAL_ENV, raw, DEFAULT_INTERVAL_SECONDS
        )
        return DEFAULT_INTERVAL_SECONDS
    if not math.isfinite(value):
        return DEFAULT_INTERVAL_SECONDS
    return max(MIN_INTERVAL_SECONDS, value)


# -- samples and their store -------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    """One sample, or a bucket of merged ones (``span_ms`` > 0)."""

    t_ms: int
    """The sample's time, or the bucket's start, in ms since the epoch."""
    cpu: float
    """Mean CPU percent (of one core)."""
    cpu_max: float
    """Highest CPU percent of the samples merged here."""
    mem: int
    """Peak RSS in bytes."""
    n: int = 1
    """How many samples were merged into this one."""
    span_ms: int = 0

    def merged(self, other: Sample, start: int, width: int) -> Sample:
        n = self.n + other.n
        return Sample(
            start,
            (self.cpu * self.n + other.cpu * other.n) / n,
            max(self.cpu_max, other.cpu_max),
            max(self.mem, other.mem),
            n,
            width,
        )

    def to_json(self) -> dict[str, Any]:
        """The sample on the wire (see the module docstring)."""
        out: dict[str, Any] = {"time": log_time(self.t_ms * 1000)}
        if self.span_ms:
            out["span"] = f"{self.span_ms / 1000:g}s"
        out["cpuPercent"] = round(self.cpu, 1)
        if self.span_ms:
            out["cpuPercentMax"] = round(self.cpu_max, 1)
        out["memoryBytes"] = str(self.mem)
        return out


def rebucket(samples: Iterable[Sample], width_ms: int) -> dict[int, Sample]:
    """Merge ``samples`` into buckets of ``width_ms`` aligned on the epoch, keyed by start."""
    out: dict[int, Sample] = {}
    for s in samples:
        start = s.t_ms - s.t_ms % width_ms
        have = out.get(start)
        if have is None:
            out[start] = Sample(start, s.cpu, s.cpu_max, s.mem, s.n, width_ms)
        else:
            out[start] = have.merged(s, start, width_ms)
    return out


def downsample(
    buckets: Iterable[Sample], raw: Iterable[Sample], width_ms: int, max_buckets: int
) -> list[Sample]:
    """Old raw samples merged into the buckets; the width doubles until at most ``max_buckets``."""
    merged = rebucket([*buckets, *raw], width_ms)
    while len(merged) > max_buckets:
        width_ms *= 2
        merged = rebucket(merged.values(), width_ms)
    return sorted(merged.values(), key=lambda s: s.t_ms)


_INSERT = (
    "INSERT INTO replica_samples (project, job_id, task_name, t_ms, span_ms, n, cpu, cpu_max, mem)"
    " VALUES (?,?,?,?,?,?,?,?,?)"
)
_COLUMNS = "t_ms, cpu, cpu_max, mem, n, span_ms"


class SampleStore:
    """The ``replica_samples`` table of ``jobs.sqlite``: one writer (the sampler), any readers."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn = connect(path)
        self._conn.executescript(SAMPLES_SCHEMA)
        self._lock = threading.Lock()
        self._local = threading.local()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def _reader(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = connect(self.path)
            conn.execute("PRAGMA query_only=1")
            self._local.conn = conn
        return conn

    def add(self, rows: Sequence[tuple[Key, Sample]]) -> None:
        """Store samples (one moment's, usually) in one transaction."""
        with self._transaction() as conn:
            conn.executemany(
                _INSERT,
                [(*k, s.t_ms, s.span_ms, s.n, s.cpu, s.cpu_max, s.mem) for k, s in rows],
            )

    def compact(
        self,
        key: Key,
        now_ms: int,
        raw_ms: int = int(RAW_SECONDS * 1000),
        bucket_ms: int = int(BUCKET_SECONDS * 1000),
        max_buckets: int = MAX_BUCKETS,
    ) -> None:
        """Merge the replica's samples older than ``raw_ms`` into its buckets (module docstring)."""
        cut = now_ms - raw_ms
        with self._transaction() as conn:
            raw = [
                Sample(*row)
                for row in conn.execute(
                    f"SELECT {_COLUMNS} FROM replica_samples WHERE project=? AND job_id=? "
                    "AND task_name=? AND span_ms=0 AND t_ms<?",
                    (*key, cut),
                )
            ]
            if not raw:
                return
            buckets = [
                Sample(*row)
                for row in conn.execute(
                    f"SELECT {_COLUMNS} FROM replica_samples WHERE project=? AND job_id=? "
                    "AND task_name=? AND span_ms>0",
                    key,
                )
            ]
            width = max((b.span_ms for b in buckets), default=bucket_ms)
            merged = downsample(buckets, raw, width, max_buckets)
            conn.execute(
                "DELETE FROM replica_samples WHERE project=? AND job_id=? AND task_name=? "
                "AND (span_ms>0 OR t_ms<?)",
                (*key, cut),
            )
            conn.executemany(
                _INSERT, [(*key, s.t_ms, s.span_ms, s.n, s.cpu, s.cpu_max, s.mem) for s in merged]
            )

    def read(
        self, project: str, job_id: str, since_ms: int | None = None
    ) -> dict[str, list[Sample]]:
        """The job's samples per task name, oldest first; only those after ``since_ms``."""
        out: dict[str, list[Sample]] = defaultdict(list)
        rows = self._reader().execute(
            f"SELECT task_name, {_COLUMNS} FROM replica_samples WHERE project=? AND job_id=? "
            "AND t_ms>? ORDER BY task_name, t_ms",
            (project, job_id, -1 if since_ms is None else since_ms),
        )
        for task, *fields in rows:
            out[task].append(Sample(*fields))
        return dict(out)


# -- sampling processes ----------------------------------------------------------------------


@dataclass
class _Tree:
    """What one supervisor's tree used so far."""

    create_time: float
    ours: bool
    """The pid really is one of our supervisors (not a recycled pid)."""
    last_t: float | None = None
    cpu_seen: float = 0.0
    """The most CPU seconds the tree had used at any sample (its high-water mark)."""


class ProcessSampler:
    """CPU percent and RSS of the trees under replica supervisors, from one scan of the processes.

    A tree's CPU time is everything its live processes used (``user + system``), plus what their
    reaped children used (``children_user + children_system``, the supervisor's included: it reaps
    the trainer and the orphans it adopts). That total only grows while processes come and go, so
    the CPU of an interval is its growth; a dip (a child exiting before it is reaped) is not
    counted twice when the reaper's total catches up, because growth counts from the high-water
    mark.
    """

    def __init__(self) -> None:
        self._trees: dict[int, _Tree] = {}

    def sample(self, supervisors: Iterable[int], now: float) -> dict[int, tuple[float, int]]:
        """(CPU percent, RSS bytes) per supervisor pid whose replica has a live process."""
        wanted = set(supervisors)
        self._trees = {pid: t for pid, t in self._trees.items() if pid in wanted}
        if not wanted:
            return {}
        procs: dict[int, psutil.Process] = {}
        children: dict[int, list[int]] = defaultdict(list)
        # psutil keeps the Process objects of earlier scans and does not re-check a pid that was
        # reused between two scans (pids wrap at 32768 on many machines), so every scan starts
        # from fresh objects: a stale one must not hide a replica for the rest of its life.
        psutil.process_iter.cache_clear()
        for proc in psutil.process_iter(["ppid"]):
            procs[proc.pid] = proc
            ppid = proc.info.get("ppid")
            if ppid:
                children[ppid].append(proc.pid)
        out: dict[int, tuple[float, int]] = {}
        for pid in wanted:
            sup = procs.get(pid)
            if sup is None:
                self._trees.pop(pid, None)
                continue
            tree = self._tree(pid, sup)
            if tree is None or not tree.ours:
                continue
            used, rss, alive = self._usage(sup, procs, children)
            if alive:
                if tree.last_t is None:
                    elapsed = now - tree.create_time
                    grown = used
                else:
                    elapsed = now - tree.last_t
                    grown = max(0.0, used - tree.cpu_seen)
                out[pid] = (100.0 * grown / elapsed if elapsed > 0.01 else 0.0, rss)
            tree.cpu_seen = max(tree.cpu_seen, used)
            tree.last_t = now
        return out

    def _tree(self, pid: int, sup: psutil.Process) -> _Tree | None:
        try:
            created = sup.create_time()
        except psutil.Error:
            return None
        tree = self._trees.get(pid)
        if tree is None or tree.create_time != created or not tree.ours:
            # A verdict of "not ours" is not kept: it is read again at the next sample, so a
            # supervisor seen at a bad moment is not ignored for the rest of its life.
            try:
                ours = SUPERVISOR_MODULE in " ".join(sup.cmdline())
            except psutil.Error:
                return None
            if tree is None or tree.create_time != created:
                tree = self._trees[pid] = _Tree(created, ours)
            tree.ours = ours
        return tree

    @staticmethod
    def _usage(
        sup: psutil.Process, procs: dict[int, psutil.Process], children: dict[int, list[int]]
    ) -> tuple[float, int, bool]:
        """(CPU seconds, RSS, any process alive) of everything under ``sup``."""
        used = 0.0
        try:
            times = sup.cpu_times()
            used += times.children_user + times.children_system
        except psutil.Error:
            pass
        rss = 0
        alive = False
        stack = list(children.get(sup.pid, ()))
        seen: set[int] = set()
        while stack:
            pid = stack.pop()
            if pid in seen:
                continue
            seen.add(pid)
            stack.extend(children.get(pid, ()))
            proc = procs[pid]
            try:
                with proc.oneshot():
                    if proc.status() == psutil.STATUS_ZOMBIE:
                        continue  # exited, not yet reaped: its RSS reads 0, not a real sample
                    t = proc.cpu_times()
                    mem = proc.memory_info().rss
            except psutil.Error:
                continue
            if mem == 0:
                # Exiting: the kernel has released its memory but not yet made it a zombie (a
                # running process always has pages). A sample then read "0 B" as the replica's
                # last memory figure.
                continue
            used += t.user + t.system + t.children_user + t.children_system
            rss += mem
            alive = True
        return used, rss, alive


def _trial_replicas(runtime: dict[str, Any]) -> list[dict[str, Any]]:
    """A tuning job's trials' replicas that ran on other nodes: ``trialId``, ``taskName`` and
    ``node``, no samples (trials are not sampled), trials in order."""
    out: list[dict[str, Any]] = []
    trials = runtime.get("trials")
    if not isinstance(trials, dict):
        return out
    for trial_id in sorted(trials, key=lambda t: (len(str(t)), str(t))):
        run = trials[trial_id]
        for rep in (run.get("replicas") or []) if isinstance(run, dict) else []:
            name, node = rep.get("task_name"), rep.get("node")
            if isinstance(name, str) and isinstance(node, str):
                address = {"address": node, "id": str(rep.get("nodeId") or "")}
                out.append(
                    {"taskName": name, "trialId": str(trial_id), "node": address, "samples": []}
                )
    return out


# -- the sampler in the service --------------------------------------------------------------


class MetricsSampler:
    """Samples every live replica every ``interval`` seconds; answers ``:metrics`` reads."""

    def __init__(
        self,
        jobs: JobStore,
        db_path: Path,
        interval: float | None = None,
        engine: Engine | None = None,
        executor: Executor | None = None,
    ) -> None:
        self.interval = interval if interval is not None else interval_from_env()
        self._executor = executor
        """Replicas on other nodes (a record with an ``actor``) are measured there and report
        CPU seconds and RSS through it; the sampler turns seconds into percent."""
        self._remote_cpu: dict[LiveKey, tuple[float, float]] = {}
        self._engine = engine
        """Container replicas are measured by the engine's stats (docker's containers are not
        in the supervisor's process tree at all)."""
        self.store = SampleStore(db_path)
        self._jobs = jobs
        self._procs = ProcessSampler()
        self._compacted: dict[Key, float] = {}
        self._rounds = ServiceLoop("metrics-sampler")
        self._last_error: str | None = None
        self.latest: dict[LiveKey, tuple[float, float]] = {}
        """Each live replica's last sample: (time, CPU percent of one core), trials' too."""

    def start(self) -> None:
        self._rounds.start(self._loop)

    async def stop(self) -> None:
        """Stop sampling (a sample being taken finishes first) and close the store."""
        await self._rounds.stop()
        self.store.close()

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        while not self._rounds.stopping.is_set():
            started = loop.time()
            try:
                await asyncio.to_thread(self.sample_once)
            except Exception as exc:  # a full disk must not stop the service, nor flood its log
                if str(exc) != self._last_error:
                    log.exception("sampling replica metrics failed")
                self._last_error = str(exc)
            else:
                self._last_error = None
            await self._rounds.pause(max(0.05, self.interval - (loop.time() - started)))

    def sample_once(self, now: float | None = None) -> int:
        """Take one sample of every live replica; returns how many were stored (blocking).

        A tuning job's trials' replicas are measured too, for ``latest`` (the stall watch),
        but not stored: ``:metrics`` answers for the job's own replicas."""
        targets: list[tuple[LiveKey, int]] = []
        boxed: list[tuple[LiveKey, str]] = []
        remote: list[tuple[LiveKey, dict[str, Any]]] = []
        for project, job, runtime in self._jobs.in_states(_SAMPLED_STATES):
            runs: list[tuple[str, Any]] = [("", runtime.get("replicas"))]
            trials = runtime.get("trials")
            if isinstance(trials, dict):
                runs += [(str(t), (r or {}).get("replicas")) for t, r in trials.items()]
            for trial, reps in runs:
                for rep in reps if isinstance(reps, list) else ():
                    if not isinstance(rep, dict):
                        continue
                    pid, name = rep.get("supervisor"), rep.get("task_name")
                    box = rep.get("container")
                    if not isinstance(name, str):
                        continue
                    key = (project, str(job["jobId"]), trial, name)
                    if isinstance(rep.get("actor"), str):
                        remote.append((key, rep))
                    elif isinstance(box, str) and self._engine is not None:
                        boxed.append((key, box))
                    elif isinstance(pid, int):
                        targets.append((key, pid))
        t = time.time() if now is None else now
        usage = self._procs.sample((pid for _, pid in targets), t)
        t_ms = int(t * 1000)
        measured: list[tuple[LiveKey, Sample]] = [
            (key, Sample(t_ms, cpu, cpu, rss))
            for key, pid in targets
            if pid in usage
            for cpu, rss in (usage[pid],)
        ]
        if boxed and self._engine is not None:
            stats = container_stats(self._engine, [box for _, box in boxed])
            measured += [
                (key, Sample(t_ms, cpu, cpu, mem))
                for key, box in boxed
                if box in stats
                for cpu, mem in (stats[box],)
            ]
        if remote and self._executor is not None:
            measured += self._remote_rows(remote, t)
        self.latest = {key: (t, sample.cpu) for key, sample in measured}
        rows = [((p, j, name), sample) for (p, j, trial, name), sample in measured if not trial]
        if rows:
            self.store.add(rows)
        live = {(p, j, name) for (p, j, trial, name), _ in targets + boxed + remote if not trial}
        self._compacted = {k: v for k, v in self._compacted.items() if k in live}
        for stored, _ in rows:
            last = self._compacted.setdefault(stored, t)
            if t - last >= COMPACT_EVERY_SECONDS:
                self.store.compact(stored, t_ms)
                self._compacted[stored] = t
        return len(rows)

    def _remote_rows(
        self, remote: list[tuple[LiveKey, dict[str, Any]]], t: float
    ) -> list[tuple[LiveKey, Sample]]:
        """Samples of replicas measured on their nodes: percent of one core from the CPU
        seconds they report, since the previous report (the first report only primes it)."""
        assert self._executor is not None
        got = self._executor.usage([rec for _, rec in remote])
        rows: list[tuple[LiveKey, Sample]] = []
        for i, (key, _) in enumerate(remote):
            if i not in got:
                continue
            used, rss = got[i]
            before = self._remote_cpu.get(key)
            self._remote_cpu[key] = (t, used)
            if before is None or t <= before[0]:
                continue
            cpu = max(0.0, (used - before[1]) / (t - before[0]) * 100.0)
            rows.append((key, Sample(int(t * 1000), cpu, cpu, rss)))
        live = {key for key, _ in remote}
        self._remote_cpu = {k: v for k, v in self._remote_cpu.items() if k in live}
        return rows

    def read(self, project: str, job_id: str, since: str | None = None) -> dict[str, Any]:
        """The ``:metrics`` response (blocking: the server calls it in a thread).

        Raises:
            ApiError: NOT_FOUND for an unknown job, INVALID_ARGUMENT for a bad ``since``.
        """
        if self._jobs.get(project, job_id) is None:
            raise not_found_job(f"projects/{project}/jobs/{job_id}")
        since_ms: int | None = None
        if since:
            moment = parse_time(since)
            if moment is None:
                raise invalid_field(
                    "since",
                    f"{since[:60]!r} is not an RFC 3339 timestamp "
                    "(e.g. 2026-11-22T09:30:00.000000Z).",
                )
            since_ms = ((moment - _EPOCH) // timedelta(microseconds=1)) // 1000
        samples = self.store.read(project, job_id, since_ms)
        runtime = self._jobs.runtime(project, job_id)
        recorded = [
            rep for rep in runtime.get("replicas") or [] if isinstance(rep.get("task_name"), str)
        ]
        order = [rep["task_name"] for rep in recorded]
        nodes = {
            rep["task_name"]: {"address": str(rep["node"]), "id": str(rep.get("nodeId") or "")}
            for rep in recorded
            if isinstance(rep.get("node"), str)
        }
        names = order + sorted(n for n in samples if n not in order)
        return {
            "sampleInterval": f"{self.interval:g}s",
            "replicas": [
                {
                    "taskName": name,
                    **({"node": nodes[name]} if name in nodes else {}),
                    "samples": [s.to_json() for s in samples.get(name, [])],
                }
                for name in names
            ]
            + _trial_replicas(runtime),
        }
