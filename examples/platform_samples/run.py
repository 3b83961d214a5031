"""Run the platform samples as their READMEs would: gcloud against the local jobs service.

For each sample: stage the census data with ``gcloud storage cp``, submit with
``gcloud ai-platform jobs submit training`` (package path, module, region, runtime and Python
version, ``--job-dir gs://...``, the sample's config), wait for the job to end, and read its
outputs back with ``gcloud storage cat``. Prints one line per sample: final state, seconds to
RUNNING and to the end, and what the trainer wrote. Exit status 1 if any sample did not end
SUCCEEDED with its outputs.

These runs install real frameworks (TensorFlow, scikit-learn, XGBoost, PyTorch) into the
service's runtime environments the first time: minutes, and network access to PyPI. They are
not part of CI; docs/platform-samples.md records their figures.

    python examples/platform_samples/run.py [--state-dir DIR] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = "samples-project"
BUCKET = "samples-bucket"
DATA = f"gs://{BUCKET}/census"
TERMINAL = {"SUCCEEDED", "FAILED", "CANCELLED"}


@dataclass
class Sample:
    name: str
    flags: list[str]
    """gcloud flags besides the job id, package path, module and job dir."""
    outputs: list[str]
    """Objects under the job dir to ``gcloud storage cat`` (``*`` allowed)."""
    user_args: list[str] = field(default_factory=lambda: ["--data-dir", DATA])


RUNTIME_211 = ["--runtime-version", "2.11", "--python-version", "3.7"]
SAMPLES = [
    Sample("sklearn_census", [*RUNTIME_211, "--scale-tier", "BASIC"], ["metrics.json"]),
    Sample("xgboost_census", [*RUNTIME_211, "--scale-tier", "BASIC"], ["metrics.json"]),
    Sample(
        "sklearn_hptune",
        [*RUNTIME_211, "--scale-tier", "BASIC", "--config", "hptuning_config.yaml"],
        ["1/model.joblib", "2/model.joblib"],
    ),
    Sample(
        "keras_mwms",
        [*RUNTIME_211, "--config", "keras_config.yaml"],
        ["metrics.json"],
    ),
    Sample("estimator_ps", [*RUNTIME_211, "--config", "config.yaml"], ["checkpoint"]),
    Sample(
        "estimator_ps",
        [*RUNTIME_211, "--scale-tier", "BASIC", "--config", "hptuning_config.yaml"],
        ["1/checkpoint", "2/checkpoint"],
    ),
    Sample("pytorch_ddp", ["--config", "config.yaml"], ["metrics.txt"]),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--state-dir", type=Path, default=None)
    parser.add_argument("--only", nargs="*", default=None, help="sample folder names")
    args = parser.parse_args()
    state = args.state_dir or Path(tempfile.mkdtemp(prefix="platform-samples-"))
    env = start_service(state)
    stage_data(env)
    failures = 0
    for sample in SAMPLES:
        if args.only and sample.name not in args.only:
            continue
        failures += not run_sample(sample, env)
    print(f"state dir: {state}")
    return 1 if failures else 0


def start_service(state: Path) -> dict[str, str]:
    """A service with room for the multi-replica samples, and gcloud pointed at it."""
    run(["tui-app", "service", "start", "--state-dir", str(state), "--slots", "8"])
    lines = run(["tui-app", "service", "env", "--state-dir", str(state), "--project", PROJECT])
    env = dict(os.environ)
    for line in lines.splitlines():
        words = shlex.split(line)
        if words[:1] == ["export"]:
            key, _, value = words[1].partition("=")
            env[key] = value
        elif words[:1] == ["unset"]:
            env.pop(words[1], None)
    env["TUI_APP_STATE_DIR"] = str(state)
    return env


def stage_data(env: dict[str, str]) -> None:
    """The census files, made here and staged to gs:// with gcloud."""
    data = Path(tempfile.mkdtemp(prefix="census-"))
    run([sys.executable, str(HERE / "data" / "make_census.py"), str(data)])
    subprocess.run(
        ["gcloud", "storage", "buckets", "create", f"gs://{BUCKET}"],
        env=env,
        capture_output=True,
    )  # may exist from an earlier run
    run(
        ["gcloud", "storage", "cp", str(data / "adult.data"), str(data / "adult.test"), DATA + "/"],
        env=env,
    )


def run_sample(sample: Sample, env: dict[str, str]) -> bool:
    job_id = f"{sample.name}_{time.strftime('%Y%m%d_%H%M%S')}"
    job_dir = f"gs://{BUCKET}/{job_id}"
    command = [
        "gcloud", "ai-platform", "jobs", "submit", "training", job_id,
        "--package-path", "trainer", "--module-name", "trainer.task", "--region", "us-central1",
        "--job-dir", job_dir, *sample.flags, "--", *sample.user_args,
    ]  # fmt: skip
    started = time.monotonic()
    run(command, env=env, cwd=HERE / sample.name)
    running_at, state, job = wait(job_id, env, started)
    total = time.monotonic() - started
    outputs = []
    ok = state == "SUCCEEDED"
    for name in sample.outputs:
        read = ["gcloud", "storage", "cat", f"{job_dir}/{name}"]
        result = subprocess.run(read, env=env, capture_output=True)
        ok = ok and result.returncode == 0
        text = result.stdout.decode(errors="replace") if result.returncode == 0 else ""
        outputs.append(f"{name}: {summary(text, result)}")
    to_running = "-" if running_at is None else f"{running_at:.1f}s"
    print(f"{job_id}: {state} to RUNNING {to_running}, ended {total:.1f}s")
    for line in outputs:
        print(f"    {line}")
    if state != "SUCCEEDED":
        print(f"    errorMessage: {job.get('errorMessage', '')}")
    return ok


def wait(job_id: str, env: dict[str, str], started: float) -> tuple[float | None, str, dict]:
    """Poll the job over the REST API until it ends; when it first ran, its state, the job."""
    base = env["CLOUDSDK_API_ENDPOINT_OVERRIDES_ML"].rstrip("/")
    headers = {}
    token_file = env.get("CLOUDSDK_AUTH_ACCESS_TOKEN_FILE")
    if token_file:
        headers["Authorization"] = "Bearer " + Path(token_file).read_text().strip()
    running_at = None
    while True:
        request = urllib.request.Request(
            f"{base}/v1/projects/{PROJECT}/jobs/{job_id}", headers=headers
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            job = json.load(response)
        state = job.get("state", "")
        if running_at is None and state in {"RUNNING", *TERMINAL}:
            running_at = time.monotonic() - started
        if state in TERMINAL:
            return running_at, state, job
        time.sleep(0.5)


def summary(text: str, result: subprocess.CompletedProcess[bytes]) -> str:
    if result.returncode != 0:
        return "unreadable: " + result.stderr.decode(errors="replace").strip().splitlines()[-1]
    if text.isprintable() or text.strip().startswith("{"):
        return text.strip()[:120]
    return f"{len(result.stdout)} bytes"


def run(command: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
    result = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{shlex.join(command)} failed:\n{result.stderr}")
    return result.stdout


if __name__ == "__main__":
    sys.exit(main())
