"""The platform's restart rules (tui_app/model/running/restarts.py), as plain decisions."""

from __future__ import annotations

from tui_app.model.running.restarts import (
    BACKOFF_CAP_SECONDS,
    JOB_RETRY_LIMIT,
    REPLICA_RESTART_LIMIT,
    RESTART_LINE_MARK,
    Attempt,
    Cause,
    Ending,
    RestartHistory,
    Verdict,
    backoff_seconds,
    decide,
    exit_is_permanent,
    is_restart_divider,
    job_retry_line,
    restart_line,
    restart_line_task,
    restarts_from_job,
    restarts_resource,
    total_restarts,
    trial_line,
)

LOST = Ending("master-replica-0", Cause.MACHINE_LOST, "its machine restarted")


def _restarted(history: RestartHistory, ending: Ending, times: int) -> None:
    for i in range(times):
        history.attempts.append(Attempt(ending.task_name, ending.detail, f"t{i}"))


def test_a_lost_machine_restarts_the_replica_at_once_and_says_so() -> None:
    outcome = decide(RestartHistory(), LOST)
    assert outcome.verdict is Verdict.RESTART_REPLICA
    assert (outcome.number, outcome.limit, outcome.delay) == (1, REPLICA_RESTART_LIMIT, 0.0)
    assert outcome.message == (
        "master-replica-0 restarted (1 of 5): its machine restarted; resuming"
    )
    assert RESTART_LINE_MARK in outcome.message


def test_each_replica_has_its_own_restarts() -> None:
    history = RestartHistory()
    _restarted(history, LOST, REPLICA_RESTART_LIMIT)
    other = Ending("worker-replica-0", Cause.MACHINE_LOST, "its machine restarted")
    assert decide(history, other).verdict is Verdict.RESTART_REPLICA
    assert decide(history, other).number == 1


def test_a_replica_out_of_restarts_retries_the_whole_job_then_fails_listing_every_attempt() -> None:
    history = RestartHistory()
    _restarted(history, LOST, REPLICA_RESTART_LIMIT)
    retry = decide(history, LOST)
    assert retry.verdict is Verdict.RETRY_JOB and retry.number == 1
    assert retry.limit == JOB_RETRY_LIMIT
    assert "Restarting the whole job (1 of 3)" in retry.message
    # A retry starts the replicas' counts afresh.
    history.attempts.append(Attempt("job", LOST.detail, "r1"))
    history.job_retries = 1
    assert decide(history, LOST).verdict is Verdict.RESTART_REPLICA
    for retry_number in (2, 3):
        _restarted(history, LOST, REPLICA_RESTART_LIMIT)
        history.attempts.append(Attempt("job", LOST.detail, f"r{retry_number}"))
        history.job_retries = retry_number
    _restarted(history, LOST, REPLICA_RESTART_LIMIT)
    failed = decide(history, LOST)
    assert failed.verdict is Verdict.FAIL
    lines = failed.message.splitlines()
    assert lines[0].startswith("The replica master-replica-0 kept failing: its machine restarted")
    assert "5 restarts and 3 job retries" in lines[0]
    assert len(lines) == 1 + len(history.attempts)  # every attempt, oldest first
    assert lines[1].strip().startswith("t0  master-replica-0: its machine restarted")
    assert sum("whole job retried" in line for line in lines) == 3


def test_without_retries_a_replica_out_of_restarts_fails_the_job() -> None:
    history = RestartHistory()
    _restarted(history, LOST, 2)
    outcome = decide(history, LOST, replica_limit=2, retries_allowed=False)
    assert outcome.verdict is Verdict.FAIL


def test_backoff_doubles_from_the_second_attempt_and_is_capped() -> None:
    assert [backoff_seconds(n) for n in range(1, 6)] == [0.0, 1.0, 2.0, 4.0, 8.0]
    assert backoff_seconds(50) == BACKOFF_CAP_SECONDS


def test_a_traceback_oom_or_a_command_that_cannot_start_fails_at_once() -> None:
    assert exit_is_permanent(1, traceback=True, out_of_memory=False)
    assert exit_is_permanent(137, traceback=False, out_of_memory=True)
    assert exit_is_permanent(127, traceback=False, out_of_memory=False)
    assert exit_is_permanent(125, traceback=False, out_of_memory=False, engine_error=True)
    assert not exit_is_permanent(3, traceback=False, out_of_memory=False)
    assert not exit_is_permanent(-9, traceback=False, out_of_memory=False)


def test_history_round_trips_and_ignores_what_it_cannot_read() -> None:
    history = RestartHistory([Attempt("master-replica-0", "its machine restarted", "t")], 1)
    assert RestartHistory.from_json(history.as_json()) == history
    odd = RestartHistory.from_json(
        {
            "attempts": [{"taskName": 3}, "x", {"taskName": "a", "detail": "d", "time": "t"}],
            "jobRetries": "-2",
        }
    )
    assert odd.attempts == [Attempt("a", "d", "t")] and odd.job_retries == 0
    assert RestartHistory.from_json(None) == RestartHistory()


def test_the_resource_counts_restarts_per_replica_and_the_reader_reads_it_back() -> None:
    history = RestartHistory(
        [
            Attempt("master-replica-0", "its machine restarted", "t1"),
            Attempt("ps-replica-0", "its machine restarted", "t1"),
            Attempt("master-replica-0", "it exited with status 3", "t2"),
        ]
    )
    resource = restarts_resource(history)
    assert resource[0] == {
        "taskName": "master-replica-0",
        "count": 2,
        "lastCause": "it exited with status 3",
        "lastTime": "t2",
    }
    read = restarts_from_job({"replicaRestarts": [*resource, {"taskName": "x", "count": 0}, 7]})
    assert [(r.task_name, r.count) for r in read] == [("master-replica-0", 2), ("ps-replica-0", 1)]
    assert total_restarts(read) == 3
    assert restarts_from_job({}) == []


def test_the_restart_line_is_what_the_logs_view_looks_for() -> None:
    line = restart_line("ps-replica-0", 2, 5, "the node 10.0.0.3 died")
    assert line == "ps-replica-0 restarted (2 of 5): the node 10.0.0.3 died; resuming"


def test_a_whole_job_retry_line_is_a_divider_too_but_only_from_the_service() -> None:
    line = job_retry_line(1, 3, "worker-replica-0 was lost (its node 10.0.0.3 died).")
    assert line.startswith("Restarting the whole job (1 of 3): worker-replica-0 was lost")
    assert is_restart_divider("service", line)
    assert is_restart_divider("service", restart_line("master-replica-0", 1, 5, "x"))
    assert not is_restart_divider("master-replica-0", line)
    assert not is_restart_divider("service", "Job is running.")


def test_a_trials_restart_line_names_its_replica_behind_the_trial() -> None:
    line = trial_line("3", restart_line("master-replica-0", 1, 5, "its machine restarted"))
    assert line == "Trial 3: master-replica-0 restarted (1 of 5): its machine restarted; resuming"
    assert restart_line_task("service", line) == "master-replica-0"
    assert is_restart_divider("service", line)
    assert restart_line_task("service", trial_line("3", "started with --lr=0.1.")) is None
    assert restart_line_task("service", "Trial three things: a restarted (1 of 5): x") is None
