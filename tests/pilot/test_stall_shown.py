"""A stalled job in the shell (issue 43): the list's ``⚠ stalled``, ``z``, the detail's Stall
section and a watched job's notice, on fixed jobs whose ``stall`` field the test sets between
two polls, as the service would."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from tests.pilot.conftest import FROZEN_NOW, fixed_app, raised_toasts, wait_for
from tests.pilot.test_restarts_shown import detail_text, listed, row_text, table
from tests.support.fixed_jobs import JOBS, FixedSource
from tui_app.model.views.job_view import JobRow

HUNG = "mnist_20261122_083000"
"""A RUNNING job of JOBS."""

STALL: dict[str, Any] = {
    "since": "2026-11-22T09:18:00Z",
    "stacksTakenAt": "2026-11-22T09:18:02.500000Z",
    "replicas": [
        {
            "taskName": "master-replica-0",
            "state": "stalled",
            "since": "2026-11-22T09:18:00Z",
            "lastLine": "step 5 loss=0.31 task=master-0",
            "lastOutputTime": "2026-11-22T09:17:55Z",
            "cpuPercent": 0.0,
        },
        {
            "taskName": "ps-replica-0",
            "state": "quiet",
            "since": "2026-11-22T09:10:00Z",
            "cpuPercent": 0.4,
        },
    ],
}


def _with_stall(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = copy.deepcopy(jobs)
    for job in out:
        if job["jobId"] == HUNG:
            assert job["state"] == "RUNNING" and not job.get("errorMessage")
            job["stall"] = copy.deepcopy(STALL)
    return out


async def test_the_list_marks_a_stalled_job_in_the_error_column_and_z_keeps_it(
    tmp_path: Path,
) -> None:
    app = fixed_app(tmp_path, _with_stall(JOBS))
    async with app.run_test(size=(140, 30)) as pilot:
        await wait_for(pilot, lambda: listed(app, HUNG))
        line = row_text(app, HUNG)
        # FROZEN_NOW is 09:30: stalled since 09:18.
        assert FROZEN_NOW.strftime("%H:%M") == "09:30"
        assert "⚠ stalled 12m00s" in line, line
        everything = len(table(app).rows)
        await pilot.press("z")
        # Only the failed, the cancelled and the stalled jobs are left, the stalled one among them.
        await wait_for(pilot, lambda: len(table(app).rows) < everything)
        rows = [r for r in table(app).rows if isinstance(r, JobRow)]
        assert HUNG in {r.job_id for r in rows}
        assert all(r.is_fault for r in rows)
        assert {r.state.value for r in rows} <= {"FAILED", "CANCELLED", "RUNNING"}


async def test_the_detail_names_the_stalled_replicas_with_their_last_line_and_cpu(
    tmp_path: Path,
) -> None:
    app = fixed_app(tmp_path, _with_stall(JOBS))
    async with app.run_test(size=(120, 40)) as pilot:
        app.open_describe(HUNG)
        await wait_for(pilot, lambda: "Stall" in detail_text(app), describe=lambda: "")
        lines = [line.rstrip() for line in detail_text(app).splitlines()]
        start = lines.index("Stall")
        assert lines[start + 1 : start + 5] == [
            "Since             2026-11-22 09:18:00 UTC (12m00s ago)",
            "master-replica-0  stalled; CPU 0.0%; last line at 2026-11-22 09:17:55 UTC: step 5 "
            "loss=0.31 task=master-0",
            "ps-replica-0      quiet; CPU 0.4%; has printed nothing",
            "Stacks            taken 2026-11-22 09:18:02 UTC",
        ]
        assert lines.index("Job Overview") < start < lines.index("Training Input")


async def test_a_watched_job_that_stalls_is_told_once(tmp_path: Path) -> None:
    from tui_app.config.settings import NotifySettings

    notify = NotifySettings(channels=frozenset({"toast", "flash", "bell"}))
    app = fixed_app(tmp_path, JOBS, refresh_seconds=0.2, notify=notify)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: table(app).move_to_key(HUNG))
        await pilot.press("w")
        await wait_for(pilot, lambda: HUNG in table(app).watched)
        told = len(raised_toasts(app))
        source = app.source
        assert isinstance(source, FixedSource)
        job = copy.deepcopy(source.fixed.jobs[HUNG])
        job["etag"] = "SSSSSSSSSSS="
        job["stall"] = copy.deepcopy(STALL)
        source.fixed.jobs[HUNG] = job
        await wait_for(
            pilot,
            lambda: len(raised_toasts(app)) > told,
            describe=lambda: str([n.message for n in raised_toasts(app)]),
        )
        toast = raised_toasts(app)[-1]
        assert toast.title == f"{HUNG} stalled" and toast.severity == "warning"
        assert toast.message.startswith("master-replica-0 print nothing and use no CPU")
        assert HUNG in table(app).flashing
        assert app.job_watch.watched == {HUNG}  # it goes on: still watched
        # The next poll with the job still stalled (its ML units grew) tells nothing more.
        job = copy.deepcopy(job)
        job["etag"] = "TTTTTTTTTTT="
        job["trainingOutput"] = {"consumedMLUnits": 0.75}
        source.fixed.jobs[HUNG] = job
        await wait_for(pilot, lambda: any(r.ml_units == 0.75 for r in app.last_rows))
        assert len(raised_toasts(app)) == told + 1
