"""``api.log_search.LogSearch``: a search over every job, one page at a time, from a real service.

Two jobs print numbered lines holding a word; the pages must hold every such line of both jobs
once, newest first, each with its job, and a hit's context must be its own replica's neighbours.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import serve, unique_id
from tests.support.live_service import basic_job
from tests.support.task_packages import task_package
from tui_app.api.errors import ApiCallError
from tui_app.api.log_search import LogSearch
from tui_app.model.logs.log_search import SearchHit, search_filter

PROJECT = "grep-pages-project"
TASK = (
    "import sys\n"
    "for i in range(7):\n"
    "    print(f'{sys.argv[1]} line {i}', flush=True)\n"
    "    print(f'{sys.argv[1]} needle {i}', flush=True)\n"
)


@pytest.fixture(scope="module")
def searched(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LogSearch, str, str]]:
    """A search on a service of its own whose two jobs have ended: (search, job a, job b)."""
    for svc in serve(tmp_path_factory, "svc-grep-pages"):
        uri = svc.stage(task_package(tmp_path_factory.mktemp("pages"), "grep_pages", TASK))
        client = svc.client(PROJECT)
        a, b = unique_id("pages_a"), unique_id("pages_b")
        for job_id in (a, b):
            client.create(basic_job(job_id, uri, job_id, pythonModule="grep_pages.task"))
        for job_id in (a, b):
            assert svc.wait_state(job_id, timeout=90, project=PROJECT)["state"] == "SUCCEEDED"
        yield LogSearch(svc.connection(), PROJECT), a, b


def _all_pages(search: LogSearch, flt: str, size: int) -> list[SearchHit]:
    hits: list[SearchHit] = []
    token: str | None = None
    while True:
        page = search.page(flt, size, token)
        assert len(page.hits) <= size
        hits += page.hits
        token = page.next_page_token
        assert page.full == (token is not None)
        if token is None:
            return hits


def test_pages_hold_every_hit_once_newest_first(searched: tuple[LogSearch, str, str]) -> None:
    search, a, b = searched
    hits = _all_pages(search, search_filter("NEEDLE"), 3)
    assert sorted((h.job_id, h.line.text) for h in hits) == sorted(
        (job, f"{job} needle {i}") for job in (a, b) for i in range(7)
    )
    keys = [h.line.key for h in hits]
    assert keys == sorted(keys, reverse=True) and len(set(keys)) == len(keys)
    assert {h.line.task_name for h in hits} == {"master-replica-0"}
    # A filter as typed: one job's, the whole-word search.
    one = _all_pages(search, f'resource.labels.job_id="{a}" AND SEARCH("needle 3")', 10)
    assert [(h.job_id, h.line.text) for h in one] == [(a, f"{a} needle 3")]


def test_context_is_the_hits_own_replicas_neighbours(searched: tuple[LogSearch, str, str]) -> None:
    search, a, _ = searched
    (hit,) = search.page(f'"{a} needle 3"').hits
    before, after = search.context(hit, 2)
    assert [ln.text for ln in before] == [f"{a} needle 2", f"{a} line 3"]
    assert [ln.text for ln in after] == [f"{a} line 4", f"{a} needle 4"]
    assert search.context(hit, 0) == ([], [])


def test_a_filter_the_service_cannot_read_is_its_invalid_argument(
    searched: tuple[LogSearch, str, str],
) -> None:
    search, _, _ = searched
    with pytest.raises(ApiCallError) as raised:
        search.page('SEARCH("needle"')
    assert raised.value.status == "INVALID_ARGUMENT" and raised.value.status_code == 400
    assert "Invalid filter: " in raised.value.message
