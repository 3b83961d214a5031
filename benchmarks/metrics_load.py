"""A metrics view open on a running job, for ``tui_bench.py --metrics-open`` and
``log_bench.py --metrics-open``: issue 26 asks that the list, the logs and the filter keep their
own goals while one is open.

Two halves:

- **The job** (in the benchmark's parent, against its service): a BASIC job that writes
  TensorFlow event files as a training job does, ``WRITER_TAGS`` (20 tags) at every step,
  ``RATE`` steps a second, into ``<jobDir>/train`` under a ``gs://`` jobDir. Its trainer is the
  sample trainer's own ``SummaryWriter`` (``examples/trainer/trainer/summaries.py``: real event
  records, the whole file uploaded again through the service's storage API at each flush, at
  most once a second, as TensorFlow's GCS filesystem does), driven by a small package of this
  script's (``metricswriter.task``) that the job lists beside the trainer in ``packageUris``.
  The sample trainer's own training loop writes two tags; the issue's load is twenty.
- **The view** (in the child process that runs the app): the real ``MetricsScreen`` on that job,
  reading through the real ``JobScalars`` (a poll every second in its thread worker: the job,
  a listing of its output folder, a ranged read of the new event-file bytes, numpy decoding,
  the points into its ``MetricSet``), and ``ViewMeter``, which times each poll, each update of
  the view on the event loop (``MetricsScreen._polled``) and each chart build, so that a slow
  keystroke or a late heartbeat can be laid beside them.

What "open" means: Textual paints only the top screen, so the view is opened, shown until its
charts are built, and then the measured screen goes on top of it (``open_beneath``: the list,
with the view kept installed; ``open_under``: the logs pushed over it, as a user who opens the
logs from the view). Either way its worker keeps polling, its series keep growing and its
``_polled`` keeps running on the event loop; its charts are rebuilt only when it is shown.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from service_bench import Service

    from tui_app.shell.app import JobsApp
    from tui_app.shell.screens.metrics_screen import MetricsScreen, ScalarsFactory

REPO = Path(__file__).resolve().parent.parent
RATE = 4.0
"""Steps a second; each step writes every tag: "a few points a second" per tag."""
BUCKET = "bench-metrics"
READY_TIMEOUT_S = 600.0
"""Create -> the job's first event file: the first job installs both packages (pip)."""
SCREEN_NAME = "bench-metrics"

WRITER_SETUP = """from setuptools import setup

setup(name="metricswriter", version="0.1.0", packages=["metricswriter"], python_requires=">=3.7")
"""
WRITER_TASK = '''"""Scalars as a training job writes them: every tag at each step, --rate steps a
second, into <job-dir>/train, with the sample trainer's SummaryWriter."""

import argparse
import math
import time

from trainer import summaries

TAGS = {tags!r}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--job-dir", required=True)
    parser.add_argument("--rate", type=float, default=4.0)
    parser.add_argument("--seconds", type=float, default=3600.0)
    args, _ = parser.parse_known_args()
    writer = summaries.writer_for(args.job_dir, "train")
    print("writing %d tags, %g steps a second, to %s" % (len(TAGS), args.rate, writer.path),
          flush=True)
    start = time.monotonic()
    step = 0
    while time.monotonic() - start < args.seconds:
        step += 1
        for i, tag in enumerate(TAGS):
            value = math.exp(-step / 2000.0) + i / 100.0 + 0.01 * math.sin(step * (i + 1))
            writer.scalar(tag, value, step)
        time.sleep(max(0.0, start + step / args.rate - time.monotonic()))
    writer.flush()


if __name__ == "__main__":
    main()
'''


def writer_tags() -> tuple[str, ...]:
    """The twenty tag names the tests' event files use (``tests/support/event_files.py``)."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))  # tests.support is not an installed package
    from tests.support.event_files import TAGS

    return TAGS


# -- the job (the benchmark's parent) -------------------------------------------------------------


@dataclass(frozen=True)
class MetricsJob:
    """A running job that writes event files; what the child needs to open its view."""

    project: str
    job_id: str
    job_dir: str
    ready_s: float
    """Create -> its first event file stored."""


def stage_packages(svc: Service, root: Path, trainer_uri: str | None = None) -> tuple[str, str]:
    """The sample trainer's sdist (unless already staged) and the writer's, on ``svc``'s
    ``gs://``: their URIs."""
    from service_bench import TRAINER_SRC

    from tui_app.entry.demo import build_sdist

    if trainer_uri is None:
        trainer_uri = svc.stage(build_sdist(TRAINER_SRC, root / "build-trainer-metrics"))
    src = root / "metricswriter-src"
    (src / "metricswriter").mkdir(parents=True, exist_ok=True)
    (src / "setup.py").write_text(WRITER_SETUP)
    (src / "metricswriter" / "__init__.py").write_text("")
    (src / "metricswriter" / "task.py").write_text(WRITER_TASK.format(tags=writer_tags()))
    writer_uri = svc.stage(build_sdist(src, root / "build-metricswriter"))
    return trainer_uri, writer_uri


def start_job(svc: Service, project: str, job_id: str, uris: tuple[str, str]) -> MetricsJob:
    """Create the writing job and wait until its first event file is stored.

    Raises:
        RuntimeError: the job ended before writing (its error message says why).
        TimeoutError: no event file after ``READY_TIMEOUT_S``.
    """
    from service_bench import TERMINAL

    job_dir = f"gs://{BUCKET}/{job_id}"
    body = {
        "jobId": job_id,
        "trainingInput": {
            "scaleTier": "BASIC",
            "region": "us-central1",
            "pythonModule": "metricswriter.task",
            "packageUris": list(uris),
            "jobDir": job_dir,
            "args": ["--rate", str(RATE), "--seconds", "7200"],
        },
    }
    client = svc.client(project)
    t0 = time.monotonic()
    client.create(body)
    folder = svc.state.gcs_path(job_dir)
    while not any(folder.rglob("events.out.tfevents.*")):
        job = client.get(job_id)
        if job["state"] in TERMINAL:
            raise RuntimeError(f"{job_id} ended {job['state']}: {job.get('errorMessage')}")
        if time.monotonic() - t0 > READY_TIMEOUT_S:
            raise TimeoutError(f"{job_id}: no event file after {READY_TIMEOUT_S:.0f} s")
        time.sleep(0.2)
    return MetricsJob(project, job_id, job_dir, time.monotonic() - t0)


def stop_job(svc: Service, job: MetricsJob) -> None:
    """Cancel it (it would write for two hours) and wait until it has ended, so that its CPU
    slot and its uploads are gone before the next measurement; a failure to cancel is not the
    benchmark's business (the service's stop ends it anyway)."""
    from service_bench import wait_terminal

    with contextlib.suppress(Exception):
        client = svc.client(job.project)
        client.cancel(job.job_id)
        wait_terminal(client, job.job_id, 60)


# -- the view (the child that runs the app) ------------------------------------------------------

Window = tuple[float, float]


def real_scalars(state_root: str, project: str) -> ScalarsFactory:
    """What ``JobsApp._job_scalars`` makes (``JobScalars`` on the profile's connection), on a
    connection of its own to the local service of ``state_root``: for an app whose list comes
    from fixed job dicts (``tui_bench``'s 100k) and so has no connection to lend."""
    from tui_app.config.settings import Profile
    from tui_app.entry.launch import connector
    from tui_app.shell.jobs_source import JobsSource

    source = JobsSource(connector(Profile("local"), Path(state_root)), project)

    def make(job_id: str, trial: str | None) -> Any:
        from tui_app.api.job_scalars import JobScalars

        return JobScalars(
            source.connection,
            project,
            job_id,
            read_job=lambda: source.call(lambda client: client.get(job_id)),
            trial_id=trial,
        )

    return make


class ViewMeter:
    """Wraps ``JobScalars.poll``, ``MetricsScreen._polled`` and ``MetricChart._build`` to note
    when each ran (``time.perf_counter()``); install it before the view is opened."""

    def __init__(self) -> None:
        from tui_app.api.job_scalars import JobScalars
        from tui_app.shell.screens.metrics_screen import MetricsScreen
        from tui_app.widgets.metric_chart import MetricChart

        self.polls: list[tuple[float, float, int]] = []
        """(start, end, points) of each ``JobScalars.poll``, in the view's worker thread."""
        self.poll_windows: list[Window] = []
        self.updates: list[Window] = []
        """Each ``MetricsScreen._polled``: the view taking a poll's news, on the event loop."""
        self.builds: list[Window] = []
        """Each chart build (plotext), on the event loop, when the view is painted."""
        original_poll = JobScalars.poll
        original_polled = MetricsScreen._polled
        original_build = MetricChart._build
        me = self

        def poll(self: JobScalars) -> Any:
            t0 = time.perf_counter()
            out = original_poll(self)
            points = sum(len(b.steps) for b in out.batches)
            t1 = time.perf_counter()
            me.polls.append((t0, t1, points))
            me.poll_windows.append((t0, t1))
            return out

        def polled(self: MetricsScreen, *args: Any) -> None:
            t0 = time.perf_counter()
            original_polled(self, *args)
            me.updates.append((t0, time.perf_counter()))

        def build(self: MetricChart, width: int, height: int) -> Any:
            t0 = time.perf_counter()
            out = original_build(self, width, height)
            me.builds.append((t0, time.perf_counter()))
            return out

        setattr(JobScalars, "poll", poll)  # noqa: B010 (mypy refuses method assignment)
        setattr(MetricsScreen, "_polled", polled)  # noqa: B010
        setattr(MetricChart, "_build", build)  # noqa: B010

    def windows(self) -> dict[str, list[Window]]:
        """The view's work by kind, to lay beside slow keystrokes or late heartbeats: the
        meter's own lists, which go on filling."""
        return {
            "metrics poll (thread)": self.poll_windows,
            "metrics update (loop)": self.updates,
            "chart build (loop)": self.builds,
        }

    def summary(self, t0: float, t1: float) -> dict[str, Any]:
        """What the view did between ``t0`` and ``t1`` (perf_counter)."""
        polls = [p for p in self.polls if t0 <= p[0] < t1]
        updates = [b - a for a, b in self.updates if t0 <= a < t1]
        builds = [b - a for a, b in self.builds if t0 <= a < t1]
        return {
            "seconds": t1 - t0,
            "polls": len(polls),
            "poll_s": [b - a for a, b, _ in polls],
            "points": sum(p[2] for p in polls),
            "empty_polls": sum(1 for p in polls if not p[2]),
            "updates": updates,
            "builds": builds,
        }


@dataclass
class OpenView:
    """The view as opened: the screen, and what its first showing cost."""

    screen: MetricsScreen
    opened_s: float
    """Push -> every chart built with points."""
    first_builds: list[float]
    """Seconds of each chart build while it was shown."""

    def state(self) -> dict[str, Any]:
        """What the view holds now: tags, series, points, the newest step, whether it polls."""
        metrics = self.screen.metrics
        with self.screen.data_lock:
            series = [metrics.series(k) for k in metrics]
            tags = len({k.tag for k in metrics})
        return {
            "tags": tags,
            "series": len(series),
            "points": sum(s.count for s in series),
            "last_step": max((s.last_step or 0 for s in series), default=0),
            "polling": self.screen.polling,
            "view_polls": self.screen.polls,
        }


async def _until(cond: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not after {timeout:.0f} s")
        await asyncio.sleep(0.02)


async def _shown(app: JobsApp, screen: MetricsScreen, meter: ViewMeter) -> OpenView:
    """Wait until ``screen`` has read points of every tag and drawn each of its charts."""

    t0 = time.perf_counter()
    builds_from = len(meter.builds)
    tags = len(writer_tags())

    def drawn() -> bool:
        if app.screen is not screen or screen.polls < 1:
            return False
        with screen.data_lock:
            if len({k.tag for k in screen.metrics}) < tags:
                return False
        charts = screen.charts()
        return bool(charts) and all(c.builds > 0 and c.lines for c in charts)

    await _until(drawn, 60, "the metrics view's charts")
    await asyncio.sleep(1.5)  # a poll or two more while shown: the redraws a user would see
    return OpenView(
        screen,
        time.perf_counter() - t0,
        [b - a for a, b in meter.builds[builds_from:]],
    )


async def open_beneath(app: JobsApp, job_id: str, meter: ViewMeter) -> OpenView:
    """The view on ``job_id``, shown until drawn, then kept (installed) under the screen that
    was on top, which is on top again: the list, measured with the view's worker running."""
    from tui_app.shell.screens.metrics_screen import MetricsScreen

    below = app.screen
    screen = MetricsScreen(job_id, None, scalars=app.scalars)
    app.install_screen(screen, SCREEN_NAME)
    await app.push_screen(SCREEN_NAME)
    view = await _shown(app, screen, meter)
    app.pop_screen()
    await _until(lambda: app.screen is below, 30, "the list back on top")
    if not screen.polling:
        raise RuntimeError("the metrics view stopped polling when the list came back")
    return view


async def open_under(app: JobsApp, job_id: str, meter: ViewMeter) -> OpenView:
    """The view on ``job_id`` as ``M`` opens it (``JobsApp.open_metrics``), shown until drawn;
    the caller then pushes the screen it measures over it."""
    from tui_app.shell.screens.metrics_screen import MetricsScreen

    app.open_metrics(job_id)
    await _until(lambda: isinstance(app.screen, MetricsScreen), 30, "the metrics view")
    screen = app.screen
    assert isinstance(screen, MetricsScreen)
    return await _shown(app, screen, meter)


def close_beneath(app: JobsApp, view: OpenView) -> None:
    """Stop the installed view's worker (the app's exit would too; this makes it first)."""
    app.workers.cancel_node(view.screen)


# -- the report ------------------------------------------------------------------------------------


def ms_range(values: list[float]) -> str:
    if not values:
        return "none"
    v = [x * 1e3 for x in values]
    return f"{statistics.median(v):.1f} ({min(v):.1f}-{max(v):.1f}) ms"


def describe(summary: dict[str, Any], view: dict[str, Any]) -> tuple[str, str]:
    """Two lines for a report: what the view did over the window, and what it holds."""
    secs = summary["seconds"]
    did = (
        f"{summary['polls']} polls in {secs:.0f} s ({summary['points']:,} points, "
        f"{summary['empty_polls']} polls with none): JobScalars.poll in its thread "
        f"{ms_range(summary['poll_s'])}, the view's update on the event loop "
        f"{ms_range(summary['updates'])}; {len(summary['builds'])} chart builds"
        + (f" ({ms_range(summary['builds'])})" if summary["builds"] else "")
    )
    holds = (
        f"{view['tags']} tags, {view['series']} series, {view['points']:,} points, newest step "
        f"{view['last_step']:,} (writer: {RATE:g} steps/s); still polling: "
        f"{'yes' if view['polling'] else 'NO'}"
    )
    return did, holds
