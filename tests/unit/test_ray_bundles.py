"""A replica's Ray bundle, why a job waits or is refused, and when a cluster is unsafe."""

from __future__ import annotations

import pytest

from tui_app.local.execution.ray_bundles import (
    GIB,
    NodeResources,
    bundle_for,
    fits_nowhere,
    placement_reason,
)
from tui_app.local.execution.ray_executor import network_problem
from tui_app.model.jobs.cluster import replicas

CUSTOM = {
    "scaleTier": "CUSTOM",
    "masterType": "n1-highmem-8",
    "workerType": "standard",
    "workerCount": "2",
    "workerConfig": {"acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": "2"}},
}


def node(
    address: str, cpus: float, mem_gib: float, free_cpus: float | None = None
) -> NodeResources:
    total = {"CPU": cpus, "memory": mem_gib * GIB}
    free = dict(total, CPU=cpus if free_cpus is None else free_cpus)
    return NodeResources(address, total, free)


def test_each_replica_is_sized_from_its_machine_type_and_accelerators() -> None:
    master, worker, _ = replicas(CUSTOM)
    assert bundle_for(CUSTOM, master) == {"CPU": 8.0, "memory": float(int(52 * GIB))}
    assert bundle_for(CUSTOM, worker) == {"CPU": 4.0, "memory": float(int(15 * GIB)), "GPU": 2.0}


def test_scale_tiers_go_through_the_same_table() -> None:
    [master] = replicas({"scaleTier": "BASIC"})
    assert bundle_for({"scaleTier": "BASIC"}, master)["CPU"] == 4.0


def test_a_replica_no_node_can_hold_is_refused_naming_its_field() -> None:
    nodes = [node("127.0.0.2", 8, 32), node("127.0.0.3", 8, 32)]
    field, message = fits_nowhere(CUSTOM, nodes) or ("", "")
    assert field == "trainingInput.masterType"
    assert "master-replica-0 (n1-highmem-8) needs 8 vCPU, 52 GB" in message
    assert "127.0.0.2" in message and "8 vCPU, 32 GB" in message


def test_a_scale_tier_job_names_the_tier() -> None:
    assert (fits_nowhere({"scaleTier": "BASIC"}, [node("n", 2, 64)]) or ("",))[0] == (
        "trainingInput.scaleTier"
    )


def test_a_job_that_fits_some_node_is_not_refused_even_when_the_cluster_is_full() -> None:
    ti = {
        "scaleTier": "CUSTOM",
        "masterType": "standard",
        "workerType": "standard",
        "workerCount": "9",
    }
    assert fits_nowhere(ti, [node("127.0.0.2", 8, 32, free_cpus=0)]) is None


def test_no_live_node_is_said_so() -> None:
    assert "no live node" in (fits_nowhere({"scaleTier": "BASIC"}, []) or ("", ""))[1]


def test_the_wait_says_what_the_job_needs_and_what_is_free() -> None:
    ti = {
        "scaleTier": "CUSTOM",
        "masterType": "standard",
        "workerType": "standard",
        "workerCount": "3",
    }
    reps = replicas(ti)
    bundles = [bundle_for(ti, r) for r in reps]
    nodes = [node("127.0.0.2", 8, 32, 4), node("127.0.0.3", 8, 32, 0)]
    reason = placement_reason(bundles, reps, nodes)
    assert reason.startswith("Waiting for the Ray cluster: the job needs 4 replicas")
    assert "4 × 4 vCPU, 15 GB" in reason
    assert "2 nodes with 4, 0 vCPU free (room for 1 now)" in reason
    assert "starts only once nodes join" not in reason  # 16 of the 16 vCPU there are


def test_a_job_bigger_than_the_whole_cluster_says_it_waits_for_nodes() -> None:
    ti = {
        "scaleTier": "CUSTOM",
        "masterType": "standard",
        "workerType": "standard",
        "workerCount": "4",
    }
    reps = replicas(ti)
    reason = placement_reason([bundle_for(ti, r) for r in reps], reps, [node("a", 8, 32)])
    assert "more than the cluster's 8 vCPU in all: it starts only once nodes join." in reason


def test_the_detail_shows_a_cluster_wait_as_one_row() -> None:
    from tui_app.model.running.queue_wait import wait_rows, wait_summary

    info = {"reason": "Waiting for the Ray cluster: the job needs 7 replicas."}
    assert wait_rows(info) == [("The Ray cluster", "the job needs 7 replicas.")]
    assert wait_summary(info) == info["reason"]


@pytest.mark.parametrize(
    ("addresses", "no_auth", "host", "wanted"),
    [
        (["127.0.0.2", "127.0.0.3"], True, "127.0.0.1", None),
        (["127.0.0.2", "::1"], False, "127.0.0.1", None),
        (["127.0.0.2", "10.1.2.3"], True, "0.0.0.0", "--no-auth is refused: Ray nodes at 10.1.2.3"),
        (["10.1.2.3"], False, "127.0.0.1", "cannot reach a service bound to 127.0.0.1"),
        (["10.1.2.3", "10.1.2.4"], False, "10.1.2.1", None),
    ],
)
def test_a_cluster_off_loopback_needs_the_token_and_a_reachable_address(
    addresses: list[str], no_auth: bool, host: str, wanted: str | None
) -> None:
    problem = network_problem(addresses, no_auth, host)
    if wanted is None:
        assert problem is None
    else:
        assert problem is not None and wanted in problem
