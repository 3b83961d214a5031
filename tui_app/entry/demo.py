"""``tui-app --demo``: the local service with sample jobs to look at, for a newcomer's first minute.

It starts the embedded service if none answers, stages examples/trainer as a package at a gs://
URI of the service and submits sample jobs; then the TUI opens on them. Run again, it finds the
jobs of the first run on the service (``demo_jobs_on``) and submits nothing: five more jobs,
another five-minute cluster among them, are not what a second look asks for. ``--again`` does
submit a new set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui_app.api.connection import local_service, service_health
from tui_app.api.jobs_client import JobsClient, make_credentials
from tui_app.api.resubmit import create_with_fresh_id
from tui_app.config.executors import DEFAULT_EXECUTOR, runs_here
from tui_app.config.locations import default_state_dir
from tui_app.config.presets import SAMPLE_TRAINER_DIRS, sample_trainer_dir
from tui_app.model.jobs.job_id import base_name, new_job_id
from tui_app.shell.package_build import build_sdist

TRAINER_DIR = sample_trainer_dir() or SAMPLE_TRAINER_DIRS[0]
"""The sample trainer's folder (``config.presets.sample_trainer_dir``: the builder's built-in
presets run it too); where the install lacks it, where it should have been, for the error."""
DEMO_BUCKET = "tui-app-demo"
DEMO_LABELS = {"owner": "demo"}
"""Every demo job carries these: an earlier demo's jobs are found by them and their names."""

__all__ = [
    "DemoStart",
    "build_sdist",
    "build_trainer_sdist",
    "demo_base_names",
    "demo_jobs_on",
    "sample_jobs",
    "start_demo",
    "submit_demo_jobs",
]


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
        return {"jobId": job_id, "labels": dict(DEMO_LABELS), "trainingInput": ti}

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


def demo_base_names() -> tuple[str, ...]:
    """The sample jobs' base names (``bad_lr``, ``mnist``, ...), in submission order."""
    return tuple(base_name(str(job["jobId"])) for job in sample_jobs("gs://unused/package"))


def demo_jobs_on(client: JobsClient) -> list[str]:
    """The ids of an earlier demo's jobs on the service, in any state; none unless every sample
    job's base name is among them.

    A demo job is one labelled as the demo labels its jobs (``owner=demo``) whose base name is a
    sample job's: a job of the user's own called ``mnist`` is not the demo's. Every name must be
    there, so a set the service refused half of is submitted whole again.

    Raises:
        ApiCallError: the service cannot be asked.
    """
    names = set(demo_base_names())
    owner = DEMO_LABELS["owner"]
    found = [
        str(job["jobId"])
        for job in client.iter_jobs(f"labels.owner={owner}")
        if base_name(str(job.get("jobId", ""))) in names
        and (job.get("labels") or {}).get("owner") == owner
    ]
    return found if {base_name(j) for j in found} >= names else []


@dataclass(frozen=True)
class DemoStart:
    """What ``start_demo`` did: submitted a set of sample jobs, or found an earlier one."""

    submitted: list[str] = field(default_factory=list)
    """The ids of the sample jobs submitted now."""
    present: list[str] = field(default_factory=list)
    """When nothing was submitted: the ids of the earlier demo's jobs on the service."""

    def line(self, again_command: str) -> str:
        """What ``tui-app --demo`` says before the list opens, in one line.

        Args:
            again_command: The command that submits a new set (``tui-app --demo --again``).
        """
        if self.present:
            n = len(self.present)
            return (
                f"The demo's jobs are already on the local service ({n} job{'s' * (n != 1)}): "
                f"opening the list. `{again_command}` submits a new set."
            )
        return f"Submitted {len(self.submitted)} sample jobs: {', '.join(self.submitted)}"


def start_demo(
    state_dir: Path | None, project: str, options: Sequence[str] = (), *, again: bool = False
) -> DemoStart:
    """Start the local service if needed (with ``options``: the profile's, ``service_options``)
    and submit the sample jobs, unless an earlier demo's are there already and not ``again``.

    Raises:
        ApiCallError: the service refused a job or cannot be reached.
        FileNotFoundError: the install lacks the sample trainer.
    """
    from tui_app.local.paths import StateDir

    root = state_dir or default_state_dir()
    url, token = local_service(root, options=options)
    client = JobsClient(url, project, make_credentials(token))
    if not again:
        present = demo_jobs_on(client)
        if present:
            return DemoStart(present=present)
    state = StateDir(root)
    sdist = build_trainer_sdist(state.gcs_path(f"gs://{DEMO_BUCKET}/packages"))
    package = f"gs://{DEMO_BUCKET}/packages/{sdist.name}"
    health = service_health(url) or {}
    capacity = health.get("capacity") or {}
    slots = capacity.get("slots") if isinstance(capacity, dict) else None
    executor = health.get("executor")
    if isinstance(executor, dict) and not runs_here(executor.get("name", DEFAULT_EXECUTOR)):
        slots = CLUSTER_DEMO_SLOTS  # a cluster decides what fits: the 4-replica job
    bodies = sample_jobs(package, slots if isinstance(slots, int) and slots > 0 else 2)
    # A set submitted within the second of an earlier one (--again at once) wants its ids:
    # each is stamped again with a later second, as R does, instead of failing the demo.
    return DemoStart(
        submitted=[str(create_with_fresh_id(client.create, body)["jobId"]) for body in bodies]
    )


def submit_demo_jobs(
    state_dir: Path | None, project: str, options: Sequence[str] = ()
) -> list[str]:
    """Start the local service if needed (with ``options``), stage the sample trainer and submit
    a new set of sample jobs, whatever is on the service already (``--demo --again``).

    Raises:
        ApiCallError: the service refused a job or cannot be reached.
        FileNotFoundError: the install lacks the sample trainer.
    """
    return start_demo(state_dir, project, options, again=True).submitted
