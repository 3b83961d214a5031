"""``LogFeed`` against a real service: open (with and without retry), tail, history, follow.

The feed is what the logs screen and ``tui-app jobs logs`` share, so these pin the parts they
rely on: an unknown job is the server's NOT_FOUND, a transient failure on the first read is
retried and reported, history pages back from a line to the start, follow ends when the job
does, and a failure that is not transient ends follow instead of being retried for ever.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import unique_id
from tests.support.live_service import PROJECT, LiveService, basic_job, free_port
from tui_app.api.errors import ApiCallError
from tui_app.api.jobs_client import JobsClient, make_credentials
from tui_app.api.log_feed import LogFeed
from tui_app.model.logs.log_line import LogLine


def _feed(service: LiveService, job_id: str, **kw: Any) -> LogFeed:
    client = service.client()
    conn = service.connection()
    return LogFeed(PROJECT, job_id, lambda: client.get(job_id), lambda: conn, **kw)


def _truth(service: LiveService, job_id: str) -> list[str]:
    flt = f'resource.labels.job_id="{job_id}" AND timestamp>="1970-01-01T00:00:00Z"'
    return [e["insertId"] for e in service.entries(flt)]


def _ids(lines: list[LogLine]) -> list[str]:
    return [ln.insert_id for ln in lines]


@pytest.fixture(scope="module")
def finished(service: LiveService, package_uri_module: str) -> str:
    job_id = unique_id("feed_done")
    service.client().create(
        basic_job(job_id, package_uri_module, "--steps", "40", "--log-every", "1")
    )
    service.wait_state(job_id)
    return job_id


@pytest.fixture(scope="module")
def package_uri_module(service: LiveService, trainer_sdist: Path) -> str:
    return service.stage(trainer_sdist)


def test_reading_before_open_is_a_programming_error(service: LiveService) -> None:
    with pytest.raises(RuntimeError):
        _feed(service, "never_opened").tail(5)


def test_an_unknown_job_is_not_found_and_not_retried(service: LiveService) -> None:
    feed = _feed(service, "no_such_job")
    with pytest.raises(ApiCallError) as err:
        feed.open()
    assert err.value.status == "NOT_FOUND"

    reports: list[ApiCallError | None] = []
    stop = threading.Event()
    assert feed.open_retrying(stop, reports.append) is None
    assert [r.status if r else None for r in reports] == ["NOT_FOUND"]
    assert feed.job is None and feed.connection is None


def test_a_transient_first_read_is_retried_then_reported_resumed(
    service: LiveService, finished: str
) -> None:
    """The first jobs.get finds nobody (a service restarting); the second one answers."""
    dead = JobsClient(f"http://127.0.0.1:{free_port()}", PROJECT, make_credentials(None))
    live = service.client()
    clients = iter([dead, live])
    conn = service.connection()
    feed = LogFeed(PROJECT, finished, lambda: next(clients).get(finished), lambda: conn)
    reports: list[ApiCallError | None] = []

    job = feed.open_retrying(threading.Event(), reports.append)

    assert job is not None and job["jobId"] == finished and feed.job == job
    assert len(reports) == 2 and reports[0] is not None and reports[0].unreachable
    assert reports[1] is None
    assert _ids(feed.read_all()) == _truth(service, finished)


def test_a_set_stop_ends_the_retries(service: LiveService) -> None:
    dead = JobsClient(f"http://127.0.0.1:{free_port()}", PROJECT, make_credentials(None))
    feed = LogFeed(PROJECT, "j", lambda: dead.get("j"), lambda: service.connection())
    stop = threading.Event()
    stop.set()
    reports: list[ApiCallError | None] = []
    assert feed.open_retrying(stop, reports.append) is None
    assert len(reports) == 1 and reports[0] is not None and reports[0].transient


def test_tail_then_history_pages_back_to_the_start(service: LiveService, finished: str) -> None:
    truth = _truth(service, finished)
    feed = _feed(service, finished)
    feed.open()
    last = feed.tail(20)
    assert _ids(last) == truth[-20:]

    pages = list(feed.history(last[0].key, 10_000, 15))
    assert all(0 < len(p) <= 15 for p in pages)
    older = [ln for page in reversed(pages) for ln in page]
    assert _ids(older + last) == truth

    capped = list(feed.history(last[0].key, 25, 15))
    assert [len(p) for p in capped] == [15, 10]
    assert _ids(capped[0]) == truth[-35:-20]

    stop = threading.Event()
    stop.set()
    assert list(feed.history(last[0].key, 100, 10, stop=stop)) == []


def test_history_of_one_replica(service: LiveService, finished: str) -> None:
    feed = _feed(service, finished)
    feed.open()
    everything = feed.read_all()
    master = [ln for ln in everything if ln.task_name == "master-replica-0"]
    pages = list(feed.history(everything[-1].key, 10_000, 10_000, task_name="master-replica-0"))
    assert len(pages) == 1 and pages[0] == [ln for ln in master if ln.key < everything[-1].key]


def test_follow_a_live_job_to_its_end(service: LiveService, package_uri_module: str) -> None:
    client = service.client()
    job_id = unique_id("feed_live")
    client.create(
        basic_job(
            job_id, package_uri_module, "--steps", "30", "--log-every", "1", "--sleep", "0.05"
        )
    )
    feed = _feed(service, job_id, batch_limit=7)
    feed.open()
    lines: list[LogLine] = []
    reports: list[ApiCallError | None] = []
    stop = threading.Event()
    done = threading.Thread(
        target=feed.follow, args=(stop, lines.extend, lambda: 0.1, reports.append), daemon=True
    )
    done.start()
    done.join(120)
    if done.is_alive():
        stop.set()
        pytest.fail("follow() did not stop by itself when the job ended")
    assert reports == []
    assert _ids(lines) == _truth(service, job_id)
    assert feed.job is not None and feed.job["state"] == "SUCCEEDED"  # refreshed while following


def test_a_finished_job_read_at_open_ends_follow_without_another_read(
    service: LiveService, finished: str
) -> None:
    client = service.client()
    reads: list[str] = []

    def read_job() -> dict[str, Any]:
        reads.append(finished)
        return client.get(finished)

    conn = service.connection()
    feed = LogFeed(PROJECT, finished, read_job, lambda: conn)
    feed.open()
    lines: list[LogLine] = []
    feed.follow(threading.Event(), lines.extend, lambda: 0.05, lambda exc: None)
    assert _ids(lines) == _truth(service, finished)
    assert reads == [finished]


def test_a_failure_that_is_not_transient_ends_follow(service: LiveService, finished: str) -> None:
    """The logs answer 401 (a wrong token): follow raises it at once, it is not retried."""
    client = service.client()
    wrong = service.connection(token="not-the-token")
    feed = LogFeed(PROJECT, finished, lambda: client.get(finished), lambda: wrong)
    feed.open()
    reports: list[ApiCallError | None] = []
    with pytest.raises(ApiCallError) as err:
        feed.follow(threading.Event(), lambda lines: None, lambda: 0.05, reports.append)
    assert err.value.status_code == 401 and reports == []
