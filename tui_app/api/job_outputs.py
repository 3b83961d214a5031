"""A job's output folder, listed and read a piece at a time: Cloud Storage or a local folder.

The metrics view reads the TensorFlow event files a trainer writes under its ``jobDir`` while
it writes them. Each poll lists the folder (one request) and reads, of each event file, only the
bytes past what was read before (a ranged GET), so a long run's files are never read again from
the start.

Where the bytes come from depends on the profile:

- the local service serves the Cloud Storage JSON API on its own endpoint, with the same token
  as the jobs API (its ``gs://`` objects live in its state folder);
- on Vertex AI the outputs are in real Cloud Storage, read with the user's credentials;
- a ``jobDir`` that is a local path (the local service accepts those) is read from the
  filesystem, which is this machine's only when the service runs here.

The client is google-cloud-storage: listing pages, ranged downloads, retries of transient
failures and GCS's error shapes are its job, not ours. Objects in Cloud Storage never grow in
place: a trainer that flushes an event file uploads the whole file again (a new generation that
starts with the old bytes), so a new generation at least as long as what was read is read on from
the same offset, and a shorter one (the file was replaced) from the start.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from google.auth.exceptions import RefreshError

from tui_app.api.errors import ApiCallError

if TYPE_CHECKING:
    from google.cloud.storage import Client

    from tui_app.api.connection import Connection

__all__ = ["OutputFile", "OutputFolder", "output_folder"]


@dataclass(frozen=True, slots=True)
class OutputFile:
    path: str
    """``gs://bucket/name`` or a local path."""
    size: int
    generation: str = ""
    """Cloud Storage's generation (a new one each time the object is written); "" locally."""


class OutputFolder(Protocol):
    root: str
    note: str

    def files(self) -> list[OutputFile]:
        """Every file under ``root``, at any depth.

        Raises:
            ApiCallError: the folder could not be listed; its message says why, in words.
        """

    def read(self, file: OutputFile, start: int) -> bytes:
        """The bytes of ``file`` from ``start`` to the size it was listed with.

        Raises:
            ApiCallError: the read failed (a 404 when the file went away since the listing).
        """


def output_folder(root: str, connection: Connection) -> OutputFolder:
    """The folder ``root`` (``gs://...`` or a local path) through ``connection``'s storage."""
    if root.startswith("gs://"):
        return GcsFolder(root, connection)
    return LocalFolder(root.removeprefix("file://"))


class GcsFolder:
    """Objects under a ``gs://bucket/prefix/`` through the Cloud Storage JSON API."""

    def __init__(self, root: str, connection: Connection) -> None:
        bucket, _, prefix = root.removeprefix("gs://").partition("/")
        self.root = root
        self.bucket = bucket
        self.prefix = prefix.rstrip("/") + "/" if prefix.strip("/") else ""
        self._connection = connection
        self._client: Client | None = None
        self.note = ""
        """Said beside an empty listing: why it is empty (the local service's bucket is not
        there yet)."""

    def _storage(self) -> Client:
        if self._client is None:
            from google.cloud import storage

            conn = self._connection
            # The local service (and a URL profile pointing at one) serves storage on the jobs
            # endpoint; Vertex AI outputs are in Cloud Storage itself.
            options = None if conn.vertex else {"api_endpoint": conn.endpoint}
            self._client = storage.Client(
                project="-", credentials=conn.credentials, client_options=options
            )
        return self._client

    def files(self) -> list[OutputFile]:
        from google.api_core import exceptions

        self.note = ""
        try:
            blobs = self._storage().list_blobs(
                self.bucket, prefix=self.prefix, fields="items(name,size,generation),nextPageToken"
            )
            return [
                OutputFile(f"gs://{self.bucket}/{b.name}", int(b.size or 0), str(b.generation))
                for b in blobs
                if not b.name.endswith("/")
            ]
        except exceptions.NotFound as exc:
            if self._connection.local:
                # The local service makes a bucket with its first object: none yet is nothing
                # written yet, not a mistake (in Cloud Storage it is one, and is said so).
                self.note = f"no bucket {self.bucket} yet"
                return []
            raise _storage_error(exc, f"listing {self.root}") from None
        except exceptions.GoogleAPICallError as exc:
            raise _storage_error(exc, f"listing {self.root}") from None
        except RefreshError:
            raise _refused(f"listing {self.root}") from None
        except (OSError, ValueError) as exc:  # nothing answered, or an answer it could not read
            raise ApiCallError(f"Could not list {self.root}: {exc}") from None

    def read(self, file: OutputFile, start: int) -> bytes:
        from google.api_core import exceptions

        if start >= file.size:
            return b""
        name = file.path.removeprefix(f"gs://{self.bucket}/")
        blob = self._storage().bucket(self.bucket).blob(name)
        try:
            # end is inclusive; raw: the bytes as stored (no transcoding), no whole-object check
            # (a ranged read has no checksum to compare with: the records carry their own).
            data: bytes = blob.download_as_bytes(
                start=start, end=file.size - 1, raw_download=True, checksum=None
            )
            return data
        except exceptions.GoogleAPICallError as exc:
            raise _storage_error(exc, f"reading {file.path}") from None
        except RefreshError:
            raise _refused(f"reading {file.path}") from None
        except (OSError, ValueError) as exc:
            raise ApiCallError(f"Could not read {file.path}: {exc}") from None


def _refused(doing: str) -> ApiCallError:
    """A 401: google-auth answers one by refreshing the token, and a token that cannot be
    refreshed (the local service's, or expired user credentials) ends in a RefreshError."""
    return ApiCallError(
        f"401 Unauthorized (the credentials were refused) {doing}", 401, "UNAUTHENTICATED"
    )


def _storage_error(exc: Exception, doing: str) -> ApiCallError:
    """A storage failure in words: ``403 Forbidden listing gs://b/job/: <the server's reason>``."""
    code = int(getattr(exc, "code", 0) or 0)
    reason = _server_reason(exc)
    if reason is None:
        reason = getattr(exc, "message", "") or str(exc)
        # The client's message starts with the request ("GET https://...: reason").
        reason = re.sub(r"^[A-Z]+ \S+: ", "", reason)
    words = {
        401: "Unauthorized (the credentials were refused)",
        403: "Forbidden",
        404: "Not found",
    }.get(code, "")
    head = f"{code} {words}" if words else (str(code) if code else "Storage error")
    status = {401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND"}.get(code, "")
    return ApiCallError(f"{head} {doing}: {reason}", code, status or "UNKNOWN")


def _server_reason(exc: Exception) -> str | None:
    """The server's own words (its JSON ``error.message``), where the exception kept the
    response: a failed download's message is otherwise the whole body and the download
    library's repr of the status it expected."""
    response = getattr(exc, "response", None)
    if response is None:
        return None
    try:
        message = response.json()["error"]["message"]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    return message if isinstance(message, str) and message else None


class LocalFolder:
    """A folder on this machine (a local ``jobDir``)."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.note = ""

    def files(self) -> list[OutputFile]:
        base = Path(self.root)
        if not base.exists():
            return []
        if not base.is_dir():
            raise ApiCallError(f"{self.root} is not a folder", 400, "INVALID_ARGUMENT")
        self.note = ""
        skipped: list[str] = []

        def unreadable(exc: OSError) -> None:
            # The job dir itself must be listable; a folder below it that is not is left out
            # and said, so one folder does not hide the rest.
            if exc.filename is None or Path(exc.filename) == base:
                raise exc
            skipped.append(str(exc.filename))

        out: list[OutputFile] = []
        try:
            for folder, _, names in os.walk(base, onerror=unreadable):
                for name in names:
                    path = os.path.join(folder, name)
                    try:
                        info = os.lstat(path)
                    except FileNotFoundError:  # removed between the listing and the stat
                        continue
                    # A container job's replicas write a local jobDir too: a link or a FIFO
                    # there is not the job's output, and is never followed or opened.
                    if stat.S_ISREG(info.st_mode):
                        out.append(OutputFile(path, info.st_size))
        except PermissionError as exc:
            raise ApiCallError(
                f"Permission denied listing {exc.filename or self.root}", 403, "PERMISSION_DENIED"
            ) from None
        except OSError as exc:
            raise ApiCallError(f"Could not list {self.root}: {exc.strerror or exc}") from None
        if skipped:
            more = f" and {len(skipped) - 1} more" if len(skipped) > 1 else ""
            self.note = f"cannot list {skipped[0]}{more} (permission denied or gone)"
        return out

    def read(self, file: OutputFile, start: int) -> bytes:
        if start >= file.size:
            return b""
        try:
            fd = os.open(file.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as handle:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise ApiCallError(f"Not a regular file: {file.path}", 400, "INVALID_ARGUMENT")
                handle.seek(start)
                return handle.read(file.size - start)
        except FileNotFoundError:
            raise ApiCallError(f"Not found: {file.path}", 404, "NOT_FOUND") from None
        except PermissionError:
            raise ApiCallError(
                f"Permission denied reading {file.path}", 403, "PERMISSION_DENIED"
            ) from None
        except OSError as exc:
            raise ApiCallError(f"Could not read {file.path}: {exc.strerror or exc}") from None
