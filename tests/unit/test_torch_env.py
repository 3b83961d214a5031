"""torch.distributed's variables beside TF_CONFIG: one master and the workers are the nodes."""

from __future__ import annotations

import json

from tui_app.local.execution.cluster_env import cluster_addresses, replica_env, torch_env
from tui_app.local.execution.executor import Endpoint
from tui_app.model.jobs.cluster import replicas

CLUSTER_INPUT = {
    "scaleTier": "CUSTOM",
    "masterType": "standard",
    "workerType": "standard",
    "workerCount": "3",
    "parameterServerType": "standard",
    "parameterServerCount": "1",
    "evaluatorType": "standard",
    "evaluatorCount": "1",
}


def at(*ports: int, host: str = "127.0.0.1") -> list[Endpoint]:
    return [Endpoint(host, p) for p in ports]


def test_master_is_rank_zero_and_workers_follow_in_order() -> None:
    reps = replicas(CLUSTER_INPUT)
    cluster = cluster_addresses(reps, at(2001, 2002, 2003, 2004, 2005, 0))
    by_task = {r.task_name: replica_env("j", CLUSTER_INPUT, r, cluster) for r in reps}
    for task, rank in (
        ("master-replica-0", "0"),
        ("worker-replica-0", "1"),
        ("worker-replica-1", "2"),
        ("worker-replica-2", "3"),
    ):
        env = by_task[task]
        assert (env["MASTER_ADDR"], env["MASTER_PORT"]) == ("127.0.0.1", "2001")
        assert (env["WORLD_SIZE"], env["RANK"]) == ("4", rank)
    # The address is TF_CONFIG's master (chief) address, the one place the master listens.
    tf = json.loads(by_task["worker-replica-2"]["TF_CONFIG"])
    [master] = tf["cluster"].get("master") or tf["cluster"]["chief"]
    assert master == "127.0.0.1:2001"
    for task in ("ps-replica-0", "evaluator-replica-0"):
        assert not {"MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK"} & set(by_task[task])


def test_a_single_replica_is_a_world_of_one() -> None:
    [master] = replicas({"scaleTier": "BASIC"})
    cluster = cluster_addresses([master], at(3001))
    assert torch_env(master, cluster) == {
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": "3001",
        "WORLD_SIZE": "1",
        "RANK": "0",
    }


def test_runtime_two_one_and_later_still_use_the_masters_address() -> None:
    ti = {**CLUSTER_INPUT, "runtimeVersion": "2.11"}
    reps = replicas(ti)
    cluster = cluster_addresses(reps, at(4001, 4002, 4003, 4004, 4005, 0))
    env = replica_env("j", ti, reps[1], cluster)
    assert json.loads(env["TF_CONFIG"])["cluster"]["chief"] == ["127.0.0.1:4001"]
    assert (env["MASTER_PORT"], env["RANK"]) == ("4001", "1")


def test_replicas_on_other_nodes_are_reached_at_their_nodes_addresses() -> None:
    """On a cluster each replica listens on its own node: TF_CONFIG and torch name that node."""
    reps = replicas(CLUSTER_INPUT)
    hosts = ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.2", "127.0.0.3", "127.0.0.4"]
    cluster = cluster_addresses(reps, [Endpoint(h, 5000 + i) for i, h in enumerate(hosts)])
    assert cluster["master"] == ["127.0.0.2:5000"]
    assert cluster["worker"] == ["127.0.0.3:5001", "127.0.0.4:5002", "127.0.0.2:5003"]
    env = replica_env("j", CLUSTER_INPUT, reps[2], cluster)
    assert (env["MASTER_ADDR"], env["MASTER_PORT"]) == ("127.0.0.2", "5000")
    assert "evaluator" not in json.loads(env["TF_CONFIG"])["cluster"]
