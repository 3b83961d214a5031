"""The service with ``--executor ray``, end to end: ``python benchmarks/ray_bench.py [--quick]``.

It starts a real 3-node Ray cluster on this machine (``ray.cluster_utils.Cluster``, every node on
its own loopback address: 127.0.0.41, .42, .43 by default, ``--first`` moves them; never
127.0.0.1, which Ray rewrites to the machine's network address, and away from the test suite's
.2-.4 and .6-.7 and any ``ray start`` demo on this shared machine), a ``tui_app service run
--executor ray`` subprocess on it (token auth, a free port, a temporary state dir), and prints a
table of figures, each with its goal where issue 28 sets one:

1. create -> RUNNING on a warm cluster with a cached package: a BASIC job of the sample trainer
   and the 4-replica CUSTOM job (master, 2 workers, a parameter server, all ``standard``), after
   one warm-up job; ``JobsClient.get`` every 10 ms. Also create -> PREPARING (the placement
   group and the replicas' actors), PREPARING -> RUNNING (packages from the cache, each replica
   started on its node), when the last replica's actor came alive (Ray's actor table), and how
   long after the end the cluster's CPUs are all free again (the next job waits for that).
   Runs alternate BASIC and CUSTOM, and each starts on an idle cluster.
2. a replica's line on its node -> queryable in entries:list: ``service_bench.probe_run`` (the
   probe trainer prints ``probe <i> <time.time()>`` every 100 ms; entries:list is polled every
   10 ms).
3. faults, the counts ``fault_bench`` takes: (a) N jobs of 2 replicas printing numbered lines
   run on the cluster; the service alone gets SIGKILL and the same command restarts it on the
   same state dir: every job SUCCEEDED, and per replica 0 lines lost and 0 duplicated between
   the files the service received and entries:list, and step numbers contiguous. (b) a job of
   3 replicas spread over the nodes, checkpointing to a gs:// job dir; one non-head node is
   killed (``cluster.remove_node(node, allow_graceful=False)``): every replica runs again on
   the nodes left (a whole-job retry, docs/restarts.md) within 10 s, the job SUCCEEDED with
   its master resumed from its checkpoint, and no line at the service is lost or doubled in
   entries:list. ``--node-death-only`` runs this section alone.
4. service_bench's create -> RUNNING figures for the local executor (its own service on this
   machine, same N), in the same run, so both executors are measured under the same load.
5. where create -> PREPARING goes: a driver of this script's own (``--probe``, a subprocess)
   times the executor's Ray calls alone on the idle cluster: the placement group, actors in its
   bundles (``ReplicaActor``; the same with its worker at niceness 0 instead of Ray's 15; a
   bare class, i.e. Ray's worker start without tui_app's import), the ports, the package
   layer's pack / put / fetch on another node / unpack, the teardown; a fresh ``python -c
   'import ray'``, what every new worker does; and the niceness of a running replica's
   processes under either executor (a busy machine starves niced processes first).

The nodes are ``tests/support/ray_cluster.py``'s, with 16 CPUs and 64 GiB per node instead of
8 and 32, so that section 3's 6 jobs x 2 ``standard`` replicas (4 vCPU, 15 GB each) run at once:
logical amounts Ray shares out, the machine's real cores are time-shared. ``RAY_TMPDIR`` and
``TUI_APP_RAY_NODE_ROOT`` point into the temporary dir, so Ray's session files and the replicas'
work dirs on the nodes are this run's alone.

Everything lives in that temporary dir, removed at the end (``--keep`` leaves it): the services
are stopped, the cluster is shut down, and any process still running from the dir (replicas,
supervisors, Ray's own) is counted and killed, also on Ctrl-C or SIGTERM. Run it with the
project's virtualenv (``.venv/bin/python``) from the repository root; it needs the ray extra.
A full run took 7.5 minutes on this project's 2-core machine at a load average of ~11; ``--quick``
saves little (the cluster's start and section 3a's jobs take most of it).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import dataclasses
import datetime
import hashlib
import json
import logging
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
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
from fault_bench import (  # beside this script
    current,
    kill_all,
    make_dir,
    replica_dir,
    start,
    state_counts,
    stored_messages,
    wait_states,
    written_lines,
)
from service_bench import (  # beside this script
    PROJECT,
    REPO,
    TERMINAL,
    Service,
    basic_job,
    bench_create,
    dist_ms,
    kill_stragglers,
    med_range,
    percentile,
    probe_run,
    verdict,
    write_probe_package,
)
from service_bench import Config as ServiceConfig

from tui_app.entry.demo import build_sdist, build_trainer_sdist
from tui_app.local.execution.ray_warm_actors import DEFAULT_WARM_ACTORS

GIB = 1024**3
NODES = 3
WARM_PER_NODE = DEFAULT_WARM_ACTORS
"""What the benchmarked service keeps waiting per node (its default ``--ray-warm-actors``)."""
NODE_CPUS = 16
NODE_MEMORY = 64 * GIB
FIRST_ADDRESS = 41
"""The head node is 127.0.0.41, the others .42 and .43."""
STANDARD = {"masterType": "standard", "workerType": "standard"}
CUSTOM_4 = {
    "scaleTier": "CUSTOM",
    **STANDARD,
    "workerCount": "2",
    "parameterServerType": "standard",
    "parameterServerCount": "1",
}
"""The demo's distributed job: master, 2 workers, a parameter server, 4 vCPU / 15 GB each."""
TWO = {"scaleTier": "CUSTOM", **STANDARD, "workerCount": "1"}
THREE = {"scaleTier": "CUSTOM", **STANDARD, "workerCount": "2"}
STEP_LINE = re.compile(r"step ([0-9]+) ")
"""The sample trainer's numbered lines: ``step 12 loss=0.53 task=worker-0``."""
NODE_ROOT_ENV = "TUI_APP_RAY_NODE_ROOT"
"""Where ray_replica.ReplicaActor keeps the replicas' work dirs on a node."""


@dataclass(frozen=True)
class Config:
    """What one run measures; ``--quick`` shrinks everything."""

    quick: bool
    create_runs: int
    probe_lines: int
    crash_jobs: int
    crash_steps: int
    crash_sleep: float
    diagnose_runs: int
    node_death_only: bool = False

    @classmethod
    def make(cls, quick: bool, node_death_only: bool = False) -> Config:
        if quick:
            return cls(True, 2, 50, 3, 200, 0.2, 1, node_death_only)
        return cls(False, 5, 100, 6, 300, 0.2, 3, node_death_only)


# -- the cluster and the service -------------------------------------------------------------


def start_cluster(count: int, first: int) -> Any:
    """The tests' cluster (``tests/support/ray_cluster.py``), with room for 4 ``standard``
    replicas per node."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))  # tests.support is not an installed package
    from tests.support.ray_cluster import start

    return start(count, first, NODE_CPUS, NODE_MEMORY)


class RayService(Service):
    """``service_bench.Service`` with ``--executor ray --ray-address ADDRESS``."""

    ready_timeout = 120.0  # joining the cluster is part of starting

    def __init__(self, root: Path, address: str) -> None:
        super().__init__(root)
        self.extra_args = ("--executor", "ray", "--ray-address", address)


def job_body(job_id: str, uri: str, *args: str, **training: str) -> dict[str, Any]:
    body = basic_job(job_id, uri, "trainer.task", *args)
    body["trainingInput"].update(training)
    return body


def cpus_free(cluster: Any) -> tuple[float, float]:
    """(free, total) CPUs of the cluster, from its GCS (no driver needed)."""
    state = cluster.global_state
    return (
        float(state.available_resources().get("CPU", 0.0)),
        float(state.cluster_resources().get("CPU", 0.0)),
    )


def wait_cluster_idle(cluster: Any, timeout: float = 120) -> float:
    """Seconds until every CPU of the cluster is free again (a run's actors and group gone)."""
    t0 = time.perf_counter()
    deadline = time.monotonic() + timeout
    while True:
        free, total = cpus_free(cluster)
        if free >= total > 0:
            return time.perf_counter() - t0
        if time.monotonic() > deadline:
            raise TimeoutError(f"only {free:g} of {total:g} CPUs free after {timeout:.0f} s")
        time.sleep(0.01)


def warm_alive(cluster: Any) -> int:
    """The service's warm actors (``ray_warm_actors``) alive: waiting, or serving a replica."""
    table = cluster.global_state.actor_table(None)
    return sum(
        1 for a in table.values() if "/warm/" in a.get("Name", "") and a.get("State") == "ALIVE"
    )


def wait_warm(cluster: Any, want: int, timeout: float = 60) -> float:
    """Seconds until ``want`` warm actors are alive again (the service tops its pool up in the
    background after each placement): a warm cluster, as the create -> RUNNING goal says."""
    t0 = time.perf_counter()
    wait_for(f"{want} warm actors", lambda: warm_alive(cluster) >= want, timeout, every=0.02)
    return time.perf_counter() - t0


def replica_nodes(svc: Service, job_id: str) -> dict[str, str]:
    """Each replica's node address, as the service reports it (``:metrics``)."""
    conn = svc.connect()
    try:
        status, body = svc.request(conn, "GET", f"/v1/projects/{PROJECT}/jobs/{job_id}:metrics")
    finally:
        conn.close()
    if status != 200:
        raise RuntimeError(f":metrics answered {status}: {str(body)[:200]}")
    return {r["taskName"]: r["node"]["address"] for r in body.get("replicas", []) if r.get("node")}


def replica_processes(root: Path, job_id: str) -> list[psutil.Process]:
    """Live processes of one job's replicas (supervisor, trainer, children) on any node: the
    job id the service sets in their environment, under this run's node root."""
    found: list[psutil.Process] = []
    for proc in psutil.process_iter(["environ", "status"]):
        env = proc.info.get("environ") or {}
        if proc.info.get("status") == psutil.STATUS_ZOMBIE:
            continue
        if env.get("CLOUD_ML_JOB_ID") == job_id and env.get("TUI_APP_REPLICA", "").startswith(
            str(root)
        ):
            found.append(proc)
    return found


def step_numbers(lines: list[str]) -> list[int]:
    return [int(m.group(1)) for line in lines if (m := STEP_LINE.match(line))]


def contiguous_once(steps: list[int]) -> bool:
    """The numbered lines are 1..k, each once (a gap: a lost chunk; a repeat: a resent one)."""
    return sorted(steps) == list(range(1, len(steps) + 1))


def compare(wrote: list[str], have: list[str]) -> tuple[int, int]:
    """(lost, duplicated) lines of ``have`` against ``wrote``, as multisets."""
    w, h = collections.Counter(wrote), collections.Counter(have)
    return sum((w - h).values()), sum((h - w).values())


def flowing(svc: Service, ids: list[str], tasks: list[str], least: int) -> bool:
    """Every replica of every job has ``least`` numbered lines in the service's files, and
    entries:list has at least one of them."""
    conn = svc.connect()
    try:
        for job_id in ids:
            for task in tasks:
                if len(step_numbers(written_lines(replica_dir(svc, job_id, task)))) < least:
                    return False
                if not step_numbers(stored_messages(svc, conn, job_id, task)):
                    return False
        return True
    finally:
        conn.close()


def wait_for(what: str, check: Callable[[], bool], timeout: float, every: float = 0.2) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"still waiting for {what} after {timeout:.0f} s")
        time.sleep(every)


# -- 1. create -> RUNNING --------------------------------------------------------------------


@dataclass
class Timeline:
    """One job's path, in seconds after its create call was made."""

    states: dict[str, float]
    """First get showing each state, after the create call was made."""
    actors: float | None
    """The last replica's actor alive (Ray's actor table), after the create call was made."""
    freed: float
    """From the terminal state seen to every CPU of the cluster free again."""
    ended: float | None
    """The last replica process's end (its supervisor's status.json), after the create call."""


def last_actor_alive(cluster: Any, job_id: str, since: float) -> float | None:
    """When the job's last replica actor started, by Ray's actor table, after ``since``."""
    table = cluster.global_state.actor_table(None)
    starts = [
        a["StartTime"] / 1e3
        for a in table.values()
        if f"/{PROJECT}/{job_id}/" in a.get("Name", "") and a.get("StartTime")
    ]
    return max(starts) - since if starts else None


def timed_job(svc: Service, cluster: Any, body: dict[str, Any]) -> Timeline:
    client = svc.client()
    job_id = body["jobId"]
    seen: dict[str, float] = {}
    actors: float | None = None
    wall = time.time()
    t0 = time.perf_counter()
    client.create(body)
    while True:
        g0 = time.perf_counter()
        state = client.get(job_id)["state"]
        now = time.perf_counter() - t0
        seen.setdefault(state, now)
        if state not in ("QUEUED", "PREPARING") and actors is None:
            actors = last_actor_alive(cluster, job_id, wall)
        if state in TERMINAL:
            break
        if now > 300:
            raise TimeoutError(f"{job_id} still {state} after 300 s")
        time.sleep(max(0.0, 0.010 - (time.perf_counter() - g0)))
    if "RUNNING" not in seen or "SUCCEEDED" not in seen:
        raise RuntimeError(f"{job_id} went {seen}: {client.get(job_id).get('errorMessage')}")
    ends: list[float] = []
    for status in svc.state.job_dir(PROJECT, job_id).glob("*/status.json"):
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            ends.append(float(json.loads(status.read_text())["ended"]) - wall)
    freed = wait_cluster_idle(cluster)
    wait_warm(cluster, WARM_PER_NODE * NODES)
    return Timeline(seen, actors, freed, max(ends) if ends else None)


def create_figures(section: str, label: str, runs: list[Timeline], res: Results) -> None:
    n = len(runs)
    running = [r.states["RUNNING"] for r in runs]
    med = statistics.median(running)
    res.add(
        Figure(
            section,
            f"{label}: create → first get showing RUNNING",
            n,
            med_range(running, 1e3, 0, " ms") + f"; max {max(running):.2f} s",
            "≤ 2 s",
            verdict(med <= 2.0, f"median; max {'≤' if max(running) <= 2.0 else '>'} 2 s"),
        )
    )
    # PREPARING may pass between two polls: then RUNNING bounds it from above.
    prep = [r.states.get("PREPARING", r.states["RUNNING"]) for r in runs]
    seen = sum("PREPARING" in r.states for r in runs)
    res.add(
        Figure(
            section,
            f"  ↳ create → PREPARING: placement group + actors (seen {seen}/{n})",
            n,
            med_range(prep, 1e3, 0, " ms"),
        )
    )
    actors = [r.actors for r in runs if r.actors is not None]
    if actors:
        res.add(
            Figure(
                section,
                "  ↳ create → last replica actor alive (Ray's actor table)",
                len(actors),
                med_range(actors, 1e3, 0, " ms"),
            )
        )
    res.add(
        Figure(
            section,
            "  ↳ PREPARING → RUNNING: cached packages, each replica started on its node",
            n,
            med_range([r - p for r, p in zip(running, prep, strict=True)], 1e3, 0, " ms"),
        )
    )
    tail = [r.states["SUCCEEDED"] - r.ended for r in runs if r.ended is not None]
    res.add(
        Figure(
            section,
            "  RUNNING → SUCCEEDED (--steps 5) / of which after the last replica's process "
            "ended (its status.json)",
            n,
            med_range([r.states["SUCCEEDED"] - r.states["RUNNING"] for r in runs], 1, 2, " s")
            + " / "
            + (med_range(tail, 1, 2, " s") if tail else "-"),
        )
    )
    res.add(
        Figure(
            section,
            "  SUCCEEDED → the cluster's CPUs all free again (actors killed, group removed)",
            n,
            med_range([r.freed for r in runs], 1e3, 0, " ms"),
        )
    )


def bench_create_ray(svc: Service, cluster: Any, cfg: Config, uri: str, res: Results) -> str:
    """Section 1; returns one job's id (its files tell section 5 where the packages are)."""
    section = "1 create → RUNNING, warm cluster, cached package"
    t0 = time.perf_counter()
    warm = timed_job(svc, cluster, job_body("ray_warmup", uri, "--steps", "5"))
    res.notes.append(
        "[1] warm-up job (package installed into the service's cache, first actors): "
        f"create → RUNNING {warm.states['RUNNING']:.1f} s, all done "
        f"{time.perf_counter() - t0:.1f} s"
    )
    basic: list[Timeline] = []
    custom: list[Timeline] = []
    for i in range(cfg.create_runs):
        basic.append(timed_job(svc, cluster, job_body(f"ray_basic_{i}", uri, "--steps", "5")))
        custom.append(
            timed_job(svc, cluster, job_body(f"ray_custom_{i}", uri, "--steps", "5", **CUSTOM_4))
        )
        print(
            f"    run {i + 1}: BASIC {basic[-1].states['RUNNING']:.2f} s, "
            f"CUSTOM x4 {custom[-1].states['RUNNING']:.2f} s",
            flush=True,
        )
    create_figures(section, "BASIC (1 replica)", basic, res)
    create_figures(section, "CUSTOM (4 replicas: master, 2 workers, ps)", custom, res)
    return "ray_basic_0"


# -- 4. the local executor, same load --------------------------------------------------------


def bench_local(root: Path, cfg: Config, trainer: Path, res: Results, svcs: list[Service]) -> str:
    """service_bench's own create figures (``bench_create``) on a local-executor service;
    returns its replicas' niceness (``replica_niceness``) for section 5."""
    section = "4 the local executor (service_bench's figures, same run)"
    svc = Service(make_dir(root / "local"))
    svcs.append(svc)
    start(svc, slots=None)
    uri = svc.stage(trainer)
    mine = Results()
    bench_create(
        svc,
        dataclasses.replace(ServiceConfig.make(cfg.quick), create_runs=cfg.create_runs),
        uri,
        mine,
    )
    res.figures += [dataclasses.replace(f, section=section) for f in mine.figures]
    res.notes += [f"[4] {note}" for note in mine.notes]
    nice = replica_niceness(svc, uri, "local_niceness")
    svc.stop()
    return nice


# -- 5. where create -> PREPARING goes -------------------------------------------------------


class BareActor:
    """An actor with nothing of tui_app in it: Ray's own cost of a new actor."""

    def where(self) -> dict[str, Any]:
        return {"pid": os.getpid()}

    def fetch(self, refs: list[Any]) -> int:
        import ray

        return len(ray.get(refs[0]))


NICE_0 = {"env_vars": {"RAY_worker_niceness": "0"}}
"""A runtime env that starts the actor's worker at niceness 0 instead of Ray's default 15 (what
Ray's own job supervisor does for its actor)."""


def probe(address: str, layer: str, runs: int) -> dict[str, Any]:
    """The executor's Ray calls (``RayExecutor.place``, ``RayPlacement.start``) one by one, timed
    by a driver of our own on the idle cluster; run as ``ray_bench.py --probe`` (a subprocess)."""
    import ray as typed_ray
    from ray.util.placement_group import placement_group, remove_placement_group
    from ray.util.scheduling_strategies import (
        NodeAffinitySchedulingStrategy,
        PlacementGroupSchedulingStrategy,
    )

    from tui_app.local.execution.ray_replica import ReplicaActor, pack_layer, unpack_layer

    ray: Any = typed_ray  # handles of two actor classes in one list: Ray's stubs can't say so
    out: dict[str, Any] = collections.defaultdict(list)
    t0 = time.perf_counter()
    ray.init(
        address=address,
        namespace="ray-bench-probe",
        log_to_driver=False,
        logging_level=logging.WARNING,
    )
    out["init"] = [time.perf_counter() - t0]
    real, bare = ray.remote(ReplicaActor), ray.remote(BareActor)
    variants: list[tuple[str, Any, dict[str, Any]]] = [
        ("replica", real, {}),
        ("replica_nice0", real, {"runtime_env": NICE_0}),
        ("bare", bare, {}),
    ]
    bundle = {"CPU": 4.0, "memory": float(15 * GIB)}
    for _ in range(runs):
        for n in (1, 4):
            for kind, cls, extra in variants:
                t0 = time.perf_counter()
                pg = placement_group([bundle] * n, strategy="SPREAD")
                ray.get(pg.ready(), timeout=120)
                t1 = time.perf_counter()
                args = [("ray-bench/probe", f"r{i}") if cls is real else () for i in range(n)]
                actors = [
                    cls.options(
                        max_concurrency=8,
                        num_cpus=4,
                        memory=15 * GIB,
                        scheduling_strategy=PlacementGroupSchedulingStrategy(
                            placement_group=pg, placement_group_bundle_index=i
                        ),
                        **extra,
                    ).remote(*args[i])
                    for i in range(n)
                ]
                wheres = ray.get([a.where.remote() for a in actors], timeout=300)
                t2 = time.perf_counter()
                with contextlib.suppress(psutil.Error):  # every node is on this machine
                    out[f"nice_{kind}"] = [psutil.Process(w["pid"]).nice() for w in wheres]
                if cls is real:
                    ray.get([a.reserve_ports.remote(1) for a in actors], timeout=60)
                    out[f"ports{n}"].append(time.perf_counter() - t2)
                t3 = time.perf_counter()
                for a in actors:
                    ray.kill(a)
                remove_placement_group(pg)
                out[f"teardown{n}_{kind}"].append(time.perf_counter() - t3)
                out[f"pg{n}"].append(t1 - t0)
                out[f"actors{n}_{kind}"].append(t2 - t1)
                time.sleep(0.5)  # the killed workers gone before the next round
    # What a pool of warm actors would cost instead: one started ahead on every node, holding
    # no resources (the group holds them); a run then asks the one on each bundle's node.
    from ray.util.placement_group import placement_group_table

    warm = {
        n["NodeID"]: bare.options(
            num_cpus=0,
            scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False),
        ).remote()
        for n in ray.nodes()
        if n.get("Alive")
    }
    ray.get([a.where.remote() for a in warm.values()], timeout=300)
    for _ in range(max(3, runs)):
        for n in (1, 4):
            t0 = time.perf_counter()
            pg = placement_group([bundle] * n, strategy="SPREAD")
            ray.get(pg.ready(), timeout=120)
            on = placement_group_table(pg)["bundles_to_node_id"]
            ray.get([warm[on[i]].where.remote() for i in range(n)], timeout=60)
            out[f"warm{n}"].append(time.perf_counter() - t0)
            remove_placement_group(pg)
    for a in warm.values():
        ray.kill(a)
    # The package layer: packed and put by the service, fetched and unpacked on the node.
    driver_node = ray.get_runtime_context().get_node_id()
    other = next(
        (n["NodeID"] for n in ray.nodes() if n.get("Alive") and n["NodeID"] != driver_node),
        driver_node,
    )
    fetcher = bare.options(
        num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(other, soft=False)
    ).remote()
    ray.get(fetcher.where.remote(), timeout=300)
    with tempfile.TemporaryDirectory(prefix="ray-bench-layer-") as tmp:
        for i in range(max(3, runs)):
            t0 = time.perf_counter()
            digest, data = pack_layer(Path(layer))
            t1 = time.perf_counter()
            ref = ray.put(data)
            t2 = time.perf_counter()
            ray.get(fetcher.fetch.remote([ref]), timeout=60)
            t3 = time.perf_counter()
            unpack_layer(Path(tmp) / str(i), digest, data)
            t4 = time.perf_counter()
            out["pack"].append(t1 - t0)
            out["put"].append(t2 - t1)
            out["fetch"].append(t3 - t2)
            out["unpack"].append(t4 - t3)
            out["layer_bytes"] = [len(data)]
    ray.kill(fetcher)
    ray.shutdown()
    return dict(out)


def python_import_ray(times: int) -> list[float]:
    """Wall seconds of a fresh ``python -c 'import ray'``: the first thing a new worker does."""
    out: list[float] = []
    for _ in range(times):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import ray"], check=True)
        out.append(time.perf_counter() - t0)
    return out


def replica_niceness(svc: Service, uri: str, job_id: str) -> str:
    """The niceness of a running replica's trainer and of the processes above it (its
    supervisor; the service, or on Ray the actor's worker), as ``name nice, ...``."""
    client = svc.client()
    client.create(job_body(job_id, uri, "--steps", "100000", "--sleep", "0.05", "--log-every", "1"))
    try:
        wait_states(svc, [job_id], ("RUNNING",), 300)
        wait_for("a line", lambda: flowing(svc, [job_id], ["master-replica-0"], 1), 120)
        for proc in psutil.process_iter(["environ", "cmdline"]):
            env = proc.info.get("environ") or {}
            if env.get("CLOUD_ML_JOB_ID") != job_id or "trainer.task" not in " ".join(
                proc.info.get("cmdline") or []
            ):
                continue
            with contextlib.suppress(psutil.Error):
                chain = [("trainer", proc.nice())]
                supervisor = proc.parent()
                if supervisor is not None:
                    chain.append(("supervisor", supervisor.nice()))
                    above = supervisor.parent()
                    if above is not None:
                        name = above.name() if "ray::" in above.name() else "service"
                        chain.append((name, above.nice()))
                return ", ".join(f"{name} {nice}" for name, nice in reversed(chain))
        return "trainer not found"
    finally:
        client.cancel(job_id)
        wait_states(svc, [job_id], TERMINAL, 120)


def bench_diagnose(
    svc: Service, cluster: Any, cfg: Config, job_id: str, uri: str, local: str, res: Results
) -> None:
    section = "5 where create → PREPARING goes: the executor's Ray calls alone, idle cluster"
    spec = json.loads((replica_dir(svc, job_id) / "spec.json").read_text())
    layer = spec["env"].get("PYTHONPATH", "")
    if not layer:
        res.notes.append("[5] the job ran without a package layer: no layer figures")
        layer = str(Path(__file__).parent)
    res.add(
        Figure(
            section,
            "niceness of a running replica's processes, Ray / local executor",
            2,
            f"{replica_niceness(svc, uri, 'ray_niceness')} / {local}",
        )
    )
    wait_cluster_idle(cluster)
    proc = subprocess.run(
        [
            sys.executable,
            __file__,
            "--probe",
            cluster.address,
            "--probe-layer",
            layer,
            "--probe-runs",
            str(cfg.diagnose_runs),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"the probe driver failed:\n{proc.stderr[-3000:]}")
    got: dict[str, list[float]] = json.loads(proc.stdout.strip().splitlines()[-1])

    def row(name: str, values: list[float]) -> None:
        res.add(Figure(section, name, len(values), med_range(values, 1e3, 0, " ms")))

    row(
        "fresh `python -c 'import ray'` (what every new Ray worker does first)",
        python_import_ray(3),
    )
    row("driver ray.init (the service does this once, at start)", got["init"])
    for n in (1, 4):
        row(f"placement group of {n} bundle(s): create → ready", got[f"pg{n}"])
        for kind, what in (
            ("replica", "ReplicaActor(s)"),
            ("replica_nice0", "ReplicaActor(s), worker at niceness 0 (runtime_env)"),
            ("bare", "bare actor(s), no tui_app import"),
        ):
            nice = "/".join(str(x) for x in sorted(set(got.get(f"nice_{kind}", []))))
            row(
                f"{n} {what}: create → first call answered (worker niceness {nice or '?'})",
                got[f"actors{n}_{kind}"],
            )
        row(
            f"instead: group ready + a call to a warm actor (started ahead, 0 CPU) on each of "
            f"the {n} bundle(s)' nodes",
            got[f"warm{n}"],
        )
        row(f"reserve_ports on {n} actor(s)", got[f"ports{n}"])
        row(f"teardown: kill {n} ReplicaActor(s), remove the group", got[f"teardown{n}_replica"])
    size = int(got["layer_bytes"][0])
    res.add(
        Figure(
            section,
            f"package layer ({size / 1024:,.0f} KiB): pack / ray.put / fetched on another node"
            " / unpacked",
            len(got["pack"]),
            " / ".join(
                f"{statistics.median(got[k]) * 1e3:,.1f}"
                for k in ("pack", "put", "fetch", "unpack")
            )
            + " ms (medians)",
        )
    )


# -- 2. a remote replica's line -> queryable -------------------------------------------------


def bench_latency(svc: Service, cfg: Config, probe_uri: str, res: Results) -> None:
    section = "2 a replica's line on its node → entries:list"
    job_id = "ray_probe"
    run = probe_run(svc, job_id, probe_uri, cfg.probe_lines)
    med = statistics.median(run.latency)
    p90 = percentile(run.latency, 90)
    nodes = replica_nodes(svc, job_id)
    res.add(
        Figure(
            section,
            f"probe line written (node {', '.join(sorted(set(nodes.values()))) or '?'}) → "
            "seen by a 10 ms entries:list poll",
            len(run.latency),
            dist_ms(run.latency),
            "median ≤ 500 ms",
            verdict(med <= 0.5, f"p90 {'≤' if p90 <= 0.5 else '>'} 500 ms"),
        )
    )
    res.add(
        Figure(
            section,
            "  ↳ entry timestamp - written (the store stamps its cycle start)",
            len(run.stored),
            dist_ms(run.stored),
        )
    )
    res.add(
        Figure(
            section,
            "entries:list poll round trip (raw HTTP)",
            len(run.polls),
            dist_ms(run.polls, 1),
        )
    )
    res.notes.append(f"[2] the probe job ended {run.state}")


# -- 3a. kill -9 with running jobs -----------------------------------------------------------


def bench_crash(svc: Service, cfg: Config, node_root: Path, uri: str, res: Results) -> None:
    n = cfg.crash_jobs
    section = f"3a kill -9 the service with {n} jobs x 2 replicas running on the cluster"
    tasks = ["master-replica-0", "worker-replica-0"]
    ids = [f"ray_crash_{i:02d}" for i in range(n)]
    args = ["--steps", str(cfg.crash_steps), "--sleep", str(cfg.crash_sleep), "--log-every", "1"]
    client = svc.client()
    for job_id in ids:
        client.create(job_body(job_id, uri, *args, **TWO))
    wait_states(svc, ids, ("RUNNING",), 600)
    wait_for("every replica's lines flowing", lambda: flowing(svc, ids, tasks, 3), 300)
    conn = svc.connect()
    received = sum(len(written_lines(replica_dir(svc, j, t))) for j in ids for t in tasks)
    stored = sum(len(stored_messages(svc, conn, j, t)) for j in ids for t in tasks)
    conn.close()
    spread = {a for j in ids for a in replica_nodes(svc, j).values()}
    res.add(
        Figure(
            section,
            "at the kill: jobs, lines received / in entries:list, nodes used",
            n,
            f"{state_counts(current(svc, ids))}; {received:,} / "
            f"{stored:,} lines; {len(spread)} nodes",
        )
    )
    assert svc.proc is not None
    os.kill(svc.proc.pid, signal.SIGKILL)  # the service alone: the replicas run on the nodes
    svc.proc.wait()
    alive = sum(len(replica_processes(node_root, j)) for j in ids)
    res.add(
        Figure(
            section,
            "replica processes (supervisors, trainers) alive on the nodes after the kill",
            n,
            f"{alive} ({alive / n:.1f} per job)",
        )
    )
    t_restart = time.monotonic()
    up = start(svc, slots=None)
    res.add(Figure(section, "restart on the same state dir → answering", 1, f"{up:.1f} s"))
    after = wait_states(svc, ids, TERMINAL, cfg.crash_steps * cfg.crash_sleep + 600)
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
    for message, count in collections.Counter(
        j.get("errorMessage", "") for j in after.values() if j["state"] != "SUCCEEDED"
    ).most_common(2):
        res.notes.append(f"[3a] {count} job(s) ended with: {message[:200]}")
    conn = svc.connect()
    lost = dups = total = 0
    worst: list[str] = []
    masters_complete = contiguous = 0
    for job_id in ids:
        for task in tasks:
            wrote = written_lines(replica_dir(svc, job_id, task))
            have = stored_messages(svc, conn, job_id, task)
            miss, extra = compare(wrote, have)
            lost, dups, total = lost + miss, dups + extra, total + len(wrote)
            if miss or extra:
                worst.append(f"{job_id}/{task} {miss}/{extra}")
            steps = step_numbers(wrote)
            contiguous += contiguous_once(steps)
            masters_complete += task.startswith("master") and len(steps) == cfg.crash_steps
    conn.close()
    reps = n * len(tasks)
    res.add(
        Figure(
            section,
            "lines lost / duplicated: the service's files of each replica vs entries:list",
            reps,
            f"{lost:,} / {dups:,} of {total:,} lines",
            "0 / 0",
            verdict(lost == 0 and dups == 0, ", ".join(worst[:3])),
        )
    )
    res.add(
        Figure(
            section,
            f"numbered lines: step 1..k once each / masters reached step {cfg.crash_steps}",
            reps,
            f"{contiguous}/{reps} replicas / {masters_complete}/{n} masters",
            "all",
            verdict(contiguous == reps and masters_complete == n, ""),
        )
    )


# -- 3b. a node dies -------------------------------------------------------------------------


def node_copy(root: Path, job_id: str, task: str) -> list[str]:
    """What a replica wrote on its node: its work dir, which ray_replica.ReplicaActor keeps
    (under the node root, by a hash of the run's key) until the service has every byte."""
    safe = hashlib.sha256(f"{PROJECT}/{job_id}".encode()).hexdigest()[:16]
    return written_lines(root / "replicas" / safe / task)


def bench_node_death(svc: Service, cluster: Any, node_root: Path, uri: str, res: Results) -> None:
    section = "3b a node dies under a running job of 3 replicas"
    job_id = "ray_node_death"
    tasks = ["master-replica-0", "worker-replica-0", "worker-replica-1"]
    args = ["--steps", "600", "--sleep", "0.05", "--log-every", "1", "--checkpoint-every", "20"]
    body = job_body(job_id, uri, *args, **THREE)
    body["trainingInput"]["jobDir"] = f"gs://bench/{job_id}"
    svc.client().create(body)
    wait_states(svc, [job_id], ("RUNNING",), 300)
    wait_for("20 lines from every replica", lambda: flowing(svc, [job_id], tasks, 20), 300)
    nodes = replica_nodes(svc, job_id)
    head = cluster.head_node.node_ip_address
    # Not the head: the cluster does not outlive it. A worker rather than the master.
    victims = sorted(
        (t for t, a in nodes.items() if a != head), key=lambda t: not t.startswith("worker")
    )
    res.add(
        Figure(
            section,
            "replicas' nodes (head first)",
            len(nodes),
            ", ".join(f"{t} {a}" for t, a in sorted(nodes.items(), key=lambda x: x[1])),
        )
    )
    if not victims:
        res.notes.append("[3b] every replica ran on the head node: no node could be killed")
        svc.client().cancel(job_id)
        return
    victim = victims[0]
    address = nodes[victim]
    node = next(n for n in cluster.worker_nodes if n.node_ip_address == address)
    before = {t: len(written_lines(replica_dir(svc, job_id, t))) for t in tasks}
    t0 = time.monotonic()
    cluster.remove_node(node, allow_graceful=False)
    killed = time.monotonic() - t0

    def elsewhere() -> bool:
        # Every replica started again, off the dead node, and writing: a new line each.
        placed = replica_nodes(svc, job_id)
        job = svc.client().get(job_id)
        return (
            bool(job.get("replicaRestarts"))
            and len(placed) == len(tasks)
            and address not in placed.values()
            and all(len(written_lines(replica_dir(svc, job_id, t))) > before[t] + 2 for t in tasks)
        )

    moved = True
    try:
        wait_for("every replica running again on the nodes left", elsewhere, 120, every=0.05)
    except TimeoutError:
        moved = False
    again = time.monotonic() - t0
    res.add(
        Figure(
            section,
            f"node {address} ({victim}) killed → every replica running again elsewhere",
            len(tasks),
            f"{again:.1f} s (remove_node took {killed:.1f} s)" if moved else "not within 120 s",
            "<= 10 s",
            verdict(moved and again <= 10.0, ""),
        )
    )
    job = wait_states(svc, [job_id], TERMINAL, 300)[job_id]
    took = time.monotonic() - t0
    restarts = job.get("replicaRestarts") or []
    resumed = any(
        line.startswith("Resumed from checkpoint")
        for line in written_lines(replica_dir(svc, job_id, "master-replica-0"))
    )
    res.add(
        Figure(
            section,
            "the job: outcome after the node's death; restarted whole; resumed",
            1,
            f"{job['state']} after {took:.1f} s; {restarts}; resumed: {'yes' if resumed else 'no'}",
            "SUCCEEDED, resumed",
            verdict(job["state"] == "SUCCEEDED" and resumed, ""),
        )
    )
    if job.get("errorMessage"):
        res.notes.append(f"[3b] errorMessage: {job['errorMessage'][:300]}")
    conn = svc.connect()
    lost = dups = total = 0
    for task in tasks:
        wrote = written_lines(replica_dir(svc, job_id, task))
        have = stored_messages(svc, conn, job_id, task)
        miss, extra = compare(wrote, have)
        lost, dups, total = lost + miss, dups + extra, total + len(wrote)
    conn.close()
    res.add(
        Figure(
            section,
            "every replica, both runs: lines at the service lost / duplicated in entries:list",
            len(tasks),
            f"{lost:,} / {dups:,} of {total:,} lines",
            "0 / 0",
            verdict(lost == 0 and dups == 0, ""),
        )
    )
    res.notes.append(
        "[3b] what the dead replica wrote on its node in its last ~100 ms before the node died "
        "never reached the service (its output is shipped every 100 ms); its next run starts "
        "from its checkpoint."
    )
    left: list[psutil.Process] = []

    def gone() -> bool:
        left[:] = replica_processes(node_root, job_id)
        return not left

    with contextlib.suppress(TimeoutError):
        wait_for("the job's processes to end", gone, 30)
    res.add(
        Figure(
            section,
            "the job's replica processes alive 30 s after it ended (all nodes)",
            1,
            str(len(left)),
            "0",
            verdict(not left, ""),
        )
    )


# -- run -------------------------------------------------------------------------------------


def header(cfg: Config) -> str:
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return "\n".join(
        [
            f"ray_bench ({'quick' if cfg.quick else 'full'} run) — {now}",
            machine_line(),
            f"python {platform.python_version()} ({sys.executable})",
            "note: a shared 2-core box where other work may run at the same time; latencies "
            "are noisy (±20-30 % and more under load), counts are exact.",
        ]
    )


@dataclass
class Cleanup:
    """What the run started, to stop it all at the end whatever happened."""

    root: Path
    services: list[Service] = field(default_factory=list)
    cluster: Any = None

    def run(self) -> int:
        """Stop the services, shut the cluster down, then kill (and count) whatever is left
        that came from this run's dir: replicas, supervisors, Ray's processes."""
        for svc in self.services:
            with contextlib.suppress(Exception):
                svc.stop()
        if self.cluster is not None:
            with contextlib.suppress(Exception):
                self.cluster.shutdown()
        mark = str(self.root)
        left = [
            p
            for p in psutil.process_iter(["environ", "status"])
            if p.pid != os.getpid()
            and p.info.get("status") != psutil.STATUS_ZOMBIE
            and (p.info.get("environ") or {}).get("TUI_APP_REPLICA", "").startswith(mark)
        ]
        kill_all(left)
        return len(left) + kill_stragglers(self.root)


class _Done(Exception):
    """The sections asked for ran (``--node-death-only``)."""


def run(cfg: Config, keep: bool, first: int) -> int:
    print(header(cfg), flush=True)
    res = Results()
    with workspace("tui-ray-bench-", keep) as root:
        node_root = root / "nodes"
        # Inherited by the nodes' raylets and so by every worker and replica they start.
        os.environ[NODE_ROOT_ENV] = str(node_root)
        os.environ["RAY_TMPDIR"] = str(root)
        cleanup = Cleanup(root)
        interrupted = False
        try:
            print("building the trainer and probe sdists...", flush=True)
            trainer = build_trainer_sdist(root / "build-trainer")
            probe_sdist = build_sdist(write_probe_package(root), root / "build-probe")
            print(f"starting a {NODES}-node Ray cluster at 127.0.0.{first}...", flush=True)
            t0 = time.monotonic()
            cleanup.cluster = cluster = start_cluster(NODES, first)
            res.notes.append(
                f"cluster of {NODES} nodes ({NODE_CPUS} CPUs, {NODE_MEMORY // GIB} GiB each as "
                f"Ray counts them) at {cluster.address}: up in {time.monotonic() - t0:.1f} s"
            )
            svc = RayService(make_dir(root / "svc-ray"), cluster.address)  # Ray has root/ray
            cleanup.services.append(svc)
            up = start(svc, slots=None)
            res.notes.append(f"service --executor ray answering {up:.1f} s after its start")
            uri = svc.stage(trainer)
            probe_uri = svc.stage(probe_sdist)
            print(f"service pid {svc.pid} at {svc.url}, state {svc.state.root}", flush=True)
            if cfg.node_death_only:
                print("[3b] a node dies", flush=True)
                bench_node_death(svc, cluster, node_root, uri, res)
                raise _Done
            print("[1] create → RUNNING on the cluster", flush=True)
            sample = bench_create_ray(svc, cluster, cfg, uri, res)
            print("[4] create → RUNNING on the local executor", flush=True)
            local_nice = bench_local(root, cfg, trainer, res, cleanup.services)
            print("[5] the executor's Ray calls, timed alone", flush=True)
            bench_diagnose(svc, cluster, cfg, sample, uri, local_nice, res)
            print("[2] a replica's line → entries:list", flush=True)
            bench_latency(svc, cfg, probe_uri, res)
            print(f"[3a] kill -9 with {cfg.crash_jobs} jobs running", flush=True)
            bench_crash(svc, cfg, node_root, uri, res)
            print("[3b] a node dies", flush=True)
            bench_node_death(svc, cluster, node_root, uri, res)
        except _Done:
            pass
        except KeyboardInterrupt:
            print("\ninterrupted: cleaning up", file=sys.stderr)
            interrupted = True
        finally:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # let the clean-up finish
            left = cleanup.run()
            signal.signal(signal.SIGINT, signal.default_int_handler)
        if interrupted:
            return 130
        res.add(
            Figure(
                "cleanup",
                "processes of this run left after the services stopped and the cluster shut "
                "down (killed now)",
                1,
                str(left),
                "0",
                verdict(left == 0, ""),
            )
        )
    # Sections in their numbers' order; they ran in another (4 right after 1: the same load).
    res.figures.sort(key=lambda f: f.section)
    print_table(res)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="2 runs each, 3 jobs in 3a")
    parser.add_argument("--keep", action="store_true", help="keep the temporary dir")
    parser.add_argument(
        "--first",
        type=int,
        default=FIRST_ADDRESS,
        help=f"the head node's address is 127.0.0.FIRST, the others follow (default "
        f"{FIRST_ADDRESS})",
    )
    parser.add_argument(
        "--node-death-only", action="store_true", help="only section 3b (a node dies)"
    )
    parser.add_argument("--probe", metavar="ADDRESS", help=argparse.SUPPRESS)
    parser.add_argument("--probe-layer", default="", help=argparse.SUPPRESS)
    parser.add_argument("--probe-runs", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.probe:  # section 5's driver, in its own process
        print(json.dumps(probe(args.probe, args.probe_layer, args.probe_runs)), flush=True)
        return 0
    if not 2 <= args.first <= 255 - NODES:
        parser.error("--first: 2..252 (127.0.0.1 is rewritten by Ray to the network address)")
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even when started with &
    signal.signal(signal.SIGTERM, raise_interrupt)
    signal.signal(signal.SIGHUP, raise_interrupt)
    return run(Config.make(args.quick, args.node_death_only), args.keep, args.first)


if __name__ == "__main__":
    sys.exit(main())
