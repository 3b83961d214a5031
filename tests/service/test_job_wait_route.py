"""``GET .../jobs/{id}:wait`` (issue 27): a long poll that answers when the job changes.

Against a real service over HTTP, and ``MetricsClient.wait_for_change`` against the same
service and against servers without the method. Whether an answer came from a change or from
the timeout is read from the answer itself: a change carries another version of the job (a new
stored etag), the timeout the same one.
"""

from __future__ import annotations

import asyncio
import http.server
import json
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from aiohttp import web

from tests.conftest import unique_id
from tests.support.live_service import PROJECT, TERMINAL, LiveService, basic_job
from tui_app.api.errors import ApiCallError
from tui_app.api.jobs_client import make_credentials
from tui_app.api.metrics_client import MetricsClient
from tui_app.local.environments.containers import EngineStatus
from tui_app.local.jobs import JobService, same_version
from tui_app.local.paths import StateDir
from tui_app.local.server import make_app

LONG = 55.0
"""The longest wait the service holds: an answer before it came from a change, not a timeout."""
ORDER = ("QUEUED", "PREPARING", "RUNNING", "SUCCEEDED")


def wait(
    svc: LiveService,
    job_id: str,
    etag: str | None = None,
    timeout: str | float | None = None,
    token: str | None = "default",
) -> tuple[int, Any]:
    query: dict[str, str] = {}
    if etag is not None:
        query["etag"] = etag
    if timeout is not None:
        query["timeoutSeconds"] = str(timeout)
    path = f"/v1/projects/{PROJECT}/jobs/{job_id}:wait"
    return svc.request("GET", path + (f"?{urlencode(query)}" if query else ""), token=token)


def timed(call: Callable[[], Any]) -> tuple[Any, float]:
    start = time.monotonic()
    value = call()
    return value, time.monotonic() - start


@pytest.fixture(scope="module")
def ended_job(service: LiveService, trainer_sdist: Path) -> dict[str, Any]:
    """A job that ran and SUCCEEDED: nothing changes it any more but a label edit."""
    job_id = unique_id("wait_done")
    service.client().create(basic_job(job_id, service.stage(trainer_sdist), "--steps", "3"))
    job = service.wait_state(job_id)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    return job


def test_each_answer_is_the_next_version_until_the_job_ends(
    service: LiveService, package_uri: str
) -> None:
    job_id = unique_id("wait_chain")
    job = service.client().create(basic_job(job_id, package_uri, "--steps", "5"))
    etag, states = job["etag"], [job["state"]]
    while states[-1] not in TERMINAL:
        status, answer = wait(service, job_id, etag, LONG)
        assert status == 200, answer
        assert answer["jobId"] == job_id and answer["trainingInput"] == job["trainingInput"]
        # A change, never the timeout: each answer names another stored version.
        assert not same_version(etag, answer["etag"]), (states, answer)
        etag = answer["etag"]
        states.append(answer["state"])
    assert states[-1] == "SUCCEEDED", states
    # Later states only, in the state machine's order (a quick step may be passed by unseen).
    assert [s for s in ORDER if s in states] == list(dict.fromkeys(states)), states
    assert "endTime" in answer


def test_a_waiting_request_is_answered_by_the_change(
    service: LiveService, package_uri: str
) -> None:
    job_id = unique_id("wait_cancel")
    client = service.client()
    client.create(basic_job(job_id, package_uri, "--steps", "100000", "--sleep", "0.05"))
    running = service.wait_state(job_id, ("RUNNING",), timeout=120)
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(timed, lambda: wait(service, job_id, running["etag"], LONG))
        client.cancel(job_id)
        (status, answer), took = pending.result()
    assert status == 200, answer
    assert answer["state"] in ("CANCELLING", "CANCELLED")
    assert took < LONG  # woken by the cancel, not by its timeout
    service.wait_state(job_id)


def test_a_label_edit_wakes_a_wait_on_an_ended_job(
    service: LiveService, ended_job: dict[str, Any]
) -> None:
    job_id = ended_job["jobId"]
    current = service.client().get(job_id)
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(timed, lambda: wait(service, job_id, current["etag"], LONG))
        label = unique_id("v").lower()[:60]
        status, patched = service.request(
            "PATCH",
            f"/v1/projects/{PROJECT}/jobs/{job_id}?updateMask=labels",
            json.dumps({"labels": {"seen": label}}).encode(),
        )
        assert status == 200, patched
        (status, answer), took = pending.result()
    assert status == 200, answer
    assert answer["labels"] == {"seen": label} and answer["etag"] == patched["etag"]
    assert took < LONG


def test_stale_or_missing_etag_answers_at_once(
    service: LiveService, ended_job: dict[str, Any]
) -> None:
    job_id = ended_job["jobId"]
    current = service.client().get(job_id)
    for etag in ("AAAAAAAAAAA=", "not base64 at all", None, ""):
        (status, answer), took = timed(partial(wait, service, job_id, etag, LONG))
        assert status == 200, answer
        assert answer["etag"] == current["etag"] and answer["state"] == "SUCCEEDED"
        assert took < LONG
    # More than the most is taken as the most, not refused.
    status, answer = wait(service, job_id, None, 1000)
    assert status == 200 and answer["jobId"] == job_id


def test_an_unchanged_ended_job_is_answered_after_the_timeout(
    service: LiveService, ended_job: dict[str, Any]
) -> None:
    job_id = ended_job["jobId"]
    current = service.client().get(job_id)
    (status, answer), took = timed(lambda: wait(service, job_id, current["etag"], 0.5))
    assert status == 200, answer
    assert answer == current
    assert took >= 0.5
    status, answer = wait(service, job_id, current["etag"], 0)
    assert status == 200 and answer == current


@pytest.mark.parametrize("bad", ["-1", "abc", "1e400", "nan", "-inf", ""])
def test_bad_timeout_is_a_400_naming_it(
    service: LiveService, ended_job: dict[str, Any], bad: str
) -> None:
    status, body = wait(service, ended_job["jobId"], None, bad)
    assert status == 400, body
    err = body["error"]
    assert err["status"] == "INVALID_ARGUMENT"
    [violation] = err["details"][0]["fieldViolations"]
    assert violation["field"] == "timeoutSeconds"


def test_unknown_job_is_a_404_naming_it_and_no_token_a_401(
    service: LiveService, ended_job: dict[str, Any]
) -> None:
    missing = unique_id("no_such_job")
    status, body = wait(service, missing, None, 1)
    assert status == 404, body
    assert body["error"]["status"] == "NOT_FOUND"
    assert f"projects/{PROJECT}/jobs/{missing}" in body["error"]["message"]
    status, body = wait(service, ended_job["jobId"], None, 1, token=None)
    assert status == 401 and body["error"]["status"] == "UNAUTHENTICATED"
    status, body = wait(service, ended_job["jobId"], None, 1, token="wrong")
    assert status == 401, body


# -- the client ----------------------------------------------------------------------------------


def test_client_waits_against_the_service(service: LiveService, ended_job: dict[str, Any]) -> None:
    client = MetricsClient(service.url, PROJECT, make_credentials(service.token), timeout=5)
    try:
        job_id = ended_job["jobId"]
        current = service.client().get(job_id)
        # An unchanged job after the wait: the read timeout (5 s) is shorter than the wait
        # (6 s), so this answers only if the client lengthens it by the wait.
        answer = client.wait_for_change(job_id, current["etag"], 6)
        assert answer == current
        assert client.wait_for_change(job_id, "AAAAAAAAAAA=", LONG) == current
        assert client.wait_for_change(job_id, None, 0) == current
        with pytest.raises(ApiCallError) as unknown:
            client.wait_for_change(unique_id("missing"), None, 1)
        assert unknown.value.status_code == 404 and unknown.value.status == "NOT_FOUND"
    finally:
        client.close()
    denied = MetricsClient(service.url, PROJECT, make_credentials("wrong-token"))
    with pytest.raises(ApiCallError) as bad:
        denied.wait_for_change("x", None, 1)
    assert bad.value.status_code == 401
    nobody = MetricsClient("http://127.0.0.1:9", PROJECT, make_credentials(None), timeout=2)
    with pytest.raises(ApiCallError) as down:
        nobody.wait_for_change("x", None, 1)
    assert down.value.unreachable


class _NoWait(http.server.BaseHTTPRequestHandler):
    """A server without ``:wait``: what a cloud endpoint or an older local service answers."""

    status = 404
    body: bytes = b""
    content_type = "application/json"

    def do_GET(self) -> None:
        self.send_response(self.status)
        self.send_header("Content-Type", self.content_type)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: Any) -> None:
        pass


def _rpc(code: int, status: str, message: str) -> bytes:
    return json.dumps({"error": {"code": code, "status": status, "message": message}}).encode()


@pytest.fixture
def no_wait_server() -> Iterator[Callable[[int, bytes, str], str]]:
    servers: list[http.server.ThreadingHTTPServer] = []

    def serve(status: int, body: bytes, content_type: str = "application/json") -> str:
        attrs = {"status": status, "body": body, "content_type": content_type}
        server = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), type("Handler", (_NoWait,), attrs)
        )
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield serve
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("status", "body", "content_type"),
    [
        # The local service before issue 27.
        (404, _rpc(404, "NOT_FOUND", "Unknown method :wait for GET."), "application/json"),
        # aiohttp's own 404 as the local service words it: it names the job's URL, not the job.
        (
            404,
            _rpc(404, "NOT_FOUND", "The requested URL /v1/projects/p/jobs/job:wait was not found."),
            "application/json",
        ),
        (404, b"<html><body>404. That's an error.</body></html>", "text/html"),
        (404, _rpc(404, "UNIMPLEMENTED", "not here"), "application/json"),
        (405, _rpc(405, "INVALID_ARGUMENT", "Method GET is not allowed here."), "application/json"),
        (501, _rpc(501, "UNIMPLEMENTED", "not implemented"), "application/json"),
    ],
)
def test_client_without_the_method_is_none(
    no_wait_server: Callable[[int, bytes, str], str], status: int, body: bytes, content_type: str
) -> None:
    url = no_wait_server(status, body, content_type)
    assert MetricsClient(url, "p", make_credentials(None)).wait_for_change("job", "e", 1) is None


def test_client_unknown_job_is_not_a_missing_method(
    no_wait_server: Callable[[int, bytes, str], str],
) -> None:
    """The service's own unknown-job answer raises, even from a server that sends no details."""
    body = _rpc(
        404, "NOT_FOUND", "Field: name Error: The specified job was not found: projects/p/jobs/job"
    )
    url = no_wait_server(404, body, "application/json")
    with pytest.raises(ApiCallError) as unknown:
        MetricsClient(url, "p", make_credentials(None)).wait_for_change("job", None, 1)
    assert unknown.value.status_code == 404


# -- shutting down ---------------------------------------------------------------------------


async def test_stopping_the_server_answers_open_waits(tmp_path: Path) -> None:
    """aiohttp waits for every open request before it stops (up to a minute): a wait must
    answer as the server stops, not sit out its timeout."""
    service = JobService(StateDir(tmp_path / "state"), engine=EngineStatus(None, "none here"))
    await service.start()
    ended: dict[str, Any] = {
        "jobId": "ended_job",
        "trainingInput": {"region": "us-central1", "pythonModule": "m", "packageUris": []},
        "state": "SUCCEEDED",
        "createTime": "2026-11-27T08:30:00Z",
        "endTime": "2026-11-27T08:31:00Z",
        "etag": "AAAAAAAAAAA=",
    }
    service.jobs.insert(PROJECT, ended, {})
    runner = web.AppRunner(make_app(service, None), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    client = MetricsClient(f"http://127.0.0.1:{port}", PROJECT, make_credentials(None))
    try:
        pending = asyncio.create_task(
            asyncio.to_thread(client.wait_for_change, "ended_job", ended["etag"], LONG)
        )
        deadline = time.monotonic() + 30
        while service.changes.open_jobs == 0:  # the request is parked on the service
            assert time.monotonic() < deadline and not pending.done()
            await asyncio.sleep(0.01)
        await asyncio.wait_for(runner.cleanup(), LONG / 2)
        answer = await pending
        assert answer is not None and answer["etag"] == ended["etag"]
        assert service.changes.open_jobs == 0
    finally:
        client.close()
        if runner.server is not None:  # the test failed before the cleanup under test
            await runner.cleanup()
        await service.close()
