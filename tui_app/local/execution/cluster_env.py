"""TF_CONFIG and CLUSTER_SPEC for each replica, as the platform set them.

As Google's "distributed training details" page has it: TF_CONFIG is ``{"cluster": ..., "task":
{"type", "index", "trial", "cloud"}, "job": <trainingInput>, "environment": "cloud"}``, where
``trial`` (a string from ``"1"``) is there for tuning jobs only, the cluster never lists the
evaluators, and the master is called ``chief`` from runtime 2.1 on. CLUSTER_SPEC, meant for
custom containers, has the same shape but always says ``master`` (TFX reads
``cluster_spec["cluster"]["master"][0]``).
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
from collections.abc import Mapping, Sequence
from typing import Any

from tui_app.local.execution.executor import Endpoint
from tui_app.model.jobs.cluster import Replica
from tui_app.model.jobs.tiers import Role


def free_ports(count: int) -> list[int]:
    """``count`` distinct free TCP ports on 127.0.0.1 (held open until all are chosen)."""
    socks = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _snake_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            re.sub(r"(?<!^)(?=[A-Z])", "_", k).lower(): _snake_keys(v) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_snake_keys(v) for v in value]
    return value


def uses_chief(training_input: Mapping[str, Any]) -> bool:
    """``chief`` for runtime 2.1+ (and custom containers that ask for it), else ``master``."""
    if (training_input.get("masterConfig") or {}).get("imageUri"):
        return bool(training_input.get("useChiefInTfConfig"))
    version = training_input.get("runtimeVersion")
    if not version:
        return False
    major, _, minor = version.partition(".")
    try:
        return (int(major), int(minor or 0)) >= (2, 1)
    except ValueError:
        return False


def cluster_addresses(
    replicas: Sequence[Replica], endpoints: Sequence[Endpoint]
) -> dict[str, list[str]]:
    """``{"master": [...], "worker": [...], "ps": [...]}`` from each replica's endpoint (its
    node's address and the port kept for it); evaluators are never in a cluster."""
    cluster: dict[str, list[str]] = {}
    for r, at in zip(replicas, endpoints, strict=True):
        if r.role is Role.EVALUATOR:
            continue
        cluster.setdefault(r.role.value, []).append(str(at))
    return cluster


def replica_env(
    job_id: str,
    training_input: Mapping[str, Any],
    replica: Replica,
    cluster: Mapping[str, list[str]],
    trial: str | None = None,
) -> dict[str, str]:
    """The environment variables that describe the cluster to one replica."""
    chief = uses_chief(training_input)
    task_type = replica.role.value
    if replica.role is Role.MASTER and chief:
        task_type = "chief"
    task: dict[str, Any] = {"type": task_type, "index": replica.index}
    if trial is not None:
        task["trial"] = trial
    task["cloud"] = hashlib.sha1(job_id.encode()).hexdigest()[:17] + "-ml"
    tf_cluster = {("chief" if k == "master" and chief else k): v for k, v in cluster.items()}
    job = _snake_keys(dict(training_input))
    tf_config = {"cluster": tf_cluster, "task": task, "job": job, "environment": "cloud"}
    spec_task = dict(task, type=replica.role.value)
    cluster_spec = {"cluster": dict(cluster), "task": spec_task, "job": job, "environment": "cloud"}
    return {
        "TF_CONFIG": json.dumps(tf_config),
        "CLUSTER_SPEC": json.dumps(cluster_spec),
        "CLOUD_ML_JOB_ID": job_id,
        **torch_env(replica, cluster),
    }


def torch_env(replica: Replica, cluster: Mapping[str, list[str]]) -> dict[str, str]:
    """torch.distributed's ``env://`` variables, as the platform set them for PyTorch jobs.

    Google's pages for distributed PyTorch (ml v1's, and Vertex AI's for its PyTorch containers)
    describe a cluster of one master and the workers, each replica one node: ``WORLD_SIZE`` is
    the number of nodes, ``RANK`` 0 on the master and 1.. on the workers in their order,
    ``MASTER_ADDR``/``MASTER_PORT`` where the master listens, the same on every node. Here that
    is the master's own address in TF_CONFIG's cluster, so ``init_process_group("gloo")`` meets
    on a port the service reserved for this job. Parameter servers and evaluators are not
    nodes of a PyTorch cluster and get none of these (a rank there would make the world wait
    for a member that never joins).
    """
    masters = list(cluster.get(Role.MASTER.value) or ())
    if not masters or replica.role not in (Role.MASTER, Role.WORKER):
        return {}
    workers = list(cluster.get(Role.WORKER.value) or ())
    host, _, port = masters[0].rpartition(":")
    rank = 0 if replica.role is Role.MASTER else 1 + replica.index
    return {
        "MASTER_ADDR": host,
        "MASTER_PORT": port,
        "WORLD_SIZE": str(len(masters) + len(workers)),
        "RANK": str(rank),
    }


REPLICA_MARKER = "TUI_APP_REPLICA"
"""Set to the replica's working dir in its environment, which every process it starts inherits:
how a sweep finds a job's processes that escaped their supervisor (``runner.sweep_leftovers``)."""


def gpu_env(devices: Sequence[str], device_order: str | None) -> dict[str, str]:
    """``CUDA_VISIBLE_DEVICES`` for a replica holding ``devices`` (empty: it holds none).

    A replica without GPUs gets an empty value, not the service's: on the platform a CPU machine
    had no GPU, and here one that saw every GPU would run on (and, as TensorFlow does, take the
    memory of) devices the scheduler gave to another job.
    """
    env = {"CUDA_VISIBLE_DEVICES": ",".join(devices)}
    if device_order:
        env["CUDA_DEVICE_ORDER"] = device_order
    return env
