"""The slice of the Cloud Storage JSON API that gcloud needs to stage local packages.

``gcloud ai-platform jobs submit training --package-path ... --staging-bucket gs://B`` builds an
sdist, uploads it through the storage JSON API (``api_endpoint_overrides/storage``) and only then
creates the job (api-notes §7.4). Observed with gcloud 528 (apitools):

- up to 5 MiB: ``POST /upload/storage/v1/b/B/o?uploadType=multipart&name=N``, a
  ``multipart/related`` body with a single-quoted boundary and ``\\n`` line ends: a JSON part
  (``{"size": "N"}``), then the bytes;
- above: ``POST /resumable/upload/storage/v1/b/B/o?uploadType=resumable&name=N`` (JSON metadata,
  ``X-Upload-Content-Length``), answered with an absolute ``Location``; then ``PUT``s to it with
  ``Content-Range: bytes a-b/N`` (one PUT, or chunks of ``storage/upload_chunk_size``), each
  answered 308 with ``Range`` until the last, which gets 200 and the object.

gcloud checks only the ``size`` it gets back (a mismatch is "Uploaded file does not match local
file"). Where objects live and why an upload is never half-stored: ``object_store``. How bodies
are streamed to disk: ``upload_bodies``. Routes share the service's auth and error middleware.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from aiohttp import web

from tui_app.local.browser_guard import json_content_type_problem
from tui_app.local.errors import ApiError, invalid_field
from tui_app.local.object_store import ObjectStore, UploadSession, bucket_error, no_session
from tui_app.local.paths import StateDir
from tui_app.local.upload_bodies import (
    ContentRange,
    MultipartReader,
    copy_body,
    multipart_boundary,
    parse_content_range,
    parse_metadata,
    read_small,
    size_field,
    write_chunk,
)

__all__ = ["STORE_KEY", "add_routes"]

MAX_METADATA_BYTES = 1024 * 1024
"""The JSON part of an upload: object metadata, never large."""
STORE_KEY: web.AppKey[ObjectStore] = web.AppKey("object_store", ObjectStore)


def _json(data: Any) -> web.Response:
    return web.Response(
        body=json.dumps(data, separators=(",", ":")).encode(), content_type="application/json"
    )


def _check_size(declared: int | None, got: int) -> None:
    if declared is not None and declared != got:
        raise invalid_field("size", f"The metadata says {declared} bytes, the upload has {got}.")


def _object_name(request: web.Request, meta: dict[str, Any]) -> str:
    """The object name: the ``name`` query parameter, else the metadata's (a string, or 400)."""
    name = request.query.get("name") or meta.get("name") or ""
    if not isinstance(name, str):
        raise invalid_field("name", "The object name must be a string.")
    return name


def _bucket(request: web.Request) -> str:
    bucket = request.match_info["bucket"]
    why = bucket_error(bucket)
    if why:
        raise invalid_field("bucket", why)
    return bucket


async def _stored(
    request: web.Request, store: ObjectStore, temp: Path, bucket: str, name: str
) -> web.Response:
    """Commit ``temp`` as the object and answer with its resource."""
    await asyncio.to_thread(store.commit, temp, bucket, name)
    origin = str(request.url.origin())
    return _json(await asyncio.to_thread(store.describe, bucket, name, origin))


async def _one_shot(
    request: web.Request,
    bucket: str,
    name_from: Callable[[Path], Awaitable[str]],
) -> web.Response:
    """Write a one-shot upload to a temp file with ``name_from`` (which returns the name)."""
    store = request.app[STORE_KEY]
    temp = store.new_temp()
    try:
        name = await name_from(temp)
        return await _stored(request, store, temp, bucket, name)
    finally:
        temp.unlink(missing_ok=True)


async def _multipart(request: web.Request, bucket: str) -> web.Response:
    """``uploadType=multipart``: JSON metadata, then the media, in one body."""
    store = request.app[STORE_KEY]
    boundary = multipart_boundary(request.headers.get("Content-Type", ""))
    reader = MultipartReader(request.content, boundary)

    async def receive(temp: Path) -> str:
        await reader.start()
        await reader.headers()
        meta = parse_metadata(await reader.small_part(MAX_METADATA_BYTES, "metadata part"))
        name = _object_name(request, meta)
        store.check_storable(bucket, name)
        if await reader.at_close():
            raise invalid_field("body", "The multipart body has metadata but no media part.")
        await reader.headers()
        with temp.open("wb") as out:
            await reader.stream_part(lambda data: write_chunk(out, data))
            size = out.tell()
        if not await reader.at_close():
            raise invalid_field("body", "A multipart upload has exactly two parts.")
        _check_size(size_field(meta.get("size"), "size"), size)
        return name

    return await _one_shot(request, bucket, receive)


async def _media(request: web.Request, bucket: str) -> web.Response:
    """``uploadType=media``: the body is the object, the name is in the query."""
    store = request.app[STORE_KEY]

    async def receive(temp: Path) -> str:
        name = request.query.get("name", "")
        store.check_storable(bucket, name)
        with temp.open("wb") as out:
            await copy_body(request.content, out)
        return name

    return await _one_shot(request, bucket, receive)


async def _start_resumable(request: web.Request, bucket: str) -> web.Response:
    """``uploadType=resumable``: open a session and answer with its absolute URI."""
    store = request.app[STORE_KEY]
    why = json_content_type_problem(request.headers.get("Content-Type"), request.body_exists)
    if why:
        raise invalid_field("Content-Type", why)
    meta = parse_metadata(await read_small(request.content, MAX_METADATA_BYTES))
    name = _object_name(request, meta)
    store.check_storable(bucket, name)
    total = size_field(request.headers.get("X-Upload-Content-Length"), "X-Upload-Content-Length")
    declared = size_field(meta.get("size"), "size")
    if total is not None and declared is not None and total != declared:
        raise invalid_field("size", f"X-Upload-Content-Length is {total}, the metadata {declared}.")
    session = store.create_session(bucket, name, total if total is not None else declared)
    location = (
        f"{request.url.origin()}/upload/storage/v1/b/{quote(bucket)}/o"
        f"?uploadType=resumable&upload_id={session.upload_id}"
    )
    return web.Response(
        status=200, headers={"Location": location, "X-GUploader-UploadID": session.upload_id}
    )


async def insert_object(request: web.Request) -> web.Response:
    """objects.insert on the upload paths, by ``uploadType``."""
    bucket = _bucket(request)
    upload_type = request.query.get("uploadType", "")
    if upload_type == "multipart":
        return await _multipart(request, bucket)
    if upload_type == "media":
        return await _media(request, bucket)
    if upload_type == "resumable":
        return await _start_resumable(request, bucket)
    raise invalid_field("uploadType", "uploadType must be media, multipart or resumable.")


def _incomplete(received: int) -> web.Response:
    """308 "Resume Incomplete": ``Range`` says what is stored (absent when nothing is)."""
    headers = {"Range": f"bytes=0-{received - 1}"} if received else {}
    return web.Response(status=308, reason="Resume Incomplete", headers=headers)


async def _append(request: web.Request, part: Path, received: int, rng: ContentRange | None) -> int:
    """Append this PUT's bytes after ``received``; on any failure the part is cut back.

    Bytes the session already has (a client resending after a lost reply) are skipped.
    """
    first = 0 if rng is None else rng.first or 0
    try:
        out = part.open("r+b")
    except FileNotFoundError:
        raise no_session(part.stem) from None
    with out:
        out.seek(received)
        try:
            seen = await copy_body(request.content, out, skip=received - first)
            if rng is not None and seen != rng.length:
                raise invalid_field(
                    "Content-Range", f"The range has {rng.length} bytes, the body {seen}."
                )
            return out.tell()
        except BaseException:
            out.truncate(received)
            raise


async def _finish(request: web.Request, session: UploadSession) -> web.Response:
    store = request.app[STORE_KEY]
    response = await _stored(request, store, store.part_file(session), session.bucket, session.name)
    session.done = True
    store.save_session(session)
    store.forget_lock(session.upload_id)
    return response


async def put_upload(request: web.Request) -> web.Response:
    """A resumable session's PUT: a chunk, a status query (``bytes */*``) or a finalize."""
    store = request.app[STORE_KEY]
    bucket = _bucket(request)
    upload_id = request.query.get("upload_id", "")
    async with store.lock(upload_id):
        session = store.session(upload_id)
        if session.bucket != bucket:
            raise no_session(upload_id)
        header = request.headers.get("Content-Range")
        rng = parse_content_range(header) if header is not None else _whole(session)
        if session.done:
            origin = str(request.url.origin())
            return _json(await asyncio.to_thread(store.describe, bucket, session.name, origin))
        return await _put(request, session, rng)


def _whole(session: UploadSession) -> ContentRange | None:
    """A PUT without Content-Range carries the whole object: its range, when the size is known."""
    if session.total is None:
        return None
    if session.total == 0:
        return ContentRange(None, None, 0)
    return ContentRange(0, session.total - 1, session.total)


async def _put(
    request: web.Request, session: UploadSession, rng: ContentRange | None
) -> web.Response:
    """Apply one PUT to an open session: 200 with the object once complete, else 308.

    ``rng`` is None only for a whole-object PUT of unknown size: whatever arrives is the object.
    """
    store = request.app[STORE_KEY]
    part = store.part_file(session)
    received = store.received(session)
    if rng is None:
        if received:
            raise invalid_field("Content-Range", "Only the first PUT may omit Content-Range.")
        await _append(request, part, 0, None)
        return await _finish(request, session)
    _check_range(request, session, rng)
    if rng.first is not None:
        if rng.first > received:
            raise invalid_field(
                "Content-Range",
                f"bytes {rng.first}- would leave a gap: the session has {received} bytes "
                "(ask with 'Content-Range: bytes */*').",
            )
        received = await _append(request, part, received, rng)
    total = session.total if rng.total is None else rng.total
    if total is not None and received > total:
        raise invalid_field("Content-Range", f"The session already has {received} bytes.")
    if total is not None and received == total:
        return await _finish(request, session)
    return _incomplete(received)


def _check_range(request: web.Request, session: UploadSession, rng: ContentRange) -> None:
    """400 for a range that contradicts the session's size or the request's Content-Length."""
    if rng.total is not None and session.total not in (None, rng.total):
        raise invalid_field("Content-Range", f"The upload was started for {session.total} bytes.")
    if rng.length and request.content_length not in (None, rng.length):
        raise invalid_field(
            "Content-Range",
            f"The range has {rng.length} bytes, Content-Length {request.content_length}.",
        )


async def get_object(request: web.Request) -> web.StreamResponse:
    """objects.get: the resource, or the bytes with ``alt=media``."""
    store = request.app[STORE_KEY]
    bucket = _bucket(request)
    name = request.match_info["object"]
    if request.query.get("alt") == "media":
        path = store.object_path(bucket, name)
        if not path.is_file():
            raise ApiError("NOT_FOUND", f"No such object: {bucket}/{name}")
        return web.FileResponse(path, headers={"Content-Type": "application/octet-stream"})
    origin = str(request.url.origin())
    return _json(await asyncio.to_thread(store.describe, bucket, name, origin))


async def get_bucket(request: web.Request) -> web.Response:
    """buckets.get: every valid bucket exists here (its folder appears with its first object)."""
    bucket = _bucket(request)
    return _json(
        {
            "kind": "storage#bucket",
            "id": bucket,
            "name": bucket,
            "selfLink": f"{request.url.origin()}/storage/v1/b/{quote(bucket)}",
            "location": "US",
            "storageClass": "STANDARD",
            "metageneration": "1",
            "etag": "CAE=",
        }
    )


def add_routes(app: web.Application, state: StateDir) -> None:
    """Register the storage routes on the service's app (same auth and error middleware)."""
    store = ObjectStore(state)
    app[STORE_KEY] = store

    async def sweep(_: web.Application) -> None:
        store.sweep()

    app.on_startup.append(sweep)
    r = app.router
    # `[^/]*` so that a missing bucket name is a 400 that says so, not a bare 404.
    for prefix in ("/upload", "/resumable/upload"):
        r.add_post(prefix + "/storage/v1/b/{bucket:[^/]*}/o", insert_object)
        r.add_put(prefix + "/storage/v1/b/{bucket:[^/]*}/o", put_upload)
    r.add_get("/storage/v1/b/{bucket:[^/]*}", get_bucket)
    r.add_get("/storage/v1/b/{bucket:[^/]*}/o/{object:.+}", get_object)
