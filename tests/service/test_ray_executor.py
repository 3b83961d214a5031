"""The service with ``--executor ray``: replicas on the nodes of a real Ray cluster.

The session's cluster (``tests/support/ray_cluster.py``: three nodes at 127.0.0.2-4, 8 CPUs and
32 GiB each as Ray counts them) is shared by every test here; each test runs its own jobs on the
module's service. What a real user would check is checked: where each replica ran, the
addresses its cluster spec names, every log line once, cancel and limits killing the replica's
processes on its node, a service killed with -9 taking its running job over again, and jobs too
big for the cluster (QUEUED with the reason) or for any node (400). The test that kills a node
has a small cluster of its own: it must not take down a node other tests are using.
"""

from __future__ import annotations

import fcntl
import hashlib
import ipaddress
import json
import logging
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import psutil
import pytest

from tests.conftest import _start, _stop, serve, unique_id
from tests.service.test_replica_output import call
from tests.support.live_service import CLUSTER, LiveService, basic_job, free_port, grid_search
from tests.unit.test_ray_lost_message import DOC_NODE, DOC_TASK, doc_lost_quotes
from tui_app.local.execution.local_executor import SUPERVISOR_MODULE
from tui_app.local.execution.ray_node_folders import NodeRootError, node_folder, node_root
from tui_app.local.execution.ray_replica import STALE_SECONDS, OutputShipper, sweep_replicas
from tui_app.local.storage.replica_output import MAX_CHUNK_BYTES
from tui_app.local.storage.storage_env import HYPERTUNE_MAX_BYTES

pytestmark = pytest.mark.timeout(300)


def ray_flags(address: str, warm: int = 1) -> tuple[str, ...]:
    """One warm actor per node (not the default two): each costs a Ray worker's start, about a
    second of CPU, and a job with two replicas on one node then also takes the path of an actor
    started in its bundle."""
    return ("--executor", "ray", "--ray-address", address, "--ray-warm-actors", str(warm))


@pytest.fixture(scope="module")
def ray_service(
    ray_address: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveService]:
    yield from serve(tmp_path_factory, "svc-ray", *ray_flags(ray_address))


@pytest.fixture(scope="module")
def ray_package(ray_service: LiveService, trainer_sdist: Path) -> str:
    return ray_service.stage(trainer_sdist)


def job_of(job_id: str, package: str, *args: str, **training: Any) -> dict[str, Any]:
    return basic_job(job_id, package, *args, **training)


def replica_nodes(svc: LiveService, job_id: str) -> dict[str, dict[str, str]]:
    status, body = svc.request("GET", f"/v1/projects/test-project/jobs/{job_id}:metrics")
    assert status == 200, body
    return {r["taskName"]: r["node"] for r in body["replicas"] if "node" in r}


def service_lines(svc: LiveService, job_id: str, task: str) -> list[str]:
    """What the service received of a replica's output (the files the log store reads)."""
    folder = svc.state_dir / "jobs" / "test-project" / job_id / task
    lines: list[str] = []
    for name in ("stdout.log", "stderr.log"):
        if (folder / name).exists():
            lines += (folder / name).read_text().splitlines()
    return lines


def logged_lines(svc: LiveService, job_id: str, task: str) -> list[str]:
    """The replica's log entries' text, as entries:list hands them out."""
    entries = svc.entries(
        f'resource.labels.job_id="{job_id}" AND resource.labels.task_name="{task}" '
        f'AND logName="projects/test-project/logs/{task}"'
    )
    return [e.get("textPayload") or e.get("jsonPayload", {}).get("message", "") for e in entries]


def service_notes(svc: LiveService, job_id: str) -> list[str]:
    """The service's own entries in the job's log."""
    entries = svc.entries(
        f'resource.labels.job_id="{job_id}" AND resource.labels.task_name="service"'
    )
    return [str(e.get("jsonPayload", {}).get("message", "")) for e in entries]


def same_lines(svc: LiveService, job_id: str, task: str) -> None:
    """Every line the replica wrote on its node is in its log exactly once."""
    lines = service_lines(svc, job_id, task)
    assert lines, task
    assert sorted(logged_lines(svc, job_id, task)) == sorted(lines), task


def job_processes(job_id: str) -> list[psutil.Process]:
    """Live processes that belong to the job's replicas, on whichever node they ran."""
    found = []
    for p in psutil.process_iter(["environ", "status"]):
        env = p.info.get("environ") or {}
        if env.get("CLOUD_ML_JOB_ID") == job_id and p.info.get("status") != psutil.STATUS_ZOMBIE:
            found.append(p)
    return found


def wait_until(what: str, check: Any, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < deadline, f"still waiting for {what}"
        time.sleep(0.1)


def test_a_cluster_job_spreads_over_the_nodes_and_every_line_arrives_once(
    ray_service: LiveService, ray_package: str
) -> None:
    job_id = unique_id("ray_spread")
    ray_service.client().create(
        job_of(job_id, ray_package, "--steps", "20", "--log-every", "1", **CLUSTER)
    )
    job = ray_service.wait_state(job_id, timeout=180)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")

    nodes = replica_nodes(ray_service, job_id)
    tasks = ["master-replica-0", "worker-replica-0", "worker-replica-1", "ps-replica-0"]
    assert sorted(nodes) == sorted(tasks)
    addresses = {n["address"] for n in nodes.values()}
    assert len(addresses) >= 2, nodes  # SPREAD: 4 replicas of 4 vCPU over three 8-CPU nodes
    assert addresses <= {"127.0.0.2", "127.0.0.3", "127.0.0.4"}

    # Each replica's cluster spec names the nodes the replicas ran on, with the ports kept there.
    spec = json.loads(
        (
            ray_service.state_dir / "jobs/test-project" / job_id / "worker-replica-1/spec.json"
        ).read_text()
    )
    cluster = json.loads(spec["env"]["TF_CONFIG"])["cluster"]
    assert [a.rsplit(":", 1)[0] for a in cluster["master"]] == [
        nodes["master-replica-0"]["address"]
    ]
    assert [a.rsplit(":", 1)[0] for a in cluster["worker"]] == [
        nodes["worker-replica-0"]["address"],
        nodes["worker-replica-1"]["address"],
    ]

    # Every line each replica printed on its node reached the log once.
    for task in tasks:
        same_lines(ray_service, job_id, task)
    steps = [
        line for line in service_lines(ray_service, job_id, "master-replica-0") if "step" in line
    ]
    assert len(steps) == len(set(steps)) > 0

    notes = service_notes(ray_service, job_id)
    assert any("Started worker-replica-1 (standard, on node 127.0.0." in n for n in notes), notes
    assert not job_processes(job_id)


def loopback(ip: str) -> bool:
    address = ipaddress.ip_address(ip)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def test_nothing_talks_to_an_address_outside_loopback(ray_service: LiveService) -> None:
    """The cluster's processes and the service only ever connect inside 127.0.0.0/8."""
    service = psutil.Process(ray_service.proc.pid)
    pids = {service.pid} | {c.pid for c in service.children(recursive=True)}
    pids |= {
        p.pid
        for p in psutil.process_iter(["cmdline"])
        if any(word in " ".join(p.info["cmdline"] or []) for word in ("ray", "gcs_server"))
    }
    assert len(pids) > 4  # the service, and each node's raylet and workers
    outside = [
        (c.pid, c.raddr)
        for c in psutil.net_connections(kind="inet")
        if c.pid in pids and c.raddr and not loopback(c.raddr.ip)
    ]
    assert outside == []


def test_cancel_kills_the_replica_on_its_node(ray_service: LiveService, ray_package: str) -> None:
    job_id = unique_id("ray_cancel")
    client = ray_service.client()
    client.create(
        job_of(job_id, ray_package, "--steps", "1000000", "--sleep", "0.05", "--log-every", "1")
    )
    ray_service.wait_state(job_id, ("RUNNING",), timeout=120)
    # A line printed on the node is in the log while the job runs.
    wait_until("a live line", lambda: logged_lines(ray_service, job_id, "master-replica-0"))
    assert job_processes(job_id)
    client.cancel(job_id)
    job = ray_service.wait_state(job_id, timeout=60)
    assert job["state"] == "CANCELLED"
    assert job_processes(job_id) == []


def test_stacks_of_a_ray_replica_are_taken_on_its_node(
    ray_service: LiveService, ray_package: str
) -> None:
    """The replica's actor runs py-spy on its node and sends the threads back (issue 43)."""
    job_id = unique_id("ray_stacks")
    client = ray_service.client()
    client.create(job_of(job_id, ray_package, "--steps", "1000000", "--sleep", "0.05"))
    ray_service.wait_state(job_id, ("RUNNING",), timeout=120)
    path = f"/v1/projects/test-project/jobs/{job_id}:stacks"

    def training() -> dict[str, Any] | None:
        status, body = ray_service.request("GET", path)
        assert status == 200, body
        [replica] = body["replicas"]
        frames = [f["name"] for t in replica.get("threads", ()) for f in t["frames"]]
        return replica if "train" in frames else None

    try:
        replica = wait_until("the trainer's stacks, taken on its node", training)
        assert replica["node"] == replica_nodes(ray_service, job_id)["master-replica-0"]["address"]
        assert replica["pid"] > 0 and "error" not in replica
    finally:
        client.cancel(job_id)
    assert ray_service.wait_state(job_id, timeout=60)["state"] == "CANCELLED"


def test_max_running_time_stops_the_replica_on_its_node(
    ray_service: LiveService, ray_package: str
) -> None:
    job_id = unique_id("ray_limit")
    ray_service.client().create(
        job_of(
            job_id,
            ray_package,
            "--steps",
            "1000000",
            "--sleep",
            "0.05",
            scheduling={"maxRunningTime": "4s"},
        )
    )
    job = ray_service.wait_state(job_id, timeout=120)
    assert job["state"] == "CANCELLED"
    assert "maxRunningTime" in job["errorMessage"]
    assert job_processes(job_id) == []


def test_a_replica_bigger_than_every_node_is_refused_naming_the_field(
    ray_service: LiveService, ray_package: str
) -> None:
    body = job_of(
        unique_id("ray_huge"), ray_package, scaleTier="CUSTOM", masterType="n1-highcpu-16"
    )
    status, answer = ray_service.post_job(body)
    assert status == 400, answer
    message = answer["error"]["message"]
    assert "trainingInput.masterType" in message
    assert "needs 16 vCPU" in message and "8 vCPU, 32 GB" in message


def test_a_job_bigger_than_the_cluster_waits_queued_with_the_reason(
    ray_service: LiveService, ray_package: str
) -> None:
    job_id = unique_id("ray_wide")
    client = ray_service.client()
    wide = dict(CLUSTER, workerCount="6")  # 8 replicas of 4 vCPU: 32 > the 24 there are
    client.create(job_of(job_id, ray_package, **wide))

    def reason() -> str:
        status, body = ray_service.request("GET", f"/v1/projects/test-project/jobs/{job_id}:queue")
        assert status == 200, body
        return str(body.get("reason") or "")

    said = wait_until("the reason", reason)
    assert said.startswith("Waiting for the Ray cluster: the job needs 8 replicas")
    assert "3 nodes" in said
    assert client.get(job_id)["state"] == "QUEUED"
    client.cancel(job_id)
    assert ray_service.wait_state(job_id, timeout=60)["state"] == "CANCELLED"


def one_gpu(count: int = 1) -> dict[str, Any]:
    """A master of n1-standard-4 with ``count`` T4s (the session cluster's second node, and only
    it, declares GPUs: two)."""
    return {
        "scaleTier": "CUSTOM",
        "masterType": "n1-standard-4",
        "masterConfig": {"acceleratorConfig": {"count": str(count), "type": "NVIDIA_TESLA_T4"}},
    }


def visible_devices(job_id: str) -> str:
    """``CUDA_VISIBLE_DEVICES`` of a one-replica job's processes (its supervisor and trainer,
    on whichever node), once they are up: every one of them must agree."""

    def found() -> set[str]:
        seen = set()
        for p in job_processes(job_id):
            try:
                env = p.environ()
            except psutil.Error:
                continue
            if "CUDA_VISIBLE_DEVICES" in env:
                seen.add(env["CUDA_VISIBLE_DEVICES"])
        return seen

    seen: set[str] = wait_until(f"{job_id}'s processes", found)
    assert len(seen) == 1, seen
    return seen.pop()


def test_gpu_replicas_get_the_gpu_node_and_only_their_own_devices(
    ray_service: LiveService, ray_package: str
) -> None:
    """Two one-GPU jobs share the node's two GPUs, each seeing its own id; a third waits QUEUED
    for a GPU with the reason; a replica wanting more GPUs than any node has is refused."""
    client = ray_service.client()
    long = ("--steps", "1000000", "--sleep", "0.05")
    first, second, third = (unique_id(f"ray_gpu_{n}") for n in ("a", "b", "c"))
    for job_id in (first, second):
        client.create(job_of(job_id, ray_package, *long, **one_gpu()))
    try:
        devices = set()
        for job_id in (first, second):
            ray_service.wait_state(job_id, ("RUNNING",), timeout=120)
            assert replica_nodes(ray_service, job_id)["master-replica-0"]["address"] == (
                "127.0.0.3"
            )
            devices.add(visible_devices(job_id))
        assert devices == {"0", "1"}  # one each, never both
        notes = service_notes(ray_service, first)
        started = [n for n in notes if n.startswith("Started master-replica-0")]
        assert started and "GPU" in started[0], started

        client.create(job_of(third, ray_package, *long, **one_gpu()))

        def reason() -> str:
            status, body = ray_service.request(
                "GET", f"/v1/projects/test-project/jobs/{third}:queue"
            )
            assert status == 200, body
            return str(body.get("reason") or "")

        said = wait_until("the third job's reason", reason)
        assert "GPU" in said, said
        assert client.get(third)["state"] == "QUEUED"
        client.cancel(first)
        ray_service.wait_state(third, ("RUNNING",), timeout=120)
        assert visible_devices(third) in {"0", "1"}
    finally:
        made = {j["jobId"] for j in client.list_jobs()} & {first, second, third}
        ray_service.end_jobs(sorted(made))

    huge = job_of(unique_id("ray_gpu_big"), ray_package, **one_gpu(4))
    status, answer = ray_service.post_job(huge)
    assert status == 400, answer
    message = answer["error"]["message"]
    assert "trainingInput.masterConfig" in message or "trainingInput.masterType" in message
    assert "4 GPU" in message, message


def warm_actors(ray: Any, state: Path) -> dict[str, str | None]:
    """This service's warm actors (``ray_warm_actors``) now alive: name -> the run each serves
    (None: still waiting)."""
    from ray.exceptions import RayActorError
    from ray.util import list_named_actors

    from tui_app.local.environments.containers import service_key

    prefix = f"{service_key(state)}/warm/"
    found: dict[str, str | None] = {}
    for entry in list_named_actors(all_namespaces=True):
        name = str(entry["name"])
        if entry["namespace"] == "tui-app" and name.startswith(prefix):
            # Killed between the listing and the question: gone, not an error. Anything else
            # (an actor that does not answer in 30 s) fails the test with its own words: a
            # run once found no warm actor serving a RUNNING job, and this said nothing why.
            try:
                actor = ray.get_actor(name, namespace="tui-app")
            except ValueError:  # no actor of that name any more
                continue
            try:
                found[name] = ray.get(actor.assignment.remote(), timeout=30)["runKey"]
            except RayActorError:
                continue
    return found


def test_a_service_killed_mid_job_takes_its_replicas_over_again(
    ray_address: str, tmp_path: Path, trainer_sdist: Path
) -> None:
    """Also the warm actors' life: the job's replicas run in actors started before it, the
    restarted service takes the idle ones back instead of starting more, and a service that
    stops leaves none waiting."""
    import ray

    port = free_port()
    state = tmp_path / "state"
    svc = _start(state, *ray_flags(ray_address), port=port)
    ray.init(address=ray_address, namespace="tui-app", logging_level=logging.ERROR)
    try:
        wait_until("a warm actor per node", lambda: len(warm_actors(ray, state)) >= 3)
        idle = warm_actors(ray, state)
        assert len(idle) == 3 and set(idle.values()) == {None}
        package = svc.stage(trainer_sdist)
        job_id = unique_id("ray_restart")
        cluster = {
            "scaleTier": "CUSTOM",
            "masterType": "standard",
            "workerType": "standard",
            "workerCount": "1",
        }
        svc.client().create(
            job_of(
                job_id, package, "--steps", "300", "--sleep", "0.03", "--log-every", "1", **cluster
            )
        )
        svc.wait_state(job_id, ("RUNNING",), timeout=120)
        serving = [n for n, run in warm_actors(ray, state).items() if run and job_id in run]
        assert len(serving) == 2 and set(serving) <= set(idle)  # started before the job
        wait_until("lines before the kill", lambda: logged_lines(svc, job_id, "master-replica-0"))
        # The pool tops itself up again before the kill: three wait besides the job's two.
        wait_until("the pool topped up", lambda: len(warm_actors(ray, state)) == 5)
        waiting = {n for n, run in warm_actors(ray, state).items() if run is None}
        os.killpg(svc.proc.pid, signal.SIGKILL)
        svc.proc.wait()
        svc = _start(state, *ray_flags(ray_address), port=port)
        job = svc.wait_state(job_id, timeout=180)
        assert job["state"] == "SUCCEEDED", job.get("errorMessage")
        for task in ("master-replica-0", "worker-replica-0"):
            same_lines(svc, job_id, task)
        steps = [line for line in service_lines(svc, job_id, "master-replica-0") if "step" in line]
        assert len(steps) == len(set(steps)) > 0
        notes = " ".join(service_notes(svc, job_id))
        assert "resumed the job with" in notes
        # The ended job's actors are gone; the restarted service kept the same three waiting.
        wait_until("the job's actors gone", lambda: not set(serving) & set(warm_actors(ray, state)))
        assert set(warm_actors(ray, state)) == waiting
        _stop(svc)
        assert warm_actors(ray, state) == {}  # a stopped service leaves none waiting
    finally:
        ray.shutdown()
        _stop(svc)


def test_a_node_that_dies_with_no_room_left_fails_the_job_naming_the_replica_and_node(
    tmp_path: Path, trainer_sdist: Path
) -> None:
    """Each replica fills a node (8 vCPUs): once one node dies the job is restarted whole
    (``model/running/restarts.py``), waits for room that never comes, and fails naming the
    replica and the node it lost."""
    pytest.importorskip("ray")
    from tests.support.ray_cluster import start as start_cluster

    cluster = start_cluster(2, first=6)  # 127.0.0.6 (head) and 127.0.0.7: this test's alone
    # No warm actors: every replica's actor is started inside its bundle.
    svc = _start(tmp_path / "state", *ray_flags(cluster.address, warm=0))
    try:
        package = svc.stage(trainer_sdist)
        job_id = unique_id("ray_node_death")
        two = {
            "scaleTier": "CUSTOM",
            "masterType": "complex_model_s",
            "workerType": "complex_model_s",
            "workerCount": "1",
        }
        svc.client().create(job_of(job_id, package, "--steps", "1000000", "--sleep", "0.05", **two))
        svc.wait_state(job_id, ("RUNNING",), timeout=120)
        nodes = replica_nodes(svc, job_id)
        victim_task, victim = next((t, n) for t, n in nodes.items() if n["address"] == "127.0.0.7")
        doomed = next(n for n in cluster.list_all_nodes() if n.node_ip_address == "127.0.0.7")
        cluster.remove_node(doomed, allow_graceful=False)
        job = svc.wait_state(job_id, timeout=120)
        assert job["state"] == "FAILED"
        message = job["errorMessage"]
        lost, _, waited = message.partition(". No node had room")
        assert waited.startswith(" for the job's replicas within "), message
        assert f"The replica {victim_task} was lost" in lost
        assert "127.0.0.7" in lost and victim["id"][:12] in lost
        # docs/ray.md quotes what a user sees here: one of its quotes, with this run's names.
        quoted = [
            q.replace(DOC_TASK, victim_task)
            .replace(DOC_NODE["address"], "127.0.0.7")
            .replace(DOC_NODE["id"][:12], victim["id"][:12])
            for q in doc_lost_quotes()
        ]
        assert lost + "." in quoted, (message, quoted)
        notes = service_notes(svc, job_id)
        assert any(n.startswith("Restarting the whole job (1 of 3)") for n in notes), notes
        (restart,) = job["replicaRestarts"]
        assert restart["taskName"] == "job" and victim_task in restart["lastCause"]
        wait_until("no replica process left", lambda: not job_processes(job_id), timeout=30)
    finally:
        _stop(svc)
        cluster.shutdown()


def test_a_node_that_dies_under_a_job_restarts_it_on_the_nodes_left(
    tmp_path: Path, trainer_sdist: Path
) -> None:
    """Three nodes; the worker's node dies: the job starts again on the nodes with room, under
    new addresses, the master resumes from its checkpoint in the gs:// job dir, and it
    SUCCEEDS; no line of the new runs is lost or doubled."""
    pytest.importorskip("ray")
    from tests.support.ray_cluster import start as start_cluster

    cluster = start_cluster(3, first=10)  # 127.0.0.10-12: this test's alone
    svc = _start(tmp_path / "state", *ray_flags(cluster.address, warm=0))
    try:
        package = svc.stage(trainer_sdist)
        job_id = unique_id("ray_node_moved")
        two = {
            "scaleTier": "CUSTOM",
            "masterType": "standard",
            "workerType": "standard",
            "workerCount": "1",
            "jobDir": f"gs://test-bucket/{job_id}",
        }
        args = ("--steps", "300", "--sleep", "0.05", "--log-every", "1", "--checkpoint-every", "20")
        svc.client().create(job_of(job_id, package, *args, **two))
        svc.wait_state(job_id, ("RUNNING",), timeout=120)
        ckpts = svc.state_dir / "gcs" / "test-bucket" / job_id / "checkpoints"
        wait_until("a checkpoint", lambda: any(ckpts.glob("ckpt-*.json")), timeout=120)
        nodes = replica_nodes(svc, job_id)
        # Not the head node: the cluster does not outlive it.
        victim_task = next(
            t
            for t in ("worker-replica-0", "master-replica-0")
            if nodes[t]["address"] != "127.0.0.10"
        )
        victim = nodes[victim_task]["address"]
        doomed = next(n for n in cluster.list_all_nodes() if n.node_ip_address == victim)
        cluster.remove_node(doomed, allow_graceful=False)
        job = svc.wait_state(job_id, timeout=240)
        assert job["state"] == "SUCCEEDED", job.get("errorMessage")
        (restart,) = job["replicaRestarts"]
        assert restart["taskName"] == "job" and victim_task in restart["lastCause"]
        notes = service_notes(svc, job_id)
        assert any(n.startswith("Restarting the whole job (1 of 3)") for n in notes), notes
        assert victim not in {n["address"] for n in replica_nodes(svc, job_id).values()}
        master = logged_lines(svc, job_id, "master-replica-0")
        assert any(line.startswith("Resumed from checkpoint at step ") for line in master)
        for task in ("master-replica-0", "worker-replica-0"):
            same_lines(svc, job_id, task)
        wait_until("no replica process left", lambda: not job_processes(job_id), timeout=30)
    finally:
        _stop(svc)
        cluster.shutdown()


def waiting_warm_nodes(ray: Any, state: Path) -> dict[str, str]:
    """This service's warm actors still waiting (serving no run): name -> the Ray id of its
    node. An actor whose node died answers nothing: it is not waiting anywhere."""
    from ray.exceptions import GetTimeoutError, RayActorError
    from ray.util import list_named_actors

    from tui_app.local.environments.containers import service_key

    prefix = f"{service_key(state)}/warm/"
    found: dict[str, str] = {}
    for entry in list_named_actors(all_namespaces=True):
        name = str(entry["name"])
        if entry["namespace"] != "tui-app" or not name.startswith(prefix):
            continue
        try:
            seen = ray.get(ray.get_actor(name, namespace="tui-app").assignment.remote(), timeout=10)
        except (ValueError, RayActorError, GetTimeoutError):
            continue
        if seen["runKey"] is None:
            found[name] = str(seen["nodeId"])
    return found


def test_a_node_that_dies_is_counted_lost_and_gets_warm_actors_when_it_rejoins(
    tmp_path: Path,
) -> None:
    """After a node died, `service status` still said "3 nodes", and the dead node's warm
    actors still counted as waiting: the node that rejoined (under a new Ray id) got none, so
    its next replica started cold. Its own cluster: it kills a node."""
    pytest.importorskip("ray")
    import ray

    from tests.service.test_service_cli import tui
    from tests.support.ray_cluster import node_args
    from tests.support.ray_cluster import start as start_cluster

    cluster = start_cluster(2, first=8)  # 127.0.0.8 (head) and 127.0.0.9: this test's alone
    state = tmp_path / "state"
    svc = _start(state, *ray_flags(cluster.address))
    ray.init(address=cluster.address, namespace="tui-app", logging_level=logging.ERROR)
    summary = f"replicas run on the Ray cluster at {cluster.address}"

    def status() -> str:
        done = tui("service", "status", "--state-dir", str(state))
        assert done.returncode == 0, done.stderr
        return next(line for line in done.stdout.splitlines() if line.startswith("executor: "))

    def node_id(address: str) -> str:
        return next(
            str(n["NodeID"])
            for n in ray.nodes()
            if n["Alive"] and n["NodeManagerAddress"] == address
        )

    try:
        first = node_id("127.0.0.9")
        wait_until(
            "a warm actor on each node",
            lambda: set(waiting_warm_nodes(ray, state).values()) == {node_id("127.0.0.8"), first},
        )
        assert status() == f"executor: {summary} (2 nodes, 1 warm actor each)"

        doomed = next(n for n in cluster.list_all_nodes() if n.node_ip_address == "127.0.0.9")
        cluster.remove_node(doomed, allow_graceful=False)
        lost = f"executor: {summary} (1 node, 1 warm actor each; 1 lost: 127.0.0.9)"
        wait_until("status says the node is lost", lambda: status() == lost, timeout=90)

        cluster.add_node(**node_args("127.0.0.9"))
        cluster.wait_for_nodes()
        again = node_id("127.0.0.9")
        assert again != first  # a node that rejoins is a new node to Ray
        wait_until(
            "a warm actor on the rejoined node",
            lambda: again in waiting_warm_nodes(ray, state).values(),
            timeout=90,
        )
        assert status() == f"executor: {summary} (2 nodes, 1 warm actor each)"
    finally:
        ray.shutdown()
        _stop(svc)
        cluster.shutdown()


def test_a_tuning_jobs_trials_each_get_a_placement_on_the_cluster(
    ray_service: LiveService, ray_package: str
) -> None:
    job_id = unique_id("ray_tune")
    hp = grid_search("learning_rate", [0.02, 0.05, 0.1], parallel=2)
    cluster = {
        "scaleTier": "CUSTOM",
        "masterType": "standard",
        "workerType": "standard",
        "workerCount": "1",
    }
    ray_service.client().create(
        job_of(job_id, ray_package, "--steps", "30", hyperparameters=hp, **cluster)
    )
    job = ray_service.wait_state(job_id, timeout=240)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    trials = job["trainingOutput"]["trials"]
    assert sorted(t["trialId"] for t in trials) == ["1", "2", "3"]
    assert all(t["state"] == "SUCCEEDED" for t in trials)
    status, body = ray_service.request("GET", f"/v1/projects/test-project/jobs/{job_id}:metrics")
    assert status == 200, body
    placed = [(r["trialId"], r["taskName"], r["node"]["address"]) for r in body["replicas"]]
    assert sorted({t for t, _, _ in placed}) == ["1", "2", "3"]
    assert all(task in ("master-replica-0", "worker-replica-0") for _, task, _ in placed)
    assert len({a for _, _, a in placed}) >= 2
    assert not job_processes(job_id)


def test_a_restarted_service_gives_back_what_ended_jobs_still_hold(
    ray_address: str, tmp_path: Path, trainer_sdist: Path
) -> None:
    """A placement left by a job that ended while the service was down (here: killed with -9
    while the job waited, then the job marked FAILED) is removed when the service starts."""
    import ray
    from ray.util import placement_group_table

    from tui_app.local.paths import StateDir
    from tui_app.local.store import JobStore

    port = free_port()
    state = tmp_path / "state"
    svc = _start(state, *ray_flags(ray_address), port=port)
    package = svc.stage(trainer_sdist)
    job_id = unique_id("ray_orphan")
    svc.client().create(job_of(job_id, package, **dict(CLUSTER, workerCount="6")))
    ray.init(address=ray_address, namespace="tui-app", logging_level=logging.ERROR)
    try:

        def groups() -> list[str]:
            return [
                str(g["name"])
                for g in placement_group_table().values()
                if g["state"] != "REMOVED" and job_id in str(g["name"])
            ]

        wait_until("the job's placement group", groups)
        os.killpg(svc.proc.pid, signal.SIGKILL)
        svc.proc.wait()
        store = JobStore(StateDir(state).jobs_db)
        job = store.get("test-project", job_id)
        assert job is not None
        job.update(state="FAILED", errorMessage="ended while the service was down")
        store.update("test-project", job)
        store.close()
        assert groups()  # still held: nobody has given it back yet
        svc = _start(state, *ray_flags(ray_address), port=port)
        wait_until("the placement group removed", lambda: not groups(), timeout=30)
    finally:
        ray.shutdown()
        _stop(svc)


# -- the output route with a Ray-issued credential (storage/replica_output.py) -----------------


def running_ray_job(svc: LiveService, package: str, base: str) -> tuple[str, str, Path]:
    """A long one-replica job RUNNING on the cluster: its id, the endpoint with its replica's
    Ray-issued credential, and the replica's folder on the service's side. The service writes
    the spec (its own paths, the credential in ``STORAGE_EMULATOR_HOST``) there before it sends
    it to the node. The trainer reports no hypertune metric (``--checkpoint-every 0``), so the
    node's shipper never sends that stream while the test does."""
    job_id = unique_id(base)
    svc.client().create(
        job_of(job_id, package, "--steps", "1000000", "--sleep", "0.05", "--checkpoint-every", "0")
    )
    svc.wait_state(job_id, ("RUNNING",), timeout=120)
    workdir = svc.state_dir / "jobs" / "test-project" / job_id / "master-replica-0"
    endpoint = str(json.loads((workdir / "spec.json").read_text())["env"]["STORAGE_EMULATOR_HOST"])
    assert "/_replica/" in endpoint, endpoint
    return job_id, endpoint, workdir


def test_shipped_bytes_land_once_and_bad_requests_are_refused(
    ray_service: LiveService, ray_package: str
) -> None:
    job_id, endpoint, workdir = running_ray_job(ray_service, ray_package, "ray_shipped")
    # The node ships status.json only when its replica has ended: until then it is ours.
    url = f"{endpoint}/output/status"
    target: Path = workdir / "status.json"

    assert call(url) == (200, {"size": 0})
    assert call(url + "?offset=5", b"abc") == (409, {"size": 0})  # a gap is never filled in
    assert call(url + "?offset=0", b"hello ") == (200, {"size": 6})
    assert call(url + "?offset=3", b"lo world") == (200, {"size": 11})  # resent bytes skipped
    assert call(url + "?offset=0", b"hello") == (200, {"size": 11})  # all of it resent
    assert target.read_bytes() == b"hello world"

    status, body = call(f"{endpoint}/output/passwd?offset=0", b"x")
    assert status == 400 and "stream" in body["error"]["message"]
    for bad in ("-1", "abc", "1e3", ""):
        status, body = call(f"{url}?offset={bad}", b"x")
        assert status == 400 and "offset" in body["error"]["message"], bad
    forged = endpoint.rsplit("/", 1)[0] + "/not-a-credential"
    assert call(f"{forged}/output/stdout")[0] == 401

    ray_service.client().cancel(job_id)
    assert ray_service.wait_state(job_id, timeout=60)["state"] == "CANCELLED"
    assert call(f"{url}?offset=11", b"late")[0] == 401  # revoked with its job


def test_a_hypertune_stream_takes_nothing_past_its_cap(
    ray_service: LiveService, ray_package: str
) -> None:
    job_id, endpoint, workdir = running_ray_job(ray_service, ray_package, "ray_capped")
    url = f"{endpoint}/output/hypertune"
    on_disk = workdir / "hypertune" / "output.metrics"
    chunk = b"m" * MAX_CHUNK_BYTES
    try:
        size, status = 0, 200
        body: Any = {}
        for _ in range(HYPERTUNE_MAX_BYTES // MAX_CHUNK_BYTES + 1):  # 64 fit, the 65th not
            status, body = call(f"{url}?offset={size}", chunk)
            if status != 200:
                break
            # The whole body lands: a route that took only what had arrived of it (aiohttp's
            # content.read(n) answers with what is buffered) would make every sender resend.
            assert body == {"size": size + len(chunk)}, "the route took part of a 4 MiB body"
            size = body["size"]
        assert status == 413, body
        assert body["error"]["status"] == "RESOURCE_EXHAUSTED"
        assert size == HYPERTUNE_MAX_BYTES
        assert on_disk.stat().st_size == size <= HYPERTUNE_MAX_BYTES
        assert call(f"{url}?offset={size}", b"1")[0] == 413  # not one byte more
        assert on_disk.stat().st_size == size
        assert call(url) == (200, {"size": size})
        assert call(f"{endpoint}/output/stdout")[0] == 200  # the other streams go on
    finally:
        ray_service.client().cancel(job_id)
        assert ray_service.wait_state(job_id, timeout=60)["state"] == "CANCELLED"
        on_disk.unlink(missing_ok=True)  # 256 MiB


def test_a_link_or_fifo_planted_in_the_services_copy_is_refused_not_followed(
    ray_service: LiveService, ray_package: str, tmp_path: Path
) -> None:
    job_id, endpoint, workdir = running_ray_job(ray_service, ray_package, "ray_planted")
    url = f"{endpoint}/output/hypertune"
    secret = tmp_path / "not-the-replicas.txt"
    secret.write_bytes(b"someone else's file\n")
    seen = secret.stat()
    planted = workdir / "hypertune" / "output.metrics"
    planted.parent.mkdir(exist_ok=True)
    planted.symlink_to(secret)
    try:
        answers = [call(url)]  # its size
        for offset in (0, len(b"someone else's file\n")):  # a write, from either end
            answers.append(call(f"{url}?offset={offset}", b"0.5\n"))
        for status, body in answers:
            assert status == 403, body
            assert "symbolic link" in body["error"]["message"], body
        assert secret.read_bytes() == b"someone else's file\n"
        assert secret.stat().st_mtime_ns == seen.st_mtime_ns
        planted.unlink()
        os.mkfifo(planted)  # would block an open() without a writer: answered at once instead
        status, body = call(url)
        assert status == 403 and "FIFO" in body["error"]["message"], body
        assert call(f"{endpoint}/output/stdout")[0] == 200  # the other streams go on
    finally:
        planted.unlink(missing_ok=True)
        ray_service.client().cancel(job_id)
        assert ray_service.wait_state(job_id, timeout=60)["state"] == "CANCELLED"


# -- the replica's copy on its node (ray_replica: private folders, removed at the end) --------


def node_copy(job_id: str, task: str, address: str, remote_root: Path) -> Path:
    """Where replica ``task`` of ``job_id`` keeps its files on the node at ``address``: the
    session cluster's last node has a root of its own (``ray_remote_root``), the others the
    default one (``node_root``: this process's environment is the cluster's)."""
    root = remote_root if remote_root.name == f"node-{address}" else node_root()
    run = hashlib.sha256(f"test-project/{job_id}".encode()).hexdigest()[:16]
    return root / "replicas" / run / task


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_a_replicas_copy_on_its_node_is_private_and_gone_when_it_ends(
    ray_service: LiveService, ray_package: str, ray_remote_root: Path
) -> None:
    """spec.json holds the replica's credential: nobody but the service's user may read it, on
    any node, and nothing of the run stays behind on a node after the job."""
    job_id = unique_id("ray_private")
    client = ray_service.client()
    two = {
        "scaleTier": "CUSTOM",
        "masterType": "standard",
        "workerType": "standard",
        "workerCount": "1",
    }
    client.create(job_of(job_id, ray_package, "--steps", "1000000", "--sleep", "0.05", **two))
    try:
        ray_service.wait_state(job_id, ("RUNNING",), timeout=120)
        nodes = replica_nodes(ray_service, job_id)
        copies = {
            task: node_copy(job_id, task, node["address"], ray_remote_root)
            for task, node in nodes.items()
        }
        assert sorted(copies) == ["master-replica-0", "worker-replica-0"]
        for task, folder in copies.items():
            wait_until(f"{task}'s supervisor on its node", (folder / "pid.json").exists)
            root = folder.parents[2]
            for path in (root, root / "replicas", folder.parent, folder, folder / "hypertune"):
                assert mode(path) == 0o700, (task, path, oct(mode(path)))
            for name in ("spec.json", "supervisor.log", "stdout.log", "stderr.log", "pid.json"):
                assert mode(folder / name) == 0o600, (task, name, oct(mode(folder / name)))
            spec = json.loads((folder / "spec.json").read_text())
            assert "/_replica/" in spec["env"]["STORAGE_EMULATOR_HOST"]  # what is guarded
    finally:
        client.cancel(job_id)
    assert ray_service.wait_state(job_id, timeout=60)["state"] == "CANCELLED"
    for task, folder in copies.items():
        wait_until(f"{task}'s run folder removed", lambda f=folder: not f.parent.exists())


def test_a_link_or_fifo_planted_on_the_node_is_not_shipped_and_the_rest_goes_on(
    ray_service: LiveService, ray_package: str, ray_remote_root: Path, tmp_path: Path
) -> None:
    """What a container replica could do to the folder it writes: its hypertune report a link
    to a file of the node, a log a FIFO. The actor's shipper opens neither, and the log lines
    keep arriving."""
    job_id = unique_id("ray_node_link")
    client = ray_service.client()
    client.create(
        job_of(
            job_id,
            ray_package,
            "--steps",
            "1000000",
            "--sleep",
            "0.05",
            "--log-every",
            "1",
            "--checkpoint-every",
            "0",
        )
    )
    secret = tmp_path / "node-file.txt"
    secret.write_bytes(b"a file of the node\n")
    try:
        ray_service.wait_state(job_id, ("RUNNING",), timeout=120)
        node = replica_nodes(ray_service, job_id)["master-replica-0"]
        folder = node_copy(job_id, "master-replica-0", node["address"], ray_remote_root)
        wait_until("the supervisor on the node", (folder / "pid.json").exists)
        (folder / "hypertune" / "output.metrics").symlink_to(secret)
        os.mkfifo(folder / "stderr.fifo")
        os.replace(folder / "stderr.fifo", folder / "stderr.log")  # the supervisor keeps its own
        before = len(service_lines(ray_service, job_id, "master-replica-0"))
        # Dozens of lines later the shipper has passed both planted names several times.
        wait_until(
            "lines shipped after the planting",
            lambda: len(service_lines(ray_service, job_id, "master-replica-0")) > before + 40,
        )
    finally:
        client.cancel(job_id)
    assert ray_service.wait_state(job_id, timeout=60)["state"] == "CANCELLED"
    service_copy = ray_service.state_dir / "jobs" / "test-project" / job_id / "master-replica-0"
    assert not (service_copy / "hypertune" / "output.metrics").exists()
    assert secret.read_bytes() == b"a file of the node\n"
    wait_until("the run folder removed", lambda: not folder.parent.exists())
    assert secret.exists()  # removing the folder removed the link, not what it named


# -- the same rules without a cluster: the shipper against a stand-in route, the sweep --------


class _Route(BaseHTTPRequestHandler):
    """The output route as the service answers it (``storage/replica_output.py``): GET the
    size, POST bytes from an offset, 413 past a stream's cap."""

    got: dict[str, bytearray]
    caps: dict[str, int]

    def _answer(self, code: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        stream = urlsplit(self.path).path.rsplit("/", 1)[-1]
        self._answer(200, {"size": len(self.got.setdefault(stream, bytearray()))})

    def do_POST(self) -> None:
        parts = urlsplit(self.path)
        stream = parts.path.rsplit("/", 1)[-1]
        offset = int(parse_qs(parts.query)["offset"][0])
        data = self.rfile.read(int(self.headers["Content-Length"]))
        have = self.got.setdefault(stream, bytearray())
        if offset > len(have):
            return self._answer(409, {"size": len(have)})
        fresh = data[len(have) - offset :]
        if stream in self.caps and len(have) + len(fresh) > self.caps[stream]:
            message = f"The replica's {stream} file may hold at most {self.caps[stream]} bytes"
            return self._answer(413, {"error": {"code": 413, "message": message}})
        have += fresh
        self._answer(200, {"size": len(have)})

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base names it
        pass


@pytest.fixture
def route() -> Iterator[tuple[str, dict[str, bytearray], dict[str, int]]]:
    """A stand-in output route on loopback: (endpoint, bytes it took by stream, caps)."""
    got: dict[str, bytearray] = {}
    caps: dict[str, int] = {}
    handler = type("Route", (_Route,), {"got": got, "caps": caps})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/_replica/secret", got, caps
    finally:
        server.shutdown()
        server.server_close()


def test_the_shipper_opens_no_link_or_fifo_and_ships_the_other_streams(
    route: tuple[str, dict[str, bytearray], dict[str, int]], tmp_path: Path
) -> None:
    endpoint, got, _ = route
    workdir = tmp_path / "replica"
    (workdir / "hypertune").mkdir(parents=True)
    secret = tmp_path / "node-file"
    secret.write_bytes(b"a file of the node\n")
    (workdir / "hypertune" / "output.metrics").symlink_to(secret)
    os.mkfifo(workdir / "stderr.log")  # open() would wait for a writer forever
    (workdir / "stdout.log").write_bytes(b"line 1\n")
    (workdir / "status.json").write_bytes(b'{"exit_code": 0}')
    shipper = OutputShipper(workdir, endpoint)

    assert shipper.ship_once(final=True)
    assert set(shipper.stopped) == {"hypertune", "stderr"}
    assert "symbolic link" in shipper.stopped["hypertune"]
    assert "FIFO" in shipper.stopped["stderr"]
    assert "no longer shipped" in shipper.last_error
    assert got == {"stdout": bytearray(b"line 1\n"), "status": bytearray(b'{"exit_code": 0}')}
    with open(workdir / "stdout.log", "ab") as f:
        f.write(b"line 2\n")
    assert shipper.ship_once(final=False)
    assert got["stdout"] == b"line 1\nline 2\n"  # the other streams go on
    assert "hypertune" not in got and secret.read_bytes() == b"a file of the node\n"


def test_the_shipper_stops_a_stream_the_service_caps_and_ships_the_others(
    route: tuple[str, dict[str, bytearray], dict[str, int]], tmp_path: Path
) -> None:
    endpoint, got, caps = route
    caps["hypertune"] = 10
    workdir = tmp_path / "replica"
    (workdir / "hypertune").mkdir(parents=True)
    (workdir / "hypertune" / "output.metrics").write_bytes(b"0123456789abcdef")
    (workdir / "stdout.log").write_bytes(b"line 1\n")
    shipper = OutputShipper(workdir, endpoint)

    assert shipper.ship_once(final=False)  # nothing to retry: the cap never moves
    assert "413" in shipper.stopped["hypertune"] and "at most 10 bytes" in shipper.last_error
    assert got["hypertune"] == b""
    with open(workdir / "stdout.log", "ab") as f:
        f.write(b"line 2\n")
    assert shipper.ship_once(final=False)
    assert got["stdout"] == b"line 1\nline 2\n"


def test_node_folders_are_private_and_another_users_or_a_link_is_refused(
    tmp_path: Path,
) -> None:
    root = tmp_path / "node"
    root.mkdir(mode=0o755)  # made by an older version
    (root / "replicas").mkdir(mode=0o755)
    task = node_folder(root, "replicas", "run", "master-replica-0")
    for path in (root, root / "replicas", task.parent, task):
        assert stat.S_IMODE(path.stat().st_mode) == 0o700, path
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "linked").symlink_to(elsewhere)
    with pytest.raises(NodeRootError, match="is a link"):
        node_folder(tmp_path / "linked", "replicas")
    if os.getuid() == 0:  # root may give a folder away to see the check refuse it
        theirs = tmp_path / "theirs"
        theirs.mkdir()
        os.chown(theirs, 12345, 12345)
        with pytest.raises(NodeRootError, match="belongs to user 12345"):
            node_folder(theirs)


def _replica_folder(root: Path, run: str, task: str, pid: int | None) -> Path:
    folder = node_folder(root, "replicas", run, task)
    (folder / "spec.json").write_text("{}")
    if pid is not None:
        (folder / "pid.json").write_text(json.dumps({"supervisor": pid, "replica": pid}))
    return folder


def test_the_sweep_removes_only_what_no_actor_owns_and_no_supervisor_runs(
    tmp_path: Path,
) -> None:
    root = tmp_path / "node"
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    # A stand-in supervisor: a live process whose command line names the supervisor module.
    supervisor = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()", SUPERVISOR_MODULE],
        stdin=subprocess.PIPE,
    )
    try:
        dead = _replica_folder(root, "run-a", "master-replica-0", ended.pid)
        running = _replica_folder(root, "run-b", "master-replica-0", supervisor.pid)
        owned = _replica_folder(root, "run-c", "master-replica-0", ended.pid)
        fresh = _replica_folder(root, "run-d", "master-replica-0", None)
        old = _replica_folder(root, "run-e", "master-replica-0", None)
        empty_run = node_folder(root, "replicas", "run-f")
        long_ago = time.time() - STALE_SECONDS - 60
        for path in (old, old / "spec.json"):
            os.utime(path, (long_ago, long_ago))
        # A live actor of this node holds its folder's lock until its process ends.
        owner = os.open(owned, os.O_RDONLY | os.O_DIRECTORY)
        fcntl.flock(owner, fcntl.LOCK_EX)
        try:
            removed = sweep_replicas(root)
        finally:
            os.close(owner)
        assert sorted(removed) == sorted([dead, old])
        assert not dead.parent.exists() and not old.parent.exists() and not empty_run.exists()
        assert running.exists() and owned.exists() and fresh.exists()
        assert sweep_replicas(root) == [owned]  # its actor gone: the lock is free
    finally:
        supervisor.kill()
        supervisor.wait()
