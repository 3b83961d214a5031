"""A web page cannot reach the local service, in either auth mode (issue 18).

What a page can send without a CORS preflight (text/plain, form and multipart/form-data
bodies), what it sends anyway (Origin, Sec-Fetch-Site), what DNS rebinding makes it send (a
foreign Host) and the preflight itself, against every route the service has: each is refused
with a google.rpc error, nothing is stored and nothing runs. The routes are read from the
router, so a route added later is covered without touching this file.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tarfile
import time
import types
from pathlib import Path
from typing import cast

import pytest

from tests.support import fuzz
from tests.support.fuzz import FuzzRequest, Stored, Target, answer_problem, send, stored
from tests.support.live_service import TERMINAL, LiveService
from tui_app.local.jobs import JobService
from tui_app.local.paths import StateDir
from tui_app.local.server import make_app

PROJECT = "guard-project"
BUCKET = "guard-bucket"
EVIL = "http://evil.example"
_VALUES = {"project": PROJECT, "bucket": BUCKET, "object": "guard/object.bin"}


def _routes(tmp_path: Path) -> list[tuple[str, str]]:
    """(method, concrete path) for every route of the service, HEAD twins aside."""
    fake = types.SimpleNamespace(
        state=StateDir(tmp_path), object_written=None, replica_scope=None, is_staged_package=None
    )
    app = make_app(cast(JobService, fake), None)
    out = set()
    for route in app.router.routes():
        if route.method == "HEAD" or route.resource is None:
            continue
        path = route.resource.canonical
        if route.method == "POST" and "{name}" in path:
            path = path.replace("{name}", "guard_job:cancel")
        path = re.sub(r"\{(\w+)(:[^}]*)?\}", lambda m: _VALUES.get(m.group(1), "guard_job"), path)
        if route.method in ("POST", "PUT") and "/upload/" in path:
            path += f"?uploadType=media&name=guard-{route.method.lower()}.tar.gz"
        out.add((route.method, path))
    return sorted(out)


ROUTES = _routes(Path("/nonexistent-state-dir"))


def _target(svc: LiveService) -> Target:
    return Target("127.0.0.1", int(svc.url.rsplit(":", 1)[1]), svc.token, svc.state_dir, "")


BODY = b'{"jobId": "guard_job", "trainingInput": {"region": "us-central1"}}'
BROWSER_BODIES = [
    ("text/plain", BODY),
    ("text/plain;charset=UTF-8", BODY),
    ("application/x-www-form-urlencoded", b"jobId=guard_job&x=1"),
    ("multipart/form-data; boundary=XyZ", b'--XyZ\r\nContent-Disposition: form-data; name="a"'
     b"\r\n\r\n" + BODY + b"\r\n--XyZ--\r\n"),
]  # fmt: skip


def _browser_requests(port: int) -> list[tuple[str, dict[str, str]]]:
    """(what, headers) of what a page's requests carry; each alone must be refused."""
    return [
        ("foreign Origin", {"Origin": EVIL}),
        ("null Origin", {"Origin": "null"}),
        ("Origin on another port", {"Origin": f"http://127.0.0.1:{port + 1}"}),
        ("https Origin", {"Origin": f"https://127.0.0.1:{port}"}),
        ("rebinding Host", {"Host": f"evil.example:{port}"}),
        ("rebinding Host, own Origin", {"Host": f"evil.example:{port}", "Origin": EVIL}),
        ("Host on another port", {"Host": f"127.0.0.1:{port + 1}"}),
        ("rebinding Host, no port", {"Host": "evil.example"}),
        ("cross-site fetch", {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"}),
        ("same-site fetch", {"Sec-Fetch-Site": "same-site"}),
    ]


@pytest.fixture(params=["token", "no-auth"])
def svc(request: pytest.FixtureRequest) -> LiveService:
    """Both auth modes: the defence must not depend on the token."""
    name = "service" if request.param == "token" else "open_service"
    return cast(LiveService, request.getfixturevalue(name))


def _refused(req: FuzzRequest, target: Target) -> list[str]:
    """Send ``req``: the problems if it was not refused as a web page's request must be."""
    before = stored(target.state_dir)
    conn_answer = send(target, req)
    problems = []
    why = answer_problem(req, conn_answer)
    if why:
        problems.append(why)
    if conn_answer.status is not None and conn_answer.status < 400:
        problems.append(f"accepted with {conn_answer.status}")
    if b"Access-Control" in conn_answer.body:
        problems.append("an Access-Control header in the body")
    after = stored(target.state_dir)
    if after != before:
        problems.append(f"stored: {before.diff(after)}")
    return problems


@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_browser_requests_are_refused_on_every_route(
    svc: LiveService, method: str, path: str
) -> None:
    target = _target(svc)
    problems = []
    for what, headers in _browser_requests(target.port):
        bodies: list[tuple[str | None, bytes | None]] = [(None, None)]
        if method in ("POST", "PUT", "PATCH", "DELETE"):
            bodies = [(ct, b) for ct, b in BROWSER_BODIES]
        for content_type, body in bodies:
            head = dict(headers)
            if content_type:
                head["Content-Type"] = content_type
            req = FuzzRequest("guard", method, path, body, tuple(head.items()))
            problems += [f"{what} {content_type}: {p}" for p in _refused(req, target)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_no_preflight_is_answered(svc: LiveService, method: str, path: str) -> None:
    """A page's non-simple request starts with OPTIONS: refused, with no CORS header."""
    import http.client

    target = _target(svc)
    conn = http.client.HTTPConnection("127.0.0.1", target.port, timeout=30)
    try:
        conn.request(
            "OPTIONS",
            path,
            headers={
                "Origin": EVIL,
                "Access-Control-Request-Method": method,
                "Access-Control-Request-Headers": "authorization,content-type",
            },
        )
        resp = conn.getresponse()
        body = resp.read()
        assert resp.status == 403, body
        assert b'"PERMISSION_DENIED"' in body
        assert not [h for h in resp.headers if h.lower().startswith("access-control-")]
    finally:
        conn.close()


JSON_ROUTES = [
    ("POST", f"/v1/projects/{PROJECT}/jobs"),
    ("POST", f"/v1/projects/{PROJECT}/jobs/guard_job:cancel"),
    ("PATCH", f"/v1/projects/{PROJECT}/jobs/guard_job?updateMask=labels"),
    ("POST", "/v2/entries:list"),
    ("POST", f"/resumable/upload/storage/v1/b/{BUCKET}/o?uploadType=resumable&name=g.bin"),
]


@pytest.mark.parametrize(("method", "path"), JSON_ROUTES)
def test_json_routes_take_only_json(svc: LiveService, method: str, path: str) -> None:
    """Without any browser header, a JSON route still refuses a body a page could send."""
    target = _target(svc)
    problems = []
    for content_type, body in [*BROWSER_BODIES, (None, BODY)]:
        head = (("Content-Type", content_type),) if content_type else ()
        req = FuzzRequest("json-only", method, path, body, head)
        problems += [f"{content_type}: {p}" for p in _refused(req, target)]
    assert not problems, "\n".join(problems)


def test_real_clients_still_work(svc: LiveService, trainer_sdist: Path) -> None:
    """The client library's create and list, and a JSON request on the service's own
    origin (127.0.0.1, localhost), are answered: the checks catch pages, not clients."""
    from tests.conftest import unique_id
    from tests.support.live_service import basic_job

    job_id = unique_id("guard_ok")
    client = svc.client(PROJECT)
    client.create(basic_job(job_id, svc.stage(trainer_sdist), "--steps", "1"))
    assert job_id in [j["jobId"] for j in client.list_jobs()]
    port = _target(svc).port
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"):
        status, _ = svc.request(
            "GET", f"/v1/projects/{PROJECT}/jobs/{job_id}", headers={"Host": host}
        )
        assert status == 200, host
    status, _ = svc.request(
        "POST",
        f"/v1/projects/{PROJECT}/jobs/{job_id}:cancel",
        b"{}",
        headers={"Origin": f"http://localhost:{port}", "Content-Type": "application/json"},
    )
    assert status in (200, 400)  # cancelled, or already finished: not refused as a page
    _quiet(svc.state_dir)  # the tests after this one compare the state dir before and after


def _quiet(state_dir: Path, timeout: float = 60.0) -> Stored:
    """The state dir once no job in it is live and two reads a poll apart agree: a job of
    another test finishing in the background (its cancel completing, its last log lines) must
    not count as a refused request's doing."""
    deadline = time.monotonic() + timeout
    last: Stored | None = None
    while True:
        now = stored(state_dir)
        live = any(json.loads(body).get("state") not in TERMINAL for _, _, body in now.jobs)
        if not live and now == last:
            return now
        assert time.monotonic() < deadline, "the service kept changing its state dir"
        last = now
        time.sleep(0.1)


def _evil_sdist(tmp_path: Path, marker: Path) -> Path:
    """A package whose trainer writes ``marker``: proof of code run, if it ever runs."""
    src = tmp_path / "evil-0.1"
    (src / "evil").mkdir(parents=True)
    (src / "evil" / "__init__.py").write_text("")
    (src / "evil" / "task.py").write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('pwned')\n"
    )
    (src / "setup.py").write_text(
        "from setuptools import setup\nsetup(name='evil', version='0.1', packages=['evil'])\n"
    )
    sdist = tmp_path / "evil-0.1.tar.gz"
    with tarfile.open(sdist, "w:gz") as tar:
        tar.add(src, arcname="evil-0.1")
    return sdist


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_the_reported_attack_with_curl(svc: LiveService, tmp_path: Path) -> None:
    """The two requests of issue 18, sent with curl exactly as a page's fetch() sends them
    (text/plain, the page's Origin; then again through a rebound Host): both refused, the
    state dir unchanged, the trainer never run."""
    marker = tmp_path / "pwned"
    sdist = _evil_sdist(tmp_path, marker)
    port = _target(svc).port
    job = (
        '{"jobId":"evil_job","trainingInput":{"region":"us-central1",'
        '"packageUris":["gs://evil/evil-0.1.tar.gz"],"pythonModule":"evil.task"}}'
    )
    before = _quiet(svc.state_dir)
    for host_header in ([], ["-H", f"Host: evil.example:{port}"]):
        for path, data in (
            ("/upload/storage/v1/b/evil/o?uploadType=media&name=evil-0.1.tar.gz", f"@{sdist}"),
            (f"/v1/projects/{PROJECT}/jobs", job),
        ):
            done = subprocess.run(
                ["curl", "-s", "-o", "-", "-w", "\n%{http_code}", "-X", "POST",
                 "-H", "Content-Type: text/plain;charset=UTF-8", "-H", f"Origin: {EVIL}",
                 *host_header, "--data-binary", data, f"{svc.url}{path}"],
                capture_output=True, text=True, timeout=30, check=True,
            )  # fmt: skip
            body, _, code = done.stdout.rpartition("\n")
            assert code == "403", (path, done.stdout)
            assert '"status":"PERMISSION_DENIED"' in body
    time.sleep(0.5)  # a job that had been created would be starting by now
    assert stored(svc.state_dir) == before
    assert not marker.exists()
    assert not (svc.state_dir / "gcs" / "evil").exists()


def test_the_route_list_is_read_from_the_router() -> None:
    """The routes come from the service itself: every route of the fuzz table is here."""
    assert {(m, re.sub(r"\?.*", "", p)) for m, p in ROUTES} >= {
        ("POST", f"/v1/projects/{PROJECT}/jobs"),
        ("POST", f"/upload/storage/v1/b/{BUCKET}/o"),
        ("POST", "/v2/entries:list"),
    }
    assert len(ROUTES) == len(fuzz.ROUTE_TABLE)
