"""Replicas on a Ray cluster: one placement group per run, one detached actor per replica.

The service stays where it is (API, SQLite, logs, storage, the scheduler's order, recovery);
only where a replica's process runs changes. For each run (a job, or one trial of a tuning job):

1. ``place`` sizes one bundle per replica from its machine type (vCPU, memory, GPUs: the tier
   table ``model.ray_bundles`` reads) and asks Ray for a placement group of them, spread over the
   nodes when it can. Ray reserves all bundles or none (gang scheduling), so the job stays QUEUED,
   with the reason in words, until every replica fits. A replica no node could ever hold is
   refused when the job is created (``refuse``), naming the field.
2. It then starts one ``ray_replica.ReplicaActor`` per replica in its bundle (named, detached,
   holding the bundle's resources) and asks each for a port on its node's address: TF_CONFIG,
   CLUSTER_SPEC and torch's variables name the nodes' addresses.
3. ``start`` hands each actor the replica's spec; the actor runs the same supervisor on its node
   and ships the output back over HTTP with the replica's own credential.

A node that dies takes its actors with it: the replica's wait raises, and the job fails naming
the replica and the node. A restarted service finds the actors by name (they are detached) and
watches them again; ``release`` kills a run's actors and removes its placement group.

Every Ray call blocks, so each runs in a worker thread; the event loop never waits on Ray.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from tui_app.local.environments import packages
from tui_app.local.environments.containers import service_key
from tui_app.local.errors import invalid_field
from tui_app.local.execution import ray_node_env
from tui_app.local.execution.executor import (
    Endpoint,
    ExecutorError,
    Note,
    ReplicaProcess,
    RunKey,
)
from tui_app.local.execution.ray_bundles import (
    NodeResources,
    bundle_for,
    fits_nowhere,
    placement_reason,
)
from tui_app.local.execution.ray_replica import (
    ReplicaActor,
    folder_probe,
    pack_layer,
    rewrite_paths,
)
from tui_app.local.execution.ray_warm_actors import DEFAULT_WARM_ACTORS, WarmActors
from tui_app.local.execution.stack_dumps import DUMP_TIMEOUT_SECONDS, Dump, DumpFailed
from tui_app.local.loopback import is_loopback
from tui_app.model.jobs.cluster import Replica
from tui_app.model.jobs.job_images import job_images
from tui_app.model.jobs.tiers import Role
from tui_app.model.running.capacity import Capacity, Demand

log = logging.getLogger(__name__)

NAMESPACE = "tui-app"
READY_POLL_SECONDS = 0.5
CALL_TIMEOUT_SECONDS = 60.0
KILL_TIMEOUT_SECONDS = 15.0
NODES_REFRESH_SECONDS = 2.0
FILL_RETRY_SECONDS = 30.0
"""After a warm actor failed to start, how long before the pool tries again."""
UNLIMITED_SLOTS = 1_000_000
"""The service's scheduler keeps jobs in order but never holds one back: Ray decides."""


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ExecutorError(
            "--executor ray needs Ray: install the ray extra in the service's environment, "
            "from the checkout: .venv/bin/pip install '.[ray]' (README: Replicas on a Ray "
            "cluster)."
        ) from None
    return ray


def network_problem(addresses: Sequence[str], no_auth: bool, host: str) -> str | None:
    """Why the service must not use a cluster whose nodes are at ``addresses``, or None.

    Replicas on other machines reach the service's storage, log and metadata routes over the
    network. Their own credentials guard those, but a service without its token (``--no-auth``)
    would let anyone who reaches it submit jobs: code that runs on every node. Loopback nodes
    (one machine, as the tests run it) are as safe as the service itself. A service bound to
    loopback cannot be reached from other machines at all.
    """
    remote = sorted({a for a in addresses if a and not is_loopback(a)})
    if not remote:
        return None
    if no_auth:
        return (
            f"--executor ray with --no-auth is refused: Ray nodes at {', '.join(remote)} are "
            "not on loopback, and their replicas reach this service over the network. Run the "
            "service with its token (drop --no-auth)."
        )
    if is_loopback(host):
        return (
            f"Ray nodes at {', '.join(remote)} cannot reach a service bound to {host}: run it "
            "with --host set to an address those nodes reach (its token stays required)."
        )
    return None


def _last_line(exc: BaseException) -> str:
    """A Ray task error's cause: the last line of its traceback (``OSError: ...``)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[-1] if lines else type(exc).__name__


def lost_reason(node: Mapping[str, str], alive: Collection[str], error: str) -> str:
    """Why a replica's actor is gone, for the job's errorMessage (the runner writes ``The
    replica <task> was lost: <this>.``), from its node (``address``, ``id``), the ids of the
    nodes alive now and the name of the error its wait raised. docs/ray.md quotes these;
    tests/unit/test_ray_lost_message.py holds the quotes to what this says."""
    where = f"{node.get('address', '?')} (Ray node {node.get('id', '?')[:12]})"
    if node.get("id") not in alive:
        return f"its node {where} left the Ray cluster"
    if error == "ActorUnavailableError":
        # Raised as soon as the node's raylet stops answering, seconds before Ray's health
        # checks declare the node dead.
        return f"its node {where} stopped answering"
    return f"its Ray actor on {where} died ({error})"


class RayReplica:
    """One replica's actor as the runner watches it."""

    def __init__(
        self,
        ray: Any,
        actor: Any,
        name: str,
        node: dict[str, str],
        pid: int,
        gpus: tuple[str, ...] = (),
    ) -> None:
        self._ray = ray
        self.actor = actor
        self.name = name
        self._node = node
        self.pid = pid
        self.gpus = gpus
        """The GPU ids Ray gave the replica's actor on its node (``CUDA_VISIBLE_DEVICES``)."""
        self.returncode: int | None = None
        self.lost: str | None = None
        self.status: dict[str, Any] | None = None
        self._ended = asyncio.get_running_loop().create_future()
        fut = actor.wait.remote().future()
        fut.add_done_callback(self._on_done)

    @property
    def node(self) -> dict[str, str]:
        return self._node

    def _on_done(self, fut: Any) -> None:
        """In Ray's thread: how it ended (asking Ray which nodes live, never on the loop)."""
        try:
            status: dict[str, Any] | None = dict(fut.result())
            lost = None
        except Exception as exc:  # the actor died: its node left, or it was killed
            status, lost = None, self._why_lost(exc)
        self._ended.get_loop().call_soon_threadsafe(self._settle, status, lost)

    def _settle(self, status: dict[str, Any] | None, lost: str | None) -> None:
        self.status, self.lost = status, lost
        self.returncode = 0 if lost is None else -1
        if not self._ended.done():
            self._ended.set_result(self.returncode)

    def _why_lost(self, exc: BaseException) -> str:
        try:
            alive = {n["NodeID"] for n in self._ray.nodes() if n.get("Alive")}
        except Exception:
            alive = set()
        return lost_reason(self._node, alive, type(exc).__name__)

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            self.actor.stop.remote()

    async def wait(self) -> int:
        return int(await asyncio.shield(self._ended))

    def kill_tree(self) -> None:
        if self.returncode is None:
            self.actor.kill_tree.remote()

    def record(self) -> dict[str, Any]:
        return {
            "actor": self.name,
            "node": self._node.get("address"),
            "nodeId": self._node.get("id"),
        }


class _NodeEnvFailed(Exception):
    """A node could not build the job's runtime environment; the message says why."""


class RayPlacement:
    """A run's placement group, its actors and their ports."""

    def __init__(
        self,
        executor: RayExecutor,
        key: RunKey,
        actors: list[Any],
        names: list[str],
        nodes: list[dict[str, str]],
        endpoints: list[Endpoint],
        note: Note,
    ) -> None:
        self._executor = executor
        self._key = key
        self._actors = actors
        self._names = names
        self._nodes = nodes
        self._endpoints = endpoints
        self._note = note
        self._puts: dict[str, tuple[str, Any]] = {}
        self._put_lock = threading.Lock()
        self._ready: dict[int, _Ready] = {}

    def endpoint(self, index: int) -> Endpoint:
        return self._endpoints[index]

    def _put(self, folder: Path) -> tuple[str, Any]:
        """``folder`` as (digest, ObjectRef of its tarball) in Ray's store, put once per run."""
        with self._put_lock:
            found = self._puts.get(str(folder))
            if found is None:
                digest, data = pack_layer(folder)
                found = (digest, self._executor.ray.put(data))
                self._puts[str(folder)] = found
            return found

    def _node_env(self, actor: Any, where: str, layer: Path, say: Note) -> str:
        """The job's layer built on the node of ``actor`` (``ray_node_env``), its pip lines to
        the job's log as they come; the node's path of it."""
        manifest = ray_node_env.manifest_of(layer)
        inputs = layer / packages.LAYER_INPUTS
        if manifest is None or not inputs.is_dir():
            raise _NodeEnvFailed(
                f"the service's {layer} does not record how it was built (an install "
                "before nodes could build their own): remove that folder and submit the job "
                "again"
            )
        request = {
            "manifest": manifest,
            "layer": layer.name,
            "inputs": self._put(inputs),
            "pip": ray_node_env.pip_settings(),
        }
        say(
            f"Preparing the job's environment on node {where}, which does not see the "
            "service's: its runtime environment is built there once, then reused."
        )
        ray = self._executor.ray
        for ref in actor.build_env.options(num_returns="streaming").remote(request):
            item = ray.get(ref)
            if "line" in item:
                say(f"{where}: {item['line']}")
            elif "error" in item:
                raise _NodeEnvFailed(item["error"])
            elif "layer" in item:
                return str(item["layer"])
        raise _NodeEnvFailed("the node ended the build without an answer")

    def _ready_on_node(self, index: int, pythonpath: Path, say: Note) -> _Ready:
        """What the node of actor ``index`` runs the job's packages from: the service's folder
        where it sees it, else a copy shipped to it, or (a runtime environment, which cannot be
        copied) one it builds."""
        ray = self._executor.ray
        actor = self._actors[index]
        probe = folder_probe(pythonpath)
        if ray.get(actor.sees.remote(str(pythonpath), probe), timeout=CALL_TIMEOUT_SECONDS):
            return _Ready()
        if packages.is_environment(pythonpath):  # names its interpreter by absolute path
            where = self._nodes[index]["address"]
            return _Ready(built=self._node_env(actor, where, pythonpath, say))
        return _Ready(layer=(str(pythonpath), *self._put(pythonpath)))

    async def prepare(self, reps: Sequence[Replica], pythonpath: Path | None) -> None:
        """Before any replica starts, every node gets what runs the job's packages, all nodes
        at once and once per node: a replica that started while another node still built a
        runtime environment could have ended the job before that one began."""
        if pythonpath is not None:
            await self._prepare({i: r.task_name for i, r in enumerate(reps)}, pythonpath)

    async def _prepare(self, tasks: Mapping[int, str], pythonpath: Path) -> None:
        """``prepare`` for the replicas ``tasks`` names by index."""
        loop = asyncio.get_running_loop()

        def say(line: str) -> None:
            loop.call_soon_threadsafe(self._note, line)

        by_node: dict[str, list[int]] = {}
        for index in tasks:
            by_node.setdefault(self._nodes[index].get("id") or str(index), []).append(index)

        async def ready(indices: list[int]) -> None:
            where = self._nodes[indices[0]]["address"]
            names = ", ".join(tasks[i] for i in indices)
            try:
                got = await asyncio.to_thread(self._ready_on_node, indices[0], pythonpath, say)
            except _NodeEnvFailed as failed:
                raise ExecutorError(
                    f"{names} cannot start on node {where}: the job's runtime environment "
                    f"could not be built there: {failed}"
                ) from None
            except Exception as exc:
                raise ExecutorError(
                    f"{names} could not start on node {where}: {_last_line(exc)}"
                ) from None
            for index in indices:
                self._ready[index] = got

        await asyncio.gather(*(ready(indices) for indices in by_node.values()))

    async def start(
        self, index: int, replica: Replica, spec: dict[str, Any], pythonpath: Path | None
    ) -> ReplicaProcess:
        if pythonpath is not None and index not in self._ready:  # not prepared with the others
            await self._prepare({index: replica.task_name}, pythonpath)
        ray = self._executor.ray
        actor = self._actors[index]
        endpoint = spec["env"].get("STORAGE_EMULATOR_HOST", "")
        spec = dict(spec, service_python=sys.executable)
        ready = self._ready.get(index, _Ready())
        if ready.built is not None and pythonpath is not None:
            spec = rewrite_paths(spec, str(pythonpath), ready.built)

        def call() -> tuple[int, tuple[str, ...]]:
            ref = actor.start.remote(spec, spec["cwd"], endpoint, ready.layer)
            pid, gpus = ray.get(ref, timeout=CALL_TIMEOUT_SECONDS + 600)
            return int(pid), tuple(str(g) for g in gpus)

        try:
            pid, gpus = await asyncio.to_thread(call)
        except Exception as exc:
            node = self._nodes[index]
            raise ExecutorError(
                f"{replica.task_name} could not start on node {node['address']}: {_last_line(exc)}"
            ) from None
        return RayReplica(ray, actor, self._names[index], self._nodes[index], pid, gpus)


@dataclass(frozen=True)
class _Ready:
    """How a node runs the job's packages (``RayPlacement.prepare``): in place (neither set),
    from a shipped copy (``layer``: service path, digest, ObjectRef) or from the environment
    it built (``built``: its path there)."""

    layer: tuple[str, str, Any] | None = None
    built: str | None = None


class RayExecutor:
    """Replicas on a Ray cluster (see the module doc)."""

    name = "ray"
    ships_output = True
    """A node's actor ships each replica's output to the service (``ray_replica.OutputShipper``)."""

    def __init__(
        self,
        address: str | None,
        service_key: str,
        no_auth: bool,
        host: str,
        warm_per_node: int = DEFAULT_WARM_ACTORS,
    ) -> None:
        self.address = address
        self.service_key = service_key
        self.no_auth = no_auth
        self.host = host
        self.warm_per_node = warm_per_node
        self.ray: Any = None
        self._actor_class: Any = None
        self._warm: WarmActors | None = None
        self._filler: asyncio.Task[int] | None = None
        self._reclaimed = False
        self._next_fill = 0.0
        self._waiting: dict[RunKey, str] = {}
        self._runs: dict[RunKey, list[str]] = {}
        self._handles: dict[str, Any] = {}
        self._nodes: list[NodeResources] = []
        """The live nodes' sizes, refreshed every few seconds off the event loop."""
        self._live: frozenset[str] = frozenset()
        """The live nodes' Ray ids, refreshed with ``_nodes``."""
        self._seen: dict[str, str] = {}
        """Every node seen alive since the service joined: Ray id -> address (``lost``)."""
        self._refresher: asyncio.Task[None] | None = None

    # -- life ----------------------------------------------------------------------------------

    async def start(self) -> None:
        # On the main thread, once, before the service listens: Ray sets its signal handlers
        # only there, and a second or so of joining is part of starting up.
        self._connect()
        self._nodes = self._node_resources()
        self._refresher = asyncio.get_running_loop().create_task(self._refresh_nodes())

    async def _refresh_nodes(self) -> None:
        """Keep the nodes' sizes fresh in a thread: jobs.create checks against them on the
        event loop, which must not wait on Ray."""
        while True:
            await asyncio.sleep(NODES_REFRESH_SECONDS)
            with contextlib.suppress(Exception):
                self._nodes = await asyncio.to_thread(self._node_resources)
            if self._warm is not None:
                self._warm.forget_gone(self._live)  # a dead node's actors went with it
            self._keep_warm()  # a node that joined (or rejoined) gets its warm actors too

    def _keep_warm(self) -> None:
        """Top the warm actors up in a thread, unless a fill is under way or none is due."""
        warm = self._warm
        if warm is None or warm.per_node <= 0 or (self._filler and not self._filler.done()):
            return
        if not self._reclaimed:
            return  # the idle ones a killed service left are taken back first
        if not warm.missing(self._live):
            return  # counted per live node: a dead node's actors fill no live node's share
        if time.monotonic() < self._next_fill:
            return  # the last fill failed somewhere: not a worker start every 2 s meanwhile

        def fill() -> int:
            joined = warm.fill([n["NodeID"] for n in self._alive()])
            if warm.failed:
                self._next_fill = time.monotonic() + FILL_RETRY_SECONDS
            return joined

        self._filler = asyncio.get_running_loop().create_task(asyncio.to_thread(fill))

    def _connect(self) -> None:
        ray = _ray()
        if not ray.is_initialized():
            try:
                ray.init(
                    address=self.address or "auto",
                    namespace=NAMESPACE,
                    log_to_driver=False,
                    logging_level=logging.WARNING,
                )
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ExecutorError(
                    f"Cannot join the Ray cluster at {self.address or 'auto'}: {exc}. Start one "
                    "with `ray start --head` (README: Replicas on a Ray cluster) or pass "
                    "--ray-address HOST:PORT."
                ) from None
        self.ray = ray
        self.check_network()
        self._actor_class = ray.remote(ReplicaActor)
        self._warm = WarmActors(
            ray, self._actor_class, NAMESPACE, self.service_key, self.warm_per_node
        )

    def check_network(self) -> None:
        """Refuse a cluster the service cannot guard (``network_problem``)."""
        nodes = self._alive()
        self._note_alive(nodes)
        problem = network_problem([n["NodeManagerAddress"] for n in nodes], self.no_auth, self.host)
        if problem is not None:
            raise ExecutorError(problem)

    async def close(self) -> None:
        """Leave the cluster; detached actors and groups stay for the next start to adopt."""
        if self._refresher is not None:
            self._refresher.cancel()
        if self._filler is not None:
            with contextlib.suppress(Exception):
                await self._filler
        if self._warm is not None:
            await asyncio.to_thread(self._warm.close)
        if self.ray is not None:
            await asyncio.to_thread(self.ray.shutdown)

    def describe(self) -> str:
        """What ``service status`` (through ``/healthz``) and the service's start say: the live
        nodes as last refreshed (every ``NODES_REFRESH_SECONDS``), and those that were seen and
        are gone. Never asks Ray: it runs on the event loop."""
        where = self.address or "auto"
        live = len(self._live)
        nodes = f"{live} node{'' if live == 1 else 's'}"
        count = self.warm_per_node
        warm = f", {count} warm actor{'' if count == 1 else 's'} each" if count else ""
        lost = self.lost()
        gone = f"; {len(lost)} lost: {', '.join(lost)}" if lost else ""
        return f"replicas run on the Ray cluster at {where} ({nodes}{warm}{gone})"

    def lost(self) -> list[str]:
        """The addresses of nodes seen alive since the service joined that are gone now, unless
        a live node has that address again (a node that rejoined gets a new Ray id)."""
        live = self._live
        here = {address for node, address in self._seen.items() if node in live}
        return sorted({a for n, a in self._seen.items() if n not in live and a not in here})

    # -- sizes ---------------------------------------------------------------------------------

    def _alive(self) -> list[dict[str, Any]]:
        return [n for n in self.ray.nodes() if n.get("Alive")]

    def _note_alive(self, alive: Sequence[Mapping[str, Any]]) -> None:
        """Record which nodes live now (in a worker thread: each attribute is replaced whole,
        never changed in place, so the event loop reads one consistent value)."""
        now = {str(n["NodeID"]): str(n.get("NodeManagerAddress") or "?") for n in alive}
        self._seen = {**self._seen, **now}
        self._live = frozenset(now)

    def _node_resources(self) -> list[NodeResources]:
        from ray._private.state import available_resources_per_node

        alive = self._alive()
        self._note_alive(alive)
        free = available_resources_per_node()  # type: ignore[no-untyped-call]
        return [
            NodeResources(
                n["NodeManagerAddress"],
                dict(n.get("Resources") or {}),
                dict(free.get(n["NodeID"]) or {}),
            )
            for n in alive
        ]

    def refuse(self, training_input: Mapping[str, Any]) -> None:
        if job_images(training_input):
            raise invalid_field(
                "trainingInput.masterConfig.imageUri",
                "Custom containers run on the local executor only: this service places "
                "replicas on a Ray cluster (--executor ray). Submit the job as a Python package, "
                "or to a service run with --executor local.",
            )
        if self.ray is None:
            return
        problem = fits_nowhere(training_input, self._nodes)
        if problem is not None:
            raise invalid_field(*problem)

    def waiting(self, key: RunKey) -> str | None:
        return self._waiting.get(key)

    # -- a run ---------------------------------------------------------------------------------

    def _names(self, key: RunKey, reps: Sequence[Replica]) -> tuple[str, list[str]]:
        project, job, trial = key
        base = f"{self.service_key}/{project}/{job}/{trial or '-'}"
        return base, [f"{base}/{r.task_name}" for r in reps]

    async def place(
        self, key: RunKey, training_input: Mapping[str, Any], reps: Sequence[Replica], note: Note
    ) -> RayPlacement:
        from ray.util.placement_group import placement_group, remove_placement_group

        ray = self.ray
        bundles = [bundle_for(training_input, r) for r in reps]
        group_name, names = self._names(key, reps)
        self._runs[key] = names
        # One a service killed mid-placement left under this name would compete for the nodes.
        await asyncio.to_thread(self._remove_group, group_name)
        pg = await asyncio.to_thread(
            placement_group, bundles, strategy="SPREAD", name=group_name, lifetime="detached"
        )
        ready = pg.ready()
        said = False
        try:
            while True:
                done, _ = await asyncio.to_thread(ray.wait, [ready], timeout=READY_POLL_SECONDS)
                if done:
                    break
                reason = placement_reason(bundles, reps, self._node_resources())
                self._waiting[key] = reason
                if not said:
                    note(reason)
                    said = True
            self._waiting.pop(key, None)
            placed = await asyncio.to_thread(
                self._start_actors, key, pg, bundles, reps, names, note
            )
            self._keep_warm()
            return placed
        except BaseException:
            self._waiting.pop(key, None)
            await asyncio.to_thread(self._kill, self._runs.get(key, names))
            with contextlib.suppress(Exception):
                await asyncio.to_thread(remove_placement_group, pg)
            raise

    def _start_actors(
        self,
        key: RunKey,
        pg: Any,
        bundles: list[dict[str, float]],
        reps: Sequence[Replica],
        names: list[str],
        note: Note,
    ) -> RayPlacement:
        """An actor per bundle: a warm one on the bundle's node where there is one
        (``ray_warm_actors``), else one started inside the bundle (about 1.5 s)."""
        from ray.util.placement_group import placement_group_table

        ray = self.ray
        run_key = "/".join(str(k) for k in key if k is not None)
        node_of = placement_group_table(pg).get("bundles_to_node_id") or {}
        chosen: list[str] = []
        self._runs[key] = chosen
        actors = []
        for index, (rep, bundle, name) in enumerate(zip(reps, bundles, names, strict=True)):
            actor = None
            if not bundle.get("GPU") and self._warm is not None:
                actor, name = self._assign_warm(str(node_of.get(index, "")), run_key, rep, name)
            if actor is None:
                actor = self._fresh_actor(pg, index, bundle, run_key, rep, name)
            chosen.append(name)
            actors.append(actor)
            self._handles[name] = actor
        wheres = ray.get([a.where.remote() for a in actors], timeout=CALL_TIMEOUT_SECONDS)
        wanted = [0 if r.role is Role.EVALUATOR else 1 for r in reps]
        ports = ray.get(
            [a.reserve_ports.remote(n) for a, n in zip(actors, wanted, strict=True)],
            timeout=CALL_TIMEOUT_SECONDS,
        )
        nodes = [{"address": w["address"], "id": w["nodeId"]} for w in wheres]
        endpoints = [
            Endpoint(w["address"], p[0] if p else 0) for w, p in zip(wheres, ports, strict=True)
        ]
        return RayPlacement(self, key, actors, list(chosen), nodes, endpoints, note)

    def _assign_warm(self, node_id: str, run_key: str, rep: Replica, name: str) -> tuple[Any, str]:
        """(a warm actor on ``node_id`` now serving ``rep``, its name), or (None, ``name``)."""
        assert self._warm is not None
        while (warm := self._warm.take(node_id)) is not None:
            try:
                self.ray.get(
                    warm.actor.assign.remote(run_key, rep.task_name), timeout=CALL_TIMEOUT_SECONDS
                )
            except Exception:  # it died waiting (its worker was killed): try the next one
                with contextlib.suppress(Exception):
                    self.ray.kill(warm.actor)
                continue
            return warm.actor, warm.name
        return None, name

    def _fresh_actor(
        self, pg: Any, index: int, bundle: dict[str, float], run_key: str, rep: Replica, name: str
    ) -> Any:
        """An actor started inside bundle ``index``, holding its resources (GPUs included)."""
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        with contextlib.suppress(ValueError):  # one a restart cut short: start afresh
            self.ray.kill(self.ray.get_actor(name, namespace=NAMESPACE))
        return self._actor_class.options(
            name=name,
            namespace=NAMESPACE,
            lifetime="detached",
            max_concurrency=8,
            num_cpus=bundle.get("CPU", 0),
            num_gpus=bundle.get("GPU", 0),
            memory=bundle.get("memory", 0),
            scheduling_strategy=PlacementGroupSchedulingStrategy(
                placement_group=pg, placement_group_bundle_index=index
            ),
        ).remote(run_key, rep.task_name)

    def adopt(self, key: RunKey, record: Mapping[str, Any]) -> ReplicaProcess:
        name = str(record.get("actor") or "")
        node = {"address": str(record.get("node") or "?"), "id": str(record.get("nodeId") or "")}
        self._runs.setdefault(key, [])
        if name not in self._runs[key]:
            self._runs[key].append(name)
        try:
            actor = self.ray.get_actor(name, namespace=NAMESPACE)
        except ValueError:
            return _Gone(name, node)
        self._handles[name] = actor
        return RayReplica(self.ray, actor, name, node, 0)

    async def release(self, key: RunKey) -> None:
        names = self._runs.pop(key, [])
        self._waiting.pop(key, None)
        if self.ray is None:
            return
        await asyncio.to_thread(self._kill, names)
        group_name = f"{self.service_key}/{key[0]}/{key[1]}/{key[2] or '-'}"
        await asyncio.to_thread(self._remove_group, group_name)

    def _kill(self, names: Sequence[str]) -> None:
        """Kill each actor's replica tree first (waiting for it), then the actor: Ray kills a
        dying worker's children, which would cut the supervisor off from a replica still
        running in its own session."""
        actors = []
        for name in names:
            actor = self._handles.pop(name, None)
            if actor is None:
                try:
                    actor = self.ray.get_actor(name, namespace=NAMESPACE)
                except ValueError:
                    continue
            actors.append(actor)
        with contextlib.suppress(Exception):
            self.ray.get([a.kill_tree.remote() for a in actors], timeout=KILL_TIMEOUT_SECONDS)
        for actor in actors:
            with contextlib.suppress(Exception):
                self.ray.kill(actor)

    def _remove_group(self, name: str) -> None:
        from ray.util.placement_group import get_placement_group, remove_placement_group

        with contextlib.suppress(Exception):
            remove_placement_group(get_placement_group(name))

    async def reclaim(self, live: set[tuple[str, str]]) -> int:
        if self.ray is None:
            return 0
        reclaimed = await asyncio.to_thread(self._reclaim, live)
        if self._warm is not None:
            reclaimed += await asyncio.to_thread(self._warm.reclaim, live)
        self._reclaimed = True
        self._keep_warm()
        return reclaimed

    def _reclaim(self, live: set[tuple[str, str]]) -> int:
        """Remove this service's placement groups (and so their actors) of jobs not live."""
        from ray.util.placement_group import placement_group_table

        prefix = f"{self.service_key}/"
        stale = []
        for entry in placement_group_table().values():
            name = str(entry.get("name") or "")
            if entry.get("state") == "REMOVED" or not name.startswith(prefix):
                continue
            parts = name.split("/")
            if len(parts) == 4 and (parts[1], parts[2]) not in live:
                stale.append(name)
        for name in stale:
            self._remove_group(name)
        if stale:
            log.warning("reclaimed %d placement group(s) of ended jobs", len(stale))
        return len(stale)

    async def sweep(self, workdirs: Sequence[Path]) -> int:
        return 0  # each node's supervisor (a subreaper) and kill_tree leave nothing behind

    def shortfall(self, demand: Demand, fitted: Demand, capacity: Capacity) -> list[str]:
        return []  # a run starts only with all it asked for

    def admission(self, machine: Capacity) -> Capacity:
        return Capacity(slots=UNLIMITED_SLOTS)

    def usage(self, records: Sequence[Mapping[str, Any]]) -> dict[int, tuple[float, int]]:
        asks: dict[int, Any] = {}
        for i, rec in enumerate(records):
            name = rec.get("actor")
            actor = self._handles.get(name) if isinstance(name, str) else None
            if actor is not None:
                asks[i] = actor.usage.remote()
        out: dict[int, tuple[float, int]] = {}
        for i, ref in asks.items():
            with contextlib.suppress(Exception):
                got = self.ray.get(ref, timeout=5.0)
                if got is not None:
                    out[i] = (float(got[0]), int(got[1]))
        return out

    def stacks(self, record: Mapping[str, Any], with_locals: bool) -> Dump:
        name = record.get("actor")
        actor = self._handles.get(name) if isinstance(name, str) else None
        if actor is None:
            raise DumpFailed("it ended meanwhile (its actor is gone)")
        node = record.get("node") or "its node"
        try:
            got = self.ray.get(actor.stacks.remote(with_locals), timeout=DUMP_TIMEOUT_SECONDS + 5)
        except Exception as exc:  # the node died, the actor is gone, the call timed out
            raise DumpFailed(f"its node {node} did not answer: {type(exc).__name__}") from None
        if isinstance(got, str):
            raise DumpFailed(got)
        pid, threads = got
        return Dump(int(pid), list(threads))


class RayServiceOptions(Protocol):
    """What ``ray_executor`` reads of the service's options (``service_cli.ServiceOptions``)."""

    @property
    def ray_address(self) -> str | None: ...

    @property
    def no_auth(self) -> bool: ...

    @property
    def host(self) -> str: ...

    @property
    def ray_warm_actors(self) -> int: ...


def ray_executor(state_root: Path, options: RayServiceOptions) -> RayExecutor:
    """The ``executor.ExecutorFactory`` ``config/executors.py`` registers for ``ray``."""
    return RayExecutor(
        options.ray_address,
        service_key(state_root),
        options.no_auth,
        options.host,
        warm_per_node=options.ray_warm_actors,
    )


class _Gone:
    """An adopted replica whose actor no longer exists (its node died while the service was
    down, or it was killed): ended, lost."""

    def __init__(self, name: str, node: dict[str, str]) -> None:
        self.name = name
        self.node = node
        self.pid = 0
        self.returncode = -1
        self.lost = f"its Ray actor on {node.get('address')} was gone when the service restarted"
        self.gpus: tuple[str, ...] = ()

    def send_signal(self, sig: int) -> None:
        raise ProcessLookupError(self.name)

    async def wait(self) -> int:
        return -1

    def kill_tree(self) -> None:
        return None

    def record(self) -> dict[str, Any]:
        return {"actor": self.name, "node": self.node.get("address"), "nodeId": self.node.get("id")}
