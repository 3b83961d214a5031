"""Cloud Storage objects as files under the state dir, and resumable uploads on their way there.

``gs://B/N`` is the file ``<state>/gcs/B/N``. No metadata is stored beside it: files staged by
hand are objects too, and a listing of the tree never shows bookkeeping. Bytes in flight live under
``<state>/uploads/`` and reach the gcs tree by one ``rename``, so an upload cut off halfway never
leaves a half-written object. A bucket is its folder: uploading into a bucket that does not exist
creates it (as any project id works for jobs); reading or listing one answers 404.

What a filesystem cannot hold is refused with a clear error instead of being stored elsewhere:

- "folder placeholder" objects (``dir/``, which TensorFlow and the console create) are empty
  folders: ``dir/`` exists while the folder exists and is empty, must itself be empty, and goes
  away with the last object below it (deleting an object removes the folders it leaves empty,
  so no implicit folder outlives its objects, as on GCS);
- one name cannot be both an object and a folder of objects (``a`` and ``a/b``): the second
  write is refused (400 FAILED_PRECONDITION), never silently renamed.

generation is the file's mtime in microseconds (a new write is a new generation) and
metageneration is always 1: no metadata is kept, so none can change.
"""

from __future__ import annotations

import asyncio
import base64
import errno
import hashlib
import json
import mimetypes
import os
import re
import secrets
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import google_crc32c

from tui_app.local.errors import ApiError, checked, invalid_field
from tui_app.local.paths import StateDir, UnsafePathError

__all__ = [
    "GcsError",
    "ObjectStore",
    "Preconditions",
    "UploadSession",
    "bucket_error",
    "disk_error",
    "no_session",
    "object_name_error",
]

MAX_NAME_BYTES = 1024
"""GCS's limit on object names (UTF-8)."""
MAX_SEGMENT_BYTES = 255
"""A file name on the local filesystem: each ``/``-separated part of an object name."""
SESSION_MAX_AGE = 7 * 24 * 3600
"""GCS forgets a resumable session after a week; so do we, at the next start."""
BUCKET_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$")
UPLOAD_ID_PATTERN = re.compile(r"^[0-9a-f]{32}$")


# -- names and their errors -----------------------------------------------------------------


def bucket_error(bucket: str) -> str | None:
    """Why ``bucket`` is not a usable bucket name, or None."""
    if not bucket:
        return "A bucket name is required."
    if not BUCKET_PATTERN.match(bucket) or ".." in bucket:
        return (
            f"{bucket[:80]!r} is not a valid bucket name: 3-222 lowercase letters, digits, "
            "'-', '_' and '.', starting and ending with a letter or digit."
        )
    return None


def object_name_error(name: str) -> str | None:
    """Why ``name`` cannot be an object here, or None.

    Stricter than GCS: every name becomes a path under the state dir, so empty, ``.`` and ``..``
    segments (which also cover absolute names) and control characters are refused rather than
    silently mapped somewhere else. One trailing ``/`` is allowed: a folder placeholder.
    """
    if not name:
        return "An object name is required."
    if len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        return f"Object names are at most {MAX_NAME_BYTES} bytes."
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        return "Object names cannot contain NUL or other control characters."
    if name.startswith("/"):
        return "Object names are relative: they cannot start with '/'."
    for part in name.removesuffix("/").split("/"):
        if part in ("", ".", ".."):
            return f"{name[:80]!r} has an empty, '.' or '..' path segment."
        if len(part.encode("utf-8", "surrogatepass")) > MAX_SEGMENT_BYTES:
            return f"Each '/'-separated part of a name is at most {MAX_SEGMENT_BYTES} bytes here."
    return None


def _gs_uri(bucket: str, name: str) -> str:
    return f"gs://{bucket}/{name}"


def _conflict(bucket: str, name: str, why: str) -> ApiError:
    return ApiError(
        "FAILED_PRECONDITION",
        f"{_gs_uri(bucket, name)} cannot be stored: {why} (locally each object is a file, so one "
        "name cannot be both an object and a folder of objects).",
    )


def disk_error(exc: OSError) -> ApiError:
    """A write that failed: a clear 4xx (gcloud retries 5xx for ~26 s, to no avail here)."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return ApiError(
            "RESOURCE_EXHAUSTED", "No space left for the upload in the service's state dir."
        )
    return ApiError("FAILED_PRECONDITION", f"The upload cannot be written: {exc.strerror}.")


def no_session(upload_id: str) -> ApiError:
    return ApiError(
        "NOT_FOUND",
        f"No upload session {upload_id[:40]!r}: start a new upload "
        "(sessions end when their object is stored, and after a week).",
    )


class GcsError(ApiError):
    """An error as the storage JSON API shapes it: google.rpc's fields plus ``errors[]``.

    Storage clients read ``error.errors[0].reason`` (``notFound``, ``conflict``,
    ``conditionNotMet``, ``forbidden``) beside the HTTP status, which they map to their exception
    types (google-cloud-storage's ``NotFound``, ``PreconditionFailed``, ``Forbidden``; gcsfs's
    ``FileNotFoundError``, ``PermissionError``).
    """

    def __init__(self, http_status: int, reason: str, message: str) -> None:
        status = {
            403: "PERMISSION_DENIED",
            404: "NOT_FOUND",
            409: "ALREADY_EXISTS",
            412: "FAILED_PRECONDITION",
            416: "OUT_OF_RANGE",
        }.get(http_status, "INVALID_ARGUMENT")
        super().__init__(status, message, http_status=http_status)
        self.reason = reason

    def body(self) -> dict[str, Any]:
        body = super().body()
        body["error"]["errors"] = [
            {"domain": "global", "reason": self.reason, "message": self.message}
        ]
        return body


def no_object(bucket: str, name: str) -> GcsError:
    return GcsError(404, "notFound", f"No such object: {bucket}/{name}")


def no_bucket(bucket: str) -> GcsError:
    return GcsError(404, "notFound", f"The specified bucket does not exist: {bucket}")


@dataclass(frozen=True)
class Preconditions:
    """``ifGenerationMatch`` and friends; ``0`` as generation means "no live object".

    Values are int64 query strings; a malformed one is a 400 naming the parameter.
    """

    generation_match: int | None = None
    generation_not_match: int | None = None
    metageneration_match: int | None = None
    metageneration_not_match: int | None = None

    @classmethod
    def parse(cls, query: Any, prefix: str = "if") -> Preconditions:
        values: list[int | None] = []
        for key in (
            "GenerationMatch",
            "GenerationNotMatch",
            "MetagenerationMatch",
            "MetagenerationNotMatch",
        ):
            field = prefix + key
            raw = query.get(field)
            if raw is None or raw == "":
                values.append(None)
            elif not (raw.isascii() and raw.isdigit() and len(raw) <= 19):
                raise invalid_field(field, f"{raw[:40]!r} is not a generation number.")
            else:
                values.append(int(raw))
        return cls(*values)

    def check(self, bucket: str, name: str, generation: int | None) -> None:
        """412 when the object (``generation``: None when absent) fails a condition."""
        live = generation or 0
        meta = 1 if generation else None
        failed = (
            (self.generation_match is not None and self.generation_match != live)
            or (self.generation_not_match is not None and self.generation_not_match == live)
            or (self.metageneration_match is not None and self.metageneration_match != meta)
            or (self.metageneration_not_match is not None and self.metageneration_not_match == meta)
        )
        if failed:
            raise GcsError(
                412,
                "conditionNotMet",
                f"At least one of the pre-conditions you specified did not hold "
                f"(gs://{bucket}/{name} is at generation {live}).",
            )


def _generation(st: os.stat_result) -> int:
    return max(1, st.st_mtime_ns // 1000)


# -- the store ------------------------------------------------------------------------------


@dataclass
class UploadSession:
    """A resumable upload; its bytes so far are ``<upload_id>.part`` beside its JSON record."""

    upload_id: str
    bucket: str
    name: str
    total: int | None
    created: float
    done: bool = False
    conditions: dict[str, int | None] | None = None
    """The ``if...`` preconditions the upload was started with, checked again at the end."""
    writer: dict[str, Any] | None = None
    """The replica that started the upload (``storage_env.ReplicaWriter`` as a dict), if any."""


class ObjectStore:
    """Objects as files under the state dir's gcs root, and uploads on their way there."""

    def __init__(self, state: StateDir) -> None:
        self.state = state
        self.uploads = state.root / "uploads"
        self._locks: dict[str, asyncio.Lock] = {}
        self._write_lock = threading.Lock()
        self._hash_cache: dict[str, tuple[tuple[int, int, int], bytes, bytes]] = {}

    # paths

    def object_path(self, bucket: str, name: str) -> Path:
        """The file for ``gs://bucket/name``; 400 for a name that is unsafe or invalid."""
        checked("bucket", bucket, bucket_error)
        checked("name", name, object_name_error)
        try:
            return self.state.gcs_path(_gs_uri(bucket, name))
        except UnsafePathError as exc:
            raise invalid_field("name", str(exc)) from None

    def bucket_path(self, bucket: str) -> Path:
        return self.state.gcs_root / checked("bucket", bucket, bucket_error)

    def existing_bucket(self, bucket: str) -> Path:
        """The bucket's folder, or 404 (reads and lists need the bucket to exist)."""
        path = self.bucket_path(bucket)
        if not path.is_dir():
            raise no_bucket(bucket)
        return path

    def check_storable(self, bucket: str, name: str) -> Path:
        """The object's path, once sure a file can go there (no folder there, no file above)."""
        path = self.object_path(bucket, name)
        if name.endswith("/"):
            if path.exists() and not path.is_dir():
                raise _conflict(bucket, name, f"{name[:-1]} is an object")
        elif path.is_dir():
            raise _conflict(bucket, name, "objects already exist below that name")
        root = self.state.gcs_root
        for parent in path.parents:
            if parent == root:
                break
            if parent.exists() and not parent.is_dir():
                raise _conflict(bucket, name, f"{parent.relative_to(root)} is an object")
        return path

    def generation(self, bucket: str, name: str) -> int | None:
        """The live object's generation, None when there is none."""
        path = self.object_path(bucket, name)
        try:
            st = path.stat()
        except OSError:
            return None
        if name.endswith("/"):
            return _generation(st) if path.is_dir() and not any(path.iterdir()) else None
        return _generation(st) if path.is_file() else None

    def new_temp(self) -> Path:
        """A fresh file for bytes in flight, on the state dir's filesystem (rename is atomic)."""
        path = self.uploads / f"{secrets.token_hex(16)}.tmp"
        try:
            self.uploads.mkdir(parents=True, exist_ok=True)
            path.touch(0o600, exist_ok=False)
        except OSError as exc:
            raise disk_error(exc) from None
        return path

    def commit(
        self, temp: Path, bucket: str, name: str, conditions: Preconditions | None = None
    ) -> None:
        """Make ``temp`` the object: fsync, then one rename, so readers never see part of it.

        The preconditions are checked and the rename done under one lock, so two writers with
        ``ifGenerationMatch=0`` cannot both win.
        """
        if name.endswith("/") and temp.stat().st_size:
            raise invalid_field(
                "name",
                f"{name[:80]!r} ends with '/': here such an object is an empty folder, so it "
                "cannot hold data. Drop the trailing '/' or upload no bytes.",
            )
        with temp.open("rb") as f:
            os.fsync(f.fileno())
        with self._write_lock:
            dest = self.check_storable(bucket, name)
            if conditions is not None:
                conditions.check(bucket, name, self.generation(bucket, name))
            try:
                if name.endswith("/"):
                    dest.mkdir(parents=True, exist_ok=True)
                    os.utime(dest)
                    temp.unlink()
                    return
                dest.parent.mkdir(parents=True, exist_ok=True)
                try:
                    os.replace(temp, dest)
                except OSError as exc:
                    if exc.errno != errno.EXDEV:
                        raise
                    # gcs/ was moved to another filesystem: copy beside the target, rename there.
                    beside = dest.with_name(f".{dest.name}.{secrets.token_hex(8)}.tmp")
                    shutil.copyfile(temp, beside)
                    os.replace(beside, dest)
                    temp.unlink()
            except (FileExistsError, NotADirectoryError, IsADirectoryError):
                raise _conflict(bucket, name, "a file or folder is in the way") from None
            except OSError as exc:
                raise disk_error(exc) from None

    def delete(self, bucket: str, name: str, conditions: Preconditions) -> None:
        """Remove the object, and the folders that leaves empty (none outlives its objects)."""
        self.existing_bucket(bucket)
        path = self.object_path(bucket, name)
        with self._write_lock:
            generation = self.generation(bucket, name)
            if generation is None:
                raise no_object(bucket, name)
            conditions.check(bucket, name, generation)
            try:
                if name.endswith("/"):
                    path.rmdir()
                else:
                    path.unlink()
            except FileNotFoundError:
                raise no_object(bucket, name) from None
            except OSError as exc:
                raise disk_error(exc) from None
            top = self.state.gcs_root / bucket
            for parent in path.parents:
                if parent == top or not parent.is_relative_to(top):
                    break
                try:
                    parent.rmdir()
                except OSError:
                    break

    def copy_to_temp(self, bucket: str, name: str, conditions: Preconditions) -> Path:
        """A temp copy of an object (the source of a copy or rewrite), checked against
        ``conditions``; 404 when it does not exist."""
        self.existing_bucket(bucket)
        generation = self.generation(bucket, name)
        if generation is None:
            raise no_object(bucket, name)
        conditions.check(bucket, name, generation)
        temp = self.new_temp()
        try:
            if not name.endswith("/"):
                shutil.copyfile(self.object_path(bucket, name), temp)
        except FileNotFoundError:
            temp.unlink(missing_ok=True)
            raise no_object(bucket, name) from None
        except OSError as exc:
            temp.unlink(missing_ok=True)
            raise disk_error(exc) from None
        return temp

    def compose_to_temp(self, bucket: str, names: list[str]) -> Path:
        """The sources' bytes one after the other, in a temp file (objects.compose)."""
        self.existing_bucket(bucket)
        temp = self.new_temp()
        try:
            with temp.open("wb") as out:
                for name in names:
                    path = self.object_path(bucket, name)
                    if name.endswith("/") or not path.is_file():
                        raise no_object(bucket, name)
                    with path.open("rb") as src:
                        shutil.copyfileobj(src, out)
        except OSError as exc:
            temp.unlink(missing_ok=True)
            raise disk_error(exc) from None
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
        return temp

    # listing

    def list_objects(
        self,
        bucket: str,
        prefix: str = "",
        delimiter: str = "",
        after: str = "",
        limit: int = 1000,
        include_trailing: bool = False,
    ) -> tuple[list[str], list[str], str | None]:
        """objects.list: (object names, prefixes, the name to resume after or None).

        Names come in GCS's order (by UTF-8 bytes). With the delimiter ``/``, folders below the
        prefix become prefixes without being walked.
        """
        top = self.existing_bucket(bucket)
        items: list[str] = []
        prefixes: list[str] = []
        last: str | None = None
        count = 0
        for name in self._walk(top, "", prefix, delimiter == "/"):
            rest = name[len(prefix) :]
            kind = "item"
            if delimiter and delimiter in rest:
                name = prefix + rest[: rest.index(delimiter) + len(delimiter)]
                kind = "prefix"
            elif delimiter == "/" and name.endswith("/") and name != prefix:
                kind = "prefix"  # an empty folder below the prefix: both, as on GCS
            if name.encode() <= after.encode() or (prefixes and prefixes[-1] == name):
                continue
            if count >= limit:
                return items, prefixes, last
            if kind == "prefix":
                prefixes.append(name)
                if include_trailing and self.generation(bucket, name) is not None:
                    items.append(name)
            else:
                items.append(name)
            count += 1
            last = name
        return items, prefixes, None

    def _walk(self, folder: Path, rel: str, prefix: str, shallow: bool) -> Iterator[str]:
        """Object names below ``folder`` that can start with ``prefix``, in order.

        ``shallow``: a folder past the prefix yields its own name (``rel/``) instead of its
        contents, which the ``/`` delimiter would fold into that prefix anyway.
        """
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        if not entries and rel:
            if rel.startswith(prefix):
                yield rel
            return
        keyed = []
        for entry in entries:
            is_dir = entry.is_dir(follow_symlinks=False)
            name = rel + entry.name + ("/" if is_dir else "")
            keyed.append((name.encode("utf-8", "surrogateescape"), name, is_dir, entry))
        keyed.sort(key=lambda k: k[0])
        for _, name, is_dir, entry in keyed:
            if not (name.startswith(prefix) or prefix.startswith(name)):
                continue
            if not is_dir:
                if name.startswith(prefix) and entry.is_file():
                    yield name
                continue
            if shallow and len(name) > len(prefix) and name.startswith(prefix):
                yield name
                continue
            yield from self._walk(Path(entry.path), name, prefix, shallow)

    def buckets(self) -> list[str]:
        root = self.state.gcs_root
        try:
            return sorted(
                p.name for p in root.iterdir() if p.is_dir() and bucket_error(p.name) is None
            )
        except OSError:
            return []

    def create_bucket(self, bucket: str) -> None:
        path = self.bucket_path(bucket)
        try:
            path.mkdir(parents=True)
        except FileExistsError:
            raise GcsError(
                409,
                "conflict",
                f"The bucket {bucket} already exists (you already own it).",
            ) from None
        except OSError as exc:
            raise disk_error(exc) from None

    def delete_bucket(self, bucket: str) -> None:
        path = self.existing_bucket(bucket)
        try:
            path.rmdir()
        except OSError:
            raise GcsError(
                409, "conflict", f"The bucket {bucket} you tried to delete is not empty."
            ) from None

    # resources

    def describe(self, bucket: str, name: str, origin: str) -> dict[str, Any]:
        """The storage#object resource, derived from the file alone (blocking: hashes it)."""
        path = self.object_path(bucket, name)
        if self.generation(bucket, name) is None:
            raise no_object(bucket, name)
        try:
            st = path.stat()
            md5, crc = self._hashes(path, st, name.endswith("/"))
        except OSError:
            raise no_object(bucket, name) from None
        generation = str(_generation(st))
        link = f"{origin}/storage/v1/b/{quote(bucket, safe='')}/o/{quote(name, safe='')}"
        download = (
            f"{origin}/download/storage/v1/b/{quote(bucket, safe='')}/o/{quote(name, safe='')}"
        )
        stamp = _rfc3339(st.st_mtime)
        size = 0 if name.endswith("/") else st.st_size
        return {
            "kind": "storage#object",
            "id": f"{bucket}/{name}/{generation}",
            "selfLink": link,
            "mediaLink": f"{download}?generation={generation}&alt=media",
            "name": name,
            "bucket": bucket,
            "generation": generation,
            "metageneration": "1",
            "contentType": (
                "application/x-directory"
                if name.endswith("/")
                else mimetypes.guess_type(name)[0] or "application/octet-stream"
            ),
            "storageClass": "STANDARD",
            "size": str(size),
            "md5Hash": _b64(md5),
            "crc32c": _b64(crc),
            "etag": _b64(md5[:8]),
            "timeCreated": stamp,
            "updated": stamp,
            "timeStorageClassUpdated": stamp,
        }

    def hashes(self, bucket: str, name: str) -> tuple[str, str] | None:
        """(md5, crc32c) in base64 of a file object, for the ``x-goog-hash`` header."""
        path = self.object_path(bucket, name)
        try:
            md5, crc = self._hashes(path, path.stat(), name.endswith("/"))
        except OSError:
            return None
        return _b64(md5), _b64(crc)

    def _hashes(self, path: Path, st: os.stat_result, folder: bool) -> tuple[bytes, bytes]:
        """MD5 and CRC32C of the file, cached per (path, mtime, size): listings and
        downloads ask again and again, and a 1 GB file takes seconds to hash."""
        if folder:
            return hashlib.md5(b"").digest(), (0).to_bytes(4, "big")
        key = str(path)
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        cached = self._hash_cache.get(key)
        if cached is not None and cached[0] == stamp:
            return cached[1], cached[2]
        md5 = hashlib.md5()
        crc = 0
        with path.open("rb") as f:
            while chunk := f.read(1024 * 1024):
                md5.update(chunk)
                crc = _crc32c_extend(crc, chunk)
        if len(self._hash_cache) > 4096:
            self._hash_cache.clear()
        self._hash_cache[key] = (stamp, md5.digest(), crc.to_bytes(4, "big"))
        return md5.digest(), crc.to_bytes(4, "big")

    # resumable sessions

    def lock(self, upload_id: str) -> asyncio.Lock:
        """One PUT at a time per session: two writers at one offset would interleave bytes."""
        return self._locks.setdefault(upload_id, asyncio.Lock())

    def create_session(
        self,
        bucket: str,
        name: str,
        total: int | None,
        conditions: Preconditions | None = None,
        writer: dict[str, Any] | None = None,
    ) -> UploadSession:
        session = UploadSession(
            secrets.token_hex(16),
            bucket,
            name,
            total,
            time.time(),
            conditions=asdict(conditions) if conditions else None,
            writer=writer,
        )
        try:
            self.uploads.mkdir(parents=True, exist_ok=True)
            self.part_file(session).touch(0o600, exist_ok=False)
            self.save_session(session)
        except OSError as exc:
            raise disk_error(exc) from None
        return session

    def session(self, upload_id: str) -> UploadSession:
        """The session, or 404 (never existed, expired, or a malformed id)."""
        if UPLOAD_ID_PATTERN.match(upload_id):
            try:
                return UploadSession(**json.loads((self.uploads / f"{upload_id}.json").read_text()))
            except (OSError, ValueError, TypeError):
                pass
        raise no_session(upload_id)

    def forget_lock(self, upload_id: str) -> None:
        """Once a session is done: later PUTs only read it, so they need no lock of their own."""
        self._locks.pop(upload_id, None)

    def save_session(self, session: UploadSession) -> None:
        record = self.uploads / f"{session.upload_id}.json"
        fresh = record.with_suffix(".json.new")
        fresh.write_text(json.dumps(asdict(session)))
        os.replace(fresh, record)

    def part_file(self, session: UploadSession) -> Path:
        return self.uploads / f"{session.upload_id}.part"

    def received(self, session: UploadSession) -> int:
        try:
            return self.part_file(session).stat().st_size
        except OSError:
            return 0

    def sweep(self) -> None:
        """At start-up: drop bytes of one-shot uploads cut off by a crash, and old sessions."""
        if not self.uploads.is_dir():
            return
        cutoff = time.time() - SESSION_MAX_AGE
        for path in self.uploads.iterdir():
            try:
                if path.suffix in (".tmp", ".new") or path.stat().st_mtime < cutoff:
                    path.unlink()
            except OSError:
                continue


def _crc32c_extend(crc: int, chunk: bytes) -> int:
    """CRC32C (Castagnoli), which gcloud storage and gsutil check downloads against."""
    return int(google_crc32c.extend(crc, chunk))


def _rfc3339(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()
