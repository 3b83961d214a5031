"""A live job's scalars read as the metrics view reads them (``JobScalars.poll`` in a loop),
for the service tests that check what the view would draw."""

from __future__ import annotations

import time
from collections.abc import Callable

from tests.support.live_service import PROJECT, LiveService
from tui_app.api.job_scalars import JobScalars, ScalarPoll

Points = dict[tuple[str, str, str, str], list[tuple[int, float, float]]]
"""(step, wall time, value) by (source, run, tag, trial)."""

POLL_SECONDS = 0.2
"""The wait between polls when no backlog is left (the view waits 1 s; tests want it sooner)."""


def live_scalars(svc: LiveService, job_id: str, trial: str | None = None) -> JobScalars:
    """``job_id``'s scalars on ``svc`` (one trial's, with ``trial``), as the view opens them."""
    conn = svc.connection()
    client = svc.client()
    return JobScalars(
        lambda: conn, PROJECT, job_id, read_job=lambda: client.get(job_id), trial_id=trial
    )


def poll_until(
    scalars: JobScalars,
    done: Callable[[Points, ScalarPoll], bool],
    what: str,
    timeout: float = 40.0,
) -> tuple[Points, ScalarPoll]:
    """Poll, gathering the points, until ``done`` says so; the points and the last poll.

    Raises:
        AssertionError: ``timeout`` passed, or the job ended and its last points were read,
            first; the message names ``what`` and says the job's state and the sources' lines.
    """
    points: Points = {}
    deadline = time.monotonic() + timeout
    while True:
        poll = scalars.poll()
        for batch in poll.batches:
            k = batch.key
            points.setdefault((k.source, k.run, k.tag, k.trial), []).extend(
                zip(batch.steps, batch.wall_times, batch.values, strict=True)
            )
        if done(points, poll):
            return points, poll
        state = poll.job and poll.job.get("state")
        assert time.monotonic() < deadline, f"never {what}: {state}; {poll.statuses}"
        if poll.ended and not poll.more:
            raise AssertionError(f"the job ended ({state}) and never {what}: {poll.statuses}")
        if not poll.more:
            time.sleep(POLL_SECONDS)


def drain(scalars: JobScalars, timeout: float = 90.0) -> tuple[Points, ScalarPoll]:
    """Every point until the job has ended and its last points were read (the view's last
    poll); the points and that poll."""
    return poll_until(scalars, lambda _points, poll: poll.ended and not poll.more, "ended", timeout)
