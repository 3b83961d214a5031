"""The TUI says where each replica runs (issue 28, item 6): the detail's "Replicas" section, the
usage charts' labels and the logs picker, at 80x24.

No Pilot test here starts a Ray cluster (tests/service runs the real one): the app reads a
``:metrics`` answer whose replicas carry their nodes through the real ``MetricsClient``, replayed
by ``tests/support/recorded_metrics.py``. A real local service's job, whose replicas have no
node, shows nothing new: tests/pilot/test_replica_usage.py and test_logs_screen.py check that.
"""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console
from textual.widgets import OptionList, Static

from tests.pilot.conftest import wait_for
from tests.support.fixed_jobs import TUNING_JOBS
from tests.support.recorded_metrics import (
    RAY_JOB,
    RAY_JOB_ID,
    RecordedSource,
    metrics_reads,
    ray_answer,
    tuning_answer,
)
from tui_app.config.settings import Settings
from tui_app.model.logs.log_line import LogLine
from tui_app.shell.app import JobsApp
from tui_app.shell.screens.describe_screen import DescribeScreen
from tui_app.shell.screens.logs_screen import ALL, LinesArrived, LogsScreen
from tui_app.shell.screens.picker_screen import PickerScreen
from tui_app.widgets.replica_usage import ReplicaUsage

TUNING_ID = "hptune_20261122_084000"
TASKS = ["master-replica-0", "worker-replica-0", "worker-replica-1", "ps-replica-0"]


def recorded_app(tmp_path: Path, source: RecordedSource) -> JobsApp:
    return JobsApp(
        Settings(refresh_seconds=0.3),
        lambda: None,  # type: ignore[arg-type,return-value]
        "demo-project",
        "local",
        settings_file=tmp_path / "settings.yaml",
        source=source,
    )


def detail_text(app: JobsApp, width: int = 80) -> str:
    """The summary as drawn ("" until the screen is up)."""
    if not isinstance(app.screen, DescribeScreen) or app.screen.job is None:
        return ""
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(app.screen.query_one("#describe-content", Static).content)
    return console.export_text()


async def test_the_detail_names_each_replicas_node(tmp_path: Path) -> None:
    source = RecordedSource([RAY_JOB], {RAY_JOB_ID: ray_answer()})
    app = recorded_app(tmp_path, source)
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(DescribeScreen(RAY_JOB_ID))
        await wait_for(pilot, lambda: "Replicas" in detail_text(app))
        lines = [line.rstrip() for line in detail_text(app).splitlines()]
        start = lines.index("Replicas")
        assert lines[start + 1 : start + 5] == [
            "master-replica-0  127.0.0.2 (node 2ae69e1b)",
            "worker-replica-0  127.0.0.3 (node 9f1c03d2)",
            "worker-replica-1  127.0.0.4 (node c0ffee01)",
            "ps-replica-0      127.0.0.3 (node 9f1c03d2)",
        ]
        # Each chart's label: the name, and under it the node's address, cut to its column.
        usage = app.screen.query_one(ReplicaUsage)
        await wait_for(pilot, lambda: usage.display and len(usage.rows()) == 4)
        await pilot.pause()
        for row in usage.rows():
            label = row.name_label
            drawn = [label.render_line(y).text.rstrip() for y in range(label.size.height)]
            assert drawn == [row.task_name, source_address(row.task_name)], drawn
            assert label.size.width == 20  # one column of the row's grid: nothing wraps
        # The poll reads only what is new: the labels stay, with no sample arriving.
        reads = metrics_reads(source.session)()
        await wait_for(pilot, lambda: metrics_reads(source.session)() > reads, timeout=10)
        assert [r.node_address for r in usage.rows()] == [source_address(t) for t in TASKS]


def source_address(task: str) -> str:
    return {
        "master-replica-0": "127.0.0.2",
        "worker-replica-0": "127.0.0.3",
        "worker-replica-1": "127.0.0.4",
        "ps-replica-0": "127.0.0.3",
    }[task]


async def test_a_tuning_jobs_detail_names_each_trials_node(tmp_path: Path) -> None:
    source = RecordedSource(TUNING_JOBS, {TUNING_ID: tuning_answer()})
    app = recorded_app(tmp_path, source)
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(DescribeScreen(TUNING_ID))
        await wait_for(pilot, lambda: "Replicas" in detail_text(app))
        text = detail_text(app)
        assert "trial 1 · master-replica-0  127.0.0.2 (node 2ae69e1b)" in text
        assert "trial 3 · master-replica-0  127.0.0.3 (node 9f1c03d2)" in text
        # Trials are not sampled: no chart, rather than three empty rows of one name.
        assert not app.screen.query_one(ReplicaUsage).display


async def test_the_logs_picker_names_each_replicas_node(tmp_path: Path) -> None:
    source = RecordedSource([RAY_JOB], {RAY_JOB_ID: ray_answer()})
    app = recorded_app(tmp_path, source)
    async with app.run_test(size=(80, 24)) as pilot:
        logs = LogsScreen(RAY_JOB_ID)
        app.push_screen(logs)
        await wait_for(pilot, lambda: logs.is_mounted)
        # Lines as the stream delivers them; the stand-in service has no log stream itself.
        logs.post_message(LinesArrived([line(i, task) for i, task in enumerate(TASKS)]))
        await wait_for(pilot, lambda: len(logs.nodes) == 4, describe=lambda: str(logs.nodes))
        # The replicas arrived in one batch: one read, not one per replica.
        assert metrics_reads(source.session)() == 1
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, PickerScreen))
        picker = app.screen
        assert isinstance(picker, PickerScreen)
        assert picker.labels is not None
        shown = dict(zip(picker.items, picker.labels, strict=True))
        assert [shown[t] for t in [ALL, *TASKS]] == [
            ALL,
            "master-replica-0 · 127.0.0.2",
            "worker-replica-0 · 127.0.0.3",
            "worker-replica-1 · 127.0.0.4",
            "ps-replica-0 · 127.0.0.3",
        ]
        # The service's own lines (its view may be there: the stand-in has no log stream, and
        # the pane says so under "service") run on no node.
        assert shown.get("service", "service") == "service"
        options = picker.query_one(OptionList)
        assert options.option_count == len(picker.items)
        # The choice is the replica, whatever its label says.
        await pilot.press("down", "down", "enter")
        await wait_for(pilot, lambda: app.screen is logs)
        assert logs.current == "worker-replica-0"
        tabs = str(logs.query_one("#logs-tabs", Static).content)
        assert tabs.endswith("   worker-replica-0 · 127.0.0.3"), tabs


def line(i: int, task: str) -> LogLine:
    return LogLine(f"2026-11-22T09:20:0{i}.000000Z", f"{i:018d}", task, 200, f"hello from {task}")
