"""Log pane benchmark (issue 4, done-when 3): ``python benchmarks/log_bench.py [--quick]
[--pin] [--metrics-open]``.

Prints a table (median and min-max, n stated) with each goal beside its figure. The real
``JobsApp`` runs headless in a fresh child process (``App.run_test(size=(120, 40))``) against
a real local service, and opens a job's logs by pushing ``LogsScreen(job_id)``: its stream
thread (``LogStream.follow``) posts ``LinesArrived`` batches, which land in one ``LogView`` per
replica and in the merged ``all`` view. Frames are observed by hooking ``App._display``
(every compositor update goes through it, headless too); each chunk of a ``LinesArrived``
batch is counted as it is appended.

1. Replica write -> line on screen (goal: median <= 0.5 s). A probe trainer (BASIC job) prints
   ``probe <i> <time.time()>`` every 100 ms; each line's latency is the wall time of the first
   frame painted after it was appended to the merged view, minus the time embedded in it.
   Lines printed before the stream started following (the screen opens while the job starts)
   are not counted. The latency is split into: print -> the entry's timestamp (service
   ingest), -> the stream's poll returned it (``LogStream.poll``, every 0.25 s while visible),
   -> on screen.
2. Flood (goals: >= 20k lines/s shown, event-loop lag p99 <= 50 ms). A CUSTOM job, master + 3
   workers of the sample trainer with ``--flood N --steps 1`` (no ps: the trainer waits for
   none), 4N lines in all; the screen is open from the job's creation. Lines/s = flood lines
   appended to the merged view between the first frame showing a flood line and the frame
   showing the last one, over that wall time; the verdict also asks that it be sustained (no
   more than 1 s without a frame showing new lines), and the end-to-end rate (first flood line
   stamped by the service -> last one shown) is printed beside it. Lag = lateness of a 10 ms
   ``asyncio.sleep`` heartbeat in the app's loop from the first flood line stamped to the last
   one shown, corrected for coordinated omission (a beat L late also counts the beats that could
   not fire meanwhile: L - 10 ms, L - 20 ms ...), uncorrected beside it. CPU of the app (per
   thread), of the service and of the whole machine over the same window; the stream's polls,
   the ``LinesArrived`` handler's batches and the GC passes, to explain the lag. ``--pin``
   runs the app on CPU 0 and the service with its replicas on CPU 1: the lag the app has when
   nothing else takes its core.
3. Memory (goal: bounded by the views' ``max_lines``, 100k each). The app's RSS at start, with
   the list shown, during the flood and after it, with what each view holds (``line_count``,
   ``dropped``). The bound is tested against a fresh app fed the same flood at half size (all
   views already full there too): the peak RSS must not grow by more than 10 %. Then the logs
   are closed (escape) and the RSS taken as is and after ``gc.collect()``, with whether the
   ``LogsScreen`` object was freed (a weakref; if not, two diagnoses below); then a second job
   of as many lines runs to completion, its logs are opened (the stream's ``tail`` of 100k
   lines) and closed again, and the RSS is taken the same way: memory released or not.

``--metrics-open`` (issue 26: the logs keep their goals while a metrics view is open on a
running job): every figure above, with the metrics view's background work in the app's process.
Before each child the parent starts a BASIC job that writes TensorFlow event files, 20 tags at
4 steps a second, to its ``gs://`` jobDir through the service's storage API (``metrics_load.py``
beside this script); the child opens the real ``MetricsScreen`` on it as ``M`` does
(``JobsApp.open_metrics``, reading through the real ``JobScalars``), waits until its charts are
drawn, then pushes the logs over it. "Open" means this: Textual paints only the top screen, so
while the logs are measured the view's worker goes on polling every second (the job, a listing
of its output folder, a ranged read of the new bytes, numpy decoding), its series grow, and its
``_polled`` runs on the event loop; its charts are rebuilt only when it is shown (between the
flood and the second job, once the first logs are closed). Its polls, updates and chart builds
join the work late heartbeats are laid beside. The service gets ``REPLICAS + 1`` CPU slots, so
that the writing job does not keep the flood job queued (slots decide admission only).

Everything lives in a temporary directory that is removed at the end; the service, the app's
child process and any process started from that directory are stopped, also on Ctrl-C or
SIGTERM. Run it with the project's virtualenv: it imports ``tui_app``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import gc
import itertools
import json
import os
import platform
import signal
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psutil
from bench_report import (  # beside this script
    Figure,
    Results,
    machine_line,
    print_table,
    raise_interrupt,
    workspace,
)
from metrics_load import OpenView, ViewMeter, describe, open_under
from service_bench import (
    PROJECT,
    TERMINAL,
    TRAINER_SRC,
    Service,
    basic_job,
    kill_stragglers,
    percentile,
    wait_terminal,
    write_probe_package,
)
from tui_bench import inject, med_range, peak_mb, rss_mb, verdict

if TYPE_CHECKING:
    from textual.app import App

    from tui_app.model.logs.log_line import LogLine
    from tui_app.shell.app import JobsApp

SIZE = (120, 40)
RESULT_PREFIX = "LOG_BENCH_RESULT "
REPLICAS = 4
WORKERS = REPLICAS - 1
PROBE_INTERVAL = 0.1
HEARTBEAT_S = 0.01
RSS_EVERY = 10
"""Heartbeats between RSS samples (~100 ms)."""
LATENCY_GOAL_S = 0.5
RATE_GOAL = 20_000
LAG_GOAL_S = 0.050
PLATEAU_TOLERANCE = 0.10
"""Peak RSS may grow this much from the half-size flood to the full one and count as bounded."""
RELEASE_TOLERANCE = 0.10
"""RSS after the second job's logs closed may exceed the first close's by this much."""
PIN_ENV = "LOG_BENCH_APP_CPU"
"""With ``--pin``, the CPU the app's child process keeps to."""
SUSTAIN_GAP_S = 1.0
"""A flood counts as sustained when no longer than this passes without a new line shown."""
EXECUTOR_SWEEP = 8
"""Concurrent no-op thread workers run to reach every idle thread of asyncio's executor."""


@dataclass(frozen=True)
class Config:
    """What one run measures; ``--quick`` shrinks everything."""

    quick: bool
    probe_lines: int
    flood_per_replica: int
    second_per_replica: int

    @classmethod
    def make(cls, quick: bool) -> Config:
        if quick:
            return cls(True, 70, 50_000, 50_000)
        return cls(False, 110, 250_000, 250_000)


def custom_job(job_id: str, package_uri: str, *args: str) -> dict[str, Any]:
    """Master + 3 workers of the sample trainer, no parameter server."""
    body = basic_job(job_id, package_uri, "trainer.task", *args)
    body["trainingInput"].update(
        scaleTier="CUSTOM",
        masterType="standard",
        workerType="standard",
        workerCount=str(WORKERS),
    )
    return body


def ms(seconds: float, digits: int = 0) -> str:
    return f"{seconds * 1e3:,.{digits}f}"


def dist(values: Sequence[float], digits: int = 0) -> str:
    """``p50 / p99 / max`` in ms."""
    return (
        f"p50 {ms(percentile(list(values), 50), digits)} / p99 "
        f"{ms(percentile(list(values), 99), digits)} / max {ms(max(values), digits)} ms"
    )


# -- in the child: the app, frames, heartbeat ---------------------------------------------------


class FrameTap:
    """Calls every hook with ``time.perf_counter()`` for each painted compositor update.

    Like ``tui_bench.FrameProbe`` (``App._display`` runs for every frame, headless too), but it
    reports every frame rather than the first one at which a condition holds.
    """

    def __init__(self) -> None:
        self.hooks: list[Callable[[float], None]] = []
        self.count = 0

    def install(self, app_class: type[App[Any]]) -> None:
        original = app_class._display
        tap = self

        def _display(self: App[Any], screen: Any, renderable: Any) -> None:
            if renderable is not None and not self._batch_count:
                now = time.perf_counter()
                tap.count += 1
                for hook in tap.hooks:
                    hook(now)
            original(self, screen, renderable)

        setattr(app_class, "_display", _display)  # noqa: B010 (mypy refuses method assignment)


class Heartbeat:
    """A 10 ms ``asyncio.sleep`` loop in the app's event loop: its lateness is the loop's lag.

    Every ``RSS_EVERY`` beats it also samples the RSS together with ``progress()``.
    """

    def __init__(self, progress: Callable[[], int]) -> None:
        self.beats: list[tuple[float, float]] = []
        """(perf_counter at the start of the sleep, lateness in seconds)."""
        self.rss: list[tuple[float, float, int]] = []
        """(perf_counter, RSS MiB, progress())."""
        self.progress = progress
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        n = 0
        while True:
            t0 = time.perf_counter()
            await asyncio.sleep(HEARTBEAT_S)
            self.beats.append((t0, time.perf_counter() - t0 - HEARTBEAT_S))
            n += 1
            if n % RSS_EVERY == 0:
                self.rss.append((time.perf_counter(), rss_mb(), self.progress()))

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()

    def window(self, t0: float, t1: float) -> list[float]:
        return [lag for t, lag in self.beats if t0 <= t < t1]


class GcLog:
    """Windows of the cyclic GC's passes: (start, end, generation), perf_counter."""

    def __init__(self) -> None:
        self.passes: list[tuple[float, float, int]] = []
        self._started = 0.0
        gc.callbacks.append(self._on_gc)

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.passes.append((self._started, time.perf_counter(), int(info["generation"])))

    def window(self, t0: float, t1: float) -> list[tuple[float, float, int]]:
        return [p for p in self.passes if t0 <= p[0] < t1]


def make_app(state_root: str, work: Path) -> JobsApp:
    """The real app, as ``tui-app --state-dir STATE --project PROJECT`` builds it."""
    from tui_app.config.settings import Profile, Settings
    from tui_app.entry.launch import connector
    from tui_app.shell.app import JobsApp

    return JobsApp(
        Settings(),
        connector(Profile("local"), Path(state_root)),
        PROJECT,
        "local",
        settings_file=work / "settings.yaml",
    )


async def until(cond: Callable[[], bool], timeout: float, what: str) -> float:
    """Wait (in the app's loop) until ``cond()``; returns the perf_counter seen."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not after {timeout:.0f} s")
        await asyncio.sleep(0.02)
    return time.perf_counter()


async def in_thread(fn: Callable[[], Any]) -> Any:
    return await asyncio.to_thread(fn)


def emit(data: dict[str, Any]) -> None:
    print(RESULT_PREFIX + json.dumps(data), flush=True)


class Instruments:
    """Wraps the screen's ``_append_batch`` and ``LogStream.poll``/``follow`` to see
    batches: what was appended when (on the loop), what each poll returned (in the thread)."""

    def __init__(self, line_hook: Callable[[list[LogLine], float], None]) -> None:
        from tui_app.api.log_stream import LogStream
        from tui_app.shell.screens.logs_screen import LogsScreen

        self.handled: list[tuple[float, float, int]] = []
        """(perf start, seconds, lines) per chunk of a LinesArrived batch appended."""
        self.polls: list[tuple[float, float, int]] = []
        """(perf start, seconds, lines) per LogStream.poll in the stream thread."""
        self.polled_at: dict[str, float] = {}
        """insertId -> time.time() when the poll returning it finished (probe lines only)."""
        self.follow_started: float | None = None
        """time.time() when ``LogStream.follow`` began (after the initial tail)."""
        self.stream_thread: int | None = None
        self.track_probe = False
        original_append = LogsScreen._append_batch
        original_prepend = LogsScreen._prepend_batch
        original_poll = LogStream.poll
        original_follow = LogStream.follow
        me = self

        def append_batch(self: LogsScreen, batch: list[LogLine]) -> None:
            # The screen appends a LinesArrived batch APPEND_CHUNK lines at a time, yielding to
            # the event loop in between: each chunk is one handler run here.
            t0 = time.perf_counter()
            original_append(self, batch)
            t1 = time.perf_counter()
            me.handled.append((t0, t1 - t0, len(batch)))
            line_hook(batch, t1)

        def prepend_batch(self: LogsScreen, lines: list[LogLine]) -> None:
            # History above the tail (the screen loads it after the newest batch), a chunk at
            # a time like appends.
            t0 = time.perf_counter()
            original_prepend(self, lines)
            t1 = time.perf_counter()
            me.handled.append((t0, t1 - t0, len(lines)))
            line_hook(lines, t1)

        def poll(self: LogStream, limit: int | None = None, wait: float = 0.0) -> list[LogLine]:
            t0 = time.perf_counter()
            lines = original_poll(self, limit, wait)
            me.polls.append((t0, time.perf_counter() - t0, len(lines)))
            if me.track_probe:
                now = time.time()
                for line in lines:
                    if line.text.startswith("probe "):
                        me.polled_at[line.insert_id] = now
            return lines

        def follow(self: LogStream, *args: Any, **kw: Any) -> None:
            me.follow_started = time.time()
            if me.stream_thread is None:  # the first stream's (job A's)
                me.stream_thread = threading.get_native_id()
            original_follow(self, *args, **kw)

        self.windows: dict[str, list[tuple[float, float]]] = {}
        """(perf start, end) of other work that holds the GIL or the loop, by kind: to say
        what a late heartbeat sat beside."""
        self._time_calls()
        setattr(LogsScreen, "_append_batch", append_batch)  # noqa: B010
        setattr(LogsScreen, "_prepend_batch", prepend_batch)  # noqa: B010
        setattr(LogStream, "poll", poll)  # noqa: B010
        setattr(LogStream, "follow", follow)  # noqa: B010

    def _time_calls(self) -> None:
        """Wrap a few functions to log when they ran (calls of 1 ms or more)."""
        from textual.screen import Screen

        import tui_app.api.log_stream as log_stream
        from tui_app.widgets.log_view import LogView

        targets: list[tuple[str, Any, str]] = [
            ("frame", Screen, "_compositor_refresh"),
            ("layout", Screen, "_refresh_layout"),
            ("json decode", json, "loads"),
            ("lines built", log_stream, "_row_lines"),
            ("view cleared", LogView, "clear"),
        ]
        for kind, owner, name in targets:
            original = getattr(owner, name)
            log = self.windows.setdefault(kind, [])

            def timed(*args: Any, _f: Any = original, _log: Any = log, **kw: Any) -> Any:
                t0 = time.perf_counter()
                try:
                    return _f(*args, **kw)
                finally:
                    t1 = time.perf_counter()
                    if t1 - t0 >= 0.001:
                        _log.append((t0, t1))

            setattr(owner, name, timed)


def run_app(app: JobsApp, body: Callable[[], Awaitable[None]]) -> None:
    if os.environ.get(PIN_ENV):  # --pin: this child (the app) keeps to its own CPU
        os.sched_setaffinity(0, {int(os.environ[PIN_ENV])})

    async def main() -> None:
        async with app.run_test(size=SIZE):
            try:
                await body()
            finally:
                app.refresh_now()  # wake the poller so that it sees the cancellation at exit

    asyncio.run(main())


class MetricsBeneath:
    """``--metrics-open`` in a child: the metrics view on a running job, opened as ``M`` opens
    it and shown until drawn; the logs screen is then pushed over it, so the view's worker
    polls (and its ``_polled`` runs on the loop) while the logs are measured. Its work is added
    to ``windows``, the other work late heartbeats are laid beside."""

    def __init__(self, windows: dict[str, list[tuple[float, float]]]) -> None:
        self.windows = windows
        self.meter: ViewMeter | None = None
        self.view: OpenView | None = None
        self.t_open = 0.0

    async def open(self, app: JobsApp, job_id: str) -> None:
        self.meter = ViewMeter()  # its imports (numpy, plotext) load here, after rss_app
        self.windows.update(self.meter.windows())
        self.view = await open_under(app, job_id, self.meter)
        self.t_open = time.perf_counter()

    def done(self, result: dict[str, Any]) -> None:
        """What the view did from its opening until now (the measured part), into ``result``."""
        if self.meter is None or self.view is None:
            return
        result["metrics"] = {
            "opened_s": self.view.opened_s,
            "first_builds": self.view.first_builds,
            "during": self.meter.summary(self.t_open, time.perf_counter()),
            "at_end": self.view.state(),
        }

    def summary(self, t0: float, t1: float) -> dict[str, Any]:
        assert self.meter is not None
        return self.meter.summary(t0, t1)


# -- child 1: replica write -> on screen --------------------------------------------------------


def child_latency(
    state_root: str, work: str, probe_uri: str, count: int, metrics_job: str | None = None
) -> None:
    from tui_app.shell.app import JobsApp
    from tui_app.shell.screens.logs_screen import LogsScreen

    app = make_app(state_root, Path(work))
    tap = FrameTap()
    tap.install(JobsApp)
    appended: list[tuple[str, float, str]] = []
    """Probe lines appended since the last frame: (insertId, printed at, entry timestamp)."""
    lines_out: list[dict[str, Any]] = []

    def on_lines(lines: list[LogLine], _t: float) -> None:
        for line in lines:
            if line.text.startswith("probe "):
                appended.append((line.insert_id, float(line.text.split()[2]), line.timestamp))

    inst = Instruments(on_lines)
    inst.track_probe = True

    def on_frame(_now: float) -> None:
        if not appended:
            return
        wall = time.time()
        for iid, printed, ts in appended:
            lines_out.append({"id": iid, "printed": printed, "ts": ts, "shown": wall})
        appended.clear()

    tap.hooks.append(on_frame)
    job_id = "log_bench_probe"
    body = basic_job(
        job_id, probe_uri, "probe.task", "--count", str(count), "--interval", str(PROBE_INTERVAL)
    )
    result: dict[str, Any] = {}

    async def run() -> None:
        await until(lambda: bool(app.last_rows), 60, "the job list")
        if metrics_job is not None:
            await metrics.open(app, metrics_job)
        await in_thread(lambda: app.source.call(lambda c: c.create(body)))
        screen = LogsScreen(job_id)
        await app.push_screen(screen)
        await until(lambda: len(lines_out) >= count, 120 + count * PROBE_INTERVAL, "probe lines")
        deadline = time.monotonic() + 60
        while True:
            job = await in_thread(lambda: app.source.call(lambda c: c.get(job_id)))
            if job["state"] in TERMINAL or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.2)
        result["state"] = job["state"]
        metrics.done(result)
        screen.action_back()
        await asyncio.sleep(0.1)

    metrics = MetricsBeneath(inst.windows)
    run_app(app, run)
    for line in lines_out:
        line["polled"] = inst.polled_at.get(line["id"])
    result.update(
        lines=lines_out,
        follow_started=inst.follow_started,
        polls=[p[1] for p in inst.polls],
        frames=tap.count,
    )
    emit(result)


# -- child 2: flood, memory ---------------------------------------------------------------------


def child_flood(
    state_root: str,
    work: str,
    trainer_uri: str,
    per_replica: int,
    second: int,
    svc_pid: int,
    tag: str,
    metrics_job: str | None = None,
) -> None:
    """Job A floods with its logs open; then (``second`` > 0) job B is opened when finished.
    With ``metrics_job``, a metrics view on that job is open beneath the logs throughout."""
    rss_start = rss_mb()
    from tui_app.shell.app import JobsApp
    from tui_app.shell.screens.logs_screen import ALL, LogsScreen
    from tui_app.widgets.log_view import LogView

    rss_imported = rss_mb()
    app = make_app(state_root, Path(work))
    tap = FrameTap()
    tap.install(JobsApp)
    total = per_replica * REPLICAS
    counted = [0]
    """Flood lines appended to the merged view so far (this job's)."""
    progress: list[tuple[float, int, bool]] = []
    """(perf_counter, flood lines shown) at each frame that showed more."""
    shown = [0]
    me = psutil.Process()
    service = psutil.Process(svc_pid)
    main_tid = threading.main_thread().native_id

    def snapshot() -> dict[str, Any]:
        threads = {t.id: t.user_time + t.system_time for t in me.threads()}
        svc = service.cpu_times()
        box = psutil.cpu_times()
        return {
            "t": time.perf_counter(),
            "process": time.process_time(),
            "threads": threads,
            "service": svc.user + svc.system,
            "box_busy": sum(box) - box.idle - getattr(box, "iowait", 0.0),
        }

    cpu: dict[str, dict[str, Any]] = {}

    first_entry: list[str] = []
    """The entry timestamp of the earliest flood line shown (job A's)."""
    a_done = [False]
    """Job A's stream has ended: its last frame with new lines is the flood's end."""

    def on_lines(lines: list[LogLine], _t: float) -> None:
        floods = [ln for ln in lines if ln.text.startswith("flood ") and ln.text[6:7].isdigit()]
        if floods and not a_done[0]:
            earliest = min(ln.timestamp for ln in floods)
            if not first_entry or earliest < first_entry[0]:
                first_entry[:] = [earliest]
        counted[0] += len(floods)
        if lines and not a_done[0]:
            newest[0] = max(newest[0], lines[-1].timestamp)

    newest = [""]
    """The newest entry timestamp appended (job A's): how far behind the service the pane is."""
    behind: list[float] = []
    """At each frame that showed new lines: wall clock minus the newest timestamp shown."""

    inst = Instruments(on_lines)

    def on_frame(now: float) -> None:
        n = counted[0]
        if n == shown[0]:
            return
        shown[0] = n
        if a_done[0]:
            return
        progress.append((now, n, False))
        if newest[0]:
            behind.append(time.time() - epoch(newest[0]))
        if "first" not in cpu:
            cpu["first"] = snapshot()
        # Until the stream ends, each frame with new lines may be the last one: a job ends with
        # its master, so a worker may be stopped before it printed all of its flood.
        cpu["last"] = snapshot()
        cpu["last"]["wall"] = time.time()

    tap.hooks.append(on_frame)
    beat = Heartbeat(lambda: counted[0])
    gclog = GcLog()
    result: dict[str, Any] = {
        "rss_start": rss_start,
        "rss_imported": rss_imported,
        "per_replica": per_replica,
        "second_per_replica": second,
        "main_tid": main_tid,
    }

    def view_counts(screen: LogsScreen) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for task in [ALL, *screen.tasks]:
            view = screen.view(task)
            out[task] = [view.line_count, view.dropped, view.max_lines]
        return out

    async def close(ref: weakref.ref[LogsScreen], key: str) -> None:
        """Escape on the logs screen (its ``back``), then the RSS as it is and after a GC.

        The caller holds no reference to the screen: only ``ref``.
        """
        screen = ref()
        assert screen is not None and app.screen is screen
        views = [weakref.ref(v) for v in screen.query(LogView)]
        del screen
        inject(app, "escape")
        await until(lambda: not isinstance(app.screen, LogsScreen), 30, "the logs screen closed")
        await asyncio.sleep(1.0)
        result[key + "_rss_closed"] = rss_mb()
        result[key + "_alive_before_gc"] = ref() is not None
        gc.collect()
        await asyncio.sleep(0.2)
        result[key + "_rss_gc"] = rss_mb()
        result[key + "_alive_after_gc"] = ref() is not None
        result[key + "_views_alive"] = sum(v() is not None for v in views)
        if ref() is not None:
            # Diagnosis: Textual's thread workers set their ContextVar in the executor thread's
            # own context, which outlives the worker. Give every idle executor thread a new
            # worker at once: is the screen freed then?
            busy = [
                app.run_worker(partial(time.sleep, 0.05), thread=True, description="log_bench")
                for _ in range(EXECUTOR_SWEEP)
            ]
            for worker in busy:
                await worker.wait()
            del busy
            gc.collect()
            result[key + "_freed_by_next_worker"] = ref() is None

    async def create(job_id: str, *args: str) -> None:
        body = custom_job(job_id, trainer_uri, *args)
        await in_thread(lambda: app.source.call(lambda c: c.create(body)))

    async def job_state(job_id: str) -> str:
        job = await in_thread(lambda: app.source.call(lambda c: c.get(job_id)))
        return str(job["state"])

    async def flood_a() -> weakref.ref[LogsScreen]:
        """Job A: open its logs, then its replicas flood while the screen follows."""
        job_id = f"log_bench_flood_{tag}"
        await create(job_id, "--flood", str(per_replica), "--steps", "1")
        result["t_create"] = time.perf_counter()
        screen = LogsScreen(job_id)
        await app.push_screen(screen)
        result["t_ended"] = await until(
            lambda: screen.status.startswith("stream ended"), 900, "the stream's end"
        )
        await asyncio.sleep(0.3)  # the frame that shows the last batch
        a_done[0] = True
        metrics.done(result)
        result["shown_a"] = counted[0]
        result["views_a"] = view_counts(screen)
        result["rss_flood"] = rss_mb()
        result["peak_flood"] = peak_mb()
        result["state_a"] = await job_state(job_id)
        job = await in_thread(lambda: app.source.call(lambda c: c.get(job_id)))
        result["end_a"] = epoch(str(job.get("endTime") or ""))
        return weakref.ref(screen)

    async def open_b() -> weakref.ref[LogsScreen]:
        """Job B: run to the end with no logs open, then open its logs (the stream's tail)."""
        job_id = f"log_bench_second_{tag}"
        await create(job_id, "--flood", str(second), "--steps", "1")
        while (state := await job_state(job_id)) not in TERMINAL:
            await asyncio.sleep(0.5)
        result["state_b"] = state
        await asyncio.sleep(1.0)
        result["rss_before_b"] = rss_mb()
        handled_from = len(inst.handled)
        t_open = time.perf_counter()
        screen = LogsScreen(job_id)
        await app.push_screen(screen)
        merged = screen.view(ALL)
        t_tail = await until(lambda: merged.line_count > 0, 300, "job B's tail on screen")
        t_end = await until(
            lambda: screen.status.startswith("stream ended"), 120, "job B's stream end"
        )
        await asyncio.sleep(0.3)
        result["b_open"] = t_tail - t_open
        result["b_ended"] = t_end - t_open
        result["b_lag"] = beat.window(t_open, t_end + 0.3)
        result["b_batches"] = [h[2] for h in inst.handled[handled_from:]]
        result["b_handler"] = [h[1] for h in inst.handled[handled_from:]]
        result["views_b"] = view_counts(screen)
        result["rss_b_open"] = rss_mb()
        result["peak_b"] = peak_mb()
        return weakref.ref(screen)

    async def run() -> None:
        beat.start()
        await until(lambda: bool(app.last_rows), 60, "the job list")
        await asyncio.sleep(0.5)
        result["rss_app"] = rss_mb()
        if metrics_job is not None:
            await metrics.open(app, metrics_job)
            result["rss_metrics"] = rss_mb()
        ref_a = await flood_a()
        await close(ref_a, "a")
        if second:
            ref_b = await open_b()
            await close(ref_b, "b")
            # Diagnosis: is it gc.freeze() (the app's RowCache.collect) that keeps them?
            result["a_alive_at_end"] = ref_a() is not None
            gc.unfreeze()
            gc.collect()
            result["a_alive_after_unfreeze"] = ref_a() is not None
            result["b_alive_after_unfreeze"] = ref_b() is not None
        beat.stop()

    metrics = MetricsBeneath(inst.windows)
    run_app(app, run)
    first, last = progress[0][0], progress[-1][0]
    # The flood began when its first line was stamped (wall clock -> perf_counter).
    began = max(result["t_create"], epoch(first_entry[0]) - (time.time() - time.perf_counter()))
    c0, c1 = cpu["first"], cpu["last"]
    wall = c1["t"] - c0["t"]
    threads = {tid: c1["threads"][tid] - c0["threads"].get(tid, 0.0) for tid in c1["threads"]}
    result.update(
        total=total,
        first_shown=first,
        first_entry=epoch(first_entry[0]),
        last_wall=c1["wall"],
        frames_at=[t for t, _n, _d in progress if first <= t <= last],
        last_shown=last,
        shown_at_first=progress[0][1],
        shown_at_last=progress[-1][1],
        frames_in_flood=sum(1 for t, _n, _d in progress if first <= t <= last),
        frames_total=tap.count,
        began=began,
        lag=beat.window(began, last),
        lag_beats=[(t, lag) for t, lag in beat.beats if began <= t <= last],
        rss_samples=beat.rss,
        cpu_wall=wall,
        cpu_process=(c1["process"] - c0["process"]) / wall,
        cpu_main=threads.get(main_tid, 0.0) / wall,
        cpu_stream=threads.get(inst.stream_thread or -1, 0.0) / wall,
        cpu_service=(c1["service"] - c0["service"]) / wall,
        cpu_box=(c1["box_busy"] - c0["box_busy"]) / wall,
        polls=[p for p in inst.polls if began <= p[0] + p[1] and p[0] <= last],
        handled=[h for h in inst.handled if began <= h[0] <= last],
        gc=[list(p) for p in gclog.window(began, last)],
        windows={
            kind: [w for w in ws if began <= w[0] <= last] for kind, ws in inst.windows.items()
        },
        behind=behind,
        peak_end=peak_mb(),
    )
    if "metrics" in result:
        result["metrics"]["flood"] = metrics.summary(began, last)
    emit(result)


# -- the parent: service, packages, children, report --------------------------------------------


def run_child(args: list[str], env: dict[str, str], timeout: float) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        cwd=Path(__file__).resolve().parent.parent,
    )
    for line in proc.stdout.splitlines():
        if line.startswith(RESULT_PREFIX):
            data: dict[str, Any] = json.loads(line[len(RESULT_PREFIX) :])
            return data
    raise RuntimeError(
        f"child {args[0]} exited {proc.returncode} without a result:\n"
        f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )


def epoch(ts: str) -> float:
    return dt.datetime.fromisoformat(ts).timestamp()


def report_metrics(res: Results, section: str, data: dict[str, Any], key: str = "during") -> None:
    """``--metrics-open``: that the view beneath was at work while the logs were measured."""
    metrics = data["metrics"]
    did, holds = describe(metrics[key], metrics["at_end"])
    builds = metrics["first_builds"]
    res.add(
        Figure(
            section,
            "metrics view: M -> every chart drawn (then the logs pushed over it)",
            len(builds),
            f"{metrics['opened_s'] * 1e3:,.0f} ms; chart builds "
            f"{', '.join(f'{b * 1e3:.0f}' for b in builds[:8])} ms",
        )
    )
    res.add(Figure(section, "metrics view beneath the logs, " + METRICS_WINDOW[key], 1, did))
    res.add(Figure(section, "metrics view then", 1, holds))


METRICS_WINDOW = {
    "during": "from its opening to the logs' end",
    "flood": "first flood line stamped → last shown",
}


def report_latency(res: Results, data: dict[str, Any], count: int) -> None:
    section = "1 replica write → line on screen (merged view, headless 120x40)"
    if "metrics" in data:
        section += ", a metrics view open beneath"
        report_metrics(res, section, data)
    start = data["follow_started"]
    lines = [x for x in data["lines"] if x["printed"] >= start]
    skipped = len(data["lines"]) - len(lines)
    total = [x["shown"] - x["printed"] for x in lines]
    med = statistics.median(total)
    res.add(
        Figure(
            section,
            f"probe printed → first frame showing it (p90 {ms(percentile(total, 90))} ms)",
            len(total),
            med_range(total, unit=" ms"),
            "median ≤ 0.5 s",
            verdict(med <= LATENCY_GOAL_S, f"max {ms(max(total))} ms"),
        )
    )
    stamped = [epoch(x["ts"]) - x["printed"] for x in lines]
    polled = [x for x in lines if x["polled"] is not None]
    res.add(
        Figure(
            section,
            "↳ printed → entry timestamp (service capture + ingest)",
            len(stamped),
            med_range(stamped, unit=" ms"),
        )
    )
    res.add(
        Figure(
            section,
            "↳ entry timestamp → LogStream.poll returned it (polls every 0.25 s)",
            len(polled),
            med_range([x["polled"] - epoch(x["ts"]) for x in polled], unit=" ms"),
        )
    )
    res.add(
        Figure(
            section,
            "↳ poll returned → on screen (message, append, next frame)",
            len(polled),
            med_range([x["shown"] - x["polled"] for x in polled], unit=" ms"),
        )
    )
    res.add(
        Figure(
            section,
            "LogStream.poll round trip while following (entries:list)",
            len(data["polls"]),
            med_range(data["polls"], digits=1, unit=" ms"),
        )
    )
    res.notes.append(
        f"latency: {count} probe lines printed 100 ms apart by a BASIC job; {skipped} printed "
        f"before the stream began following (read by the screen's initial tail) are not "
        f"counted; probe job ended {data['state']}. For comparison, `gcloud ai-platform jobs "
        "stream-logs` polls every 60 s by default (--polling-interval=60) and reads only "
        "entries older than now - 5 s: a median of ~35 s from write to screen"
    )


def stalls(lag: Sequence[float]) -> list[float]:
    """The heartbeat's lateness corrected for coordinated omission.

    A beat that comes back L late stands for the L / 10 ms beats that could not fire while
    the loop was blocked: each is counted, L, L - 10 ms, L - 20 ms ... (HdrHistogram's
    "expected interval" correction). Without it one 7 s stall counts as one sample in 4,000.
    """
    out: list[float] = []
    for late in lag:
        out.append(late)
        extra = late - HEARTBEAT_S
        while extra > 0:
            out.append(extra)
            extra -= HEARTBEAT_S
    return out


def report_flood(res: Results, data: dict[str, Any]) -> None:
    total, per = data["total"], data["per_replica"]
    section = f"2 flood: master + {WORKERS} workers × {per:,} lines, screen open throughout"
    if "metrics" in data:
        section += ", a metrics view open beneath"
        report_metrics(res, section, data, "flood")
    span = data["last_shown"] - data["first_shown"]
    moved = data["shown_at_last"] - data["shown_at_first"]
    whole = data["last_wall"] - data["first_entry"]
    overall = data["shown_at_last"] / whole
    rate = moved / span if span > 0 else float("inf")
    at = [data["began"], *data["frames_at"]]
    longest = max(b - a for a, b in itertools.pairwise(at))
    sustained = longest <= SUSTAIN_GAP_S
    res.add(
        Figure(
            section,
            "flood lines appended to the merged view / s, first → last shown",
            1,
            f"{rate:,.0f} lines/s ({moved:,} lines in {span:.2f} s; the first frame showed "
            f"{data['shown_at_first']:,})",
            "≥ 20k lines/s",
            verdict(
                min(rate, overall) >= RATE_GOAL and sustained,
                f"sustained: no wait over {SUSTAIN_GAP_S:.0f} s"
                if sustained
                else f"not sustained: {longest:.1f} s without a new line shown",
            ),
        )
    )
    stored, stored_s = data.get("stored", (0, 0.0))
    if stored:
        res.add(
            Figure(
                section,
                "↳ the flood at the service: lines stored / first → last stamp",
                1,
                f"{stored:,} lines in {stored_s:.2f} s ({stored / max(stored_s, 1e-9):,.0f} "
                f"lines/s ingested; end to end cannot be faster for long)",
            )
        )
    res.add(
        Figure(
            section,
            "↳ end to end: first flood line stamped by the service → last one shown",
            1,
            f"{overall:,.0f} lines/s ({data['shown_at_last']:,} lines in {whole:.2f} s; "
            f"{total - data['shown_at_last']:,} of {total:,} not shown: older than the tail kept, "
            "or never printed (the job ends with its master, stopping workers mid-flood))",
        )
    )
    behind = sorted(data["behind"])
    if behind:
        res.add(
            Figure(
                section,
                "↳ pane behind the service while flooding (now - newest line shown, per frame)",
                len(behind),
                f"median {behind[len(behind) // 2]:.2f} s, p99 {percentile(behind, 99):.2f} s, "
                f"max {behind[-1]:.2f} s",
                "≤ ~1 s",
                verdict(percentile(behind, 99) <= 2.0),
            )
        )
    res.add(
        Figure(
            section,
            "↳ job end → its last line on screen",
            1,
            f"{data['last_wall'] - data['end_a']:.2f} s",
            "≤ 2 s",
            verdict(data["last_wall"] - data["end_a"] <= 2.0),
        )
    )
    res.add(
        Figure(
            section,
            "↳ frames that showed new flood lines; longest wait for one",
            len(data["frames_at"]),
            f"{len(data['frames_at'])} frames; longest wait {longest:.2f} s",
            f"≤ {SUSTAIN_GAP_S:.0f} s",
            verdict(sustained),
        )
    )
    res.add(
        Figure(
            section,
            "create → first flood line shown / → last shown / → stream ended",
            1,
            f"{data['first_shown'] - data['t_create']:.2f} / "
            f"{data['last_shown'] - data['t_create']:.2f} / "
            f"{data['t_ended'] - data['t_create']:.2f} s",
        )
    )
    lag = data["lag"]
    fixed = stalls(lag)
    p99 = percentile(fixed, 99)
    window = data["last_shown"] - data["began"]
    blocked = sum(x for x in lag if x > LAG_GOAL_S)
    res.add(
        Figure(
            section,
            "event-loop lag, first stamp → last shown (10 ms beats, corrected for stalls)",
            len(fixed),
            dist(fixed, 1),
            "p99 ≤ 50 ms",
            verdict(p99 <= LAG_GOAL_S, f"{blocked:.1f} s of {window:.1f} s in stalls > 50 ms"),
        )
    )
    res.add(
        Figure(
            section,
            "↳ the same, beats as they came back (uncorrected)",
            len(lag),
            dist(lag, 1) + f"; {sum(x > LAG_GOAL_S for x in lag)} beats > 50 ms",
        )
    )
    res.add(
        Figure(
            section,
            "app CPU, first → last shown: process / event-loop thread / stream thread",
            1,
            f"{data['cpu_process']:.2f} / {data['cpu_main']:.2f} / {data['cpu_stream']:.2f} cores",
        )
    )
    res.add(
        Figure(
            section,
            "same window: service process / whole machine busy",
            1,
            f"{data['cpu_service']:.2f} / {data['cpu_box']:.2f} of {os.cpu_count()} cores",
        )
    )
    polls = data["polls"]
    sizes = [p[2] for p in polls if p[2]]
    secs = [p[1] for p in polls if p[2]]
    if sizes:
        res.add(
            Figure(
                section,
                "LogStream.poll calls that returned lines: lines / seconds per call",
                len(sizes),
                f"{med_range(sizes, 1, 0)} lines / {med_range(secs, 1, 2)} s; "
                f"{sum(sizes) / sum(secs):,.0f} lines/s while polling",
            )
        )
    handled = data["handled"]
    if handled:
        per_line = [h[1] / h[2] for h in handled if h[2]]
        res.add(
            Figure(
                section,
                "LinesArrived appended (replica + merged view), per chunk of up to 1,000 lines: ms",
                len(handled),
                f"{med_range([h[1] for h in handled], unit=' ms')}; "
                f"{statistics.median(per_line) * 1e6:.1f} µs/line (median)",
            )
        )
    gcs = data["gc"]
    full = [p for p in gcs if p[2] == 2]
    in_handlers = sum(
        max(0.0, min(b, h[0] + h[1]) - max(a, h[0])) for a, b, _ in gcs for h in handled
    )
    res.add(
        Figure(
            section,
            "GC passes, first stamp → last shown: all / gen 2 / longest / total",
            len(gcs),
            f"{len(gcs)} / {len(full)} / {ms(max((p[1] - p[0] for p in gcs), default=0))} ms / "
            f"{sum(p[1] - p[0] for p in gcs):.1f} s ({in_handlers:.1f} s of it inside the "
            f"handlers' {sum(h[1] for h in handled):.1f} s)",
        )
    )
    by_gen = {g: [p[1] - p[0] for p in gcs if p[2] == g] for g in (0, 1, 2)}
    res.add(
        Figure(
            section,
            "↳ GC passes by generation 0 / 1 / 2: count, longest",
            len(gcs),
            " / ".join(
                f"{len(v)}, {ms(max(v, default=0.0))} ms" for _g, v in sorted(by_gen.items())
            ),
        )
    )
    frames = [b - a for a, b in data.get("windows", {}).get("frame", [])]
    if frames:
        res.add(
            Figure(
                section,
                "frames painted (compositor refresh, 1 ms or more), ms",
                len(frames),
                f"median {ms(statistics.median(frames), 1)}, p90 "
                f"{ms(percentile(frames, 90), 1)}, max {ms(max(frames), 1)}; "
                f"{sum(frames) / (data['last_shown'] - data['began']):.0%} of the loop's time",
            )
        )
    slow = [(t, x) for t, x in data["lag_beats"] if x > LAG_GOAL_S]
    if slow:

        def overlaps(t: float, x: float, windows: list[tuple[float, float]]) -> bool:
            return any(a < t + HEARTBEAT_S + x and b > t for a, b in windows)

        handler_w = [(h[0], h[0] + h[1]) for h in handled]
        gc_w = [(p[0], p[1]) for p in gcs]
        big = max(handled, key=lambda h: h[1]) if handled else (0.0, 0.0, 0)
        longest_gc = max((p[1] - p[0] for p in gcs), default=0.0)
        res.notes.append(
            f"flood: of the {len(slow)} heartbeats later than 50 ms, "
            f"{sum(overlaps(t, x, handler_w) for t, x in slow)} overlap an append chunk "
            f"and {sum(overlaps(t, x, gc_w) for t, x in slow)} a GC pass (either thread: GC "
            f"holds the GIL); the longest chunk took {ms(big[1])} ms for {big[2]:,} lines, "
            f"the longest GC pass {ms(longest_gc)} ms"
        )
        beside = [
            f"{kind} {sum(overlaps(t, x, [tuple(w) for w in ws]) for t, x in slow)} "
            f"(longest {ms(max((b - a for a, b in ws), default=0.0))} ms)"
            for kind, ws in data.get("windows", {}).items()
        ]
        res.notes.append("flood: those late heartbeats beside other work: " + ", ".join(beside))
    res.notes.append(
        "flood: lines/s counts the flood lines appended to the merged view (each also goes to "
        "its replica's view) up to the frame that showed them; 'sustained' also asks that no "
        f"more than {SUSTAIN_GAP_S:.0f} s pass without a frame showing new ones. CPU = CPU "
        "seconds over that wall window (threads from /proc/self/task); the service and the 4 "
        "flooding replicas share the same cores"
    )


def report_memory(res: Results, data: dict[str, Any], small: dict[str, Any]) -> None:
    total = data["total"]
    section = f"3 memory: {total:,} lines through the views (max_lines 100k each)"
    res.add(
        Figure(
            section,
            "RSS: process start / after imports / app with the job list",
            1,
            f"{data['rss_start']:.0f} / {data['rss_imported']:.0f} / {data['rss_app']:.0f} MiB",
        )
    )
    if "rss_metrics" in data:
        res.add(
            Figure(
                section,
                "RSS with the metrics view open (after it drew), before the flood",
                1,
                f"{data['rss_metrics']:.0f} MiB (+{data['rss_metrics'] - data['rss_app']:.0f})",
            )
        )
    marks = []
    for pct in (25, 50, 75, 100):
        hit = next((s for s in data["rss_samples"] if s[2] >= total * pct / 100), None)
        if hit is not None:
            marks.append(f"{pct}% {hit[1]:.0f}")
    res.add(
        Figure(
            section,
            "RSS when that share of the flood lines was shown",
            len(marks),
            ", ".join(marks) + " MiB",
        )
    )
    res.add(
        Figure(
            section,
            f"RSS after the flood ({total:,} lines), stream ended / peak (ru_maxrss)",
            1,
            f"{data['rss_flood']:.0f} / {data['peak_flood']:.0f} MiB "
            f"(+{data['rss_flood'] - data['rss_app']:.0f} over the list)",
        )
    )
    views = data["views_a"]
    within = all(v[0] <= v[2] for v in views.values())
    res.add(
        Figure(
            section,
            "lines held per view: line_count (dropped)",
            len(views),
            ", ".join(f"{_short(t)} {v[0]:,} ({v[1]:,})" for t, v in views.items()),
            "≤ max_lines",
            verdict(within),
        )
    )
    s_total = small["total"]
    s_full = all(v[0] >= v[2] for t, v in small["views_a"].items() if t != "service")
    growth = data["peak_flood"] / small["peak_flood"] - 1
    res.add(
        Figure(
            section,
            f"bound: peak RSS with {total:,} lines vs {s_total:,} (fresh app, same flood "
            "at half size)",
            2,
            f"{data['peak_flood']:.0f} vs {small['peak_flood']:.0f} MiB ({growth * 100:+.0f} %); "
            f"after the flood {data['rss_flood']:.0f} vs {small['rss_flood']:.0f} MiB",
            "bounded by view limit",
            verdict(
                within and growth <= PLATEAU_TOLERANCE,
                f"≤ +{PLATEAU_TOLERANCE:.0%} with every replica view full in both",
            )
            if s_full
            else "n/a (the half-size flood does not fill the replica views)",
        )
    )
    for key, what in (("a", "flood job"), ("b", "second job")):
        alive = data[f"{key}_alive_after_gc"]
        swept = "yes" if data.get(f"{key}_freed_by_next_worker") else "no"
        unfrozen = data.get(f"{key}_alive_after_unfreeze")
        detail = ""
        if alive:
            detail = f"; freed after each idle executor thread ran a worker: {swept}"
            if unfrozen is not None and swept == "no":
                detail += f"; after gc.unfreeze() + collect: {'kept' if unfrozen else 'freed'}"
        res.add(
            Figure(
                section,
                f"after closing the {what}'s logs: RSS / after gc.collect()",
                1,
                f"{data[key + '_rss_closed']:.0f} / {data[key + '_rss_gc']:.0f} MiB; LogsScreen "
                f"({data[key + '_views_alive']} views) {'kept' if alive else 'freed'} after "
                f"gc.collect(){detail}",
                "lines freed",
                verdict(not alive),
            )
        )
        if key == "a":
            b_total = data["second_per_replica"] * REPLICAS
            vb = data["views_b"]
            res.add(
                Figure(
                    section,
                    f"second job ({b_total:,} lines, finished): RSS before / logs open",
                    1,
                    f"{data['rss_before_b']:.0f} / {data['rss_b_open']:.0f} MiB (peak "
                    f"{data['peak_b']:.0f}); "
                    + ", ".join(f"{_short(t)} {v[0]:,}" for t, v in vb.items()),
                )
            )
            lag_b = data["b_lag"]
            res.add(
                Figure(
                    section,
                    "↳ open → tail on screen / → stream ended; loop lag meanwhile (corrected)",
                    len(stalls(lag_b)),
                    f"{ms(data['b_open'])} / {ms(data['b_ended'])} ms; {dist(stalls(lag_b))}; "
                    f"batches {data['b_batches'][:4]} took "
                    f"{[round(h * 1e3) for h in data['b_handler'][:4]]} ms",
                )
            )
    closed_a, closed_b = data["a_rss_gc"], data["b_rss_gc"]
    res.add(
        Figure(
            section,
            "RSS after the 2nd job's logs closed vs after the 1st's (both after GC)",
            1,
            f"{closed_b:.0f} vs {closed_a:.0f} MiB ({closed_b - closed_a:+.0f}); first "
            f"screen {'still kept' if data['a_alive_at_end'] else 'freed'} at the end",
            f"≤ +{RELEASE_TOLERANCE:.0%}",
            verdict(closed_b <= closed_a * (1 + RELEASE_TOLERANCE)),
        )
    )
    res.notes.append(
        "memory: RSS from /proc/self/statm of the app's process, MiB, sampled every ~100 ms; "
        "peak = ru_maxrss. Python's allocator keeps freed arenas, so RSS after a close shows "
        "the high-water mark rather than what is still referenced: whether the closed "
        "LogsScreen (a weakref) was freed tells whether its lines are gone. Diagnosis steps, "
        "only when it was kept: every idle thread of asyncio's default executor runs a no-op "
        "Textual thread worker (a finished thread worker stays in that thread's context); at "
        "the very end gc.unfreeze() + gc.collect() (objects the app's gc.freeze() moved to the "
        "permanent generation are never collected)"
    )


def _short(task: str) -> str:
    """``master-replica-0`` -> ``master0``."""
    role, _, index = task.partition("-replica-")
    return role + index


# -- machine, workspace, main --------------------------------------------------------------------


def machine_header(cfg: Config) -> str:
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return "\n".join(
        [
            f"log_bench ({'quick' if cfg.quick else 'full'} run) — {now}",
            machine_line(),
            f"python {platform.python_version()} ({sys.executable}); textual "
            f"{version('textual')}, rich {version('rich')}",
        ]
    )


def warm_up(svc: Service, trainer_uri: str, probe_uri: str) -> float:
    """Install both packages into the service's cache (and run each once)."""
    client = svc.client()
    t0 = time.perf_counter()
    client.create(basic_job("log_bench_warm_probe", probe_uri, "probe.task", "--count", "2"))
    client.create(custom_job("log_bench_warm_trainer", trainer_uri, "--steps", "2"))
    for job_id in ("log_bench_warm_probe", "log_bench_warm_trainer"):
        job = wait_terminal(client, job_id, 600)
        if job["state"] != "SUCCEEDED":
            raise RuntimeError(f"{job_id} ended {job['state']}: {job.get('errorMessage')}")
    return time.perf_counter() - t0


def stored_flood(svc: Service, job_id: str) -> tuple[int, float]:
    """How many flood lines of ``job_id`` the service stored, and the seconds between the
    first one's timestamp and the last one's: what there was to show."""
    conn = sqlite3.connect(f"file:{svc.state.logs_db}?mode=ro", uri=True, timeout=10)
    try:
        count, first, last = conn.execute(
            "SELECT count(*), min(ts_us), max(ts_us) FROM log_entries"
            " WHERE job_id = ? AND message GLOB 'flood [0-9]*'",
            (job_id,),
        ).fetchone()
    finally:
        conn.close()
    return int(count), ((last - first) / 1e6 if count else 0.0)


class MetricsJobs:
    """``--metrics-open``: a fresh job writing event files for each child's metrics view (it
    opens a few seconds into the job, as a user would look at a job that just started)."""

    def __init__(self, svc: Service, root: Path, res: Results, trainer_uri: str) -> None:
        from metrics_load import stage_packages

        self.svc = svc
        self.res = res
        self.uris = stage_packages(svc, root, trainer_uri)
        self.count = 0

    @contextlib.contextmanager
    def running(self) -> Iterator[list[str]]:
        """A job writing for the child's whole run: the child's extra arguments."""
        from metrics_load import RATE, start_job, stop_job, writer_tags

        self.count += 1
        job = start_job(self.svc, PROJECT, f"log_bench_metrics_{self.count}", self.uris)
        if self.count == 1:
            self.res.notes.append(
                f"--metrics-open: before each child a job (BASIC, the same project) starts "
                f"writing {len(writer_tags())} tags at {RATE:g} steps/s to its gs:// jobDir "
                f"through the service's storage API (first event file {job.ready_s:.1f} s after "
                "create, the first time: its packages install); the child opens the metrics "
                "view on it (JobsApp.open_metrics, as M does), waits until its charts are "
                "drawn, then opens the logs over it: the view's worker polls every second "
                "beneath them (Textual paints only the top screen: its charts are rebuilt "
                f"only when shown). The service ran with {METRICS_SLOTS} CPU slots, so that the "
                "writing job does not hold back the 4-replica flood job (slots only decide "
                "admission)"
            )
        try:
            yield ["--metrics-job", job.job_id]
        finally:
            stop_job(self.svc, job)


METRICS_SLOTS = REPLICAS + 1
"""``--metrics-open``: the flood job's replicas and the writing job, admitted together."""


def run(cfg: Config, keep: bool, pin: bool = False, metrics_open: bool = False) -> int:
    from tui_app.entry.demo import build_sdist
    from tui_app.local.service_cli import SLOTS_ENV

    print(machine_header(cfg), flush=True)
    res = Results()
    if metrics_open:
        os.environ[SLOTS_ENV] = str(METRICS_SLOTS)  # the service inherits it
    with workspace("tui-log-bench-", keep) as root:
        svc = Service(root, {1} if pin else None)
        env = dict(os.environ)
        env["TUI_APP_CONFIG_DIR"] = str(root / "config")  # no user settings
        env.pop("TUI_APP_STATE_DIR", None)
        if pin:
            env[PIN_ENV] = "0"
            res.notes.append(
                "--pin: the app ran on CPU 0 only, the service and every replica on CPU 1 only "
                "(a diagnosis of the lag: how the app fares when nothing else takes its core)"
            )
        try:
            print("building the trainer and probe sdists...", flush=True)
            trainer = build_sdist(TRAINER_SRC, root / "build-trainer")
            probe = build_sdist(write_probe_package(root), root / "build-probe")
            svc.start()
            trainer_uri = svc.stage(trainer)
            probe_uri = svc.stage(probe)
            print(f"service pid {svc.pid} at {svc.url}, state {svc.state.root}", flush=True)
            secs = warm_up(svc, trainer_uri, probe_uri)
            res.notes.append(f"warm-up (packages installed into the service's cache): {secs:.1f} s")
            state = str(svc.state.root)
            jobs = MetricsJobs(svc, root, res, trainer_uri) if metrics_open else None

            def beside() -> contextlib.AbstractContextManager[list[str]]:
                return jobs.running() if jobs else contextlib.nullcontext([])

            print("[1] replica write → line on screen", flush=True)
            with beside() as extra:
                lat = run_child(
                    ["--child-latency", state, str(root), probe_uri, str(cfg.probe_lines),
                     *extra],
                    env,
                    600,
                )  # fmt: skip
            report_latency(res, lat, cfg.probe_lines)
            assert svc.pid is not None
            half = cfg.flood_per_replica // 2
            print(
                f"[3] flood of {half * REPLICAS:,} lines (the memory bound's baseline)", flush=True
            )
            with beside() as extra:
                small = run_child(
                    ["--child-flood", state, str(root), trainer_uri, str(half), "0",
                     str(svc.pid), "half", *extra],
                    env,
                    1800,
                )  # fmt: skip
            print(f"[2+3] flood of {cfg.flood_per_replica * REPLICAS:,} lines, then a second job's "
                  "logs", flush=True)  # fmt: skip
            with beside() as extra:
                flood = run_child(
                    ["--child-flood", state, str(root), trainer_uri, str(cfg.flood_per_replica),
                     str(cfg.second_per_replica), str(svc.pid), "full", *extra],
                    env,
                    2400,
                )  # fmt: skip
            flood["stored"] = stored_flood(svc, "log_bench_flood_full")
            report_flood(res, flood)
            report_memory(res, flood, small)
        except KeyboardInterrupt:
            print("\ninterrupted: cleaning up", file=sys.stderr)
            return 130
        finally:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # let the clean-up finish
            svc.stop()
            killed = kill_stragglers(root)
            if killed:
                print(f"killed {killed} straggling process(es)", file=sys.stderr)
            signal.signal(signal.SIGINT, signal.default_int_handler)
    print_table(res, "median (min-max)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="50k lines per replica, fewer probes")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument(
        "--pin",
        action="store_true",
        help="run the app on CPU 0 and the service with its replicas on CPU 1 (2+ CPUs)",
    )
    parser.add_argument(
        "--metrics-open",
        action="store_true",
        help="every figure with a metrics view open beneath the logs, on a running job that "
        "writes event files",
    )
    parser.add_argument("--child-latency", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--child-flood", nargs=7, help=argparse.SUPPRESS)
    parser.add_argument("--metrics-job", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_latency:
        state, work, uri, count = args.child_latency
        child_latency(state, work, uri, int(count), args.metrics_job)
        return 0
    if args.child_flood:
        state, work, uri, per, second, pid, tag = args.child_flood
        child_flood(state, work, uri, int(per), int(second), int(pid), tag, args.metrics_job)
        return 0
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even when started with &
    signal.signal(signal.SIGTERM, raise_interrupt)
    signal.signal(signal.SIGHUP, raise_interrupt)
    if args.pin and len(os.sched_getaffinity(0)) < 2:
        parser.error("--pin needs two CPUs")
    return run(Config.make(args.quick), args.keep, args.pin, args.metrics_open)


if __name__ == "__main__":
    sys.exit(main())
