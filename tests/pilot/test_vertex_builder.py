"""The builder on a Vertex AI profile: what Vertex ignores is said, what it cannot run is refused.

The app runs on the replayed Vertex AI server (tests/support/vertex_replay.py) through the real
``VertexJobsClient``; the profile in the settings is what tells the builder its backend.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.auth.credentials import AnonymousCredentials
from textual.widgets import Static

from tests.pilot.conftest import raised_toasts, wait_for
from tests.pilot.test_builder_screen import error_text, field, open_builder, settled, type_into
from tests.support.vertex_replay import ENDPOINT, PROJECT, REGION, VertexReplay
from tui_app.api.connection import Connection
from tui_app.api.vertex_client import VertexJobsClient
from tui_app.config.settings import Profile, Settings
from tui_app.shell.app import JobsApp
from tui_app.shell.screens.jobs_screen import JobsScreen


@dataclass(frozen=True)
class _Replayed(Connection):
    replay: VertexReplay | None = None

    def jobs(self, project: str) -> VertexJobsClient:
        return VertexJobsClient(project, REGION, http=self.replay)


def vertex_builder_app(tmp_path: Path, replay: VertexReplay) -> JobsApp:
    profile = Profile("cloud", kind="vertex", project=PROJECT, region=REGION)
    settings = Settings(profile="cloud", refresh_seconds=0.5, profiles={"cloud": profile})

    def connect(start: bool = True) -> Connection:
        return _Replayed(
            ENDPOINT,
            AnonymousCredentials(),
            "cloud",
            backend="vertex",
            region=REGION,
            replay=replay,
        )

    return JobsApp(settings, connect, PROJECT, "cloud", settings_file=tmp_path / "s.yaml")


def notes(app: JobsApp) -> str:
    box = app.screen.query_one("#builder-notes", Static)
    return str(box.render()) if box.display else ""


async def fill_runnable(pilot: Any, app: JobsApp) -> None:
    await type_into(pilot, app, "package_uris", "gs://my-project-ml/packages/trainer-0.1.0.tar.gz")
    await type_into(pilot, app, "module", "trainer.task")
    await type_into(pilot, app, "runtime_version", "2.11")
    await type_into(pilot, app, "job_dir", "gs://my-project-ml/jobs/run")


async def test_the_builder_names_what_vertex_ignores_and_submits_there(tmp_path: Path) -> None:
    replay = VertexReplay()
    app = vertex_builder_app(tmp_path, replay)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_builder(pilot, app, "n")
        assert field(app, "region").value == REGION
        await fill_runnable(pilot, app)
        screen = await settled(pilot, app)
        assert screen.check is not None and screen.check.problems == []
        # Runtime 2.11's image is past its end of availability on Google's list (the app's
        # clock is today): said, not refused.
        assert "Vertex AI ignores or changes 1 field" in notes(app)
        assert "end of availability" in notes(app)
        await type_into(pilot, app, "priority", "7")
        screen = await settled(pilot, app)
        assert screen.check is not None and screen.check.problems == []
        assert "Vertex AI ignores or changes 2 fields" in notes(app)
        assert "scheduling.priority" in notes(app)
        await pilot.press("ctrl+j")
        await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen))
        await wait_for(pilot, lambda: any(r.method == "POST" for r in replay.requests))
        posted = [r for r in replay.requests if r.method == "POST"][-1]
        assert posted.path == f"/v1/projects/{PROJECT}/locations/{REGION}/customJobs"
        pool = posted.body["jobSpec"]["workerPoolSpecs"][0]
        assert pool["machineSpec"] == {"machineType": "n1-standard-4"}
        assert pool["pythonPackageSpec"]["args"] == ["--job-dir=gs://my-project-ml/jobs/run"]
        assert "priority" not in str(posted.body)


async def test_what_vertex_cannot_run_shows_under_its_field(tmp_path: Path) -> None:
    replay = VertexReplay()
    app = vertex_builder_app(tmp_path, replay)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_builder(pilot, app, "n")
        await fill_runnable(pilot, app)
        await type_into(pilot, app, "region", "europe-west4")
        await settled(pilot, app)
        assert "This profile runs jobs in us-central1" in error_text(app, "region")
        await type_into(pilot, app, "region", REGION)
        await type_into(pilot, app, "job_dir", "/tmp/not-a-bucket")
        await settled(pilot, app)
        assert "gs://" in error_text(app, "job_dir")
        before = len(replay.requests)
        await pilot.press("ctrl+j")
        await wait_for(
            pilot, lambda: any("Cannot submit" in (n.title or "") for n in raised_toasts(app))
        )
        assert not any(r.method == "POST" for r in replay.requests[before:])
