"""JobWatch: which watched jobs just ended, told once, never for a job that had ended already."""

from __future__ import annotations

from typing import Any

from tui_app.model.jobs.states import JobState
from tui_app.model.views.job_view import JobRow
from tui_app.shell.job_watch import JobEnded, JobStalled, JobWatch


def row(job_id: str, state: str, error: str | None = None) -> JobRow:
    job: dict[str, Any] = {"jobId": job_id, "state": state}
    if error:
        job["errorMessage"] = error
    return JobRow.from_job(job)


def by_id(*rows: JobRow) -> dict[str, JobRow]:
    return {r.job_id: r for r in rows}


def test_a_live_job_that_ends_is_told_once_with_its_cause() -> None:
    watch = JobWatch()
    change = watch.toggle(["a"], by_id(row("a", "RUNNING")))
    assert change.watched == ("a",) and watch.watched == {"a"}
    assert "Watching a" in change.message()
    assert watch.observe([row("a", "RUNNING"), row("b", "FAILED")]) == []
    assert watch.observe([row("a", "CANCELLING")]) == []
    ended = watch.observe([row("a", "FAILED", "ValueError: lr must be > 0")])
    assert ended == [JobEnded("a", JobState.FAILED, "ValueError: lr must be > 0")]
    assert watch.watched == frozenset()
    assert watch.observe([row("a", "FAILED")]) == []  # once


def test_a_job_that_had_ended_is_not_watched() -> None:
    watch = JobWatch()
    change = watch.toggle(["a", "b"], by_id(row("a", "SUCCEEDED"), row("b", "QUEUED")))
    assert change.watched == ("b",)
    assert change.already_ended == (("a", JobState.SUCCEEDED),)
    assert "Already ended, nothing to watch: a (SUCCEEDED)." in change.message()
    assert watch.watched == {"b"}


def test_toggle_unwatches_when_every_job_is_watched_else_watches_the_rest() -> None:
    watch = JobWatch()
    rows = by_id(row("a", "RUNNING"), row("b", "RUNNING"))
    watch.toggle(["a"], rows)
    change = watch.toggle(["a", "b"], rows)  # b is not watched yet: watch it, keep a
    assert change.watched == ("b",) and watch.watched == {"a", "b"}
    assert "Watching b" in change.message()
    change = watch.toggle(["a", "b"], rows)
    assert change.unwatched == ("a", "b") and not watch.watched
    assert change.message() == "Stopped watching 2 jobs."


def test_a_submitted_job_is_told_even_when_first_seen_ended() -> None:
    watch = JobWatch()
    watch.watch_submitted(["new"])
    ended = watch.observe([row("new", "FAILED", "boom")])
    assert ended == [JobEnded("new", JobState.FAILED, "boom")]


def test_a_job_watched_before_it_is_listed_tells_nothing_if_first_seen_ended() -> None:
    watch = JobWatch()
    watch.toggle(["ghost"], {})
    assert watch.watched == {"ghost"}
    assert watch.observe([row("ghost", "SUCCEEDED")]) == []  # its end may predate the watch
    assert not watch.watched


def stalled_row(job_id: str, *names: str) -> JobRow:
    replicas = [{"taskName": n, "state": "stalled", "since": "2026-11-22T09:18:00Z"} for n in names]
    stall = {"since": "2026-11-22T09:18:00Z", "replicas": replicas}
    return JobRow.from_job({"jobId": job_id, "state": "RUNNING", "stall": stall})


def test_a_watched_job_that_stalls_is_told_once_per_stall() -> None:
    watch = JobWatch()
    watch.toggle(["a"], by_id(row("a", "RUNNING")))
    told = watch.observe([stalled_row("a", "master-replica-0", "worker-replica-0")])
    assert told == [JobStalled("a", ("master-replica-0", "worker-replica-0"))]
    assert isinstance(told[0], JobStalled)
    assert "master-replica-0, worker-replica-0 print nothing" in told[0].message()
    assert watch.observe([stalled_row("a", "master-replica-0")]) == []  # the same stall
    assert watch.observe([row("a", "RUNNING")]) == []  # it printed again
    assert watch.observe([stalled_row("a", "ps-replica-0")]) == [JobStalled("a", ("ps-replica-0",))]
    assert watch.watched == {"a"}  # a stall is no end


def test_a_stall_under_way_when_the_job_was_watched_is_its_baseline() -> None:
    watch = JobWatch()
    watch.toggle(["a"], by_id(stalled_row("a", "master-replica-0")))
    assert watch.observe([stalled_row("a", "master-replica-0")]) == []
    # An ended job's stall field is history, not a stall (the row shows none).
    assert not JobRow.from_job(
        {"jobId": "b", "state": "CANCELLED", "stall": {"since": "2026-11-22T09:18:00Z"}}
    ).stalled_since
