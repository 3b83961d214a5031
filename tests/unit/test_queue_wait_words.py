"""Why a queued job waits, in words (issue 29): the ``:queue`` answer as the detail shows it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tui_app.model.running.queue_wait import wait_rows, wait_summary
from tui_app.model.views.describe import summarize

BEHIND_CLUSTER: dict[str, Any] = {
    "position": 1,
    "needs": {"replicas": 1, "slots": 1, "gpus": 0},
    "machine": {"slots": 2, "gpus": 0},
    "free": {"slots": 0, "gpus": 0},
    "running": [{"jobId": "census_dist_20261127_083000", "slots": 2, "gpus": 0,
                 "state": "RUNNING"}],
    "ahead": [],
}  # fmt: skip


def test_a_job_behind_a_cluster_says_who_holds_the_slots_and_what_it_needs() -> None:
    rows = dict(wait_rows(BEHIND_CLUSTER))
    assert rows == {
        "Needs": "1 CPU slot",
        "Machine": "2 CPU slots; free now: 0 CPU slots",
        "Held by": "census_dist_20261127_083000 (2 CPU slots, RUNNING)",
        "Starts": "when 1 more CPU slot is free",
    }


def test_a_job_bigger_than_the_machine_and_jobs_ahead() -> None:
    info = {
        "position": 3,
        "needs": {"replicas": 4, "slots": 2, "gpus": 1},
        "machine": {"slots": 2, "gpus": 1},
        "free": {"slots": 1, "gpus": 1},
        "running": [{"jobId": "a", "slots": 1, "gpus": 0, "state": "PREPARING"}],
        "ahead": [{"jobId": "b", "slots": 1, "gpus": 0}, {"jobId": "c", "slots": 2, "gpus": 1}],
    }
    rows = dict(wait_rows(info))
    assert rows["Needs"] == "2 CPU slots and 1 GPU (4 replicas sharing all of the machine's 2)"
    assert rows["Machine"] == "2 CPU slots and 1 GPU; free now: 1 CPU slot and 1 GPU"
    assert rows["Ahead"] == "b (1 CPU slot), c (2 CPU slots and 1 GPU)"
    assert rows["Starts"] == "after the 2 jobs ahead of it have started (jobs start in queue order)"


def test_many_holders_are_cut_with_a_count() -> None:
    running = [{"jobId": f"j{i}", "slots": 1, "gpus": 0, "state": "RUNNING"} for i in range(5)]
    rows = dict(wait_rows({**BEHIND_CLUSTER, "running": running}))
    assert rows["Held by"].endswith("j2 (1 CPU slot, RUNNING), and 2 more")


def test_nothing_for_a_job_that_does_not_wait_or_an_odd_answer() -> None:
    assert wait_rows({}) == []
    assert wait_summary({}) == ""
    assert wait_rows({"position": "x", "needs": 3}) == []
    # Odd fields are left out, never a crash.
    assert dict(wait_rows({"position": 1, "needs": "?", "running": [7]}))["Held by"] == (
        "? (0 CPU slots)"
    )


def test_the_log_line_says_it_all_in_one_sentence() -> None:
    assert wait_summary(BEHIND_CLUSTER) == (
        "Waiting for resources: needs 1 CPU slot; the machine has 2 CPU slots; free now: "
        "0 CPU slots; held by census_dist_20261127_083000 (2 CPU slots, RUNNING); "
        "starts when 1 more CPU slot is free."
    )


def test_the_detail_shows_the_section_only_while_the_job_is_queued() -> None:
    job = {"jobId": "mnist_large_20261127_083001", "state": "QUEUED", "jobPosition": "1"}
    now = datetime(2026, 11, 27, 8, 31, tzinfo=UTC)
    titles = [s.title for s in summarize(job, now, queue=BEHIND_CLUSTER)]
    assert titles[:2] == ["Job Overview", "Waiting for resources"]
    running = {**job, "state": "RUNNING"}
    assert "Waiting for resources" not in [
        s.title for s in summarize(running, now, queue=BEHIND_CLUSTER)
    ]
