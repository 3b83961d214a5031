"""The real gcloud against a service whose replicas run on the session's Ray cluster: submit,
list, describe, stream-logs and cancel work unchanged (the executor is invisible to ml v1)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.conftest import TRAINER_SRC, serve, unique_id
from tests.gcloud.test_gcloud_cli import Gcloud, parse_stream
from tests.support.live_service import LiveService

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def ray_gcloud_service(
    ray_address: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveService]:
    yield from serve(
        tmp_path_factory, "svc-ray-gcloud", "--executor", "ray", "--ray-address", ray_address
    )


def test_gcloud_submits_lists_streams_and_cancels_on_the_cluster(
    ray_gcloud_service: LiveService, trainer_sdist: Path, tmp_path: Path
) -> None:
    svc = ray_gcloud_service
    gcloud = Gcloud.for_service(svc, tmp_path)
    package = svc.stage(trainer_sdist)
    shutil.copy(TRAINER_SRC / "config.yaml", tmp_path / "config.yaml")

    custom = unique_id("gc_ray")
    # gcloud reads only entries older than 5 s and ends the stream after two empty polls once
    # the job has an endTime: a job that ends within seconds of a silent spell (its replicas
    # starting on a busy machine) would lose its last lines in gcloud. Replicas that log
    # steadily for longer than that keep every poll after the start non-empty.
    submit = gcloud(
        f"submit training {custom} --region us-central1 --config config.yaml"
        f" --packages {package} -- --steps 90 --log-every 1 --sleep 0.3"
    ).ok()
    assert yaml.safe_load(submit.stdout) == {"jobId": custom, "state": "QUEUED"}
    stream = gcloud.stream(custom, "--polling-interval 1")
    long = unique_id("gc_ray_long")
    gcloud(
        f"submit training {long} --region us-central1 --scale-tier BASIC"
        f" --packages {package} --module-name trainer.task -- --steps 1000000 --sleep 0.1"
    ).ok()

    # stream-logs ends with the job and shows every replica's lines, which ran on the nodes.
    out = stream.result().ok().stdout
    lines = parse_stream(out)
    tasks = {line.task for line in lines}
    wanted = {"master-replica-0", "worker-replica-0", "worker-replica-1", "ps-replica-0"}
    assert wanted <= tasks, out
    assert any("Job completed successfully." in line.message for line in lines)
    assert any("on node 127.0.0." in line.message for line in lines)

    described = yaml.safe_load(gcloud(f"describe {custom}").ok().stdout)
    assert described["state"] == "SUCCEEDED"
    listed = gcloud("list --format value(jobId,state)").ok().stdout
    assert f"{custom}\tSUCCEEDED" in listed

    assert svc.wait_state(long, ("RUNNING",), timeout=120)["state"] == "RUNNING"
    assert gcloud(f"cancel {long}").ok().stdout == ""
    job = svc.wait_state(long, timeout=60)
    assert job["state"] == "CANCELLED" and job["errorMessage"]
