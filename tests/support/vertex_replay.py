"""A replaying Vertex AI v1 server for googleapiclient, serving ``tests/fixtures/vertex``.

Built on googleapiclient's own ``HttpMock``: each request picks a fixture by route, and
``HttpMock.request`` returns it, so googleapiclient parses and raises exactly as for a real
response. The world is small and stateful: cancelling a live job makes it CANCELLING on later
gets and lists, a created job joins the list, and ``override``/``set_route`` change the rest.
Lists honour ``pageToken``, simple ``filter`` clauses joined by AND (``display_name="x"``,
``state!="…"``, ``display_name:"mnist_*"``, ``labels.k=v``, ``create_time>"…"``) and a top-level
``readMask``. Requests may name the project by id (``my-project``) or number; other projects
get a 403, unknown ids the 404 fixture. Every request is kept in ``requests``; a lock makes the
object safe for the TUI's worker threads.
Guess (no document settles it): cancelling a finished job answers 400 FAILED_PRECONDITION.
"""

from __future__ import annotations

import copy
import fnmatch
import json
import re
import threading
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from googleapiclient.http import HttpMock

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "vertex"
PROJECT, PROJECT_NUMBER, REGION = "my-project", "123456789012", "us-central1"
HOST = f"{REGION}-aiplatform.googleapis.com"
ENDPOINT = f"https://{HOST}"
RUNNING_ID = "3931099178511368192"
FAILED_ID = "6214097349183094784"
HP_ID = "6870461213431201792"
CUSTOM, TUNING = "customJobs", "hyperparameterTuningJobs"
LIVE = {"QUEUED", "PENDING", "RUNNING", "PAUSED", "UPDATING"}
_PATH = re.compile(
    r"^/v1/projects/(?P<project>[^/]+)/locations/(?P<region>[^/]+)/(?P<coll>[A-Za-z]+)"
    r"(?:/(?P<id>\d+))?(?P<verb>:cancel)?$"
)
_CLAUSE = re.compile(r'^\s*([\w.-]+)\s*(!=|<=|>=|=|<|>|:)\s*("[^"]*"|\S+)\s*$')


def fixture(name: str) -> Any:
    """A fixture's parsed JSON, fresh each call."""
    return json.loads((FIXTURES / name).read_text())


@dataclass(frozen=True)
class Recorded:
    method: str
    uri: str
    path: str
    query: dict[str, str]
    body: Any
    """The parsed JSON body, or None."""


def _error(status: int, code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": status, "message": message, "status": code}}


def _matches(resource: dict[str, Any], expr: str) -> bool:
    """Vertex's list ``filter``: simple clauses joined by AND (enough for a client's needs)."""
    clauses = re.split(r"\s+AND\s+", expr.strip()) if expr.strip() else []
    for clause in clauses:
        found = _CLAUSE.match(clause)
        if found is None:
            raise ValueError(f"replay: unsupported filter clause {clause!r}")
        field, op, value = found.group(1), found.group(2), found.group(3).strip('"')
        if field.startswith("labels."):
            have = resource.get("labels", {}).get(field[7:])
        else:
            key = re.sub(r"_(\w)", lambda m: m.group(1).upper(), field)
            have = resource.get(key)
        if op == ":":
            ok = have is not None and (value == "*" or fnmatch.fnmatchcase(str(have), value))
        elif field.endswith("_time") and have is not None:
            a, b = datetime.fromisoformat(have), datetime.fromisoformat(value)
            ok = {"=": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
        else:
            ok = (have == value) if op == "=" else (have != value) if op == "!=" else False
        if not ok:
            return False
    return True


class VertexReplay(HttpMock):  # type: ignore[misc]
    """An ``http`` for ``discovery.build`` that replays fixtures and records every request."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[Recorded] = []
        self._lock = threading.RLock()
        page1, page2 = (
            fixture("custom_jobs_list_page1.json"),
            fixture("custom_jobs_list_page2.json"),
        )
        self._pages: dict[str, list[list[dict[str, Any]]]] = {
            CUSTOM: [page1["customJobs"], page2["customJobs"]],
            TUNING: [fixture("tuning_jobs_list.json")[TUNING]],
        }
        self._tokens = ["", page1["nextPageToken"]]
        self._routes: list[tuple[str, re.Pattern[str], int, Any]] = []
        self._next_id = int(fixture("custom_job_create_response.json")["name"].rsplit("/", 1)[1])

    def set_route(
        self, method: str, pattern: str, response: str | dict[str, Any], status: int = 200
    ) -> None:
        """Answer ``method`` on paths matching regex ``pattern`` with a fixture (by file name)
        or a body, before any built-in route; the latest such route wins."""
        with self._lock:
            body = fixture(response) if isinstance(response, str) else response
            self._routes.insert(0, (method, re.compile(pattern), status, body))

    def override(self, job_id: str, resource: dict[str, Any] | None) -> None:
        """Serve ``resource`` for ``job_id`` from now on (None: the job no longer exists)."""
        with self._lock:
            for pages in self._pages.values():
                for page in pages:
                    for i, job in enumerate(page):
                        if job["name"].rsplit("/", 1)[1] == job_id:
                            if resource is None:
                                del page[i]
                            else:
                                page[i] = copy.deepcopy(resource)
                            return
            raise KeyError(job_id)

    def job(self, job_id: str) -> dict[str, Any] | None:
        """What a get of ``job_id`` (either collection) returns now."""
        with self._lock:
            for pages in self._pages.values():
                for page in pages:
                    for job in page:
                        if job["name"].rsplit("/", 1)[1] == job_id:
                            return copy.deepcopy(job)
            return None

    def request(
        self,
        uri: str,
        method: str = "GET",
        body: Any = None,
        headers: Any = None,
        redirections: int = 1,
        connection_type: Any = None,
    ) -> tuple[Any, bytes]:
        with self._lock:
            parts = urlsplit(uri)
            query = dict(parse_qsl(parts.query))
            raw = body.decode() if isinstance(body, bytes) else body
            parsed = json.loads(raw) if raw else None
            self.requests.append(Recorded(method, uri, parts.path, query, parsed))
            status, answer = self._answer(method, parts.netloc, parts.path, query, parsed)
            self.data = json.dumps(answer).encode()
            self.response_headers = {
                "status": str(status),
                "content-type": "application/json; charset=UTF-8",
            }
            response: tuple[Any, bytes] = super().request(
                uri, method, body, headers, redirections, connection_type
            )
            return response

    def _answer(
        self, method: str, host: str, path: str, query: dict[str, str], body: Any
    ) -> tuple[int, Any]:
        for want, pattern, status, answer in self._routes:
            if want == method and pattern.search(path):
                return status, copy.deepcopy(answer)
        route = _PATH.match(path)
        if host != HOST or route is None or route["coll"] not in self._pages:
            return 404, _error(404, "NOT_FOUND", f"replay: no route for {method} {host}{path}")
        if route["project"] not in (PROJECT, PROJECT_NUMBER) or route["region"] != REGION:
            return 403, fixture("error_permission_denied.json")
        coll, job_id = route["coll"], route["id"]
        if job_id is None and method == "GET":
            token = query.get("pageToken", "")
            if token not in self._tokens[: len(self._pages[coll])]:
                return 400, _error(400, "INVALID_ARGUMENT", "Invalid page token.")
            index = self._tokens.index(token)
            try:
                jobs = [j for j in self._pages[coll][index] if _matches(j, query.get("filter", ""))]
            except ValueError as exc:
                return 400, _error(400, "INVALID_ARGUMENT", str(exc))
            mask = [
                re.sub(r"_(\w)", lambda m: m.group(1).upper(), f)
                for f in query.get("readMask", "").split(",")
                if f
            ]
            out: dict[str, Any] = {
                coll: [{k: j[k] for k in j if not mask or k in mask} for j in jobs]
            }
            if index + 1 < len(self._pages[coll]):
                out["nextPageToken"] = self._tokens[index + 1]
            return 200, out
        if job_id is None and method == "POST" and not route["verb"]:
            return 200, self._create(coll, body or {})
        current = self.job(job_id) if job_id else None
        if current is None or current["name"].split("/")[-2] != coll:
            missing = fixture("error_not_found.json")
            if coll == TUNING:
                missing["error"]["message"] = "The HyperparameterTuningJob does not exist."
            return 404, missing
        if method == "GET" and not route["verb"]:
            return 200, current
        if method == "POST" and route["verb"]:
            state = current["state"].removeprefix("JOB_STATE_")
            if state not in LIVE:
                message = f"Cannot cancel {current['name']} in state {current['state']}."
                return 400, _error(400, "FAILED_PRECONDITION", message)
            if job_id == RUNNING_ID:
                current = fixture("custom_job_cancelling.json")
            current["state"] = "JOB_STATE_CANCELLING"
            self.override(job_id, current)
            return 200, fixture("cancel_response.json")
        return 404, _error(404, "NOT_FOUND", f"replay: no route for {method} {path}")

    def _create(self, coll: str, body: dict[str, Any]) -> dict[str, Any]:
        """What create returns: the body, server fields added, disk defaults filled in."""
        template = fixture("custom_job_create_response.json")
        job = copy.deepcopy(body)
        job["name"] = f"projects/{PROJECT_NUMBER}/locations/{REGION}/{coll}/{self._next_id}"
        self._next_id += 1
        spec = job.get("jobSpec" if coll == CUSTOM else "trialJobSpec", {})
        for pool in spec.get("workerPoolSpecs", []):
            if pool:
                pool.setdefault("diskSpec", {}).setdefault("bootDiskType", "pd-ssd")
                pool["diskSpec"].setdefault("bootDiskSizeGb", 100)
        for key in ("state", "createTime", "updateTime"):
            job[key] = template[key]
        self._pages[coll][0].insert(0, job)
        return copy.deepcopy(job)
