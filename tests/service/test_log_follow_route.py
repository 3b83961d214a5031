"""``entries:follow``, the local service's fast path for log panes, against a real service.

The ground truth is ``entries:list`` on the same filter: the route must answer exactly its
entries, in its order, page for page. The client (``LogStream``) must use it on a local
connection and fall back to ``entries:list`` on a service without it.
"""

from __future__ import annotations

import json
import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import unique_id
from tests.support.live_service import PROJECT, LiveService, basic_job
from tui_app.api.connection import Connection
from tui_app.api.jobs_client import make_credentials
from tui_app.api.log_stream import LogStream, normalize_timestamp

CLUSTER = {"scaleTier": "CUSTOM", "masterType": "standard", "workerType": "standard"}
FLOOD = 1500


@pytest.fixture(scope="module")
def flooded(service: LiveService, trainer_sdist: Path) -> str:
    """A finished job whose master printed FLOOD lines (its worker, up to as many: the job
    ends with its master)."""
    job_id = unique_id("follow_route")
    uri = service.stage(trainer_sdist)
    body = basic_job(job_id, uri, "--flood", str(FLOOD), "--steps", "1", **CLUSTER)
    body["trainingInput"]["workerCount"] = "1"
    service.client().create(body)
    service.wait_state(job_id)
    return job_id


def _follow(service: LiveService, token: str | None = "default", **body: Any) -> tuple[int, Any]:
    return service.request("POST", "/v2/entries:follow", json.dumps(body).encode(), token=token)


def _pages(service: LiveService, flt: str, order: str, size: int) -> list[list[Any]]:
    rows: list[list[Any]] = []
    body: dict[str, Any] = {
        "resourceNames": [f"projects/{PROJECT}"],
        "filter": flt,
        "orderBy": order,
        "pageSize": size,
    }
    while True:
        status, resp = _follow(service, **body)
        assert status == 200, resp
        rows += resp["rows"]
        if "nextPageToken" not in resp:
            return rows
        body["pageToken"] = resp["nextPageToken"]


def _as_rows(entries: list[dict[str, Any]]) -> list[list[Any]]:
    """entries:list's entries in the route's shape."""
    from tui_app.model.logs.severity import parse_severity

    return [
        [
            e["insertId"],
            normalize_timestamp(e["timestamp"]),
            e["resource"]["labels"]["task_name"],
            e["labels"].get("ml.googleapis.com/trial_id"),
            parse_severity(e["severity"]),
            e["jsonPayload"]["message"],
        ]
        for e in entries
    ]


@pytest.mark.parametrize("order", ["timestamp asc", "timestamp desc"])
def test_pages_hold_exactly_what_entries_list_answers(
    service: LiveService, flooded: str, order: str
) -> None:
    flt = f'resource.labels.job_id="{flooded}"'
    truth = _as_rows(service.entries(flt, order=order))
    assert len(truth) > FLOOD
    assert _pages(service, flt, order, 700) == truth  # page tokens: none lost, none twice


def test_a_cursor_and_a_task_or_trial_filter_narrow_it_as_entries_list_does(
    service: LiveService, flooded: str
) -> None:
    everything = service.entries(f'resource.labels.job_id="{flooded}"')
    ts, iid = everything[FLOOD]["timestamp"], everything[FLOOD]["insertId"]
    for extra in (
        f' AND ((timestamp="{ts}" AND insertId>"{iid}") OR timestamp>"{ts}")',
        ' AND resource.labels.task_name="worker-replica-0"',
        ' AND labels."ml.googleapis.com/trial_id"="1"',
    ):
        flt = f'resource.labels.job_id="{flooded}"' + extra
        truth = _as_rows(service.entries(flt))
        assert _pages(service, flt, "timestamp asc", 10_000) == truth
    master = _pages(
        service,
        f'resource.labels.job_id="{flooded}" AND resource.labels.task_name="master-replica-0"',
        "timestamp asc",
        10_000,
    )
    assert {row[2] for row in master} == {"master-replica-0"}
    assert sum(row[5].startswith("flood ") and row[5][6].isdigit() for row in master) == FLOOD


def test_past_the_end_of_a_finished_job_a_long_poll_answers_empty(
    service: LiveService, flooded: str
) -> None:
    last = service.entries(f'resource.labels.job_id="{flooded}"', order="timestamp desc")[0]
    ts, iid = last["timestamp"], last["insertId"]
    status, resp = _follow(
        service,
        resourceNames=[f"projects/{PROJECT}"],
        filter=f'resource.labels.job_id="{flooded}" AND ((timestamp="{ts}" AND insertId>"{iid}")'
        f' OR timestamp>"{ts}")',
        waitSeconds=0.2,
    )
    assert (status, resp) == (200, {"rows": []})


def test_a_long_poll_answers_with_the_first_new_line(
    service: LiveService, trainer_sdist: Path
) -> None:
    job_id = unique_id("follow_wait")
    service.client().create(
        basic_job(job_id, service.stage(trainer_sdist), "--steps", "3", "--sleep", "0.5")
    )
    body: dict[str, Any] = {
        "resourceNames": [f"projects/{PROJECT}"],
        "filter": f'resource.labels.job_id="{job_id}" AND timestamp>="1970-01-01T00:00:00Z"',
        "waitSeconds": 5,
    }
    for _ in range(24):  # the job's first line may take a while (its environment)
        status, resp = _follow(service, **body)
        assert status == 200, resp
        if resp["rows"]:
            break
    assert resp["rows"], "no line within 24 long polls of 5 s"
    service.wait_state(job_id)


@pytest.mark.parametrize(
    ("token", "headers", "status"),
    [(None, {}, 401), ("wrong", {}, 401), ("default", {"Origin": "http://evil.example"}, 403)],
)
def test_the_route_has_the_same_auth_and_browser_guard(
    service: LiveService, token: str | None, headers: dict[str, str], status: int
) -> None:
    body = json.dumps({"resourceNames": [f"projects/{PROJECT}"]}).encode()
    got, _ = service.request(
        "POST",
        "/v2/entries:follow",
        body,
        token=token,
        headers={"Content-Type": "application/json", **headers},
    )
    assert got == status


@pytest.mark.parametrize("wait", [-1, "soon", True])
def test_a_bad_wait_is_refused_by_name(service: LiveService, wait: object) -> None:
    status, resp = _follow(service, resourceNames=[f"projects/{PROJECT}"], waitSeconds=wait)
    assert status == 400
    assert "waitSeconds" in resp["error"]["message"]


class _OlderService(BaseHTTPRequestHandler):
    """Forwards to the real service, except that ``entries:follow`` does not exist (404)."""

    target = ""

    def do_POST(self) -> None:
        data = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path.startswith("/v2/entries:follow"):
            self._answer(404, b'{"error": {"code": 404, "message": "Not Found"}}')
            return
        req = urllib.request.Request(self.target + self.path, data=data, method="POST")
        for name in ("Authorization", "Content-Type"):
            if self.headers.get(name):
                req.add_header(name, self.headers[name])
        with urllib.request.urlopen(req, timeout=30) as resp:
            self._answer(resp.status, resp.read())

    def _answer(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def older_service(service: LiveService) -> Iterator[str]:
    handler = type("Handler", (_OlderService,), {"target": service.url})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _read_all(stream: LogStream) -> list[tuple[str, str]]:
    keys: list[tuple[str, str]] = []
    while lines := stream.poll():
        keys += [line.key for line in lines]
    return keys


def test_a_local_stream_reads_the_fast_path_and_falls_back_on_an_older_service(
    service: LiveService, flooded: str, older_service: str
) -> None:
    truth = [
        (normalize_timestamp(e["timestamp"]), e["insertId"])
        for e in service.entries(f'resource.labels.job_id="{flooded}"')
    ]
    creds = make_credentials(service.token)
    fast = LogStream(Connection(service.url, creds, "t", local=True), PROJECT, flooded)
    assert _read_all(fast) == truth
    assert fast.fast
    older = LogStream(
        Connection(older_service, creds, "t", local=True), PROJECT, flooded, batch_limit=1000
    )
    assert _read_all(older) == truth
    assert not older.fast  # it asked once, got 404, and read entries:list from then on
    cloud = LogStream(Connection(service.url, creds, "t"), PROJECT, flooded)
    assert not cloud.fast


def test_follow_jumps_over_a_backlog_to_the_tail_and_only_with_on_skip(
    service: LiveService, flooded: str
) -> None:
    """A finished job read from its start in batches of 500 is a backlog over half a second old:
    no batch after the first is read before the jump."""
    truth = [
        (normalize_timestamp(e["timestamp"]), e["insertId"])
        for e in service.entries(f'resource.labels.job_id="{flooded}"')
    ]
    creds = make_credentials(service.token)
    conn = Connection(service.url, creds, "t", local=True)
    job = service.client().get(flooded)

    def follow(on_skip: Any) -> list[tuple[str, list[tuple[str, str]]]]:
        stream = LogStream(conn, PROJECT, flooded, batch_limit=500, end_grace_seconds=0)
        stream.note_job(job)
        got: list[tuple[str, list[tuple[str, str]]]] = []
        stream.follow(
            threading.Event(),
            lambda lines: got.append(("lines", [ln.key for ln in lines])),
            lambda: job,
            lambda: 0.05,
            lambda exc: None,
            on_skip=None
            if on_skip is None
            else lambda ls: got.append(("skip", [ln.key for ln in ls])),
        )
        return got

    jumped = follow(on_skip=True)
    # The first full batch shows a backlog: it is shown, and the next read is the tail's.
    assert [kind for kind, _ in jumped] == ["lines", "skip"]
    assert jumped[0][1] == truth[:500]
    assert jumped[1][1] == truth[-500:]  # the newest lines, in order
    drained = follow(on_skip=None)  # jobs logs: every line, in order
    assert [key for _, keys in drained for key in keys] == truth
