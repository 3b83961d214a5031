"""``gcloud logging read`` searches the local service's logs with Cloud Logging's text forms:
the global restriction, ``textPayload:`` and ``SEARCH()``, answered from the full-text index
with a scan's lines (tests/service/test_log_search.py checks the same forms line by line)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator

import pytest

from tests.conftest import serve, unique_id
from tests.gcloud.test_gcloud_cli import GCLOUD, Gcloud
from tests.service.test_log_search import LINES, TASK, _scan
from tests.support.live_service import PROJECT, LiveService, basic_job
from tests.support.task_packages import task_package


@pytest.fixture(scope="module")
def searched(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveService, Gcloud, str]]:
    for svc in serve(tmp_path_factory, "svc-gcloud-search"):
        uri = svc.stage(task_package(tmp_path_factory.mktemp("lines"), "lines", TASK))
        job_id = unique_id("gc_search")
        svc.client().create(basic_job(job_id, uri, pythonModule="lines.task"))
        assert svc.wait_state(job_id, timeout=60)["state"] == "SUCCEEDED"
        yield svc, Gcloud.for_service(svc, tmp_path_factory.mktemp("gcloud")), job_id


def _read(gcloud: Gcloud, flt: str) -> list[str]:
    proc = subprocess.run(
        [
            GCLOUD,
            "logging",
            "read",
            flt,
            "--project",
            PROJECT,
            "--format",
            "json",
            "--limit",
            "500",
        ],
        env=gcloud.env,
        cwd=gcloud.cwd,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr
    entries = json.loads(proc.stdout or "[]")
    # Newest first, as gcloud asks; the scan lists the lines in the order they were written.
    return [str(e["jsonPayload"]["message"]) for e in reversed(entries)]


def test_gcloud_logging_read_text_forms(searched: tuple[LiveService, Gcloud, str]) -> None:
    _, gcloud, job_id = searched
    scope = f'resource.labels.job_id="{job_id}" AND resource.labels.task_name="master-replica-0"'
    assert _read(gcloud, f'{scope} AND "out of memory"') == _scan("out of memory")
    assert _read(gcloud, f'{scope} AND textPayload:"NaN loss"') == _scan("NaN loss")
    assert _read(gcloud, f'{scope} AND SEARCH("banana")') == [LINES[5]]
    # Without the job: the same lines, from every job of the project (there is one here).
    assert _read(gcloud, '"out of memory"') == _scan("out of memory")
