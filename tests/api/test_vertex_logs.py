"""Vertex AI logs: the stream asks Cloud Logging what gcloud's Vertex commands ask, over HTTP.

A small Cloud Logging stand-in (a real HTTP server on a free port) records each entries:list
body and answers with entries shaped as Vertex AI writes them: ``resource.type="ml_job"``, the
job's numeric id in ``resource.labels.job_id`` and ``workerpoolN-i`` task names. Entries are
hand-built from gcloud 528's Vertex log parser (command_lib/ai/log_util.py), not captured.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tui_app.api.connection import Connection
from tui_app.api.jobs_client import make_credentials
from tui_app.api.log_stream import LogStream

VERTEX_ID = "3931099178511368192"


def _entry(n: int, task: str, text: str) -> dict[str, Any]:
    return {
        "insertId": f"abc{n:04d}",
        "timestamp": f"2026-11-22T09:00:{n:02d}.123456789Z",
        "receiveTimestamp": f"2026-11-22T09:00:{n:02d}.500000000Z",
        "severity": "INFO",
        "logName": "projects/my-project/logs/workerpool0-0",
        "resource": {
            "type": "ml_job",
            "labels": {"job_id": VERTEX_ID, "project_id": "my-project", "task_name": task},
        },
        "jsonPayload": {"message": text, "levelname": "INFO"},
    }


ENTRIES = [
    _entry(1, "service", "Waiting for job to be provisioned."),
    _entry(2, "workerpool0-0", "step 1 loss 0.91"),
    _entry(3, "workerpool1-0", "worker 0 ready"),
    _entry(4, "workerpool2-0", "ps 0 serving"),
    _entry(5, "workerpool1-1", "worker 1 ready"),
]


class _Logging(BaseHTTPRequestHandler):
    bodies: list[dict[str, Any]]

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.bodies.append({"path": self.path, **body})
        flt = str(body.get("filter", ""))
        picked = [
            e
            for e in ENTRIES
            if f'resource.labels.job_id="{VERTEX_ID}"' in flt
            and (
                "task_name=" not in flt
                or f'task_name="{e["resource"]["labels"]["task_name"]}"' in flt
            )
        ]
        data = json.dumps({"entries": picked}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def logging_server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    bodies: list[dict[str, Any]] = []
    handler = type("Handler", (_Logging,), {"bodies": bodies})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", bodies
    finally:
        server.shutdown()
        server.server_close()


def _vertex(url: str) -> Connection:
    return Connection(
        "https://us-central1-aiplatform.googleapis.com",
        make_credentials("t0ken"),
        "vertex",
        backend="vertex",
        logging_endpoint=url,
        region="us-central1",
    )


JOB_ID = "census_dist_20261122_090000"
JOB: dict[str, Any] = {"jobId": JOB_ID, "vertexJob": {"id": VERTEX_ID}}


def test_vertex_logs_use_the_numeric_id_and_platform_task_names(
    logging_server: tuple[str, list[dict[str, Any]]],
) -> None:
    url, bodies = logging_server
    stream = LogStream(_vertex(url), "my-project", JOB_ID, job=JOB)
    lines = stream.poll()
    assert [(line.task_name, line.text) for line in lines] == [
        ("service", "Waiting for job to be provisioned."),
        ("master-replica-0", "step 1 loss 0.91"),
        ("worker-replica-0", "worker 0 ready"),
        ("ps-replica-0", "ps 0 serving"),
        ("worker-replica-1", "worker 1 ready"),
    ]
    sent = bodies[-1]
    assert sent["path"].split("?")[0] == "/v2/entries:list"
    assert sent["resourceNames"] == ["projects/my-project"]
    assert sent["filter"].startswith(
        f'resource.type="ml_job" AND resource.labels.job_id="{VERTEX_ID}" AND '
    )
    assert "cloudml_job" not in sent["filter"] and JOB_ID not in sent["filter"]


def test_one_replica_is_asked_for_by_its_worker_pool_name(
    logging_server: tuple[str, list[dict[str, Any]]],
) -> None:
    url, bodies = logging_server
    stream = LogStream(_vertex(url), "my-project", JOB_ID, task_name="worker-replica-1", job=JOB)
    assert [line.text for line in stream.poll()] == ["worker 1 ready"]
    assert 'resource.labels.task_name="workerpool1-1"' in bodies[-1]["filter"]


def test_an_ml_v1_connection_keeps_the_job_id_filter(
    logging_server: tuple[str, list[dict[str, Any]]],
) -> None:
    url, bodies = logging_server
    conn = Connection(url, make_credentials(None), "url")
    stream = LogStream(conn, "my-project", JOB_ID, task_name="master-replica-0", job=JOB)
    assert stream.poll() == []  # the stand-in only answers Vertex's numeric-id filter
    flt = bodies[-1]["filter"]
    assert f'resource.labels.job_id="{JOB_ID}"' in flt
    assert '(resource.labels.task_name="master-replica-0"' in flt
