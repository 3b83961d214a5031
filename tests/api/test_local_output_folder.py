"""A local jobDir as the metrics view reads it (``api/job_outputs.LocalFolder``): a container
job's replicas write that folder too, so a link or a FIFO in it is neither listed nor opened,
and the TUI's worker never blocks on it or reads a file of the user's through it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tui_app.api.errors import ApiCallError
from tui_app.api.job_outputs import LocalFolder, OutputFile


def test_only_regular_files_are_listed_and_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_bytes(b"private key")
    job_dir = tmp_path / "job"
    (job_dir / "logs").mkdir(parents=True)
    (job_dir / "logs" / "events.out.tfevents.1.host").write_bytes(b"events")
    (job_dir / "logs" / "events.out.tfevents.2.link").symlink_to(secret)
    os.mkfifo(job_dir / "logs" / "events.out.tfevents.3.fifo")

    folder = LocalFolder(str(job_dir))
    files = folder.files()
    assert [Path(f.path).name for f in files] == ["events.out.tfevents.1.host"]
    assert folder.read(files[0], 0) == b"events"
    # A name swapped for a link after the listing is not followed either.
    link = OutputFile(str(job_dir / "logs" / "events.out.tfevents.2.link"), 11)
    with pytest.raises(ApiCallError):
        folder.read(link, 0)
