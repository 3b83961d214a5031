"""``tui-app --demo``: the local service with sample jobs to look at, for a newcomer's first minute.

It starts the embedded service if none answers, stages examples/trainer as a package at a gs://
URI of the service and submits sample jobs; then the TUI opens on them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tui_app.api.connection import local_service, service_health
from tui_app.api.jobs_client import JobsClient, make_credentials
from tui_app.config.locations import default_state_dir
from tui_app.model.job_id import new_job_id
from tui_app.shell.package_build import build_sdist

_PACKAGE = Path(__file__).resolve().parents[1]
"""The ``tui_app`` folder (this module is ``tui_app/entry/demo.py``)."""
# An installed wheel carries the sample trainer as tui_app/sample_trainer (setup.py maps it
# there); a checkout or an editable install has it in examples/trainer.
TRAINER_DIR = next(
    (
        d
        for d in (_PACKAGE / "sample_trainer", _PACKAGE.parent / "examples" / "trainer")
        if d.is_dir()
    ),
    _PACKAGE / "sample_trainer",
)
DEMO_BUCKET = "tui-app-demo"

__all__ = ["build_sdist", "build_trainer_sdist", "sample_jobs", "submit_demo_jobs"]


def build_trainer_sdist(dest_dir: Path) -> Path:
    """The sample trainer (examples/trainer) as an sdist in ``dest_dir``."""
    if not (TRAINER_DIR / "setup.py").exists():
        raise FileNotFoundError(
            f"The sample trainer is not at {TRAINER_DIR}: this install of tui-app is "
            "incomplete; reinstall it (pip install tui-app) or run from a checkout."
        )
    return build_sdist(TRAINER_DIR, dest_dir)


CLUSTER_DEMO_SLOTS = 4
"""On a service whose replicas run on a Ray cluster: a master, two workers and a parameter
server, which a 3-node cluster spreads over its nodes."""


def sample_jobs(package: str, slots: int = 2) -> list[dict[str, Any]]:
    """A moving list, sized to a machine of ``slots`` CPU slots (the service's capacity).

    In submission order: one whose loss blows up and fails within seconds, one that succeeds, a
    small hyperparameter tuning job (6 Bayesian trials of the learning rate and batch size, 2 at a
    time where there is room) whose trials table fills in as they finish, a long distributed
    job as big as the machine (a master, a parameter server and ``slots - 2`` workers, at least
    one), and one more job that waits QUEUED behind it.

    Admission is strictly in order, so the tuning job goes before the cluster: its first trial
    starts as soon as the failing job has freed a slot (a few seconds), and the cluster starts
    once the tuning job is done, holding every slot for about five minutes while the last job
    waits and says for what.
    """

    def job(base: str, args: list[str], **extra: Any) -> dict[str, Any]:
        job_id = new_job_id(base)
        ti: dict[str, Any] = {
            "region": "us-central1",
            "pythonModule": "trainer.task",
            "packageUris": [package],
            "args": args,
            "jobDir": f"gs://{DEMO_BUCKET}/{job_id}",
        }
        ti.update(extra)
        return {"jobId": job_id, "labels": {"owner": "demo"}, "trainingInput": ti}

    cluster = {
        "scaleTier": "CUSTOM",
        "masterType": "standard",
        "workerType": "standard",
        "workerCount": str(max(1, slots - 2)),
        "parameterServerType": "standard",
        "parameterServerCount": "1",
    }
    tuning = job(
        "mnist_hptuning",
        ["--steps", "120", "--sleep", "0.02", "--checkpoint-every", "20"],
        hyperparameters={
            "goal": "MINIMIZE",  # the trainer reports its held-out MSE
            "maxTrials": 6,
            "maxParallelTrials": 2,
            "enableTrialEarlyStopping": True,
            "params": [
                {
                    "parameterName": "learning_rate",
                    "type": "DOUBLE",
                    "minValue": 0.0005,
                    "maxValue": 0.2,
                    "scaleType": "UNIT_LOG_SCALE",
                },
                {
                    "parameterName": "batch_size",
                    "type": "DISCRETE",
                    "discreteValues": [8, 16, 32],
                },
            ],
        },
    )
    return [
        # A learning rate too big for SGD on this problem: the loss grows ~12x a step until it
        # overflows (about step 200, ten seconds in) and the trainer stops with the cause; its
        # curve, with the inf marked, is what the metrics view (M) is for.
        job("bad_lr", ["--steps", "400", "--sleep", "0.05", "--learning-rate", "3"]),
        job("mnist", ["--steps", "300", "--sleep", "0.03"]),
        tuning,
        job("census_dist", ["--steps", "3000", "--sleep", "0.2"], **cluster),
        job("mnist_large", ["--steps", "600", "--sleep", "0.05"]),
    ]


def submit_demo_jobs(
    state_dir: Path | None, project: str, options: Sequence[str] = ()
) -> list[str]:
    """Start the local service if needed (with ``options``: the profile's, ``service_options``),
    stage the sample trainer, submit the sample jobs.

    Raises:
        ApiCallError: the service refused a job or cannot be reached.
        FileNotFoundError: the install lacks the sample trainer.
    """
    from tui_app.local.paths import StateDir

    root = state_dir or default_state_dir()
    url, token = local_service(root, options=options)
    state = StateDir(root)
    sdist = build_trainer_sdist(state.gcs_path(f"gs://{DEMO_BUCKET}/packages"))
    package = f"gs://{DEMO_BUCKET}/packages/{sdist.name}"
    health = service_health(url) or {}
    capacity = health.get("capacity") or {}
    slots = capacity.get("slots") if isinstance(capacity, dict) else None
    executor = health.get("executor")
    if isinstance(executor, dict) and executor.get("name", "local") != "local":
        slots = CLUSTER_DEMO_SLOTS  # a cluster decides what fits: the 4-replica job
    client = JobsClient(url, project, make_credentials(token))
    bodies = sample_jobs(package, slots if isinstance(slots, int) and slots > 0 else 2)
    return [client.create(body)["jobId"] for body in bodies]
