"""The storage proxy's rules: where a request goes, and what its forwarded head says."""

from __future__ import annotations

import pytest

from tui_app.local.storage.gcs_proxy import RequestHead, bucket_of, route

LOCAL = {"data", "out"}


def exists(bucket: str) -> bool:
    return bucket in LOCAL


@pytest.mark.parametrize(
    ("host", "path", "bucket"),
    [
        ("www.googleapis.com", "/storage/v1/b/data/o/a%2Fb", "data"),
        ("www.googleapis.com", "/upload/storage/v1/b/out/o?uploadType=resumable", "out"),
        ("storage.googleapis.com", "/download/storage/v1/b/data/o/x", "data"),
        ("storage.googleapis.com", "/storage/v1/b/data", "data"),
        ("storage.googleapis.com", "/tfds-data/dataset_info.json", "tfds-data"),
        ("www.googleapis.com", "/storage/v1/b", None),
        ("www.googleapis.com", "/oauth2/v3/tokeninfo", None),
    ],
)
def test_bucket_of(host: str, path: str, bucket: str | None) -> None:
    assert bucket_of(host, path) == bucket


def test_json_api_paths_stay_as_they_are() -> None:
    r = route("www.googleapis.com", "GET", "/storage/v1/b/data/o?prefix=x%2F", exists)
    assert (r.kind, r.target, r.bucket) == ("local", "/storage/v1/b/data/o?prefix=x%2F", "data")


def test_media_path_becomes_the_json_download() -> None:
    r = route("storage.googleapis.com", "GET", "/data/dir%2Fx%20y.txt?generation=3", exists)
    assert r.kind == "local"
    assert r.target == "/download/storage/v1/b/data/o/dir%2Fx%20y.txt?alt=media"
    # An unescaped slash in the name means the same object.
    r = route("storage.googleapis.com", "GET", "/data/dir/x.txt", exists)
    assert r.target == "/download/storage/v1/b/data/o/dir%2Fx.txt?alt=media"


def test_reads_of_a_bucket_not_here_go_to_google_writes_never_do() -> None:
    assert route("storage.googleapis.com", "GET", "/tfds-data/x", exists).kind == "upstream"
    assert route("www.googleapis.com", "HEAD", "/storage/v1/b/public/o/x", exists).kind == (
        "upstream"
    )
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        r = route("www.googleapis.com", method, "/upload/storage/v1/b/new-bucket/o", exists)
        assert r.kind == "local", method
    # Project-level calls (bucket lists, creation) are the local service's.
    assert route("www.googleapis.com", "GET", "/storage/v1/b?project=p", exists).kind == "local"


def test_other_google_apis_on_the_json_host_are_not_ours() -> None:
    assert route("www.googleapis.com", "GET", "/oauth2/v3/tokeninfo", exists).kind == "upstream"


def test_xml_listing_and_bare_host_are_refused_with_a_reason() -> None:
    r = route("storage.googleapis.com", "GET", "/data", exists)
    assert r.kind == "refuse" and "JSON API" in r.reason
    r = route("storage.googleapis.com", "GET", "/", exists)
    assert r.kind == "refuse" and "bucket" in r.reason


def _head(*headers: tuple[str, str], method: str = "POST") -> RequestHead:
    lines = [f"{method} /upload/storage/v1/b/out/o HTTP/1.1", *(f"{n}: {v}" for n, v in headers)]
    return RequestHead.parse("\r\n".join(lines).encode())


def _forwarded(raw: bytes) -> list[str]:
    return raw.decode().split("\r\n")


def test_forwarded_head_replaces_host_and_closes() -> None:
    head = _head(
        ("Host", "www.googleapis.com"),
        ("Authorization", "Bearer s3cret"),
        ("Proxy-Connection", "Keep-Alive"),
        ("Connection", "keep-alive"),
        ("Content-Length", "3"),
    )
    lines = _forwarded(head.encode("/x", "127.0.0.1:9"))
    assert lines[0] == "POST /x HTTP/1.1"
    assert "Host: 127.0.0.1:9" in lines and "Host: www.googleapis.com" not in lines
    assert "Authorization: Bearer s3cret" in lines and "Content-Length: 3" in lines
    assert "Connection: close" in lines and not any("Keep-Alive" in ln for ln in lines)
    assert lines[-2:] == ["", ""]


def test_identity_transfer_encoding_is_dropped_and_the_length_kept() -> None:
    head = _head(("Content-Length", "0"), ("Transfer-Encoding", "identity"))
    lines = _forwarded(head.encode("/x", "h"))
    assert "Content-Length: 0" in lines
    assert not any(ln.lower().startswith("transfer-encoding") for ln in lines)


def test_a_real_coding_wins_over_the_length() -> None:
    head = _head(("Content-Length", "10"), ("Transfer-Encoding", "chunked"))
    lines = _forwarded(head.encode("/x", "h"))
    assert "Transfer-Encoding: chunked" in lines
    assert not any(ln.lower().startswith("content-length") for ln in lines)


def test_empty_form_type_is_dropped_only_without_a_body() -> None:
    empty = _head(("Content-Length", "0"), ("Content-Type", "application/x-www-form-urlencoded"))
    assert empty.empty_form() == {"content-type"}
    full = _head(("Content-Length", "4"), ("Content-Type", "application/x-www-form-urlencoded"))
    assert full.empty_form() == frozenset()
    json_type = _head(("Content-Length", "0"), ("Content-Type", "application/json"))
    assert json_type.empty_form() == frozenset()


def test_dropped_and_extra_headers() -> None:
    head = _head(("Authorization", "Bearer s3cret"), ("X-Storage-Proxy-Origin", "https://evil"))
    raw = head.encode(
        "/x",
        "h",
        drop=frozenset({"authorization", "x-storage-proxy-origin"}),
        extra=(("X-Storage-Proxy-Origin", "https://www.googleapis.com"),),
    )
    lines = _forwarded(raw)
    assert not any("s3cret" in ln or "evil" in ln for ln in lines)
    assert "X-Storage-Proxy-Origin: https://www.googleapis.com" in lines


@pytest.mark.parametrize(
    "raw",
    [b"GET /x", b"GET /x HTTP/2", b"GET /x HTTP/1.1\r\nno colon here", b"GET /x HTTP/1.1\r\n :v"],
)
def test_malformed_heads_are_refused(raw: bytes) -> None:
    with pytest.raises(ValueError):
        RequestHead.parse(raw)
