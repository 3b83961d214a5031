"""Runtime environments on a Ray node that does not see the service's folders.

The session cluster's last node (127.0.0.4, ``tests/support/ray_cluster.py``) stands in for a
machine of its own: a job with a ``runtimeVersion`` that has a replica there gets its runtime
environment and its packages' layer built on that node, from the files the service installed
and with the service's pip settings (here offline stand-in wheels, as in test_runtimes.py),
cached there for the next job.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import serve, unique_id
from tests.service.test_ray_executor import ray_flags, replica_nodes, service_notes
from tests.service.test_runtimes import _offline_env, _versions, trainer_sdist, wheels  # noqa: F401
from tests.support.live_service import LiveService, basic_job

pytestmark = pytest.mark.timeout(300)

REMOTE = "127.0.0.4"
# 8 vCPU each: one replica per node, so every node (the remote one too) runs one.
ONE_PER_NODE = {
    "scaleTier": "CUSTOM",
    "masterType": "n1-standard-8",
    "workerType": "n1-standard-8",
    "workerCount": "2",
}


@pytest.fixture(scope="module")
def ray_rt_service(
    ray_address: str,
    tmp_path_factory: pytest.TempPathFactory,
    wheels: Path,  # noqa: F811
) -> Iterator[LiveService]:
    yield from serve(
        tmp_path_factory, "svc-ray-rt", *ray_flags(ray_address), env=_offline_env(wheels)
    )


def _job(job_id: str, uri: str, module: str) -> dict[str, Any]:
    return basic_job(
        job_id, uri, "tensorflow", pythonModule=module, runtimeVersion="2.11", **ONE_PER_NODE
    )


def _remote_notes(svc: LiveService, job_id: str) -> list[str]:
    return [n for n in service_notes(svc, job_id) if REMOTE in n]


def test_a_node_that_does_not_see_the_service_builds_the_runtime_and_keeps_it(
    ray_rt_service: LiveService, ray_remote_root: Path, tmp_path: Path
) -> None:
    svc = ray_rt_service
    first = unique_id("ray_rt")
    pkg = trainer_sdist(tmp_path, "rayrt", [], salt="a", chief_waits=5)
    svc.client().create(_job(first, svc.stage(pkg), "rayrt.task"))
    job = svc.wait_state(first, timeout=240)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    where = {task: node["address"] for task, node in replica_nodes(svc, first).items()}
    assert sorted(where.values()) == ["127.0.0.2", "127.0.0.3", REMOTE], where
    remote_task = next(task for task, address in where.items() if address == REMOTE)

    # Built on the node, its pip lines in the job's log under the node's address.
    notes = _remote_notes(svc, first)
    building = f"Preparing the job's environment on node {REMOTE}, which does not see"
    assert any(n.startswith(building) for n in notes), notes
    for line in ("Building runtime environment 2.11-py", "Runtime environment 2.11-py"):
        assert any(n.startswith(f"{REMOTE}: {line}") for n in notes), notes
    # Kept on the node under its own root: the runtime once, the job's layer by its name.
    runtimes = list((ray_remote_root / "runtimes").glob("2.11-py*/manifest.json"))
    assert len(runtimes) == 1, runtimes
    service_layers = list((svc.state_dir / "packages").glob("2.11-py*"))
    assert [p.name for p in service_layers if p.is_dir()] == [
        p.name for p in (ray_remote_root / "packages").iterdir() if p.is_dir()
    ]
    # The replica there ran on that environment, with the runtime's frameworks.
    versions = _versions(svc, first, remote_task)
    # (Python 3.7 where pyenv has it, as the service's plan took it; else the service's own.)
    python = json.loads(runtimes[0].read_text())["python"]
    assert versions["python"] == python and versions["tensorflow"], versions

    # The next job on that runtime builds only its own layer there.
    second = unique_id("ray_rt")
    pkg2 = trainer_sdist(tmp_path / "b", "rayrt", [], salt="b", chief_waits=5)
    svc.client().create(_job(second, svc.stage(pkg2), "rayrt.task"))
    job = svc.wait_state(second, timeout=240)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    notes = _remote_notes(svc, second)
    assert any(f"{REMOTE}: Using runtime environment 2.11-py" in n for n in notes), notes
    assert not any(f"{REMOTE}: Building runtime environment" in n for n in notes), notes
    assert json.loads(runtimes[0].read_text())["runtime"] == "2.11"
