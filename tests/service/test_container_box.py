"""A container stays in its box: the attacks of issue 39, run from inside real containers.

Each test runs a container job (podman or docker, the tiny busybox image) whose command is the
attack, on a real service, while a watchdog thread asks the service for ``/healthz`` and
``jobs.list`` ten times a second: every answer must come within a second, whatever the
container does. What the attacks aim at is a file of this test's own, outside the service's
state dir (it stands for ``~/.bashrc``): it must not change, and a link to a missing path
must not make the service create it.

- a link planted at ``/tmp/hypertune/output.metrics`` (the replica's hypertune folder, mounted
  read-write) and the output route POSTed from inside: refused, the host file untouched;
- the same link in a tuning trial, the file holding reports: the trial fails naming the link,
  the host file's "metric" is never read;
- a FIFO in its place: the trial fails at once, the service never blocks;
- 500,000 reports (27 MB) at once: the service stays responsive and the trial succeeds with
  its last report;
- an event file that is a link to a host file, under a local jobDir: never read;
- a service without its token refuses container jobs.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import _start, _stop, serve, unique_id
from tests.service.test_containers import container_job, containers_of, messages, wait_for
from tests.support.container_images import engine_env
from tests.support.live_service import PROJECT, LiveService, basic_job, free_port
from tui_app.local.environments.containers import Engine
from tui_app.model.metrics.tf_event_writer import event_record, file_version_record

TAG = "training/hptuning/metric"
ONE_TRIAL: dict[str, Any] = {
    "goal": "MINIMIZE",
    "algorithm": "GRID_SEARCH",
    "maxTrials": 1,
    "maxFailedTrials": 1,
    "params": [{"parameterName": "x", "type": "DISCRETE", "discreteValues": [1]}],
}
WGET = "wget -Y off -q -O - --header 'Content-Type: application/octet-stream'"
"""busybox wget as an attacker uses it: no proxy, a body that is not a form."""


@pytest.fixture(scope="module")
def box_service(
    tmp_path_factory: pytest.TempPathFactory, container_engine: Engine
) -> Iterator[LiveService]:
    yield from serve(tmp_path_factory, "svc-box", "--gpus", "0", env=engine_env())


class Watchdog:
    """Asks the service for ``/healthz`` and ``jobs.list`` every 0.1 s in a thread; keeps the
    slowest answer of each and every failure (a timeout after 1 s is one)."""

    def __init__(self, svc: LiveService) -> None:
        self.svc = svc
        self.slowest = {"healthz": 0.0, "list": 0.0}
        self.failures: list[str] = []
        self.asked = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> Watchdog:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _ask(self, what: str, path: str, token: str | None) -> None:
        req = urllib.request.Request(self.svc.url + path)
        if token:
            req.add_header("Authorization", f"Bearer {token}")
        started = time.monotonic()
        try:
            with urllib.request.urlopen(req, timeout=1.0) as resp:
                resp.read()
        except OSError as exc:
            self.failures.append(f"{what}: {exc}")
        self.slowest[what] = max(self.slowest[what], time.monotonic() - started)

    def _loop(self) -> None:
        token = self.svc.token
        while not self._stop.is_set():
            self._ask("healthz", "/healthz", None)
            self._ask("list", f"/v1/projects/{PROJECT}/jobs?pageSize=5", token)
            self.asked += 1
            self._stop.wait(0.1)

    def check(self) -> None:
        assert self.asked > 0
        assert not self.failures, self.failures[:3]
        assert max(self.slowest.values()) < 1.0, self.slowest


@pytest.fixture
def host_file(tmp_path: Path) -> Path:
    """A file of the user's, outside the state dir, holding what would pass for reports."""
    target = tmp_path / "bashrc"
    target.write_text(json.dumps({TAG: "42", "global_step": "7"}) + "\n")
    return target


def run(svc: LiveService, body: dict[str, Any], timeout: float = 120) -> dict[str, Any]:
    svc.client().create(body)
    return svc.wait_state(body["jobId"], timeout=timeout)


def service_notes(svc: LiveService, job_id: str) -> list[str]:
    return [
        str(e["jsonPayload"]["message"])
        for e in svc.entries(
            f'resource.labels.job_id="{job_id}" AND resource.labels.task_name="service" '
            'AND timestamp>="1970-01-01T00:00:00Z"'
        )
    ]


# -- the output route and the hypertune folder ----------------------------------------------


def test_a_planted_link_and_the_output_route_reach_no_host_file(
    box_service: LiveService, container_engine: Engine, tiny_image: str, host_file: Path
) -> None:
    svc = box_service
    missing = host_file.parent / "created-by-the-container"
    before = host_file.read_bytes()
    script = (
        'H=/tmp/hypertune/output.metrics; E="$STORAGE_EMULATOR_HOST/output/hypertune"; '
        'ln -s "$1" $H; '
        f'echo "size: $({WGET} "$E" 2>&1)"; '
        f'echo "append: $({WGET} --post-data pwned "$E?offset={len(before)}" 2>&1)"; '
        'rm $H; ln -s "$2" $H; '
        f'echo "create: $({WGET} --post-data pwned "$E?offset=0" 2>&1)"; '
        "echo done"
    )
    job_id = unique_id("box_link")
    body = container_job(
        job_id,
        tiny_image,
        command=["/bin/sh", "-c", script, "attack", str(host_file), str(missing)],
    )
    with Watchdog(svc) as dog:
        job = run(svc, body)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    said = messages(svc, job_id, "master-replica-0")
    assert "done" in said
    for attempt in ("size", "append", "create"):
        [line] = [m for m in said if m.startswith(f"{attempt}: ")]
        assert "403 Forbidden" in line, line  # busybox's words for the refusal
    assert host_file.read_bytes() == before
    assert not missing.exists()
    dog.check()
    assert containers_of(container_engine, svc, job_id) == []


def test_a_container_replicas_credential_is_refused_by_the_output_route(
    box_service: LiveService, tiny_image: str
) -> None:
    """What busybox shows as 403, with the service's own words (the same request, sent from
    here with the credential the container got)."""
    svc = box_service
    job_id = unique_id("box_route")
    svc.client().create(container_job(job_id, tiny_image, command=["/bin/sh", "-c", "sleep 60"]))
    try:
        svc.wait_state(job_id, ("RUNNING",), timeout=60)
        spec_path = svc.state_dir / "jobs" / PROJECT / job_id / "master-replica-0" / "spec.json"
        endpoint = json.loads(spec_path.read_text())["env"]["STORAGE_EMULATOR_HOST"]
        path = endpoint.removeprefix(svc.url) + "/output/hypertune"
        status, answer = svc.request("GET", path, token=None)
        assert status == 403
        assert "Only a replica on a Ray node" in answer["error"]["message"]
    finally:
        svc.end_jobs([job_id])


def test_a_tuning_trial_whose_metric_file_is_a_link_fails_without_reading_it(
    box_service: LiveService, tiny_image: str, host_file: Path
) -> None:
    svc = box_service
    job_id = unique_id("box_trial_link")
    script = 'ln -s "$1" /tmp/hypertune/output.metrics; sleep 30'
    body = container_job(
        job_id,
        tiny_image,
        command=["/bin/sh", "-c", script, "attack", str(host_file)],
        hyperparameters=ONE_TRIAL,
    )
    started = time.monotonic()
    with Watchdog(svc) as dog:
        job = run(svc, body)
    assert job["state"] == "FAILED"
    assert time.monotonic() - started < 25, "the trial was not stopped: it ran its 30 s"
    assert "symbolic link" in job["errorMessage"]
    [trial] = job["trainingOutput"]["trials"]
    assert trial["state"] == "FAILED"
    assert "finalMetric" not in trial  # the host file's 42 was never taken
    dog.check()


def test_a_fifo_in_place_of_the_metric_file_never_blocks_the_service(
    box_service: LiveService, tiny_image: str
) -> None:
    svc = box_service
    job_id = unique_id("box_fifo")
    script = "mkfifo /tmp/hypertune/output.metrics; sleep 30"
    body = container_job(
        job_id, tiny_image, command=["/bin/sh", "-c", script], hyperparameters=ONE_TRIAL
    )
    with Watchdog(svc) as dog:
        job = run(svc, body)
    assert job["state"] == "FAILED"
    assert "is a FIFO, not a regular file" in job["errorMessage"]
    notes = service_notes(svc, job_id)
    assert any(n.startswith("Trial 1: stopped. Its hypertune metric file") for n in notes), notes
    dog.check()


def test_half_a_million_reports_keep_the_service_responsive(
    box_service: LiveService, tiny_image: str
) -> None:
    svc = box_service
    job_id = unique_id("box_flood")
    n = 500_000
    line = '"{\\"global_step\\": \\"%d\\", \\"' + TAG + '\\": \\"%.6f\\"}\\n", i, 1 / i'
    script = (
        f"awk 'BEGIN {{ for (i = 1; i <= {n}; i++) printf {line} }}' "
        "> /tmp/hypertune/output.metrics; ls -l /tmp/hypertune; sleep 2"
    )
    body = container_job(
        job_id, tiny_image, command=["/bin/sh", "-c", script], hyperparameters=ONE_TRIAL
    )
    with Watchdog(svc) as dog:
        job = run(svc, body, timeout=180)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    [trial] = job["trainingOutput"]["trials"]
    assert trial["finalMetric"] == {"trainingStep": str(n), "objectiveValue": 0.000002}
    history = trial["allMetrics"]
    assert 500 <= len(history) <= 1000
    assert history[0]["trainingStep"] == "1" and history[-1]["trainingStep"] == str(n)
    metric_file = svc.state_dir / "jobs" / PROJECT / job_id / "trials" / "1" / "master-replica-0"
    assert (metric_file / "hypertune" / "output.metrics").stat().st_size > 25_000_000
    dog.check()


def test_an_event_file_linked_to_a_host_file_is_never_read(
    box_service: LiveService, tiny_image: str, tmp_path: Path
) -> None:
    """Issue 39's item 6: a trial's events under a local jobDir (mounted read-write)."""
    svc = box_service
    events = tmp_path / "host-events"
    events.write_bytes(file_version_record(1.0) + event_record(5, 1.0, TAG, 42.0))
    job_dir = tmp_path / "jobdir"
    job_id = unique_id("box_events")
    script = 'mkdir -p "$2/1"; ln -s "$1" "$2/1/events.out.tfevents.1.attacker"'
    body = container_job(
        job_id,
        tiny_image,
        command=["/bin/sh", "-c", script, "attack", str(events), str(job_dir)],
        hyperparameters=ONE_TRIAL,
        jobDir=str(job_dir),
    )
    job = run(svc, body)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    [trial] = job["trainingOutput"]["trials"]
    assert "finalMetric" not in trial  # the host file's 42 was not read
    notes = service_notes(svc, job_id)
    assert any("an event file was not read" in n and "symbolic link" in n for n in notes), notes


# -- another job's objects ---------------------------------------------------------------------

CROSS_JOB = """
import json, os, sys, urllib.error, urllib.request
E = os.environ["STORAGE_EMULATOR_HOST"]
Y, OBJ, PKG = sys.argv[1:4]
def call(method, path, data=None):
    req = urllib.request.Request(E + path, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/octet-stream")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read().decode(errors="replace")[:400]
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")[:400]
q = lambda name: name.replace("/", "%2F")
up = "/upload/storage/v1/b/%s/o?uploadType=media&name=" % Y
print("ATTACK " + json.dumps({
    "buckets": call("GET", "/storage/v1/b"),
    "read": call("GET", "/storage/v1/b/%s/o/%s?alt=media" % (Y, q(OBJ))),
    "list": call("GET", "/storage/v1/b/%s/o?prefix=out/" % Y),
    "write": call("POST", up + OBJ, b"planted"),
    "package": call("POST", up + PKG, b"planted code"),
    "delete": call("DELETE", "/storage/v1/b/%s/o/%s" % (Y, q(OBJ))),
}))
"""


def test_another_jobs_objects_and_packages_are_out_of_a_containers_reach(
    box_service: LiveService, trainer_image: str, trainer_sdist: Path
) -> None:
    """Issue 39's item 4, from inside a container: with job x's credential, job y's output
    cannot be read, listed, written or deleted, y's staged package cannot be replaced, and
    the bucket list shows x's buckets only."""
    svc = box_service
    package = svc.stage(trainer_sdist, bucket="y-bucket")
    package_name = package.removeprefix("gs://y-bucket/")
    y_id = unique_id("box_y")
    y_job = basic_job(y_id, package, "--steps", "1", jobDir="gs://y-bucket/out")
    svc.client().create(y_job)
    assert svc.wait_state(y_id, timeout=120)["state"] == "SUCCEEDED"
    model = svc.state_dir / "gcs" / "y-bucket" / "out" / "model.txt"
    model.parent.mkdir(parents=True, exist_ok=True)
    model.write_bytes(b"y's model")
    staged = (svc.state_dir / "gcs" / "y-bucket" / package_name).read_bytes()

    x_id = unique_id("box_x")
    command = ["python3", "-c", CROSS_JOB, "y-bucket", "out/model.txt", package_name]
    job = run(svc, container_job(x_id, trainer_image, command=command, jobDir="gs://x-bucket/o"))
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    [line] = [m for m in messages(svc, x_id, "master-replica-0") if m.startswith("ATTACK ")]
    got = json.loads(line.removeprefix("ATTACK "))
    status, body = got["buckets"]
    assert status == 200 and "y-bucket" not in body, body
    for attempt in ("read", "list", "write", "delete"):
        status, body = got[attempt]
        assert status == 403 and "outside this replica's scope" in body, (attempt, body)
        assert f"job {x_id} may write gs://x-bucket/o/" in body, body
    status, body = got["package"]
    assert status == 403, body
    assert model.read_bytes() == b"y's model"
    assert (svc.state_dir / "gcs" / "y-bucket" / package_name).read_bytes() == staged


# -- without the token ------------------------------------------------------------------------


def test_a_service_without_its_token_refuses_container_jobs(
    open_service: LiveService, tiny_image: str
) -> None:
    job_id = unique_id("box_open")
    body = container_job(job_id, tiny_image, command=["true"])
    status, answer = open_service.post_job(body)
    assert status == 400, answer
    message = answer["error"]["message"]
    assert "--no-auth" in message and "token" in message
    [violation] = answer["error"]["details"][0]["fieldViolations"]
    assert violation["field"] == "trainingInput.masterConfig.imageUri"
    status, _ = open_service.request("GET", f"/v1/projects/{PROJECT}/jobs/{job_id}")
    assert status == 404  # nothing half-made
    assert wait_for(lambda: True, "nothing")  # the module's helpers import cleanly


def test_container_jobs_taken_over_without_the_token_are_stopped(
    tmp_path: Path, container_engine: Engine, tiny_image: str
) -> None:
    """A service restarted with --no-auth over container jobs started with the token: the
    running one is stopped and the queued one fails at its start, each saying why, and no
    container is left on the host network with an open jobs API."""
    state, port = tmp_path / "state", free_port()
    svc = _start(state, "--slots", "1", port=port, env=engine_env())
    try:
        running, queued = unique_id("box_adopted"), unique_id("box_queued")
        sleeper = ["/bin/sh", "-c", "sleep 600"]
        svc.client().create(container_job(running, tiny_image, command=sleeper))
        svc.wait_state(running, ("RUNNING",), timeout=60)
        svc.client().create(container_job(queued, tiny_image, command=sleeper))
        assert svc.wait_state(queued, ("QUEUED",), timeout=30)["state"] == "QUEUED"
        wait_for(lambda: containers_of(container_engine, svc, running), "the container")
        os.kill(svc.proc.pid, signal.SIGKILL)  # a crash: the container lives on
        svc.proc.wait(10)

        svc = _start(state, "--slots", "1", "--no-auth", port=port, env=engine_env(), seed=False)
        for job_id in (running, queued):
            job = svc.wait_state(job_id, timeout=90)
            assert job["state"] == "FAILED", job
            assert "--no-auth" in job["errorMessage"], job["errorMessage"]
        assert containers_of(container_engine, svc) == []
    finally:
        _stop(svc)
