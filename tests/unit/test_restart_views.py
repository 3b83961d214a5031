"""A job's replica restarts as the views show them (issue 42): the list's ``↻N``, the detail's
"Restarts" section (and ``jobs describe``'s), the log line a divider is drawn for, the watch's
toast, and ``jobs wait`` going on through a restart."""

from __future__ import annotations

import argparse
import copy
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, cast

import pytest

from tests.support.fixed_jobs import RESTARTED_JOB, RESTARTS, FixedClient
from tui_app.api.jobs_api import JobsApi
from tui_app.config.settings import Settings
from tui_app.entry.jobs_cli import _run
from tui_app.entry.wait_cli import wait_command
from tui_app.model.jobs.states import JobState
from tui_app.model.running.restarts import (
    WHOLE_JOB,
    ReplicaRestarts,
    restart_line,
    restart_line_task,
    restart_note,
)
from tui_app.model.views.describe import render_text, restart_rows, summarize
from tui_app.model.views.job_view import JobRow, restart_marker
from tui_app.shell.job_watch import JobEnded, JobRestarted, JobWatch

NOW = datetime(2026, 11, 22, 9, 30, tzinfo=UTC)
MASTER = "master-replica-0"


def restarted(job_id: str, state: str = "RUNNING", **counts: int) -> JobRow:
    """A row whose replicas (``master``, ``worker``, ``job``) restarted this often."""
    names = {"master": MASTER, "worker": "worker-replica-0", "job": WHOLE_JOB}
    job: dict[str, Any] = {"jobId": job_id, "state": state}
    if counts:
        job["replicaRestarts"] = [
            {
                "taskName": names[key],
                "count": n,
                "lastCause": f"cause {n}",
                "lastTime": "2026-11-22T09:00:00Z",
            }
            for key, n in counts.items()
        ]
    return JobRow.from_job(job)


# -- the restart line (model/running/restarts.py) ------------------------------------------------


def test_only_the_services_restart_line_names_a_restarted_replica() -> None:
    line = restart_line(MASTER, 1, 5, "its machine restarted")
    assert line == "master-replica-0 restarted (1 of 5): its machine restarted; resuming"
    assert restart_line_task("service", line) == MASTER
    # A trainer printing the same words restarted nothing.
    assert restart_line_task(MASTER, line) is None
    # The service's other lines, a whole-job retry among them, are not restarts of a replica.
    for other in (
        "The local jobs service restarted: resumed the job with 2 replicas.",
        "Retrying the whole job (1 of 3): master-replica-0 used its 5 restarts and it died.",
        "the replica restarted (see above)",
        "",
    ):
        assert restart_line_task("service", other) is None, other


def test_a_restart_note_says_the_count_of_the_limit_until_that_would_be_wrong() -> None:
    one = ReplicaRestarts(MASTER, 1, "its machine restarted", "2026-11-22T09:00:00Z")
    assert restart_note(one) == "master-replica-0 restarted (1 of 5): its machine restarted"
    # Past the limit, or once the whole job was retried (each replica's restarts start anew),
    # "of 5" would be false: the count alone.
    assert (
        restart_note(ReplicaRestarts(MASTER, 7, "x", ""))
        == "master-replica-0 restarted (7 times): x"
    )
    assert (
        restart_note(one, retried=True)
        == "master-replica-0 restarted (1 time): its machine restarted"
    )
    job = ReplicaRestarts(WHOLE_JOB, 1, "worker-replica-0 kept failing", "")
    assert restart_note(job) == "the whole job retried (1 of 3): worker-replica-0 kept failing"
    assert restart_note(ReplicaRestarts(MASTER, 2, "", "")) == "master-replica-0 restarted (2 of 5)"


# -- the list's row (model/views/job_view.py) ----------------------------------------------------


def test_a_rows_restarts_and_its_marker() -> None:
    row = JobRow.from_job(RESTARTED_JOB)
    assert [r.task_name for r in row.restarts] == [MASTER, "worker-replica-1"]
    assert row.restart_count == 3
    assert restart_marker(row.restart_count) == "↻3"
    # A job that never restarted: nothing, as before (and the shared empty tuple).
    plain = JobRow.from_job({"jobId": "a", "state": "RUNNING"})
    assert plain.restarts == () and plain.restart_count == 0
    assert restart_marker(plain.restart_count) == ""
    # What cannot be read is left out, never raised.
    odd = JobRow.from_job({"jobId": "b", "replicaRestarts": [{"taskName": 3}, "x", {"count": 2}]})
    assert odd.restarts == () and odd.restart_count == 0
    assert JobRow.from_job({"jobId": "c", "replicaRestarts": "lots"}).restart_count == 0


def test_rows_that_differ_only_in_restarts_differ() -> None:
    """The list's strip cache keys on the row: a new restart must draw a new line."""
    assert restarted("a", master=1) != restarted("a", master=2)
    assert hash(restarted("a", master=1)) == hash(restarted("a", master=1))


# -- the detail and `jobs describe` (model/views/describe.py) ------------------------------------


def test_the_detail_has_a_restarts_section_per_replica_whole_job_last() -> None:
    job = {
        **RESTARTED_JOB,
        "replicaRestarts": [
            {"taskName": WHOLE_JOB, "count": 1, "lastCause": "master kept failing",
             "lastTime": "2026-11-22T09:25:00Z"},
            *RESTARTS,
        ],
    }  # fmt: skip
    sections = {s.title: s.rows for s in summarize(job, NOW)}
    assert sections["Restarts"] == [
        (MASTER, "1 restart, last 2026-11-22 09:12:00 UTC: its machine restarted"),
        ("worker-replica-1", "2 restarts, last 2026-11-22 09:20:00 UTC: it exited with status 3"),
        ("Whole job", "retried 1 time, last 2026-11-22 09:25:00 UTC: master kept failing"),
    ]
    text = render_text(summarize(job, NOW))
    assert "Restarts\n  master-replica-0: 1 restart, last 2026-11-22 09:12:00 UTC" in text
    # Under the overview and the error, above the inputs.
    assert text.index("Job Overview") < text.index("Restarts") < text.index("Training Input")


def test_no_restarts_no_section_and_odd_times_are_shown_as_sent() -> None:
    assert "Restarts" not in render_text(summarize({"jobId": "a", "state": "RUNNING"}, NOW))
    odd = ReplicaRestarts(MASTER, 1, "", "yesterday")
    assert restart_rows([odd]) == [(MASTER, "1 restart, last yesterday")]
    assert restart_rows([ReplicaRestarts(MASTER, 2, "lost", "")]) == [(MASTER, "2 restarts: lost")]


def test_jobs_describe_prints_the_restarts(capsys: pytest.CaptureFixture[str]) -> None:
    args = argparse.Namespace(
        action="describe", job_id="restarted_2026", **{"json": False, "yaml": False}
    )
    assert _run(args, cast(JobsApi, FixedClient([RESTARTED_JOB]))) == 0
    out = capsys.readouterr().out
    restarts = out[out.index("Restarts\n") :].split("\n\n")[0].splitlines()
    assert restarts[0] == "Restarts"
    assert restarts[1].startswith("  master-replica-0: 1 restart, last 2026-11-22 ")
    assert restarts[1].endswith(": its machine restarted")
    assert restarts[2].startswith("  worker-replica-1: 2 restarts, last ")
    assert restarts[2].endswith(": it exited with status 3")


# -- the watch (shell/job_watch.py) ---------------------------------------------------------------


def test_a_watched_jobs_new_restarts_are_told_not_the_ones_it_had() -> None:
    watch = JobWatch()
    watch.toggle(["a"], {"a": restarted("a", master=1)})
    assert watch.observe([restarted("a", master=1)]) == []  # its baseline: no news
    events = watch.observe([restarted("a", master=2, worker=1)])
    assert len(events) == 1 and isinstance(events[0], JobRestarted)
    told = events[0]
    assert [(r.task_name, r.count) for r in told.restarts] == [(MASTER, 2), ("worker-replica-0", 1)]
    assert told.title() == "Replicas restarted"
    assert told.message() == (
        "a: master-replica-0 restarted (2 of 5): cause 2\n"
        "a: worker-replica-0 restarted (1 of 5): cause 1"
    )
    assert watch.observe([restarted("a", master=2, worker=1)]) == []  # once
    assert watch.watched == {"a"}  # a restart is no end: still watched
    # Its end is still told as before, and ends the watch.
    ended = watch.observe([restarted("a", "FAILED", master=2, worker=1)])
    assert ended == [JobEnded("a", JobState.FAILED, None)]
    assert not watch.watched


def test_a_submitted_job_tells_every_restart_and_a_job_listed_late_takes_a_baseline() -> None:
    watch = JobWatch()
    watch.watch_submitted(["new"])
    events = watch.observe([restarted("new", master=1)])
    assert [e.message() for e in events if isinstance(e, JobRestarted)] == [
        "new: master-replica-0 restarted (1 of 5): cause 1"
    ]
    watch.toggle(["ghost"], {})  # watched by id before any list had it
    assert watch.observe([restarted("ghost", master=3)]) == []
    assert len(watch.observe([restarted("ghost", master=4)])) == 1


def test_unwatching_forgets_the_baseline_and_a_retry_changes_the_words() -> None:
    watch = JobWatch()
    rows = {"a": restarted("a", master=1)}
    watch.toggle(["a"], rows)
    watch.toggle(["a"], rows)  # unwatched
    watch.toggle(["a"], {"a": restarted("a", master=2)})
    assert watch.observe([restarted("a", master=2)]) == []
    (event,) = watch.observe([restarted("a", master=3, job=1)])
    assert isinstance(event, JobRestarted)
    assert event.retried
    assert event.message() == (
        "a: master-replica-0 restarted (3 times): cause 3\n"
        "a: the whole job retried (1 of 3): cause 1"
    )


def test_a_toast_names_three_replicas_and_counts_the_rest() -> None:
    many = tuple(ReplicaRestarts(f"worker-replica-{i}", 1, "lost", "") for i in range(5))
    lines = JobRestarted("a", many).message().splitlines()
    assert lines[:3] == [f"a: worker-replica-{i} restarted (1 of 5): lost" for i in range(3)]
    assert lines[3:] == ["… and 2 more replicas"]
    assert JobRestarted("a", (ReplicaRestarts(WHOLE_JOB, 1, "x", ""),)).title() == "Job retried"


# -- `jobs wait` through a restart (entry/wait_cli.py) ---------------------------------------------


class _Answers:
    """The service's ``:wait`` long poll, answering the next of ``answers`` at each call."""

    def __init__(self, answers: list[dict[str, Any]]) -> None:
        self.answers = answers
        self.asked = 0

    def wait_for_change(self, job_id: str, etag: str | None, timeout: float) -> dict[str, Any]:
        self.asked += 1
        return self.answers.pop(0)

    def close(self) -> None:
        """Nothing to close."""


class _Connection:
    """What ``wait_command`` asks of a connection: jobs.get, and the long poll."""

    vertex = False

    def __init__(self, first: dict[str, Any], later: list[dict[str, Any]]) -> None:
        self.client = FixedClient([first])
        self.poll = _Answers(later)

    def jobs(self, project: str) -> FixedClient:
        return self.client

    def metrics(self, project: str) -> _Answers:
        return self.poll


@pytest.fixture
def job_versions() -> Iterator[list[dict[str, Any]]]:
    """The restarted job running (etag 1), restarted once more (2), then succeeded (3)."""
    running = copy.deepcopy(RESTARTED_JOB)
    again = copy.deepcopy(running)
    again["etag"] = "2"
    again["replicaRestarts"][0]["count"] = 2
    done = {**copy.deepcopy(again), "etag": "3", "state": "SUCCEEDED"}
    done["endTime"] = "2026-11-22T09:40:00Z"
    yield [running, again, done]


def test_jobs_wait_keeps_waiting_through_a_restart(
    job_versions: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    running, again, done = job_versions
    connection = _Connection(running, [again, done])
    args = argparse.Namespace(job_ids=[running["jobId"]], timeout="5m", any=False, notify=False)
    status = wait_command(args, connection, "demo-project", Settings())  # type: ignore[arg-type]
    out = capsys.readouterr().out
    assert status == 0
    assert connection.poll.asked == 2  # the restart was read, and the wait went on past it
    assert out.splitlines() == [f"{running['jobId']}  SUCCEEDED  34m30s"]
