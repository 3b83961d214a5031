"""``JobWaiter`` on a Vertex AI profile (the stand-in of ``tests/support/vertex_stub``): no long
poll is tried there, jobs.get is polled at the cloud's pace, and a change is still seen."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from tests.support.vertex_replay import PROJECT
from tests.support.vertex_stub import serve
from tui_app.api.connection import Connection, connect
from tui_app.api.job_waiter import CLOUD_POLL_SECONDS, JobChanged, JobWaiter
from tui_app.config.settings import Profile


@pytest.fixture
def vertex() -> Iterator[Connection]:
    server = serve(0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    profile = Profile(
        "stub",
        kind="vertex",
        project=PROJECT,
        region="us-central1",
        endpoint=url,
        logging_endpoint=url,
        token="stub",
    )
    try:
        yield connect(profile)
    finally:
        server.shutdown()
        server.server_close()


def test_a_vertex_job_is_polled_and_its_change_seen(vertex: Connection) -> None:
    client = vertex.jobs(PROJECT)
    job = next(j for j in client.list_jobs() if j["state"] == "RUNNING")
    assert JobWaiter(vertex, [(PROJECT, job)]).interval == CLOUD_POLL_SECONDS
    with JobWaiter(vertex, [(PROJECT, job)], interval=0.1) as waiter:
        assert not waiter.long_poll  # Vertex AI has no :wait; it is not even asked
        client.cancel(job["jobId"])
        event = waiter.next_event(30)
    assert isinstance(event, JobChanged), event
    assert (event.job_id, event.state.value) == (job["jobId"], "CANCELLING")
