"""Watching jobs (issue 27, item 3): ``w`` on the list, ``W`` for new jobs, notify: settings.

Every job here really runs on the service fixture; a watched job's end is made to happen (a
cancel through the API, a trainer that fails at once), never waited for by the clock.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from rich.console import Console
from textual.widgets import Static

from tests.pilot.conftest import fixed_app, raised_toasts, wait_for
from tests.support.live_service import LiveService, basic_job
from tui_app.config.settings import NotifySettings, Profile, Settings
from tui_app.entry.launch import connector
from tui_app.model.views.job_view import JobRow
from tui_app.shell.app import JobsApp
from tui_app.shell.screens.confirm_screen import ConfirmScreen
from tui_app.shell.screens.help_screen import HelpScreen
from tui_app.shell.screens.jobs_screen import JobsScreen
from tui_app.widgets.job_table import WATCH_GLYPH, JobTable

LONG = ("--steps", "100000", "--sleep", "0.1")


def watch_app(
    service: LiveService, tmp_path: Path, project: str, notify: NotifySettings | None = None
) -> JobsApp:
    """The real app on the real service, polling every 0.3 s, with these notify: settings."""
    settings = Settings(refresh_seconds=0.3, notify=notify or NotifySettings())
    return JobsApp(
        settings,
        connector(Profile("local"), service.state_dir),
        project,
        "local",
        settings_file=tmp_path / "settings.yaml",
    )


def table(app: JobsApp) -> JobTable:
    return app.screen.query_one(JobTable)


def row_states(app: JobsApp) -> dict[str, str]:
    return {r.job_id: r.state.value for r in table(app).rows if isinstance(r, JobRow)}


def toasts(app: JobsApp) -> list[tuple[str, str]]:
    return [(n.title, n.message) for n in raised_toasts(app)]


def watching_new(app: JobsApp) -> bool:
    """``W``'s state (read through a call: mypy would keep an attribute's narrowed value)."""
    return app.watch_submitted


def titles(app: JobsApp) -> list[str]:
    return [n.title for n in raised_toasts(app)]


def header_text(app: JobsApp) -> str:
    return table(app).render_line(0).text


def row_text(app: JobsApp, job_id: str) -> str:
    t = table(app)
    index = next(i for i, r in enumerate(t.rows) if r.key == job_id)
    return t.render_line(index + 1 - t.scroll_offset.y).text


async def _cursor_on(pilot: Any, app: JobsApp, job_id: str) -> None:
    await wait_for(pilot, lambda: table(app).move_to_key(job_id))
    assert table(app).cursor_key == job_id


async def test_w_on_a_running_job_that_then_ends(
    service: LiveService, package_uri: str, tmp_path: Path
) -> None:
    project = "watch-project"
    client = service.client(project)
    running = "watched_20261122_090000"
    other = "other_20261122_090000"
    client.create(basic_job(running, package_uri, *LONG))
    client.create(basic_job(other, package_uri, "--steps", "1"))
    service.wait_state(other, project=project)
    service.wait_state(running, ("RUNNING",), project=project)
    app = watch_app(service, tmp_path, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: row_states(app).get(running) == "RUNNING")
        await _cursor_on(pilot, app, running)
        await pilot.press("w")
        await wait_for(pilot, lambda: running in table(app).watched)
        assert app.job_watch.watched == {running}
        assert row_text(app, running).startswith(f" {WATCH_GLYPH}{running}")
        assert f"{WATCH_GLYPH}1 watched" in header_text(app)
        assert any(f"Watching {running}" in message for _, message in toasts(app))

        # A job that has ended already is not watched, and the toast says why.
        await _cursor_on(pilot, app, other)
        await pilot.press("w")
        await wait_for(pilot, lambda: any("Already ended" in m for _, m in toasts(app)))
        assert other not in table(app).watched
        assert any(f"{other} (SUCCEEDED)" in m for _, m in toasts(app))

        client.cancel(running)
        await wait_for(
            pilot,
            lambda: f"{running} CANCELLED" in titles(app),
            describe=lambda: str(toasts(app)),
        )
        # The toast names the job and its state, and says the cause as the ERROR column does.
        assert (f"{running} CANCELLED", "Job cancelled by user.") in toasts(app)
        assert running in table(app).flashing  # the row flashes...
        assert app.job_watch.watched == frozenset()  # ...and the watch is done
        assert WATCH_GLYPH not in row_text(app, running)
        assert "watched" not in header_text(app)
        await wait_for(pilot, lambda: not table(app).flashing, timeout=10)  # for a few seconds


async def test_w_twice_unwatches_and_marks_watch_every_marked_job(
    service: LiveService, package_uri: str, tmp_path: Path
) -> None:
    project = "watch-marks-project"
    client = service.client(project)
    ids = ["a_20261122_090000", "b_20261122_090000"]
    for job_id in ids:
        client.create(basic_job(job_id, package_uri, *LONG))
    app = watch_app(service, tmp_path, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: set(row_states(app)) == set(ids))
        await _cursor_on(pilot, app, ids[0])
        await pilot.press("w")
        await wait_for(pilot, lambda: table(app).watched == {ids[0]})
        await pilot.press("w")
        await wait_for(pilot, lambda: table(app).watched == frozenset())
        assert any(f"Stopped watching {ids[0]}" in m for _, m in toasts(app))
        table(app).set_marks(ids)
        await pilot.press("w")
        await wait_for(pilot, lambda: table(app).watched == set(ids))
        assert f"{WATCH_GLYPH}2 watched" in header_text(app)
        for job_id in ids:
            client.cancel(job_id)
        await wait_for(pilot, lambda: not app.job_watch.watched)


async def test_W_watches_a_job_submitted_from_here_and_tells_its_cause(
    service: LiveService, package_uri: str, tmp_path: Path
) -> None:
    project = "watch-new-project"
    client = service.client(project)
    old = "fails_20260101_000000"
    client.create(basic_job(old, package_uri, "--fail-at-step", "1"))
    service.wait_state(old, project=project)
    app = watch_app(service, tmp_path, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: row_states(app).get(old) == "FAILED")
        await pilot.press("W")
        assert watching_new(app)
        await wait_for(pilot, lambda: f"{WATCH_GLYPH} new jobs" in header_text(app))
        await _cursor_on(pilot, app, old)
        await pilot.press("R")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen))
        # The copy fails too (within a second or two): it was watched from its creation, so
        # its end is told even if no poll ever saw it live.
        await wait_for(
            pilot,
            lambda: any(
                title.endswith(" FAILED") and title != f"{old} FAILED" for title, _ in toasts(app)
            ),
            timeout=60,
            describe=lambda: str(toasts(app)),
        )
        title, message = next(t for t in toasts(app) if t[0].endswith(" FAILED"))
        new = title.removesuffix(" FAILED")
        assert new.startswith("fails_2026") and new != old
        assert message != "Watched job ended."  # the cause, as the list's ERROR column has it
        # The list the App told it from (the screen's copy of that list may still be on its way).
        assert message == next(r.error for r in app.last_rows if r.job_id == new)
        assert new in table(app).flashing
        await pilot.press("W")
        assert not watching_new(app)
        await wait_for(pilot, lambda: "new jobs" not in header_text(app))


async def test_notify_states_and_channels_filter_what_is_told(
    service: LiveService, package_uri: str, tmp_path: Path
) -> None:
    project = "watch-settings-project"
    client = service.client(project)
    quiet, told = "quiet_20261122_090000", "told_20261122_090000"
    for job_id in (quiet, told):
        client.create(basic_job(job_id, package_uri, *LONG))
    # Only cancellations, and only as a toast: no flash.
    notify = NotifySettings(states=frozenset({"CANCELLED"}), channels=frozenset({"toast"}))
    app = watch_app(service, tmp_path, project, notify)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: set(row_states(app)) == {quiet, told})
        table(app).set_marks([quiet, told])
        await pilot.press("w")
        await wait_for(pilot, lambda: table(app).watched == {quiet, told})
        table(app).clear_marks()
        before = len(toasts(app))
        client.cancel(told)
        await wait_for(pilot, lambda: f"{told} CANCELLED" in titles(app))
        assert not table(app).flashing  # flash is not among the channels
        assert len(toasts(app)) == before + 1
        assert app.job_watch.watched == {quiet}

    # The same job ending in a state notify.states leaves out: unwatched, nothing told.
    notify = NotifySettings(states=frozenset({"FAILED"}))
    app = watch_app(service, tmp_path, project, notify)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: row_states(app).get(quiet) == "RUNNING")
        await _cursor_on(pilot, app, quiet)
        await pilot.press("w")
        await wait_for(pilot, lambda: table(app).watched == {quiet})
        count = len(toasts(app))
        client.cancel(quiet)
        await wait_for(pilot, lambda: not app.job_watch.watched)
        assert len(toasts(app)) == count
        assert not table(app).flashing


async def test_help_and_the_palette_list_w_and_W(tmp_path: Path) -> None:
    """``?`` and the palette teach the keys: w (the list's), W (everywhere), with the glyph."""
    app = fixed_app(tmp_path, keymap={"job-table.watch": "ctrl+w"})
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: bool(app.last_rows))
        helps = {c.title: c.help for c in app.get_system_commands(app.screen)}
        assert helps["Watch"].startswith("Key: ^w · Watch the job under the cursor")
        assert WATCH_GLYPH in helps["Watch"]
        assert helps["Watch new jobs"].startswith("Key: W · ")
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        console = Console(width=200, record=True, file=io.StringIO())
        console.print(app.screen.query_one("#help-content", Static).content)
        lines = console.export_text().splitlines()
        assert any("job-table.watch" in line and "^w" in line for line in lines)
        assert any("watch-submitted" in line and " W " in line for line in lines)
