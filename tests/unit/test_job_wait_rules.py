"""``jobs wait``'s exit status, its end lines and its progress line (``model/notify/job_wait``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tui_app.model.jobs.states import JobState
from tui_app.model.notify.job_wait import (
    EXIT_CANCELLED,
    EXIT_FAILED,
    EXIT_SUCCEEDED,
    EXIT_TIMED_OUT,
    Ended,
    end_line,
    progress_line,
    wait_over,
    wait_status,
)

T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
S, F, C = JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED


def ended(*states: JobState, minutes: list[int] | None = None) -> list[Ended]:
    """Jobs j0, j1... ended in these states, at T0 + ``minutes`` (default: in order)."""
    at = minutes or list(range(len(states)))
    return [
        Ended(f"j{i}", state, T0 + timedelta(minutes=m))
        for i, (state, m) in enumerate(zip(states, at, strict=True))
    ]


@pytest.mark.parametrize(
    ("states", "status"),
    [
        ((S,), EXIT_SUCCEEDED),
        ((F,), EXIT_FAILED),
        ((C,), EXIT_CANCELLED),
        ((S, S, S), EXIT_SUCCEEDED),
        ((S, F, S), EXIT_FAILED),
        ((S, C, S), EXIT_CANCELLED),
        # A failure and a cancellation: the failure is what a script must hear about first.
        ((C, F), EXIT_FAILED),
        ((F, C), EXIT_FAILED),
    ],
)
def test_all_jobs_the_first_status_in_the_table_that_applies(
    states: tuple[JobState, ...], status: int
) -> None:
    assert wait_status(ended(*states), len(states), first_only=False, timed_out=False) == status


def test_a_time_limit_that_ran_out_is_124_unless_a_job_already_failed_or_was_cancelled() -> None:
    assert wait_status([], 2, first_only=False, timed_out=True) == EXIT_TIMED_OUT
    assert wait_status(ended(S), 2, first_only=False, timed_out=True) == EXIT_TIMED_OUT
    assert wait_status(ended(F), 2, first_only=False, timed_out=True) == EXIT_FAILED
    assert wait_status(ended(C), 3, first_only=False, timed_out=True) == EXIT_CANCELLED


def test_any_the_job_that_ended_first_decides() -> None:
    assert wait_status(ended(S), 3, first_only=True, timed_out=False) == EXIT_SUCCEEDED
    assert wait_status(ended(F), 3, first_only=True, timed_out=False) == EXIT_FAILED
    assert wait_status(ended(C), 3, first_only=True, timed_out=False) == EXIT_CANCELLED
    # Several had already ended when the wait began: the earliest endTime, not the order given.
    assert wait_status(ended(S, F, C, minutes=[9, 3, 5]), 3, first_only=True, timed_out=False) == (
        EXIT_FAILED
    )
    assert wait_status(ended(F, S, minutes=[9, 3]), 2, first_only=True, timed_out=False) == (
        EXIT_SUCCEEDED
    )
    # Equal times: the one seen first.
    assert wait_status(ended(C, S, minutes=[1, 1]), 2, first_only=True, timed_out=False) == (
        EXIT_CANCELLED
    )


def test_any_a_job_without_an_end_time_comes_after_those_with_one() -> None:
    """A backend that leaves endTime out must not make its job 'the first' by default."""
    jobs = [Ended("a", F, None), Ended("b", S, T0)]
    assert wait_status(jobs, 2, first_only=True, timed_out=False) == EXIT_SUCCEEDED
    assert wait_status(jobs[:1], 2, first_only=True, timed_out=False) == EXIT_FAILED


def test_any_with_nothing_ended_before_the_limit_is_124() -> None:
    assert wait_status([], 3, first_only=True, timed_out=True) == EXIT_TIMED_OUT


def test_a_wait_that_is_not_over_has_no_status() -> None:
    assert not wait_over(1, 2, first_only=False)
    assert wait_over(1, 2, first_only=True)
    assert wait_over(2, 2, first_only=False)
    with pytest.raises(ValueError, match="1 of 2 jobs ended"):
        wait_status(ended(S), 2, first_only=False, timed_out=False)
    with pytest.raises(ValueError):
        wait_status([], 2, first_only=True, timed_out=False)


def job(state: str, **fields: Any) -> dict[str, Any]:
    return {"jobId": "mnist_20260301_120000", "state": state, **fields}


def test_an_end_line_says_the_state_the_run_time_and_the_cause() -> None:
    failed = job(
        "FAILED",
        startTime="2026-03-01T12:00:00Z",
        endTime="2026-03-01T12:04:12Z",
        errorMessage=(
            "The replica master 0 exited with a non-zero status of 1.\n"
            "Traceback (most recent call last):\n"
            '  File "task.py", line 3, in <module>\n'
            "ValueError: loss is NaN"
        ),
    )
    now = T0 + timedelta(hours=1)
    assert end_line("mnist_20260301_120000", failed, now) == (
        "mnist_20260301_120000  FAILED  4m12s  ValueError: loss is NaN"
    )
    done = job("SUCCEEDED", startTime="2026-03-01T12:00:00Z", endTime="2026-03-01T12:00:07Z")
    assert end_line("projects/p/jobs/x", done, now) == "projects/p/jobs/x  SUCCEEDED  7s"
    # Cancelled while queued: it never ran.
    never = job("CANCELLED", createTime="2026-03-01T12:00:00Z", endTime="2026-03-01T12:01:00Z")
    assert end_line("x", never, now) == "x  CANCELLED  -"


def live(n: int, state: str = "RUNNING", name: str = "job") -> list[tuple[str, dict[str, Any]]]:
    fields = {"createTime": "2026-03-01T11:50:00Z"}
    if state == "RUNNING":
        fields["startTime"] = "2026-03-01T11:55:48Z"
    return [(f"{name}{i}", job(state, **fields)) for i in range(n)]


def test_progress_shows_how_many_ended_and_each_live_job_with_its_time() -> None:
    jobs = live(1, name="mnist_") + live(1, "QUEUED", name="cifar_")
    assert progress_line(jobs, 1, 3, T0, 200) == (
        "1 of 3 ended · mnist_0 RUNNING 4m12s · cifar_0 QUEUED 10m00s"
    )


@pytest.mark.parametrize("width", [120, 80, 61, 60, 50, 45, 40, 30, 24, 12, 2, 1, 0])
def test_progress_never_reaches_the_last_column(width: int) -> None:
    """It is redrawn with a carriage return: a line that wrapped would leave copies behind."""
    jobs = live(4, name="a_rather_long_job_name_20260301_")
    line = progress_line(jobs, 2, 6, T0, width)
    assert len(line) <= max(1, width - 1)


def test_progress_counts_the_jobs_that_do_not_fit_and_cuts_a_long_first_id() -> None:
    jobs = live(3, name="a_rather_long_job_name_20260301_")
    assert progress_line(jobs, 0, 3, T0, 80) == (
        "0 of 3 ended · a_rather_long_job_name_20260301_0 RUNNING 4m12s · +2 more"
    )
    assert progress_line(jobs, 0, 3, T0, 60) == (
        "0 of 3 ended · a_rather_long_job_n… RUNNING 4m12s · +2 more"
    )
    # 59 characters: the last column stays free.
    assert len(progress_line(jobs, 0, 3, T0, 60)) == 59
    # Too narrow for even a cut id: counted instead.
    assert progress_line(jobs, 0, 3, T0, 40) == "0 of 3 ended · +3 more"
