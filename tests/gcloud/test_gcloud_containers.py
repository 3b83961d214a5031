"""The real gcloud submits a custom-container job to the local service and streams its logs
(issue 30): ``submit training --master-image-uri`` with a CUSTOM cluster, unchanged, exactly as
a user would against the platform. gcloud is pointed at the service as in ``test_gcloud_cli``.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator

import pytest
import yaml

from tests.conftest import serve, unique_id
from tests.gcloud.test_gcloud_cli import Gcloud, numbers, parse_stream
from tests.support.container_images import engine_env
from tests.support.live_service import PROJECT, LiveService
from tui_app.local.environments.containers import LABEL_JOB, LABEL_SERVICE, Engine, service_key

pytestmark = pytest.mark.gcloud

# Long enough to log for more than 5 s after the containers start: gcloud reads only entries
# older than 5 s and ends the stream after two empty polls once the job has ended, so a job that
# ends within seconds of its (silent) container start would lose its last lines there.
STEPS = 120


@pytest.fixture(scope="module")
def ctr_service(
    tmp_path_factory: pytest.TempPathFactory, container_engine: Engine
) -> Iterator[LiveService]:
    yield from serve(tmp_path_factory, "svc-gcloud-ctr", env=engine_env())


def test_submit_with_master_image_uri_runs_and_streams_its_logs(
    ctr_service: LiveService,
    container_engine: Engine,
    trainer_image: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    svc = ctr_service
    gcloud = Gcloud.for_service(svc, tmp_path_factory.mktemp("gcloud-ctr"))
    job_id = unique_id("gc_ctr")
    job_dir = f"gs://ctr-bucket/{job_id}"
    submit = gcloud(
        f"submit training {job_id} --region us-central1 --master-image-uri {trainer_image}"
        " --scale-tier custom --master-machine-type n1-standard-4"
        " --worker-machine-type n1-standard-4 --worker-count 1"
        " --parameter-server-machine-type n1-standard-4 --parameter-server-count 1"
        f" --job-dir {job_dir} -- --steps {STEPS} --sleep 0.1 --log-every 1"
    ).ok()
    assert f"Job [{job_id}] submitted successfully." in submit.stderr
    stream = gcloud.stream(job_id, "--polling-interval 1")
    try:
        result = stream.result()
    finally:
        stream.stop()
    assert result.returncode == 0, result.stderr
    lines = parse_stream(result.stdout)
    by_task = {task: [ln for ln in lines if ln.task == task] for task in {ln.task for ln in lines}}
    for task, role in (("master-replica-0", "master"), ("worker-replica-0", "worker")):
        text = [ln.message for ln in by_task.get(task, [])]
        assert any(t.startswith(f"TF_CONFIG task={role}:0 cluster=") for t in text), text
        assert numbers(r"step (\d+) loss=", by_task[task]), text
    assert any(ln.message.startswith("TF_CONFIG task=ps:0 ") for ln in by_task["ps-replica-0"])
    # gcloud's stream is the service's log: every stored entry of the job, once.
    stored = svc.entries(f'resource.labels.job_id="{job_id}"')
    assert len(lines) == len(stored)

    job = yaml.safe_load(gcloud(f"describe {job_id}").ok().stdout)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    ti = job["trainingInput"]
    assert ti["masterConfig"]["imageUri"] == trainer_image
    assert (ti["scaleTier"], ti["workerCount"], ti["parameterServerCount"]) == ("CUSTOM", "1", "1")
    assert ti["args"] == f"--steps {STEPS} --sleep 0.1 --log-every 1".split()
    model = svc.state_dir / "gcs" / "ctr-bucket" / job_id / "model" / "model.json"
    assert json.loads(model.read_text())["global_step"] >= STEPS

    left = subprocess.run(
        container_engine.command(
            "ps",
            "-a",
            "--format",
            "{{.Names}}",
            "--filter",
            f"label={LABEL_SERVICE}={service_key(svc.state_dir)}",
            "--filter",
            f"label={LABEL_JOB}={PROJECT}/{job_id}",
        ),
        capture_output=True,
        text=True,
        timeout=60,
        env=engine_env(),
        check=True,
    ).stdout
    assert left.split() == [], left
