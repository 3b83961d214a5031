"""The Ray executor's view of its nodes without a cluster: the warm-actor pool counted per
live node, and the summary ``tui-app service status`` shows.

After a node died its warm actors still counted as waiting, so the pool looked full and a node
that rejoined (a new Ray id) got none; and the summary kept the node count of the start ("3
nodes") for good. tests/service/test_ray_executor.py kills and restarts a real node.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from tui_app.local.execution.ray_executor import RayExecutor
from tui_app.local.execution.ray_warm_actors import WarmActors


class _Call:
    """``actor.method`` whose ``.remote()`` hands back its answer (the fake ``ray.get`` passes
    it through)."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def remote(self, *_: Any) -> Any:
        return self.answer


class _ActorClass:
    """``ray.remote(ReplicaActor)``: each actor answers ``where`` with the node it was pinned
    to."""

    def options(self, **kw: Any) -> Any:
        node = kw["scheduling_strategy"].node_id
        actor = SimpleNamespace(where=_Call({"nodeId": node}))
        return SimpleNamespace(remote=lambda *_: actor)


class _Ray:
    def get(self, ref: Any, timeout: float | None = None) -> Any:
        return ref

    def kill(self, actor: Any) -> None:
        pass


A, B, C, D = (letter * 56 for letter in "abcd")
"""Ray node ids (56 hex digits: Ray checks them)."""


def pool(per_node: int = 2) -> WarmActors:
    pytest.importorskip("ray")  # fill builds Ray's scheduling strategy
    return WarmActors(_Ray(), _ActorClass(), "tui-app", "svc", per_node)


def test_a_dead_nodes_actors_do_not_count_and_a_rejoined_node_gets_its_own() -> None:
    warm = pool()
    assert warm.fill([A, B, C]) == 6
    assert warm.missing([A, B, C]) == 0
    # C died and rejoined as D: its two actors went with it.
    assert warm.ready_count([A, B, D]) == 4
    assert warm.missing([A, B, D]) == 2
    assert warm.forget_gone([A, B, D]) == 2
    assert warm.ready_count() == 4
    assert warm.take(C) is None
    assert warm.fill([A, B, D]) == 2
    assert warm.take(D) is not None


def test_one_nodes_surplus_does_not_hide_anothers_shortfall() -> None:
    warm = pool(per_node=1)
    warm.fill([A])
    warm.per_node = 2
    warm.fill([A])  # A has two now
    warm.per_node = 1
    assert warm.ready_count([A, B]) == 2  # as many as the two nodes' share...
    assert warm.missing([A, B]) == 1  # ...but B has none


def nodes(*alive: tuple[str, str]) -> list[dict[str, Any]]:
    return [{"NodeID": i, "NodeManagerAddress": a, "Alive": True} for i, a in alive]


def executor(listed: list[dict[str, Any]], warm: int = 2) -> RayExecutor:
    """An executor whose Ray lists ``listed`` (the dead with ``Alive`` False, as Ray does)."""
    ex = RayExecutor("127.0.0.2:6390", "svc", no_auth=False, host="127.0.0.1", warm_per_node=warm)
    ex.ray = SimpleNamespace(nodes=lambda: listed)
    return ex


def test_the_status_counts_live_nodes_and_names_the_lost_ones() -> None:
    listed = nodes(("n2", "127.0.0.2"), ("n3", "127.0.0.3"), ("n4", "127.0.0.4"))
    ex = executor(listed)
    ex.check_network()
    at = "replicas run on the Ray cluster at 127.0.0.2:6390"
    assert ex.describe() == f"{at} (3 nodes, 2 warm actors each)"
    listed[1]["Alive"] = False  # 127.0.0.3 died
    ex.check_network()
    assert ex.lost() == ["127.0.0.3"]
    assert ex.describe() == f"{at} (2 nodes, 2 warm actors each; 1 lost: 127.0.0.3)"
    listed.extend(nodes(("n3b", "127.0.0.3")))  # it rejoins, under a new id
    ex.check_network()
    assert ex.lost() == []
    assert ex.describe() == f"{at} (3 nodes, 2 warm actors each)"


def test_one_node_and_one_warm_actor_are_said_in_the_singular() -> None:
    ex = executor(nodes(("n2", "127.0.0.2")), warm=1)
    ex.check_network()
    assert ex.describe().endswith("(1 node, 1 warm actor each)")
    ex = executor(nodes(("n2", "127.0.0.2")), warm=0)
    ex.check_network()
    assert ex.describe().endswith("(1 node)")
