"""Jobs run for real: lifecycle, distributed training through a ps, cancel of whole trees.

Issue 2, done-when 1, 2 and 4, through google-api-python-client and google-cloud-logging.
"""

from __future__ import annotations

import json
import re
import signal
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from google.cloud import logging as gcl

from tests.conftest import unique_id
from tests.support.live_service import CLUSTER, PROJECT, LiveService, basic_job
from tui_app.api.jobs_client import make_credentials


def _logging(service: LiveService) -> gcl.Client:
    return gcl.Client(
        project=PROJECT,
        credentials=make_credentials(service.token),
        _use_grpc=False,
        client_options={"api_endpoint": service.url},
    )


def _entries(service: LiveService, job_id: str, extra: str = "") -> list[Any]:
    flt = (
        f'resource.type="ml_job" AND resource.labels.job_id="{job_id}" '
        f'AND timestamp>="1970-01-01T00:00:00Z"{extra}'
    )
    return list(_logging(service).list_entries(filter_=flt, order_by=gcl.ASCENDING, page_size=1000))


def _text(entry: Any) -> str:
    payload = entry.payload
    return str(payload.get("message") if isinstance(payload, dict) else payload)


def test_basic_job_lifecycle_and_logs(service: LiveService, package_uri: str) -> None:
    """A BASIC job goes QUEUED, PREPARING, RUNNING, SUCCEEDED; its master lines come in order."""
    client = service.client()
    job_id = unique_id("basic")
    created = client.create(basic_job(job_id, package_uri, "--steps", "60", "--log-every", "1"))
    assert created["state"] == "QUEUED"
    assert created["trainingInput"]["scaleTier"] == "BASIC"
    seen = [created["state"]]
    deadline = time.monotonic() + 60
    while seen[-1] not in ("SUCCEEDED", "FAILED", "CANCELLED") and time.monotonic() < deadline:
        state = client.get(job_id)["state"]
        if state != seen[-1]:
            seen.append(state)
        time.sleep(0.02)
    job = client.get(job_id)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    assert set(seen) <= {"QUEUED", "PREPARING", "RUNNING", "SUCCEEDED"}
    assert job["createTime"] <= job["startTime"] <= job["endTime"]
    assert job["trainingOutput"]["consumedMLUnits"] >= 0

    entries = _entries(service, job_id)
    service_msgs = [_text(e) for e in entries if e.resource.labels["task_name"] == "service"]
    order = [
        "Validating job requirements...",
        "Waiting for job to be provisioned.",
        "Waiting for training program to start.",
        "Job is running.",
        "Job completed successfully.",
    ]
    positions = [service_msgs.index(m) for m in order]
    assert positions == sorted(positions), service_msgs

    master = _entries(service, job_id, ' AND resource.labels.task_name="master-replica-0"')
    steps = [int(m.group(1)) for e in master if (m := re.match(r"step (\d+) loss=", _text(e)))]
    assert steps == list(range(1, 61))
    stamps = [(e.timestamp, e.insert_id) for e in master]
    assert stamps == sorted(stamps)
    assert all(e.severity == "INFO" for e in master if _text(e).startswith("step "))
    losses = [float(_text(e).split("loss=")[1].split()[0]) for e in master if "loss=" in _text(e)]
    assert losses[-1] < losses[0]


def test_custom_cluster_trains_through_parameter_server(
    service: LiveService, package_uri: str
) -> None:
    """Master + 2 workers + 1 ps: correct TF_CONFIG each, loss falls, ps stopped at the end."""
    client = service.client()
    job_id = unique_id("custom")
    job_dir = f"gs://test-bucket/out/{job_id}"
    body = basic_job(
        job_id,
        package_uri,
        "--steps",
        "150",
        "--log-every",
        "1",
        **CLUSTER,
        jobDir=job_dir,
    )
    client.create(body)
    job = service.wait_state(job_id, timeout=90)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    # The four supervisors were spawned at once, each with the stop signals held for the
    # instant of its spawn: the service's own main thread must have them back afterwards.
    status = Path(f"/proc/{service.proc.pid}/status").read_text()
    blocked = int(next(ln for ln in status.splitlines() if ln.startswith("SigBlk:")).split()[1], 16)
    assert blocked & (1 << (signal.SIGTERM - 1) | 1 << (signal.SIGINT - 1)) == 0, hex(blocked)

    local_dir = service.state_dir / "gcs" / "test-bucket" / "out" / job_id
    configs = {p.stem: json.loads(p.read_text()) for p in (local_dir / "tf_config").glob("*.json")}
    # No runtime version: the chief is "master" (runtime 2.1+ says "chief": test_runtimes.py).
    assert set(configs) == {"master-0", "worker-0", "worker-1", "ps-0"}
    cluster = configs["master-0"]["cluster"]
    assert len(cluster["master"]) == 1 and len(cluster["worker"]) == 2 and len(cluster["ps"]) == 1
    assert "evaluator" not in cluster
    for name, cfg in configs.items():
        assert cfg["cluster"] == cluster
        kind, index = name.rsplit("-", 1)
        assert cfg["task"]["type"] == kind and cfg["task"]["index"] == int(index)
        assert cfg["environment"] == "cloud"
        assert cfg["job"]["scale_tier"] == "CUSTOM"
        assert all(
            addr.startswith("127.0.0.1:") for addrs in cfg["cluster"].values() for addr in addrs
        )

    tasks = {e.resource.labels["task_name"] for e in _entries(service, job_id)}
    assert {"master-replica-0", "worker-replica-0", "worker-replica-1", "ps-replica-0"} <= tasks
    ps_lines = [
        _text(e) for e in _entries(service, job_id, ' AND resource.labels.task_name="ps-replica-0"')
    ]
    assert any("global_step=" in line for line in ps_lines)
    lines = [_text(e) for e in _entries(service, job_id)]
    # (global step, loss): replicas train asynchronously, so order by the step, not the time.
    losses = sorted(
        (int(m.group(1)), float(m.group(2)))
        for ln in lines
        if (m := re.match(r"step (\d+) loss=(\S+)", ln))
    )
    final = [float(ln.split("=")[1]) for ln in lines if ln.startswith("final loss=")]
    assert len(losses) >= 100 and final  # every trainer logged every step
    assert final[0] < losses[0][1] / 5  # training through the parameter server converged

    ps_dir = service.state_dir / "jobs" / PROJECT / job_id / "ps-replica-0"
    status = json.loads((ps_dir / "status.json").read_text())
    assert status["stopped"] is True  # the service stopped it; it did not exit by itself
    pid = json.loads((ps_dir / "pid.json").read_text())["replica"]
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def _job_processes(state_dir: Path, job_id: str) -> list[psutil.Process]:
    """Every live process whose environment or command line belongs to the job."""
    found = []
    for proc in psutil.process_iter(["cmdline", "environ"]):
        try:
            env = proc.info["environ"] or {}
            cmd = " ".join(proc.info["cmdline"] or [])
        except (psutil.Error, OSError):
            continue
        mine = env.get("CLOUD_ML_JOB_ID") == job_id or (job_id in cmd and str(state_dir) in cmd)
        if mine and proc.status() != psutil.STATUS_ZOMBIE:
            found.append(proc)
    return found


def test_cancel_kills_whole_process_tree(service: LiveService, package_uri: str) -> None:
    """Children that ignore SIGTERM or left the process group are gone within 10 s of cancel."""
    client = service.client()
    job_id = unique_id("cancel")
    client.create(
        basic_job(
            job_id,
            package_uri,
            "--steps",
            "100000",
            "--sleep",
            "0.1",
            "--ignore-sigterm",
            "--spawn-child-new-session",
        )
    )
    service.wait_state(job_id, ("RUNNING",), timeout=30)
    deadline = time.monotonic() + 15
    while len(_job_processes(service.state_dir, job_id)) < 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    before = _job_processes(service.state_dir, job_id)
    assert len(before) >= 3, before  # trainer + the SIGTERM-ignoring child + the setsid child

    t0 = time.monotonic()
    client.cancel(job_id)
    assert client.get(job_id)["state"] in ("CANCELLING", "CANCELLED")
    job = service.wait_state(job_id, ("CANCELLED",), timeout=10)
    while _job_processes(service.state_dir, job_id) and time.monotonic() - t0 < 10:
        time.sleep(0.1)
    assert _job_processes(service.state_dir, job_id) == []
    assert time.monotonic() - t0 < 10
    assert job["endTime"]
    assert job["errorMessage"] == "Job cancelled by user."

    status, body = service.request("POST", f"/v1/projects/{PROJECT}/jobs/{job_id}:cancel")
    assert status == 400
    assert body["error"]["status"] == "FAILED_PRECONDITION"


def test_failing_worker_fails_job_with_traceback(service: LiveService, package_uri: str) -> None:
    """errorMessage names the replica and status and carries its traceback."""
    client = service.client()
    job_id = unique_id("failw")
    client.create(
        basic_job(
            job_id,
            package_uri,
            "--steps",
            "2000",
            "--sleep",
            "0.01",
            "--fail-at-step",
            "20",
            "--fail-task",
            "worker:1",
            **CLUSTER,
        )
    )
    job = service.wait_state(job_id, timeout=60)
    assert job["state"] == "FAILED"
    message = job["errorMessage"]
    assert message.startswith("The replica worker 1 exited with a non-zero status of 1.")
    assert "Traceback (most recent call last)" in message
    assert "Injected failure at step 20" in message
    assert job["endTime"]
    errors = _entries(
        service, job_id, ' AND resource.labels.task_name="worker-replica-1" AND severity>=ERROR'
    )
    assert any("Injected failure" in _text(e) for e in errors)


@pytest.mark.parametrize(
    ("tier", "replicas"),
    [("BASIC_GPU", 1), ("BASIC_TPU", 1), ("STANDARD_1", 8)],
)
def test_predefined_tiers_run_their_replicas(
    service: LiveService, package_uri: str, tier: str, replicas: int
) -> None:
    """Each scale tier runs the replicas of the one tier table."""
    client = service.client()
    job_id = unique_id(tier.lower())
    client.create(basic_job(job_id, package_uri, "--steps", "30", scaleTier=tier))
    job = service.wait_state(job_id, timeout=90)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    dirs = [p for p in (service.state_dir / "jobs" / PROJECT / job_id).iterdir() if p.is_dir()]
    assert len(dirs) == replicas
