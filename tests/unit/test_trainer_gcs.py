"""The sample trainer's stdlib storage client: URI handling and local paths (it runs against a
live service in tests/service/test_replica_storage.py)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "trainer"))

gcs = importlib.import_module("trainer.gcs")  # the sample trainer is not a package of ours


def test_split_and_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    assert gcs.split("gs://b/a/b.txt") == ("b", "a/b.txt")
    assert gcs.split("gs://b") == ("b", "")
    with pytest.raises(ValueError):
        gcs.split("gs:///x")
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", "127.0.0.1:9/_replica/s")
    assert gcs.endpoint() == "http://127.0.0.1:9/_replica/s"
    monkeypatch.delenv("STORAGE_EMULATOR_HOST")
    assert gcs.endpoint() == gcs.DEFAULT_ENDPOINT


def test_local_paths_use_the_filesystem(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"x")
    assert gcs.read_bytes(str(tmp_path / "f")) == b"x"
    assert gcs.listdir(str(tmp_path)) == ["f"]
    gcs.remove(str(tmp_path / "f"))
    with pytest.raises(FileNotFoundError):
        gcs.read_bytes(str(tmp_path / "f"))


def test_unreachable_service_is_an_oserror(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", "http://127.0.0.1:9")
    with pytest.raises(OSError):
        gcs.read_bytes("gs://b/x")
