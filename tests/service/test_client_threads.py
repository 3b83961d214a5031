"""One JobsClient called from several threads at once, as the TUI's workers call it.

httplib2 is not thread-safe: with one shared ``Http`` a get could read another request's answer,
or wait out the whole timeout (the job detail stayed "Loading…" while the list poller ran).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from tests.conftest import unique_id
from tests.support.live_service import LiveService, basic_job

THREADS = 6
CALLS = 40


def test_concurrent_gets_and_lists_each_get_their_own_answer(
    service: LiveService, package_uri: str
) -> None:
    client = service.client()
    ids = [unique_id(f"threads{i}") for i in range(THREADS)]
    for job_id in ids:
        client.create(basic_job(job_id, package_uri, "--steps", "1"))

    def hammer(job_id: str) -> list[str]:
        got: list[str] = []
        for n in range(CALLS):
            if n % 4 == 3:
                listed = client.list_jobs()
                got.append(job_id if any(j["jobId"] == job_id for j in listed) else "missing")
            else:
                got.append(str(client.get(job_id)["jobId"]))
        return got

    with ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(hammer, ids))
    # A call that hung on a socket another thread was using raises ApiCallError (timed out).
    for job_id, got in zip(ids, results, strict=True):
        assert got == [job_id] * CALLS
