"""Files in replica-writable folders (``tui_app/local/untrusted_files.py``): a link, a FIFO, a
folder or an oversized file planted where the service reads or appends is refused, never
followed, never waited on, and nothing outside the folder is read or changed."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from tui_app.local.untrusted_files import (
    FileTooLargeError,
    UntrustedFileError,
    append_beneath,
    files_beneath,
    read_beneath,
    size_beneath,
)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A host file the replica must never reach (think ``~/.bashrc``)."""
    target = tmp_path / "bashrc"
    target.write_text("export PATH\n")
    return target


@pytest.fixture
def base(tmp_path: Path) -> Path:
    folder = tmp_path / "replica"
    (folder / "hypertune").mkdir(parents=True)
    return folder


def test_regular_files_are_read_appended_and_sized(base: Path) -> None:
    assert size_beneath(base, "hypertune/output.metrics") == 0
    assert append_beneath(base, "hypertune/output.metrics", b"abc") == 3
    assert append_beneath(base, "hypertune/output.metrics", b"def") == 6
    assert read_beneath(base, "hypertune/output.metrics") == b"abcdef"
    assert read_beneath(base, "hypertune/output.metrics", offset=2, limit=3) == b"cde"
    assert read_beneath(base, "hypertune/output.metrics", offset=10) == b""
    assert (base / "hypertune" / "output.metrics").stat().st_mode & 0o777 == 0o600


def test_append_makes_missing_folders_private(base: Path) -> None:
    append_beneath(base, "new/deeper/file", b"x")
    assert (base / "new").stat().st_mode & 0o777 == 0o700
    assert (base / "new" / "deeper" / "file").read_bytes() == b"x"


def test_a_link_to_a_host_file_is_never_followed(base: Path, outside: Path) -> None:
    link = base / "hypertune" / "output.metrics"
    link.symlink_to(outside)
    before = outside.read_bytes()
    for call in (
        lambda: append_beneath(base, "hypertune/output.metrics", b"pwned\n"),
        lambda: read_beneath(base, "hypertune/output.metrics"),
        lambda: size_beneath(base, "hypertune/output.metrics"),
    ):
        with pytest.raises(UntrustedFileError, match="symbolic link"):
            call()
    assert outside.read_bytes() == before


def test_a_dangling_link_does_not_create_its_target(base: Path, tmp_path: Path) -> None:
    target = tmp_path / "created-by-attacker"
    (base / "hypertune" / "output.metrics").symlink_to(target)
    with pytest.raises(UntrustedFileError, match="symbolic link"):
        append_beneath(base, "hypertune/output.metrics", b"x")
    assert not target.exists()


def test_a_linked_folder_on_the_way_is_refused(base: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (base / "hypertune").rmdir()
    (base / "hypertune").symlink_to(elsewhere)
    with pytest.raises(UntrustedFileError, match="symbolic link"):
        append_beneath(base, "hypertune/output.metrics", b"x")
    assert list(elsewhere.iterdir()) == []


def test_a_fifo_is_refused_at_once(base: Path) -> None:
    fifo = base / "hypertune" / "output.metrics"
    os.mkfifo(fifo)
    done = threading.Event()

    def attempt() -> None:
        for call in (
            lambda: read_beneath(base, "hypertune/output.metrics"),
            lambda: append_beneath(base, "hypertune/output.metrics", b"x"),
        ):
            with pytest.raises(UntrustedFileError, match="FIFO"):
                call()
        done.set()

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(timeout=10)
    if not done.is_set():
        # Unblock the open (a writer on the FIFO) so the thread does not outlive the test.
        fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
        os.close(fd)
        pytest.fail("opening a FIFO planted by a replica blocked")


def test_a_folder_in_place_of_the_file_is_refused(base: Path) -> None:
    (base / "hypertune" / "output.metrics").mkdir()
    with pytest.raises(UntrustedFileError, match="folder"):
        read_beneath(base, "hypertune/output.metrics")


def test_the_cap_refuses_growth_and_writes_nothing(base: Path) -> None:
    append_beneath(base, "f", b"12345", cap=8)
    with pytest.raises(FileTooLargeError):
        append_beneath(base, "f", b"6789", cap=8)
    assert (base / "f").read_bytes() == b"12345"


@pytest.mark.parametrize("name", ["../escape", "/etc/passwd", "a/../../b", ""])
def test_names_that_leave_the_folder_are_refused(base: Path, name: str) -> None:
    with pytest.raises(UntrustedFileError):
        append_beneath(base, name, b"x")


def test_files_beneath_reads_matching_files_and_never_leaves_the_root(
    base: Path, outside: Path, tmp_path: Path
) -> None:
    (base / "a").mkdir()
    (base / "a" / "events.1").write_bytes(b"one")
    (base / "events.2").write_bytes(b"two" * 10)
    (base / "events.link").symlink_to(outside)
    secret_dir = tmp_path / "secret"
    secret_dir.mkdir()
    (secret_dir / "events.secret").write_bytes(b"secret")
    (base / "linked-dir").symlink_to(secret_dir)
    os.mkfifo(base / "events.fifo")
    (base / "other.txt").write_bytes(b"ignored")

    got = dict(files_beneath(base, lambda n: n.startswith("events."), cap=10))
    assert got[base / "a" / "events.1"] == b"one"
    assert isinstance(got[base / "events.2"], FileTooLargeError)  # 30 bytes > cap 10
    assert isinstance(got[base / "events.link"], UntrustedFileError)
    assert isinstance(got[base / "events.fifo"], UntrustedFileError)
    assert not any(v == b"secret" for v in got.values())
    assert all(p.is_relative_to(base) for p in got)
    assert list(files_beneath(tmp_path / "missing", lambda n: True, cap=10)) == []
