"""Real storage clients against the service's storage API: google-cloud-storage and gcsfs.

google-cloud-storage with ``STORAGE_EMULATOR_HOST`` sends no credentials, so these run against
the ``--no-auth`` service; token mode is covered with raw requests and by the replica
credential tests (tests/service/test_replica_storage.py).
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.api_core import exceptions as gexc
from google.cloud import storage

from tests.service.test_storage_api import call
from tests.support.live_service import LiveService


@pytest.fixture(scope="module")
def client(open_service: LiveService) -> Iterator[storage.Client]:
    """A google-cloud-storage client pointed at the service, as a replica's would be."""
    old = os.environ.get("STORAGE_EMULATOR_HOST")
    os.environ["STORAGE_EMULATOR_HOST"] = open_service.url
    try:
        yield storage.Client(project="test-project")
    finally:
        if old is None:
            os.environ.pop("STORAGE_EMULATOR_HOST", None)
        else:
            os.environ["STORAGE_EMULATOR_HOST"] = old


def gcs_file(svc: LiveService, bucket: str, name: str) -> Path:
    return svc.state_dir / "gcs" / bucket / name


def test_upload_download_and_metadata(client: storage.Client, open_service: LiveService) -> None:
    bucket = client.bucket("clients-basic")
    blob = bucket.blob("data/train.csv")
    blob.upload_from_string(b"a,b\n1,2\n", content_type="text/csv")
    assert gcs_file(open_service, "clients-basic", "data/train.csv").read_bytes() == b"a,b\n1,2\n"
    got = bucket.get_blob("data/train.csv")
    assert got is not None
    assert got.size == 8 and got.generation and got.metageneration == 1
    assert got.md5_hash == base64.b64encode(hashlib.md5(b"a,b\n1,2\n").digest()).decode()
    assert got.crc32c == "SZ2HxQ=="  # CRC32C of those 8 bytes
    assert got.time_created is not None and got.updated is not None
    # checksum="md5" (the default) checks the bytes against x-goog-hash
    assert bucket.blob("data/train.csv").download_as_bytes() == b"a,b\n1,2\n"
    assert bucket.blob("data/train.csv").download_as_bytes(start=2, end=4) == b"b\n1"


def test_large_resumable_upload_and_download(client: storage.Client) -> None:
    data = os.urandom(9 * 1024 * 1024 + 17)
    blob = client.bucket("clients-big").blob("big.bin", chunk_size=4 * 1024 * 1024)
    blob.upload_from_string(data)
    assert client.bucket("clients-big").blob("big.bin").download_as_bytes() == data


def test_list_prefix_delimiter_and_pages(client: storage.Client) -> None:
    bucket = client.bucket("clients-list")
    names = ["a/1", "a/2", "a/sub/3", "b", "c/4", "a.txt"]
    for name in names:
        bucket.blob(name).upload_from_string(name)
    assert [b.name for b in client.list_blobs("clients-list")] == sorted(names)
    top = client.list_blobs("clients-list", delimiter="/")
    assert [b.name for b in top] == ["a.txt", "b"]
    assert top.prefixes == {"a/", "c/"}
    inside = client.list_blobs("clients-list", prefix="a/", delimiter="/")
    assert [b.name for b in inside] == ["a/1", "a/2"] and inside.prefixes == {"a/sub/"}
    paged = client.list_blobs("clients-list", max_results=10, page_size=2)
    assert [b.name for b in paged] == sorted(names)
    assert [b.name for b in client.list_blobs("clients-list", prefix="a/s")] == ["a/sub/3"]


def test_delete_and_not_found(client: storage.Client, open_service: LiveService) -> None:
    bucket = client.bucket("clients-delete")
    bucket.blob("dir/only").upload_from_string(b"x")
    bucket.blob("dir/only").delete()
    assert not (open_service.state_dir / "gcs" / "clients-delete" / "dir").exists()
    with pytest.raises(gexc.NotFound):
        bucket.blob("dir/only").delete()
    with pytest.raises(gexc.NotFound):
        bucket.blob("dir/only").download_as_bytes()
    assert bucket.get_blob("dir/only") is None
    with pytest.raises(gexc.NotFound):
        client.get_bucket("no-such-bucket-here")
    with pytest.raises(gexc.NotFound):
        list(client.list_blobs("no-such-bucket-here"))


def test_preconditions(client: storage.Client) -> None:
    blob = client.bucket("clients-pre").blob("once")
    blob.upload_from_string(b"1", if_generation_match=0)
    with pytest.raises(gexc.PreconditionFailed):
        blob.upload_from_string(b"2", if_generation_match=0)
    live = client.bucket("clients-pre").get_blob("once")
    assert live is not None
    with pytest.raises(gexc.PreconditionFailed):
        live.delete(if_generation_match=live.generation + 1)
    live.upload_from_string(b"3", if_generation_match=live.generation)
    assert client.bucket("clients-pre").blob("once").download_as_bytes() == b"3"
    with pytest.raises(gexc.NotFound):  # only the live generation is kept
        blob.download_as_bytes()


def test_copy_rewrite_compose(client: storage.Client) -> None:
    bucket = client.bucket("clients-copy")
    other = client.bucket("clients-copy-dest")
    bucket.blob("src").upload_from_string(b"hello ")
    bucket.blob("tail").upload_from_string(b"world")
    bucket.copy_blob(bucket.blob("src"), other, "copied/src")
    assert other.blob("copied/src").download_as_bytes() == b"hello "
    token, done, total = other.blob("rewritten").rewrite(bucket.blob("src"))
    assert token is None and done == total == 6
    joined = bucket.blob("joined")
    joined.compose([bucket.blob("src"), bucket.blob("tail")])
    assert joined.download_as_bytes() == b"hello world"
    with pytest.raises(gexc.NotFound):
        bucket.copy_blob(bucket.blob("missing"), other, "never")


def test_buckets(client: storage.Client) -> None:
    client.create_bucket("clients-made")
    with pytest.raises(gexc.Conflict):
        client.create_bucket("clients-made")
    assert "clients-made" in {b.name for b in client.list_buckets()}
    client.bucket("clients-made").blob("x").upload_from_string(b"x")
    with pytest.raises(gexc.Conflict):
        client.get_bucket("clients-made").delete()
    client.bucket("clients-made").blob("x").delete()
    client.get_bucket("clients-made").delete()
    with pytest.raises(gexc.NotFound):
        client.get_bucket("clients-made")


def test_folder_placeholders_and_clashes(client: storage.Client, open_service: LiveService) -> None:
    """``dir/`` (TensorFlow, gcsfs) is an empty folder; one name cannot be file and folder."""
    bucket = client.bucket("clients-dirs")
    bucket.blob("ckpt/").upload_from_string(b"")
    assert gcs_file(open_service, "clients-dirs", "ckpt").is_dir()
    placeholder = bucket.get_blob("ckpt/")
    assert placeholder is not None and placeholder.size == 0
    assert [b.name for b in client.list_blobs("clients-dirs", prefix="ckpt/")] == ["ckpt/"]
    with pytest.raises(gexc.BadRequest, match="empty folder"):
        bucket.blob("data/").upload_from_string(b"bytes")
    bucket.blob("ckpt/model").upload_from_string(b"m")
    bucket.blob("file").upload_from_string(b"f")
    with pytest.raises(gexc.BadRequest, match="both an object and a folder"):
        bucket.blob("file/below").upload_from_string(b"x")
    with pytest.raises(gexc.BadRequest, match="both an object and a folder"):
        bucket.blob("ckpt").upload_from_string(b"x")


def test_gcsfs_and_pandas_style_reads(open_service: LiveService) -> None:
    core = pytest.importorskip("gcsfs.core")
    # The plain filesystem, as replicas get it (GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT=false): the
    # default one first asks each bucket's layout over gRPC, which only Google serves.
    fs = core.GCSFileSystem(endpoint_url=open_service.url, token="anon", project="p")
    with fs.open("gcsfs-bucket/in/data.csv", "wb") as f:
        f.write(b"x,y\n1,2\n3,4\n")
    assert fs.cat("gcsfs-bucket/in/data.csv") == b"x,y\n1,2\n3,4\n"
    assert fs.ls("gcsfs-bucket/in", detail=False) == ["gcsfs-bucket/in/data.csv"]
    assert fs.isdir("gcsfs-bucket/in") and fs.exists("gcsfs-bucket/in/data.csv")
    with fs.open("gcsfs-bucket/in/data.csv", "rb") as f:
        f.seek(4)
        assert f.read(3) == b"1,2"
    fs.rm("gcsfs-bucket/in/data.csv")
    assert not fs.exists("gcsfs-bucket/in/data.csv")


def test_token_mode_needs_the_token(service: LiveService) -> None:
    """Without the service's token (or a replica's credential) storage is closed too."""
    reply = call(service, "GET", "/storage/v1/b/any-bucket/o", auth=False)
    assert reply.status == 401
    assert call(service, "GET", "/storage/v1/b", auth=True).status == 200
