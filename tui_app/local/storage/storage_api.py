"""The Cloud Storage JSON API, enough of it for real clients: gcloud storage, gsutil,
google-cloud-storage, gcsfs and the sample trainer (docs/local-storage.md says what each uses).

Objects: insert (media, multipart, resumable), get (metadata or ``alt=media``, also under
``/download``, with Range), list (prefix, delimiter, pages), delete, copyTo, rewriteTo, compose.
Buckets: get, insert, list, delete. Preconditions (``ifGenerationMatch`` and friends) answer 412,
a missing object or bucket 404, an existing bucket 409, all in GCS's error shape.

Every route also answers under ``/_replica/<secret>``: a replica's own credential
(``storage_env``), which the auth middleware accepts there and on no other route. Writes made
with it are reported to ``on_write`` with the replica that made them.

A replica's credential reaches only its own job's paths (``model/running/storage_scope.py`` says
which and why; ``on_scope`` gives a request's scope): anything else is a 403 that names what was
asked and what the replica may reach, checked before the store is touched, so a refusal says nothing
about whether the object exists. Listings of a folder on the way to its paths show only what is in
scope or leads to it; staged packages (``is_package``) are read-only to every replica, even inside
its own jobDir. Requests with the service's own token are never scoped.

How gcloud uploads its packages

``gcloud ai-platform jobs submit training --package-path ... --staging-bucket gs://B`` builds an
sdist, uploads it through the storage JSON API (``api_endpoint_overrides/storage``) and only then
creates the job. Observed with gcloud 528 (apitools):

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
import base64
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from aiohttp import web

from tui_app.local.browser_guard import json_content_type_problem
from tui_app.local.errors import ApiError, checked, invalid_field
from tui_app.local.paths import StateDir
from tui_app.local.storage.object_store import (
    GcsError,
    ObjectStore,
    Preconditions,
    UploadSession,
    bucket_error,
    no_object,
    no_session,
    object_name_error,
)
from tui_app.local.storage.storage_env import (
    PROXY_ORIGIN_HEADER,
    PROXY_ORIGINS,
    REPLICA_PREFIX,
    ReplicaWriter,
)
from tui_app.local.storage.upload_bodies import (
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
from tui_app.model.running.storage_scope import StorageScope

__all__ = [
    "STORE_KEY",
    "WRITER_KEY",
    "PackageCheck",
    "ScopeLookup",
    "WriteHook",
    "add_routes",
    "is_storage_path",
]

MAX_METADATA_BYTES = 1024 * 1024
"""The JSON part of an upload: object metadata, never large."""
STORE_KEY: web.AppKey[ObjectStore] = web.AppKey("object_store", ObjectStore)
WriteHook = Callable[[ReplicaWriter, str, str], None]
"""Called with (writer, bucket, name) after each object a replica's credential committed."""
HOOK_KEY: web.AppKey[WriteHook | None] = web.AppKey("object_write_hook")
WRITER_KEY = "replica_writer"
"""The request key where the auth middleware leaves the ReplicaWriter of a replica's request."""
ScopeLookup = Callable[[ReplicaWriter], Awaitable[StorageScope]]
"""The scope of a replica's credential (its job's paths): called once per replica request on
the event loop, so it must answer from memory or await, never block."""
PackageCheck = Callable[[str, str], bool]
"""Whether (bucket, name) is a staged package of any job: no replica may write or delete it."""
SCOPE_KEY: web.AppKey[ScopeLookup | None] = web.AppKey("replica_scope")
PACKAGE_KEY: web.AppKey[PackageCheck | None] = web.AppKey("staged_package_check")
SCOPE_REQUEST_KEY = "replica_scope"
"""Where a request keeps its replica's scope once looked up."""
MAX_PAGE = 1000
STORAGE_PREFIXES = (
    "/storage/v1/",
    "/upload/storage/v1/",
    "/resumable/upload/storage/v1/",
    "/download/storage/v1/",
)


def is_storage_path(path: str) -> bool:
    """Whether ``path`` (without a replica prefix) is one of the storage routes'."""
    return path.startswith(STORAGE_PREFIXES) or path == "/storage/v1/b"


def _origin(request: web.Request) -> str:
    """Where links in answers point: the service, plus the replica prefix the request came by
    (a replica's client follows ``Location`` and ``mediaLink`` with the same credential).

    A request the storage proxy forwarded names the Google origin its client dialled: links go
    back there, so TensorFlow's upload ``PUT`` also passes the proxy, which makes its headers
    acceptable to this server (``gcs_proxy``). Only the two Google origins are taken.
    """
    origin = str(request.url.origin())
    forwarded = request.headers.get(PROXY_ORIGIN_HEADER)
    if forwarded in PROXY_ORIGINS:
        origin = forwarded
    secret = request.match_info.get("replica")
    if secret is not None:
        origin += REPLICA_PREFIX + quote(secret, safe="")
    return origin


def _writer(request: web.Request) -> ReplicaWriter | None:
    writer = request.get(WRITER_KEY)
    return writer if isinstance(writer, ReplicaWriter) else None


def _report(request: web.Request, writer: ReplicaWriter | None, bucket: str, name: str) -> None:
    hook = request.app[HOOK_KEY]
    if hook is not None and writer is not None:
        hook(writer, bucket, name)


# -- a replica's scope (model/running/storage_scope.py) ---------------------------------------


async def _scope(request: web.Request) -> StorageScope | None:
    """The scope of the replica behind the request; None for the service's own token, which is
    never scoped. Without a lookup (``add_routes`` given none) a replica may reach nothing:
    a credential is confined unless the service says where to."""
    writer = _writer(request)
    if writer is None:
        return None
    cached = request.get(SCOPE_REQUEST_KEY)
    if isinstance(cached, StorageScope):
        return cached
    lookup = request.app[SCOPE_KEY]
    scope = await lookup(writer) if lookup is not None else StorageScope(writer.job_id)
    request[SCOPE_REQUEST_KEY] = scope
    return scope


def _forbidden(message: str) -> GcsError:
    """403 in GCS's shape: clients map ``forbidden`` to their permission errors
    (google-cloud-storage's ``Forbidden``, gcsfs's ``PermissionError``)."""
    return GcsError(403, "forbidden", message)


def _outside(scope: StorageScope, asked: str) -> GcsError:
    return _forbidden(f"{asked} is outside this replica's scope: {scope.describe()}.")


async def _may_read(request: web.Request, bucket: str, name: str, metadata: bool = False) -> None:
    """403 unless the request may read the object (``metadata``: only its resource, which a
    replica may also have of a folder on the way to its paths)."""
    scope = await _scope(request)
    if scope is None:
        return
    allowed = scope.can_stat(bucket, name) if metadata else scope.can_read(bucket, name)
    if not allowed:
        raise _outside(scope, f"Reading gs://{bucket}/{name}")


async def _may_write(request: web.Request, bucket: str, name: str, create: bool = True) -> None:
    """403 unless the request may store (``create``) or delete the object, and it is no job's
    staged package."""
    scope = await _scope(request)
    if scope is None:
        return
    if create and not scope.can_create(bucket, name):
        raise _outside(scope, f"Writing gs://{bucket}/{name}")
    if not create and not scope.can_write(bucket, name):
        raise _outside(scope, f"Deleting gs://{bucket}/{name}")
    _check_package(request, bucket, name, _writer(request))


def _check_package(
    request: web.Request, bucket: str, name: str, writer: ReplicaWriter | None
) -> None:
    """403 when a replica would replace or delete a job's staged package.

    gcloud stages packages under ``<jobDir>/packages/`` and many users reuse one jobDir, and a
    resubmit reuses ``packageUris`` without uploading again: a replica that replaced a package,
    even its own job's, would have its code installed by the next job that names it.
    """
    check = request.app[PACKAGE_KEY]
    if writer is not None and check is not None and check(bucket, name):
        raise _forbidden(
            f"gs://{bucket}/{name} is a staged package of a job on this service: staged "
            "packages are read-only to replicas (a replica that replaced one would have its "
            "code installed by the next job that uses it)."
        )


async def _may_see_bucket(request: web.Request, bucket: str) -> None:
    """403 unless the request may see the bucket: one a path of its scope lies in."""
    scope = await _scope(request)
    if scope is not None and bucket not in scope.buckets:
        raise _outside(scope, f"The bucket gs://{bucket}")


async def _no_replica(request: web.Request, asked: str) -> None:
    """403 for a replica: buckets are the user's to create and delete."""
    scope = await _scope(request)
    if scope is not None:
        raise _forbidden(
            f"{asked} is refused: a replica's credential may not create or delete buckets "
            f"({scope.describe()})."
        )


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
    return checked("bucket", request.match_info["bucket"], bucket_error)


async def _stored(
    request: web.Request,
    store: ObjectStore,
    temp: Path,
    bucket: str,
    name: str,
    conditions: Preconditions | None = None,
    writer: ReplicaWriter | None = None,
) -> web.Response:
    """Commit ``temp`` as the object, report a replica's write, answer with the resource."""
    if conditions is None:
        conditions = Preconditions.parse(request.query)
    writer = writer or _writer(request)
    _check_package(request, bucket, name, writer)  # again: a job may have named it meanwhile
    await asyncio.to_thread(store.commit, temp, bucket, name, conditions)
    _report(request, writer, bucket, name)
    return _json(await asyncio.to_thread(store.describe, bucket, name, _origin(request)))


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
        await _may_write(request, bucket, name)
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
        await _may_write(request, bucket, name)
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
    await _may_write(request, bucket, name)
    store.check_storable(bucket, name)
    total = size_field(request.headers.get("X-Upload-Content-Length"), "X-Upload-Content-Length")
    declared = size_field(meta.get("size"), "size")
    if total is not None and declared is not None and total != declared:
        raise invalid_field("size", f"X-Upload-Content-Length is {total}, the metadata {declared}.")
    if name.endswith("/") and (total or declared):
        raise invalid_field("name", "An object whose name ends with '/' is an empty folder here.")
    conditions = Preconditions.parse(request.query)
    conditions.check(bucket, name, await asyncio.to_thread(store.generation, bucket, name))
    writer = _writer(request)
    session = store.create_session(
        bucket,
        name,
        total if total is not None else declared,
        conditions,
        writer.as_dict() if writer else None,
    )
    location = (
        f"{_origin(request)}/upload/storage/v1/b/{quote(bucket)}/o"
        f"?uploadType=resumable&upload_id={session.upload_id}"
    )
    return web.Response(
        status=200, headers={"Location": location, "X-GUploader-UploadID": session.upload_id}
    )


async def insert_object(request: web.Request) -> web.Response:
    """objects.insert on the upload paths, by ``uploadType``."""
    bucket = _bucket(request)
    upload_type = request.query.get("uploadType", "")
    if upload_type == "resumable" and "upload_id" in request.query:
        return await put_upload(request)  # gcsfs POSTs its chunks to the session URI
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
    conditions = Preconditions(**session.conditions) if session.conditions else Preconditions()
    writer = ReplicaWriter.from_dict(session.writer)
    response = await _stored(
        request,
        store,
        store.part_file(session),
        session.bucket,
        session.name,
        conditions,
        writer,
    )
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
        writer = _writer(request)
        if writer is not None and ReplicaWriter.from_dict(session.writer) != writer:
            # The session was checked against its starter's scope: another replica (or
            # another job's) must not pour its bytes into it.
            raise _forbidden(
                f"Upload session {upload_id[:40]!r} (gs://{bucket}/{session.name}) was started "
                "with another credential: only the replica that started an upload may "
                "continue it."
            )
        header = request.headers.get("Content-Range")
        rng = parse_content_range(header) if header is not None else _whole(session)
        if session.done:
            return _json(
                await asyncio.to_thread(store.describe, bucket, session.name, _origin(request))
            )
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


def _name(request: web.Request, key: str = "object") -> str:
    """An object name from the path (aiohttp has decoded ``%2F``), checked like an upload's."""
    return checked("object", request.match_info[key], object_name_error)


def _check_generation(request: web.Request, store: ObjectStore, bucket: str, name: str) -> None:
    """``generation=N`` asks for one generation: only the live one is kept, so any other is a
    404, as GCS answers for a generation that no longer exists."""
    wanted = request.query.get("generation")
    if wanted:
        live = store.generation(bucket, name)
        if live is None or str(live) != wanted:
            raise GcsError(404, "notFound", f"No such object: {bucket}/{name}#{wanted[:20]}")


async def get_object(request: web.Request) -> web.StreamResponse:
    """objects.get: the resource, or the bytes with ``alt=media`` (Range honoured)."""
    return await _get(request, media=False)


async def download_object(request: web.Request) -> web.StreamResponse:
    """The ``/download/storage/v1/...`` twin of objects.get: always the bytes."""
    return await _get(request, media=True)


async def _get(request: web.Request, media: bool) -> web.StreamResponse:
    store = request.app[STORE_KEY]
    bucket = _bucket(request)
    name = _name(request)
    alt = request.query.get("alt", "json")
    await _may_read(request, bucket, name, metadata=not media and alt != "media")
    await asyncio.to_thread(store.existing_bucket, bucket)
    if alt not in ("json", "media"):
        raise invalid_field("alt", "alt must be json or media.")
    generation = await asyncio.to_thread(store.generation, bucket, name)
    if generation is None:
        raise no_object(bucket, name)
    _check_generation(request, store, bucket, name)
    Preconditions.parse(request.query).check(bucket, name, generation)
    if media or alt == "media":
        return await _media_response(request, store, bucket, name, generation)
    return _json(await asyncio.to_thread(store.describe, bucket, name, _origin(request)))


async def _media_response(
    request: web.Request, store: ObjectStore, bucket: str, name: str, generation: int
) -> web.StreamResponse:
    headers = {
        "X-Goog-Generation": str(generation),
        "X-Goog-Metageneration": "1",
        "X-Goog-Stored-Content-Encoding": "identity",
        "Content-Type": "application/octet-stream",
    }
    if name.endswith("/"):
        headers["X-Goog-Stored-Content-Length"] = "0"
        return web.Response(body=b"", headers=headers)
    path = store.object_path(bucket, name)
    hashes = await asyncio.to_thread(store.hashes, bucket, name)
    if hashes is None:
        raise no_object(bucket, name)
    headers["X-Goog-Stored-Content-Length"] = str(path.stat().st_size)
    if "Range" not in request.headers:
        # Clients check the whole download against these (a ranged part cannot be).
        headers["X-Goog-Hash"] = f"crc32c={hashes[1]},md5={hashes[0]}"
    return web.FileResponse(path, headers=headers)


async def delete_object(request: web.Request) -> web.Response:
    store = request.app[STORE_KEY]
    bucket = _bucket(request)
    name = _name(request)
    await _may_write(request, bucket, name, create=False)
    _check_generation(request, store, bucket, name)
    await asyncio.to_thread(store.delete, bucket, name, Preconditions.parse(request.query))
    return web.Response(status=204)


async def list_objects(request: web.Request) -> web.Response:
    """objects.list: prefix, delimiter, pageToken, maxResults, includeTrailingDelimiter.

    A replica may list inside its scope, or a folder on the way to it; in the latter the page
    shows only what it may read and the prefixes that lead there (a page may come back short,
    even empty, with a ``nextPageToken``: clients follow the token, as GCS allows).
    """
    store = request.app[STORE_KEY]
    bucket = _bucket(request)
    q = request.query
    prefix = q.get("prefix", "")
    delimiter = q.get("delimiter", "")
    scope = await _scope(request)
    if scope is not None and not scope.can_list(bucket, prefix):
        raise _outside(scope, f"Listing gs://{bucket}/{prefix}")
    raw_max = q.get("maxResults", "")
    if raw_max and not (raw_max.isascii() and raw_max.isdigit() and len(raw_max) <= 9):
        raise invalid_field("maxResults", f"{raw_max[:20]!r} is not a positive number.")
    limit = min(MAX_PAGE, int(raw_max)) if raw_max and int(raw_max) > 0 else MAX_PAGE
    after = ""
    if token := q.get("pageToken"):
        try:
            after = base64.urlsafe_b64decode(token.encode("ascii")).decode()
        except (ValueError, UnicodeError):
            raise invalid_field(
                "pageToken", "The page token is not one this service issued."
            ) from None
    trailing = q.get("includeTrailingDelimiter", "").lower() == "true"
    items, prefixes, resume = await asyncio.to_thread(
        store.list_objects, bucket, prefix, delimiter, after, limit, trailing
    )
    if scope is not None and not scope.holds_all(bucket, prefix):
        items = [n for n in items if scope.can_read(bucket, n)]
        prefixes = [p for p in prefixes if scope.can_list(bucket, p)]
    origin = _origin(request)

    def describe_all() -> list[dict[str, Any]]:
        out = []
        for name in items:
            try:
                out.append(store.describe(bucket, name, origin))
            except GcsError:
                continue  # deleted while listing
        return out

    body: dict[str, Any] = {"kind": "storage#objects"}
    described = await asyncio.to_thread(describe_all)
    if described:
        body["items"] = described
    if prefixes:
        body["prefixes"] = prefixes
    if resume is not None:
        body["nextPageToken"] = base64.urlsafe_b64encode(resume.encode()).decode()
    return _json(body)


async def _json_object(request: web.Request, required: bool = False) -> dict[str, Any]:
    """A JSON-object body (copy, rewrite, compose, bucket insert); empty is ``{}``."""
    why = json_content_type_problem(request.headers.get("Content-Type"), request.body_exists)
    if why:
        raise invalid_field("Content-Type", why)
    raw = await read_small(request.content, MAX_METADATA_BYTES)
    if required and not raw.strip():
        raise invalid_field("body", "A JSON request body is required.")
    return parse_metadata(raw)


async def _copy(request: web.Request) -> tuple[str, str]:
    """Copy the source object to the destination named in the path; returns the destination."""
    store = request.app[STORE_KEY]
    src_bucket = _bucket(request)
    src = _name(request)
    dst_bucket = checked("destinationBucket", request.match_info["dbucket"], bucket_error)
    dst = _name(request, "dobject")
    await _may_read(request, src_bucket, src)
    await _may_write(request, dst_bucket, dst)
    await _json_object(request)  # destination metadata: nothing of it is kept
    store.check_storable(dst_bucket, dst)
    source_conditions = Preconditions.parse(request.query, "ifSource")
    temp = await asyncio.to_thread(store.copy_to_temp, src_bucket, src, source_conditions)
    try:
        await asyncio.to_thread(
            store.commit, temp, dst_bucket, dst, Preconditions.parse(request.query)
        )
    finally:
        temp.unlink(missing_ok=True)
    _report(request, _writer(request), dst_bucket, dst)
    return dst_bucket, dst


async def copy_object(request: web.Request) -> web.Response:
    """objects.copy: the destination's resource."""
    bucket, name = await _copy(request)
    store = request.app[STORE_KEY]
    return _json(await asyncio.to_thread(store.describe, bucket, name, _origin(request)))


async def rewrite_object(request: web.Request) -> web.Response:
    """objects.rewrite (gcloud storage's copy): done in one call, whatever the size."""
    bucket, name = await _copy(request)
    store = request.app[STORE_KEY]
    resource = await asyncio.to_thread(store.describe, bucket, name, _origin(request))
    return _json(
        {
            "kind": "storage#rewriteResponse",
            "totalBytesRewritten": resource["size"],
            "objectSize": resource["size"],
            "done": True,
            "resource": resource,
        }
    )


async def compose_object(request: web.Request) -> web.Response:
    """objects.compose: up to 32 objects of the bucket, concatenated into the destination."""
    store = request.app[STORE_KEY]
    bucket = _bucket(request)
    name = _name(request)
    body = await _json_object(request, required=True)
    sources = body.get("sourceObjects")
    if not isinstance(sources, list) or not 1 <= len(sources) <= 32:
        raise invalid_field("sourceObjects", "Give 1 to 32 source objects.")
    names = []
    for i, src in enumerate(sources):
        src_name = src.get("name") if isinstance(src, dict) else None
        if not isinstance(src_name, str) or object_name_error(src_name):
            raise invalid_field(f"sourceObjects[{i}].name", "A source object name is required.")
        names.append(src_name)
    for src_name in names:
        await _may_read(request, bucket, src_name)
    await _may_write(request, bucket, name)
    store.check_storable(bucket, name)
    temp = await asyncio.to_thread(store.compose_to_temp, bucket, names)
    try:
        return await _stored(request, store, temp, bucket, name)
    finally:
        temp.unlink(missing_ok=True)


def _bucket_resource(request: web.Request, bucket: str) -> dict[str, Any]:
    return {
        "kind": "storage#bucket",
        "id": bucket,
        "name": bucket,
        "selfLink": f"{_origin(request)}/storage/v1/b/{quote(bucket)}",
        "location": "US",
        "locationType": "multi-region",
        "storageClass": "STANDARD",
        "metageneration": "1",
        "etag": "CAE=",
        "timeCreated": "1970-01-01T00:00:00.000Z",
        "updated": "1970-01-01T00:00:00.000Z",
        "iamConfiguration": {
            "uniformBucketLevelAccess": {"enabled": True},
            "publicAccessPrevention": "enforced",
        },
    }


async def get_bucket(request: web.Request) -> web.Response:
    """buckets.get: a bucket exists when its folder does (uploads create it)."""
    store = request.app[STORE_KEY]
    bucket = _bucket(request)
    await _may_see_bucket(request, bucket)
    await asyncio.to_thread(store.existing_bucket, bucket)
    return _json(_bucket_resource(request, bucket))


async def get_storage_layout(request: web.Request) -> web.Response:
    """buckets.getStorageLayout: a flat namespace (gcloud storage asks before ``cp -r``)."""
    store = request.app[STORE_KEY]
    bucket = _bucket(request)
    await _may_see_bucket(request, bucket)
    await asyncio.to_thread(store.existing_bucket, bucket)
    return _json(
        {
            "kind": "storage#storageLayout",
            "bucket": bucket,
            "location": "US",
            "locationType": "multi-region",
            "hierarchicalNamespace": {"enabled": False},
        }
    )


async def insert_bucket(request: web.Request) -> web.Response:
    """buckets.insert: 409 when it exists, as for a bucket you already own."""
    store = request.app[STORE_KEY]
    await _no_replica(request, "Creating a bucket")
    body = await _json_object(request, required=True)
    bucket = body.get("name")
    if not isinstance(bucket, str):
        raise invalid_field("name", "The bucket name is required.")
    checked("name", bucket, bucket_error)
    await asyncio.to_thread(store.create_bucket, bucket)
    return _json(_bucket_resource(request, bucket))


async def list_buckets(request: web.Request) -> web.Response:
    """buckets.list: every bucket of the service, whatever the project (for a replica, only
    the buckets its scope touches)."""
    store = request.app[STORE_KEY]
    scope = await _scope(request)
    names = await asyncio.to_thread(store.buckets)
    if scope is not None:
        names = [b for b in names if b in scope.buckets]
    body: dict[str, Any] = {"kind": "storage#buckets"}
    if names:
        body["items"] = [_bucket_resource(request, b) for b in names]
    return _json(body)


async def delete_bucket(request: web.Request) -> web.Response:
    """buckets.delete: only an empty bucket (409 otherwise)."""
    store = request.app[STORE_KEY]
    bucket = _bucket(request)
    await _no_replica(request, f"Deleting the bucket gs://{bucket}")
    await asyncio.to_thread(store.delete_bucket, bucket)
    return web.Response(status=204)


async def replica_elsewhere(request: web.Request) -> web.Response:
    """A replica's credential used on a route that is not storage: never."""
    raise ApiError(
        "PERMISSION_DENIED",
        "A replica's storage credential (/_replica/...) works on the Cloud Storage routes "
        "only, not on the jobs or logging APIs.",
    )


def add_routes(
    app: web.Application,
    state: StateDir,
    on_write: WriteHook | None = None,
    on_scope: ScopeLookup | None = None,
    is_package: PackageCheck | None = None,
) -> None:
    """Register the storage routes on the service's app (same auth and error middleware),
    twice: as they are, and under a replica's ``/_replica/<secret>`` prefix.

    ``on_write`` hears of each object a replica commits; ``on_scope`` gives a replica's scope
    (without it a replica's credential reaches nothing); ``is_package`` names the staged
    packages no replica may write or delete. The service provides all three
    (``JobService``): storage knows nothing of jobs.
    """
    store = ObjectStore(state)
    app[STORE_KEY] = store
    app[HOOK_KEY] = on_write
    app[SCOPE_KEY] = on_scope
    app[PACKAGE_KEY] = is_package

    async def sweep(_: web.Application) -> None:
        store.sweep()

    app.on_startup.append(sweep)
    r = app.router
    bucket = "{bucket:[^/]*}"  # so that a missing bucket name is a 400 that says so
    obj = "{object:.+}"
    for base in ("", REPLICA_PREFIX + "{replica:[^/]+}"):
        for prefix in ("/upload", "/resumable/upload"):
            r.add_post(f"{base}{prefix}/storage/v1/b/{bucket}/o", insert_object)
            r.add_put(f"{base}{prefix}/storage/v1/b/{bucket}/o", put_upload)
        r.add_get(f"{base}/storage/v1/b", list_buckets)
        r.add_post(f"{base}/storage/v1/b", insert_bucket)
        r.add_get(f"{base}/storage/v1/b/{bucket}", get_bucket)
        r.add_delete(f"{base}/storage/v1/b/{bucket}", delete_bucket)
        r.add_get(f"{base}/storage/v1/b/{bucket}/storageLayout", get_storage_layout)
        r.add_get(f"{base}/storage/v1/b/{bucket}/o", list_objects)
        dest = "/b/{dbucket:[^/]+}/o/{dobject:.+}"
        r.add_post(f"{base}/storage/v1/b/{bucket}/o/{obj}/copyTo{dest}", copy_object)
        r.add_post(f"{base}/storage/v1/b/{bucket}/o/{obj}/rewriteTo{dest}", rewrite_object)
        r.add_post(f"{base}/storage/v1/b/{bucket}/o/{obj}/compose", compose_object)
        r.add_get(f"{base}/storage/v1/b/{bucket}/o/{obj}", get_object)
        r.add_delete(f"{base}/storage/v1/b/{bucket}/o/{obj}", delete_object)
        r.add_get(f"{base}/download/storage/v1/b/{bucket}/o/{obj}", download_object)
    for method in ("GET", "POST", "PUT", "PATCH", "DELETE"):
        r.add_route(method, REPLICA_PREFIX + "{replica:[^/]+}/{tail:.*}", replica_elsewhere)
