"""Custom containers on the local service: ``python benchmarks/container_bench.py [--runs N]``.

Starts its own service (a real ``tui_app service run`` subprocess, token auth, its own state
dir on a free port) and the engine it finds (podman or docker), and prints:

1. create -> RUNNING of a BASIC container job whose image is present (goal: at most 2 s), polled
   with ``JobsClient.get`` every ~10 ms; create -> the container's first line in ``entries:list``
   (RUNNING means the replicas were started; the line means the container really runs); and
   create -> SUCCEEDED of the same job;
2. create -> RUNNING of a 3-replica CUSTOM container job (master, worker, ps);
3. cancel -> CANCELLED of a container whose process ignores SIGTERM, cancelled once it runs (the
   engine kills it after the grace period, 2 s here), and how many containers of the service are
   left afterwards.

The image is a tiny one this script imports itself (``/bin/busybox`` from Debian's busybox-static
as ``/bin/sh``), unless ``--image`` names another whose ``/bin/sh`` runs a command. Run it with
the project's virtualenv (``.venv/bin/python``): it imports ``tui_app``.
"""

from __future__ import annotations

import argparse
import io
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

from bench_report import (  # beside this script
    Figure,
    Results,
    machine_line,
    print_table,
    raise_interrupt,
    workspace,
)
from service_bench import PROJECT, Service, med_range, verdict

from tui_app.local.environments.containers import (
    LABEL_SERVICE,
    Engine,
    container_name,
    ours,
    remove,
    service_key,
)
from tui_app.local.environments.containers import find_engine as find_container_engine

TINY_IMAGE = "localhost/tui-app-bench-tiny:1"
TERMINAL = ("SUCCEEDED", "FAILED", "CANCELLED")


def tiny_image(engine: list[str]) -> str:
    """Import ``TINY_IMAGE`` (busybox as /bin/sh) unless the engine has it already."""
    have = subprocess.run(
        [*engine, "image", "inspect", TINY_IMAGE], capture_output=True, check=False
    )
    if have.returncode == 0:
        return TINY_IMAGE
    busybox = shutil.which("busybox")
    if busybox is None:
        raise SystemExit("busybox is not installed (Debian: apt install busybox-static).")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(busybox, "bin/busybox")
        link = tarfile.TarInfo("bin/sh")
        link.type, link.linkname = tarfile.SYMTYPE, "busybox"
        tar.addfile(link)
    subprocess.run(
        [*engine, "import", "-", TINY_IMAGE], input=buf.getvalue(), capture_output=True, check=True
    )
    return TINY_IMAGE


def container_job(job_id: str, image: str, script: str, **ti: Any) -> dict[str, Any]:
    training: dict[str, Any] = {
        "scaleTier": "BASIC",
        "region": "us-central1",
        "masterConfig": {"imageUri": image, "containerCommand": ["/bin/sh", "-c", script]},
    }
    training.update(ti)
    return {"jobId": job_id, "trainingInput": training}


def states_until_terminal(
    svc: Service, job_id: str, t0: float, limit: float = 120, lines: bool = False
) -> dict[str, float]:
    """Seconds from ``t0`` to the first get that showed each state (and with ``lines``, to
    the first ``entries:list`` that showed a line of the master, as ``line``)."""
    client = svc.client()
    seen: dict[str, float] = {}
    conn = svc.connect()
    while True:
        g0 = time.perf_counter()
        job = client.get(job_id)
        now = time.perf_counter()
        seen.setdefault(job["state"], now - t0)
        if lines and "line" not in seen and _has_line(svc, conn, job_id):
            seen["line"] = time.perf_counter() - t0
        if job["state"] in TERMINAL:
            if job["state"] == "FAILED":
                raise RuntimeError(f"{job_id} failed: {job.get('errorMessage')}")
            return seen
        if now - t0 > limit:
            raise TimeoutError(f"{job_id} still {job['state']} after {limit:g} s")
        time.sleep(max(0.0, 0.010 - (now - g0)))


def bench(svc: Service, engine: Engine, image: str, runs: int, res: Results) -> None:
    client = svc.client()
    section = "1 create→state, BASIC container job, image present"
    states_until_terminal(svc, "bench_ctr_warmup", _create(client, "bench_ctr_warmup", image))
    running, done, first_line = [], [], []
    for i in range(runs):
        job_id = f"bench_ctr_{i}"
        t0 = _create(client, job_id, image)
        seen = states_until_terminal(svc, job_id, t0, lines=True)
        first_line.append(seen["line"])
        running.append(seen["RUNNING"])
        done.append(seen["SUCCEEDED"])
    med = statistics.median(running)
    res.add(
        Figure(
            section,
            "create → first get showing RUNNING",
            runs,
            med_range(running, 1e3, 0, " ms"),
            "≤ 2 s",
            verdict(med <= 2.0, f"max {'≤' if max(running) <= 2.0 else '>'} 2 s"),
        )
    )
    res.add(
        Figure(
            section,
            "create → the container's first line in entries:list",
            runs,
            med_range(first_line, 1e3, 0, " ms"),
        )
    )
    res.add(
        Figure(
            section,
            "create → SUCCEEDED (a container that echoes one line)",
            runs,
            med_range(done, 1e3, 0, " ms"),
        )
    )

    section = "2 create→RUNNING, CUSTOM master+worker+ps"
    cluster = []
    for i in range(max(1, runs // 2)):
        job_id = f"bench_ctr_cluster_{i}"
        body = container_job(
            job_id,
            image,
            "echo started; sleep 0.2",
            scaleTier="CUSTOM",
            masterType="n1-standard-4",
            workerType="n1-standard-4",
            workerCount="1",
            parameterServerType="n1-standard-4",
            parameterServerCount="1",
        )
        t0 = time.perf_counter()
        client.create(body)
        cluster.append(states_until_terminal(svc, job_id, t0)["RUNNING"])
    res.add(
        Figure(
            section,
            "create → first get showing RUNNING",
            len(cluster),
            med_range(cluster, 1e3, 0, " ms"),
        )
    )

    section = "3 cancel, the container ignoring SIGTERM (grace 2 s)"
    cancels = []
    for i in range(max(1, runs // 2)):
        job_id = f"bench_ctr_cancel_{i}"
        script = "trap '' TERM; echo ready; while true; do sleep 1; done"
        client.create(container_job(job_id, image, script))
        _wait_ready(svc, engine, job_id)
        t0 = time.perf_counter()
        client.cancel(job_id)
        while client.get(job_id)["state"] != "CANCELLED":
            time.sleep(0.01)
        cancels.append(time.perf_counter() - t0)
    res.add(Figure(section, "cancel → CANCELLED", len(cancels), med_range(cancels, 1, 2, " s")))
    left = ours(engine, service_key(svc.state.root))
    res.add(
        Figure(
            section,
            f"containers labelled {LABEL_SERVICE} left",
            1,
            str(len(left)),
            "0",
            verdict(not left, f"{len(left)} left"),
        )
    )


def _has_line(svc: Service, conn: Any, job_id: str) -> bool:
    """Whether ``entries:list`` shows a line the job's master wrote."""
    body = {
        "resourceNames": [f"projects/{PROJECT}"],
        "filter": f'resource.labels.job_id="{job_id}" '
        'AND resource.labels.task_name="master-replica-0"',
        "pageSize": 1,
    }
    status, data = svc.request(conn, "POST", "/v2/entries:list?prettyPrint=false", body)
    return status == 200 and bool(data.get("entries"))


def _create(client: Any, job_id: str, image: str) -> float:
    t0 = time.perf_counter()
    client.create(container_job(job_id, image, f"echo {job_id}"))
    return t0


def _wait_ready(svc: Service, engine: Engine, job_id: str, limit: float = 60) -> None:
    """Until the container has said ``ready`` (its SIGTERM trap is set)."""
    name = container_name(service_key(svc.state.root), job_id, None, "master-replica-0")
    deadline = time.monotonic() + limit
    while True:
        logs = subprocess.run(
            engine.command("logs", name), capture_output=True, text=True, check=False
        )
        if "ready" in logs.stdout:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"{job_id}'s container did not start in {limit:g} s")
        time.sleep(0.02)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=10, help="jobs per figure (default 10)")
    p.add_argument("--image", default=None, help="an image whose /bin/sh runs a command")
    p.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = p.parse_args()
    signal.signal(signal.SIGTERM, raise_interrupt)
    status = find_container_engine()
    if status.engine is None:
        print(status.problem, file=sys.stderr)
        return 2
    engine = list(status.engine.argv)
    image = args.image or tiny_image(engine)
    print(machine_line())
    print(f"engine: {status.engine.label}; image: {image}")
    res = Results()
    with workspace("container-bench-", args.keep) as root:
        svc = Service(Path(root))
        try:
            svc.start()
            bench(svc, status.engine, image, args.runs, res)
        finally:
            if svc.proc is not None:
                svc.proc.terminate()
                svc.proc.wait(60)
            left = ours(status.engine, service_key(svc.state.root))
            remove(status.engine, left)
    print_table(res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
