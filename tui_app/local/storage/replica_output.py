"""Replica output shipped over the network: the route a remote node's replica appends through.

A replica the local executor runs writes its stdout, stderr, hypertune reports and end status
straight into its work dir under the service's state dir. A replica on another machine (the Ray
executor) cannot, so its actor sends each file's bytes here, and they land in the very same files:
the log tailers, the trials runner and the exit reports read them as they read a local replica's,
and nothing downstream knows the difference.

::

    GET  /_replica/{credential}/output/{stream}            -> {"size": N}
    POST /_replica/{credential}/output/{stream}?offset=K   body: bytes -> {"size": N}

``stream`` is one of ``stdout``, ``stderr``, ``hypertune``, ``status``; the credential is the
replica's own (the auth middleware resolves it to the replica and refuses one that expired with
its job: 401). Only a credential the Ray executor issued may use this route (``ships_output``);
a process or container replica's files are written by its supervisor on this machine, and its
credential gets a 403 here. A POST carries the file's bytes from ``offset`` on: bytes the service
already has are skipped, so a resend after a lost answer or a restart never doubles a line; an
offset past what the service has is a gap (409 with the size it has, for the sender to resend
from). At most 4 MiB per request, and at most ``REPLICA_OUTPUT_CAPS`` in all (413 beyond).

The files live in a folder a container replica may also write (its hypertune folder is mounted
into it): every open goes through ``untrusted_files``, so a link or a FIFO planted there is
refused (403) instead of followed.
"""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

from tui_app.local.errors import ApiError, invalid_field
from tui_app.local.paths import StateDir
from tui_app.local.storage.storage_api import WRITER_KEY
from tui_app.local.storage.storage_env import (
    REPLICA_OUTPUT_CAPS,
    REPLICA_OUTPUT_FILES,
    REPLICA_PREFIX,
    ReplicaWriter,
)
from tui_app.local.untrusted_files import (
    FileTooLargeError,
    UntrustedFileError,
    append_beneath,
    size_beneath,
)

MAX_CHUNK_BYTES = 4 << 20

STATE_KEY: web.AppKey[StateDir] = web.AppKey("replica_output_state", StateDir)


def _target(request: web.Request) -> tuple[Path, str, str]:
    """The replica's folder, the file's name in it, and the stream."""
    writer = request.get(WRITER_KEY)
    if not isinstance(writer, ReplicaWriter):
        raise ApiError("UNAUTHENTICATED", "A replica credential is required.")
    if not writer.ships_output:
        raise ApiError(
            "PERMISSION_DENIED",
            "Only a replica on a Ray node sends its output files here; this replica's output "
            "is written on this machine by its supervisor.",
        )
    stream = request.match_info["stream"]
    name = REPLICA_OUTPUT_FILES.get(stream)
    if name is None:
        known = ", ".join(REPLICA_OUTPUT_FILES)
        raise invalid_field("stream", f"{stream[:40]!r} is not one of {known}.")
    state = request.app[STATE_KEY]
    folder = state.replica_dir(writer.project, writer.job_id, writer.trial, writer.task_name)
    return folder, name, stream


def _refused(stream: str, exc: UntrustedFileError) -> ApiError:
    return ApiError(
        "PERMISSION_DENIED",
        f"The replica's {stream} file cannot be used: it is not a regular file in the "
        f"replica's folder ({exc.strerror}).",
    )


def _size(folder: Path, name: str, stream: str) -> int:
    try:
        return size_beneath(folder, name)
    except FileNotFoundError:
        return 0
    except UntrustedFileError as exc:
        raise _refused(stream, exc) from None


async def output_size(request: web.Request) -> web.Response:
    folder, name, stream = _target(request)
    return web.json_response({"size": _size(folder, name, stream)})


async def append_output(request: web.Request) -> web.Response:
    folder, name, stream = _target(request)
    raw = request.query.get("offset", "")
    if not raw.isdigit() or len(raw) > 15:
        raise invalid_field("offset", f"{raw[:20]!r} is not a byte offset (0 or more).")
    offset = int(raw)
    if request.content_length is not None and request.content_length > MAX_CHUNK_BYTES:
        raise invalid_field("body", f"At most {MAX_CHUNK_BYTES} bytes per request.")
    # The whole body: one read() answers with what has arrived so far, which for a large
    # POST was a small part of it (the rest then dropped, and sent again by the shipper).
    parts: list[bytes] = []
    got = 0
    async for piece in request.content.iter_chunked(1 << 16):
        got += len(piece)
        if got > MAX_CHUNK_BYTES:
            raise invalid_field("body", f"At most {MAX_CHUNK_BYTES} bytes per request.")
        parts.append(piece)
    data = b"".join(parts)
    size = _size(folder, name, stream)
    if offset > size:
        return web.json_response({"size": size}, status=409)
    fresh = data[size - offset :]
    if fresh:
        # One writer per file (the event loop), appended in one write: a tailer reading the
        # file meanwhile sees whole chunks.
        cap = REPLICA_OUTPUT_CAPS.get(stream)
        try:
            size = append_beneath(folder, name, fresh, cap)
        except FileTooLargeError:
            raise ApiError(
                "RESOURCE_EXHAUSTED",
                f"The replica's {stream} file may hold at most {cap} bytes; the service takes "
                "no more of it.",
                http_status=413,
            ) from None
        except UntrustedFileError as exc:
            raise _refused(stream, exc) from None
        return web.json_response({"size": size})
    return web.json_response({"size": size})


def add_routes(app: web.Application, state: StateDir) -> None:
    """Register before the storage routes: their catch-all under ``/_replica/`` answers 403."""
    app[STATE_KEY] = state
    base = REPLICA_PREFIX + "{replica:[^/]+}/output/{stream}"
    app.router.add_get(base, output_size)
    app.router.add_post(base, append_output)
