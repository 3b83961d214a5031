"""The demo's promise about metrics (``tui-app --demo``, tui_app/entry/demo.py): its sample jobs
give the metrics view curves within seconds. They are submitted as the demo submits them
(``submit_demo_jobs`` on a running service) and read with the view's own reader
(``JobScalars``): a job's event-file curve arrives while it runs, the diverging job's curve ends
at the non-finite loss the view marks, and the tuning job's trials each have their curves.

The service has four slots, a four-core laptop's: the failing job, the plain job and two trials
at a time all start at once (the cluster job and the one queued behind it are cancelled).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import _start, _stop
from tests.support.live_service import PROJECT, LiveService
from tests.support.scalar_polls import Points, live_scalars, poll_until
from tui_app.api.job_scalars import ScalarPoll
from tui_app.entry.demo import DEMO_BUCKET, submit_demo_jobs

"""Points by (source, run, tag, trial): (step, wall time, value)."""
TAG = "training/hptuning/metric"


@pytest.fixture(scope="module")
def demo(
    tmp_path_factory: pytest.TempPathFactory, trainer_sdist: Path
) -> Iterator[tuple[LiveService, dict[str, str]]]:
    """A service with the demo's jobs submitted, and their ids by name (``mnist``...)."""
    svc = _start(tmp_path_factory.mktemp("svc-demo") / "state", "--slots", "4")
    client = svc.client()
    ids: list[str] = []
    try:
        ids = submit_demo_jobs(svc.state_dir, PROJECT)
        by_name = {job_id.rsplit("_", 2)[0]: job_id for job_id in ids}
        # The cluster job and the one behind it have no curve these tests look at: cancelled
        # at once, they leave the machine to those that do.
        for name in ("mnist_large", "census_dist"):
            client.cancel(by_name[name])
        yield svc, by_name
    finally:
        svc.end_jobs(ids)
        _stop(svc)


@pytest.mark.timeout(60)
def test_a_demo_jobs_event_curve_arrives_while_it_runs(
    demo: tuple[LiveService, dict[str, str]],
) -> None:
    svc, ids = demo
    job_id = ids["mnist"]

    def live(points: Points, poll: ScalarPoll) -> bool:
        running = bool(poll.job and poll.job["state"] == "RUNNING")
        return running and bool(points.get(("events", "train", "loss", "")))

    points, poll = poll_until(live_scalars(svc, job_id), live, "a train loss point while it ran")
    train = points[("events", "train", "loss", "")]
    assert all(math.isfinite(v) for _, _, v in train)
    assert all(w > 1.7e9 for _, w, _ in train)  # event files carry wall times
    events = next(s for s in poll.statuses if s.source == "events")
    assert f"under gs://{DEMO_BUCKET}/{job_id}" in events.text
    assert not events.problem


@pytest.mark.timeout(60)
def test_the_demos_diverging_jobs_curve_shows_the_loss_blowing_up(
    demo: tuple[LiveService, dict[str, str]],
) -> None:
    """bad_lr is in the demo for its curve: the loss grows until it overflows, and the points
    from there are the non-finite values the view marks on its x axis.

    An event file keeps a scalar as a 32-bit float (``simple_value``, as TensorFlow writes
    it), so the curve overflows when the loss passes 3.4e38 (about step 100, five seconds
    in), before the trainer's own 64-bit loss does and it stops (about step 200)."""
    svc, ids = demo

    def train(points: Points) -> list[float]:
        return [v for _, _, v in points.get(("events", "train", "loss", ""), [])]

    def blown_up(points: Points, poll: ScalarPoll) -> bool:
        return any(not math.isfinite(v) for v in train(points))

    points, _ = poll_until(live_scalars(svc, ids["bad_lr"]), blown_up, "a non-finite loss")
    values = train(points)
    first = next(i for i, v in enumerate(values) if not math.isfinite(v))
    assert first >= 2
    assert all(math.isfinite(v) for v in values[:first])
    assert values[first - 1] > 1e6 * values[0]  # it grew on the way
    assert not any(math.isfinite(v) for v in values[first:])


@pytest.mark.timeout(60)
def test_the_demos_tuning_job_has_a_curve_per_trial(
    demo: tuple[LiveService, dict[str, str]],
) -> None:
    """Two trials' reports of the goal metric and their own event files under
    ``<jobDir>/<trialId>/``, the same held-out losses, each the trial's own."""
    svc, ids = demo

    def reported(points: Points, trial: str) -> list[tuple[int, float]]:
        return [(s, v) for s, _, v in points.get(("hypertune", "", TAG, trial), [])]

    def evaluated(points: Points, trial: str) -> list[tuple[int, float]]:
        return [(s, v) for s, _, v in points.get(("events", "eval", "loss", trial), [])]

    def two_trials(points: Points, poll: ScalarPoll) -> bool:
        both = [t for t in ("1", "2") if reported(points, t) and evaluated(points, t)]
        # Every report has its event (the trainer writes the event as it reports).
        return len(both) == 2 and all(
            {s for s, _ in reported(points, t)} <= {s for s, _ in evaluated(points, t)}
            for t in both
        )

    points, _ = poll_until(
        live_scalars(svc, ids["mnist_hptuning"]), two_trials, "two trials' curves"
    )
    for trial in ("1", "2"):
        evals = dict(evaluated(points, trial))
        for step, value in reported(points, trial):
            assert evals[step] == pytest.approx(value, rel=1e-6), (trial, step)
    # Each trial's curve is its own: trials with other hyperparameters report other losses.
    assert reported(points, "1") != reported(points, "2")
