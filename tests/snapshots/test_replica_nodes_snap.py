"""The detail of a job whose replicas run on the nodes of a Ray cluster (issue 28, item 6).

A fixed job, a frozen clock and a replayed ``:metrics`` answer (tests/support/recorded_metrics.py):
the picture must not change between runs. Behaviour is in tests/pilot/test_replica_nodes_view.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from tests.snapshots.test_screens_snap import NOW
from tests.support.recorded_metrics import RAY_JOB, RAY_JOB_ID, RecordedSource, ray_answer
from tests.support.settle import settled, wait_until
from tui_app.config.settings import Settings
from tui_app.shell.app import JobsApp
from tui_app.shell.screens.describe_screen import DescribeScreen
from tui_app.widgets.detail_scroll import DetailScroll
from tui_app.widgets.replica_usage import ReplicaUsage


def make_app(tmp_path: Path) -> JobsApp:
    return JobsApp(
        Settings(), lambda: None, "demo-project", "local",  # type: ignore[arg-type,return-value]
        settings_file=tmp_path / "settings.yaml", clock=lambda: NOW,
        source=RecordedSource([RAY_JOB], {RAY_JOB_ID: ray_answer()}),
    )  # fmt: skip


async def open_detail(pilot: Pilot[Any]) -> None:
    screen = DescribeScreen(RAY_JOB_ID)
    pilot.app.push_screen(screen)

    def placed() -> bool:
        usage = screen.query_one(ReplicaUsage)
        # The picture has two usage rows below the fold: the detail scrolls, its scrollbar
        # shown. A fresh-clone CI run once pictured the screen a layout before that.
        body = screen.query_one(DetailScroll)
        return (
            len(screen.placement) == 4
            and bool(usage.display)
            and len(usage.rows()) == 4
            and body.max_scroll_y > 0
            and body.show_vertical_scrollbar
        )

    await wait_until(pilot, placed, "the Replicas section and the four charts")
    await settled(pilot)


def test_job_detail_with_nodes(snap_compare: Any, tmp_path: Path) -> None:
    """The reviewer should see, at 120x35:

    - the RUNNING census_ray job's overview and its CUSTOM cluster (master, 2 workers, a
      parameter server) under "Training Input";
    - under it a "Replicas" section: master-replica-0 on 127.0.0.2 (node 2ae69e1b),
      worker-replica-0 and ps-replica-0 on 127.0.0.3 (node 9f1c03d2), worker-replica-1 on
      127.0.0.4 (node c0ffee01), names bold and aligned;
    - "Training Output" after it, then "Resource usage": master-replica-0 with 127.0.0.2 under
      its name in dim text, worker-replica-0 with 127.0.0.3, each beside its CPU and RSS
      sparklines and figures (the other two rows below the fold, a scrollbar on the right).
    """
    assert snap_compare(make_app(tmp_path), run_before=open_detail, terminal_size=(120, 35))
