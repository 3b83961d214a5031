"""Cloud Storage objects as files under the state dir, and resumable uploads on their way there.

``gs://B/N`` is the file ``<state>/gcs/B/N``. No metadata is stored beside it: files staged by
hand are objects too, and a listing of the tree never shows bookkeeping. Bytes in flight live under
``<state>/uploads/`` and reach the gcs tree by one ``rename``, so an upload cut off halfway never
leaves a half-written object. Any valid bucket name works (its folder appears with the first
object), as any project id does for jobs.
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
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from tui_app.local.errors import ApiError, invalid_field
from tui_app.local.paths import StateDir, UnsafePathError

__all__ = [
    "ObjectStore",
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
    segments (which also cover absolute names and trailing slashes) and control characters are
    refused rather than silently mapped somewhere else.
    """
    if not name:
        return "An object name is required."
    if len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        return f"Object names are at most {MAX_NAME_BYTES} bytes."
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        return "Object names cannot contain NUL or other control characters."
    if name.startswith("/"):
        return "Object names are relative: they cannot start with '/'."
    for part in name.split("/"):
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


class ObjectStore:
    """Objects as files under the state dir's gcs root, and uploads on their way there."""

    def __init__(self, state: StateDir) -> None:
        self.state = state
        self.uploads = state.root / "uploads"
        self._locks: dict[str, asyncio.Lock] = {}

    # paths

    def object_path(self, bucket: str, name: str) -> Path:
        """The file for ``gs://bucket/name``; 400 for a name that is unsafe or invalid."""
        why = bucket_error(bucket)
        if why:
            raise invalid_field("bucket", why)
        why = object_name_error(name)
        if why:
            raise invalid_field("name", why)
        try:
            return self.state.gcs_path(_gs_uri(bucket, name))
        except UnsafePathError as exc:
            raise invalid_field("name", str(exc)) from None

    def check_storable(self, bucket: str, name: str) -> Path:
        """The object's path, once sure a file can go there (no folder there, no file above)."""
        path = self.object_path(bucket, name)
        if path.is_dir():
            raise _conflict(bucket, name, "objects already exist below that name")
        root = self.state.gcs_root
        for parent in path.parents:
            if parent == root:
                break
            if parent.exists() and not parent.is_dir():
                raise _conflict(bucket, name, f"{parent.relative_to(root)} is an object")
        return path

    def new_temp(self) -> Path:
        """A fresh file for bytes in flight, on the state dir's filesystem (rename is atomic)."""
        path = self.uploads / f"{secrets.token_hex(16)}.tmp"
        try:
            self.uploads.mkdir(parents=True, exist_ok=True)
            path.touch(0o600, exist_ok=False)
        except OSError as exc:
            raise disk_error(exc) from None
        return path

    def commit(self, temp: Path, bucket: str, name: str) -> None:
        """Make ``temp`` the object: fsync, then one rename, so readers never see part of it."""
        with temp.open("rb") as f:
            os.fsync(f.fileno())
        dest = self.check_storable(bucket, name)
        try:
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

    # resources

    def describe(self, bucket: str, name: str, origin: str) -> dict[str, Any]:
        """The storage#object resource, derived from the file alone (blocking: hashes it)."""
        path = self.object_path(bucket, name)
        try:
            st = path.stat()
            if not path.is_file():
                raise FileNotFoundError(path)
            with path.open("rb") as f:
                md5 = hashlib.file_digest(f, "md5").digest()
        except OSError:
            raise ApiError("NOT_FOUND", f"No such object: {bucket}/{name}") from None
        generation = str(st.st_mtime_ns // 1000)
        link = f"{origin}/storage/v1/b/{quote(bucket)}/o/{quote(name, safe='')}"
        stamp = _rfc3339(st.st_mtime)
        return {
            "kind": "storage#object",
            "id": f"{bucket}/{name}/{generation}",
            "selfLink": link,
            "mediaLink": f"{link}?generation={generation}&alt=media",
            "name": name,
            "bucket": bucket,
            "generation": generation,
            "metageneration": "1",
            "contentType": mimetypes.guess_type(name)[0] or "application/octet-stream",
            "storageClass": "STANDARD",
            "size": str(st.st_size),
            "md5Hash": _b64(md5),
            "etag": _b64(md5[:8]),
            "timeCreated": stamp,
            "updated": stamp,
        }

    # resumable sessions

    def lock(self, upload_id: str) -> asyncio.Lock:
        """One PUT at a time per session: two writers at one offset would interleave bytes."""
        return self._locks.setdefault(upload_id, asyncio.Lock())

    def create_session(self, bucket: str, name: str, total: int | None) -> UploadSession:
        session = UploadSession(secrets.token_hex(16), bucket, name, total, time.time())
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


def _rfc3339(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()
