"""Per-replica CPU and memory (issue 6): the sampler, the ``:metrics`` extension, its client.

Real replicas on a real service sampling every 0.3 s: a trainer that burns a core while a child
it spawned holds 120 MiB, so the numbers only add up when the whole process tree is summed. The
downsampling that bounds storage is tested on the store directly, with a simulated week.
"""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.conftest import unique_id
from tests.support.burner import build_burner, burner_job, sampling_service
from tests.support.live_service import CLUSTER, PROJECT, LiveService
from tui_app.api.errors import ApiCallError
from tui_app.api.jobs_client import make_credentials
from tui_app.api.metrics_client import MetricsClient, UsageHistory
from tui_app.local.metrics import (
    BUCKET_SECONDS,
    MAX_BUCKETS,
    RAW_SECONDS,
    Sample,
    SampleStore,
    downsample,
)
from tui_app.local.store import JobStore

MiB = 1024 * 1024


@pytest.fixture(scope="module")
def metrics_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveService]:
    """A real service sampling every 0.3 s (the default 2 s would make these tests slow)."""
    yield from sampling_service(tmp_path_factory, "svc-metrics")


@pytest.fixture(scope="module")
def burner_uri(metrics_service: LiveService, tmp_path_factory: pytest.TempPathFactory) -> str:
    return metrics_service.stage(build_burner(tmp_path_factory.mktemp("burner")))


def metrics(svc: LiveService, job_id: str, since: str | None = None) -> tuple[int, Any]:
    query = f"?since={quote(since)}" if since else ""
    return svc.request("GET", f"/v1/projects/{PROJECT}/jobs/{job_id}:metrics{query}")


def samples_of(body: dict[str, Any], task: str = "master-replica-0") -> list[dict[str, Any]]:
    [replica] = [r for r in body["replicas"] if r["taskName"] == task]
    return list(replica["samples"])


def test_busy_tree_is_measured_and_kept_after_the_job(
    metrics_service: LiveService, burner_uri: str, tmp_path: Path
) -> None:
    job_id = unique_id("burn")
    stop = tmp_path / "stop"
    metrics_service.client().create(
        burner_job(
            job_id, burner_uri, "--seconds", "90", "--child-mb", "120", "--until-file", str(stop)
        )
    )
    deadline = time.monotonic() + 80
    busy: list[dict[str, Any]] = []
    seen: list[dict[str, Any]] = []
    while not busy or len(seen) < 3:
        assert time.monotonic() < deadline, metrics(metrics_service, job_id)
        time.sleep(0.3)
        status, body = metrics(metrics_service, job_id)
        assert status == 200, body
        if body["replicas"]:
            seen = samples_of(body)
            # Over a quarter of a core: a spinning parent on a machine loaded by parallel tests
            # (an idle tree reads ~0); over 120 MiB only when the child's memory is summed.
            busy = [s for s in seen if s["cpuPercent"] > 25 and int(s["memoryBytes"]) > 120 * MiB]
    stop.touch()  # seen busy, and long enough: the burner may end now
    assert body["sampleInterval"] == "0.3s"
    assert isinstance(busy[0]["memoryBytes"], str)  # int64 on the wire is a string
    job = metrics_service.wait_state(job_id)
    assert job["state"] == "SUCCEEDED", job
    status, after = metrics(metrics_service, job_id)
    assert status == 200
    kept = samples_of(after)
    assert len(kept) >= max(3, len(samples_of(body)))  # still there once the job ended
    times = [s["time"] for s in kept]
    assert times == sorted(times) and len(set(times)) == len(times)
    assert all(t.endswith("Z") and len(t) == len("2026-11-22T09:30:00.000000Z") for t in times)
    # Nothing is sampled after the end: a later read returns the same samples.
    time.sleep(1.0)
    assert samples_of(metrics(metrics_service, job_id)[1]) == kept


def test_since_returns_only_newer_samples_for_every_replica(
    metrics_service: LiveService, burner_uri: str
) -> None:
    job_id = unique_id("cluster")
    metrics_service.client().create(burner_job(job_id, burner_uri, "--seconds", "4", **CLUSTER))
    metrics_service.wait_state(job_id, timeout=90)
    status, body = metrics(metrics_service, job_id)
    assert status == 200
    names = [r["taskName"] for r in body["replicas"]]
    assert names == ["master-replica-0", "worker-replica-0", "worker-replica-1", "ps-replica-0"]
    for name in names:
        assert len(samples_of(body, name)) >= 3, name
    # One moment, one time for every replica: a cursor from any of them splits them all.
    every = sorted({s["time"] for name in names for s in samples_of(body, name)})
    middle = every[len(every) // 2]
    status, newer = metrics(metrics_service, job_id, since=middle)
    assert status == 200
    for name in names:
        expected = [s for s in samples_of(body, name) if s["time"] > middle]
        assert samples_of(newer, name) == expected
    status, none = metrics(metrics_service, job_id, since=every[-1])
    assert status == 200
    assert [r["taskName"] for r in none["replicas"]] == names
    assert all(r["samples"] == [] for r in none["replicas"])
    # The same through the client, incrementally.
    client = MetricsClient(metrics_service.url, PROJECT, make_credentials(metrics_service.token))
    history = UsageHistory()
    first = client.read(job_id)
    assert first is not None
    history.add(first, full=True)
    assert history.since == every[-1]
    again = client.read(job_id, history.since)
    assert again is not None and not history.add(again, full=False)
    assert [r.task_name for r in history.replicas()] == names
    assert history.interval_seconds == 0.3


@pytest.fixture(scope="module")
def short_job(metrics_service: LiveService, burner_uri: str) -> str:
    """A job that ran for a second, sampled."""
    job_id = unique_id("short")
    metrics_service.client().create(burner_job(job_id, burner_uri, "--seconds", "1"))
    metrics_service.wait_state(job_id)
    return job_id


def test_unknown_job_bad_since_and_no_token(metrics_service: LiveService, short_job: str) -> None:
    status, body = metrics(metrics_service, "no_such_job")
    assert status == 404
    assert body["error"]["status"] == "NOT_FOUND"
    assert "projects/test-project/jobs/no_such_job" in body["error"]["message"]
    status, body = metrics(metrics_service, short_job, since="2026-11-22T09:30:00Z")
    assert status == 200 and [r["taskName"] for r in body["replicas"]] == ["master-replica-0"]
    status, body = metrics(metrics_service, short_job, since="yesterday")
    assert status == 400
    assert body["error"]["status"] == "INVALID_ARGUMENT"
    assert body["error"]["details"][0]["fieldViolations"][0]["field"] == "since"
    status, body = metrics_service.request(
        "GET", f"/v1/projects/{PROJECT}/jobs/{short_job}:metrics", token=None
    )
    assert status == 401 and body["error"]["status"] == "UNAUTHENTICATED"


# -- the client where there is no such endpoint --------------------------------------------------


class _NoMetrics(http.server.BaseHTTPRequestHandler):
    """A server without the extension: what a cloud ml v1 endpoint answers."""

    status = 404

    def do_GET(self) -> None:
        body = json.dumps(
            {"error": {"code": self.status, "message": "not here", "status": "UNIMPLEMENTED"}}
        ).encode()
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.mark.parametrize("status", [404, 405, 501])
def test_client_reports_not_available(status: int) -> None:
    handler = type("Handler", (_NoMetrics,), {"status": status})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        assert MetricsClient(url, "p", make_credentials(None)).read("job") is None
    finally:
        server.shutdown()
        server.server_close()


def test_client_errors_are_api_call_errors(metrics_service: LiveService, short_job: str) -> None:
    client = MetricsClient(metrics_service.url, PROJECT, make_credentials(metrics_service.token))
    assert client.read(unique_id("missing")) is None  # 404: nothing to show
    with pytest.raises(ApiCallError) as since:
        client.read(short_job, since="not a time")
    assert since.value.status_code == 400
    assert since.value.violations[0]["field"] == "since"
    with pytest.raises(ApiCallError) as bad:
        MetricsClient(metrics_service.url, PROJECT, make_credentials("wrong-token")).read("x")
    assert bad.value.status_code == 401 and bad.value.status == "UNAUTHENTICATED"
    with pytest.raises(ApiCallError) as down:
        MetricsClient("http://127.0.0.1:9", PROJECT, make_credentials(None), timeout=2).read("x")
    assert down.value.unreachable


# -- bounded storage ---------------------------------------------------------------------------


def test_a_week_of_samples_stays_bounded_and_keeps_totals(tmp_path: Path) -> None:
    """A week at one sample every 2 s, compacted hourly (the sampler does it every minute)."""
    db = tmp_path / "jobs.sqlite"
    JobStore(db).close()
    store = SampleStore(db)
    key = ("p", "week", "master-replica-0")
    start_ms = 1_790_000_000_000
    step_ms = 2000
    total = 7 * 24 * 3600 * 1000 // step_ms
    per_hour = 3600 * 1000 // step_ms
    spike_at = 1234
    cpu_sum = 0.0
    for hour in range(total // per_hour):
        rows = []
        for i in range(hour * per_hour, (hour + 1) * per_hour):
            cpu = 400.0 if i == spike_at else float(i % 100)
            mem = 9 * 1024 * MiB if i == spike_at else 100 * MiB + i % 7
            cpu_sum += cpu
            rows.append((key, Sample(start_ms + i * step_ms, cpu, cpu, mem)))
        store.add(rows)
        store.compact(key, start_ms + (hour + 1) * per_hour * step_ms)
    kept = store.read(*key[:2])[key[2]]
    raw = [s for s in kept if s.span_ms == 0]
    buckets = [s for s in kept if s.span_ms > 0]
    assert len(raw) <= RAW_SECONDS * 1000 / step_ms + 1
    assert 0 < len(buckets) <= MAX_BUCKETS
    widths = {b.span_ms for b in buckets}
    assert len(widths) == 1  # one width: evenly spaced
    (width,) = widths
    assert width >= BUCKET_SECONDS * 1000 and (width // int(BUCKET_SECONDS * 1000)).bit_count() == 1
    assert all(b.t_ms % width == 0 for b in buckets)
    assert sum(s.n for s in kept) == total  # every sample is in exactly one row
    assert sum(s.cpu * s.n for s in kept) == pytest.approx(cpu_sum)  # means weighted by count
    assert max(s.cpu_max for s in kept) == 400.0  # the spike survives as a peak...
    assert max(s.mem for s in kept) == 9 * 1024 * MiB
    spike_bucket = next(b for b in buckets if b.cpu_max == 400.0)
    assert spike_bucket.cpu < 400.0  # ...while the mean is a mean
    assert len(kept) <= RAW_SECONDS / 2 + MAX_BUCKETS + 1
    # On the wire a merged sample says what it covers.
    wire = spike_bucket.to_json()
    assert wire["span"] == f"{width // 1000}s" and wire["cpuPercentMax"] == 400.0
    store.close()


def test_downsample_halves_resolution_only_when_over_the_cap() -> None:
    raw = [Sample(i * 1000, float(i), float(i), i) for i in range(120)]
    merged = downsample([], raw, 10_000, max_buckets=12)
    assert [b.t_ms for b in merged] == [i * 10_000 for i in range(12)]
    assert merged[0].n == 10 and merged[0].cpu == pytest.approx(4.5) and merged[0].mem == 9
    halved = downsample(merged, [], 10_000, max_buckets=6)
    assert [b.span_ms for b in halved] == [20_000] * 6
    assert halved[0].n == 20 and halved[0].cpu == pytest.approx(9.5) and halved[0].cpu_max == 19
