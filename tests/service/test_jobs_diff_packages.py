"""``tui-app jobs diff`` of two jobs whose package was overwritten at the same URI between them
(issue 27): the bytes each job installed differ, and the diff says so by their sha256."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from tests.conftest import unique_id
from tests.support.diff_cli_run import QUICK, changed_lines, tui
from tests.support.live_service import LiveService, basic_job


def _regzipped(sdist: Path, dest: Path) -> None:
    """The same package with other bytes: its tar recompressed under another gzip mtime, as a
    rebuild of unchanged sources gives."""
    dest.write_bytes(gzip.compress(gzip.decompress(sdist.read_bytes()), mtime=1))


def test_a_package_overwritten_at_the_same_uri_is_a_difference(
    service: LiveService, trainer_sdist: Path, tmp_path: Path
) -> None:
    bucket_file = service.state_dir / "gcs" / "diff-bucket" / "pkg" / trainer_sdist.name
    bucket_file.parent.mkdir(parents=True, exist_ok=True)
    bucket_file.write_bytes(trainer_sdist.read_bytes())
    uri = f"gs://diff-bucket/pkg/{trainer_sdist.name}"
    client = service.client()
    first, second = unique_id("diff_pkg"), unique_id("diff_pkg")
    client.create(basic_job(first, uri, *QUICK))
    assert service.wait_state(first, timeout=60)["state"] == "SUCCEEDED"
    _regzipped(trainer_sdist, tmp_path / "again.tar.gz")
    bucket_file.write_bytes((tmp_path / "again.tar.gz").read_bytes())
    client.create(basic_job(second, uri, *QUICK))
    assert service.wait_state(second, timeout=60)["state"] == "SUCCEEDED"

    done = tui(service, "diff", first, second, "--format", "json")
    assert done.returncode == 1, done.stderr
    by_path = {d["path"]: d for d in json.loads(done.stdout)["differences"]}
    hashed = by_path[f'packages["{trainer_sdist.name}"]']
    assert len(hashed["left"]) == 64 and len(hashed["right"]) == 64
    assert hashed["left"] != hashed["right"]
    text = tui(service, "diff", first, second)
    assert f"-  {trainer_sdist.name}: {hashed['left']}" in changed_lines(text.stdout)
    assert not any(p.startswith("trainingInput.") for p in by_path)
