"""``api/job_waiter.JobWaiter`` against a real service: the long poll (not polling) where the
service has it, the list past eight jobs, a lost service retried and resumed, a refusal ending
the wait, and ``stop`` reaching a caller blocked on the next event.

The clients are the real ones, counted on their way through (``support/counting_clients``):
whether the long poll is used is read from which requests were made, not from how fast an end
was seen.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any

from tests.conftest import _start, unique_id
from tests.support.counting_clients import counting
from tests.support.live_service import PROJECT, LiveService, basic_job
from tui_app.api.job_waiter import THREADS_AT_MOST, JobChanged, JobWaiter, ReadTrouble

LONG = ("--steps", "100000", "--sleep", "0.1")
NEVER = 3600.0
"""A polling interval no test waits out: an end seen under it was not seen by polling."""


def events_until_ended(waiter: JobWaiter, count: int, timeout: float = 120.0) -> list[Any]:
    """Every event until ``count`` jobs have ended (or a fatal trouble)."""
    deadline = time.monotonic() + timeout
    events: list[Any] = []
    ended = 0
    while ended < count:
        left = deadline - time.monotonic()
        assert left > 0, f"only {ended} of {count} ended: {events}"
        event = waiter.next_event(left)
        if event is None:
            continue
        events.append(event)
        if isinstance(event, JobChanged) and event.ended:
            ended += 1
        if isinstance(event, ReadTrouble) and event.fatal:
            break
    return events


def submit(service: LiveService, package_uri: str, base: str, *args: str) -> dict[str, Any]:
    job_id = unique_id(base)
    return service.client().create(basic_job(job_id, package_uri, *args))


def test_the_long_poll_sees_an_end_without_polling(service: LiveService, package_uri: str) -> None:
    job = submit(service, package_uri, "waiter_long_poll", "--steps", "30", "--sleep", "0.05")
    conn = counting(service)
    with JobWaiter(conn, [(PROJECT, job)], interval=NEVER) as waiter:
        events = events_until_ended(waiter, 1)
    changes = [e for e in events if isinstance(e, JobChanged)]
    assert changes[-1].state.value == "SUCCEEDED", events
    # Each change came once, in lifecycle order, each with a new etag.
    states = [e.state.value for e in changes]
    assert states == sorted(set(states), key=states.index)
    assert len({e.job["etag"] for e in changes}) == len(changes)
    assert conn.calls["get"] == 0
    assert conn.calls["wait_for_change"] >= 1


def test_without_the_long_poll_jobs_get_is_polled(service: LiveService, package_uri: str) -> None:
    """The control for the test above: the counting sees polling where there is polling."""
    job = submit(service, package_uri, "waiter_polled", "--steps", "30", "--sleep", "0.05")
    conn = counting(service)
    with JobWaiter(conn, [(PROJECT, job)], long_poll=False, interval=0.2) as waiter:
        events = events_until_ended(waiter, 1)
    assert [e for e in events if isinstance(e, JobChanged)][-1].state.value == "SUCCEEDED"
    assert conn.calls["get"] >= 1
    assert conn.calls["wait_for_change"] == 0


def test_past_eight_jobs_each_project_is_listed(service: LiveService, package_uri: str) -> None:
    jobs = [
        submit(service, package_uri, f"waiter_many_{i}", "--steps", "5")
        for i in range(THREADS_AT_MOST + 1)
    ]
    conn = counting(service)
    with JobWaiter(conn, [(PROJECT, j) for j in jobs], interval=0.2) as waiter:
        assert waiter.mode == "list"
        events = events_until_ended(waiter, len(jobs))
    ended = {e.job_id for e in events if isinstance(e, JobChanged) and e.ended}
    assert ended == {j["jobId"] for j in jobs}
    assert conn.calls["list_jobs"] >= 1
    assert conn.calls["wait_for_change"] == 0 and conn.calls["get"] == 0


def test_jobs_that_had_already_ended_are_not_read(service: LiveService, package_uri: str) -> None:
    job = submit(service, package_uri, "waiter_ended", "--steps", "1")
    ended = service.wait_state(job["jobId"])
    conn = counting(service)
    with JobWaiter(conn, [(PROJECT, ended)]) as waiter:
        assert waiter.live == []
        assert waiter.next_event(0) is None
    assert not conn.calls


def test_a_refusal_ends_that_jobs_wait(service: LiveService, package_uri: str) -> None:
    """Not transient (a 401 here): asking again would get the same answer."""
    job = submit(service, package_uri, "waiter_refused", *LONG)
    try:
        with JobWaiter(counting(service, token="wrong"), [(PROJECT, job)]) as waiter:
            (event,) = events_until_ended(waiter, 1)
        assert isinstance(event, ReadTrouble) and event.fatal
        assert event.job_id == job["jobId"] and event.error is not None
        assert event.error.status_code == 401
    finally:
        service.client().cancel(job["jobId"])


def test_stop_reaches_a_caller_blocked_on_the_next_event(
    service: LiveService, package_uri: str
) -> None:
    job = submit(service, package_uri, "waiter_stopped", *LONG)
    try:
        # RUNNING, as last stored: nothing more is written to it until it ends, so the only
        # thing that can wake the caller is stop() (a QUEUED job's start would answer first).
        job = service.wait_state(job["jobId"], ("RUNNING",))
        waiter = JobWaiter(counting(service), [(PROJECT, job)], interval=NEVER)
        waiter.start()
        got: list[Any] = ["nothing yet"]
        blocked = threading.Thread(target=lambda: got.__setitem__(0, waiter.next_event(None)))
        blocked.start()
        waiter.stop()
        blocked.join(30)
        assert not blocked.is_alive(), "next_event did not return after stop"
        assert got == [None]
    finally:
        service.client().cancel(job["jobId"])


def test_a_lost_service_is_retried_and_the_wait_resumes(
    restartable: tuple[list[LiveService], str],
) -> None:
    svcs, uri = restartable
    svc = svcs[0]
    job = submit(svc, uri, "waiter_lost", *LONG)
    # From a RUNNING job: one still starting could change (and answer the long poll) before
    # the kill, and the first event would be that change.
    job = svc.wait_state(job["jobId"], ("RUNNING",), timeout=60)
    conn = counting(svc)
    with JobWaiter(conn, [(PROJECT, job)], interval=NEVER) as waiter:
        assert conn.wait_for_call("wait_for_change")  # the long poll is open
        os.kill(svc.proc.pid, signal.SIGKILL)
        svc.proc.wait(10)
        event = waiter.next_event(60)
        assert isinstance(event, ReadTrouble) and not event.fatal, event
        assert event.error is not None and event.error.transient
        port = int(svc.url.rsplit(":", 1)[1])
        svcs.append(_start(svc.state_dir, port=port))
        # Warnings while it was away, then "resumed", then the job's news as before.
        while isinstance(event, ReadTrouble) and event.error is not None:
            event = waiter.next_event(60)
        assert event == ReadTrouble(PROJECT, job["jobId"], None)
        svcs[-1].client().cancel(job["jobId"])
        events = events_until_ended(waiter, 1)
    assert [e.state.value for e in events if isinstance(e, JobChanged)][-1] == "CANCELLED"
