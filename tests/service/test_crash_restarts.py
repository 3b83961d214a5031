"""A replica that exits non-zero while the service watches it, by the platform's rules
(``tui_app/model/running/restarts.py``): started again where it ran unless the error is
permanent (its own traceback first of all), 5 restarts per replica, then 3 whole-job retries,
then a failure that lists every attempt. The test services wait a hundredth of the real backoff
(``tests/conftest._start``).
"""

from __future__ import annotations

import psutil
import pytest

from tests.conftest import unique_id
from tests.support.live_service import PROJECT, LiveService, basic_job
from tests.support.task_packages import task_package
from tui_app.local.execution.cluster_env import REPLICA_MARKER

FLAKY = """\
import os
import sys

# The first run fails as a lost connection would, without a traceback; the next one succeeds.
if not os.path.exists("failed-once"):
    open("failed-once", "w").close()
    print("cannot reach the data server, giving up", flush=True)
    sys.exit(3)
print("training done", flush=True)
"""

ALWAYS = """\
import sys
import time

print("starting", flush=True)
time.sleep(0.05)
sys.exit(3)
"""


@pytest.fixture(scope="module")
def flaky_uri(service: LiveService, tmp_path_factory: pytest.TempPathFactory) -> str:
    return service.stage(task_package(tmp_path_factory.mktemp("flaky"), "flaky", FLAKY))


@pytest.fixture(scope="module")
def always_uri(service: LiveService, tmp_path_factory: pytest.TempPathFactory) -> str:
    return service.stage(task_package(tmp_path_factory.mktemp("always"), "always", ALWAYS))


def _lines(service: LiveService, job_id: str, task: str = "master-replica-0") -> list[str]:
    """The text of one task's log entries (``service``: the service's own lines)."""
    flt = f'resource.labels.job_id="{job_id}" AND resource.labels.task_name="{task}"'
    return [str(e["jsonPayload"]["message"]) for e in service.entries(flt)]


def _notes(service: LiveService, job_id: str) -> list[str]:
    return _lines(service, job_id, "service")


def test_an_exit_without_a_traceback_restarts_the_replica_and_the_job_goes_on(
    service: LiveService, flaky_uri: str
) -> None:
    job_id = unique_id("crash_once")
    service.client().create(basic_job(job_id, flaky_uri, pythonModule="flaky.task"))
    job = service.wait_state(job_id, timeout=60)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    (restart,) = job["replicaRestarts"]
    assert restart["taskName"] == "master-replica-0" and restart["count"] == 1
    assert restart["lastCause"] == "it exited with status 3"
    line = "master-replica-0 restarted (1 of 5): it exited with status 3; resuming"
    assert line in _notes(service, job_id)
    lines = _lines(service, job_id)
    assert lines.index("cannot reach the data server, giving up") < lines.index("training done")


def test_a_crash_loop_uses_every_restart_and_retry_then_fails_listing_them(
    service: LiveService, always_uri: str
) -> None:
    job_id = unique_id("crash_loop")
    service.client().create(basic_job(job_id, always_uri, pythonModule="always.task"))
    job = service.wait_state(job_id, timeout=180)
    assert job["state"] == "FAILED"
    message = job["errorMessage"].splitlines()
    assert message[0] == (
        "The replica master-replica-0 kept failing: it exited with status 3, "
        "after 5 restarts and 3 job retries."
    )
    attempts = [line for line in message[1:] if line.startswith("  ")]
    # Four runs of five restarts each, and the three retries between them, oldest first.
    assert len(attempts) == 4 * 5 + 3
    assert sum("whole job retried: it exited with status 3" in a for a in attempts) == 3
    assert all(a.endswith(": it exited with status 3") for a in attempts)
    # Then how it last ended, as any failed replica says it.
    assert "The replica master 0 exited with a non-zero status of 3." in message
    notes = _notes(service, job_id)
    for n in range(1, 6):
        line = f"master-replica-0 restarted ({n} of 5): it exited with status 3; resuming"
        assert notes.count(line) == 4, notes
    for n in range(1, 4):
        assert any(f"Restarting the whole job ({n} of 3)" in note for note in notes), notes
    assert _lines(service, job_id).count("starting") == 24  # every attempt's own line, once


def test_a_traceback_fails_the_job_at_once(service: LiveService, package_uri: str) -> None:
    job_id = unique_id("crash_bug")
    service.client().create(basic_job(job_id, package_uri, "--steps", "20", "--fail-at-step", "2"))
    job = service.wait_state(job_id, timeout=60)
    assert job["state"] == "FAILED"
    assert job["errorMessage"].startswith(
        "The replica master 0 exited with a non-zero status of 1."
    )
    assert "RuntimeError: Injected failure at step 2" in job["errorMessage"]
    assert "replicaRestarts" not in job
    assert not any(" restarted (" in note for note in _notes(service, job_id))


def test_a_cancel_during_a_crash_loop_ends_it_cancelled(
    service: LiveService, always_uri: str
) -> None:
    job_id = unique_id("crash_cancel")
    client = service.client()
    client.create(basic_job(job_id, always_uri, pythonModule="always.task"))
    deadline_job = service.wait_state(job_id, ("RUNNING", "FAILED"), timeout=60)
    assert deadline_job["state"] == "RUNNING"
    client.cancel(job_id)
    job = service.wait_state(job_id, timeout=60)
    assert job["state"] == "CANCELLED", job.get("errorMessage")
    assert job["errorMessage"] == "Job cancelled by user."
    base = str(service.state_dir / "jobs" / PROJECT / job_id)
    left = [
        p
        for p in psutil.process_iter(["environ"])
        if (p.info.get("environ") or {}).get(REPLICA_MARKER, "").startswith(base)
    ]
    assert not left, left
