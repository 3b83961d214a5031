"""``gcloud storage cp/ls/cat/rm`` and ``gsutil`` against the service, in both auth modes (the
whole sequence with a token, a write and a read without).

Pointed at the service only by ``tui-app service env`` (CLOUDSDK_ variables and the generated
``BOTO_CONFIG``), as a user stages data and reads outputs.

Each gcloud command costs one to two seconds of CPU, each gsutil command three processes (the
shim runs ``gcloud config get account``, then ``gcloud storage``): about five seconds. So only
test_stage_list_read_remove creates its bucket with ``gcloud storage buckets create``; the
others make theirs with one plain JSON API call.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.gcloud.test_gcloud_cli import Gcloud
from tests.support.live_service import PROJECT, LiveService

pytestmark = pytest.mark.gcloud


@pytest.fixture
def gc(service: LiveService, tmp_path_factory: pytest.TempPathFactory) -> Gcloud:
    """gcloud and gsutil on a service with token auth: every command, as users run them."""
    return Gcloud.for_service(service, tmp_path_factory.mktemp("gcloud-storage-token"))


@pytest.fixture
def open_gc(open_service: LiveService, tmp_path_factory: pytest.TempPathFactory) -> Gcloud:
    """The same on a ``--no-auth`` service: only the credentials differ, so a write and a read
    per tool show that gcloud and gsutil get through without a token (each command costs a
    second or more of gcloud's start-up; the whole sequence twice cost the suite 40 s)."""
    return Gcloud.for_service(open_service, tmp_path_factory.mktemp("gcloud-storage-no-auth"))


def tool(gc: Gcloud, exe: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``gcloud ARGS`` or ``gsutil ARGS`` in the service's environment."""
    return subprocess.run(
        [shutil.which(exe) or exe, *args],
        env=gc.env,
        cwd=gc.cwd,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def run(gc: Gcloud, *args: str) -> str:
    res = tool(gc, "gcloud", *args)
    assert res.returncode == 0, f"{args}: {res.stderr}"
    return res.stdout


def make_bucket(svc: LiveService, name: str) -> None:
    """buckets.insert over plain HTTP: a bucket for the test, without a gcloud start-up."""
    status, body = svc.request(
        "POST", f"/storage/v1/b?project={PROJECT}", json.dumps({"name": name}).encode()
    )
    assert status == 200, body


def test_stage_list_read_remove(gc: Gcloud) -> None:
    data = gc.cwd / "data.csv"
    data.write_text("a,b\n1,2\n")
    run(gc, "storage", "buckets", "create", "gs://stage-bucket")  # as on GCS: it must exist
    run(gc, "storage", "cp", str(data), "gs://stage-bucket/data/")  # a folder destination
    assert run(gc, "storage", "cat", "gs://stage-bucket/data/data.csv") == "a,b\n1,2\n"
    assert "gs://stage-bucket/data/" in run(gc, "storage", "ls", "gs://stage-bucket/")
    listed = run(gc, "storage", "ls", "-l", "gs://stage-bucket/data/")
    assert "gs://stage-bucket/data/data.csv" in listed and " 8 " in listed
    run(gc, "storage", "cp", "gs://stage-bucket/data/data.csv", "gs://stage-bucket/out/copy.csv")
    back = gc.cwd / "back.csv"
    run(gc, "storage", "cp", "gs://stage-bucket/out/copy.csv", str(back))  # hash-checked
    assert back.read_text() == "a,b\n1,2\n"
    run(gc, "storage", "rm", "gs://stage-bucket/out/copy.csv")
    gone = tool(gc, "gcloud", "storage", "cat", "gs://stage-bucket/out/copy.csv")
    assert gone.returncode != 0, gone.stdout


def test_gsutil_through_the_boto_config(service: LiveService, gc: Gcloud) -> None:
    make_bucket(service, "gsutil-bucket")
    src = gc.cwd / "g.txt"
    src.write_text("via gsutil\n")
    assert Path(gc.env["BOTO_CONFIG"]).is_file()
    res = tool(gc, "gsutil", "cp", str(src), "gs://gsutil-bucket/in/")
    assert res.returncode == 0, res.stderr
    assert (
        "gs://gsutil-bucket/in/g.txt" in tool(gc, "gsutil", "ls", "gs://gsutil-bucket/in/").stdout
    )
    assert tool(gc, "gsutil", "cat", "gs://gsutil-bucket/in/g.txt").stdout == "via gsutil\n"
    assert tool(gc, "gsutil", "rm", "gs://gsutil-bucket/in/g.txt").returncode == 0


def test_without_auth_gcloud_and_gsutil_write_and_read(
    open_service: LiveService, open_gc: Gcloud
) -> None:
    make_bucket(open_service, "open-bucket")
    data = open_gc.cwd / "open.csv"
    data.write_text("x\n")
    run(open_gc, "storage", "cp", str(data), "gs://open-bucket/a/open.csv")
    assert run(open_gc, "storage", "cat", "gs://open-bucket/a/open.csv") == "x\n"
    res = tool(open_gc, "gsutil", "cp", str(data), "gs://open-bucket/b/")
    assert res.returncode == 0, res.stderr
    assert tool(open_gc, "gsutil", "cat", "gs://open-bucket/b/open.csv").stdout == "x\n"
