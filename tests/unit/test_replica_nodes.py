"""Where each replica runs (issue 28, item 6): reading ``node`` from ``:metrics``, the history
that keeps it, and the detail's "Replicas" section (the TUI's and ``jobs describe``'s)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from tests.support.recorded_metrics import NODE_IDS, RAY_JOB, ray_answer, tuning_answer
from tui_app.api.metrics_client import UsageHistory, parse_metrics
from tui_app.model.views.describe import render_text, summarize
from tui_app.model.views.replica_nodes import (
    PlacedReplica,
    ReplicaNode,
    nodes_by_task,
    parse_node,
    parse_placed,
    placement_rows,
)

NOW = datetime(2026, 11, 22, 9, 30, tzinfo=UTC)
ID = "2ae69e1b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f80912a3b"


def test_a_node_reads_its_address_and_id() -> None:
    node = parse_node({"address": "127.0.0.3", "id": ID})
    assert node == ReplicaNode("127.0.0.3", ID)
    assert node.short_id == "2ae69e1b"
    assert node.label == "127.0.0.3 (node 2ae69e1b)"
    assert node.brief == "127.0.0.3"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, None),  # a replica on the service's own machine
        ("127.0.0.3", None),  # not an object
        (["127.0.0.3", ID], None),
        (7, None),
        ({}, None),
        ({"address": 3, "id": ["x"]}, None),  # neither part readable
        ({"address": "", "id": ""}, None),  # the service writes "" for an id it did not learn
        ({"address": 127, "id": ID}, ReplicaNode(None, ID)),  # a non-string address is dropped
        ({"address": " 10.0.0.3 ", "id": None}, ReplicaNode("10.0.0.3", None)),
        ({"address": "10.0.0.3", "id": ""}, ReplicaNode("10.0.0.3", None)),
    ],
)
def test_a_malformed_node_is_left_out_never_raised(raw: object, expected: object) -> None:
    assert parse_node(raw) == expected


def test_labels_with_one_part_missing() -> None:
    assert ReplicaNode("10.0.0.3").label == "10.0.0.3"
    assert ReplicaNode(None, ID).label == "node 2ae69e1b"
    assert ReplicaNode(None, ID).brief == "node 2ae69e1b"
    assert ReplicaNode().label == ""


def test_an_entry_is_placed_only_with_a_task_and_a_node() -> None:
    node = {"address": "127.0.0.4", "id": ID}
    assert parse_placed({"taskName": "worker-replica-1", "node": node}) == PlacedReplica(
        "worker-replica-1", ReplicaNode("127.0.0.4", ID)
    )
    assert parse_placed({"taskName": "master-replica-0", "trialId": "3", "node": node}) == (
        PlacedReplica("master-replica-0", ReplicaNode("127.0.0.4", ID), "3")
    )
    assert parse_placed({"taskName": "master-replica-0"}) is None
    assert parse_placed({"taskName": 5, "node": node}) is None
    assert parse_placed("junk") is None


def test_metrics_replicas_carry_their_node() -> None:
    metrics = parse_metrics(ray_answer())
    nodes = {r.task_name: r.node for r in metrics.replicas}
    assert nodes == {
        "master-replica-0": ReplicaNode("127.0.0.2", NODE_IDS["127.0.0.2"]),
        "worker-replica-0": ReplicaNode("127.0.0.3", NODE_IDS["127.0.0.3"]),
        "worker-replica-1": ReplicaNode("127.0.0.4", NODE_IDS["127.0.0.4"]),
        "ps-replica-0": ReplicaNode("127.0.0.3", NODE_IDS["127.0.0.3"]),
    }
    assert all(len(r.samples) == 20 for r in metrics.replicas)  # the samples are read as before
    assert [p.task_name for p in metrics.placement()] == list(nodes)


def test_a_local_replica_has_no_node_and_nothing_is_placed() -> None:
    metrics = parse_metrics(ray_answer({"master-replica-0": ""}))
    [rep] = metrics.replicas
    assert rep.node is None and metrics.placement() == [] and metrics.trials == []


def test_a_malformed_node_keeps_its_replica_and_samples() -> None:
    body = ray_answer({"master-replica-0": "127.0.0.2", "worker-replica-0": "127.0.0.3"})
    body["replicas"][0]["node"] = "127.0.0.2"
    body["replicas"][1]["node"] = {"address": ["127.0.0.3"], "id": 42}
    metrics = parse_metrics(body)
    assert [(r.task_name, r.node, len(r.samples)) for r in metrics.replicas] == [
        ("master-replica-0", None, 20),
        ("worker-replica-0", None, 20),
    ]


def test_trials_replicas_are_kept_apart_from_the_charts() -> None:
    """Every trial runs a master-replica-0: as chart rows they would collide (and show "no
    samples yet"); they are placements only."""
    body = tuning_answer()
    body["replicas"].append({"taskName": "master-replica-0", "trialId": 4, "node": {}})
    metrics = parse_metrics(body)
    assert metrics.replicas == []
    assert [(p.trial_id, p.node.address) for p in metrics.placement()] == [
        ("1", "127.0.0.2"),
        ("2", "127.0.0.4"),
        ("3", "127.0.0.3"),
    ]


def test_history_keeps_nodes_and_notices_a_placement() -> None:
    history = UsageHistory()
    local = ray_answer({"master-replica-0": "", "worker-replica-0": ""})
    assert history.add(parse_metrics(local), full=True)
    assert history.placement() == []
    since = history.since
    placed = ray_answer({"master-replica-0": "127.0.0.2", "worker-replica-0": "127.0.0.3"})
    for rep in placed["replicas"]:
        rep["samples"] = [s for s in rep["samples"] if s["time"] > since]
    # No new sample, only the nodes: still news.
    assert history.add(parse_metrics(placed), full=False)
    assert [(r.task_name, r.node and r.node.address) for r in history.replicas()] == [
        ("master-replica-0", "127.0.0.2"),
        ("worker-replica-0", "127.0.0.3"),
    ]
    assert not history.add(parse_metrics(placed), full=False)
    assert history.add(parse_metrics(tuning_answer()), full=False)  # trials placed
    assert [p.trial_id for p in history.placement()] == [None, None, "1", "2", "3"]
    # A copy: changing what was handed out changes nothing inside.
    history.replicas()[0].samples.clear()
    assert len(history.replicas()[0].samples) == 20


def test_placement_rows_name_the_jobs_replicas_then_each_trials() -> None:
    node = ReplicaNode("127.0.0.3", ID)
    placed = [
        PlacedReplica("master-replica-0", node, "2"),
        PlacedReplica("worker-replica-0", node),
        PlacedReplica("master-replica-0", ReplicaNode("127.0.0.4"), "10"),
    ]
    assert placement_rows(placed) == [
        ("worker-replica-0", "127.0.0.3 (node 2ae69e1b)"),
        ("trial 2 · master-replica-0", "127.0.0.3 (node 2ae69e1b)"),
        ("trial 10 · master-replica-0", "127.0.0.4"),
    ]
    assert placement_rows([]) == []
    assert nodes_by_task(placed) == {"worker-replica-0": node}
    assert nodes_by_task(placed, "10") == {"master-replica-0": ReplicaNode("127.0.0.4")}


def _titles(**kw: Any) -> list[str]:
    return [s.title for s in summarize(RAY_JOB, NOW, **kw)]


def test_the_summary_has_a_replicas_section_only_with_nodes() -> None:
    without = _titles()
    assert "Replicas" not in without
    placement = parse_metrics(ray_answer()).placement()
    titles = _titles(placement=placement)
    # Next to the cluster it places; nothing else moves.
    assert titles == ["Job Overview", "Training Input", "Replicas", "Training Output"]
    assert [t for t in titles if t != "Replicas"] == without
    text = render_text(summarize(RAY_JOB, NOW, placement=placement))
    block = text.split("\n\n")[2] + "\n"
    assert block == (
        "Replicas\n"
        "  master-replica-0: 127.0.0.2 (node 2ae69e1b)\n"
        "  worker-replica-0: 127.0.0.3 (node 9f1c03d2)\n"
        "  worker-replica-1: 127.0.0.4 (node c0ffee01)\n"
        "  ps-replica-0:     127.0.0.3 (node 9f1c03d2)\n"
    )
