"""Hostile requests for every route of the local service, as hypothesis strategies.

One definition for the fuzz tests (``tests/service/test_fuzz_routes.py``, ``test_no_5xx.py``) and
``benchmarks/fault_bench.py``. The promise they check (`docs/wire-formats.md`, Errors): every
answer to a bad request is a 4xx with a google.rpc body, never a 5xx (gcloud retries those for
~26 s), and a rejected request stores nothing: no job, no log entry, no object under
``<state>/gcs``, no upload session or bytes appended to one.

What is thrown at each route: malformed JSON (raw bytes, truncated, NaN, BOMs, UTF-16, lone
surrogate escapes, 4,300+ digit numbers, nesting 100k deep), valid bodies mutated at every level
(wrong types, 1 MiB strings, unknown fields, deletions), bad filters (grammar soup, deep
parentheses, bad timestamps and severities), bad page tokens (garbage, and tokens forged with the
right checksum but hostile values), hostile ids in paths and queries (unicode, NUL and control
characters, ``..`` traversal, 6,000-character names; 1 MiB ones in bodies), bad upload framing
(boundaries, Content-Range, upload ids), wrong credentials, and uploads cut off halfway.

The target (:func:`prepare_target`) is one SUCCEEDED job seeded straight into ``jobs.sqlite``
(patch, cancel, IAM and ``:metrics`` need one that exists; seeding runs no trainer and writes no
log entry), one object in ``gs://fuzz-bucket`` and one open resumable upload session.

Where 1 MiB goes: in bodies. A URL or header is at most 8 KiB: longer ones are answered by
aiohttp's parser before any route runs, in plain text (so are other HTTP framing errors: a negative
Content-Length, bad chunking). Raising that limit is no fix: aiohttp's router is quadratic in the
path's segments (a 1 MiB path of ``a/a/a/...`` took 45 s of the event loop), so requests are
clipped to :data:`MAX_URL_BYTES` and :data:`MAX_HEADER_BYTES` here and over-long ones have a test
of their own.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import hashlib
import http.client
import json
import sqlite3
import time
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tui_app.local.paths import StateDir
from tui_app.local.storage.object_store import bucket_error, object_name_error
from tui_app.local.store import JobStore
from tui_app.model.jobs.job_spec import parse_job

PROJECT = "fuzz-project"
TARGET_JOB = "fuzz_target"
BUCKET = "fuzz-bucket"
OBJECT = "pkg/object.bin"
SESSION_OBJECT = "fuzz-session/object.bin"
SESSION_BYTES = 1 << 20
MISSING_PACKAGE = f"gs://{BUCKET}/missing/trainer-0.0.0.tar.gz"
MiB = 1 << 20
MAX_URL_BYTES = 8000
"""aiohttp answers a longer request target itself (its limit is 8190 bytes)."""
MAX_HEADER_BYTES = 8000
RPC_STATUSES = frozenset(
    {
        "CANCELLED",
        "UNKNOWN",
        "INVALID_ARGUMENT",
        "DEADLINE_EXCEEDED",
        "NOT_FOUND",
        "ALREADY_EXISTS",
        "PERMISSION_DENIED",
        "RESOURCE_EXHAUSTED",
        "FAILED_PRECONDITION",
        "ABORTED",
        "OUT_OF_RANGE",
        "UNIMPLEMENTED",
        "INTERNAL",
        "UNAVAILABLE",
        "DATA_LOSS",
        "UNAUTHENTICATED",
    }
)

# -- requests, answers, and what counts as a problem -----------------------------------------


@dataclass(frozen=True)
class Target:
    """The service under test and what :func:`prepare_target` put in it."""

    host: str
    port: int
    token: str | None
    state_dir: Path
    upload_id: str


@dataclass(frozen=True)
class FuzzRequest:
    """One hostile request; ``may_succeed`` where some draws are valid requests."""

    route: str
    method: str
    path: str
    body: bytes | None = None
    headers: tuple[tuple[str, str], ...] = ()
    auth: bool = True
    """Send the service's token (False: ``headers`` carry whatever credentials are tested)."""
    may_succeed: bool = False
    cut_after: int | None = None
    """Send only this many bytes of the body (Content-Length says all), then hang up."""

    def __post_init__(self) -> None:
        # Within aiohttp's limits, so that the routes, not the HTTP parser, answer.
        object.__setattr__(self, "path", self.path[:MAX_URL_BYTES])
        clipped = tuple(
            (k, v.encode("utf-8", "surrogatepass")[:MAX_HEADER_BYTES].decode("utf-8", "ignore"))
            for k, v in self.headers
        )
        object.__setattr__(self, "headers", clipped)

    def __repr__(self) -> str:  # bodies can be 1 MiB: keep failure reports readable
        body = None if self.body is None else _clip(self.body)
        head = tuple((k, _clip(v)) for k, v in self.headers)
        return (
            f"FuzzRequest({self.route!r}, {self.method} {_clip(self.path)}, body={body}, "
            f"headers={head}, auth={self.auth}, may_succeed={self.may_succeed}, "
            f"cut_after={self.cut_after})"
        )

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """How hypothesis prints a failing draw: the short repr, not 1 MiB of body."""
        printer.text(repr(self))


def _clip(value: str | bytes, n: int = 300) -> str:
    text = repr(value)
    return text if len(text) <= n else f"{text[:n]}... ({len(value):,} long)"


@dataclass(frozen=True)
class Answer:
    status: int | None
    """None: no answer (the request was cut off, or the connection failed)."""
    body: bytes = b""


def send(target: Target, req: FuzzRequest, timeout: float = 60) -> Answer:
    """One request on a fresh connection, exactly as built (no quoting, no redirects)."""
    conn = http.client.HTTPConnection(target.host, target.port, timeout=timeout)
    try:
        skip_host = any(k.lower() == "host" for k, _ in req.headers)  # the request's own Host
        conn.putrequest(req.method, req.path, skip_host=skip_host, skip_accept_encoding=True)
        if req.auth and target.token:
            conn.putheader("Authorization", f"Bearer {target.token}")
        for key, value in req.headers:
            conn.putheader(key, value.encode("utf-8", "surrogatepass"))
        body = req.body or b""
        if req.body is not None or req.method in ("POST", "PUT", "PATCH"):
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders()
        if req.cut_after is not None:
            conn.send(body[: req.cut_after])
            return Answer(None)  # hang up: the finally closes the socket
        if body:
            conn.send(body)
        resp = conn.getresponse()
        return Answer(resp.status, resp.read())
    except (OSError, http.client.HTTPException) as exc:
        return Answer(None, repr(exc).encode())
    finally:
        conn.close()


def answer_problem(req: FuzzRequest, ans: Answer) -> str | None:
    """What is wrong with ``ans`` as the answer to ``req``, or None."""
    if ans.status is None:
        if req.cut_after is not None:
            return None
        return f"no answer: {ans.body[:200]!r}"
    snippet = _clip(ans.body, 200)
    if ans.status >= 500:
        return f"{ans.status} (a 5xx): {snippet}"
    if ans.status < 400:
        return None if req.may_succeed else f"{ans.status} for a request to reject: {snippet}"
    try:
        data = json.loads(ans.body)
    except ValueError:
        return f"{ans.status} without a JSON body: {snippet}"
    err = data.get("error") if isinstance(data, dict) else None
    if (
        not isinstance(err, dict)
        or err.get("code") != ans.status
        or not isinstance(err.get("message"), str)
        or err.get("status") not in RPC_STATUSES
    ):
        return f"{ans.status} without a google.rpc error body: {snippet}"
    return None


# -- what the service stores -------------------------------------------------------------------


@dataclass(frozen=True)
class Stored:
    """Everything a request could store: compared before and after each rejected one."""

    jobs: tuple[tuple[str, str, str], ...]
    """(project, job id, the stored Job JSON) of every job."""
    log_entries: int
    objects: tuple[tuple[str, int], ...]
    """Every file under ``<state>/gcs``, with its size."""
    uploads: tuple[tuple[str, int], ...]
    """Every file under ``<state>/uploads`` (sessions, their bytes, bytes in flight)."""

    def diff(self, other: Stored) -> str:
        out = []
        for name in ("jobs", "log_entries", "objects", "uploads"):
            a, b = getattr(self, name), getattr(other, name)
            if a != b:
                if isinstance(a, tuple) and isinstance(b, tuple):
                    gone, new = set(a) - set(b), set(b) - set(a)
                    out.append(f"{name}: -{_clip(str(sorted(gone)))} +{_clip(str(sorted(new)))}")
                else:
                    out.append(f"{name}: {a} -> {b}")
        return "; ".join(out)


def _ro(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)


def _files(root: Path) -> tuple[tuple[str, int], ...]:
    if not root.is_dir():
        return ()
    out = []
    for p in root.rglob("*"):
        try:
            if p.is_file():
                out.append((str(p.relative_to(root)), p.stat().st_size))
        except OSError:  # removed while listed
            continue
    return tuple(sorted(out))


def stored(state_dir: Path) -> Stored:
    """A read-only look at the state dir (the service keeps running)."""
    state = StateDir(state_dir)
    jobs: tuple[tuple[str, str, str], ...] = ()
    if state.jobs_db.exists():
        with contextlib.closing(_ro(state.jobs_db)) as conn:
            rows = conn.execute("SELECT project, job_id, body FROM jobs ORDER BY seq").fetchall()
            jobs = tuple((str(p), str(j), str(b)) for p, j, b in rows)
    entries = 0
    if state.logs_db.exists():
        with contextlib.closing(_ro(state.logs_db)) as conn:
            entries = int(conn.execute("SELECT count(*) FROM log_entries").fetchone()[0])
    return Stored(jobs, entries, _files(state.gcs_root), _files(state.root / "uploads"))


@dataclass
class Tally:
    """What one route's run saw (the benchmark's counts)."""

    requests: int = 0
    accepted: int = 0
    rejected: int = 0
    cut: int = 0
    five_xx: int = 0
    problems: list[str] = field(default_factory=list)


class Checker:
    """Sends requests and checks each answer and what it stored."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.last = stored(target.state_dir)
        self.tallies: dict[str, Tally] = {}

    def check(self, req: FuzzRequest) -> tuple[Answer, list[str]]:
        """Send ``req``; the problems with its answer and with what it stored."""
        ans = send(self.target, req)
        tally = self.tallies.setdefault(req.route, Tally())
        tally.requests += 1
        problems: list[str] = []
        why = answer_problem(req, ans)
        if why:
            problems.append(why)
        if ans.status is not None and ans.status >= 500:
            tally.five_xx += 1
        accepted = ans.status is not None and ans.status < 400
        if accepted:
            tally.accepted += 1
        elif ans.status is None:
            tally.cut += 1
        else:
            tally.rejected += 1
        now = stored(self.target.state_dir)
        if not accepted and now != self.last:
            # A request cut off mid-body may still be unwinding on the server: give it a moment.
            deadline = time.monotonic() + 3
            while now != self.last and time.monotonic() < deadline:
                time.sleep(0.05)
                now = stored(self.target.state_dir)
            if now != self.last:
                problems.append(f"stored on reject ({ans.status}): {self.last.diff(now)}")
        self.last = now
        tally.problems += [f"{p} <- {req!r}" for p in problems]
        return ans, problems


# -- the target --------------------------------------------------------------------------------


def prepare_target(url: str, token: str | None, state_dir: Path) -> Target:
    """Seed the target job and object, open the resumable session (the service is running)."""
    state = StateDir(state_dir)
    store = JobStore(state.jobs_db)
    try:
        if store.get(PROJECT, TARGET_JOB) is None:
            job = parse_job(
                {
                    "jobId": TARGET_JOB,
                    "labels": {"team": "fuzz"},
                    "trainingInput": {
                        "region": "us-central1",
                        "pythonModule": "trainer.task",
                        "packageUris": [f"gs://{BUCKET}/{OBJECT}"],
                        "args": ["--steps", "1"],
                    },
                }
            )
            job.update(
                state="SUCCEEDED",
                createTime="2026-11-22T09:00:00Z",
                startTime="2026-11-22T09:00:01Z",
                endTime="2026-11-22T09:00:02Z",
                etag="5ohFnmWpXAo=",
                trainingOutput={"consumedMLUnits": 0.0},
            )
            store.insert(PROJECT, job, {})
    finally:
        store.close()
    obj = state.gcs_root / BUCKET / OBJECT
    obj.parent.mkdir(parents=True, exist_ok=True)
    obj.write_bytes(b"fuzz object\n")
    parsed = urllib.parse.urlsplit(url)
    host, port = parsed.hostname or "127.0.0.1", parsed.port or 80
    opener = Target(host, port, token, state_dir, "")
    ans = _open_session(opener)
    return Target(host, port, token, state_dir, ans)


def _open_session(target: Target) -> str:
    conn = http.client.HTTPConnection(target.host, target.port, timeout=60)
    try:
        body = json.dumps({"name": SESSION_OBJECT, "size": str(SESSION_BYTES)}).encode()
        headers = {
            "Content-Type": "application/json",
            "X-Upload-Content-Length": str(SESSION_BYTES),
        }
        if target.token:
            headers["Authorization"] = f"Bearer {target.token}"
        conn.request(
            "POST",
            f"/resumable/upload/storage/v1/b/{BUCKET}/o?uploadType=resumable",
            body=body,
            headers=headers,
        )
        resp = conn.getresponse()
        resp.read()
        if resp.status != 200:
            raise RuntimeError(f"opening the fuzz upload session answered {resp.status}")
        return str(resp.getheader("X-GUploader-UploadID"))
    finally:
        conn.close()


# -- building blocks ---------------------------------------------------------------------------

HUGE_TEXT: tuple[str, ...] = (
    "x" * MiB,
    "é" * (MiB // 4),
    "../" * (MiB // 3),
    "\u202e" * (MiB // 8),
)
"""1 MiB strings, for JSON bodies."""
LONG_URL_TEXT: tuple[str, ...] = ("x" * 6000, "é" * 1000, "../" * 1500, "\u202e" * 600)
"""The longest strings that still fit in a URL."""
HOSTILE_TEXT: tuple[str, ...] = (
    "",
    " ",
    ".",
    "..",
    "...",
    "/",
    "//",
    "../",
    "../..",
    "../../token",
    "../../jobs.sqlite",
    "a/../../b",
    "..\\..\\x",
    "\\",
    "%",
    "%00",
    "%2e%2e%2f",
    "%zz",
    "\x00",
    "a\x00b",
    "\x7f",
    "\x1b[31mred\x1b[0m",
    "\r\n",
    "\n",
    "\t",
    " leading",
    "trailing ",
    "\uff21\uff22\uff23",  # fullwidth ABC
    "".join(chr(ord(c) + 0xFEE0) for c in TARGET_JOB),  # fullwidth
    "\u202eevil",
    "\ufeffbom",
    "\uffff",
    "\U0010ffff",
    "🙂" * 10,
    "e\u0301",
    "ǅİß",
    "a" * 129,
    "a" * 1025,
    "a" * 5000,
    "CON",
    "NUL",
    "*",
    "?",
    "#",
    "&",
    "=",
    ";",
    ":",
    "::",
    ":cancel",
    f"{TARGET_JOB}:cancel",
    f"{TARGET_JOB}/extra",
    "${jndi:ldap://x}",
    "'; DROP TABLE jobs; --",
    '" OR 1=1 --',
    "<script>",
    "{{7*7}}",
    "-1",
    "0",
    "1e309",
    "NaN",
    "null",
    "true",
    "[]",
    "{}",
)
SURROGATES: tuple[str, ...] = ("\ud800", "a\udfffb", "\udc80\udcff", "x\ud83d")
"""Lone surrogates: JSON can carry them as ``\\ud800`` escapes; UTF-8 cannot."""

SHORT_TEXT = st.text(max_size=40)
TEXT = st.one_of(
    SHORT_TEXT,
    st.sampled_from(HOSTILE_TEXT),
    st.sampled_from(LONG_URL_TEXT),
    st.integers(100, 6000).map(lambda n: "a" * n),
)
"""Any string that can travel in a URL (no lone surrogates, at most a few KiB)."""
JSON_TEXT = st.one_of(TEXT, st.sampled_from(SURROGATES), st.sampled_from(HUGE_TEXT))
SMALL_JSON_TEXT = st.one_of(SHORT_TEXT, st.sampled_from(HOSTILE_TEXT), st.sampled_from(SURROGATES))
NUMBERS = st.one_of(
    st.integers(),
    st.floats(),
    st.sampled_from(
        [0, -1, 2**31, 2**53 + 1, 2**63, 2**64, -(2**63) - 1, 10**30, 1e308, -0.0, 1e-320]
    ),
)
JSON_LEAF = st.one_of(st.none(), st.booleans(), NUMBERS, SMALL_JSON_TEXT)
ANY_JSON = st.recursive(
    JSON_LEAF,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(SMALL_JSON_TEXT, inner, max_size=4),
    max_leaves=12,
)
"""Any JSON document (NaN and Infinity included, as Python's json writes them)."""


def dumps(doc: Any) -> bytes:
    """JSON as a client would send it (``\\udxxx`` escapes for lone surrogates)."""
    return json.dumps(doc).encode()


def _deep(n: int, open_: bytes = b"[", close: bytes = b"]") -> bytes:
    return open_ * n + close * n


def _not_json(raw: bytes) -> bool:
    """Not empty, and not a body the service can take as JSON (random bytes sometimes are)."""
    if not raw.strip():
        return False
    try:
        json.dumps(json.loads(raw), ensure_ascii=False).encode()
    except (ValueError, RecursionError):
        return True
    return False


MALFORMED = st.one_of(
    st.binary(max_size=300),
    st.sampled_from(
        [
            b"{",
            b"}",
            b"[",
            b'{"a":}',
            b'{"a" 1}',
            b"{'a': 1}",
            b'{"a": 1,}',
            b'{"a": 1} trailing',
            b'{"a": 1}{"b": 2}',
            b"// comment\n{}",
            b'{"a": NaN, "b": Infinity, "c": -Infinity}',
            b'{"a": "\\ud800"}',
            b'{"\\udfff": 1}',
            b'{"a": "\\x41"}',
            b'{"a": "\x00\x01\x02"}',
            b'{"a": 1, "a": 2}',
            b"\xef\xbb\xbf{}",
            '{"a": 1}'.encode("utf-16"),
            b'{"a": "\xff\xfe"}',
            b"\xff" * 64,
            b"nul",
            b"tru",
            b"-",
            b'"unterminated',
            b'{"n": ' + b"9" * 5000 + b"}",
            b'{"n": 1e99999}',
            b'{"n": -}',
        ]
    ),
    st.one_of(
        st.integers(100, 200_000).map(_deep),
        st.integers(100, 100_000).map(lambda n: b'{"a":' * n + b"1" + b"}" * n),
        st.integers(1000, 100_000).map(
            lambda n: b'{"jobId": "x", "trainingInput": ' + _deep(n) + b"}"
        ),
    ),
).filter(_not_json)
"""Bodies that are not JSON, or JSON nested past any parser's patience."""


def _slots(doc: Any) -> Iterator[tuple[Any, Any]]:
    """(container, key) of every value inside ``doc``."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield doc, key
            yield from _slots(value)
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            yield doc, i
            yield from _slots(value)


def _dicts(doc: Any) -> Iterator[dict[str, Any]]:
    if isinstance(doc, dict):
        yield doc
        for value in doc.values():
            yield from _dicts(value)
    elif isinstance(doc, list):
        for value in doc:
            yield from _dicts(value)


@st.composite
def mutated(draw: st.DrawFn, template: dict[str, Any]) -> Any:
    """``template`` with 1-3 changes anywhere: a wrong type, a 1 MiB or hostile string, a number
    out of range, deep nesting, a deleted field or an unknown one."""
    doc = copy.deepcopy(template)
    for _ in range(draw(st.integers(1, 3))):
        action = draw(
            st.sampled_from(["type", "huge", "text", "number", "deep", "delete", "unknown"])
        )
        if action == "unknown":
            target = draw(st.sampled_from(list(_dicts(doc))))
            target[draw(SMALL_JSON_TEXT)] = draw(ANY_JSON)
            continue
        slots = list(_slots(doc))
        if not slots:
            return draw(ANY_JSON)
        parent, key = draw(st.sampled_from(slots))
        if action == "delete":
            del parent[key]
        elif action == "type":
            parent[key] = draw(ANY_JSON)
        elif action == "huge":
            parent[key] = draw(st.sampled_from(HUGE_TEXT))
        elif action == "text":
            parent[key] = draw(JSON_TEXT)
        elif action == "number":
            parent[key] = draw(NUMBERS)
        else:
            depth = draw(st.integers(20, 400))
            value: Any = draw(JSON_LEAF)
            for _ in range(depth):
                value = [value]
            parent[key] = value
    return doc


def json_bodies(template: dict[str, Any]) -> st.SearchStrategy[bytes]:
    """Bodies for a JSON route whose valid body looks like ``template``."""
    return st.one_of(
        mutated(template).map(dumps),
        mutated(template).map(dumps),
        MALFORMED,
        ANY_JSON.map(dumps),
        st.just(dumps(template)),
    )


JSON_CONTENT_TYPES = st.sampled_from(
    [
        "application/json",
        "application/json; charset=UTF-8",
        "",
        "text/plain",
        "application/json; charset=utf-16",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
    ]
)


def q(text: str, safe: str = "") -> str:
    """Percent-encode for a path segment or query value (lone surrogates as their bytes)."""
    return urllib.parse.quote(text, safe=safe, errors="surrogatepass")


def query(params: list[tuple[str, str]]) -> str:
    return "&".join(f"{q(k)}={q(v)}" for k, v in params)


def _header_safe(text: str) -> str:
    """A header value without control characters: http.client refuses CR/LF, and aiohttp's
    parser answers the others itself (in plain text, before any route)."""
    return "".join(c for c in text if c == "\t" or (c >= " " and c != "\x7f"))


EXTRA_PARAMS = st.lists(
    st.tuples(
        st.one_of(
            st.sampled_from(
                ["alt", "prettyPrint", "fields", "$.xgafv", "key", "quotaUser", "callback"]
            ),
            SHORT_TEXT,
        ),
        st.one_of(SHORT_TEXT, st.sampled_from(HOSTILE_TEXT)),
    ),
    max_size=3,
)
"""Query parameters every Google API ignores, and junk ones."""


def pick(draw: st.DrawFn, weights: dict[str, int]) -> str:
    """One key, by weight. hypothesis favours both ends of whatever it draws from, so the most
    likely choice takes both ends of the list sampled (else a rare one would come up often)."""
    common = max(weights, key=weights.__getitem__)
    rest = [k for k, w in weights.items() if k != common for _ in range(w)]
    half = weights[common] // 2
    return draw(st.sampled_from([common] * half + rest + [common] * (weights[common] - half)))


def chance(draw: st.DrawFn, percent: int) -> bool:
    return pick(draw, {"yes": percent, "no": 100 - percent}) == "yes"


def _project(draw: st.DrawFn) -> str:
    """Mostly the fuzz project, else anything (an invalid project id, usually)."""
    return PROJECT if chance(draw, 85) else draw(TEXT)


class Route(NamedTuple):
    """A family of requests and the routes (method, canonical path) it reaches."""

    covers: tuple[tuple[str, str], ...]
    build: Callable[[Target, bool], st.SearchStrategy[FuzzRequest]]


JOBS = "/v1/projects/{project}/jobs"
JOB = "/v1/projects/{project}/jobs/{name}"
UPLOAD = "/upload/storage/v1/b/{bucket}/o"
RESUMABLE = "/resumable/upload/storage/v1/b/{bucket}/o"
BUCKET_PATH = "/storage/v1/b/{bucket}"
OBJECT_PATH = "/storage/v1/b/{bucket}/o/{object}"
REPLICA = "/_replica/{replica}"
BUCKETS = "/storage/v1/b"
LIST_PATH = "/storage/v1/b/{bucket}/o"
DEST = "/b/{dbucket}/o/{dobject}"
STORAGE_MORE = frozenset(
    {
        ("GET", BUCKETS),
        ("POST", BUCKETS),
        ("DELETE", BUCKET_PATH),
        ("GET", BUCKET_PATH + "/storageLayout"),
        ("GET", LIST_PATH),
        ("POST", OBJECT_PATH + "/copyTo" + DEST),
        ("POST", OBJECT_PATH + "/rewriteTo" + DEST),
        ("POST", OBJECT_PATH + "/compose"),
        ("DELETE", OBJECT_PATH),
        ("GET", "/download" + OBJECT_PATH),
    }
)
"""The storage routes real clients need beyond gcloud's uploads (issue 13)."""
REPLICA_ELSEWHERE = frozenset(
    (m, REPLICA + "/{tail}") for m in ("GET", "POST", "PUT", "PATCH", "DELETE")
)
"""Any other path under a replica prefix: refused (403)."""
METADATA = frozenset(
    {("GET", REPLICA), ("GET", REPLICA + "/"), ("GET", REPLICA + "/computeMetadata/v1/{path}")}
)
"""A replica's metadata server (google-auth's ping, then computeMetadata/v1/...)."""
REPLICA_OUTPUT = frozenset(
    {("GET", REPLICA + "/output/{stream}"), ("POST", REPLICA + "/output/{stream}")}
)
"""A remote replica's output, shipped by offset (storage/replica_output.py)."""
_STORAGE_ALL = STORAGE_MORE | {
    ("POST", UPLOAD),
    ("PUT", UPLOAD),
    ("POST", RESUMABLE),
    ("PUT", RESUMABLE),
    ("GET", BUCKET_PATH),
    ("GET", OBJECT_PATH),
}
ROUTE_TABLE = frozenset(
    {
        ("GET", "/healthz"),
        ("POST", JOBS),
        ("GET", JOBS),
        ("GET", JOB),
        ("POST", JOB),
        ("PATCH", JOB),
        ("POST", "/v2/entries:list"),
        ("POST", "/v2/entries:follow"),
        *METADATA,
        *REPLICA_OUTPUT,
        ("POST", UPLOAD),
        ("PUT", UPLOAD),
        ("POST", RESUMABLE),
        ("PUT", RESUMABLE),
        ("GET", BUCKET_PATH),
        ("GET", OBJECT_PATH),
        *STORAGE_MORE,
        *{(m, REPLICA + p) for m, p in _STORAGE_ALL},
        *REPLICA_ELSEWHERE,
    }
)
"""Every route of server.py and storage_api.py (HEAD twins aside); a test keeps it current."""


# -- jobs --------------------------------------------------------------------------------------

TRAINING_INPUT: dict[str, Any] = {
    "scaleTier": "CUSTOM",
    "masterType": "n1-standard-4",
    "workerType": "n1-standard-4",
    "workerCount": "1",
    "parameterServerType": "n1-standard-4",
    "parameterServerCount": "1",
    "evaluatorType": "n1-standard-4",
    "evaluatorCount": "1",
    "masterConfig": {
        "acceleratorConfig": {"count": "1", "type": "NVIDIA_TESLA_T4"},
        "diskConfig": {"bootDiskSizeGb": 100, "bootDiskType": "pd-ssd"},
    },
    "packageUris": [MISSING_PACKAGE],
    "pythonModule": "trainer.task",
    "args": ["--steps", "1"],
    "region": "us-central1",
    "jobDir": f"gs://{BUCKET}/fuzz-out",
    "runtimeVersion": "2.11",
    "pythonVersion": "3.7",
    "scheduling": {"maxRunningTime": "3600s", "maxWaitTime": "7200s", "priority": 10},
    "hyperparameters": {
        "goal": "MINIMIZE",
        "maxTrials": 2,
        "maxParallelTrials": 1,
        "hyperparameterMetricTag": "loss",
        "params": [
            {
                "parameterName": "lr",
                "type": "DOUBLE",
                "minValue": 0.001,
                "maxValue": 0.1,
                "scaleType": "UNIT_LOG_SCALE",
            },
            {"parameterName": "layers", "type": "DISCRETE", "discreteValues": [1, 2, 3]},
        ],
    },
    "enableWebAccess": False,
    "useChiefInTfConfig": False,
}
CREATE_TEMPLATE: dict[str, Any] = {
    "jobId": "fuzz_create_job",
    "labels": {"team": "fuzz", "run": "1"},
    "trainingInput": TRAINING_INPUT,
}
"""A job that passes every check but one: its package does not exist. So every mutation of it
must be rejected, whichever check catches it."""


@st.composite
def _create(draw: st.DrawFn, t: Target, out_of_range_tokens: bool) -> FuzzRequest:
    project = _project(draw)
    extra = draw(EXTRA_PARAMS)
    path = f"/v1/projects/{q(project)}/jobs" + (f"?{query(extra)}" if extra else "")
    body = draw(json_bodies(CREATE_TEMPLATE) | st.just(b""))
    ctype = draw(JSON_CONTENT_TYPES)
    return FuzzRequest(
        "jobs.create",
        "POST",
        path,
        body,
        (("Content-Type", ctype),),
        cut_after=_maybe_cut(draw, body),
    )


JOB_FIELDS = [
    "state",
    "jobId",
    "labels.team",
    'labels."a b"',
    "labels",
    "createTime",
    "trainingInput.scaleTier",
    "trainingInput.region",
    "errorMessage",
    "unknown",
    "a.b.c.d",
    "",
]
LOG_FIELDS = [
    "timestamp",
    "receiveTimestamp",
    "severity",
    "insertId",
    "logName",
    "resource.type",
    "resource.labels.job_id",
    "resource.labels.task_name",
    'labels."ml.googleapis.com/task_name"',
    "labels.task_name",
    "jsonPayload.message",
    "textPayload",
    "resource",
    "unknown.path",
]
OPS = ["=", "!=", ":", "<", "<=", ">", ">=", "=~", "!~", "==", "<>", "~", ""]
FILTER_VALUES = st.one_of(
    SHORT_TEXT,
    SHORT_TEXT.map(json.dumps),
    st.sampled_from(
        [
            "FAILED",
            '"FAILED"',
            "*",
            '"unterminated',
            "'single'",
            "NULL",
            "-1",
            "1e309",
            "ERROR",
            "error",
            '"WARNING"',
            "999",
            "NOTASEVERITY",
            '"1970-01-01T00:00:00Z"',
            '"2026-11-21T09:05:57.552480+0000"',
            '"0000-00-00T00:00:00Z"',
            '"99999-01-01T00:00:00Z"',
            '"2026-13-45T25:61:61Z"',
            '"2026-11-22T00:00:00.0000000000000000001Z"',
            '"2026-11-22T00:00:00+99:99"',
            '"9999-12-31T23:59:59.999999-2359"',
            '"0001-01-01T00:00:00+2359"',
            '"000000000000000042"',
            '"' + "9" * 400 + '"',
        ]
    ),
)


def filters(fields: list[str], huge: bool) -> st.SearchStrategy[str]:
    """Filter soup: terms over ``fields`` joined by AND/OR/NOT and parentheses, balanced or
    not; plus plain text, 1 MiB, and nesting thousands deep."""
    term = st.builds(
        lambda f, sp1, op, sp2, v: f"{f}{sp1}{op}{sp2}{v}",
        st.sampled_from(fields) | SHORT_TEXT,
        st.sampled_from(["", " "]),
        st.sampled_from(OPS),
        st.sampled_from(["", " "]),
        FILTER_VALUES,
    )
    joiner = st.sampled_from([" AND ", " OR ", " ", " and ", " AND NOT ", "AND", " OR OR "])
    expr = st.recursive(
        term,
        lambda e: st.one_of(
            st.builds(lambda a, j, b: f"{a}{j}{b}", e, joiner, e),
            e.map(lambda s: f"({s})"),
            e.map(lambda s: f"NOT {s}"),
            e.map(lambda s: f"-{s}"),
            e.map(lambda s: f"({s}"),
            e.map(lambda s: f"{s})"),
        ),
        max_leaves=8,
    )
    return st.one_of(
        expr,
        expr,
        JSON_TEXT if huge else TEXT,
        st.integers(10, 5000).map(lambda n: "(" * n + f"{fields[0]}=x" + ")" * n),
        st.integers(10, 5000).map(lambda n: "NOT " * n + f"{fields[0]}=x"),
        st.integers(10, 3000).map(lambda n: " OR ".join([f"{fields[1]}=x"] * n)),
    )


JOB_FILTERS = filters(JOB_FIELDS, huge=False)
"""For a query string."""
LOG_FILTERS = filters(LOG_FIELDS, huge=True)
"""For a JSON body: 1 MiB ones too."""
SIZES = st.one_of(
    SHORT_TEXT,
    st.integers().map(str),
    st.sampled_from(
        ["", "0", "-1", "1e5", "1.5", "0x10", " 5", "\u0663", "²", "9" * 30, "9" * 5000]
    ),
)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode()


GARBAGE_TOKENS = st.one_of(
    TEXT,
    st.binary(max_size=100).map(_b64),
    ANY_JSON.map(lambda d: _b64(dumps(d))),
    st.sampled_from(["=", "====", "AAAA", "\u00e9", "%3D", "not base64!"]),
)
HOSTILE_INTS_IN_RANGE = st.one_of(
    st.integers(-(2**63), 2**63 - 1),
    st.sampled_from([0, -1, 2**63 - 1, -(2**63)]),
)
HOSTILE_INTS_OUT_OF_RANGE = st.sampled_from([2**63, -(2**63) - 1, 10**30, 10**400])
WRONG_TOKEN_VALUES = st.one_of(
    st.none(), st.booleans(), st.floats(), SMALL_JSON_TEXT, st.lists(st.integers(), max_size=2)
)


@st.composite
def _job_token(draw: st.DrawFn, flt: str, out_of_range_tokens: bool) -> str:
    """A jobs.list pageToken: garbage, or forged with the right project and filter checksum."""
    if draw(st.booleans()):
        return draw(GARBAGE_TOKENS)
    values = st.one_of(HOSTILE_INTS_IN_RANGE, WRONG_TOKEN_VALUES)
    if out_of_range_tokens:  # past SQLite's int64 (jobs.py once passed these on: a 500)
        values |= HOSTILE_INTS_OUT_OF_RANGE
    data = {"p": PROJECT, "f": hashlib.sha256(flt.encode()).hexdigest()[:12], "s": draw(values)}
    if out_of_range_tokens and chance(draw, 10):
        return _b64(_deep(draw(st.integers(1000, 50_000))))
    return _b64(json.dumps(data).encode())


@st.composite
def _list(draw: st.DrawFn, t: Target, out_of_range_tokens: bool) -> FuzzRequest:
    project = _project(draw)
    params: list[tuple[str, str]] = []
    flt = draw(st.none() | JOB_FILTERS)
    if flt is not None:
        params.append(("filter", flt))
    if draw(st.booleans()):
        params.append(("pageToken", draw(_job_token(flt or "", out_of_range_tokens))))
    if draw(st.booleans()):
        params.append(("pageSize", draw(SIZES)))
    params += draw(EXTRA_PARAMS)
    path = f"/v1/projects/{q(project)}/jobs?{query(params)}"
    return FuzzRequest("jobs.list", "GET", path, may_succeed=True)


NAMES = st.one_of(TEXT, st.sampled_from(SURROGATES))
"""Hostile job names for paths (none of them a job)."""


def _name(draw: st.DrawFn) -> str:
    """Mostly the target job (so requests reach the handlers), else a hostile name."""
    return TARGET_JOB if chance(draw, 60) else _name(draw)


def _job_path(project: str, name: str, verb: str | None) -> str:
    return f"/v1/projects/{q(project)}/jobs/{q(name)}" + ("" if verb is None else f":{q(verb)}")


def _is_target(project: str, name: str) -> bool:
    return project == PROJECT and name == TARGET_JOB


SINCE = st.one_of(
    TEXT,
    st.datetimes().map(lambda d: d.isoformat()),
    st.datetimes().map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%S.%fZ")),
    FILTER_VALUES.map(lambda s: s.strip('"')),
)


@st.composite
def _get(draw: st.DrawFn, t: Target, out_of_range_tokens: bool) -> FuzzRequest:
    """jobs.get, :getIamPolicy, :metrics, :environment and unknown GET verbs."""
    project, name = _project(draw), _name(draw)
    verbs = {"none": None, "iam": "getIamPolicy", "metrics": "metrics", "other": "?"}
    verbs["environment"] = "environment"
    verb = verbs[pick(draw, {"none": 40, "iam": 20, "metrics": 20, "environment": 10, "other": 20})]
    if verb == "?":
        verb = draw(TEXT)
    params = draw(EXTRA_PARAMS)
    if verb == "metrics" and draw(st.booleans()):
        params.append(("since", draw(SINCE)))
    if verb == "getIamPolicy" and draw(st.booleans()):
        params.append(("options.requestedPolicyVersion", draw(SIZES)))
    path = _job_path(project, name, verb) + (f"?{query(params)}" if params else "")
    ok = _is_target(project, name) and verb in (None, "getIamPolicy", "metrics", "environment")
    return FuzzRequest("jobs.get", "GET", path, may_succeed=ok)


@st.composite
def _metrics(draw: st.DrawFn, t: Target, out_of_range_tokens: bool) -> FuzzRequest:
    since = draw(SINCE)
    path = _job_path(PROJECT, TARGET_JOB, "metrics") + f"?{query([('since', since)])}"
    return FuzzRequest("jobs.metrics", "GET", path, may_succeed=True)


PATCH_TEMPLATE: dict[str, Any] = {
    "labels": {"team": "fuzz", "tier": "gold"},
    "etag": "AAAAAAAAAAA=",
}
MASKS = st.one_of(
    st.sampled_from(
        ["labels", "etag", "labels,etag", "", ",", "labels,,", "LABELS", "state", "labels,state"]
    ),
    TEXT,
)


@st.composite
def _patch(draw: st.DrawFn, t: Target, out_of_range_tokens: bool) -> FuzzRequest:
    project, name = _project(draw), _name(draw)
    verb = None if chance(draw, 80) else draw(st.sampled_from(["cancel", "patch"]) | SHORT_TEXT)
    params: list[tuple[str, str]] = []
    if chance(draw, 85):
        params.append(("updateMask", draw(MASKS)))
    params += draw(EXTRA_PARAMS)
    path = _job_path(project, name, verb) + (f"?{query(params)}" if params else "")
    body = draw(json_bodies(PATCH_TEMPLATE) | st.just(b""))
    ok = _is_target(project, name) and verb is None
    return FuzzRequest("jobs.patch", "PATCH", path, body, may_succeed=ok)


@st.composite
def _cancel(draw: st.DrawFn, t: Target, out_of_range_tokens: bool) -> FuzzRequest:
    """:cancel of the (finished) target or of names that are no job: always a 4xx."""
    project, name = _project(draw), _name(draw)
    body = draw(st.none() | st.sampled_from([b"", b"{}", b"  "]) | json_bodies({}))
    ctype = draw(st.none() | JSON_CONTENT_TYPES)
    headers = () if ctype is None else (("Content-Type", ctype),)
    return FuzzRequest("jobs.cancel", "POST", _job_path(project, name, "cancel"), body, headers)


SET_IAM_TEMPLATE: dict[str, Any] = {
    "policy": {
        "version": 1,
        "etag": "ACAB",
        "bindings": [{"role": "roles/viewer", "members": ["user:a@example.com"]}],
    },
    "updateMask": "bindings,etag",
}
TEST_IAM_TEMPLATE: dict[str, Any] = {"permissions": ["ml.jobs.get", "ml.jobs.cancel"]}


@st.composite
def _iam(draw: st.DrawFn, t: Target, out_of_range_tokens: bool) -> FuzzRequest:
    project, name = _project(draw), _name(draw)
    verb = draw(st.sampled_from(["setIamPolicy", "testIamPermissions"]))
    template = SET_IAM_TEMPLATE if verb == "setIamPolicy" else TEST_IAM_TEMPLATE
    body = draw(st.none() | json_bodies(template))
    return FuzzRequest(
        "jobs.iam",
        "POST",
        _job_path(project, name, verb),
        body,
        may_succeed=_is_target(project, name),
    )


KNOWN_VERBS: dict[str, set[str | None]] = {
    "GET": {None, "getIamPolicy", "metrics", "environment"},
    "POST": {"cancel", "setIamPolicy", "testIamPermissions"},
    "PATCH": {None},
}


@st.composite
def _verbs(draw: st.DrawFn, t: Target, out_of_range_tokens: bool) -> FuzzRequest:
    """Unknown custom methods, and methods a job has not (PUT, DELETE, OPTIONS)."""
    method = draw(st.sampled_from(["GET", "POST", "PATCH", "PUT", "DELETE", "OPTIONS"]))
    verb = draw(
        st.none()
        | st.sampled_from(["cancel", "getIamPolicy", "metrics", "setIamPolicy", "list", "create"])
        | TEXT
    )
    if verb in KNOWN_VERBS.get(method, set()):
        verb = "nope"
    body = draw(st.none() | st.just(b"{}"))
    return FuzzRequest("jobs.verbs", method, _job_path(PROJECT, TARGET_JOB, verb), body)


# -- logging -----------------------------------------------------------------------------------

ENTRIES_TEMPLATE: dict[str, Any] = {
    "resourceNames": [f"projects/{PROJECT}"],
    "filter": f'resource.type="ml_job" AND resource.labels.job_id="{TARGET_JOB}"',
    "orderBy": "timestamp asc",
    "pageSize": 10,
    "pageToken": "",
    "projectIds": [PROJECT],
}


def _log_key(projects: list[str], flt: str, desc: bool) -> str:
    """The checksum entries.py puts in its page tokens (forged here on purpose)."""
    return hashlib.sha256(json.dumps([sorted(set(projects)), flt, desc]).encode()).hexdigest()[:12]


@st.composite
def _entries_body(draw: st.DrawFn) -> bytes:
    """A well-formed request with a hostile filter, order, size or (forged) page token."""
    flt = draw(LOG_FILTERS)
    order = draw(
        st.sampled_from(["timestamp asc", "timestamp desc", "timestamp", " TIMESTAMP DESC "])
        | SHORT_TEXT
    )
    body: dict[str, Any] = {"resourceNames": [f"projects/{PROJECT}"], "filter": flt}
    if draw(st.booleans()):
        body["orderBy"] = order
    if draw(st.booleans()):
        body["pageSize"] = draw(st.one_of(NUMBERS, SIZES))
    kind = draw(st.sampled_from(["none", "garbage", "forged", "deep"]))
    if kind == "garbage":
        body["pageToken"] = draw(GARBAGE_TOKENS)
    elif kind == "forged":
        desc = isinstance(order, str) and order.strip().lower() == "timestamp desc"
        values = st.one_of(
            HOSTILE_INTS_IN_RANGE,
            HOSTILE_INTS_OUT_OF_RANGE,
            WRONG_TOKEN_VALUES,
            st.just(float("inf")),
        )
        forged = {
            "t": draw(values),
            "i": draw(values),
            "k": _log_key([PROJECT], flt, desc and "orderBy" in body),
        }
        body["pageToken"] = _b64(json.dumps(forged).encode())
    elif kind == "deep":
        body["pageToken"] = _b64(_deep(draw(st.integers(1000, 50_000))))
    return dumps(body)


@st.composite
def _entries(draw: st.DrawFn, t: Target, out_of_range_tokens: bool) -> FuzzRequest:
    body = draw(st.one_of(_entries_body(), _entries_body(), json_bodies(ENTRIES_TEMPLATE)))
    extra = draw(EXTRA_PARAMS)
    path = "/v2/entries:list" + (f"?{query(extra)}" if extra else "")
    ctype = draw(JSON_CONTENT_TYPES)
    return FuzzRequest(
        "entries.list", "POST", path, body, (("Content-Type", ctype),), may_succeed=True
    )


FOLLOW_WAITS: st.SearchStrategy[Any] = st.one_of(
    st.sampled_from([0, 0.0, 0.01, -1, -0.5, True, False, None, "1", [], {}, 10**400, -(10**400)]),
    st.just(float("nan")),
    st.just(float("inf")),
    st.just(float("-inf")),
    SHORT_TEXT,
)
"""waitSeconds values: hostile ones, and valid ones short enough to keep the fuzz quick."""


@st.composite
def _follow(draw: st.DrawFn, t: Target, out_of_range_tokens: bool) -> FuzzRequest:
    """entries:follow takes entries:list's body (and its page tokens), plus waitSeconds."""
    body = draw(st.one_of(_entries_body(), json_bodies(ENTRIES_TEMPLATE)))
    if draw(st.booleans()):
        try:
            parsed = json.loads(body)
        except (ValueError, RecursionError):  # json_bodies also draws very deep ones
            parsed = None
        if isinstance(parsed, dict):
            parsed["waitSeconds"] = draw(FOLLOW_WAITS)
            body = dumps(parsed)
    ctype = draw(JSON_CONTENT_TYPES)
    return FuzzRequest(
        "entries.follow",
        "POST",
        "/v2/entries:follow",
        body,
        (("Content-Type", ctype),),
        may_succeed=True,
    )


@st.composite
def _metadata(draw: st.DrawFn, t: Target, out_of_range_tokens: bool) -> FuzzRequest:
    """A metadata request with a secret nobody issued: 401 whatever the path or headers."""
    tail = draw(
        st.sampled_from(
            [
                "",
                "/",
                "/computeMetadata/v1/project/project-id",
                "/computeMetadata/v1/instance/service-accounts/default/",
                "/computeMetadata/v1/instance/service-accounts/default/token",
                "/computeMetadata/v1/instance/service-accounts/x%2F..%2F/token",
                "/computeMetadata/v1/../../v1/projects/p/jobs",
                "/computeMetadata/v1/",
            ]
        )
        | SHORT_TEXT.map(lambda s: "/computeMetadata/v1/" + q(s))
    )
    flavor = draw(st.sampled_from([None, "Google", "google", ""]))
    headers = () if flavor is None else (("Metadata-Flavor", flavor),)
    return FuzzRequest(
        "metadata",
        "GET",
        f"/_replica/{q(draw(FRESH_NAMES))}{tail}",
        None,
        headers,
        auth=False,
    )


@st.composite
def _replica_output(draw: st.DrawFn, t: Target, out_of_range_tokens: bool) -> FuzzRequest:
    """Shipped output with a credential nobody issued: 401 whatever the stream, offset or body
    (the credential is checked before anything is read or written)."""
    stream = draw(
        st.sampled_from(["stdout", "stderr", "hypertune", "status", "passwd", "..%2F..%2Fx", ""])
        | SHORT_TEXT.map(q)
    )
    method = draw(st.sampled_from(["GET", "POST"]))
    offset = draw(st.sampled_from(["", "0", "-1", "1e9", "99999999999999999999", "abc"]))
    body = draw(st.binary(max_size=256)) if method == "POST" else None
    query_part = f"?offset={q(offset)}" if offset else ""
    return FuzzRequest(
        "replica_output",
        method,
        f"/_replica/{q(draw(FRESH_NAMES))}/output/{stream}{query_part}",
        body,
        (("Content-Type", "application/octet-stream"),),
        auth=False,
    )


# -- storage -----------------------------------------------------------------------------------

BAD_BUCKETS = st.one_of(
    st.sampled_from(
        ["", "a", "ab", "A-B", "-abc", "abc-", "a..b", "x" * 223, "goog\u00e9", "..", "a b", "%2F"]
    ),
    TEXT.filter(lambda b: bucket_error(b) is not None),
)
BAD_OBJECT_NAMES = st.one_of(
    st.sampled_from(
        [
            "",
            ".",
            "..",
            "/abs",
            "a//b",
            "a/./b",
            "a/../b",
            "../../token",
            "../../jobs.sqlite",
            "a//",  # ("a/" is a valid folder placeholder: empty, it is stored)
            "a\x00b",
            "\x1f",
            "\x7f",
            "a" * 1025,
            "b" * 256 + "/c",
            "é" * 513,
        ]
    ),
    TEXT.filter(lambda n: object_name_error(n) is not None),
)
CONFLICT_NAMES = st.sampled_from(["pkg", f"{OBJECT}/child", f"{OBJECT}/a/b"])
"""Valid names that cannot be files here: a folder of objects, or below an object."""
FRESH_NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=6, max_size=12).map(
    lambda s: f"fuzz-ok/{s}.tar.gz"
)


@st.composite
def _bucket(draw: st.DrawFn) -> tuple[str, bool]:
    """(bucket, whether it is valid)."""
    if chance(draw, 80):
        return BUCKET, True
    return draw(BAD_BUCKETS), False


@st.composite
def _object_name(draw: st.DrawFn) -> tuple[str, bool]:
    """(name, whether an upload to it can succeed)."""
    kind = pick(draw, {"fresh": 40, "bad": 40, "conflict": 20})
    if kind == "fresh":
        return draw(FRESH_NAMES), True
    if kind == "conflict":
        return draw(CONFLICT_NAMES), False
    return draw(BAD_OBJECT_NAMES), False


PREFIXES = st.sampled_from(["/upload", "/resumable/upload"])


def _maybe_cut(draw: st.DrawFn, body: bytes) -> int | None:
    if not body or not chance(draw, 15):
        return None
    return draw(st.integers(0, len(body) - 1))


@st.composite
def _media(draw: st.DrawFn, t: Target, out_of_range_tokens: bool) -> FuzzRequest:
    """uploadType=media, and uploadType values that are none of the three."""
    bucket, bucket_ok = draw(_bucket())
    name, name_ok = draw(_object_name())
    upload_type = "media"
    if chance(draw, 20):
        upload_type = draw(st.sampled_from(["MEDIA", "", "media ", "simple"]) | SHORT_TEXT)
    if upload_type in ("multipart", "resumable"):  # their own families
        upload_type = "media"
    params = [("uploadType", upload_type), ("name", name), *draw(EXTRA_PARAMS)]
    body = draw(st.binary(max_size=300) | st.just(b"x" * MiB) | st.just(b""))
    prefix = draw(PREFIXES)
    ok = bucket_ok and name_ok and upload_type == "media"
    return FuzzRequest(
        "storage.media",
        "POST",
        f"{prefix}/storage/v1/b/{q(bucket)}/o?{query(params)}",
        body,
        may_succeed=ok,
        cut_after=_maybe_cut(draw, body),
    )


META_TEMPLATE: dict[str, Any] = {"name": "x", "size": "3", "contentType": "application/gzip"}
GCLOUD_BOUNDARY = "===============7330845974216740156=="
BOUNDARIES = st.one_of(
    st.sampled_from(["b", "x" * 70, "a b", "'", '"', "--", "=="]),
    SHORT_TEXT.map(_header_safe),
)
BAD_SIZES = ("-1", "abc", "1e3", "²", "\u0663", "9" * 20, "9" * 5000, "0x3", "3.0", "3 4")
"""Not int64 byte counts in ASCII digits: always a 400."""
SIZE_VALUES = st.one_of(st.sampled_from(BAD_SIZES), SHORT_TEXT)


@st.composite
def _multipart(draw: st.DrawFn, t: Target, out_of_range_tokens: bool) -> FuzzRequest:
    """uploadType=multipart: gcloud's framing, then every way to break it."""
    bucket, bucket_ok = draw(_bucket())
    name, name_ok = draw(_object_name())
    data = draw(st.binary(max_size=200) | st.just(b"x" * MiB))
    boundary = GCLOUD_BOUNDARY if chance(draw, 70) else draw(BOUNDARIES)
    ctype_kind = pick(
        draw,
        {"single": 55, "double": 10, "bare": 10, "none": 5, "other": 5, "long": 5, "8bit": 10},
    )
    ctype = {
        "single": f"multipart/related; boundary='{boundary}'",
        "double": f'multipart/related; boundary="{boundary}"',
        "bare": f"multipart/related; boundary={boundary}",
        "none": "multipart/related",
        "other": f"multipart/form-data; boundary={boundary}",
        "long": "multipart/related; boundary=" + "x" * 201,
        "8bit": "multipart/related; boundary=\xff\u00e9",
    }[ctype_kind]
    in_query = draw(st.booleans())
    meta: dict[str, Any] = {} if in_query else {"name": name}
    size_kind = pick(draw, {"right": 50, "absent": 20, "wrong": 15, "garbage": 15})
    if size_kind == "right":
        meta["size"] = str(len(data))
    elif size_kind == "wrong":
        meta["size"] = str(len(data) + draw(st.sampled_from([1, -1, 1000])))
    elif size_kind == "garbage":
        meta["size"] = draw(SIZE_VALUES)
    meta_kind = pick(draw, {"plain": 60, "mutated": 20, "malformed": 10, "empty": 10})
    base = {**META_TEMPLATE, **meta}
    if in_query:
        del base["name"]
    meta_bytes = {
        "plain": lambda: dumps(meta),
        "mutated": lambda: dumps(draw(mutated(base))),
        "malformed": lambda: draw(MALFORMED),
        "empty": lambda: b"",
    }[meta_kind]()
    nl = draw(st.sampled_from([b"\n", b"\r\n"]))
    bnd = boundary.encode("utf-8", "surrogatepass")
    head1 = b"Content-Type: application/json; charset=UTF-8" + nl + b"MIME-Version: 1.0" + nl + nl
    head2 = b"Content-Type: application/octet-stream" + nl + b"MIME-Version: 1.0" + nl + nl
    delim = b"--" + bnd
    structure = pick(
        draw,
        {
            "valid": 50,
            "preamble": 5,
            "no_close": 5,
            "no_media": 5,
            "three_parts": 5,
            "no_start": 5,
            "garbage": 5,
            "long_header": 5,
            "no_blank_line": 5,
            "many_headers": 5,
        },
    )
    part1 = delim + nl + head1 + meta_bytes + nl
    part2 = delim + nl + head2 + data + nl
    close = delim + b"--"
    body = {
        "valid": part1 + part2 + close,
        "preamble": b"preamble text" + nl + part1 + part2 + close,
        "no_close": part1 + part2,
        "no_media": part1 + close,
        "three_parts": part1 + part2 + part2 + close,
        "no_start": head1 + meta_bytes + nl + part2 + close,
        "garbage": draw(st.binary(max_size=300)),
        "long_header": delim + nl + b"X-Long: " + b"h" * 20_000 + nl + head1 + meta_bytes + nl,
        "no_blank_line": delim + nl + b"Content-Type: application/json" + nl + meta_bytes,
        "many_headers": delim + nl + (b"X-H: 1" + nl) * 150 + nl + meta_bytes,
    }[structure]
    params = [("uploadType", "multipart")]
    if in_query:
        params.append(("name", name))
    prefix = draw(PREFIXES)
    framing_ok = structure in ("valid", "preamble") and ctype_kind in ("single", "double", "bare")
    if meta_kind == "mutated":  # the mutation may have made any name or size
        meta_ok = True
    elif meta_kind == "malformed":
        meta_ok = False
    else:  # the name is the query's, or the plain metadata's; empty metadata has no size
        has_name = name_ok and (in_query or meta_kind == "plain")
        meta_ok = has_name and (meta_kind == "empty" or size_kind != "wrong")
    ok = bucket_ok and framing_ok and meta_ok
    return FuzzRequest(
        "storage.multipart",
        "POST",
        f"{prefix}/storage/v1/b/{q(bucket)}/o?{query(params)}",
        body,
        (("Content-Type", _header_safe(ctype)),),
        may_succeed=ok,
        cut_after=_maybe_cut(draw, body) if ok else None,
    )


@st.composite
def _resumable_start(draw: st.DrawFn, t: Target, out_of_range_tokens: bool) -> FuzzRequest:
    """uploadType=resumable: the request that opens a session."""
    bucket, bucket_ok = draw(_bucket())
    name, name_ok = draw(_object_name())
    in_query = draw(st.booleans())
    meta: dict[str, Any] = {"size": "10"} if in_query else {"name": name, "size": "10"}
    meta_kind = pick(draw, {"plain": 55, "mutated": 20, "malformed": 15, "empty": 10})
    body = {
        "plain": lambda: dumps(meta),
        "mutated": lambda: dumps(draw(mutated(meta))),
        "malformed": lambda: draw(MALFORMED),
        "empty": lambda: b"",
    }[meta_kind]()
    length = draw(st.sampled_from([None, "10"]))
    if chance(draw, 30):
        length = draw(st.just("11") | SIZE_VALUES.map(_header_safe))
    headers: tuple[tuple[str, str], ...] = (("X-Upload-Content-Type", "application/gzip"),)
    if length is not None:
        headers += (("X-Upload-Content-Length", length),)
    params = [("uploadType", "resumable")] + ([("name", name)] if in_query else [])
    prefix = draw(PREFIXES)
    decisive = (
        not bucket_ok
        or (not name_ok and ((in_query and name != "") or (not in_query and meta_kind == "plain")))
        or meta_kind == "malformed"
        or (meta_kind == "empty" and not in_query)
        or length in BAD_SIZES
        or (length == "11" and meta_kind == "plain")  # the metadata says 10
    )
    return FuzzRequest(
        "storage.resumable_start",
        "POST",
        f"{prefix}/storage/v1/b/{q(bucket)}/o?{query(params)}",
        body,
        headers,
        may_succeed=not decisive,
    )


CONTENT_RANGES = st.one_of(
    st.builds(
        lambda a, b, n: f"bytes {a}-{b}/{n}",
        st.integers(0, 2**70),
        st.integers(0, 2**70),
        st.integers(0, 2**70).map(str) | st.just("*"),
    ),
    st.builds(
        lambda a, n: f"bytes {a}-{a + 99}/{n}",
        st.integers(0, SESSION_BYTES),
        st.sampled_from([str(SESSION_BYTES), "*", "100"]),
    ),
    st.sampled_from(
        [
            "bytes */*",
            f"bytes */{SESSION_BYTES}",
            "bytes */0",
            "bytes 0-99/*",
            "bytes=0-99/100",
            "bytes 0-99/100 extra",
            "bytes 5-1/10",
            "bytes 0-9/5",
            "bytes \u0660-\u0669/\u0661\u0660",  # Arabic-Indic digits
            "bytes ²-³/⁴",
            "bytes " + "9" * 20 + "-" + "9" * 20 + "/*",
            "bytes " + "9" * 5000 + "-1/2",
            "bytes -1-5/10",
            "items 0-1/2",
            "",
        ]
    ),
    SHORT_TEXT.map(_header_safe),
    st.just("bytes " + "9" * 7000),
)


@st.composite
def _resumable_put(draw: st.DrawFn, t: Target, out_of_range_tokens: bool) -> FuzzRequest:
    """A session's PUT: chunks, status queries and finalizes, to the open session or none."""
    kind = pick(draw, {"session": 60, "other_bucket": 15, "id": 25})
    upload_id = {
        "session": t.upload_id,
        "other_bucket": t.upload_id,
        "id": draw(
            st.one_of(
                TEXT,
                st.text(alphabet="0123456789abcdef", min_size=32, max_size=32),
                st.just(t.upload_id.upper()),
                st.just(t.upload_id + "0"),
                st.just("../" + t.upload_id),
            )
        ),
    }[kind]
    bucket = "other-bucket" if kind == "other_bucket" else BUCKET
    params = [("uploadType", "resumable"), ("upload_id", upload_id), *draw(EXTRA_PARAMS)]
    if chance(draw, 10):
        params = [p for p in params if p[0] != "upload_id"]
    rng = draw(st.none() | CONTENT_RANGES)
    headers: tuple[tuple[str, str], ...] = () if rng is None else (("Content-Range", rng),)
    body = draw(st.binary(max_size=300) | st.just(b"x" * 100) | st.just(b""))
    prefix = draw(PREFIXES)
    return FuzzRequest(
        "storage.resumable_put",
        "PUT",
        f"{prefix}/storage/v1/b/{q(bucket)}/o?{query(params)}",
        body,
        headers,
        may_succeed=kind == "session",
        cut_after=_maybe_cut(draw, body),
    )


@st.composite
def _get_object(draw: st.DrawFn, t: Target, out_of_range_tokens: bool) -> FuzzRequest:
    bucket, bucket_ok = draw(_bucket())
    name = draw(
        st.one_of(
            st.just(OBJECT),
            BAD_OBJECT_NAMES,
            CONFLICT_NAMES,
            FRESH_NAMES,
            st.sampled_from(
                ["../token", "../../token", "../../logs.sqlite", "../../../etc/passwd"]
            ),
            TEXT,
        )
    )
    safe = draw(st.sampled_from(["", "/"]))
    alt = draw(st.none() | st.sampled_from(["media", "json", "MEDIA", ""]) | SHORT_TEXT)
    path = f"/storage/v1/b/{q(bucket)}/o/{q(name, safe)}"
    if alt is not None:
        path += f"?{query([('alt', alt)])}"
    return FuzzRequest(
        "storage.get_object",
        "GET",
        path,
        may_succeed=bucket_ok and (name == OBJECT or name.startswith("fuzz-ok/")),
    )


@st.composite
def _get_bucket(draw: st.DrawFn, t: Target, out_of_range_tokens: bool) -> FuzzRequest:
    bucket = draw(st.one_of(st.just(BUCKET), BAD_BUCKETS, TEXT))
    return FuzzRequest(
        "storage.get_bucket",
        "GET",
        f"/storage/v1/b/{q(bucket)}",
        may_succeed=bucket_error(bucket) is None,
    )


@st.composite
def _storage_more(draw: st.DrawFn, t: Target, out_of_range_tokens: bool) -> FuzzRequest:
    """The client-facing storage routes (list, delete, copy, rewrite, compose, download,
    buckets), plain or under a replica prefix with a made-up credential (always refused)."""
    bucket = draw(st.one_of(st.just(BUCKET), BAD_BUCKETS, TEXT))
    name = draw(st.one_of(st.just(OBJECT), BAD_OBJECT_NAMES, FRESH_NAMES, TEXT))
    dest = draw(st.one_of(FRESH_NAMES, BAD_OBJECT_NAMES, TEXT))
    b, o, d = q(bucket), q(name), q("fuzz-copy/" + dest)
    params = draw(
        st.lists(
            st.tuples(
                st.sampled_from(
                    [
                        "prefix",
                        "delimiter",
                        "pageToken",
                        "maxResults",
                        "ifGenerationMatch",
                        "ifSourceGenerationMatch",
                        "generation",
                        "alt",
                        "includeTrailingDelimiter",
                    ]
                ),
                SHORT_TEXT,
            ),
            max_size=3,
        )
    )
    qs = f"?{query(params)}" if params else ""
    body = draw(
        st.one_of(
            st.just(b""),
            st.just(b'{"name": "fuzz-new-bucket"}'),
            st.just(json.dumps({"sourceObjects": [{"name": OBJECT}, {"name": name}]}).encode()),
            TEXT.map(lambda x: x.encode("utf-8", "surrogatepass")),
        )
    )
    method, path = draw(
        st.sampled_from(
            [
                ("GET", "/storage/v1/b"),
                ("POST", "/storage/v1/b"),
                ("DELETE", f"/storage/v1/b/{b}"),
                ("GET", f"/storage/v1/b/{b}/storageLayout"),
                ("GET", f"/storage/v1/b/{b}/o"),
                ("POST", f"/storage/v1/b/{b}/o/{o}/copyTo/b/fuzz-copy/o/{d}"),
                ("POST", f"/storage/v1/b/{b}/o/{o}/rewriteTo/b/fuzz-copy/o/{d}"),
                ("POST", f"/storage/v1/b/fuzz-copy/o/{d}/compose"),
                ("DELETE", f"/storage/v1/b/fuzz-copy/o/{d}"),
                ("GET", f"/download/storage/v1/b/{b}/o/{o}"),
                ("GET", f"/{b}/{o}"),  # the XML read: a route under a replica prefix only
            ]
        )
    )
    replica = draw(st.booleans())
    if replica:
        path = f"/_replica/{q(draw(FRESH_NAMES))}{path}"
    return FuzzRequest(
        "storage.more",
        method,
        path + qs,
        body=body if method == "POST" else None,
        headers=(("Content-Type", "application/json"),) if method == "POST" else (),
        auth=not replica,
        may_succeed=not replica,
    )


# -- the rest: unknown routes, credentials, health ------------------------------------------

UNKNOWN_PATHS = st.sampled_from(
    [
        "/",
        "/v1",
        "/v1/projects",
        f"/v1/projects/{PROJECT}",
        f"/v1/projects/{PROJECT}/models",
        f"/v1/projects/{PROJECT}/jobs/{TARGET_JOB}/extra",
        f"/v1/projects/{PROJECT}/operations/x",
        "/v2/entries",
        "/v2/entries:write",
        "/v2/entries:tail",
        "/v1beta1/projects/p/jobs",
        f"/upload/storage/v1/b/{BUCKET}",
        "/upload",
        "/resumable/upload/storage/v1/b//x",
        "/healthz/extra",
        "/favicon.ico",
        "/.env",
        "/%2e%2e/%2e%2e/etc/passwd",
    ]
)


@st.composite
def _unknown(draw: st.DrawFn, t: Target, out_of_range_tokens: bool) -> FuzzRequest:
    """Paths no route serves, and methods routes do not take: a google.rpc 404 or 405."""
    path = draw(UNKNOWN_PATHS)
    if draw(st.booleans()):  # three more segments: no route has room for them
        path += f"/{q(draw(TEXT))}/x/y/z"
    method = draw(st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]))
    if method == "DELETE" or chance(draw, 30):
        known = draw(
            st.sampled_from(
                [
                    ("DELETE", f"/v1/projects/{PROJECT}/jobs/{TARGET_JOB}"),
                    ("PUT", f"/v1/projects/{PROJECT}/jobs"),
                    ("GET", "/v2/entries:list"),
                    ("DELETE", f"/upload/storage/v1/b/{BUCKET}/o"),
                    ("GET", f"/upload/storage/v1/b/{BUCKET}/o"),
                    ("POST", f"/storage/v1/b/{BUCKET}"),
                    ("POST", "/healthz"),
                ]
            )
        )
        method, path = known
    body = draw(st.none() | st.just(b"{}"))
    return FuzzRequest("routes.unknown", method, path, body)


RAW_PATHS = st.sampled_from(
    [
        f"/v1/projects/{PROJECT}/jobs/../jobs",
        f"/v1/projects/{PROJECT}/./jobs",
        f"//v1/projects/{PROJECT}/jobs",
        f"/v1/projects/{PROJECT}/jobs//{TARGET_JOB}",
        f"/v1/projects/{PROJECT}/jobs/%2e%2e",
        f"/v1/projects/{PROJECT}/jobs/{TARGET_JOB};x=1",
        f"/v1/projects/{PROJECT}/jobs/{TARGET_JOB}%3Acancel",
        f"/v1/projects/{PROJECT}/jobs/{TARGET_JOB}%3agetIamPolicy",
        f"/v1/projects/{PROJECT}/jobs/%",
        f"/v1/projects/{PROJECT}/jobs/%zz",
        f"/v1/projects/{PROJECT}/jobs?%zz=%",
        f"/v1/projects/{PROJECT}/jobs?pageSize=1&pageSize=2&filter=a&filter=b",
        f"/storage/v1/b/{BUCKET}/o/pkg/../pkg/object.bin",
        f"/storage/v1/b/{BUCKET}/o/pkg%2F..%2F..%2F..%2Ftoken?alt=media",
        f"/storage/v1/b/{BUCKET}/../../token",
        "/v2/entries%3Alist",
        "/../../../../etc/passwd",
    ]
)


@st.composite
def _raw_paths(draw: st.DrawFn, t: Target, out_of_range_tokens: bool) -> FuzzRequest:
    """Paths sent unnormalised (dot segments, double slashes, bad escapes): whatever route they
    reach, if any, no 5xx (a 2xx is fine where they mean a real route)."""
    method = draw(st.sampled_from(["GET", "POST"]))
    body = b"{}" if method == "POST" else None
    return FuzzRequest("paths.raw", method, draw(RAW_PATHS), body, may_succeed=True)


BAD_AUTH = st.one_of(
    st.sampled_from(
        [
            "",
            "Bearer",
            "Bearer ",
            "Bearer wrong",
            "Basic dXNlcjpwYXNz",
            "Token abc",
            "Bearer " + "x" * 7000,
            "Bearer \u00e9\u00e9",
            "Bearer\ttab",
        ]
    ),
    SHORT_TEXT.map(lambda s: "Bearer " + _header_safe(s)),
    SHORT_TEXT.map(_header_safe),
)
AUTH_TARGETS = st.sampled_from(
    [
        ("GET", f"/v1/projects/{PROJECT}/jobs", None),
        ("POST", f"/v1/projects/{PROJECT}/jobs", dumps(CREATE_TEMPLATE)),
        ("GET", f"/v1/projects/{PROJECT}/jobs/{TARGET_JOB}", None),
        ("POST", f"/v1/projects/{PROJECT}/jobs/{TARGET_JOB}:cancel", b"{}"),
        ("PATCH", f"/v1/projects/{PROJECT}/jobs/{TARGET_JOB}?updateMask=labels", b"{}"),
        ("GET", f"/v1/projects/{PROJECT}/jobs/{TARGET_JOB}:metrics", None),
        ("POST", "/v2/entries:list", dumps(ENTRIES_TEMPLATE)),
        ("POST", f"/upload/storage/v1/b/{BUCKET}/o?uploadType=media&name=fuzz-ok/auth", b"x"),
        ("POST", f"/resumable/upload/storage/v1/b/{BUCKET}/o?uploadType=resumable&name=a", b""),
        ("PUT", f"/upload/storage/v1/b/{BUCKET}/o?uploadType=resumable&upload_id=x", b"x"),
        ("GET", f"/storage/v1/b/{BUCKET}", None),
        ("GET", f"/storage/v1/b/{BUCKET}/o/pkg%2Fobject.bin?alt=media", None),
    ]
)


@st.composite
def _auth(draw: st.DrawFn, t: Target, out_of_range_tokens: bool) -> FuzzRequest:
    """Any route without the right bearer token: 401, whatever else is wrong."""
    method, path, body = draw(AUTH_TARGETS)
    header = draw(st.none() | BAD_AUTH)
    headers = () if header is None else (("Authorization", header),)
    return FuzzRequest("auth", method, path, body, headers, auth=False)


@st.composite
def _healthz(draw: st.DrawFn, t: Target, out_of_range_tokens: bool) -> FuzzRequest:
    extra = draw(EXTRA_PARAMS)
    auth = draw(st.booleans())
    return FuzzRequest(
        "healthz",
        "GET",
        "/healthz" + (f"?{query(extra)}" if extra else ""),
        auth=auth,
        may_succeed=True,
    )


ROUTES: dict[str, Route] = {
    "jobs.create": Route((("POST", JOBS),), _create),
    "jobs.list": Route((("GET", JOBS),), _list),
    "jobs.get": Route((("GET", JOB),), _get),
    "jobs.metrics": Route((("GET", JOB),), _metrics),
    "jobs.patch": Route((("PATCH", JOB),), _patch),
    "jobs.cancel": Route((("POST", JOB),), _cancel),
    "jobs.iam": Route((("POST", JOB),), _iam),
    "jobs.verbs": Route((("GET", JOB), ("POST", JOB), ("PATCH", JOB)), _verbs),
    "entries.list": Route((("POST", "/v2/entries:list"),), _entries),
    "entries.follow": Route((("POST", "/v2/entries:follow"),), _follow),
    "metadata": Route(tuple(METADATA), _metadata),
    "replica_output": Route(tuple(REPLICA_OUTPUT), _replica_output),
    "storage.media": Route((("POST", UPLOAD), ("POST", RESUMABLE)), _media),
    "storage.multipart": Route((("POST", UPLOAD), ("POST", RESUMABLE)), _multipart),
    "storage.resumable_start": Route((("POST", UPLOAD), ("POST", RESUMABLE)), _resumable_start),
    "storage.resumable_put": Route((("PUT", UPLOAD), ("PUT", RESUMABLE)), _resumable_put),
    "storage.get_object": Route((("GET", OBJECT_PATH),), _get_object),
    "storage.get_bucket": Route((("GET", BUCKET_PATH),), _get_bucket),
    "storage.more": Route(
        (
            *STORAGE_MORE,
            *{(m, REPLICA + p) for m, p in _STORAGE_ALL},
            *REPLICA_ELSEWHERE,
        ),
        _storage_more,
    ),
    "routes.unknown": Route((), _unknown),
    "paths.raw": Route((), _raw_paths),
    "auth": Route((), _auth),
    "healthz": Route((("GET", "/healthz"),), _healthz),
}
"""Request families by name; ``covers`` says which routes each reaches."""


def route_requests(
    route: str, target: Target, out_of_range_tokens: bool = True
) -> st.SearchStrategy[FuzzRequest]:
    """The strategy for one family; ``out_of_range_tokens`` adds jobs.list page tokens past
    SQLite's int64 and deeply nested ones."""
    return ROUTES[route].build(target, out_of_range_tokens)


def run_route(
    checker: Checker, route: str, examples: int, out_of_range_tokens: bool = True
) -> Tally:
    """Send ``examples`` draws of one family without stopping at problems (the benchmark's
    loop: it counts instead of failing, and hypothesis does not shrink)."""

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(data=st.data())
    def one(data: st.DataObject) -> None:
        checker.check(data.draw(route_requests(route, checker.target, out_of_range_tokens)))

    one()
    return checker.tallies.setdefault(route, Tally())
