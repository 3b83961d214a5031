"""A handle on a running local service, with the small waits tests need."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_app.api.connection import Connection
from tui_app.api.errors import ApiCallError
from tui_app.api.jobs_client import JobsClient, make_credentials

PROJECT = "test-project"
TERMINAL = ("SUCCEEDED", "FAILED", "CANCELLED")
CLUSTER: dict[str, str] = {
    "scaleTier": "CUSTOM",
    "masterType": "standard",
    "workerType": "standard",
    "workerCount": "2",
    "parameterServerType": "standard",
    "parameterServerCount": "1",
}
"""The trainingInput fields of the usual small cluster: a master, two workers and a parameter
server (four replicas), each on the ``standard`` machine. Add an evaluator with
``{**CLUSTER, "evaluatorType": "standard", "evaluatorCount": "1"}``."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LiveService:
    proc: subprocess.Popen[bytes]
    url: str
    state_dir: Path
    no_auth: bool = False

    @property
    def token(self) -> str | None:
        if self.no_auth:
            return None
        return (self.state_dir / "token").read_text().strip()

    def wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"service exited with {self.proc.returncode}")
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=1) as resp:
                    if resp.status == 200:
                        return
            except OSError:
                time.sleep(0.05)
        raise TimeoutError("service did not answer")

    def client(self, project: str = PROJECT) -> JobsClient:
        return JobsClient(self.url, project, make_credentials(self.token))

    def connection(self, token: str | None = None) -> Connection:
        """A local profile's connection to this service, with its token or with ``token``."""
        return Connection(self.url, make_credentials(token or self.token), "test", local=True)

    def stage(self, local_file: Path, bucket: str = "test-bucket") -> str:
        """Copy a file to gs://bucket/packages/<name> of this service."""
        dest = self.state_dir / "gcs" / bucket / "packages" / local_file.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        if not dest.exists():
            shutil.copy(local_file, dest)
        return f"gs://{bucket}/packages/{local_file.name}"

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        token: str | None = "default",
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        """A raw HTTP call; returns (status, parsed JSON body).

        A body goes as JSON (``Content-Type: application/json``, what every real client sends)
        unless ``headers`` say otherwise; urllib's own default is a form body, which the
        service refuses on its JSON routes.
        """
        req = urllib.request.Request(self.url + path, data=body, method=method)
        if body is not None and "content-type" not in {k.lower() for k in headers or {}}:
            req.add_header("Content-Type", "application/json")
        tok = self.token if token == "default" else token
        if tok:
            req.add_header("Authorization", f"Bearer {tok}")
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return resp.status, json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"null")

    def post(self, path: str, body: Any) -> tuple[int, Any]:
        """POST ``body`` as JSON to ``path``: (status, parsed JSON body)."""
        return self.request("POST", path, json.dumps(body).encode())

    def post_job(self, body: dict[str, Any], project: str = PROJECT) -> tuple[int, Any]:
        """jobs.create of ``body`` as a raw call, for a test that checks a refusal's status and
        words: (status, parsed JSON body)."""
        return self.post(f"/v1/projects/{project}/jobs", body)

    def entries(
        self,
        flt: str,
        order: str = "timestamp asc",
        page_size: int = 1000,
        project: str = PROJECT,
    ) -> list[dict[str, Any]]:
        """Every LogEntry matching ``flt``, as the service pages them out (raw entries:list)."""
        body: dict[str, Any] = {
            "resourceNames": [f"projects/{project}"],
            "filter": flt,
            "orderBy": order,
            "pageSize": page_size,
        }
        out: list[dict[str, Any]] = []
        while True:
            status, resp = self.post("/v2/entries:list", body)
            assert status == 200, resp
            out += resp.get("entries", [])
            if not resp.get("nextPageToken"):
                return out
            body["pageToken"] = resp["nextPageToken"]

    def wait_state(
        self,
        job_id: str,
        states: tuple[str, ...] = TERMINAL,
        timeout: float = 60.0,
        project: str = PROJECT,
    ) -> dict[str, Any]:
        client = self.client(project)
        deadline = time.monotonic() + timeout
        while True:
            job = client.get(job_id)
            if job["state"] in states:
                return job
            if time.monotonic() > deadline:
                raise TimeoutError(f"{job_id} still {job['state']} after {timeout}s")
            time.sleep(0.1)

    def end_jobs(self, job_ids: list[str], project: str = PROJECT) -> None:
        """Cancel those of ``job_ids`` still live (the last first: nothing queued behind them
        starts meanwhile) and wait until every one has ended.

        A job may end on its own between the look at its state and the cancel: the service
        then refuses the cancel (FAILED_PRECONDITION), which is what this wanted anyway.
        """
        client = self.client(project)
        for job_id in reversed(job_ids):
            if client.get(job_id)["state"] in ("QUEUED", "PREPARING", "RUNNING"):
                try:
                    client.cancel(job_id)
                except ApiCallError as exc:
                    if exc.status != "FAILED_PRECONDITION":
                        raise
        for job_id in job_ids:
            self.wait_state(job_id, project=project)


def basic_job(job_id: str, package_uri: str, *args: str, **training: Any) -> dict[str, Any]:
    """A BASIC job of the sample trainer; ``training`` adds or replaces trainingInput fields
    (``pythonModule="<name>.task"`` for a package of a test's own, a cluster's fields...)."""
    ti: dict[str, Any] = {
        "region": "us-central1",
        "pythonModule": "trainer.task",
        "packageUris": [package_uri],
        "args": list(args),
    }
    ti.update(training)
    return {"jobId": job_id, "trainingInput": ti}


def grid_search(
    param: str, values: list[Any], parallel: int = 1, goal: str = "MINIMIZE"
) -> dict[str, Any]:
    """The ``hyperparameters`` of a grid over one DISCRETE parameter: a trial for each of
    ``values``, ``parallel`` of them at a time, the best by ``goal``."""
    return {
        "goal": goal,
        "algorithm": "GRID_SEARCH",
        "maxTrials": len(values),
        "maxParallelTrials": parallel,
        "params": [{"parameterName": param, "type": "DISCRETE", "discreteValues": values}],
    }
