"""How the job list looks: every state, a queue position, a mark, a folded family, the cursor."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from textual.app import App, ComposeResult

from tui_app.model.views.job_view import JobRow, display_rows, sort_rows
from tui_app.widgets.job_table import JobTable

NOW = datetime(2026, 11, 22, 12, 0, 0, tzinfo=UTC)
CLUSTER = {"scaleTier": "CUSTOM", "masterType": "standard", "workerType": "standard"}
FAILURE = (
    "The replica worker 0 exited with a non-zero status of 1.\nTraceback (most recent call last)"
)


def _job(job_id: str, state: str, created: str, **fields: Any) -> dict[str, Any]:
    return {"jobId": job_id, "state": state, "createTime": f"2026-11-{created}Z", **fields}


JOBS = [
    _job("adhoc", "SUCCEEDED", "20T09:00:00", startTime="2026-11-20T09:01:00Z",
         endTime="2026-11-20T09:05:07Z", trainingOutput={"consumedMLUnits": 0.07}),
    _job("bert_base_20261122_113000", "QUEUED", "22T11:30:00", jobPosition="3",
         trainingInput={**CLUSTER, "workerCount": "3"}),
    _job("bert_base_20261122_110000", "PREPARING", "22T11:00:00",
         trainingInput={"scaleTier": "BASIC_GPU"}),
    _job("census_20261122_010000", "RUNNING", "22T01:00:00", startTime="2026-11-22T01:02:00Z",
         trainingInput={"scaleTier": "STANDARD_1"}, trainingOutput={"consumedMLUnits": 41.25}),
    _job("census_20261121_230000", "CANCELLING", "21T23:00:00", startTime="2026-11-21T23:01:00Z"),
    _job("census_20261120_230000", "CANCELLED", "20T23:00:00", startTime="2026-11-20T23:01:00Z",
         endTime="2026-11-21T02:00:00Z", trainingOutput={"consumedMLUnits": 3.5}),
    _job("llama_7b_finetune_long_name_20261122_083000", "RUNNING", "22T08:30:00",
         startTime="2026-11-22T08:31:00Z", trainingInput={**CLUSTER, "workerCount": "7"},
         trainingOutput={"consumedMLUnits": 12.34}),
    _job("mnist_20261122_083000", "RUNNING", "22T08:30:00", startTime="2026-11-22T11:59:53Z"),
    _job("mnist_20261121_120000", "FAILED", "21T12:00:00", startTime="2026-11-21T12:01:00Z",
         endTime="2026-11-21T12:03:00Z", errorMessage=FAILURE),
    _job("mnist_20261120_120000", "SUCCEEDED", "20T12:00:00", startTime="2026-11-20T12:01:00Z",
         endTime="2026-11-20T13:00:00Z"),
    _job("my_model_v2_20261122_083000", "FAILED", "22T08:30:00", startTime="2026-11-22T08:31:00Z",
         endTime="2026-11-22T08:40:00Z", errorMessage="User code raised ValueError: bad shape"),
    _job("my_model_v2_20261119_000000", "SUCCEEDED", "19T00:00:00",
         startTime="2026-11-19T00:01:00Z", endTime="2026-11-20T03:00:00Z",
         trainingOutput={"consumedMLUnits": 250.0}),
    _job("resnet_20261122_100000", "SUCCEEDED", "22T10:00:00", startTime="2026-11-22T10:01:00Z",
         endTime="2026-11-22T10:30:00Z"),
    _job("resnet_20261121_100000", "CANCELLED", "21T10:00:00"),
    _job("weird_state", "EXPLODED", "22T00:00:00"),
]  # fmt: skip


class JobListSnapApp(App[None]):
    """15 jobs in default order, ``mnist`` folded, one job marked, the cursor on the 3rd row."""

    def compose(self) -> ComposeResult:
        rows = sort_rows(JobRow.from_job(j) for j in JOBS)
        yield JobTable(display_rows(rows, {"mnist"}), now=NOW)

    def on_mount(self) -> None:
        table = self.query_one(JobTable)
        table.set_marks({"census_20261121_230000"})
        table.move_to_key("bert_base_20261122_110000")
        table.focus()


SnapCompare = Callable[..., bool]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_job_list(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    """The reviewer should see, under a bold header whose JOB ID has ▲ (default order):

    - rows grouped by base name A→Z, newest first within a family;
    - STATE as symbol + name for every state: ◷ QUEUED #3, ◌ PREPARING, ▶ RUNNING, ◍ CANCELLING,
      ✓ SUCCEEDED, ✗ FAILED, ⊘ CANCELLED and ? UNKNOWN (weird_state), each in its theme colour;
    - the cursor (highlighted) on bert_base_20261122_110000, the 3rd row;
    - census_20261121_230000 marked with ● in the left gutter and a tinted background;
    - mnist folded into one line "▸ mnist (3 jobs)  ▶1 ✓1 ✗1";
    - CREATED as "11-22 08:30" (UTC), ELAPSED right-aligned (7s, 4m07s, 1:02:03 style, 1d03h),
      TIER as "CUSTOM ×4", ML UNITS with two decimals;
    - 80 columns: no ERROR column, the long llama id cut in the middle with …;
      120 columns: an ERROR column with first lines of errorMessage, cut with ….
    """
    assert snap_compare(JobListSnapApp(), terminal_size=size)
