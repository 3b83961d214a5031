"""Replica restarts in the shell (issue 42): the list's ``↻N``, the detail's section, the logs'
divider and a watched job's toast, on fixed jobs (tests/support/fixed_jobs.py) whose
``replicaRestarts`` the test changes between two polls, as the service would."""

from __future__ import annotations

import copy
import io
from pathlib import Path

from rich.console import Console
from textual.widgets import Static

from tests.pilot.conftest import fixed_app, raised_toasts, wait_for
from tests.pilot.test_log_view import LogApp, log_line, screen_lines
from tests.support.fixed_jobs import JOBS, RESTARTED_JOB, FixedSource
from tui_app.config.settings import NotifySettings
from tui_app.model.logs.severity import SEVERITIES
from tui_app.model.running.restarts import restart_line
from tui_app.model.views.job_view import JobRow
from tui_app.shell.app import JobsApp
from tui_app.shell.screens.describe_screen import DescribeScreen
from tui_app.shell.screens.logs_screen import ALL, LinesArrived, LogsScreen
from tui_app.widgets.job_table import STATE_W, JobTable

RESTARTED = str(RESTARTED_JOB["jobId"])
PLAIN = "mnist_20261122_083000"
"""A RUNNING job of JOBS that never restarted."""
NOTICE = SEVERITIES["NOTICE"]


def table(app: JobsApp) -> JobTable:
    return app.screen.query_one(JobTable)


def row_text(app: JobsApp, job_id: str) -> str:
    t = table(app)
    index = next(i for i, r in enumerate(t.rows) if r.key == job_id)
    t.scroll_to(y=max(0, index - 1), animate=False, immediate=True)
    return t.render_line(index + 1 - t.scroll_offset.y).text


def listed(app: JobsApp, job_id: str) -> bool:
    """The job is in the table and drawn (a table with rows but no size yet draws blanks)."""
    if not any(isinstance(r, JobRow) and r.job_id == job_id for r in table(app).rows):
        return False
    return bool(row_text(app, job_id).strip())


async def test_the_list_marks_a_restarted_job_and_leaves_the_others_as_they_were(
    tmp_path: Path,
) -> None:
    succeeded = {
        **copy.deepcopy(RESTARTED_JOB),
        "jobId": "restarted_20261122_080000",
        "state": "SUCCEEDED",
        "endTime": "2026-11-22T09:25:00Z",
        "replicaRestarts": [{"taskName": "master-replica-0", "count": 12, "lastCause": "x"}],
    }
    plain_before = ""
    app = fixed_app(tmp_path, JOBS)
    async with app.run_test(size=(140, 30)) as pilot:
        await wait_for(pilot, lambda: listed(app, PLAIN))
        plain_before = row_text(app, PLAIN)
    app = fixed_app(tmp_path, [*JOBS, RESTARTED_JOB, succeeded])
    async with app.run_test(size=(140, 30)) as pilot:
        await wait_for(pilot, lambda: listed(app, RESTARTED))
        # A job that never restarted is drawn exactly as before, beside restarted ones.
        assert row_text(app, PLAIN) == plain_before
        line = row_text(app, RESTARTED)
        state_cell = line[line.index("▶") :][: STATE_W + 1]
        assert state_cell == "▶ RUNNING ↻3 "  # the three restarts of its two replicas
        # A longer state gives way to the count, never the count to the state.
        line = row_text(app, str(succeeded["jobId"]))
        assert line[line.index("✓") :][: STATE_W + 1] == "✓ SUCCE… ↻12 "
    # At the narrowest list the STATE column keeps its width, and the marker in it.
    app = fixed_app(tmp_path, [RESTARTED_JOB])
    async with app.run_test(size=(60, 20)) as pilot:
        await wait_for(pilot, lambda: listed(app, RESTARTED))
        assert "▶ RUNNING ↻3 " in row_text(app, RESTARTED)


def detail_text(app: JobsApp) -> str:
    """The summary as drawn ("" until the screen is up with its job)."""
    if not isinstance(app.screen, DescribeScreen) or app.screen.job is None:
        return ""
    console = Console(width=120, record=True, file=io.StringIO())
    console.print(app.screen.query_one("#describe-content", Static).content)
    return console.export_text()


async def test_the_detail_shows_restarts_per_replica_with_the_last_cause_and_time(
    tmp_path: Path,
) -> None:
    app = fixed_app(tmp_path, [RESTARTED_JOB])
    async with app.run_test(size=(120, 40)) as pilot:
        app.open_describe(RESTARTED)
        await wait_for(pilot, lambda: "Restarts" in detail_text(app), describe=lambda: "")
        lines = [line.rstrip() for line in detail_text(app).splitlines()]
        start = lines.index("Restarts")
        assert lines[start + 1 : start + 3] == [
            "master-replica-0  1 restart, last 2026-11-22 09:12:00 UTC: its machine restarted",
            "worker-replica-1  2 restarts, last 2026-11-22 09:20:00 UTC: it exited with status 3",
        ]
        assert lines.index("Job Overview") < start < lines.index("Training Input")


async def test_a_restart_line_is_drawn_as_a_divider() -> None:
    text = restart_line("master-replica-0", 1, 5, "its machine restarted")
    lines = [
        log_line(0, "step 100", task="master-replica-0"),
        log_line(1, text, task="service", severity=NOTICE),
        log_line(2, text, task="master-replica-0"),  # a trainer's words: an ordinary line
        log_line(3, "resumed from step 100", task="master-replica-0"),
    ]
    app = LogApp()
    async with app.run_test(size=(100, 10)) as pilot:
        view = app.view
        view.append(lines)
        await pilot.pause()
        shown = screen_lines(view)
        assert shown[:4] == [
            "step 100",
            f"── {text} " + "─" * (100 - 1 - len(text) - 4),  # to the edge (less the scrollbar)
            text,
            "resumed from step 100",
        ]
        # With tags and times: the line's own prefix, then the rule.
        view.show_tags = True
        view.timestamps = "utc"
        await pilot.pause()
        assert screen_lines(view)[1].startswith(f"SVC 11-22 09:30:00.010Z ── {text} ──")
        # Wrapped, the rule still takes one line; the save keeps the line's own text.
        view.wrap = True
        await pilot.pause()
        assert screen_lines(view)[1].startswith(f"SVC 11-22 09:30:00.010Z ── {text} ──")
        assert screen_lines(view)[2].endswith(text)
        assert view.visible_text().splitlines()[1] == f"SVC 11-22 09:30:00.010Z {text}"


async def test_a_watched_jobs_restart_is_a_toast_not_an_end(tmp_path: Path) -> None:
    notify = NotifySettings(channels=frozenset({"toast", "flash", "bell"}))
    app = fixed_app(tmp_path, [RESTARTED_JOB], refresh_seconds=0.2, notify=notify)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: table(app).move_to_key(RESTARTED))
        await pilot.press("w")
        await wait_for(pilot, lambda: RESTARTED in table(app).watched)
        told = len(raised_toasts(app))
        # The service restarts the master a second time: a new etag, a new count.
        source = app.source
        assert isinstance(source, FixedSource)
        job = copy.deepcopy(source.fixed.jobs[RESTARTED])
        job["etag"] = "BBBBBBBBBBB="
        job["replicaRestarts"][0].update(count=2, lastCause="its machine restarted")
        source.fixed.jobs[RESTARTED] = job
        await wait_for(
            pilot,
            lambda: len(raised_toasts(app)) > told,
            describe=lambda: str([n.message for n in raised_toasts(app)]),
        )
        toast = raised_toasts(app)[-1]
        assert (
            toast.message
            == f"{RESTARTED}: master-replica-0 restarted (2 of 5): its machine restarted"
        )
        assert (toast.title, toast.severity) == ("Replica restarted", "warning")
        # Not the end's channels: the job is still watched, its row does not flash.
        assert app.job_watch.watched == {RESTARTED}
        assert not table(app).flashing
        await wait_for(pilot, lambda: "↻4" in row_text(app, RESTARTED))
        # A later change with the same count (the job's ML units grew) tells nothing more.
        job = copy.deepcopy(job)
        job["etag"] = "CCCCCCCCCCC="
        job["trainingOutput"] = {"consumedMLUnits": 0.75}
        source.fixed.jobs[RESTARTED] = job
        await wait_for(pilot, lambda: any(r.ml_units == 0.75 for r in app.last_rows))
        assert len(raised_toasts(app)) == told + 1


async def test_the_logs_screen_draws_the_divider_in_the_restarted_replicas_own_view(
    tmp_path: Path,
) -> None:
    text = restart_line("master-replica-0", 1, 5, "its machine restarted")
    batch = [
        log_line(0, "step 100", task="master-replica-0"),
        log_line(1, "step 100", task="worker-replica-0"),
        log_line(2, text, task="service", severity=NOTICE),
        log_line(3, "resumed from step 100", task="master-replica-0"),
    ]
    app = fixed_app(tmp_path, [RESTARTED_JOB])
    async with app.run_test(size=(100, 20)) as pilot:
        logs = LogsScreen(RESTARTED)
        app.push_screen(logs)
        await wait_for(pilot, lambda: logs.is_mounted)
        # Lines as the stream delivers them (fixed jobs have no log stream of their own).
        logs.post_message(LinesArrived(batch))
        master = "master-replica-0"
        await wait_for(pilot, lambda: master in logs.tasks and logs.view(master).line_count == 3)
        texts = {task: [t.text for _, t in logs.view(task).lines] for task in logs.tasks}
        # Read alone, the master's log says where its second run begins; the worker's, which
        # did not restart, does not have the line; the service's and the merged view have it.
        assert texts[master] == ["step 100", text, "resumed from step 100"]
        assert texts["worker-replica-0"] == ["step 100"]
        assert texts["service"] == [text]
        assert [t.text for _, t in logs.view(ALL).lines] == [line.text for line in batch]
        logs.current = master
        await pilot.pause()
        assert screen_lines(logs.view(master))[:3] == [
            "step 100",
            f"── {text} " + "─" * (logs.view(master).size.width - 1 - len(text) - 4),
            "resumed from step 100",
        ]
