"""A real Ray cluster of several nodes on this machine, every node on loopback.

``python -m tests.support.ray_cluster DIR [NODES]`` starts a head node and NODES-1 more (each
with its own loopback address, 127.0.0.2, .3, ...: Ray rewrites 127.0.0.1 to the machine's
network address when a driver joins, so no node uses it), writes the head's address to
``DIR/address`` once every node has joined, and shuts the cluster down on SIGTERM. The test
session starts one (``tests/conftest.py``) and every Ray test shares it.

Each node declares 8 CPUs and 32 GiB of memory to Ray: logical amounts the scheduler shares out
(the machine's real cores are time-shared), enough for the sample jobs' ``standard`` replicas
(4 vCPU, 15 GB) two to a node.

The second node declares two GPUs to Ray (``NODE_GPUS``): logical ones, with no device behind
them, as Ray allows on any machine. Ray schedules them and hands their ids to the actor that
holds them as it would real ones, so GPU bundles, their placement and ``CUDA_VISIBLE_DEVICES``
are tested here; a trainer's use of a real device is not.

The last node of the tests' cluster (``main``) stands in for a machine that shares no
filesystem with the service: it uses none of the service's folders
(``TUI_APP_RAY_NODE_LOCAL_ONLY``), so packages are shipped to it and runtime environments built
on it, under its own root in DIR.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

NODE_CPUS = 8
NODE_MEMORY = 32 * 1024**3
NODE_GPUS = {1: 2}
"""GPUs declared by node index (0 is the head): the second node, 127.0.0.3, has two."""
OBJECT_STORE = 100 * 1024**2


LOCAL_ONLY_ENV = "TUI_APP_RAY_NODE_LOCAL_ONLY"
NODE_ROOT_ENV = "TUI_APP_RAY_NODE_ROOT"


def node_args(
    address: str,
    cpus: int = NODE_CPUS,
    memory: int = NODE_MEMORY,
    env: dict[str, str] | None = None,
    gpus: int = 0,
) -> dict[str, Any]:
    args: dict[str, Any] = {
        "num_cpus": cpus,
        "num_gpus": gpus,
        "memory": memory,
        "object_store_memory": OBJECT_STORE,
        "node_ip_address": address,
        "include_dashboard": False,
    }
    if env:
        args["env_vars"] = env  # the raylet's, which its workers (the actors) inherit
    return args


def start(
    count: int,
    first: int = 2,
    cpus: int = NODE_CPUS,
    memory: int = NODE_MEMORY,
    local_only: Path | None = None,
) -> Any:
    """A started ``ray.cluster_utils.Cluster`` of ``count`` nodes at 127.0.0.<first>, ...,
    each declaring ``cpus`` CPUs and ``memory`` bytes to Ray. ``local_only``: the last node
    keeps its copies there and uses none of the service's folders (module doc)."""
    from ray.cluster_utils import Cluster

    head = node_args(f"127.0.0.{first}", cpus, memory)
    cluster = Cluster(initialize_head=True, head_node_args=head)
    for i in range(1, count):
        env = None
        if local_only is not None and i == count - 1:
            env = {LOCAL_ONLY_ENV: "1", NODE_ROOT_ENV: str(local_only)}
        gpus = NODE_GPUS.get(i, 0)
        cluster.add_node(**node_args(f"127.0.0.{first + i}", cpus, memory, env, gpus))
    cluster.wait_for_nodes()
    return cluster


def main(argv: list[str]) -> int:
    folder = Path(argv[0])
    count = int(argv[1]) if len(argv) > 1 else 3
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        cluster = start(count, local_only=folder / f"node-127.0.0.{1 + count}")
    except Exception as exc:
        (folder / "error").write_text(f"{type(exc).__name__}: {exc}")
        return 1
    tmp = folder / "address.tmp"
    tmp.write_text(cluster.address)
    os.replace(tmp, folder / "address")
    stop.wait()
    cluster.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
