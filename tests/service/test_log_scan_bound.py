"""A search over every job reads lines for a bounded time a page.

The service runs with ``--log-scan-seconds`` (1 µs) below any id range's read, so each
``entries:list`` page reads one range (by scan, or through the full-text index) and answers
with what it found (often nothing) and a token to go on. Followed to the end, the pages give
exactly what a read of the job's own lines gives, in either order: nothing dropped or doubled
at the ranges' edges.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import serve, unique_id
from tests.support.live_service import PROJECT, LiveService, basic_job
from tests.support.task_packages import task_package
from tui_app.local.logs import entries
from tui_app.local.logs.entries import list_entries
from tui_app.local.logs.log_index import LogIndex, indexed_upto
from tui_app.local.store import LogStore

LINES = 30_000
RARE = (3, 4_096, 4_097, 15_000, LINES - 2)
"""Lines that say NaN: at the store's oldest end, astride the first range's edge, the middle
and the newest end."""

TASK = (
    f"RARE = {RARE!r}\n"
    f"for i in range({LINES}):\n"
    "    print(f'step {i} loss NaN' if i in RARE else f'step {i} loss 0.25', flush=False)\n"
)


@pytest.fixture(scope="module")
def bounded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveService, str]]:
    for svc in serve(tmp_path_factory, "svc-scan-bound", "--log-scan-seconds", "0.000001"):
        uri = svc.stage(task_package(tmp_path_factory.mktemp("many"), "many", TASK))
        job_id = unique_id("scan_bound")
        svc.client().create(basic_job(job_id, uri, pythonModule="many.task"))
        assert svc.wait_state(job_id, timeout=120)["state"] == "SUCCEEDED"
        yield svc, job_id


def _pages(svc: LiveService, flt: str, order: str) -> list[list[dict[str, Any]]]:
    body: dict[str, Any] = {
        "resourceNames": [f"projects/{PROJECT}"],
        "filter": flt,
        "orderBy": order,
        "pageSize": 1000,
    }
    pages: list[list[dict[str, Any]]] = []
    while True:
        status, resp = svc.post("/v2/entries:list", body)
        assert status == 200, resp
        pages.append(resp.get("entries", []))
        if not resp.get("nextPageToken"):
            return pages
        body["pageToken"] = resp["nextPageToken"]


def _messages(pages: list[list[dict[str, Any]]]) -> list[str]:
    return [str(e["jsonPayload"]["message"]) for page in pages for e in page]


@pytest.mark.parametrize("order", ["timestamp asc", "timestamp desc"])
@pytest.mark.parametrize(
    "text",
    [
        '"NaN"',  # one word as a substring: nothing for the index to narrow with, a scan
        'SEARCH("nan")',  # the index's hits, read a range at a time
        '"loss NaN"',  # the index narrows (a word starting "nan"), the text decides
    ],
)
def test_a_search_over_every_job_answers_a_range_at_a_time(
    bounded: tuple[LiveService, str], order: str, text: str
) -> None:
    svc, job_id = bounded
    expected = [f"step {i} loss NaN" for i in RARE]
    if order == "timestamp desc":
        expected.reverse()
    pages = _pages(svc, text, order)
    assert _messages(pages) == expected
    # Bounded: the answer came in several pages, some of them empty but for the token.
    assert len(pages) > 3 and any(not page for page in pages[:-1]), [len(p) for p in pages]
    # The job's own read (its index gives the order) agrees, and is one page.
    scoped = _pages(svc, f'resource.labels.job_id="{job_id}" AND {text}', order)
    assert len(scoped) == 1 and _messages(scoped) == expected


def test_a_filter_with_no_text_pages_every_line_once(bounded: tuple[LiveService, str]) -> None:
    """Every line of the store, over every job, by ranges: the job's lines in order, once."""
    svc, job_id = bounded
    everything = _messages(_pages(svc, 'severity>=DEFAULT AND NOT "no such text"', "timestamp asc"))
    scoped = svc.entries(f'resource.labels.job_id="{job_id}"')
    own = [str(e["jsonPayload"]["message"]) for e in scoped]
    assert everything == own  # one job in this service: every line is the job's
    assert sum(m.startswith("step ") for m in own) == LINES


def _store_of(tmp_path: Path, n: int) -> LogStore:
    """``n`` lines for two jobs, each saying ``loss``; one in 7 says ``NaN loss``; indexed."""
    store = LogStore(tmp_path / "logs.sqlite")
    conn = store.writer()
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO log_entries (project, job_id, task_name, trial_id, log_name, ts_us,"
        " receive_us, severity, message) VALUES ('p',?,'master-replica-0',NULL,'l',?,?,200,?)",
        [
            (f"j{i % 2}", i, i, f"step {i} NaN loss" if i % 7 == 0 else f"step {i} loss 0.5")
            for i in range(1, n + 1)
        ],
    )
    conn.execute("COMMIT")
    LogIndex().catch_up(conn, budget=60.0)
    conn.close()
    return store


def _every_page(store: LogStore, flt: str, order: str) -> list[str]:
    body: dict[str, Any] = {
        "resourceNames": ["projects/p"],
        "filter": flt,
        "orderBy": order,
        "pageSize": 1000,
    }
    out: list[str] = []
    while True:
        resp = list_entries(store, body, scan_seconds=60.0)
        out += [str(e["jsonPayload"]["message"]) for e in resp.get("entries", [])]
        if "nextPageToken" not in resp:
            return out
        body["pageToken"] = resp["nextPageToken"]


@pytest.mark.parametrize("order", ["timestamp asc", "timestamp desc"])
def test_an_index_slower_than_a_scan_gives_way_to_it_with_the_same_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, order: str
) -> None:
    """``"NaN loss"``: every line has a word starting ``loss``, so the index narrows nothing.
    Told that any index read is slower than a scan, a page reads its first range through the
    index and the rest by scan, with the same lines in the same order."""
    store = _store_of(tmp_path, 20_000)
    expected = [f"step {i} NaN loss" for i in range(7, 20_001, 7)]
    if order == "timestamp desc":
        expected.reverse()
    assert _every_page(store, '"NaN loss"', order) == expected
    monkeypatch.setattr(entries, "_SCAN_SECONDS_PER_ID", 0.0)
    assert _every_page(store, '"NaN loss"', order) == expected
    # The rest of the filter is checked on the scanned rows too.
    assert _every_page(store, 'SEARCH("nan") AND severity>=INFO', order) == expected
    assert _every_page(store, 'SEARCH("nan") AND severity>=ERROR', order) == []


def test_a_prefix_of_a_word_in_most_lines_is_read_by_scan(tmp_path: Path) -> None:
    """The exact words decide: ``loss`` is in every line, so ``"NaN loss"`` (words starting
    ``loss``) is read by scan; ``"loss NaN"`` (words starting ``nan``, one line in 7) by the
    index. The answers are the same either way (the test above); only the time differs."""
    store = _store_of(tmp_path, 20_000)
    conn = store.reader()
    upto = indexed_upto(conn)

    def narrows(text: str) -> bool:
        body = {"resourceNames": ["projects/p"], "filter": text, "orderBy": "timestamp desc"}
        page = entries._Page.read(body, 1000, upto)
        return entries._index_narrows(conn, page, upto)

    assert not narrows('"NaN loss"')
    assert narrows('"loss NaN"')
    assert narrows('SEARCH("loss")')  # whole words: FTS5 seeks them, no prefix to merge
