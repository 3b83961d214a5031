"""Every route, fuzzed: a 4xx google.rpc answer to every bad request, never a 5xx, nothing stored.

The request families live in ``tests/support/fuzz.py`` (shared with ``benchmarks/fault_bench.py``);
each test here draws from one family and sends it to one shared service. After every rejected
request the checker compares what the service stores (jobs, log entries, objects under the gcs
root, upload sessions and their bytes) with what it stored before.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import time
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support import fuzz
from tests.support.fuzz import (
    BUCKET,
    PROJECT,
    TARGET_JOB,
    Checker,
    FuzzRequest,
    dumps,
    prepare_target,
    q,
    route_requests,
)
from tests.support.live_service import LiveService
from tui_app.local.jobs import JobService
from tui_app.local.paths import StateDir
from tui_app.local.server import make_app

FUZZ = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.fixture(scope="module")
def checker(service: LiveService) -> Iterator[Checker]:
    """The module's service with the fuzz target in it, and a checker that remembers its state."""
    yield Checker(prepare_target(service.url, service.token, service.state_dir))


@pytest.mark.parametrize("route", sorted(fuzz.ROUTES))
@FUZZ
@given(data=st.data())
def test_route(checker: Checker, route: str, data: st.DataObject) -> None:
    """Draws from one request family: no 5xx, 4xx bodies are google.rpc, rejects store nothing."""
    req = data.draw(route_requests(route, checker.target, out_of_range_tokens=True), label=route)
    _, problems = checker.check(req)
    assert not problems, problems


def test_every_route_is_fuzzed(tmp_path: Path) -> None:
    """A new route in server.py or storage_api.py fails here until fuzz.py covers it."""
    fake = types.SimpleNamespace(
        state=StateDir(tmp_path), object_written=None, replica_scope=None, is_staged_package=None
    )
    app = make_app(cast(JobService, fake), None)
    routes = {
        (r.method, r.resource.canonical)
        for r in app.router.routes()
        if r.method != "HEAD" and r.resource is not None
    }
    assert routes == fuzz.ROUTE_TABLE
    covered = {c for route in fuzz.ROUTES.values() for c in route.covers}
    assert covered == fuzz.ROUTE_TABLE


# -- what the fuzzing found, pinned (each was a 500, or stored something it should not) --------

_ENTRIES_KEY = hashlib.sha256(json.dumps([[PROJECT], "", False]).encode()).hexdigest()[:12]


def _b64(data: Any) -> str:
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    return base64.urlsafe_b64encode(raw).decode()


def _job(verb: str) -> str:
    return f"/v1/projects/{PROJECT}/jobs/{TARGET_JOB}:{verb}"


MULTIPART = "multipart/related; boundary=b"
FOUND: list[FuzzRequest] = [
    # JSON nested deeper than the parser's recursion limit (was RecursionError -> 500).
    FuzzRequest("create", "POST", f"/v1/projects/{PROJECT}/jobs", b"[" * 100_000),
    FuzzRequest("entries", "POST", "/v2/entries:list", b'{"a":' * 50_000),
    FuzzRequest(
        "patch", "PATCH", f"/v1/projects/{PROJECT}/jobs/{TARGET_JOB}?updateMask=labels", b"[" * 5000
    ),
    FuzzRequest(
        "metadata",
        "POST",
        f"/resumable/upload/storage/v1/b/{BUCKET}/o?uploadType=resumable",
        b"[" * 100_000,
    ),
    # Lone surrogate escapes: no SQLite value, file name or argv holds one (was 500, or a job
    # stored whose replica could not start).
    FuzzRequest(
        "entries",
        "POST",
        "/v2/entries:list",
        b'{"resourceNames":["projects/fuzz-project"],"filter":"logName:\\"\\ud800\\""}',
    ),
    FuzzRequest(
        "create",
        "POST",
        f"/v1/projects/{PROJECT}/jobs",
        dumps(
            {
                **fuzz.CREATE_TEMPLATE,
                "trainingInput": {**fuzz.TRAINING_INPUT, "packageUris": ["gs://b/\ud800"]},
            }
        ),
    ),
    FuzzRequest(
        "resumable",
        "POST",
        f"/resumable/upload/storage/v1/b/{BUCKET}/o?uploadType=resumable",
        b'{"name":"a/\\ud800"}',
    ),
    # setIamPolicy/testIamPermissions with the wrong types (policy: 500; others echoed back).
    FuzzRequest("iam", "POST", _job("setIamPolicy"), b'{"policy":"x"}'),
    FuzzRequest("iam", "POST", _job("setIamPolicy"), b'{"policy":{"bindings":"x"}}'),
    FuzzRequest("iam", "POST", _job("testIamPermissions"), b'{"permissions":"x"}'),
    # A forged entries:list page token past SQLite's integers (OverflowError -> 500).
    FuzzRequest(
        "entries",
        "POST",
        "/v2/entries:list",
        dumps(
            {
                "resourceNames": [f"projects/{PROJECT}"],
                "pageToken": _b64({"t": 10**30, "i": 1, "k": _ENTRIES_KEY}),
            }
        ),
    ),
    FuzzRequest(
        "entries",
        "POST",
        "/v2/entries:list",
        dumps(
            {
                "resourceNames": [f"projects/{PROJECT}"],
                "pageToken": _b64(b'{"t": Infinity, "i": 1, "k": "%s"}' % _ENTRIES_KEY.encode()),
            }
        ),
    ),
    # Sizes: more digits than int() converts (500), and digits that are not ASCII.
    FuzzRequest(
        "resumable",
        "POST",
        f"/resumable/upload/storage/v1/b/{BUCKET}/o?uploadType=resumable&name=fuzz-ok/n1",
        dumps({"size": "9" * 5000}),
    ),
    FuzzRequest(
        "resumable",
        "POST",
        f"/resumable/upload/storage/v1/b/{BUCKET}/o?uploadType=resumable&name=fuzz-ok/n2",
        b"",
        (("X-Upload-Content-Length", "\u00b2"),),
    ),
    FuzzRequest(
        "multipart",
        "POST",
        f"/upload/storage/v1/b/{BUCKET}/o?uploadType=multipart",
        b'--b\n\n{"name":"fuzz-ok/n3","size":"\xd9\xa3"}\n--b\n\nabc\n--b--',
        (("Content-Type", MULTIPART),),
    ),
    # An object name that is not a string was str()'d into one: "['x']" (stored!).
    FuzzRequest(
        "resumable",
        "POST",
        f"/resumable/upload/storage/v1/b/{BUCKET}/o?uploadType=resumable",
        b'{"name":["x"]}',
    ),
    FuzzRequest(
        "multipart",
        "POST",
        f"/upload/storage/v1/b/{BUCKET}/o?uploadType=multipart",
        b'--b\n\n{"name":{"a":1}}\n--b\n\nabc\n--b--',
        (("Content-Type", MULTIPART),),
    ),
    # A boundary with non-ASCII bytes (UnicodeEncodeError -> 500).
    FuzzRequest(
        "multipart",
        "POST",
        f"/upload/storage/v1/b/{BUCKET}/o?uploadType=multipart&name=fuzz-ok/n4",
        b"--\xff\n\n{}\n--\xff\n\nabc\n--\xff--",
        (("Content-Type", "multipart/related; boundary=\xff"),),
    ),
    # A JSON body the client stops sending halfway (logged as an unhandled 500).
    FuzzRequest("create", "POST", f"/v1/projects/{PROJECT}/jobs", b'{"jobId": "x"}', cut_after=5),
]


@pytest.mark.parametrize("req", FOUND, ids=lambda r: f"{r.route}-{r.method}")
def test_found_by_fuzzing(checker: Checker, req: FuzzRequest) -> None:
    _, problems = checker.check(req)
    assert not problems, problems


@pytest.mark.parametrize(
    "path",
    [
        f"/v1/projects/{PROJECT}/jobs?filter={'x' * (1 << 20)}",
        f"/v1/projects/{PROJECT}/jobs/{'a/' * (1 << 19)}",
        f"/storage/v1/b/{BUCKET}/o/{'../' * 5000}",
    ],
    ids=["query", "path", "object"],
)
def test_over_long_request_lines(checker: Checker, path: str) -> None:
    """Past aiohttp's 8 KiB request line its parser answers, in plain text, before any route: a
    400 all the same, nothing stored, at once (the router is quadratic in path segments, so the
    limit stays), and the service answers the next request."""
    before = fuzz.stored(checker.target.state_dir)
    conn = http.client.HTTPConnection(checker.target.host, checker.target.port, timeout=30)
    try:
        started = time.monotonic()
        conn.request("GET", path, headers={"Authorization": f"Bearer {checker.target.token}"})
        resp = conn.getresponse()
        resp.read()
        assert resp.status == 400
        assert time.monotonic() - started < 5
    finally:
        conn.close()
    assert fuzz.stored(checker.target.state_dir) == before
    _, problems = checker.check(FuzzRequest("healthz", "GET", "/healthz", may_succeed=True))
    assert not problems


@pytest.mark.parametrize(
    "content_range",
    ["bytes " + "9" * 5000 + "-1/2", "bytes \u0660-\u0669/\u0661\u0660", "bytes 0-9/" + "9" * 25],
)
def test_content_range_digits(checker: Checker, content_range: str) -> None:
    """More digits than int() converts was a 500; digits of other scripts were taken."""
    req = FuzzRequest(
        "put",
        "PUT",
        f"/upload/storage/v1/b/{BUCKET}/o?uploadType=resumable"
        f"&upload_id={q(checker.target.upload_id)}",
        b"x" * 10,
        (("Content-Range", content_range),),
    )
    _, problems = checker.check(req)
    assert not problems, problems


def test_hung_up_uploads_store_nothing(checker: Checker) -> None:
    """Uploads whose client hangs up halfway: no object, the session's bytes cut back."""
    boundary = "===b=="
    body = (
        f"--{boundary}\n\n"
        + json.dumps({"name": "fuzz-ok/cut.tar.gz", "size": "100000"})
        + f"\n--{boundary}\n\n"
    ).encode() + b"x" * 100_000
    cases = [
        FuzzRequest(
            "multipart",
            "POST",
            f"/upload/storage/v1/b/{BUCKET}/o?uploadType=multipart",
            body + f"\n--{boundary}--".encode(),
            (("Content-Type", f"multipart/related; boundary='{boundary}'"),),
            cut_after=len(body) - 10,
        ),
        FuzzRequest(
            "media",
            "POST",
            f"/upload/storage/v1/b/{BUCKET}/o?uploadType=media&name=fuzz-ok/cut2",
            b"x" * 100_000,
            cut_after=50_000,
        ),
        FuzzRequest(
            "put",
            "PUT",
            f"/upload/storage/v1/b/{BUCKET}/o?uploadType=resumable"
            f"&upload_id={q(checker.target.upload_id)}",
            b"y" * 100_000,
            (("Content-Range", f"bytes */{fuzz.SESSION_BYTES}"),),
            cut_after=1,
        ),
    ]
    for req in cases:
        _, problems = checker.check(req)
        assert not problems, problems


# -- jobs.list page tokens that once reached SQLite: a 500 -------------------------------------


def _jobs_token(data: Any) -> str:
    return q(_b64(data))


def test_jobs_list_forged_token_beyond_int64(checker: Checker) -> None:
    flt = hashlib.sha256(b"").hexdigest()[:12]
    token = _jobs_token({"p": PROJECT, "f": flt, "s": 10**30})
    _, problems = checker.check(
        FuzzRequest("list", "GET", f"/v1/projects/{PROJECT}/jobs?pageToken={token}")
    )
    assert not problems, problems


def test_jobs_list_deeply_nested_token(checker: Checker) -> None:
    token = _jobs_token(b"[" * 4998)  # deeper than json's recursion limit, within 8 KiB
    _, problems = checker.check(
        FuzzRequest("list", "GET", f"/v1/projects/{PROJECT}/jobs?pageToken={token}")
    )
    assert not problems, problems
