"""Started Ray actors kept waiting on each node, so that a placed run's replicas start at once.

Creating an actor makes Ray start a new worker process on its node: 1.5 to 1.8 s each on the
2-core machine of ``benchmarks/ray_bench.py``, nearly all of a Ray job's create -> RUNNING. Ray
gives an actor an already started worker only if that worker never ran anything (warming the
pool with tasks was tried: the actors still got new processes), so the service keeps its own:
on each node, a few ``ReplicaActor``s started ahead, pinned to the node and holding nothing (no
CPUs, no memory).

Gang scheduling is unchanged: a run's placement group still reserves every replica's CPUs and
memory, all or nothing. Once Ray has placed it, each bundle takes a waiting actor on the node
Ray put the bundle on (``take``), which then runs the replica inside what the bundle reserved,
and the pool starts another in the background (``fill``). A bundle with GPUs gets an actor of
its own inside the bundle: Ray hands GPU ids (``CUDA_VISIBLE_DEVICES``) only to an actor that
holds them. The pool is counted per live node (``missing``): a node that died took its actors
with it, and one that joins or rejoins (under a new node id) gets its own.

Waiting actors are named ``<service key>/warm/<id>`` and detached, like the replicas' own. A
service that stops kills its idle ones; one killed with -9 leaves them, and the next start
takes them back (``reclaim``), killing any left assigned to a run that ended meanwhile.

Ray is imported only inside the methods (the service imports this module for its option's
limits, with or without the ``ray`` extra).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import uuid
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Final

log = logging.getLogger(__name__)

DEFAULT_WARM_ACTORS: Final = 2
"""Per node: a BASIC job takes one, a 4-replica job on 3 nodes at most two from one node."""
MAX_WARM_ACTORS: Final = 16
CALL_TIMEOUT_SECONDS: Final = 60.0


@dataclass(frozen=True)
class WarmActor:
    name: str
    actor: Any
    node_id: str


class WarmActors:
    """This service's waiting actors, by node (thread-safe: Ray calls run in worker threads)."""

    def __init__(
        self, ray: Any, actor_class: Any, namespace: str, service_key: str, per_node: int
    ) -> None:
        self._ray = ray
        self._class = actor_class
        self._namespace = namespace
        self.prefix = f"{service_key}/warm/"
        self.per_node = per_node
        self._ready: dict[str, list[WarmActor]] = {}
        self.failed = 0
        """How many actors the last fill could not start (a node without tui-app, say)."""
        self._lock = threading.Lock()
        self._filling = threading.Lock()

    def ready_count(self, live: Collection[str] | None = None) -> int:
        """How many actors wait, on the nodes ``live`` names (None: every node still listed).

        A node that died takes its actors with it, but they stay listed until ``forget_gone``
        or the next ``fill``: counted, they made the pool look full, so a node that rejoined
        (under a new node id) never got its own and its next replica started cold."""
        with self._lock:
            if live is None:
                return sum(len(v) for v in self._ready.values())
            return sum(len(self._ready.get(n, ())) for n in set(live))

    def missing(self, live: Collection[str]) -> int:
        """How many actors the nodes ``live`` names lack to have ``per_node`` each: a fill is
        due when this is above 0. Counted per node, so one node's surplus (idle actors a killed
        service left, taken back by ``reclaim``) never hides another's shortfall."""
        if self.per_node <= 0:
            return 0
        with self._lock:
            return sum(max(0, self.per_node - len(self._ready.get(n, ()))) for n in set(live))

    def forget_gone(self, live: Collection[str]) -> int:
        """Drop the actors of nodes not in ``live`` (their node left the cluster, and they
        with it); how many were dropped."""
        with self._lock:
            gone = set(self._ready) - set(live)
            dropped = sum(len(self._ready.pop(n)) for n in gone)
        return dropped

    def take(self, node_id: str) -> WarmActor | None:
        """A waiting actor on ``node_id`` for a replica, or None (the caller starts one)."""
        with self._lock:
            waiting = self._ready.get(node_id)
            return waiting.pop() if waiting else None

    def fill(self, node_ids: Collection[str]) -> int:
        """Start actors until each node in ``node_ids`` (the live ones) has ``per_node``
        waiting; forget those of nodes that left. Blocks until they answer; how many joined.
        A fill already under way makes this one return 0 at once."""
        if self.per_node <= 0 or not self._filling.acquire(blocking=False):
            return 0
        try:
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            self.forget_gone(node_ids)  # their actors went with the node
            with self._lock:
                wanted = {n: self.per_node - len(self._ready.get(n, ())) for n in node_ids}
            started = []
            for node_id, count in wanted.items():
                for _ in range(max(0, count)):
                    name = f"{self.prefix}{uuid.uuid4().hex[:12]}"
                    actor = self._class.options(
                        name=name,
                        namespace=self._namespace,
                        lifetime="detached",
                        max_concurrency=8,
                        num_cpus=0,
                        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
                    ).remote(None, None)
                    started.append(WarmActor(name, actor, node_id))
            joined = 0
            self.failed = 0
            for warm in started:
                try:
                    self._ray.get(warm.actor.where.remote(), timeout=CALL_TIMEOUT_SECONDS)
                except Exception as exc:  # its node left, or Ray could not start it
                    log.warning("a warm actor on node %s did not start: %s", warm.node_id, exc)
                    self._kill(warm.actor)
                    self.failed += 1
                    continue
                # Waiting as soon as it answers, not once all have: a run placed meanwhile
                # takes it instead of starting an actor of its own (1.5 s or more).
                with self._lock:
                    self._ready.setdefault(warm.node_id, []).append(warm)
                joined += 1
            return joined
        finally:
            self._filling.release()

    def reclaim(self, live: Collection[tuple[str, str]]) -> int:
        """At start: take back this service's idle actors that a killed service left, and kill
        those still assigned to a run whose job is not ``live`` (project, job id). How many
        were killed."""
        from ray.util import list_named_actors

        killed = 0
        for entry in list_named_actors(all_namespaces=True):
            name = str(entry.get("name") or "")
            if entry.get("namespace") != self._namespace or not name.startswith(self.prefix):
                continue
            try:
                actor = self._ray.get_actor(name, namespace=self._namespace)
                seen = self._ray.get(actor.assignment.remote(), timeout=CALL_TIMEOUT_SECONDS)
            except Exception:  # gone meanwhile, or on a node that left
                continue
            run = seen.get("runKey")
            if run is None:
                with self._lock:
                    self._ready.setdefault(str(seen["nodeId"]), []).append(
                        WarmActor(name, actor, str(seen["nodeId"]))
                    )
                continue
            project, _, rest = str(run).partition("/")
            if (project, rest.split("/")[0]) in live:
                continue  # the runner adopts it by name
            with contextlib.suppress(Exception):
                self._ray.get(actor.kill_tree.remote(), timeout=CALL_TIMEOUT_SECONDS)
            self._kill(actor)
            killed += 1
        if killed:
            log.warning("killed %d warm actor(s) of ended jobs", killed)
        return killed

    def close(self) -> None:
        """Kill the idle ones: a stopped service leaves no process waiting on the nodes."""
        with self._lock:
            idle = [w for waiting in self._ready.values() for w in waiting]
            self._ready.clear()
        for warm in idle:
            self._kill(warm.actor)

    def _kill(self, actor: Any) -> None:
        with contextlib.suppress(Exception):
            self._ray.kill(actor)
