"""The stall rules (tui_app/model/running/stalls.py), as plain decisions."""

from __future__ import annotations

from tui_app.model.running.stalls import ReplicaActivity, job_stall, replica_stall, stall_from_job

T = 600.0  # the threshold
NOW = 10_000.0


def activity(
    name: str,
    *,
    last_output: float | None = None,
    idle_since: float | None = None,
    started: float = 0.0,
    cpu: float | None = 0.0,
) -> ReplicaActivity:
    return ReplicaActivity(name, started, last_output, idle_since, cpu, "last", None)


def test_a_replica_printing_within_the_threshold_is_neither_quiet_nor_stalled() -> None:
    assert replica_stall(activity("w", last_output=NOW - T + 1, idle_since=0.0), NOW, T) is None


def test_silent_but_busy_is_quiet_and_silent_and_idle_is_stalled() -> None:
    quiet = replica_stall(activity("w", last_output=NOW - T, idle_since=None, cpu=95.0), NOW, T)
    assert quiet is not None and quiet.state == "quiet"
    # Idle for less than the threshold: quiet still.
    short = replica_stall(activity("w", last_output=NOW - 2 * T, idle_since=NOW - T / 2), NOW, T)
    assert short is not None and short.state == "quiet"
    stalled = replica_stall(activity("w", last_output=NOW - 2 * T, idle_since=NOW - T - 5), NOW, T)
    assert stalled is not None and stalled.state == "stalled"
    assert stalled.since == NOW - T - 5  # silence and idleness both began by then


def test_a_replica_that_never_printed_is_silent_since_it_started() -> None:
    a = activity("ps", last_output=None, started=NOW - T, idle_since=NOW - T)
    got = replica_stall(a, NOW, T)
    assert got is not None and got.state == "stalled" and got.since == NOW - T
    assert replica_stall(activity("ps", started=NOW - 5, idle_since=0.0), NOW, T) is None


def test_a_job_is_stalled_only_when_every_replica_is_quiet_and_one_is_stalled() -> None:
    ps = activity("ps-replica-0", started=0.0, idle_since=0.0)  # idle, silent for ages
    busy = activity("worker-replica-0", last_output=NOW - 1, idle_since=None, cpu=90.0)
    assert job_stall([ps, busy], NOW, T) is None  # a worker still prints: the job goes on
    computing = activity("worker-replica-0", last_output=NOW - T, cpu=90.0)
    assert job_stall([ps, computing], NOW, T) is not None  # all quiet, ps stalled
    assert job_stall([computing], NOW, T) is None  # quiet but busy: not stalled
    assert job_stall([], NOW, T) is None


def test_the_stalled_replicas_come_first_and_the_job_since_is_the_earliest_stall() -> None:
    a = activity("worker-replica-1", last_output=NOW - 2 * T, idle_since=NOW - T - 10)
    b = activity("master-replica-0", last_output=NOW - 3 * T, idle_since=NOW - T - 50)
    c = activity("ps-replica-0", last_output=NOW - T, cpu=50.0)
    stall = job_stall([c, a, b], NOW, T)
    assert stall is not None
    assert [r.task_name for r in stall.replicas] == [
        "master-replica-0",
        "worker-replica-1",
        "ps-replica-0",
    ]
    assert [r.state for r in stall.replicas] == ["stalled", "stalled", "quiet"]
    assert stall.since == NOW - T - 50
    assert [r.task_name for r in stall.stalled] == ["master-replica-0", "worker-replica-1"]


def test_the_resource_field_is_read_defensively() -> None:
    job = {
        "stall": {
            "since": "2026-12-07T10:00:00Z",
            "replicas": [
                {
                    "taskName": "worker-replica-0",
                    "state": "stalled",
                    "since": "2026-12-07T10:00:00Z",
                    "lastLine": "step 5",
                    "cpuPercent": 0.0,
                },
                {"taskName": "x", "state": "asleep", "since": "2026-12-07T10:00:00Z"},
                {"taskName": 3, "state": "quiet", "since": "2026-12-07T10:00:00Z"},
                "junk",
            ],
        }
    }
    stall = stall_from_job(job)
    assert stall is not None
    assert [(r.task_name, r.state, r.last_line) for r in stall.replicas] == [
        ("worker-replica-0", "stalled", "step 5")
    ]
    assert stall_from_job({}) is None
    assert stall_from_job({"stall": {"since": "yesterday"}}) is None
