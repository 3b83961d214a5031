"""The poll's RowCache: rows rebuilt only for changed jobs, and the last order reused when the
changed jobs keep their places; every answer is the order a full sort would give."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

import pytest

from tui_app.api.jobs_api import JobsApi
from tui_app.model.views.job_view import JobRow, default_key
from tui_app.shell import row_cache
from tui_app.shell.row_cache import REUSE_ORDER_MAX_ADDED, RowCache


class Listing:
    """Answers ``iter_jobs`` like the jobs client, from a list the test edits."""

    def __init__(self, jobs: list[dict[str, Any]]) -> None:
        self.jobs = jobs

    def iter_jobs(self, filter_text: str | None = None) -> Iterator[dict[str, Any]]:
        yield from self.jobs


def job(job_id: Any, state: str = "SUCCEEDED", etag: str = "e1", **extra: Any) -> dict[str, Any]:
    return {"jobId": job_id, "state": state, "etag": etag, **extra}


def collect(cache: RowCache, listing: Listing) -> tuple[list[JobRow], bool]:
    return cache.collect(cast(JobsApi, listing))


def expected(listing: Listing) -> list[str]:
    """The ids in the order a fresh sort of the listed jobs gives (the last of an id wins)."""
    latest = {str(j.get("jobId", "")): j for j in listing.jobs}
    return [r.job_id for r in sorted(map(JobRow.from_job, latest.values()), key=default_key)]


def ids(rows: list[JobRow]) -> list[str]:
    return [r.job_id for r in rows]


def many(n: int, base: str = "m") -> list[dict[str, Any]]:
    return [job(f"{base}{i % 7}_202611{10 + i % 20}_{i % 240000:06d}") for i in range(n)]


def test_unchanged_jobs_keep_their_rows_and_the_order() -> None:
    listing = Listing(many(300))
    cache = RowCache()
    first, changed = collect(cache, listing)
    assert changed and ids(first) == expected(listing)
    again, changed = collect(cache, listing)
    assert not changed and again is first


def test_a_changed_state_is_shown_in_the_same_place() -> None:
    listing = Listing(many(300))
    cache = RowCache()
    first, _ = collect(cache, listing)
    target = listing.jobs[42]
    listing.jobs[42] = {
        **target,
        "state": "FAILED",
        "etag": "e2",
        "endTime": "2026-11-22T00:00:00Z",
    }
    rows, changed = collect(cache, listing)
    assert changed and ids(rows) == ids(first) == expected(listing)
    assert {r.job_id: r.state.value for r in rows}[target["jobId"]] == "FAILED"
    untouched = ids(first).index(listing.jobs[0]["jobId"])
    assert rows[untouched] is first[untouched]  # not rebuilt


def test_new_jobs_are_inserted_and_gone_ones_dropped() -> None:
    listing = Listing(many(300))
    cache = RowCache()
    collect(cache, listing)
    del listing.jobs[10:20]
    listing.jobs += [job("m3_20261201_000000"), job("aaa"), job("ZZ_20261101_000000")]
    rows, changed = collect(cache, listing)
    assert changed and ids(rows) == expected(listing)
    del listing.jobs[:5]
    rows, changed = collect(cache, listing)
    assert changed and ids(rows) == expected(listing)


def test_a_job_that_moves_is_sorted_again() -> None:
    listing = Listing([*many(50), job("adhoc", createTime="2026-11-20T00:00:00Z")])
    cache = RowCache()
    collect(cache, listing)
    # Without a stamp, createTime places the job: a new one moves it.
    listing.jobs[-1] = job("adhoc", etag="e2", createTime="2026-11-29T00:00:00Z")
    rows, changed = collect(cache, listing)
    assert changed and ids(rows) == expected(listing)


def test_many_new_jobs_and_odd_listings_give_the_sorted_order() -> None:
    listing = Listing(many(100))
    cache = RowCache()
    collect(cache, listing)
    listing.jobs += many(REUSE_ORDER_MAX_ADDED + 10, base="n")
    rows, _ = collect(cache, listing)
    assert ids(rows) == expected(listing)
    # An id listed twice, jobs without an etag, and ids that are not strings.
    listing.jobs += [job("dup"), job("dup", "FAILED", etag="e2"), job("noetag", etag="")]
    rows, _ = collect(cache, listing)
    assert ids(rows) == expected(listing)
    listing.jobs += [job(None), job(7)]
    rows, _ = collect(cache, listing)
    assert ids(rows) == expected(listing)
    listing.jobs.append(job("b_20261122_000000"))
    rows, _ = collect(cache, listing)
    assert ids(rows) == expected(listing)


def test_a_long_first_list_is_shown_as_it_comes_sorted_and_only_the_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every check (one a page of 100) is past the time; the rows make it worth a showing.
    monkeypatch.setattr(row_cache, "FIRST_PROGRESS_SECONDS", 0.0)
    monkeypatch.setattr(row_cache, "FIRST_PROGRESS_ROWS", 250)
    monkeypatch.setattr(row_cache, "NEXT_PROGRESS_SECONDS", 0.0)
    listing = Listing(many(1000))
    cache = RowCache()
    shown: list[list[str]] = []
    rows, _ = cache.collect(cast(JobsApi, listing), progress=lambda r: shown.append(ids(r)))
    assert [len(s) for s in shown] == [300, 400, 500, 600, 700, 800, 900, 1000]
    for part in shown:  # the jobs read so far, each time in the order a full sort gives them
        assert part == expected(Listing(listing.jobs[: len(part)]))
    assert ids(rows) == expected(listing)
    # Once a list is known, a poll is never shown in parts: it replaces the list whole.
    again: list[list[str]] = []
    cache.collect(cast(JobsApi, listing), progress=lambda r: again.append(ids(r)))
    assert again == []


def test_a_first_list_that_comes_quickly_is_not_shown_in_parts() -> None:
    listing = Listing(many(1000))
    shown: list[int] = []
    RowCache().collect(cast(JobsApi, listing), progress=lambda r: shown.append(len(r)))
    assert shown == []  # 1,000 rows take milliseconds: well before FIRST_PROGRESS_SECONDS


def test_the_parts_thin_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """After the first part, the next waits NEXT_PROGRESS_SECONDS: a listing quicker than that
    is shown once in part, then whole (each part sorts and redraws everything read)."""
    monkeypatch.setattr(row_cache, "FIRST_PROGRESS_SECONDS", 0.0)
    monkeypatch.setattr(row_cache, "FIRST_PROGRESS_ROWS", 250)
    shown: list[int] = []
    RowCache().collect(cast(JobsApi, Listing(many(1000))), progress=lambda r: shown.append(len(r)))
    assert shown == [300]
