"""A ``:metrics`` answer whose replicas run on the nodes of a Ray cluster, served to the real
``MetricsClient`` without a service: the data feed of the node views' Pilot and snapshot tests.

The answer is written in the exact form ``tui_app/local/metrics.py`` documents and builds (a
``node`` of ``{"address", "id"}`` on each replica the Ray executor placed, a 56-hex Ray node id,
the trials' replicas after the job's with a ``trialId`` and no samples), for the three-node
loopback cluster the service tests run (``tests/support/ray_cluster.py``: 127.0.0.2-4). The
real service with ``--executor ray`` is tested in tests/service; a Pilot test cannot afford a
Ray cluster on two shared cores, and a snapshot needs the same samples every run.

``ReplayedSession`` stands where ``requests`` would: the client builds its URLs, reads the
status and parses the JSON as it does against the service, and ``since`` filters the samples
as the service does (only those later than it).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import unquote

from google.auth.credentials import AnonymousCredentials

from tests.support.fixed_jobs import BASE, FixedSource
from tui_app.api.connection import Connection
from tui_app.api.metrics_client import MetricsClient

NODE_IDS = {
    "127.0.0.2": "2ae69e1b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f80912a3b",
    "127.0.0.3": "9f1c03d2e4b5a6978877665544332211ffeeddccbbaa998877665544",
    "127.0.0.4": "c0ffee0123456789abcdef0123456789abcdef0123456789abcdef01",
}
"""Three nodes, as Ray names them: 28 bytes of hex."""
PLACEMENT = {
    "master-replica-0": "127.0.0.2",
    "worker-replica-0": "127.0.0.3",
    "worker-replica-1": "127.0.0.4",
    "ps-replica-0": "127.0.0.3",
}
"""Where the cluster job's replicas run: SPREAD over the three nodes, two on one."""
START = datetime(2026, 11, 22, 9, 20, 0, tzinfo=UTC)
SAMPLES = 20
"""Samples 2 s apart from ``START``: enough for a sparkline, the same every run."""


RAY_JOB_ID = "census_ray_20261122_091500"
RAY_JOB: dict[str, Any] = {
    "jobId": RAY_JOB_ID,
    "state": "RUNNING",
    "createTime": "2026-11-22T09:15:00Z",
    "startTime": "2026-11-22T09:19:40Z",
    "etag": "AAAAAAAAAAA=",
    "labels": {"owner": "ann"},
    "trainingInput": {
        **BASE,
        "scaleTier": "CUSTOM",
        "masterType": "n1-standard-4",
        "workerType": "n1-standard-4",
        "workerCount": "2",
        "parameterServerType": "standard",
        "parameterServerCount": "1",
    },
}
"""The cluster job whose replicas ``ray_answer`` places (the demo's 4-replica job on Ray)."""


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _node(address: str) -> dict[str, str]:
    return {"address": address, "id": NODE_IDS[address]}


def ray_answer(placement: dict[str, str] | None = None) -> dict[str, Any]:
    """The ``:metrics`` answer of a running cluster job whose replicas run on ``placement``'s
    nodes (task name -> address; a task mapped to "" runs on the service's own machine)."""
    replicas = []
    for n, (task, address) in enumerate((PLACEMENT if placement is None else placement).items()):
        samples = [
            {
                "time": _stamp(START + timedelta(seconds=2 * i)),
                "cpuPercent": float(20 + 10 * n + (i * 7) % 40),
                "memoryBytes": str((200 + 10 * n + i) * 1024 * 1024),
            }
            for i in range(SAMPLES)
        ]
        replica: dict[str, Any] = {"taskName": task, "samples": samples}
        if address:
            replica["node"] = _node(address)
        replicas.append(replica)
    return {"sampleInterval": "2s", "replicas": replicas}


def tuning_answer() -> dict[str, Any]:
    """A tuning job's answer: no replicas of its own, three trials' masters on the nodes."""
    trials = [("1", "127.0.0.2"), ("2", "127.0.0.4"), ("3", "127.0.0.3")]
    return {
        "sampleInterval": "2s",
        "replicas": [
            {"taskName": "master-replica-0", "trialId": t, "node": _node(a), "samples": []}
            for t, a in trials
        ],
    }


@dataclass
class _Response:
    status_code: int
    body: Any
    reason: str = ""

    def json(self) -> Any:
        return copy.deepcopy(self.body)


@dataclass
class ReplayedSession:
    """Answers ``GET .../jobs/{job}:{method}`` from ``answers`` (job id -> ``:metrics`` body);
    every other method, or an unknown job, is a 404 (a service without ``:environment``)."""

    answers: dict[str, dict[str, Any]]
    requests: list[tuple[str, dict[str, str] | None]] = field(default_factory=list)
    """Every GET made, with its query."""

    def get(self, url: str, params: dict[str, str] | None = None, timeout: Any = None) -> Any:
        self.requests.append((url, params))
        job, _, method = unquote(url.rsplit("/", 1)[-1]).partition(":")
        body = self.answers.get(job)
        if method != "metrics" or body is None:
            return _Response(404, {"error": {"code": 404, "status": "NOT_FOUND"}}, "Not Found")
        since = (params or {}).get("since")
        answer = copy.deepcopy(body)
        if since:  # RFC 3339 stamps of one width: their text order is their time order
            for rep in answer["replicas"]:
                rep["samples"] = [s for s in rep["samples"] if s["time"] > since]
        return _Response(200, answer)

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class RecordedConnection(Connection):
    """A local-service connection whose ``:metrics`` reads are answered by ``session``; its
    endpoint answers nothing else (a log stream on it finds no service, and retries)."""

    session: ReplayedSession | None = None

    def metrics(self, project: str) -> MetricsClient:
        assert self.session is not None
        return MetricsClient(self.endpoint, project, self.credentials, session=self.session)


class RecordedSource(FixedSource):
    """``FixedSource``'s jobs, and a connection whose ``:metrics`` answers are ``answers``."""

    def __init__(self, jobs: list[dict[str, Any]], answers: dict[str, dict[str, Any]]) -> None:
        super().__init__(jobs)
        self.session = ReplayedSession(answers)
        self._recorded = RecordedConnection(
            "http://127.0.0.1:9",  # the discard port: refused at once, never a real service
            AnonymousCredentials(),
            "local (127.0.0.1:8470)",
            local=True,
            session=self.session,
        )

    def connection(self) -> Connection:
        return self._recorded


def metrics_reads(session: ReplayedSession) -> Callable[[], int]:
    """How many ``:metrics`` GETs ``session`` has answered so far (a condition to wait on)."""
    return lambda: sum(1 for url, _ in session.requests if url.endswith(":metrics"))
