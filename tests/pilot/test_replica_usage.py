"""Per-replica CPU and memory sparklines in the detail pane, against real replicas (issue 6).

A service sampling every 0.3 s runs the ``burner`` trainer (tests/support/burner.py) as a
4-replica cluster; the describe screen must show one row per replica with its figures, keep
polling while the job runs, stop when the screen closes or the job ends.
"""

from __future__ import annotations

import io
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual.widgets import Static
from textual.worker import WorkerState

from tests.conftest import unique_id
from tests.pilot.conftest import live_app, wait_for
from tests.support.burner import build_burner, burner_job, sampling_service
from tests.support.live_service import CLUSTER, PROJECT, LiveService
from tui_app.shell.screens.describe_screen import DescribeScreen
from tui_app.widgets.replica_usage import ReplicaUsage, ReplicaUsageRow

TASKS = ["master-replica-0", "worker-replica-0", "worker-replica-1", "ps-replica-0"]
CPU_FIGURES = re.compile(r"^\d+% \(peak \d+%\)$")
RSS_FIGURES = re.compile(r"^[\d.]+ (MiB|GiB) \(peak [\d.]+ (MiB|GiB)\)$")


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveService]:
    """This module's own service, sampling every 0.3 s."""
    yield from sampling_service(tmp_path_factory, "svc-usage")


@pytest.fixture(scope="module")
def burner_uri(service: LiveService, tmp_path_factory: pytest.TempPathFactory) -> str:
    return service.stage(build_burner(tmp_path_factory.mktemp("burner")))


def usage_of(app: Any) -> ReplicaUsage:
    return app.screen.query_one(ReplicaUsage)  # type: ignore[no-any-return]


def figures(row: ReplicaUsageRow) -> tuple[str, str]:
    return str(row.cpu_figures.content), str(row.memory_figures.content)


def displayed(app: Any) -> bool:
    """The charts are on the screen (the describe screen is up and has data)."""
    found = app.screen.query(ReplicaUsage)
    return bool(found) and bool(found.first().display)


def shown(app: Any) -> bool:
    """Every replica has its row, with figures."""
    if not displayed(app):
        return False
    usage = usage_of(app)
    rows = usage.rows()
    return (
        usage.display
        and [r.task_name for r in rows] == TASKS
        and all(CPU_FIGURES.match(figures(r)[0]) for r in rows)
    )


def summary_text(screen: DescribeScreen) -> str:
    console = Console(width=120, record=True, file=io.StringIO())
    console.print(screen.query_one("#describe-content", Static).content)
    return console.export_text()


def usage_workers(app: Any) -> list[Any]:
    return [w for w in app.workers if w.group == "describe-usage"]


async def test_running_cluster_shows_a_row_per_replica(
    service: LiveService, burner_uri: str, tmp_path: Path
) -> None:
    job_id = unique_id("usage")
    client = service.client()
    client.create(burner_job(job_id, burner_uri, "--seconds", "60", "--child-mb", "64", **CLUSTER))
    service.wait_state(job_id, ("RUNNING",))
    app = live_app(service, tmp_path)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            app.push_screen(DescribeScreen(job_id))
            await wait_for(pilot, lambda: shown(app), timeout=30)
            usage = usage_of(app)
            rows = usage.rows()
            for row in rows:
                assert RSS_FIGURES.match(figures(row)[1]), figures(row)
            # Replicas on the service's own machine: no node under a name, no "Replicas".
            assert [r.node_address for r in rows] == [None] * 4
            assert isinstance(app.screen, DescribeScreen) and app.screen.placement == []
            assert "\nReplicas\n" not in summary_text(app.screen)
            # Each replica's child holds 64 MiB: the tree's RSS is the trainer's plus the child's.
            await wait_for(
                pilot,
                lambda: min(r.memory_peak for r in usage_of(app).replicas) > 64 * 1024 * 1024,
                describe=lambda: str([figures(r) for r in usage_of(app).rows()]),
            )
            # Drawn: one pair (scale marker, value) per column of each sparkline.
            sparks = [spark for row in rows for spark in (row.cpu, row.memory)]
            await wait_for(
                pilot,
                lambda: all(
                    s.size.width > 20 and len(s.data or []) == 2 * s.size.width for s in sparks
                ),
                describe=lambda: str([(s.size.width, len(s.data or [])) for s in sparks]),
            )
            # It keeps polling while the job runs: more samples arrive.
            before = len(usage.replicas[0].samples)
            await wait_for(pilot, lambda: len(usage_of(app).replicas[0].samples) > before + 2)
            # The YAML view hides the charts; the summary brings them back.
            await pilot.press("y")
            assert not displayed(app)
            await pilot.press("y")
            assert displayed(app)
            # Closing the screen stops the poller.
            [worker] = usage_workers(app)
            await pilot.press("escape")
            await wait_for(pilot, lambda: worker.state is not WorkerState.RUNNING, timeout=10)
            assert worker.state is WorkerState.CANCELLED
    finally:
        client.cancel(job_id)


async def test_ended_job_shows_its_last_samples_and_stops(
    service: LiveService, burner_uri: str, tmp_path: Path
) -> None:
    job_id = unique_id("usage_done")
    # It burns until the service has sampled it busy (and several times), however loaded the
    # machine: a fixed 5 s burn was once sampled at 6.7% at most on two busy cores.
    stop = tmp_path / "stop"
    service.client().create(
        burner_job(job_id, burner_uri, "--seconds", "90", "--until-file", str(stop))
    )
    path = f"/v1/projects/{PROJECT}/jobs/{job_id}:metrics"
    deadline = time.monotonic() + 80

    def busy() -> bool:
        status, body = service.request("GET", path)
        samples = (
            [s for r in body.get("replicas", []) for s in r["samples"]] if status == 200 else []
        )
        return len(samples) >= 3 and any(s["cpuPercent"] > 25 for s in samples)

    while not busy():
        assert time.monotonic() < deadline, service.request("GET", path)
        time.sleep(0.3)
    stop.touch()
    assert service.wait_state(job_id)["state"] == "SUCCEEDED"
    app = live_app(service, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(DescribeScreen(job_id))
        await wait_for(pilot, lambda: displayed(app) and len(usage_of(app).rows()) == 1, timeout=20)
        [row] = usage_of(app).rows()
        cpu, rss = figures(row)
        assert CPU_FIGURES.match(cpu) and RSS_FIGURES.match(rss), (cpu, rss)
        assert usage_of(app).replicas[0].cpu_peak > 25  # its busy sample, kept after the end
        [worker] = usage_workers(app)
        await wait_for(pilot, lambda: worker.state is WorkerState.SUCCESS, timeout=10)


async def test_the_caption_says_what_the_figures_measure() -> None:
    """A process replica's figures cover its whole process tree; a container job's come from
    the engine's stats, and the caption says so."""
    from textual.app import App, ComposeResult

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield ReplicaUsage()

    app = Host()
    async with app.run_test() as pilot:
        usage = app.query_one(ReplicaUsage)
        usage.show([], 2.0)
        await pilot.pause()
        assert str(usage.caption.content).startswith("Whole process tree per replica")
        usage.show([], 2.0, "Each replica's container, from podman's stats")
        await pilot.pause()
        caption = str(usage.caption.content)
        assert caption.startswith("Each replica's container, from podman's stats · CPU")
        assert caption.endswith("sampled every 2 s")
