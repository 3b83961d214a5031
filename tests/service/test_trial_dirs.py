"""Tuning trials and their output directories, as the platform gave them (issue 19 section 1).

Every trial gets the job's ``--job-dir`` unchanged; a trainer with Google's TF_CONFIG idiom
appends the trial id itself and the trials write apart; one without it writes every trial into
the job dir, and the job's log and the trials' ``output`` say so. A trial that reports nothing
through hypertune gets its metric from the summary events it wrote: here a file written by real
TensorFlow (tests/fixtures/tf_events), uploaded by the trainer through the storage API.

The trainer is stdlib only: it uploads with urllib to ``STORAGE_EMULATOR_HOST``, where the
service gives each replica its own storage credential.
"""

from __future__ import annotations

import base64
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import unique_id
from tests.support.live_service import LiveService, basic_job, grid_search
from tests.support.task_packages import task_package

EVENTS = next((Path(__file__).parent.parent / "fixtures/tf_events/tf1_simple").glob("events*"))
"""Real TensorFlow output: ``accuracy`` 0.81 at step 100, 0.875 at step 200."""

TASK = """
import argparse, base64, json, os, sys, urllib.parse, urllib.request

EVENTS = base64.b64decode({events!r})


def upload(uri, data):
    bucket, _, name = uri[len("gs://"):].partition("/")
    url = "%s/upload/storage/v1/b/%s/o?uploadType=media&name=%s" % (
        os.environ["STORAGE_EMULATOR_HOST"], bucket, urllib.parse.quote(name, safe=""))
    request = urllib.request.Request(url, data=data, method="POST",
                                     headers={{"Content-Type": "application/octet-stream"}})
    urllib.request.urlopen(request).read()


parser = argparse.ArgumentParser()
parser.add_argument("--job-dir")
parser.add_argument("--idiom", action="store_true")
parser.add_argument("--events", action="store_true")
parser.add_argument("--lr")
args = parser.parse_args()
print("JOB_DIR " + args.job_dir)
out = args.job_dir
if args.idiom:
    trial = json.loads(os.environ.get("TF_CONFIG", "{{}}")).get("task", {{}}).get("trial", "")
    out = os.path.join(out, trial)
if out.startswith("gs://"):
    upload(out + "/checkpoint", b"model_checkpoint_path: model.ckpt-100")
    if args.events:
        upload(out + "/eval/events.out.tfevents.1795587137.local", EVENTS)
elif args.events:  # a local job dir: written as files
    os.makedirs(os.path.join(out, "eval"), exist_ok=True)
    with open(os.path.join(out, "eval", "events.out.tfevents.1795587137.local"), "wb") as f:
        f.write(EVENTS)
"""


@pytest.fixture(scope="module")
def trainer_uri(service: LiveService, tmp_path_factory: pytest.TempPathFactory) -> str:
    events = base64.b64encode(EVENTS.read_bytes()).decode()
    task = textwrap.dedent(TASK).format(events=events)
    return service.stage(task_package(tmp_path_factory.mktemp("trialdir"), "trialdir", task))


def _tuning_job(job_id: str, uri: str, *args: str, tag: str = "accuracy") -> dict[str, Any]:
    hp = {
        **grid_search("lr", [0.1, 0.2], parallel=2, goal="MAXIMIZE"),
        "hyperparameterMetricTag": tag,
    }
    out = f"gs://trial-out/{job_id}"
    return basic_job(
        job_id, uri, *args, pythonModule="trialdir.task", jobDir=out, hyperparameters=hp
    )


def _service_log(service: LiveService, job_id: str) -> list[str]:
    flt = f'resource.labels.job_id="{job_id}" AND resource.labels.task_name="service"'
    out = []
    for e in service.entries(flt):
        payload = e.get("jsonPayload") or {}
        out.append(str(payload.get("message", e.get("textPayload", ""))))
    return out


def _job_dirs_given(service: LiveService, job_id: str) -> set[str]:
    flt = f'resource.labels.job_id="{job_id}" AND resource.labels.task_name="master-replica-0"'
    lines = [str((e.get("jsonPayload") or {}).get("message", e.get("textPayload", ""))) for e in
             service.entries(flt)]  # fmt: skip
    return {line.split(" ", 1)[1] for line in lines if line.startswith("JOB_DIR ")}


def test_trials_with_the_idiom_write_apart_and_get_the_metric_from_events(
    service: LiveService, trainer_uri: str
) -> None:
    job_id = unique_id("trial_idiom")
    service.client().create(_tuning_job(job_id, trainer_uri, "--idiom", "--events"))
    job = service.wait_state(job_id, timeout=120)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    job_dir = f"gs://trial-out/{job_id}"
    # Every trial got the job dir exactly as given; the trainer appended the trial id.
    assert _job_dirs_given(service, job_id) == {job_dir}
    assert job["trainingInput"]["jobDir"] == job_dir
    trials = {t["trialId"]: t for t in job["trainingOutput"]["trials"]}
    for trial_id in ("1", "2"):
        output = trials[trial_id]["output"]
        assert output["directory"] == f"{job_dir}/{trial_id}/"
        assert output["objects"] == 2
        assert "sharedWith" not in output
        # No hypertune report: the metric is read from the summary events TensorFlow wrote.
        assert output["metricFrom"] == "events"
        assert trials[trial_id]["finalMetric"]["trainingStep"] == "200"
        assert trials[trial_id]["finalMetric"]["objectiveValue"] == pytest.approx(0.875)
        stored = service.state_dir / "gcs" / "trial-out" / job_id / trial_id / "checkpoint"
        assert stored.is_file()
    log = _service_log(service, job_id)
    assert not any("wrote into the same directory" in line for line in log), log
    assert any("read from its TensorFlow summary events" in line for line in log), log


def test_trials_without_the_idiom_share_the_job_dir_and_are_warned(
    service: LiveService, trainer_uri: str
) -> None:
    job_id = unique_id("trial_shared")
    service.client().create(_tuning_job(job_id, trainer_uri, tag="no/such/tag"))
    job = service.wait_state(job_id, timeout=120)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    job_dir = f"gs://trial-out/{job_id}"
    assert _job_dirs_given(service, job_id) == {job_dir}
    trials = {t["trialId"]: t for t in job["trainingOutput"]["trials"]}
    assert trials["1"]["output"]["sharedWith"] == ["2"]
    assert trials["2"]["output"]["sharedWith"] == ["1"]
    assert trials["1"]["output"]["sharedDirectory"] == f"{job_dir}/"
    assert all("finalMetric" not in t for t in trials.values())
    log = _service_log(service, job_id)
    warnings = [line for line in log if "wrote into the same directory" in line]
    assert len(warnings) == 1, log
    assert f"Trials 1, 2 wrote into the same directory {job_dir}/" in warnings[0]
    missing = [line for line in log if "reported no value for the metric" in line]
    assert missing and "'no/such/tag'" in missing[0] and "trials 1, 2" in missing[0], log
    # What the trials view and describe read: the same fields, as JSON on the wire.
    assert json.loads(json.dumps(trials["1"]))["output"]["objects"] == 1


def test_a_local_job_dir_gives_each_trial_its_metric_from_its_own_folder(
    service: LiveService, trainer_uri: str, tmp_path: Path
) -> None:
    """jobDir a local folder: no storage writes to attribute, so the events are read from the
    trial's own <jobDir>/<trialId> (the platform's idiom) and nowhere else."""
    job_id = unique_id("trial_local")
    body = _tuning_job(job_id, trainer_uri, "--idiom", "--events")
    body["trainingInput"]["jobDir"] = str(tmp_path / "out")
    service.client().create(body)
    job = service.wait_state(job_id, timeout=120)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    for trial in job["trainingOutput"]["trials"]:
        assert trial["finalMetric"]["objectiveValue"] == pytest.approx(0.875)
        assert trial["output"]["metricFrom"] == "events"
        assert (tmp_path / "out" / trial["trialId"] / "eval").is_dir()

    # Without the idiom both trials write into the shared folder: no metric is taken from it.
    shared = unique_id("trial_local_shared")
    body = _tuning_job(shared, trainer_uri, "--events")
    body["trainingInput"]["jobDir"] = str(tmp_path / "shared")
    service.client().create(body)
    job = service.wait_state(shared, timeout=120)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    assert all("finalMetric" not in t for t in job["trainingOutput"]["trials"])
