"""The real ``gcloud ai-platform jobs`` CLI against the local service, unmodified.

gcloud is pointed at a live service only through the ``export`` lines of ``tui-app service env``
(plus an isolated ``CLOUDSDK_CONFIG``), exactly as a user would ``eval`` them. Covered: ``list``,
``describe``, ``cancel``, ``update --update-labels``, ``stream-logs`` (ends by itself, loses no
line, ``--task-name`` filters one replica of a CUSTOM job) and ``submit training --config``, with
the token-auth service and with ``--no-auth``, plus the error paths users hit.

Wall time is dominated by gcloud's ~0.6-1 s startup and by stream-logs' own pacing (it only sees
entries older than now - 5 s and checks the job every 10 s), so the jobs and both streams are
started once per module, and the streams run in the background while the other tests go on.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import TRAINER_SRC, unique_id
from tests.support.live_service import PROJECT, TERMINAL, LiveService, basic_job

if shutil.which("gcloud") is None:
    pytest.skip(
        "the gcloud CLI (Cloud SDK) is not installed: these tests drive the real gcloud",
        allow_module_level=True,
    )

pytestmark = pytest.mark.gcloud

GCLOUD = shutil.which("gcloud") or "gcloud"
GCLOUD_TIMEOUT = 60.0
"""Any single non-streaming gcloud command; they take about a second."""
STREAM_TIMEOUT = 120.0
"""stream-logs of a job that ends in seconds; it needs ~15 s after the end to notice."""
QUICK_ERROR_SECONDS = 10.0
"""A 4xx answer must not make gcloud retry (5xx costs ~26 s of retries)."""

BASIC_STEPS = 120
"""At 0.05 s a step, 6 s of steady lines: gcloud reads only entries older than 5 s and ends the
stream after two empty polls once the job has ended, so a job that ended within seconds of a
silent spell (its trainer starting on a busy machine) could lose its last lines there."""
FLOOD_LINES = 1500
"""More than gcloud's 1000-entry page, all sharing a handful of timestamps (insertId ties)."""
CUSTOM_STEPS = 60


# -- gcloud plumbing ----------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def ok(self) -> Result:
        assert self.returncode == 0, (
            f"gcloud {' '.join(self.args)} exited {self.returncode}\n"
            f"stdout:\n{self.stdout}\nstderr:\n{self.stderr}"
        )
        return self


def parse_env_lines(text: str) -> tuple[dict[str, str], list[str]]:
    """The variables ``tui-app service env`` exports and the ones it unsets."""
    exports: dict[str, str] = {}
    unsets: list[str] = []
    for line in text.splitlines():
        words = shlex.split(line, comments=True)
        if not words:
            continue
        if words[0] == "export" and len(words) == 2 and "=" in words[1]:
            key, _, value = words[1].partition("=")
            exports[key] = value
        elif words[0] == "unset" and len(words) >= 2:
            unsets += words[1:]
        else:
            raise AssertionError(f"unexpected line from `tui-app service env`: {line!r}")
    return exports, unsets


@dataclass
class Gcloud:
    """gcloud with the environment ``tui-app service env`` prints for one service."""

    env: dict[str, str]
    cwd: Path
    exported: dict[str, str] = field(default_factory=dict)

    @classmethod
    def for_service(cls, svc: LiveService, workdir: Path, project: str = PROJECT) -> Gcloud:
        cmd = [sys.executable, "-m", "tui_app", "service", "env"]
        cmd += ["--state-dir", str(svc.state_dir), "--project", project]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=True).stdout
        exports, unsets = parse_env_lines(out)
        # Nothing of the developer's gcloud setup leaks in (CLOUDSDK_PYTHON may be needed to run).
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("CLOUDSDK_") or k.startswith("CLOUDSDK_PYTHON")
        }
        env.update(exports)
        for key in unsets:
            env.pop(key, None)
        config = workdir / "gcloud-config"
        config.mkdir(parents=True, exist_ok=True)
        env.update(
            CLOUDSDK_CONFIG=str(config),
            CLOUDSDK_CORE_DISABLE_PROMPTS="1",
            CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK="true",
            CLOUDSDK_CORE_DISABLE_USAGE_REPORTING="true",
            TZ="UTC",
        )
        return cls(env=env, cwd=workdir, exported=exports)

    def __call__(
        self, command: str, timeout: float = GCLOUD_TIMEOUT, env: dict[str, str] | None = None
    ) -> Result:
        """Run ``gcloud ai-platform jobs COMMAND`` (split like a shell would) to completion."""
        args = ("ai-platform", "jobs", *shlex.split(command))
        start = time.monotonic()
        proc = subprocess.run(
            [GCLOUD, *args],
            env={**self.env, **(env or {})},
            cwd=self.cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        return Result(args, proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start)

    def stream(self, job_id: str, options: str = "") -> Stream:
        """Start ``gcloud ai-platform jobs stream-logs JOB OPTIONS`` in the background.

        Its output goes to files, not pipes: nobody reads it until the test collects it, and a
        full pipe would stall gcloud.
        """
        argv = ("ai-platform", "jobs", "stream-logs", job_id, *shlex.split(options))
        out, err = self.cwd / f"stream-{job_id}.out", self.cwd / f"stream-{job_id}.err"
        with out.open("w") as fout, err.open("w") as ferr:
            proc = subprocess.Popen(
                [GCLOUD, *argv],
                env=self.env,
                cwd=self.cwd,
                stdout=fout,
                stderr=ferr,
                stdin=subprocess.DEVNULL,
            )
        return Stream(job_id, argv, proc, out, err)


@dataclass
class Stream:
    """A ``gcloud ai-platform jobs stream-logs`` running in the background."""

    job_id: str
    args: tuple[str, ...]
    proc: subprocess.Popen[bytes]
    stdout: Path
    stderr: Path
    state_at_start: str = ""
    """The job's state just after the stream was started."""
    started: float = field(default_factory=time.monotonic)

    def result(self) -> Result:
        """Wait for it to end by itself (it must: the job ends within seconds)."""
        try:
            self.proc.wait(timeout=max(0.0, self.started + STREAM_TIMEOUT - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.stop()
            pytest.fail(
                f"stream-logs {self.job_id} did not end by itself within {STREAM_TIMEOUT}s "
                f"(no endTime on the job?)\nstderr:\n{self.stderr.read_text()}"
            )
        return Result(
            self.args,
            self.proc.returncode,
            self.stdout.read_text(),
            self.stderr.read_text(),
            time.monotonic() - self.started,
        )

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@dataclass(frozen=True)
class LogLine:
    severity: str
    time: str
    task: str
    trial: str
    message: str


def parse_stream(stdout: str) -> list[LogLine]:
    """stream-logs lines: ``SEVERITY\\tYYYY-MM-DD HH:MM:SS +ZZZZ\\ttask\\ttrial\\tmessage``."""
    lines = []
    for raw in stdout.splitlines():
        parts = raw.split("\t", 4)
        assert len(parts) == 5, f"not a stream-logs line: {raw!r}"
        lines.append(LogLine(*parts))
    return lines


def server_entries(svc: LiveService, job_id: str, task: str | None = None) -> list[dict[str, Any]]:
    """Every log entry the service holds for a job, oldest first, straight from entries:list."""
    flt = f'resource.labels.job_id="{job_id}"'
    if task:
        flt += f' AND resource.labels.task_name="{task}"'
    body: dict[str, Any] = {
        "resourceNames": [f"projects/{PROJECT}"],
        "filter": flt,
        "orderBy": "timestamp asc",
        "pageSize": 1000,
    }
    entries: list[dict[str, Any]] = []
    while True:
        status, resp = svc.request("POST", "/v2/entries:list", json.dumps(body).encode())
        assert status == 200, resp
        entries += resp.get("entries", [])
        if not resp.get("nextPageToken"):
            return entries
        body["pageToken"] = resp["nextPageToken"]


def entry_task(entry: dict[str, Any]) -> str:
    """The task name gcloud would display for an entry (`docs/wire-formats.md`)."""
    labels = entry.get("labels", {})
    return str(
        entry.get("resource", {}).get("labels", {}).get("task_name")
        or labels.get("task_name")
        or labels.get("ml.googleapis.com/task_name")
        or "unknown_task"
    )


def table_rows(stdout: str) -> dict[str, list[str]]:
    """``jobs list``'s table as {JOB_ID: [STATUS, CREATED]}."""
    lines = stdout.splitlines()
    assert lines and lines[0].split() == ["JOB_ID", "STATUS", "CREATED"], stdout
    return {cols[0]: cols[1:] for cols in (line.split() for line in lines[1:])}


def numbers(pattern: str, lines: list[LogLine]) -> list[int]:
    rx = re.compile(pattern)
    return [int(m.group(1)) for m in (rx.match(ln.message) for ln in lines) if m]


# -- shared jobs --------------------------------------------------------------------------


@dataclass
class Jobs:
    package: str
    custom: str
    """Submitted by gcloud from examples/trainer/config.yaml: master + 2 workers + 1 ps."""
    submit: Result
    basic: str
    """BASIC, ``--steps 50 --log-every 1`` after a flood of lines."""
    long: str
    """BASIC, runs until cancelled; labels {team: ml}."""
    basic_stream: Stream
    worker_stream: Stream


@pytest.fixture(scope="module")
def gcloud(service: LiveService, tmp_path_factory: pytest.TempPathFactory) -> Gcloud:
    return Gcloud.for_service(service, tmp_path_factory.mktemp("gcloud"))


@pytest.fixture(scope="module")
def jobs(service: LiveService, gcloud: Gcloud, trainer_sdist: Path) -> Iterator[Jobs]:
    """The module's jobs, created at once, with both stream-logs started while they run."""
    package = service.stage(trainer_sdist)
    shutil.copy(TRAINER_SRC / "config.yaml", gcloud.cwd / "config.yaml")
    custom = unique_id("gc_custom")
    submit = gcloud(
        f"submit training {custom} --region us-central1 --config config.yaml"
        f" --packages {package} -- --steps {CUSTOM_STEPS} --log-every 1 --sleep 0.1"
    ).ok()
    client = service.client()
    basic = unique_id("gc_basic")
    basic_args = f"--flood {FLOOD_LINES} --steps {BASIC_STEPS} --log-every 1 --sleep 0.05"
    client.create(basic_job(basic, package, *basic_args.split()))
    long = unique_id("gc_long")
    client.create(
        {
            **basic_job(long, package, "--steps", "1000000", "--sleep", "0.1"),
            "labels": {"team": "ml"},
        }
    )

    streams: list[Stream] = []
    for job_id, options in ((basic, ""), (custom, "--task-name worker-replica-1")):
        stream = gcloud.stream(job_id, f"--polling-interval 1 {options}")
        stream.state_at_start = client.get(job_id)["state"]
        streams.append(stream)
    try:
        yield Jobs(package, custom, submit, basic, long, *streams)
    finally:
        for s in streams:
            s.stop()


# -- submit, list, describe ---------------------------------------------------------------


def test_submit_training_with_config(service: LiveService, jobs: Jobs) -> None:
    """``submit training J --region --config config.yaml --packages gs://...`` creates the job."""
    assert yaml.safe_load(jobs.submit.stdout) == {"jobId": jobs.custom, "state": "QUEUED"}
    assert f"Job [{jobs.custom}] submitted successfully." in jobs.submit.stderr
    ti = service.client().get(jobs.custom)["trainingInput"]
    # config.yaml's CUSTOM cluster, counts as int64 strings; args after `--` replace its args.
    assert ti["scaleTier"] == "CUSTOM"
    assert (ti["masterType"], ti["workerType"], ti["parameterServerType"]) == ("standard",) * 3
    assert (ti["workerCount"], ti["parameterServerCount"]) == ("2", "1")
    assert ti["packageUris"] == [jobs.package]
    assert (ti["pythonModule"], ti["region"]) == ("trainer.task", "us-central1")
    assert ti["args"] == f"--steps {CUSTOM_STEPS} --log-every 1 --sleep 0.1".split()


def test_submit_duplicate_job_id(gcloud: Gcloud, jobs: Jobs) -> None:
    res = gcloud(
        f"submit training {jobs.custom} --region us-central1 --module-name trainer.task"
        f" --packages {jobs.package}"
    )
    assert res.returncode == 1
    # 409: gcloud adds the "conflict" prefix itself; the server's message must not repeat it.
    assert res.stderr.count("is the subject of a conflict") == 1, res.stderr
    assert "A job with this id already exists." in res.stderr
    assert res.seconds < QUICK_ERROR_SECONDS


def test_list(gcloud: Gcloud, jobs: Jobs) -> None:
    res = gcloud("list").ok()
    rows = table_rows(res.stdout)
    for job_id in (jobs.custom, jobs.basic, jobs.long):
        status, created = rows[job_id]
        assert status in {"QUEUED", "PREPARING", "RUNNING", "SUCCEEDED"}
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", created), created
    # Newest first, the order the server returns and gcloud keeps.
    order = [j for j in rows if j in (jobs.custom, jobs.basic, jobs.long)]
    assert order == [jobs.long, jobs.basic, jobs.custom]


def test_describe(gcloud: Gcloud, jobs: Jobs) -> None:
    res = gcloud(f"describe {jobs.custom}").ok()
    job = yaml.safe_load(res.stdout)
    assert job["jobId"] == jobs.custom
    assert job["state"] in {"QUEUED", "PREPARING", "RUNNING", "SUCCEEDED"}
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", job["createTime"])
    assert job["trainingInput"]["scaleTier"] == "CUSTOM"
    assert job["trainingInput"]["workerCount"] == "2"
    assert job["etag"]  # gcloud base64-decoded it (a bad etag crashes describe)
    assert f"mlengine/jobs/{jobs.custom}?project={PROJECT}" in res.stderr


def test_describe_unknown_job(gcloud: Gcloud) -> None:
    res = gcloud("describe no_such_job")
    assert res.returncode == 1
    assert "ERROR: (gcloud.ai-platform.jobs.describe) NOT_FOUND:" in res.stderr, res.stderr
    assert "no_such_job" in res.stderr
    assert res.seconds < QUICK_ERROR_SECONDS, f"took {res.seconds:.1f}s: gcloud retried a 5xx?"


# -- auth -----------------------------------------------------------------------------------


def test_env_uses_the_token_file(service: LiveService, gcloud: Gcloud) -> None:
    assert gcloud.exported["CLOUDSDK_AUTH_ACCESS_TOKEN_FILE"] == str(service.state_dir / "token")
    assert "CLOUDSDK_AUTH_DISABLE_CREDENTIALS" not in gcloud.env
    base = service.url + "/"
    assert gcloud.exported["CLOUDSDK_API_ENDPOINT_OVERRIDES_ML"] == base
    assert gcloud.exported["CLOUDSDK_API_ENDPOINT_OVERRIDES_LOGGING"] == base
    assert gcloud.exported["CLOUDSDK_CORE_PROJECT"] == PROJECT


def test_token_service_rejects_missing_or_wrong_token(gcloud: Gcloud, tmp_path: Path) -> None:
    wrong = tmp_path / "wrong-token"
    wrong.write_text("not-the-token\n")
    for env in (
        {"CLOUDSDK_AUTH_ACCESS_TOKEN_FILE": str(wrong)},
        {"CLOUDSDK_AUTH_ACCESS_TOKEN_FILE": "", "CLOUDSDK_AUTH_DISABLE_CREDENTIALS": "true"},
    ):
        res = gcloud("list", env=env)
        assert res.returncode == 1
        assert "UNAUTHENTICATED" in res.stderr, res.stderr
        assert res.seconds < QUICK_ERROR_SECONDS


def test_no_auth_service(
    open_service: LiveService, trainer_sdist: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Against ``--no-auth``: disable_credentials (no Authorization header) is all gcloud needs."""
    gc = Gcloud.for_service(open_service, tmp_path_factory.mktemp("gcloud-open"))
    assert gc.exported["CLOUDSDK_AUTH_DISABLE_CREDENTIALS"] == "true"
    assert "CLOUDSDK_AUTH_ACCESS_TOKEN_FILE" not in gc.env

    empty = gc("list").ok()
    assert (empty.stdout, empty.stderr.strip()) == ("", "Listed 0 items.")

    job_id = unique_id("gc_open")
    package = open_service.stage(trainer_sdist)
    sub = gc(
        f"submit training {job_id} --region us-central1 --module-name trainer.task"
        f" --packages {package} -- --steps 5"
    ).ok()
    assert yaml.safe_load(sub.stdout) == {"jobId": job_id, "state": "QUEUED"}
    open_service.wait_state(job_id)
    job = yaml.safe_load(gc(f"describe {job_id}").ok().stdout)
    assert job["state"] == "SUCCEEDED"
    assert job["endTime"] >= job["startTime"] >= job["createTime"]
    # CREATED is createTime in local time (TZ=UTC here).
    assert table_rows(gc("list").ok().stdout) == {job_id: ["SUCCEEDED", job["createTime"][:-1]]}


# -- update, cancel -------------------------------------------------------------------------


def test_update_labels(service: LiveService, gcloud: Gcloud, jobs: Jobs) -> None:
    res = gcloud(f"update {jobs.long} --update-labels owner=alice,env=dev").ok()
    assert f"Updated ml engine job [{jobs.long}]." in res.stderr
    # gcloud merges client-side (GET, then PATCH ?updateMask=labels with the whole map).
    labels = service.client().get(jobs.long)["labels"]
    assert labels == {"team": "ml", "owner": "alice", "env": "dev"}
    gcloud(f"update {jobs.long} --update-labels owner=bob --remove-labels env").ok()
    described = yaml.safe_load(gcloud(f"describe {jobs.long}").ok().stdout)
    assert described["labels"] == {"team": "ml", "owner": "bob"}


def test_cancel_running_job(service: LiveService, gcloud: Gcloud, jobs: Jobs) -> None:
    assert service.client().get(jobs.long)["state"] not in TERMINAL
    res = gcloud(f"cancel {jobs.long}").ok()
    assert res.stdout == ""
    job = service.wait_state(jobs.long, timeout=30)
    assert job["state"] == "CANCELLED"
    assert job["endTime"]
    assert job["errorMessage"]

    again = gcloud(f"cancel {jobs.long}")
    assert again.returncode == 1
    assert "ERROR: (gcloud.ai-platform.jobs.cancel) FAILED_PRECONDITION:" in again.stderr
    assert again.seconds < QUICK_ERROR_SECONDS


def test_cancel_unknown_job(gcloud: Gcloud) -> None:
    res = gcloud("cancel no_such_job")
    assert res.returncode == 1
    assert "ERROR: (gcloud.ai-platform.jobs.cancel) NOT_FOUND:" in res.stderr
    assert res.seconds < QUICK_ERROR_SECONDS


# -- stream-logs (collected last: they ran in the background all along) ----------------------


def test_stream_logs_prints_every_line_and_ends(service: LiveService, jobs: Jobs) -> None:
    stream = jobs.basic_stream
    assert stream.state_at_start not in TERMINAL, "the stream should have started on a live job"
    res = stream.result()  # fails unless it ends by itself
    assert res.returncode == 0, res.stderr
    job = service.client().get(jobs.basic)
    assert job["state"] == "SUCCEEDED"
    assert job["endTime"]

    lines = parse_stream(res.stdout)
    assert numbers(r"step (\d+) loss=", lines) == list(range(1, BASIC_STEPS + 1))
    assert numbers(r"flood (\d+) ", lines) == list(range(FLOOD_LINES))
    assert {ln.task for ln in lines} == {"master-replica-0", "service"}
    # Nothing lost, nothing doubled, same order: what the service holds. The only lines gcloud
    # may legitimately miss are the service's last lifecycle lines, logged as the job ended (it
    # stops once the job has an endTime and two polls came back empty; `docs/wire-formats.md`).
    held = server_entries(service, jobs.basic)
    assert len(held) > 1000  # more than one gcloud page, so paging and insertId ties ran
    shown = [(ln.severity, ln.task, ln.message) for ln in lines]
    expected = [(e["severity"], entry_task(e), e["jsonPayload"]["message"]) for e in held]
    assert shown == expected[: len(shown)]
    assert all(task == "service" for _, task, _ in expected[len(shown) :]), expected[len(shown) :]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+0000", ln.time) for ln in lines)


def test_stream_logs_task_name_filters_one_replica(service: LiveService, jobs: Jobs) -> None:
    stream = jobs.worker_stream
    assert stream.state_at_start not in TERMINAL, "the stream should have started on a live job"
    res = stream.result()
    assert res.returncode == 0, res.stderr
    assert service.client().get(jobs.custom)["state"] == "SUCCEEDED"

    lines = parse_stream(res.stdout)
    assert lines, "worker-replica-1 logged nothing?"
    assert {ln.task for ln in lines} == {"worker-replica-1"}
    assert any("task=worker-1" in ln.message for ln in lines)
    held = server_entries(service, jobs.custom, "worker-replica-1")
    assert [ln.message for ln in lines] == [e["jsonPayload"]["message"] for e in held]
    # The filter really had something to drop: every replica of the CUSTOM job logged.
    tasks = {entry_task(e) for e in server_entries(service, jobs.custom)}
    assert {"master-replica-0", "worker-replica-0", "worker-replica-1", "ps-replica-0"} <= tasks


def test_cancel_finished_job(gcloud: Gcloud, jobs: Jobs) -> None:
    jobs.basic_stream.result()  # the job has ended
    res = gcloud(f"cancel {jobs.basic}")
    assert res.returncode == 1
    assert "ERROR: (gcloud.ai-platform.jobs.cancel) FAILED_PRECONDITION:" in res.stderr
    assert "SUCCEEDED" in res.stderr
    assert res.seconds < QUICK_ERROR_SECONDS
