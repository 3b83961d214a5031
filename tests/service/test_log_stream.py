"""``LogStream`` against a real service: follow a live job to its end, survive a restart, page back.

The ground truth is always the service's own answer, read with raw ``entries:list`` calls after
the job ended: the stream must deliver exactly those entries, once each, in the same order.
"""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import _start, _stop, unique_id
from tests.support.live_service import CLUSTER, PROJECT, LiveService, basic_job, free_port
from tui_app.api.connection import Connection
from tui_app.api.errors import ApiCallError
from tui_app.api.jobs_client import make_credentials
from tui_app.api.log_stream import LogStream, normalize_timestamp
from tui_app.model.logs.log_line import LogLine

STEPS = 60
REPLICAS = ("master-replica-0", "worker-replica-0", "worker-replica-1")
FLOOD = 20_000
FOLLOW_TIMEOUT = 120.0


def _stream(service: LiveService, job_id: str, **kw: Any) -> LogStream:
    conn = Connection(service.url, make_credentials(service.token), "test")
    return LogStream(conn, PROJECT, job_id, **kw)


def _truth(service: LiveService, job_id: str, task: str | None = None) -> list[dict[str, Any]]:
    """Every entry of the job, as the service pages them out (oldest first)."""
    flt = f'resource.labels.job_id="{job_id}" AND timestamp>="1970-01-01T00:00:00Z"'
    if task:
        flt += f' AND resource.labels.task_name="{task}"'
    return service.entries(flt)


def _ids(lines: list[LogLine]) -> list[str]:
    return [ln.insert_id for ln in lines]


def _truth_ids(entries: list[dict[str, Any]]) -> list[str]:
    return [e["insertId"] for e in entries]


def _steps(lines: list[LogLine], task: str) -> list[int]:
    return [
        int(m.group(1))
        for ln in lines
        if ln.task_name == task and (m := re.match(r"step (\d+) loss=", ln.text))
    ]


class Follower:
    """``follow`` in a thread, recording batches and error reports."""

    def __init__(self, stream: LogStream, get_job: Any, on_batch: Any = None) -> None:
        self.stream = stream
        self.lines: list[LogLine] = []
        self.batches = 0
        self.errors: list[ApiCallError | None] = []
        self.stop = threading.Event()
        self._get_job = get_job
        self._on_batch = on_batch
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        self.stream.follow(self.stop, self._lines, self._get_job, lambda: 0.1, self.errors.append)

    def _lines(self, lines: list[LogLine]) -> None:
        self.lines += lines
        self.batches += 1
        if self._on_batch:
            self._on_batch(lines)

    def start(self) -> Follower:
        self.thread.start()
        return self

    def join(self, timeout: float = FOLLOW_TIMEOUT) -> None:
        self.thread.join(timeout)
        if self.thread.is_alive():
            self.stop.set()
            self.thread.join(10)
            pytest.fail(f"follow() did not stop by itself within {timeout}s")


@pytest.fixture(scope="module")
def custom_job(service: LiveService, trainer_sdist: Path) -> tuple[str, Follower]:
    """A CUSTOM job (master, 2 workers, ps) followed from before it runs until follow() stops."""
    uri = service.stage(trainer_sdist)
    client = service.client()
    job_id = unique_id("stream_custom")
    client.create(
        basic_job(
            job_id,
            uri,
            *("--steps", str(STEPS), "--log-every", "1", "--sleep", "0.02"),
            **CLUSTER,
        )
    )
    follower = Follower(_stream(service, job_id), lambda: client.get(job_id)).start()
    follower.join()
    return job_id, follower


def test_follow_delivers_every_line_once_in_order_and_stops(
    service: LiveService, custom_job: tuple[str, Follower]
) -> None:
    job_id, f = custom_job
    job = service.client().get(job_id)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    assert f.stream.finished and not f.stop.is_set()
    assert f.errors == []
    assert f.batches > 1, "the job should have been streamed while it ran, not read at the end"

    truth = _truth(service, job_id)
    assert _ids(f.lines) == _truth_ids(truth)
    assert [ln.text for ln in f.lines] == [e["jsonPayload"]["message"] for e in truth]
    keys = [ln.key for ln in f.lines]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    assert [ln.timestamp for ln in f.lines] == [normalize_timestamp(e["timestamp"]) for e in truth]

    for task in REPLICAS:
        steps = _steps(f.lines, task)
        assert steps, f"no step lines from {task}"
        assert steps == sorted(set(steps)), f"{task}: steps repeated or out of order"
        short = task.replace("-replica", "")
        mine = [ln for ln in f.lines if ln.task_name == task and ln.text.startswith("step ")]
        assert all(ln.text.endswith(f"task={short}") for ln in mine)
    assert max(max(_steps(f.lines, t)) for t in REPLICAS) >= STEPS
    assert {ln.task_name for ln in f.lines} >= {*REPLICAS, "ps-replica-0", "service"}


def test_task_name_filter_returns_one_replica(
    service: LiveService, custom_job: tuple[str, Follower]
) -> None:
    job_id, f = custom_job
    stream = _stream(service, job_id, task_name="worker-replica-1")
    lines = stream.poll()
    assert lines and {ln.task_name for ln in lines} == {"worker-replica-1"}
    assert lines == [ln for ln in f.lines if ln.task_name == "worker-replica-1"]
    assert stream.poll() == []


def test_tail_then_older_pages_back_to_the_start(
    service: LiveService, custom_job: tuple[str, Follower]
) -> None:
    job_id, f = custom_job
    everything = f.lines
    stream = _stream(service, job_id)
    assert stream.older(10) == []  # nothing taken yet: nothing is "before" it
    last = stream.tail(25)
    assert last == everything[-25:]
    assert stream.poll() == []  # poll continues after the tail: nothing new
    assert stream.older(30) == everything[-55:-25]
    assert stream.older(7) == everything[-62:-55]
    rest = stream.older(100_000)
    assert rest == everything[:-62]
    assert stream.older(10) == []

    # A stream that starts at the beginning has nothing older.
    fresh = _stream(service, job_id)
    assert fresh.poll() == everything
    assert fresh.older(5) == []


@pytest.mark.parametrize("ordered_ties", [False, True], ids=["cloud-rule", "local-order"])
def test_tail_and_older_cut_inside_equal_timestamps(
    service: LiveService, package_uri: str, ordered_ties: bool
) -> None:
    """A flood shares timestamps between hundreds of lines: the cuts must fall between them.

    Both ways: re-reading the group at a cut (Cloud Logging does not order ties), and trusting
    the local service's (timestamp, insertId) order.
    """
    client = service.client()
    job_id = unique_id("stream_ties")
    client.create(basic_job(job_id, package_uri, "--flood", "3000", "--steps", "2"))
    service.wait_state(job_id)
    truth = _truth_ids(_truth(service, job_id))
    stamps = [e["timestamp"] for e in _truth(service, job_id)]
    assert len(set(stamps)) < len(stamps) / 10, "expected groups of equal timestamps"

    stream = _stream(service, job_id, ordered_ties=ordered_ties)
    got = stream.tail(333)
    assert _ids(got) == truth[-333:]
    while page := stream.older(777):
        got = page + got
    assert _ids(got) == truth


def test_poll_failure_raises_and_keeps_the_cursor(service: LiveService, package_uri: str) -> None:
    client = service.client()
    job_id = unique_id("stream_err")
    client.create(basic_job(job_id, package_uri, "--steps", "3", "--log-every", "1"))
    service.wait_state(job_id)
    truth = _truth_ids(_truth(service, job_id))

    dead = LogStream(
        Connection(f"http://127.0.0.1:{free_port()}", make_credentials(None), "dead"),
        PROJECT,
        job_id,
    )
    with pytest.raises(ApiCallError) as err:
        dead.poll()
    assert err.value.unreachable and dead.newest is None

    # A failure on the fourth page of a many-page poll: nothing is taken, the retry gets all.
    stream = _stream(service, job_id, page_size=2)
    good = stream._request
    calls = 0

    def flaky(**kw: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 4:
            raise OSError("connection reset")
        return good(**kw)

    stream._request = flaky
    with pytest.raises(ApiCallError) as err:
        stream.poll()
    assert err.value.status_code == 0 and (stream.newest, stream.oldest) == (None, None)
    first = stream.poll()
    assert _ids(first) == truth and calls > 4
    stream._request = lambda **kw: (_ for _ in ()).throw(OSError("connection reset"))
    with pytest.raises(ApiCallError):
        stream.poll()
    assert stream.newest == first[-1].key
    stream._request = good
    assert stream.poll() == []

    # Polls capped at a batch size continue exactly where the last one stopped.
    capped = _stream(service, job_id, batch_limit=4)
    parts = []
    while part := capped.poll():
        assert len(part) <= 4
        parts += part
    assert parts == first

    wrong = LogStream(
        Connection(service.url, make_credentials("not-the-token"), "wrong"), PROJECT, job_id
    )
    with pytest.raises(ApiCallError) as err:
        wrong.poll()
    assert err.value.status_code == 401 and err.value.status == "UNAUTHENTICATED"


def test_follow_resumes_across_a_service_restart(tmp_path: Path, trainer_sdist: Path) -> None:
    """Stop the service mid-flood and start it again: every flood line arrives exactly once.

    Polls take at most ``BATCH`` lines, so the flood arrives in ~20 batches; the service is
    stopped (which kills the job) after the fifth and started again 1.5 s later on the same port.
    """
    batch, stop_after = 1000, 5
    port = free_port()
    state = tmp_path / "state"
    holder = {"svc": _start(state, port=port)}
    try:
        uri = holder["svc"].stage(trainer_sdist)
        job_id = unique_id("stream_restart")
        holder["svc"].client().create(
            basic_job(job_id, uri, "--flood", str(FLOOD), "--steps", "400", "--sleep", "0.05")
        )
        restarted = threading.Event()
        flood_batches: list[int] = []

        def restart_later() -> None:
            time.sleep(1.5)
            holder["svc"] = _start(state, port=port)
            restarted.set()

        def on_batch(lines: list[LogLine]) -> None:
            if any(ln.text.startswith("flood ") for ln in lines):
                flood_batches.append(len(follower.lines))
                if len(flood_batches) == stop_after:
                    _stop(holder["svc"])  # the next poll finds nobody
                    threading.Thread(target=restart_later, daemon=True).start()

        def get_job() -> dict[str, Any]:
            return holder["svc"].client().get(job_id)

        stream = _stream(holder["svc"], job_id, batch_limit=batch)
        follower = Follower(stream, get_job, on_batch).start()
        follower.join()
        assert restarted.is_set()

        floods = [
            int(m.group(1)) for ln in follower.lines if (m := re.match(r"flood (\d+) ", ln.text))
        ]
        assert floods == list(range(FLOOD))
        assert len(flood_batches) > stop_after, "the stop should have come mid-flood"
        errors = [e for e in follower.errors if e is not None]
        assert errors and all(e.unreachable for e in errors)
        assert follower.errors[-1] is None  # reported once it resumed
        truth = _truth(holder["svc"], job_id)
        assert _ids(follower.lines) == _truth_ids(truth)
        job = holder["svc"].client().get(job_id)
        assert job["state"] == "FAILED" and job.get("endTime")  # the stop ended it
    finally:
        _stop(holder["svc"])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-02-01T00:02:00Z", "2024-02-01T00:02:00.000000000Z"),
        ("2024-02-01T00:02:00.5Z", "2024-02-01T00:02:00.500000000Z"),
        ("2024-02-01T00:02:00.123456Z", "2024-02-01T00:02:00.123456000Z"),
        ("2024-02-01T00:02:00.123456789Z", "2024-02-01T00:02:00.123456789Z"),
        ("2024-02-01T01:02:00.1+01:00", "2024-02-01T00:02:00.100000000Z"),
        ("2024-02-01T00:02:00.1-0130", "2024-02-01T01:32:00.100000000Z"),
    ],
)
def test_timestamps_get_one_width(text: str, expected: str) -> None:
    assert normalize_timestamp(text) == expected
