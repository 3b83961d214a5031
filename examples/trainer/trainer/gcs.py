"""A tiny Cloud Storage client (stdlib only) so ``--job-dir gs://...`` and ``gs://`` inputs work.

The platform passed ``--job-dir`` as the ``gs://`` URI the user gave, and trainers wrote their
checkpoints there through a storage client. This sample has no dependencies, so it speaks the
storage JSON API itself with urllib:

- the endpoint is ``STORAGE_EMULATOR_HOST`` when set (the local jobs service gives every replica
  one, with the replica's own credential in its path), else ``https://storage.googleapis.com``
  with a token from the GCE metadata server (what the platform's machines had);
- an upload is one ``uploadType=media`` request, which GCS applies atomically: a reader sees the
  old object or the new one, never part of one;
- "folders" are name prefixes: listing ``dir`` lists the objects named ``dir/...``.

Local paths go to the filesystem, so callers use ``read_bytes``/``write_bytes``/``listdir``/
``remove`` for both kinds of path. Runs on Python 3.7+.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request

DEFAULT_ENDPOINT = "https://storage.googleapis.com"
METADATA_TOKEN_URL = (
    "http://metadata.google.internal/computeMetadata/v1/instance/service-accounts/default/token"
)
TIMEOUT_SECONDS = 60.0


class GcsError(OSError):
    """A storage request that failed; ``status`` is the HTTP status (0: no answer)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def is_gcs(path: str) -> bool:
    return path.startswith("gs://")


def split(uri: str) -> tuple[str, str]:
    """``gs://bucket/a/b`` -> ``("bucket", "a/b")``; the name may be empty."""
    if not is_gcs(uri):
        raise ValueError("not a gs:// URI: " + uri)
    bucket, _, name = uri[len("gs://") :].partition("/")
    if not bucket:
        raise ValueError("no bucket in " + uri)
    return bucket, name


def endpoint() -> str:
    host = os.environ.get("STORAGE_EMULATOR_HOST", "").strip()
    if not host:
        return DEFAULT_ENDPOINT
    if not host.startswith(("http://", "https://")):
        host = "http://" + host
    return host.rstrip("/")


def _headers() -> dict[str, str]:
    """No credentials for an emulator (the local service knows the replica by its URL); the
    machine's service-account token on Google Cloud."""
    if os.environ.get("STORAGE_EMULATOR_HOST"):
        return {}
    request = urllib.request.Request(METADATA_TOKEN_URL, headers={"Metadata-Flavor": "Google"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            token = json.loads(response.read().decode("utf-8"))["access_token"]
    except (OSError, ValueError, KeyError) as exc:
        raise GcsError(0, f"no Cloud Storage credentials (metadata server: {exc})") from None
    return {"Authorization": "Bearer " + token}


def _call(
    method: str, url: str, body: bytes | None = None, headers: dict[str, str] | None = None
) -> bytes:
    sent = _headers()
    sent.update(headers or {})
    request = urllib.request.Request(url, data=body, method=method, headers=sent)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
            return response.read()
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode("utf-8", "replace")[:300]
        raise GcsError(exc.code, f"{method} {url}: {exc.code} {detail}") from None
    except urllib.error.URLError as exc:
        raise GcsError(0, f"{method} {url}: {exc.reason}") from None


def _object_url(bucket: str, name: str, download: bool = False) -> str:
    base = "/download/storage/v1" if download else "/storage/v1"
    return "{}{}/b/{}/o/{}".format(
        endpoint(),
        base,
        urllib.parse.quote(bucket, safe=""),
        urllib.parse.quote(name, safe=""),
    )


def read_bytes(path: str) -> bytes:
    """The whole object or file; FileNotFoundError when there is none."""
    if not is_gcs(path):
        with open(path, "rb") as handle:
            return handle.read()
    bucket, name = split(path)
    try:
        return _call("GET", _object_url(bucket, name, download=True) + "?alt=media")
    except GcsError as exc:
        if exc.status == 404:
            raise FileNotFoundError(path) from None
        raise


def write_bytes(path: str, data: bytes) -> None:
    """Store ``data`` at ``path``. On Cloud Storage one upload replaces the object atomically."""
    bucket, name = split(path)
    url = "{}/upload/storage/v1/b/{}/o?uploadType=media&name={}".format(
        endpoint(),
        urllib.parse.quote(bucket, safe=""),
        urllib.parse.quote(name, safe=""),
    )
    _call("POST", url, data, {"Content-Type": "application/octet-stream"})


def listdir(path: str) -> list[str]:
    """The names directly inside ``path`` (files and "folders"), like ``os.listdir``."""
    if not is_gcs(path):
        return os.listdir(path)
    bucket, name = split(path)
    prefix = name.rstrip("/") + "/" if name.strip("/") else ""
    found = []
    token = ""
    while True:
        query = {"prefix": prefix, "delimiter": "/"}
        if token:
            query["pageToken"] = token
        url = "{}/storage/v1/b/{}/o?{}".format(
            endpoint(),
            urllib.parse.quote(bucket, safe=""),
            urllib.parse.urlencode(query),
        )
        try:
            page = json.loads(_call("GET", url).decode("utf-8"))
        except GcsError as exc:
            if exc.status == 404:  # no such bucket: nothing in it
                return []
            raise
        for item in page.get("items", []):
            rest = item["name"][len(prefix) :]
            if rest:
                found.append(rest)
        for sub in page.get("prefixes", []):
            found.append(sub[len(prefix) :].rstrip("/"))
        token = page.get("nextPageToken", "")
        if not token:
            return found


def remove(path: str) -> None:
    """Delete the object or file; FileNotFoundError when there is none."""
    if not is_gcs(path):
        os.unlink(path)
        return
    bucket, name = split(path)
    try:
        _call("DELETE", _object_url(bucket, name))
    except GcsError as exc:
        if exc.status == 404:
            raise FileNotFoundError(path) from None
        raise
