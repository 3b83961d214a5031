"""The whole app on a Vertex AI profile, against the replayed Vertex AI server.

The connection is a real ``Connection`` (backend ``vertex``) whose jobs client is the real
``VertexJobsClient`` on the replay's http (tests/support/vertex_replay.py), so every list, get
and cancel the screens make goes through googleapiclient to the hand-built fixtures.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from google.auth.credentials import AnonymousCredentials
from rich.console import Console
from textual.widgets import Static

from tests.pilot.conftest import wait_for
from tests.support.vertex_replay import (
    ENDPOINT,
    FAILED_ID,
    HP_ID,
    PROJECT,
    REGION,
    RUNNING_ID,
    VertexReplay,
    fixture,
)
from tui_app.api.connection import Connection
from tui_app.api.vertex_client import VertexJobsClient
from tui_app.config.settings import Settings
from tui_app.model.views.job_view import JobRow
from tui_app.shell.app import JobsApp
from tui_app.shell.messages import JobsRefreshed
from tui_app.shell.row_cache import RowCache
from tui_app.shell.screens.confirm_screen import ConfirmScreen
from tui_app.shell.screens.describe_screen import DescribeScreen
from tui_app.shell.screens.jobs_screen import JobsScreen
from tui_app.widgets.job_table import JobTable
from tui_app.widgets.trials_table import TrialsSection, TrialsTable

NOW = datetime(2026, 11, 22, 10, 35, tzinfo=UTC)
PARENT = f"projects/{PROJECT}/locations/{REGION}"
FAILED_NAME = "mnist_20261122_083000"
RUNNING_NAME = "census_dist_20261122_090000"
HP_NAME = "mnist_hptuning_20261122_100000"
STATES = {
    HP_NAME: "RUNNING",
    "serve_export_20261122_092000": "QUEUED",
    "mnist_20261122_091500": "PREPARING",
    RUNNING_NAME: "RUNNING",
    FAILED_NAME: "FAILED",
    "census_eval_20261121_120000": "CANCELLING",
    "mnist_20261121_083000": "SUCCEEDED",
}


@dataclass(frozen=True)
class ReplayConnection(Connection):
    """A Vertex AI connection whose jobs client talks to the replay instead of Google."""

    replay: VertexReplay | None = None

    def jobs(self, project: str) -> VertexJobsClient:
        assert self.replay is not None
        return VertexJobsClient(project, self.region or REGION, http=self.replay)


def vertex_app(tmp_path: Path, replay: VertexReplay, *, poll: bool = True) -> JobsApp:
    def connect(start: bool = True) -> Connection:
        return ReplayConnection(
            ENDPOINT,
            AnonymousCredentials(),
            f"vertex ({REGION})",
            backend="vertex",
            region=REGION,
            replay=replay,
        )

    return JobsApp(
        Settings(refresh_seconds=0.3),
        connect,
        PROJECT,
        "vertex",
        settings_file=tmp_path / "settings.yaml",
        clock=lambda: NOW,
        poll=poll,
    )


def table(app: JobsApp) -> JobTable:
    return app.screen.query_one(JobTable)


def rows(app: JobsApp) -> dict[str, str]:
    return {r.job_id: r.state.value for r in table(app).rows if isinstance(r, JobRow)}


def drawn(app: JobsApp) -> str:
    t = table(app)
    return "\n".join(s.text for s in t.render_lines(t.region.reset_offset))


def text_of(app: JobsApp, selector: str) -> str:
    """What a Static shows, as plain text (printed 200 columns wide)."""
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(app.screen.query_one(selector, Static).content)
    return console.export_text()


async def loaded(pilot: Any) -> None:
    """Wait until every replayed job is listed and drawn."""
    app = pilot.app
    await wait_for(
        pilot,
        lambda: len(rows(app)) == len(STATES) and all(j in drawn(app) for j in STATES),
        describe=lambda: f"rows {rows(app)}",
    )


async def open_detail(pilot: Any, job_id: str) -> DescribeScreen:
    """Move the cursor to ``job_id`` with the keyboard and open its detail with enter."""
    app = pilot.app
    await pilot.press("g")
    for _ in range(len(STATES) + 2):
        if table(app).cursor_key == job_id:
            break
        await pilot.press("j")
    assert table(app).cursor_key == job_id
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, DescribeScreen))
    screen = app.screen
    assert isinstance(screen, DescribeScreen)
    await wait_for(pilot, lambda: screen.job is not None)
    await pilot.pause(0.05)
    return screen


async def test_the_list_shows_the_replayed_jobs(tmp_path: Path) -> None:
    replay = VertexReplay()
    app = vertex_app(tmp_path, replay)
    async with app.run_test(size=(160, 40)) as pilot:
        await loaded(pilot)
        assert rows(app) == STATES
        text = drawn(app)
        for job_id in STATES:
            assert job_id in text, job_id
        assert "✗ FAILED" in text and "▶ RUNNING" in text
        # The failed job's row shows the cause: the last exception line of the server's error.
        assert "ValueError: Shapes (None, 10)" in text
        paths = {r.path for r in replay.requests}
        assert f"/v1/{PARENT}/customJobs" in paths
        assert f"/v1/{PARENT}/hyperparameterTuningJobs" in paths


async def test_the_failed_jobs_detail_shows_its_error_and_vertex_id(tmp_path: Path) -> None:
    replay = VertexReplay()
    app = vertex_app(tmp_path, replay)
    async with app.run_test(size=(160, 50)) as pilot:
        await loaded(pilot)
        await open_detail(pilot, FAILED_NAME)
        text = text_of(app, "#describe-content")
        message = fixture("custom_job_failed.json")["error"]["message"]
        assert "The replica workerpool0-0 exited with a non-zero status of 1." in text
        assert message.splitlines()[-3] in text  # ValueError: Shapes (None, 10) and (None, 1) …
        assert "Vertex AI" in text
        assert f"{FAILED_ID} (custom job)" in text
        assert "JOB_STATE_FAILED" in text
        assert "n1-standard-4" in text
        assert not app.screen.query_one(TrialsSection).display
        # The detail read the job by its numeric id.
        assert any(
            r.method == "GET" and r.path == f"/v1/{PARENT}/customJobs/{FAILED_ID}"
            for r in replay.requests
        )


async def test_the_tuning_jobs_detail_shows_its_trials(tmp_path: Path) -> None:
    replay = VertexReplay()
    app = vertex_app(tmp_path, replay)
    async with app.run_test(size=(160, 50)) as pilot:
        await loaded(pilot)
        await open_detail(pilot, HP_NAME)
        section = app.screen.query_one(TrialsSection)
        assert section.display
        trials = app.screen.query_one(TrialsTable)
        shown = [r.trial_id for r in trials.shown]
        assert sorted(shown) == ["1", "2", "3", "4", "5", "6"]
        # MAXIMIZE accuracy: trial 4 (0.9418) is the best, then 1 (0.93), then 2 (0.8712).
        assert shown[:3] == ["4", "1", "2"]
        assert [r.trial_id for r in trials.shown if r.best] == ["4"]
        caption = str(section.caption.content)
        assert "accuracy" in caption and "MAXIMIZE" in caption
        assert "3 completed" in caption
        text = text_of(app, "#describe-content")
        assert f"{HP_ID} (hyperparameter tuning job)" in text


async def test_cancel_from_the_list_posts_to_the_numeric_id(tmp_path: Path) -> None:
    replay = VertexReplay()
    app = vertex_app(tmp_path, replay)
    async with app.run_test(size=(160, 40)) as pilot:
        await loaded(pilot)
        await pilot.press("g")
        for _ in range(len(STATES)):
            if table(app).cursor_key == RUNNING_NAME:
                break
            await pilot.press("j")
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_for(
            pilot,
            lambda: rows(app).get(RUNNING_NAME) == "CANCELLING",
            describe=lambda: f"rows {rows(app)}, Vertex state {replay.job(RUNNING_ID)}",
        )
        assert isinstance(app.screen, JobsScreen)
        posts = [(r.method, r.path, r.body) for r in replay.requests if r.method == "POST"]
        assert posts == [("POST", f"/v1/{PARENT}/customJobs/{RUNNING_ID}:cancel", {})]


async def test_a_change_survives_two_queued_polls(tmp_path: Path) -> None:
    """Two lists that arrive before the app handles the first must not lose the first's change.

    The poller's RowCache reports a change once (``changed=True``), then ``changed=False`` for the
    same rows; JobsScreen skips a list whose ``changed`` is False. Found by the cancel test above
    (about one run in 30): the later list replaced the first in Textual's queue
    (``JobsRefreshed.can_replace``), and the row stayed RUNNING while Vertex said CANCELLING.
    """
    replay = VertexReplay()
    client = VertexJobsClient(PROJECT, REGION, http=replay)
    cache = RowCache()
    app = vertex_app(tmp_path, replay, poll=False)
    async with app.run_test(size=(160, 40)) as pilot:
        first, changed = cache.collect(client)
        app.post_message(JobsRefreshed(first, NOW, 0.01, changed))
        await wait_for(pilot, lambda: rows(app).get(RUNNING_NAME) == "RUNNING")
        client.cancel(RUNNING_NAME)
        after, changed = cache.collect(client)
        again, unchanged = cache.collect(client)
        assert (changed, unchanged) == (True, False)
        assert [r.state.value for r in again if r.job_id == RUNNING_NAME] == ["CANCELLING"]
        # Both polls land before the app's message loop gets to the first one.
        app.post_message(JobsRefreshed(after, NOW, 0.01, changed))
        app.post_message(JobsRefreshed(again, NOW, 0.01, unchanged))
        await wait_for(
            pilot,
            lambda: rows(app).get(RUNNING_NAME) == "CANCELLING",
            describe=lambda: (
                "product bug: JobsRefreshed.can_replace (tui_app/shell/messages.py) lets the later "
                "changed=False list replace the pending changed=True one, so JobsScreen never "
                "shows the change"
            ),
        )


async def test_a_denied_list_is_shown_not_raised(tmp_path: Path) -> None:
    replay = VertexReplay()
    replay.set_route("GET", r"/customJobs$", "error_permission_denied.json", status=403)
    app = vertex_app(tmp_path, replay)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_for(pilot, lambda: app.connection_error is not None)
        assert app.connection_error is not None
        assert "PERMISSION_DENIED" in app.connection_error
        assert "aiplatform.customJobs.list" in app.connection_error
        assert rows(app) == {}
