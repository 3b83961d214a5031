"""The storage upload API gcloud uses for local packages, over real HTTP.

Bodies are built the way gcloud's apitools builds them (single-quoted boundary, ``\\n`` line
ends) and the way other clients do (``\\r\\n``). Every bad request must be a 4xx google.rpc error
that stores nothing: no object, no session, no bytes appended to a session.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import pytest

from tests.support.live_service import LiveService
from tui_app.local.paths import StateDir
from tui_app.local.storage.object_store import ObjectStore

BUCKET = "upload-bucket"
UPLOAD = f"/upload/storage/v1/b/{BUCKET}/o"
RESUMABLE = f"/resumable/upload/storage/v1/b/{BUCKET}/o"
MIB = 1024 * 1024


@dataclass(frozen=True)
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def call(
    svc: LiveService,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    auth: bool = True,
) -> Reply:
    """One raw HTTP request; 308 and 4xx come back as they are (no redirects, no raising)."""
    url = urlsplit(svc.url)
    conn = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=60)
    sent = dict(headers or {})
    if auth and svc.token:
        sent["Authorization"] = f"Bearer {svc.token}"
    try:
        conn.request(method, path, body=body, headers=sent)
        resp = conn.getresponse()
        return Reply(resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read())
    finally:
        conn.close()


def multipart_body(
    meta: dict[str, Any],
    data: bytes,
    boundary: str = "===============7834835860929859708==",
    eol: bytes = b"\n",
) -> bytes:
    """A multipart/related upload body; ``eol=b"\\n"`` is byte for byte what apitools sends."""
    b = boundary.encode()
    return eol.join(
        [
            b"--" + b,
            b"Content-Type: application/json",
            b"MIME-Version: 1.0",
            b"",
            json.dumps(meta).encode(),
            b"--" + b,
            b"Content-Type: application/x-tar",
            b"MIME-Version: 1.0",
            b"Content-Transfer-Encoding: binary",
            b"",
            data,
            b"--" + b + b"--",
            b"",
        ]
    )


def multipart(
    svc: LiveService,
    name: str | None,
    data: bytes,
    meta: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Reply:
    """POST a multipart upload as gcloud does: the name in the query, ``{"size": N}`` first."""
    boundary = kwargs.pop("boundary", "===============7834835860929859708==")
    quote_char = kwargs.pop("quote_char", "'")
    query = "uploadType=multipart&alt=json" + (f"&name={quote(name, safe='')}" if name else "")
    body = multipart_body(
        {"size": str(len(data))} if meta is None else meta, data, boundary, **kwargs
    )
    ctype = f"multipart/related; boundary={quote_char}{boundary}{quote_char}"
    return call(svc, "POST", f"{UPLOAD}?{query}", body, {"Content-Type": ctype})


def start_resumable(svc: LiveService, name: str, total: int | None) -> Reply:
    headers = {"Content-Type": "application/json", "X-Upload-Content-Type": "application/x-tar"}
    meta: dict[str, Any] = {}
    if total is not None:
        headers["X-Upload-Content-Length"] = str(total)
        meta["size"] = str(total)
    path = f"{RESUMABLE}?alt=json&uploadType=resumable&name={quote(name, safe='')}"
    return call(svc, "POST", path, json.dumps(meta).encode(), headers)


@dataclass(frozen=True)
class Session:
    svc: LiveService
    location: str

    @property
    def path(self) -> str:
        url = urlsplit(self.location)
        return f"{url.path}?{url.query}"

    @property
    def upload_id(self) -> str:
        return parse_qs(urlsplit(self.location).query)["upload_id"][0]

    def put(self, data: bytes, content_range: str | None) -> Reply:
        headers = {"Content-Type": "application/x-tar"}
        if content_range is not None:
            headers["Content-Range"] = content_range
        return call(self.svc, "PUT", self.path, data, headers)


def open_session(svc: LiveService, name: str, total: int | None) -> Session:
    reply = start_resumable(svc, name, total)
    assert reply.status == 200, reply
    return Session(svc, reply.headers["location"])


def gcs_file(svc: LiveService, name: str, bucket: str = BUCKET) -> Path:
    return svc.state_dir / "gcs" / bucket / name


def stored_files(svc: LiveService) -> dict[str, int]:
    """Every file under the gcs tree and the uploads dir, with its size."""
    out: dict[str, int] = {}
    for top in ("gcs", "uploads"):
        for path in (svc.state_dir / top).rglob("*"):
            if path.is_file():
                out[str(path.relative_to(svc.state_dir))] = path.stat().st_size
    return out


def assert_rpc_error(reply: Reply, status: int | tuple[int, ...] = 400) -> dict[str, Any]:
    """A 4xx with a google.rpc body whose code matches the HTTP status."""
    assert reply.status in ((status,) if isinstance(status, int) else status), reply
    error = reply.json()["error"]
    assert error["code"] == reply.status
    assert isinstance(error["message"], str) and error["message"]
    assert error["status"]
    return dict(error)


def md5_b64(data: bytes) -> str:
    return base64.b64encode(hashlib.md5(data).digest()).decode()


@pytest.fixture
def unchanged(service: LiveService) -> Iterator[None]:
    """The test's requests must store nothing at all."""
    before = stored_files(service)
    yield
    assert stored_files(service) == before


# -- multipart and media ---------------------------------------------------------------------


def test_multipart_as_gcloud_sends_it(service: LiveService) -> None:
    # Delimiter look-alikes and a trailing \r in the media must survive the framing.
    data = b"\x1f\x8b" + os.urandom(5000) + b"\n--===\r\n--\r"
    name = "job_a/0123abcd/trainer-0.1.0.tar.gz"
    reply = multipart(service, name, data)
    assert reply.status == 200, reply
    obj = reply.json()
    assert (obj["bucket"], obj["name"], obj["size"]) == (BUCKET, name, str(len(data)))
    assert obj["md5Hash"] == md5_b64(data)
    assert obj["kind"] == "storage#object"
    assert gcs_file(service, name).read_bytes() == data
    assert not list((service.state_dir / "uploads").glob("*.tmp"))

    got = call(service, "GET", f"/storage/v1/b/{BUCKET}/o/{quote(name, safe='')}?alt=json")
    assert got.status == 200 and got.json()["md5Hash"] == obj["md5Hash"]
    media = call(service, "GET", f"/storage/v1/b/{BUCKET}/o/{quote(name, safe='')}?alt=media")
    assert media.status == 200 and media.body == data


def test_multipart_crlf_double_quoted_name_in_metadata(service: LiveService) -> None:
    data = b"payload\r\n"
    meta = {"name": "crlf/obj.bin", "contentType": "application/octet-stream"}
    reply = multipart(service, None, data, meta, eol=b"\r\n", quote_char='"', boundary="b0und")
    assert reply.status == 200, reply
    assert gcs_file(service, "crlf/obj.bin").read_bytes() == data


def test_multipart_overwrites_whole_object(service: LiveService) -> None:
    assert multipart(service, "over/write", b"first version, longer").status == 200
    assert multipart(service, "over/write", b"second").status == 200
    assert gcs_file(service, "over/write").read_bytes() == b"second"


def test_media_upload(service: LiveService) -> None:
    path = f"{UPLOAD}?uploadType=media&name=media%2Fplain.bin"
    reply = call(service, "POST", path, b"simple", {"Content-Type": "application/octet-stream"})
    assert reply.status == 200, reply
    assert reply.json()["size"] == "6"
    assert gcs_file(service, "media/plain.bin").read_bytes() == b"simple"


def test_ten_megabyte_multipart(service: LiveService) -> None:
    data = os.urandom(10 * MIB)
    reply = multipart(service, "big/ten.bin", data)
    assert reply.status == 200, reply
    assert reply.json()["size"] == str(10 * MIB)
    assert hashlib.sha256(gcs_file(service, "big/ten.bin").read_bytes()).digest() == (
        hashlib.sha256(data).digest()
    )


# -- resumable ---------------------------------------------------------------------------------


def test_resumable_in_chunks_with_status_queries(service: LiveService) -> None:
    data = os.urandom(3 * MIB + 123)
    total = len(data)
    name = "resumable/chunks.tar.gz"
    session = open_session(service, name, total)
    assert session.location.startswith(service.url + "/upload/storage/v1/b/")  # absolute

    first = session.put(data[:MIB], f"bytes 0-{MIB - 1}/{total}")
    assert (first.status, first.headers["range"]) == (308, f"bytes=0-{MIB - 1}")
    assert not gcs_file(service, name).exists()  # nothing visible until the last byte

    # The client lost track: ask (with the total, as gcloud's finalize form does), then resume.
    for query in (f"bytes */{total}", "bytes */*"):
        status = session.put(b"", query)
        assert (status.status, status.headers["range"]) == (308, f"bytes=0-{MIB - 1}")

    # A resend that overlaps what the service has: the known bytes are skipped, not doubled.
    second = session.put(data[MIB - 100 : 2 * MIB], f"bytes {MIB - 100}-{2 * MIB - 1}/{total}")
    assert (second.status, second.headers["range"]) == (308, f"bytes=0-{2 * MIB - 1}")

    last = session.put(data[2 * MIB :], f"bytes {2 * MIB}-{total - 1}/{total}")
    assert last.status == 200, last
    assert last.json()["size"] == str(total)
    assert last.json()["md5Hash"] == md5_b64(data)
    assert gcs_file(service, name).read_bytes() == data
    assert not (service.state_dir / "uploads" / f"{session.upload_id}.part").exists()

    # A finished session answers status queries with the object (what apitools expects).
    again = session.put(b"", "bytes */*")
    assert again.status == 200 and again.json()["name"] == name


def test_resumable_unknown_size_then_finalize(service: LiveService) -> None:
    session = open_session(service, "resumable/streamed.bin", None)
    assert session.put(b"a" * 1000, "bytes 0-999/*").status == 308
    assert session.put(b"b" * 24, "bytes 1000-1023/*").status == 308
    done = session.put(b"", "bytes */1024")
    assert done.status == 200 and done.json()["size"] == "1024"
    assert gcs_file(service, "resumable/streamed.bin").read_bytes() == b"a" * 1000 + b"b" * 24


def test_resumable_single_put_without_content_range(service: LiveService) -> None:
    session = open_session(service, "resumable/whole.bin", 5)
    assert session.put(b"12345", None).status == 200
    assert gcs_file(service, "resumable/whole.bin").read_bytes() == b"12345"


def test_cut_off_chunk_leaves_nothing_behind(service: LiveService) -> None:
    """A client that hangs up mid-chunk: the session keeps only what came before the chunk."""
    data = os.urandom(2 * MIB)
    session = open_session(service, "resumable/cut.bin", len(data))
    assert session.put(data[:MIB], f"bytes 0-{MIB - 1}/{len(data)}").status == 308
    part = service.state_dir / "uploads" / f"{session.upload_id}.part"

    url = urlsplit(service.url)
    with socket.create_connection((url.hostname or "127.0.0.1", url.port or 80)) as sock:
        head = (
            f"PUT {session.path} HTTP/1.1\r\nHost: {url.netloc}\r\n"
            f"Authorization: Bearer {service.token}\r\nContent-Length: {MIB}\r\n"
            f"Content-Range: bytes {MIB}-{2 * MIB - 1}/{len(data)}\r\n\r\n"
        )
        sock.sendall(head.encode() + data[MIB : MIB + 512 * 1024])
        deadline = time.monotonic() + 10
        while part.stat().st_size <= MIB:  # the service is writing this chunk now
            assert time.monotonic() < deadline, "the service never started on the chunk"
            time.sleep(0.01)
    # The query waits for that PUT to notice the hang-up and cut its bytes back.
    status = session.put(b"", "bytes */*")
    assert (status.status, status.headers["range"]) == (308, f"bytes=0-{MIB - 1}")
    assert part.stat().st_size == MIB
    done = session.put(data[MIB:], f"bytes {MIB}-{2 * MIB - 1}/{len(data)}")
    assert done.status == 200
    assert gcs_file(service, "resumable/cut.bin").read_bytes() == data


def test_ten_megabyte_resumable_in_one_put(service: LiveService) -> None:
    data = os.urandom(10 * MIB)
    session = open_session(service, "big/ten-resumable.bin", len(data))
    reply = session.put(data, f"bytes 0-{len(data) - 1}/{len(data)}")
    assert reply.status == 200 and reply.json()["size"] == str(len(data))
    assert gcs_file(service, "big/ten-resumable.bin").read_bytes() == data


# -- bad input: 4xx, google.rpc body, nothing stored ---------------------------------------------

BAD_NAMES = ["../escape", "a/../../escape", "/absolute", "nul\x00byte", "a//b", ".", "dir/", ""]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_unsafe_object_names_are_refused(service: LiveService, name: str, unchanged: None) -> None:
    error = assert_rpc_error(multipart(service, name or None, b"x"))
    assert error["status"] == "INVALID_ARGUMENT"
    assert_rpc_error(start_resumable(service, name, 1))
    media = f"{UPLOAD}?uploadType=media&name={quote(name, safe='')}"
    assert_rpc_error(call(service, "POST", media, b"x"))


@pytest.mark.parametrize(
    "path",
    [
        "/upload/storage/v1/b//o?uploadType=multipart&name=x",
        "/upload/storage/v1/b/Upper_Case/o?uploadType=multipart&name=x",
        "/upload/storage/v1/b/ab/o?uploadType=multipart&name=x",
        "/resumable/upload/storage/v1/b//o?uploadType=resumable&name=x",
    ],
)
def test_missing_or_invalid_bucket(service: LiveService, path: str, unchanged: None) -> None:
    body = multipart_body({}, b"x")
    ctype = "multipart/related; boundary='===============7834835860929859708=='"
    error = assert_rpc_error(call(service, "POST", path, body, {"Content-Type": ctype}))
    fields = [v["field"] for d in error["details"] for v in d["fieldViolations"]]
    assert fields == ["bucket"]


@pytest.mark.parametrize(
    ("body", "ctype"),
    [
        (b"just bytes", "application/octet-stream"),  # not multipart
        (b"--x\n\n{}\n--x--\n", "multipart/related"),  # no boundary parameter
        (multipart_body({"size": "99"}, b"short"), None),  # size does not match
        (multipart_body({"size": "5"}, b"12345")[:-20], None),  # cut off inside the media
        (multipart_body({"size": "1"}, b"x").replace(b'{"size"', b"{oops"), None),  # not JSON
        (multipart_body({}, b"x").replace(b"{}", b"[1]"), None),  # metadata is not an object
    ],
)
def test_bad_multipart_bodies(
    service: LiveService, body: bytes, ctype: str | None, unchanged: None
) -> None:
    ctype = ctype or "multipart/related; boundary='===============7834835860929859708=='"
    path = f"{UPLOAD}?uploadType=multipart&name=bad%2Fbody"
    assert_rpc_error(call(service, "POST", path, body, {"Content-Type": ctype}))


def test_bad_upload_type(service: LiveService, unchanged: None) -> None:
    assert_rpc_error(call(service, "POST", f"{UPLOAD}?uploadType=chunky&name=x", b"x"))
    assert_rpc_error(call(service, "POST", f"{UPLOAD}?name=x", b"x"))


def test_unknown_upload_session(service: LiveService, unchanged: None) -> None:
    for upload_id in ("0" * 32, "../../jobs", ""):
        path = f"{UPLOAD}?uploadType=resumable&upload_id={quote(upload_id, safe='')}"
        reply = call(service, "PUT", path, b"x", {"Content-Range": "bytes 0-0/1"})
        assert assert_rpc_error(reply, 404)["status"] == "NOT_FOUND"


def test_session_belongs_to_its_bucket(service: LiveService) -> None:
    session = open_session(service, "bucket/bound.bin", 1)
    other = session.path.replace(f"/b/{BUCKET}/", "/b/another-bucket/")
    assert_rpc_error(call(service, "PUT", other, b"x", {"Content-Range": "bytes 0-0/1"}), 404)


@pytest.mark.parametrize(
    "content_range",
    [
        "items 0-3/10",  # not bytes
        "bytes 0-3",  # no total
        "bytes 5-2/10",  # ends before it starts
        "bytes 0-10/10",  # past the total
        "bytes 0-3/11",  # not the size the upload started with
        "bytes 6-9/10",  # leaves a gap after the 4 bytes stored
        "bytes -1-3/10",
    ],
)
def test_bad_content_range_stores_nothing(service: LiveService, content_range: str) -> None:
    session = open_session(service, f"range/{hashlib.md5(content_range.encode()).hexdigest()}", 10)
    assert session.put(b"0123", "bytes 0-3/10").status == 308
    before = stored_files(service)
    assert_rpc_error(session.put(b"6789", content_range))
    assert stored_files(service) == before
    status = session.put(b"", "bytes */*")
    assert (status.status, status.headers["range"]) == (308, "bytes=0-3")


def test_chunk_shorter_than_its_range(service: LiveService) -> None:
    session = open_session(service, "range/short.bin", 10)
    before = stored_files(service)
    # Content-Length (4) contradicts the range (6 bytes): refused before a byte is written.
    assert_rpc_error(session.put(b"0123", "bytes 0-5/10"))
    assert stored_files(service) == before


def test_object_cannot_also_be_a_folder(service: LiveService) -> None:
    assert multipart(service, "clash/leaf", b"file").status == 200
    before = stored_files(service)
    error = assert_rpc_error(multipart(service, "clash/leaf/below", b"x"))
    assert error["status"] == "FAILED_PRECONDITION"
    assert_rpc_error(multipart(service, "clash", b"x"))
    assert_rpc_error(start_resumable(service, "clash/leaf/below", 1))
    assert stored_files(service) == before


def test_unknown_object_is_404(service: LiveService) -> None:
    for alt in ("json", "media"):
        reply = call(service, "GET", f"/storage/v1/b/{BUCKET}/o/no%2Fsuch?alt={alt}")
        assert assert_rpc_error(reply, 404)["status"] == "NOT_FOUND"


def test_token_required(service: LiveService, unchanged: None) -> None:
    reply = call(service, "POST", f"{UPLOAD}?uploadType=media&name=x", b"x", auth=False)
    assert assert_rpc_error(reply, 401)["status"] == "UNAUTHENTICATED"
    start = call(service, "POST", f"{RESUMABLE}?uploadType=resumable&name=x", b"{}", auth=False)
    assert_rpc_error(start, 401)


def test_bucket_get(service: LiveService) -> None:
    assert multipart(service, "bucket-get/x", b"x").status == 200  # the upload makes the bucket
    reply = call(service, "GET", f"/storage/v1/b/{BUCKET}?alt=json")
    assert reply.status == 200 and reply.json()["name"] == BUCKET


# -- start-up sweep ------------------------------------------------------------------------------


def test_sweep_drops_interrupted_one_shot_uploads_and_old_sessions(tmp_path: Path) -> None:
    store = ObjectStore(StateDir(tmp_path))
    interrupted = store.new_temp()
    fresh = store.create_session(BUCKET, "fresh", 10)
    stale = store.create_session(BUCKET, "stale", 10)
    week_ago = time.time() - 8 * 24 * 3600
    for path in (store.part_file(stale), store.uploads / f"{stale.upload_id}.json"):
        os.utime(path, (week_ago, week_ago))
    store.sweep()
    assert not interrupted.exists()
    assert store.session(fresh.upload_id).name == "fresh"
    assert not store.part_file(stale).exists()
