"""Stalls and stacks (issue 43): ``python benchmarks/stall_bench.py [--rounds N]``.

One service (``service_bench.Service``) with ``--stall-seconds 5`` and a CPU sample every 0.5 s
(``TUI_APP_METRICS_SECONDS``), one job of the sample trainer made to hang: a master, two workers
and a parameter server (4 replicas), ``--hang-at-step 20``: ps 0 stops answering, every trainer
blocks in its ``pull``. Figures, each with its goal:

1. Flag latency: from the ps's line ``hanging at step 20`` (its log entry's timestamp) to the
   first ``jobs.get`` that carries ``stall`` with a stalled replica, minus the threshold. The
   replicas must be quiet and idle for the threshold; what is measured is what the service adds
   on top (a sample interval or two, a watch tick). Goal: <= 3 s.
2. ``:stacks`` of the 4 replicas, the service's answer (py-spy on every replica at once), N
   rounds. Goal: median <= 0.5 s.
3. On screen: the real ``JobsApp`` headless (``run_test``, 120x40) on the same service, the
   stacks view opened as ``S`` does (``JobsApp.open_stacks``), from the call to the first frame
   after the answer is drawn (the screen's ``takes`` counter, then one more refresh). Goal:
   <= 1 s, N rounds (each a fresh screen).
4. Bookkeeping per watch tick: ``StallWatch.check`` timed here, in this process, over 200
   synthetic live replicas (the service's code, fed made-up handles and samples): what a tick
   costs next to its 0.5-2 s interval.

Run it with the project's virtualenv (it imports ``tui_app`` and builds the trainer's sdist).
Everything lives in a temporary directory that is removed at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from service_bench import TRAINER_SRC, Service

from tui_app.entry.demo import build_sdist

PROJECT = "bench-project"
STALL_SECONDS = 5.0
HANG_STEP = 20
CLUSTER = {
    "scaleTier": "CUSTOM",
    "masterType": "standard",
    "workerType": "standard",
    "workerCount": "2",
    "parameterServerType": "standard",
    "parameterServerCount": "1",
}


class StallService(Service):
    extra_args = ("--stall-seconds", f"{STALL_SECONDS:g}", "--slots", "8")


def _get(svc: Service, path: str) -> Any:
    req = urllib.request.Request(svc.url + path)
    req.add_header("Authorization", f"Bearer {svc.token}")
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.loads(resp.read())


def _post(svc: Service, path: str, body: Any) -> Any:
    req = urllib.request.Request(svc.url + path, data=json.dumps(body).encode(), method="POST")
    req.add_header("Content-Type", "application/json")
    req.add_header("Authorization", f"Bearer {svc.token}")
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.loads(resp.read())


def _wait(cond: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = cond()
        if got:
            return got
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(0.05)


def _hang_time(svc: Service, job_id: str) -> float | None:
    body = {
        "resourceNames": [f"projects/{PROJECT}"],
        "filter": f'resource.labels.job_id="{job_id}" AND resource.labels.task_name="ps-replica-0"',
        "pageSize": 1000,
    }
    entries = _post(svc, "/v2/entries:list", body).get("entries", [])
    for e in entries:
        text = e.get("textPayload") or (e.get("jsonPayload") or {}).get("message", "")
        if str(text).startswith(f"hanging at step {HANG_STEP}"):
            from tui_app.model.jobs.wire import parse_time

            moment = parse_time(e["timestamp"])
            return moment.timestamp() if moment else None
    return None


def _stats(values: list[float]) -> str:
    return (
        f"median {statistics.median(values):.3f} s "
        f"(min {min(values):.3f}, max {max(values):.3f}, n={len(values)})"
    )


async def _on_screen(svc: Service, work: Path, job_id: str, rounds: int) -> list[float]:
    from tui_app.config.settings import Profile, Settings
    from tui_app.entry.launch import connector
    from tui_app.shell.app import JobsApp
    from tui_app.shell.screens.stacks_screen import StacksScreen

    app = JobsApp(
        Settings(),
        connector(Profile("local"), svc.state.root),
        PROJECT,
        "local",
        settings_file=work / "settings.yaml",
    )
    times: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(rounds):
            t0 = time.perf_counter()
            app.open_stacks(job_id)
            while not (isinstance(app.screen, StacksScreen) and app.screen.takes):
                await asyncio.sleep(0.005)
            await pilot.pause()  # the frame that draws it
            times.append(time.perf_counter() - t0)
            app.pop_screen()
            await pilot.pause()
    return times


def _watch_tick_cost(replicas: int) -> float:
    """Seconds one ``StallWatch.check`` takes over ``replicas`` live replicas (synthetic)."""
    from types import SimpleNamespace

    from tui_app.local.execution.stall_watch import StallWatch

    now = time.time()
    handles = [
        SimpleNamespace(
            replica=SimpleNamespace(task_name=f"worker-replica-{i}"),
            started=now - 10,
            sources=[SimpleNamespace(last_line_at=now - 1, last_line="step 1")] * 2,
        )
        for i in range(replicas)
    ]
    runner = SimpleNamespace(live_replicas=lambda: [(None, h) for h in handles])
    latest = {("p", "j", "", f"worker-replica-{i}"): (now, 50.0) for i in range(replicas)}
    host = SimpleNamespace(runners={("p", "j"): runner})
    watch = StallWatch(host, lambda: latest, 600.0, 2.0)
    loop = asyncio.new_event_loop()
    try:
        n = 200
        t0 = time.perf_counter()
        for _ in range(n):
            loop.run_until_complete(watch.check(now))
        return (time.perf_counter() - t0) / n
    finally:
        loop.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="stall-bench-") as tmp:
        root = Path(tmp)
        os.environ["TUI_APP_METRICS_SECONDS"] = "0.5"
        print("building the trainer sdist...", flush=True)
        sdist = build_sdist(TRAINER_SRC, root / "build")
        svc = StallService(root)
        svc.start()
        try:
            uri = svc.stage(sdist)
            job_id = f"hung_{time.strftime('%Y%m%d_%H%M%S')}"
            body = {
                "jobId": job_id,
                "trainingInput": {
                    "region": "us-central1",
                    "pythonModule": "trainer.task",
                    "packageUris": [uri],
                    "args": [
                        "--steps",
                        "100000",
                        "--sleep",
                        "0.02",
                        "--hang-at-step",
                        str(HANG_STEP),
                    ],
                    **CLUSTER,
                },
            }
            _post(svc, f"/v1/projects/{PROJECT}/jobs", body)
            hung_at = _wait(lambda: _hang_time(svc, job_id), 120, "the hang line")

            def flagged() -> float | None:
                job = _get(svc, f"/v1/projects/{PROJECT}/jobs/{job_id}")
                stall = job.get("stall") or {}
                stalled = [r for r in stall.get("replicas", ()) if r["state"] == "stalled"]
                return time.time() if stalled else None

            seen = _wait(flagged, 120, "the stall flag")
            flag_latency = seen - hung_at - STALL_SECONDS
            answers = []
            for _ in range(args.rounds):
                t0 = time.perf_counter()
                got = _get(svc, f"/v1/projects/{PROJECT}/jobs/{job_id}:stacks")
                answers.append(time.perf_counter() - t0)
                assert len(got["replicas"]) == 4 and not any("error" in r for r in got["replicas"])
            screen = asyncio.run(_on_screen(svc, root, job_id, args.rounds))
            tick = _watch_tick_cost(200)
            print()
            print(f"4-replica job hung at step {HANG_STEP}, stall threshold {STALL_SECONDS:g} s")
            print(
                f"  1. flagged after the threshold: {flag_latency:.2f} s   goal <= 3 s   "
                f"{'PASS' if flag_latency <= 3 else 'FAIL'}"
            )
            print(
                f"  2. :stacks of 4 replicas: {_stats(answers)}   goal median <= 0.5 s   "
                f"{'PASS' if statistics.median(answers) <= 0.5 else 'FAIL'}"
            )
            print(
                f"  3. S -> stacks on screen: {_stats(screen)}   goal <= 1 s   "
                f"{'PASS' if max(screen) <= 1.0 else 'FAIL'}"
            )
            print(
                f"  4. one watch tick over 200 replicas: {tick * 1e3:.2f} ms "
                f"(every 0.5-2 s: {tick / 0.5 * 100:.3f}% of a core at most)"
            )
            _post(svc, f"/v1/projects/{PROJECT}/jobs/{job_id}:cancel", {})
        finally:
            svc.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
