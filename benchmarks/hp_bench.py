"""Bayesian vs random search on the sample trainer: ``python benchmarks/hp_bench.py [--runs N]``.

It starts its own local service (``service_bench.Service``: a real subprocess in a temporary state
dir), stages examples/trainer, and submits pairs of tuning jobs over the same space: one with the
default algorithm (Bayesian optimisation, optuna's TPE) and one ``RANDOM_SEARCH``, 12 trials each,
2 in parallel, goal MINIMIZE of the trainer's held-out MSE after a short run. The space is the
learning rate (log scale, 1e-4 .. 0.3) and the batch size (4 .. 64): at 60 steps a small learning
rate leaves the MSE far from its floor, so the objective depends on it smoothly over four decades.

For each pair it prints the best objective of each job and the median trial of the random job;
the goal is the Bayesian best clearly below (better than) the median random trial. ``--runs``
repeats the pair (each run is a fresh, unseeded study) and reports every run.
"""

from __future__ import annotations

import argparse
import signal
import statistics
import sys
import time
from typing import Any

from bench_report import (  # beside this script
    Figure,
    Results,
    machine_line,
    print_table,
    raise_interrupt,
    workspace,
)
from service_bench import Service, kill_stragglers, verdict  # beside this script

from tui_app.entry.demo import build_trainer_sdist

TRIALS = 12
PARALLEL = 2
ARGS = ["--steps", "60", "--checkpoint-every", "20"]
SPACE = [
    {
        "parameterName": "learning_rate",
        "type": "DOUBLE",
        "minValue": 1e-4,
        "maxValue": 0.3,
        "scaleType": "UNIT_LOG_SCALE",
    },
    {"parameterName": "batch_size", "type": "INTEGER", "minValue": 4, "maxValue": 64},
]
CLEARLY = 0.5
"""The Bayesian best must be below this fraction of the median random trial."""


def tuning_job(job_id: str, package: str, algorithm: str | None) -> dict[str, Any]:
    hp: dict[str, Any] = {
        "goal": "MINIMIZE",
        "maxTrials": TRIALS,
        "maxParallelTrials": PARALLEL,
        "params": SPACE,
    }
    if algorithm:
        hp["algorithm"] = algorithm
    return {
        "jobId": job_id,
        "trainingInput": {
            "region": "us-central1",
            "pythonModule": "trainer.task",
            "packageUris": [package],
            "args": ARGS,
            "hyperparameters": hp,
        },
    }


def objectives(job: dict[str, Any]) -> list[float]:
    out = []
    for t in (job.get("trainingOutput") or {}).get("trials") or ():
        value = (t.get("finalMetric") or {}).get("objectiveValue")
        if t.get("state") == "SUCCEEDED" and isinstance(value, (int, float)):
            out.append(float(value))
    return out


def wait_done(svc: Service, job_ids: list[str], timeout: float = 600) -> dict[str, dict[str, Any]]:
    client = svc.client()
    deadline = time.monotonic() + timeout
    done: dict[str, dict[str, Any]] = {}
    while len(done) < len(job_ids):
        for job_id in job_ids:
            if job_id in done:
                continue
            job = client.get(job_id)
            if job["state"] in ("SUCCEEDED", "FAILED", "CANCELLED"):
                done[job_id] = job
        if time.monotonic() > deadline:
            raise TimeoutError(f"tuning jobs still running after {timeout:.0f} s")
        time.sleep(0.5)
    return done


def run(runs: int, keep: bool) -> int:
    res = Results()
    print(machine_line())
    ok_all = True
    with workspace("hp-bench-", keep) as root:
        svc = Service(root)
        try:
            svc.start()
            package = svc.stage(build_trainer_sdist(root / "build"))
            client = svc.client()
            for i in range(1, runs + 1):
                started = time.monotonic()
                bayes, rand = f"bayes_{i}", f"random_{i}"
                client.create(tuning_job(bayes, package, None))
                client.create(tuning_job(rand, package, "RANDOM_SEARCH"))
                jobs = wait_done(svc, [bayes, rand])
                took = time.monotonic() - started
                b, r = objectives(jobs[bayes]), objectives(jobs[rand])
                if not b or not r:
                    res.notes.append(f"run {i}: a job reported no objective ({jobs})")
                    ok_all = False
                    continue
                median_random = statistics.median(r)
                ok = min(b) < CLEARLY * median_random
                ok_all &= ok
                section = f"run {i} ({took:.0f} s, both jobs at once)"
                res.add(Figure(section, "Bayesian (TPE) best MSE", len(b), f"{min(b):.5f}"))
                res.add(Figure(section, "random best MSE", len(r), f"{min(r):.5f}"))
                res.add(
                    Figure(
                        section,
                        "random median trial MSE",
                        len(r),
                        f"{median_random:.5f}",
                        f"Bayesian best < {CLEARLY:g}x this",
                        verdict(ok, f"{min(b) / median_random:.2f}x"),
                    )
                )
                res.add(
                    Figure(
                        section,
                        "Bayesian median trial MSE",
                        len(b),
                        f"{statistics.median(b):.5f}",
                    )
                )
        finally:
            svc.stop()
            kill_stragglers(root)
    res.notes.append(
        f"{TRIALS} trials per job, {PARALLEL} in parallel, trainer args {' '.join(ARGS)}; "
        "space: learning_rate 1e-4..0.3 (log), batch_size 4..64; MSE: lower is better."
    )
    print_table(res)
    return 0 if ok_all else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=1, help="pairs of jobs to run (default 1)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary state dir")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, raise_interrupt)
    signal.signal(signal.SIGHUP, raise_interrupt)
    return run(max(1, args.runs), args.keep)


if __name__ == "__main__":
    sys.exit(main())
