"""HTTP for the local service: the ml v1 Jobs routes and Logging ``entries:list`` (aiohttp).

Extensions (docs/wire-formats.md has their formats): ``GET .../jobs/{job}:metrics``,
per-replica CPU and memory (see ``metrics.py``); ``GET .../jobs/{job}:environment``, the runtime
environment the job got (``{}`` until it is ready): ``runtimeVersion``, ``pythonVersion``,
``interpreter``, ``exact``, ``packages`` (name to version), ``substitutions`` and ``notes`` (see
``jobs.JobService.runtime_environment``); ``GET .../jobs/{job}:queue``, why a job waits; and
``GET .../jobs/{job}:wait?etag=&timeoutSeconds=``, the job once it changes (a long poll, see
``jobs.JobService.wait``).

Handlers translate HTTP into ``JobService`` calls and nothing else. Every error leaves as a
google.rpc JSON body with the matching status; only a bug in this code can produce a 5xx.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from tui_app import __version__
from tui_app.local.browser_guard import BrowserGuard, json_content_type_problem
from tui_app.local.errors import ApiError, checked, invalid_field
from tui_app.local.jobs import JobService
from tui_app.local.logs.entries import follow_entries, list_entries
from tui_app.local.paths import project_error
from tui_app.local.storage.metadata_api import add_routes as add_metadata_routes
from tui_app.local.storage.replica_output import add_routes as add_output_routes
from tui_app.local.storage.storage_api import WRITER_KEY, is_storage_path
from tui_app.local.storage.storage_api import add_routes as add_storage_routes
from tui_app.local.storage.upload_bodies import parse_json_body

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 64 * 1024 * 1024
MAX_JSON_BYTES = 8 * 1024 * 1024
SERVICE_KEY: web.AppKey[JobService] = web.AppKey("service", JobService)
TOKEN_KEY: web.AppKey[str | None] = web.AppKey("token", str)
GUARD_KEY: web.AppKey[BrowserGuard] = web.AppKey("browser_guard", BrowserGuard)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

_POLICY = {"version": 1, "etag": "ACAB", "bindings": []}


def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(
        body=json.dumps(data, separators=(",", ":")).encode(),
        status=status,
        content_type="application/json",
    )


def _error(exc: ApiError) -> web.Response:
    return _json(exc.body(), exc.http_status)


@web.middleware
async def _errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except ApiError as exc:
        return _error(exc)
    except web.HTTPRequestEntityTooLarge:
        return _error(
            ApiError("INVALID_ARGUMENT", "The request body is too large.", http_status=413)
        )
    except web.HTTPMethodNotAllowed as exc:
        return _error(
            ApiError(
                "INVALID_ARGUMENT", f"Method {exc.method} is not allowed here.", http_status=405
            )
        )
    except web.HTTPNotFound:
        return _error(
            ApiError("NOT_FOUND", f"The requested URL {request.path} was not found on this server.")
        )
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        status = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED"}.get(
            exc.status, "INVALID_ARGUMENT"
        )
        return _error(ApiError(status, exc.reason or "Bad request", http_status=exc.status))
    except Exception:
        log.exception("unhandled error for %s %s", request.method, request.path)
        return _error(ApiError("INTERNAL", "Internal error in the local jobs service."))


@web.middleware
async def _browser_guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Requests that come from a web page never reach a route, whatever the auth mode."""
    headers = {k.lower(): v for k, v in request.headers.items()}
    why = request.app[GUARD_KEY].problem(request.method, headers)
    if why:
        raise ApiError("PERMISSION_DENIED", why)
    return await handler(request)


def _replica(request: web.Request, secret: str) -> bool:
    """Accept a replica's storage credential: ``True`` when it is live (the request then
    carries its writer); only storage routes ever call this."""
    writer = request.app[SERVICE_KEY].replica_credentials.lookup(secret)
    if writer is None:
        return False
    request[WRITER_KEY] = writer
    return True


@web.middleware
async def _auth(request: web.Request, handler: Handler) -> web.StreamResponse:
    token = request.app[TOKEN_KEY]
    header = request.headers.get("Authorization", "")
    scheme, _, given = header.partition(" ")
    secret = request.match_info.get("replica")
    if secret is not None and "tail" not in request.match_info:
        # A replica's credential in the path: in both auth modes it must be live, so a
        # replica's writes are always attributed and a finished job's replicas are refused.
        if not _replica(request, secret):
            raise ApiError(
                "UNAUTHENTICATED",
                "This replica storage credential is unknown or has expired: it is valid only "
                "while its job runs.",
            )
        return await handler(request)
    if secret is not None:
        return await handler(request)  # a non-storage route under /_replica/: 403 there
    if (
        scheme.lower() == "bearer"
        and is_storage_path(request.path)
        and _replica(request, given.strip())
    ):
        return await handler(request)  # TensorFlow sends the replica's credential this way
    if token is None or request.path == "/healthz":
        return await handler(request)
    if scheme.lower() != "bearer" or not hmac.compare_digest(
        given.strip().encode(), token.encode()
    ):
        raise ApiError(
            "UNAUTHENTICATED",
            "Request is missing required authentication credential. Expected an "
            "'Authorization: Bearer <token>' header with the token from the service's state dir "
            "(tui-app service env prints how to point gcloud at it).",
        )
    return await handler(request)


async def _body(request: web.Request, required: bool = True) -> Any:
    """The JSON body, ``None`` when empty; 400 when it is not JSON or not sent as JSON."""
    why = json_content_type_problem(request.headers.get("Content-Type"), request.body_exists)
    if why:
        raise invalid_field("body", why)
    try:
        raw = await request.read()
    except ConnectionError:  # the client hung up mid-body: nobody reads the answer, no traceback
        raise ApiError(
            "INVALID_ARGUMENT", "The request body ended before it was complete."
        ) from None
    if not raw.strip():
        if required:
            raise invalid_field("body", "A JSON request body is required.")
        return None
    if len(raw) > MAX_JSON_BYTES:
        raise ApiError("INVALID_ARGUMENT", "The request body is too large.", http_status=413)
    return parse_json_body(raw)


def _project(request: web.Request) -> str:
    return checked("parent", request.match_info["project"], project_error)


def _job_and_verb(request: web.Request) -> tuple[str, str | None]:
    name = request.match_info["name"]
    job_id, sep, verb = name.partition(":")
    return job_id, (verb if sep else None)


async def create_job(request: web.Request) -> web.Response:
    svc = request.app[SERVICE_KEY]
    return _json(svc.create(_project(request), await _body(request)))


async def list_jobs(request: web.Request) -> web.Response:
    svc = request.app[SERVICE_KEY]
    q = request.query
    page = svc.list(_project(request), q.get("pageSize"), q.get("pageToken"), q.get("filter"))
    return web.Response(body=page.encode(), content_type="application/json")


async def get_job(request: web.Request) -> web.Response:
    svc = request.app[SERVICE_KEY]
    project = _project(request)
    job_id, verb = _job_and_verb(request)
    if verb == "getIamPolicy":
        svc.stored(project, job_id)
        return _json(_POLICY)
    if verb == "metrics":  # our extension: per-replica CPU and memory (metrics.py)
        since = request.query.get("since")
        return _json(await asyncio.to_thread(svc.metrics.read, project, job_id, since))
    if verb == "environment":  # our extension: the job's runtime environment (runtime_envs.py)
        return _json(svc.environment(project, job_id))
    if verb == "stacks":  # our extension: the replicas' Python stacks (job_stacks.py)
        q = request.query
        if q.get("at") == "stall":
            return _json(svc.stall_stacks(project, job_id))
        if q.get("at"):
            raise invalid_field("at", "must be stall (the stacks kept when the job stalled)")
        with_locals = _flag(q.get("locals"), "locals")
        got = await svc.stacks(project, job_id, q.get("replica"), q.get("trialId"), with_locals)
        return _json(got)
    if verb == "queue":  # our extension: why a QUEUED job waits (scheduler.py)
        return _json(svc.queue(project, job_id))
    if verb == "wait":  # our extension: a long poll until the job changes
        timeout = _wait_timeout(request.query.get("timeoutSeconds"))
        return _json(await svc.wait(project, job_id, request.query.get("etag"), timeout))
    if verb is not None:
        raise ApiError("NOT_FOUND", f"Unknown method :{verb[:40]} for GET.")
    return _json(svc.get(project, job_id))


def _flag(text: str | None, name: str) -> bool:
    if text is None or text.lower() in ("", "false", "0"):
        return False
    if text.lower() in ("true", "1"):
        return True
    raise invalid_field(name, "must be true or false")


WAIT_DEFAULT_SECONDS = 25.0
WAIT_MAX_SECONDS = 55.0
"""``:wait``'s default and longest wait: under a minute, which proxies and HTTP clients commonly
allow an idle request, so a waiter's request ends with an answer rather than a dropped line."""


def _wait_timeout(text: str | None) -> float:
    """``timeoutSeconds`` of ``:wait``: decimal seconds >= 0, more than the most taken as it."""
    if text is None:
        return WAIT_DEFAULT_SECONDS
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds >= 0):  # NaN, "1e400" (inf), "-1", "abc"
        raise invalid_field(
            "timeoutSeconds",
            f"timeoutSeconds must be a number of seconds from 0 to {WAIT_MAX_SECONDS:g} "
            f"(got {text[:40]!r}).",
        )
    return min(seconds, WAIT_MAX_SECONDS)


async def post_job(request: web.Request) -> web.Response:
    svc = request.app[SERVICE_KEY]
    project = _project(request)
    job_id, verb = _job_and_verb(request)
    body = await _body(request, required=False)
    if body is not None and not isinstance(body, dict):
        raise invalid_field("body", "The request body must be a JSON object.")
    if verb == "cancel":
        return _json(svc.cancel(project, job_id))
    if verb == "setIamPolicy":
        svc.stored(project, job_id)
        policy = (body or {}).get("policy") or {}
        if not isinstance(policy, dict):
            raise invalid_field("policy", "policy must be a Policy object.")
        bindings = policy.get("bindings") or []
        if not isinstance(bindings, list) or not all(isinstance(b, dict) for b in bindings):
            raise invalid_field("policy.bindings", "bindings must be a list of Binding objects.")
        return _json({**_POLICY, "bindings": bindings})
    if verb == "testIamPermissions":
        svc.stored(project, job_id)
        perms = (body or {}).get("permissions") or []
        if not isinstance(perms, list) or not all(isinstance(p, str) for p in perms):
            raise invalid_field("permissions", "permissions must be a list of strings.")
        return _json({"permissions": perms} if perms else {})
    raise ApiError("NOT_FOUND", f"Unknown method {('.' + verb) if verb else ''} for POST.")


async def patch_job(request: web.Request) -> web.Response:
    svc = request.app[SERVICE_KEY]
    project = _project(request)
    job_id, verb = _job_and_verb(request)
    if verb is not None:
        raise ApiError("NOT_FOUND", f"Unknown method :{verb[:40]} for PATCH.")
    body = await _body(request)
    return _json(svc.patch(project, job_id, body, request.query.get("updateMask")))


async def entries_list(request: web.Request) -> web.Response:
    svc = request.app[SERVICE_KEY]
    body = await _body(request)
    return _json(await asyncio.to_thread(list_entries, svc.logs, body, svc.log_scan_seconds))


FOLLOW_MAX_WAIT_SECONDS = 5.0
FOLLOW_RECHECK_SECONDS = 0.02


async def entries_follow(request: web.Request) -> web.Response:
    """The log pane's fast path (``follow_entries``), with an optional long poll.

    ``waitSeconds`` (at most ``FOLLOW_MAX_WAIT_SECONDS``): when nothing matches yet, answer as
    soon as the log writer commits something that does, or empty after that long. The wait is
    on this loop, not in a thread: the executor's few threads must not sit in idle panes' polls.
    """
    svc = request.app[SERVICE_KEY]
    body = await _body(request)
    wait = body.pop("waitSeconds", 0) if isinstance(body, dict) else 0
    if isinstance(wait, bool) or not isinstance(wait, (int, float)) or not wait >= 0:
        raise invalid_field("waitSeconds", "waitSeconds must be a number of seconds >= 0.")
    # Compared before float(): an int past float's range (10**400) must not raise there.
    deadline = time.monotonic() + (
        FOLLOW_MAX_WAIT_SECONDS if wait > FOLLOW_MAX_WAIT_SECONDS else float(wait)
    )
    while True:
        seen = svc.writer.commits
        data, count = await asyncio.to_thread(follow_entries, svc.logs, body)
        if count or time.monotonic() >= deadline:
            return web.Response(body=data, content_type="application/json")
        while svc.writer.commits == seen and time.monotonic() < deadline:
            await asyncio.sleep(FOLLOW_RECHECK_SECONDS)


async def healthz(request: web.Request) -> web.Response:
    svc = request.app[SERVICE_KEY]
    return _json(
        {
            "status": "ok" if svc.writer.error is None else "degraded",
            "version": __version__,
            "logWriterError": svc.writer.error,
            "auth": request.app[TOKEN_KEY] is not None,
            # What jobs are scheduled on: the demo sizes its jobs to it, `service status` says it.
            "capacity": {
                "slots": svc.scheduler.capacity.slots,
                "gpus": len(svc.scheduler.capacity.gpu_ids),
            },
            # Where replicas run: "local" (capacity above is this machine's) or "ray" (the
            # cluster decides what fits; the scheduler above only keeps the order).
            "executor": {"name": svc.executor.name, "summary": svc.executor.describe()},
            # What custom-container jobs run on here, or why they cannot (with the fix).
            "containerEngine": svc.engine_status.as_json(),
            # How far the full-text index of the logs is (a store from before it is indexed in
            # the background; searches meanwhile read the rest by scan).
            "logIndex": svc.log_index_status(),
        }
    )


async def _end_waits(app: web.Application) -> None:
    """Answer every open ``:wait`` now: the server waits for open requests before it stops,
    and the service is closed only after that (``service_cli``)."""
    app[SERVICE_KEY].changes.close()


def make_app(
    service: JobService, token: str | None, guard: BrowserGuard | None = None
) -> web.Application:
    """The aiohttp application; the caller starts and closes ``service``.

    ``guard`` says where the service listens (the caller sets its port once bound); without
    one, requests must be addressed to a loopback name, on any port.
    """
    app = web.Application(
        middlewares=[_errors, _browser_guard, _auth], client_max_size=MAX_BODY_BYTES
    )
    app[SERVICE_KEY] = service
    app[TOKEN_KEY] = token
    app[GUARD_KEY] = guard or BrowserGuard("127.0.0.1")
    app.on_shutdown.append(_end_waits)
    r = app.router
    r.add_get("/healthz", healthz)
    r.add_post("/v1/projects/{project}/jobs", create_job)
    r.add_get("/v1/projects/{project}/jobs", list_jobs)
    r.add_get("/v1/projects/{project}/jobs/{name}", get_job)
    r.add_post("/v1/projects/{project}/jobs/{name}", post_job)
    r.add_patch("/v1/projects/{project}/jobs/{name}", patch_job)
    r.add_post("/v2/entries:list", entries_list)
    r.add_post("/v2/entries:follow", entries_follow)
    add_metadata_routes(app)  # first: storage ends with a catch-all under /_replica/
    add_output_routes(app, service.state)
    add_storage_routes(
        app,
        service.state,
        service.object_written,
        on_scope=service.replica_scope,
        is_package=service.is_staged_package,
    )
    return app
