"""``tui-app --demo``: the local service with sample jobs to look at, for a newcomer's first minute.

Until the TUI lands this is also what a bare ``tui-app`` does: it starts the embedded service if
none answers, stages examples/trainer as a package, submits sample jobs and follows them.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tui_app.api.errors import ApiCallError
from tui_app.api.jobs_client import JobsClient, make_credentials
from tui_app.local import service_cli as sc
from tui_app.local.paths import StateDir
from tui_app.model.job_id import new_job_id
from tui_app.model.states import JobState

TRAINER_DIR = Path(__file__).resolve().parent.parent / "examples" / "trainer"
DEMO_BUCKET = "tui-app-demo"


def build_trainer_sdist(dest_dir: Path) -> Path:
    """Build examples/trainer into an sdist in ``dest_dir`` (from a copy: the repo stays clean)."""
    if not (TRAINER_DIR / "setup.py").exists():
        raise FileNotFoundError(
            f"The sample trainer is not at {TRAINER_DIR}; run tui-app --demo from a checkout."
        )
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "trainer"
        skip = shutil.ignore_patterns("*.egg-info", "build", "dist")
        shutil.copytree(TRAINER_DIR, src, ignore=skip)
        out = Path(tmp) / "dist"
        subprocess.run(
            [sys.executable, "setup.py", "-q", "sdist", "-d", str(out)],
            cwd=src,
            check=True,
            capture_output=True,
        )
        (sdist,) = out.glob("*.tar.gz")
        dest_dir.mkdir(parents=True, exist_ok=True)
        target = dest_dir / sdist.name
        shutil.copy(sdist, target)
        return target


def sample_jobs(package: str) -> list[dict[str, Any]]:
    """The sample jobs: one BASIC that succeeds, one CUSTOM cluster training through a ps."""

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

    return [
        job("mnist", ["--steps", "300", "--sleep", "0.02"]),
        job(
            "census_dist",
            ["--steps", "400", "--sleep", "0.02"],
            scaleTier="CUSTOM",
            masterType="standard",
            workerType="standard",
            workerCount="2",
            parameterServerType="standard",
            parameterServerCount="1",
        ),
    ]


def run_demo(state: StateDir, project: str) -> int:
    try:
        info = sc.running(state) or sc.start(
            state, sc.DEFAULT_HOST, sc.DEFAULT_PORT, no_auth=False, grace_seconds=5.0
        )
    except sc.ServiceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"Local jobs service at {info.url} (state dir {state.root})")
    sdist = build_trainer_sdist(state.gcs_path(f"gs://{DEMO_BUCKET}/packages"))
    package = f"gs://{DEMO_BUCKET}/packages/{sdist.name}"
    token = sc.read_or_create_token(state) if info.auth else None
    client = JobsClient(info.url, project, make_credentials(token))
    ids = []
    for body in sample_jobs(package):
        try:
            job = client.create(body)
        except ApiCallError as exc:
            print(f"error: submitting {body['jobId']} failed: {exc}", file=sys.stderr)
            return 1
        ids.append(job["jobId"])
        print(f"Submitted {job['jobId']} ({job['trainingInput']['scaleTier']})")
    seen: dict[str, str] = {}
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        for job_id in ids:
            state_now = client.get(job_id)["state"]
            if seen.get(job_id) != state_now:
                seen[job_id] = state_now
                print(f"  {time.strftime('%H:%M:%S')}  {job_id:<34} {state_now}")
        if all(JobState(s).is_terminal for s in seen.values()) and len(seen) == len(ids):
            break
        time.sleep(0.25)
    print("\nLook at them with gcloud:")
    print(f'  eval "$(tui-app service env --state-dir {state.root} --project {project})"')
    print("  gcloud ai-platform jobs list")
    print(f"  gcloud ai-platform jobs stream-logs {ids[-1]} --polling-interval 1")
    return 0
