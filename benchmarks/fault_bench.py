"""Faults, hostile trainers, bad input and load: ``python benchmarks/fault_bench.py [--quick]``.

Four sections, each against its own service (``tui_app service run`` in its own session, on a
free port, in a temporary state dir: ``service_bench.Service``), printed as a table of figures
with goals and PASS/FAIL verdicts:

a. kill -9 with 20 running jobs: 20 BASIC jobs of the sample trainer print ``step 1`` ... ``step
   100`` (``--steps 100 --sleep 0.25 --log-every 1``, ~25 s each). Once all are RUNNING and their
   lines are being stored, the service process alone gets SIGKILL (its replicas run in their own
   sessions and keep going), and the same ``service run`` command restarts it on the same state
   dir. Goals: every job SUCCEEDED; per job 0 lines lost and 0 duplicated, comparing the stored
   LogEntries of its replica with the replica's ``stdout.log``/``stderr.log`` (what the trainer
   really wrote), line by line as multisets. This measures whatever restart recovery does today
   (before recovery of live replicas existed, they were stopped and their jobs FAILED).
b. orphans after cancelling 20 hostile jobs: each trainer ignores SIGTERM, spawns a child that
   ignores it too, one in a new session, and a daemon that calls setsid(), forks and is orphaned
   (``--ignore-sigterm --spawn-child-new-session --spawn-escaping-child``, see
   examples/trainer/README.md). All 20 are cancelled while running; after CANCELLED and the
   grace period, every process still alive that belongs to them is counted (psutil: by the
   ``TUI_APP_REPLICA`` marker in its environment, which children inherit, or a cwd or command
   line under this run's temporary dir). Goal 0.
c. fuzz: every request family of ``tests/support/fuzz.py`` (the fuzz tests' strategies, one
   definition) for N examples each against a fresh service, counting requests, 5xx and other
   problems (a 4xx without a google.rpc body, something stored for a rejected request). Unlike
   the tests it includes the inputs that trip bugs the tests track as xfails. Goal 0 5xx.
d. load: 500 jobs submitted in a burst from 8 threads, each printing ~2,000 lines (``--flood
   2000``: 1M lines in all), run by the service's default capacity (slots = the machine's cores),
   while a thread polls ``jobs.list`` (pageSize 100, the TUI's page) and an ``entries:list``
   page (the first 1,000 lines of the job running now, the TUI log pane's first fetch) every
   0.2 s. Goals: list and entries p99 <= 500 ms (the TUI refreshes every 2 s and tails logs every
   0.25 s: a p99 past half a second is a visibly stuck screen on a busy machine; the idle
   figures in docs/performance.md are ~2 ms), 500/500 SUCCEEDED, and lines stored (rows of
   logs.sqlite, read-only after the service stops) equal to lines written (every replica's log
   files), flood lines equal to jobs x 2,000 (the trainers' own count).

e. power cut with 20 running jobs: as a, but every replica process is killed -9 with the
   service (a reboot), each trainer checkpointing to its job dir every 10 steps. Goals: every
   lost replica started again within 5 s of the service's start (each job's
   ``replicaRestarts``), every job SUCCEEDED with its trainer resumed from its checkpoint, 0
   lines lost or duplicated.

Durations on this project's 2-core machine: ``--quick`` (5 jobs for a and b, 30 examples per
fuzz family, 50 x 2,000 lines for d) about 35 s; the full run (20 jobs, 500 examples per family,
500 x 2,000 lines) about 3 minutes, most of it in a, c and d. ``--only SECTION`` runs
one. Needs the test extras (hypothesis) for c: ``pip install -e '.[dev]'``.

Everything lives in a temporary directory removed at the end; every service is stopped and every
process started from that directory is killed (hostile daemons included), also on Ctrl-C or
SIGTERM. Run it with the project's virtualenv from the repository root.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import datetime
import http.client
import os
import platform
import re
import signal
import sqlite3
import statistics
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
from bench_report import (  # beside this script
    Figure,
    Results,
    machine_line,
    print_table,
    raise_interrupt,
    workspace,
)
from service_bench import (  # beside this script
    EPOCH_FILTER,
    PROJECT,
    TERMINAL,
    TRAINER_SRC,
    Service,
    basic_job,
    kill_stragglers,
    percentile,
    verdict,
)

from tui_app.entry.demo import build_sdist

REPO = Path(__file__).resolve().parent.parent
REPLICA_MARKER = "TUI_APP_REPLICA"
"""The environment variable the service sets on every replica (children inherit it)."""
MASTER = "master-replica-0"
FLOOD_LINE = re.compile(r"flood [0-9]+ ")
"""The trainer's --flood lines (not its closing "flood done: ..." line)."""


@dataclass(frozen=True)
class Config:
    """What one run does; ``--quick`` shrinks everything."""

    quick: bool
    crash_jobs: int
    crash_steps: int
    crash_sleep: float
    orphan_jobs: int
    fuzz_examples: int
    load_jobs: int
    load_lines: int
    load_threads: int = 8

    @classmethod
    def make(cls, quick: bool) -> Config:
        if quick:
            return cls(True, 5, 60, 0.2, 5, 30, 50, 2000)
        return cls(False, 20, 100, 0.25, 20, 500, 500, 2000)


# -- helpers -----------------------------------------------------------------------------------


@contextlib.contextmanager
def slots_env(slots: int | None) -> Iterator[None]:
    """``TUI_APP_SLOTS`` for a service started inside (None: the default, the machine's cores)."""
    old = os.environ.pop("TUI_APP_SLOTS", None)
    if slots is not None:
        os.environ["TUI_APP_SLOTS"] = str(slots)
    try:
        yield
    finally:
        os.environ.pop("TUI_APP_SLOTS", None)
        if old is not None:
            os.environ["TUI_APP_SLOTS"] = old


def start(svc: Service, slots: int | None, patience: float = 300) -> float:
    """Start (or restart) ``svc``; seconds until it answers. Waits past Service.start's 60 s:
    a restart that recovers many jobs may take longer, and that is a figure, not a crash."""
    t0 = time.monotonic()
    with slots_env(slots):
        try:
            svc.start()
        except TimeoutError:
            deadline = t0 + patience
            while time.monotonic() < deadline:
                with contextlib.suppress(OSError):
                    if svc.request(svc.connect(), "GET", "/healthz")[0] == 200:
                        break
                time.sleep(0.2)
            else:
                raise
    return time.monotonic() - t0


def make_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def current(svc: Service, ids: list[str]) -> dict[str, dict[str, Any]]:
    """The jobs' Job resources now."""
    conn = svc.connect()
    try:
        wanted = set(ids)
        return {j["jobId"]: j for j in list_all(svc, conn) if j["jobId"] in wanted}
    finally:
        conn.close()


def replica_dir(svc: Service, job_id: str, task: str = MASTER) -> Path:
    return svc.state.job_dir(PROJECT, job_id) / task


def written_lines(workdir: Path) -> list[str]:
    """What the replica wrote: every line of stdout.log and stderr.log (a last partial line too)."""
    out: list[str] = []
    for name in ("stdout.log", "stderr.log"):
        with contextlib.suppress(FileNotFoundError):
            data = (workdir / name).read_bytes().decode("utf-8", "replace")
            lines = data.split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            out += lines
    return out


def stored_messages(
    svc: Service, conn: http.client.HTTPConnection, job_id: str, task: str | None = MASTER
) -> list[str]:
    """Every stored LogEntry message of the job (of one replica), through entries:list paging."""
    flt = f'resource.labels.job_id="{job_id}" AND {EPOCH_FILTER}'
    if task:
        flt += f' AND resource.labels.task_name="{task}"'
    body: dict[str, Any] = {
        "resourceNames": [f"projects/{PROJECT}"],
        "filter": flt,
        "orderBy": "timestamp asc",
        "pageSize": 1000,
    }
    out: list[str] = []
    while True:
        status, data = svc.request(conn, "POST", "/v2/entries:list", body)
        if status != 200:
            raise RuntimeError(f"entries:list answered {status}: {str(data)[:200]}")
        out += [e["jsonPayload"]["message"] for e in data.get("entries", [])]
        token = data.get("nextPageToken")
        if not token:
            return out
        body["pageToken"] = token


def written_and_stored(
    svc: Service, conn: http.client.HTTPConnection, job_id: str
) -> tuple[collections.Counter[str], collections.Counter[str]]:
    """The master's lines as it wrote them (its files) and as the store has them, as multisets:
    their differences are the lines lost and duplicated."""
    wrote = collections.Counter(written_lines(replica_dir(svc, job_id)))
    return wrote, collections.Counter(stored_messages(svc, conn, job_id))


def list_all(svc: Service, conn: http.client.HTTPConnection) -> list[dict[str, Any]]:
    """Every job of the project (pages of 100)."""
    jobs: list[dict[str, Any]] = []
    token = ""
    while True:
        path = f"/v1/projects/{PROJECT}/jobs?pageSize=100"
        if token:
            path += f"&pageToken={token}"
        status, data = svc.request(conn, "GET", path)
        if status != 200:
            raise RuntimeError(f"jobs.list answered {status}: {str(data)[:200]}")
        jobs += data.get("jobs", [])
        token = data.get("nextPageToken", "")
        if not token:
            return jobs


def wait_states(
    svc: Service, ids: list[str], states: tuple[str, ...], timeout: float
) -> dict[str, dict[str, Any]]:
    """Poll jobs.list until every job in ``ids`` is in ``states``; their last Job resources."""
    wanted = set(ids)
    deadline = time.monotonic() + timeout
    conn = svc.connect()
    try:
        while True:
            jobs = {j["jobId"]: j for j in list_all(svc, conn) if j["jobId"] in wanted}
            if len(jobs) == len(wanted) and all(j["state"] in states for j in jobs.values()):
                return jobs
            if time.monotonic() > deadline:
                counts = collections.Counter(j["state"] for j in jobs.values())
                raise TimeoutError(f"after {timeout:.0f} s: {dict(counts)}, wanted {states}")
            time.sleep(0.25)
    finally:
        conn.close()


def job_processes(root: Path, exclude: set[int]) -> list[psutil.Process]:
    """Live processes of this run's jobs: the replica marker in their environment (children
    inherit it), or a cwd or command line under ``root``; ``exclude`` (the services) aside."""
    mark = str(root)
    found: list[psutil.Process] = []
    for proc in psutil.process_iter(["pid", "cmdline", "cwd", "environ", "status"]):
        info = proc.info
        if info["pid"] in exclude or info["pid"] == os.getpid():
            continue
        if info.get("status") == psutil.STATUS_ZOMBIE:
            continue
        env = info.get("environ") or {}
        cmd = " ".join(info.get("cmdline") or [])
        cwd = info.get("cwd") or ""
        if env.get(REPLICA_MARKER, "").startswith(mark) or cwd.startswith(mark) or mark in cmd:
            found.append(proc)
    return found


def kill_all(procs: list[psutil.Process]) -> None:
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs(procs, timeout=5)


def ms(values: list[float]) -> str:
    if not values:
        return "no samples"
    return (
        f"p50 {percentile(values, 50) * 1e3:,.1f} / p99 {percentile(values, 99) * 1e3:,.1f} / "
        f"max {max(values) * 1e3:,.1f} ms"
    )


def state_counts(jobs: dict[str, dict[str, Any]]) -> str:
    counts = collections.Counter(j["state"] for j in jobs.values())
    return ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))


# -- a. kill -9 with running jobs --------------------------------------------------------------


def bench_crash(root: Path, cfg: Config, trainer: Path, res: Results, svcs: list[Service]) -> None:
    n = cfg.crash_jobs
    section = f"a kill -9 with {n} running jobs"
    svc = Service(make_dir(root / "crash"))
    svcs.append(svc)
    start(svc, slots=64)
    uri = svc.stage(trainer)
    client = svc.client()
    ids = [f"crash_{i:02d}" for i in range(n)]
    args = ["--steps", str(cfg.crash_steps), "--sleep", str(cfg.crash_sleep), "--log-every", "1"]
    for job_id in ids:
        client.create(basic_job(job_id, uri, "trainer.task", *args))
    wait_states(svc, ids, ("RUNNING",), 300)
    # Lines flowing: every trainer has printed a few steps and the store has some of them.
    conn = svc.connect()
    deadline = time.monotonic() + 120
    while True:
        written = {j: written_lines(replica_dir(svc, j)) for j in ids}
        stored = {j: stored_messages(svc, conn, j) for j in ids}
        flowing = all(
            sum(x.startswith("step ") for x in written[j]) >= 3
            and any(x.startswith("step ") for x in stored[j])
            for j in ids
        )
        if flowing:
            break
        if time.monotonic() > deadline:
            raise TimeoutError("the trainers' lines did not start flowing within 120 s")
        time.sleep(0.2)
    conn.close()
    before = current(svc, ids)
    stored_before = sum(len(v) for v in stored.values())
    written_before = sum(len(v) for v in written.values())
    res.add(
        Figure(
            section,
            "at the kill: jobs RUNNING, lines stored / written so far",
            n,
            f"{state_counts(before)}; {stored_before:,} / {written_before:,} lines",
        )
    )
    assert svc.proc is not None
    old_pid = svc.proc.pid
    os.kill(old_pid, signal.SIGKILL)  # the service process only: not its group, not its replicas
    svc.proc.wait()
    survivors = job_processes(svc.state.root, {old_pid})
    res.add(
        Figure(
            section,
            "replica processes (supervisors, trainers) alive after the kill",
            len(survivors),
            f"{len(survivors)} ({len(survivors) / n:.1f} per job)",
        )
    )
    t_restart = time.monotonic()
    up = start(svc, slots=64)
    res.add(Figure(section, "restart on the same state dir → answering", 1, f"{up:.1f} s"))
    timeout = cfg.crash_steps * cfg.crash_sleep + 300
    after = wait_states(svc, ids, TERMINAL, timeout)
    done = time.monotonic() - t_restart
    ok = sum(j["state"] == "SUCCEEDED" for j in after.values())
    res.add(
        Figure(
            section,
            "jobs finished after the restart (restart → all terminal)",
            n,
            f"{state_counts(after)} ({done:.1f} s)",
            f"{n}/{n} SUCCEEDED",
            verdict(ok == n, f"{ok}/{n}"),
        )
    )
    errors = collections.Counter(j.get("errorMessage", "") for j in after.values() if ok < n)
    for message, count in errors.most_common(2):
        if message:
            res.notes.append(f"[a] {count} job(s) ended with: {message[:200]}")
    # Every line the trainers wrote, against what the store has, job by job.
    conn = svc.connect()
    lost: dict[str, int] = {}
    dups: dict[str, int] = {}
    steps: list[int] = []
    total_written = total_stored = 0
    for job_id in ids:
        wrote, have = written_and_stored(svc, conn, job_id)
        lost[job_id] = sum((wrote - have).values())
        dups[job_id] = sum((have - wrote).values())
        total_written += sum(wrote.values())
        total_stored += sum(have.values())
        steps.append(sum(c for line, c in wrote.items() if line.startswith("step ")))
    conn.close()
    res.add(
        Figure(
            section,
            "lines written (replica stdout/stderr.log) / stored (entries:list)",
            n,
            f"{total_written:,} / {total_stored:,}",
        )
    )
    res.add(
        Figure(
            section,
            f"numbered lines per job (step 1..{cfg.crash_steps})",
            n,
            f"median {statistics.median(steps):.0f}, min {min(steps)}, max {max(steps)}",
            f"{cfg.crash_steps} each",
            verdict(min(steps) == cfg.crash_steps, "the trainers ran to the end"),
        )
    )
    total_lost, total_dups = sum(lost.values()), sum(dups.values())
    res.add(
        Figure(
            section,
            "lines lost: total, worst job",
            n,
            f"{total_lost:,}, {max(lost.values()):,}",
            "0",
            verdict(total_lost == 0, ""),
        )
    )
    res.add(
        Figure(
            section,
            "lines duplicated: total, worst job",
            n,
            f"{total_dups:,}, {max(dups.values()):,}",
            "0",
            verdict(total_dups == 0, ""),
        )
    )
    res.notes.append(
        "[a] lost/duplicated per job: " + ", ".join(f"{j} {lost[j]}/{dups[j]}" for j in ids)
    )
    svc.stop()


# -- e. a power cut with running jobs ----------------------------------------------------------


def bench_power_cut(
    root: Path, cfg: Config, trainer: Path, res: Results, svcs: list[Service]
) -> None:
    """The service and every replica process killed -9 at once (a reboot), the service started
    again: each lost replica is started again (model/running/restarts.py) and its trainer goes
    on from its checkpoint in the job dir."""
    n = cfg.crash_jobs
    section = f"e power cut with {n} running jobs"
    svc = Service(make_dir(root / "power"))
    svcs.append(svc)
    start(svc, slots=64)
    uri = svc.stage(trainer)
    client = svc.client()
    ids = [f"power_{i:02d}" for i in range(n)]
    job_dirs = {j: make_dir(root / "power-job-dirs" / j) for j in ids}
    args = ["--steps", str(cfg.crash_steps), "--sleep", str(cfg.crash_sleep), "--log-every", "1"]
    args += ["--checkpoint-every", "10"]
    for job_id in ids:
        body = basic_job(job_id, uri, "trainer.task", *args)
        body["trainingInput"]["jobDir"] = str(job_dirs[job_id])
        client.create(body)
    wait_states(svc, ids, ("RUNNING",), 300)
    deadline = time.monotonic() + 180
    while not all(list((job_dirs[j] / "checkpoints").glob("ckpt-*")) for j in ids):
        if time.monotonic() > deadline:
            raise TimeoutError("not every trainer wrote a checkpoint within 180 s")
        time.sleep(0.2)
    assert svc.proc is not None
    old_pid = svc.proc.pid
    replicas = job_processes(svc.state.root, {old_pid})
    os.kill(old_pid, signal.SIGKILL)
    kill_all(replicas)
    svc.proc.wait()
    left = job_processes(svc.state.root, {old_pid})
    res.add(
        Figure(
            section,
            "replica processes killed with the service / alive after",
            n,
            f"{len(replicas)} / {len(left)}",
            "0 alive",
            verdict(not left, ""),
        )
    )
    t_restart = time.monotonic()
    up = start(svc, slots=64)
    # Every lost replica RUNNING again: each job names its restart and has a live supervisor.
    deadline = time.monotonic() + 120
    while True:
        jobs = current(svc, ids)
        restarted = [j for j, job in jobs.items() if job.get("replicaRestarts")]
        if len(restarted) == n:
            break
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    again = time.monotonic() - t_restart
    res.add(
        Figure(
            section,
            "service start → every lost replica started again",
            n,
            f"{len(restarted)}/{n} in {again:.1f} s (answering after {up:.1f} s)",
            "<= 5 s",
            verdict(len(restarted) == n and again <= 5.0, ""),
        )
    )
    timeout = cfg.crash_steps * cfg.crash_sleep + 300
    after = wait_states(svc, ids, TERMINAL, timeout)
    ok = sum(j["state"] == "SUCCEEDED" for j in after.values())
    resumed = sum(
        any(x.startswith("Resumed from checkpoint") for x in written_lines(replica_dir(svc, j)))
        for j in ids
    )
    res.add(
        Figure(
            section,
            "jobs SUCCEEDED / trainers resumed from their checkpoint",
            n,
            f"{ok} / {resumed}",
            f"{n}/{n}",
            verdict(ok == n and resumed == n, ""),
        )
    )
    conn = svc.connect()
    lost = dups = 0
    for job_id in ids:
        wrote, have = written_and_stored(svc, conn, job_id)
        lost += sum((wrote - have).values())
        dups += sum((have - wrote).values())
    conn.close()
    res.add(
        Figure(
            section,
            "lines lost / duplicated",
            n,
            f"{lost} / {dups}",
            "0 / 0",
            verdict(lost == 0 and dups == 0, ""),
        )
    )
    svc.stop()


# -- b. orphans after cancelling hostile jobs --------------------------------------------------


def bench_orphans(
    root: Path, cfg: Config, trainer: Path, res: Results, svcs: list[Service]
) -> None:
    n = cfg.orphan_jobs
    section = f"b cancel {n} jobs with hostile children"
    svc = Service(make_dir(root / "orphans"))
    svcs.append(svc)
    start(svc, slots=64)
    uri = svc.stage(trainer)
    client = svc.client()
    ids = [f"hostile_{i:02d}" for i in range(n)]
    hostile = ["--ignore-sigterm", "--spawn-child-new-session", "--spawn-escaping-child"]
    for job_id in ids:
        client.create(
            basic_job(
                job_id,
                uri,
                "trainer.task",
                "--steps",
                "1000000",
                "--sleep",
                "0.1",
                "--log-every",
                "50",
                *hostile,
            )
        )
    wait_states(svc, ids, ("RUNNING",), 300)
    deadline = time.monotonic() + 120
    while not all(
        any("escaping child pid=" in x for x in written_lines(replica_dir(svc, j))) for j in ids
    ):
        if time.monotonic() > deadline:
            raise TimeoutError("the trainers did not spawn their children within 120 s")
        time.sleep(0.2)
    assert svc.pid is not None
    services = {svc.pid}
    before = job_processes(svc.state.root, services)
    res.add(
        Figure(
            section,
            "processes of the jobs before the cancel (supervisor, trainer, 3 children each)",
            n,
            f"{len(before)} ({len(before) / n:.1f} per job)",
        )
    )
    t0 = time.monotonic()
    for job_id in ids:
        client.cancel(job_id)
    after = wait_states(svc, ids, TERMINAL, 120)
    took = time.monotonic() - t0
    cancelled = sum(j["state"] == "CANCELLED" for j in after.values())
    res.add(
        Figure(
            section,
            "cancel → all terminal",
            n,
            f"{state_counts(after)} ({took:.1f} s; grace 2 s)",
            f"{n}/{n} CANCELLED",
            verdict(cancelled == n, ""),
        )
    )
    time.sleep(2 + 1)  # the grace period (service_bench.Service runs with --grace-seconds 2)
    alive = job_processes(svc.state.root, services)
    res.add(
        Figure(
            section,
            "processes of those jobs still alive after CANCELLED + the grace period",
            n,
            str(len(alive)),
            "0",
            verdict(not alive, ""),
        )
    )
    for proc in alive[:5]:
        with contextlib.suppress(psutil.Error):
            res.notes.append(f"[b] still alive: pid {proc.pid} {' '.join(proc.cmdline())[:120]}")
    kill_all(alive)
    svc.stop()


# -- c. fuzz -----------------------------------------------------------------------------------


def bench_fuzz(root: Path, cfg: Config, res: Results, svcs: list[Service]) -> None:
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))  # the strategies are the fuzz tests' own
    from tests.support import fuzz

    section = f"c fuzz, {cfg.fuzz_examples} examples per request family"
    svc = Service(make_dir(root / "fuzz"))
    svcs.append(svc)
    start(svc, slots=None)
    checker = fuzz.Checker(fuzz.prepare_target(svc.url, svc.token, svc.state.root))
    t0 = time.monotonic()
    for route in fuzz.ROUTES:
        tally = fuzz.run_route(checker, route, cfg.fuzz_examples, out_of_range_tokens=True)
        others = len(tally.problems) - tally.five_xx
        res.add(
            Figure(
                section,
                route,
                tally.requests,
                f"{tally.accepted} 2xx/308, {tally.rejected} 4xx, {tally.cut} cut off; "
                f"{tally.five_xx} 5xx, {others} other problems",
                "0 5xx, 0 problems",
                verdict(not tally.problems, ""),
            )
        )
        for problem in tally.problems[:2]:
            res.notes.append(f"[c] {route}: {problem[:300]}")
    took = time.monotonic() - t0
    tallies = checker.tallies.values()
    requests = sum(t.requests for t in tallies)
    five_xx = sum(t.five_xx for t in tallies)
    problems = sum(len(t.problems) for t in tallies)
    res.add(
        Figure(
            section,
            "all families: requests, 5xx, other problems (not google.rpc, stored on reject)",
            requests,
            f"{requests:,} requests in {took:.0f} s; {five_xx} 5xx, {problems - five_xx} other",
            "0 5xx",
            verdict(five_xx == 0, f"{problems - five_xx} other problems"),
        )
    )
    svc.stop()


# -- d. load -----------------------------------------------------------------------------------


class Poller(threading.Thread):
    """jobs.list and an entries:list page every 0.2 s, timed; the service's RSS alongside."""

    def __init__(self, svc: Service) -> None:
        super().__init__(daemon=True, name="poller")
        self.svc = svc
        self.focus: str | None = None
        """The job whose log page is fetched (the oldest RUNNING one, set by the waiter)."""
        self.stop = threading.Event()
        self.lists: list[float] = []
        self.entries: list[float] = []
        self.errors: list[str] = []
        self.rss: list[int] = []

    def run(self) -> None:
        conn = self.svc.connect()
        proc = psutil.Process(self.svc.pid) if self.svc.pid else None
        while not self.stop.is_set():
            started = time.perf_counter()
            try:
                status, data = self.svc.request(
                    conn, "GET", f"/v1/projects/{PROJECT}/jobs?pageSize=100"
                )
                self.lists.append(time.perf_counter() - started)
                if status != 200:
                    self.errors.append(f"jobs.list {status}: {str(data)[:100]}")
                if self.focus:
                    body = {
                        "resourceNames": [f"projects/{PROJECT}"],
                        "filter": f'resource.labels.job_id="{self.focus}" AND {EPOCH_FILTER}',
                        "orderBy": "timestamp asc",
                        "pageSize": 1000,
                    }
                    t1 = time.perf_counter()
                    status, data = self.svc.request(conn, "POST", "/v2/entries:list", body)
                    self.entries.append(time.perf_counter() - t1)
                    if status != 200:
                        self.errors.append(f"entries:list {status}: {str(data)[:100]}")
                if proc is not None:
                    with contextlib.suppress(psutil.Error):
                        self.rss.append(proc.memory_info().rss)
            except (OSError, http.client.HTTPException) as exc:
                self.errors.append(repr(exc)[:100])
                conn.close()
                conn = self.svc.connect()
            self.stop.wait(max(0.0, 0.2 - (time.perf_counter() - started)))
        conn.close()


def submit_burst(svc: Service, jobs: list[dict[str, Any]], threads: int) -> list[float]:
    """Create every job from ``threads`` threads at once, each on its own connection."""
    latencies: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()

    def worker(part: list[dict[str, Any]]) -> None:
        conn = svc.connect()
        for job in part:
            t0 = time.perf_counter()
            status, data = svc.request(conn, "POST", f"/v1/projects/{PROJECT}/jobs", job)
            dt = time.perf_counter() - t0
            with lock:
                latencies.append(dt)
                if status != 200:
                    failures.append(f"{job['jobId']}: {status} {str(data)[:100]}")
        conn.close()

    pool = [
        threading.Thread(target=worker, args=(jobs[i::threads],), name=f"submit-{i}")
        for i in range(threads)
    ]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    if failures:
        raise RuntimeError(f"{len(failures)} creates failed, e.g. {failures[0]}")
    return latencies


def bench_load(root: Path, cfg: Config, trainer: Path, res: Results, svcs: list[Service]) -> None:
    n, lines = cfg.load_jobs, cfg.load_lines
    section = f"d load: {n} jobs x {lines:,} lines"
    svc = Service(make_dir(root / "load"))
    svcs.append(svc)
    start(svc, slots=None)  # the default capacity: one slot per core
    uri = svc.stage(trainer)
    ids = [f"load_{i:04d}" for i in range(n)]
    jobs = [basic_job(j, uri, "trainer.task", "--flood", str(lines), "--steps", "1") for j in ids]
    poller = Poller(svc)
    poller.start()
    t0 = time.monotonic()
    creates = submit_burst(svc, jobs, cfg.load_threads)
    burst = time.monotonic() - t0
    res.add(
        Figure(
            section,
            f"burst: {n} creates from {cfg.load_threads} threads",
            n,
            f"{burst:.1f} s ({n / burst:,.0f}/s); create {ms(creates)}",
        )
    )
    # Wait for every job, watching how many run at once (and pointing the poller at one).
    conn = svc.connect()
    most = 0
    last_print = 0.0
    deadline = time.monotonic() + 60 * 60
    states: dict[str, str] = {}
    try:
        while True:
            states = {j["jobId"]: j["state"] for j in list_all(svc, conn)}
            running = sorted(j for j, s in states.items() if s == "RUNNING")
            most = max(most, len(running))
            poller.focus = running[0] if running else poller.focus
            finished = sum(s in TERMINAL for s in states.values())
            if time.monotonic() - last_print > 15:
                counts = collections.Counter(states.values())
                print(f"    {time.monotonic() - t0:5.0f} s: {dict(counts)}", flush=True)
                last_print = time.monotonic()
            if finished == n:
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"after an hour: {collections.Counter(states.values())}")
            time.sleep(1)
    finally:
        poller.stop.set()
        poller.join(10)
    elapsed = time.monotonic() - t0
    conn.close()
    slots = os.cpu_count() or 1
    res.add(
        Figure(
            section,
            "jobs RUNNING at once (most seen, polled every 1 s)",
            n,
            f"{most} (capacity: {slots} slots = cores)",
        )
    )
    for name, values in (
        ("jobs.list pageSize 100, every 0.2 s through the run", poller.lists),
        ("entries:list, first page of the running job, every 0.2 s", poller.entries),
    ):
        p99 = percentile(values, 99) if values else float("inf")
        res.add(
            Figure(
                section,
                name,
                len(values),
                ms(values),
                "p99 ≤ 500 ms",
                verdict(p99 <= 0.5 and not poller.errors, f"{len(poller.errors)} errors"),
            )
        )
    for error in poller.errors[:3]:
        res.notes.append(f"[d] poll error: {error}")
    if poller.rss:
        res.add(
            Figure(
                section,
                "service RSS: start → peak",
                len(poller.rss),
                f"{poller.rss[0] / 2**20:,.0f} → {max(poller.rss) / 2**20:,.0f} MiB",
            )
        )
    ok = sum(s == "SUCCEEDED" for s in states.values())
    res.add(
        Figure(
            section,
            "jobs terminal",
            n,
            ", ".join(f"{c} {s}" for s, c in sorted(collections.Counter(states.values()).items())),
            f"{n}/{n} SUCCEEDED",
            verdict(ok == n, f"{ok}/{n}"),
        )
    )
    svc.stop()
    # What the replicas wrote against what the store kept (read-only, the service stopped).
    written = flood_written = 0
    for job_id in ids:
        for line in written_lines(replica_dir(svc, job_id)):
            written += 1
            flood_written += FLOOD_LINE.match(line) is not None
    with contextlib.closing(sqlite3.connect(f"file:{svc.state.logs_db}?mode=ro", uri=True)) as db:
        stored = db.execute(
            "SELECT count(*) FROM log_entries WHERE project=? AND task_name != 'service'",
            (PROJECT,),
        ).fetchone()[0]
        flood_stored = db.execute(
            "SELECT count(*) FROM log_entries WHERE project=? AND task_name != 'service' "
            "AND message GLOB 'flood [0-9]*'",
            (PROJECT,),
        ).fetchone()[0]
    res.add(
        Figure(
            section,
            "lines stored (logs.sqlite) / written (replica log files)",
            n,
            f"{stored:,} / {written:,}",
            "equal",
            verdict(stored == written, f"{written - stored:+,}" if stored != written else ""),
        )
    )
    expected = n * lines
    res.add(
        Figure(
            section,
            f"flood lines stored / the trainers' count ({n} x {lines:,})",
            n,
            f"{flood_stored:,} / {expected:,} (files: {flood_written:,})",
            "equal",
            verdict(flood_stored == expected, ""),
        )
    )
    res.add(
        Figure(
            section,
            "elapsed: first create → last job terminal",
            1,
            f"{elapsed:.0f} s ({written / elapsed:,.0f} lines/s, {n / elapsed * 60:,.0f} jobs/min)",
        )
    )


# -- report ------------------------------------------------------------------------------------


def header(cfg: Config) -> str:
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return "\n".join(
        [
            f"fault_bench ({'quick' if cfg.quick else 'full'} run) — {now}",
            machine_line(),
            f"python {platform.python_version()} ({sys.executable})",
            "note: a shared 2-core box where other work may run at the same time; latencies "
            "are noisy (±20-30 %), counts are exact.",
        ]
    )


SECTIONS = ("crash", "orphans", "fuzz", "load", "power")


def run(cfg: Config, keep: bool, only: tuple[str, ...]) -> int:
    print(header(cfg), flush=True)
    res = Results()
    svcs: list[Service] = []
    with workspace("tui-fault-bench-", keep) as root:
        try:
            trainer = build_sdist(TRAINER_SRC, root / "build-trainer")
            if "crash" in only:
                print(f"[a] kill -9 with {cfg.crash_jobs} running jobs", flush=True)
                bench_crash(root, cfg, trainer, res, svcs)
            if "orphans" in only:
                print(f"[b] cancel {cfg.orphan_jobs} jobs with hostile children", flush=True)
                bench_orphans(root, cfg, trainer, res, svcs)
            if "fuzz" in only:
                print(f"[c] fuzz, {cfg.fuzz_examples} examples per family", flush=True)
                bench_fuzz(root, cfg, res, svcs)
            if "power" in only:
                print(f"[e] power cut with {cfg.crash_jobs} running jobs", flush=True)
                bench_power_cut(root, cfg, trainer, res, svcs)
            if "load" in only:
                print(f"[d] load: {cfg.load_jobs} jobs x {cfg.load_lines:,} lines", flush=True)
                bench_load(root, cfg, trainer, res, svcs)
        except KeyboardInterrupt:
            print("\ninterrupted: cleaning up", file=sys.stderr)
            return 130
        finally:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # let the clean-up finish
            for svc in svcs:
                svc.stop()
            exclude: set[int] = set()
            leftovers = job_processes(root, exclude)
            kill_all(leftovers)
            killed = len(leftovers) + kill_stragglers(root)
            if killed:
                print(f"killed {killed} straggling process(es)", file=sys.stderr)
            signal.signal(signal.SIGINT, signal.default_int_handler)
    print_table(res)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="5 jobs for a/b, 50 for d (~2 min)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary state dirs")
    parser.add_argument(
        "--only", action="append", choices=SECTIONS, help="run only these sections (repeatable)"
    )
    args = parser.parse_args(argv)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even when started with &
    signal.signal(signal.SIGTERM, raise_interrupt)
    signal.signal(signal.SIGHUP, raise_interrupt)
    return run(Config.make(args.quick), args.keep, tuple(args.only or SECTIONS))


if __name__ == "__main__":
    sys.exit(main())
