"""Custom containers on the local profile (issue 30): the engine the settings name reaches the
service the app starts, the builder says under the image which engine will run it (or why none
can), and the describe view of a container job lists its images and the engine.

The engine is a stand-in script (it answers ``version`` and succeeds at everything else), so
these tests need neither podman nor docker: what they check is what the UI does with the
service's answer, not the containers (tests/service runs real ones).
"""

from __future__ import annotations

import io
import stat
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual.widgets import Label, Static

from tests.conftest import unique_id
from tests.pilot.conftest import raised_toasts, wait_for
from tests.pilot.test_builder_screen import (
    choose,
    error_text,
    field,
    open_builder,
    settled,
    shown,
    type_into,
)
from tui_app.api import connection as connection_module
from tui_app.api.connection import connect, service_health
from tui_app.api.jobs_client import JobsClient, make_credentials
from tui_app.config.settings import Settings, parse_settings
from tui_app.entry.launch import connector
from tui_app.model.jobs.engine_label import runs_with
from tui_app.model.jobs.job_config import to_config_yaml
from tui_app.shell.app import JobsApp
from tui_app.shell.screens.builder_screen import BuilderScreen
from tui_app.shell.screens.describe_screen import DescribeScreen
from tui_app.shell.screens.jobs_screen import JobsScreen
from tui_app.widgets.code_preview import CodePreview
from tui_app.widgets.job_table import JobTable

IMAGE = "localhost/tui-app-test-trainer:1"
WORKER_IMAGE = "localhost/tui-app-test-worker:2"

FAKE_ENGINE = """\
#!/bin/sh
# A container engine that answers `version` and succeeds at everything else, silently.
case " $* " in
  *" version "*) echo 1.2.3 ;;
esac
exit 0
"""


@dataclass
class EngineService:
    """A local service that the app's own start path started from a profile's settings."""

    settings: Settings
    url: str
    state_dir: Path
    engine_dir: Path

    def client(self, project: str) -> JobsClient:
        token = (self.state_dir / "token").read_text().strip()
        return JobsClient(self.url, project, make_credentials(token))

    def app(self, tmp_path: Path, project: str) -> JobsApp:
        profile = self.settings.active_profile()
        return JobsApp(
            self.settings,
            connector(profile, None),
            project,
            profile.name,
            settings_file=tmp_path / "settings.yaml",
        )


def _start_from_settings(root: Path, engine: str, run_args: str) -> Iterator[EngineService]:
    state = root / "state"
    settings = parse_settings(
        textwrap.dedent(
            f"""\
            refresh_seconds: 0.3
            profiles:
              local:
                state_dir: {state}
                container_engine: {engine!r}
                container_run_args: {run_args!r}
            """
        )
    )
    conn = connect(settings.active_profile())  # starts the service, as the TUI does
    try:
        yield EngineService(settings, conn.endpoint, state, root)
    finally:
        subprocess.run(
            [sys.executable, "-m", "tui_app", "service", "stop", "--state-dir", str(state)],
            capture_output=True,
            timeout=60,
            check=False,
        )


@pytest.fixture(scope="module")
def engine_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EngineService]:
    root = tmp_path_factory.mktemp("engine-svc")
    fake = root / "fake-docker"
    fake.write_text(FAKE_ENGINE)
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    yield from _start_from_settings(
        root, f"{fake} --config {root}/conf", "--security-opt label=disable"
    )


@pytest.fixture(scope="module")
def engineless_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EngineService]:
    root = tmp_path_factory.mktemp("engineless-svc")
    yield from _start_from_settings(root, str(root / "no-such-engine"), "")


def engine_line(app: JobsApp) -> str:
    """The builder's engine line, "" while it is hidden."""
    line = app.screen.query_one("#engine-line", Static)
    return str(line.render()) if shown(app, "#engine-line") else ""


def describe_text(app: JobsApp) -> str:
    if not isinstance(app.screen, DescribeScreen) or not app.screen.is_mounted:
        return ""
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(app.screen.query_one("#describe-content", Static).content)
    return console.export_text()


def test_the_profiles_engine_is_the_started_services(engine_service: EngineService) -> None:
    engine = (service_health(engine_service.url) or {}).get("containerEngine")
    assert engine == {
        "name": "docker",
        "version": "1.2.3",
        "command": f"{engine_service.engine_dir}/fake-docker --config {engine_service.engine_dir}"
        "/conf",
        "runArgs": ["--security-opt", "label=disable"],
    }


async def test_builder_says_which_engine_runs_the_image_then_submits_it(
    engine_service: EngineService, tmp_path: Path
) -> None:
    project = "ctr-builder"
    job_id = unique_id("ctr")
    expected = (
        f"Runs with docker 1.2.3 (--config {engine_service.engine_dir}/conf "
        "--security-opt label=disable)"
    )
    health = service_health(engine_service.url) or {}
    assert runs_with(health.get("containerEngine")) == expected

    app = engine_service.app(tmp_path, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_builder(pilot, app, "n")
        await type_into(pilot, app, "job_id", job_id)
        await choose(pilot, app, "scale_tier", "CUSTOM")
        await choose(pilot, app, "master_type", "n1-standard-4")
        screen = await settled(pilot, app)
        assert engine_line(app) == ""  # a package job needs no engine: no line
        await type_into(pilot, app, "master_image", IMAGE)
        await type_into(pilot, app, "args", "--steps\n20")
        await wait_for(pilot, lambda: engine_line(app) != "", describe=lambda: engine_line(app))
        assert engine_line(app) == expected
        assert not screen.query_one("#engine-line").has_class("-problem")

        # A container job needs no module and no package: it is valid as it is.
        screen = await settled(pilot, app)
        assert screen.check is not None and screen.check.problems == []

        await type_into(pilot, app, "master_image", "")
        await settled(pilot, app)
        assert engine_line(app) == ""
        await type_into(pilot, app, "master_image", IMAGE)
        await settled(pilot, app)
        assert engine_line(app) == expected

        await pilot.press("ctrl+j")
        await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen), timeout=60)
        await wait_for(pilot, lambda: app.screen.query_one(JobTable).cursor_key == job_id)

    ti = engine_service.client(project).get(job_id)["trainingInput"]
    assert ti["masterConfig"] == {"imageUri": IMAGE}
    assert ti["args"] == ["--steps", "20"]
    assert "pythonModule" not in ti and "packageUris" not in ti


def label_text(app: JobsApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Label).render())


async def test_a_basic_tier_job_runs_the_image_typed_under_it(
    engine_service: EngineService, tmp_path: Path
) -> None:
    """ml v1 ran masterConfig.imageUri under any tier (gcloud --scale-tier basic
    --master-image-uri): the master's image is a field of every tier, not CUSTOM's alone."""
    project = "ctr-basic"
    job_id = unique_id("ctr_basic")
    app = engine_service.app(tmp_path, project)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_builder(pilot, app, "n")
        await type_into(pilot, app, "job_id", job_id)
        assert field(app, "scale_tier").value == "BASIC"
        assert shown(app, "#f-master_image") and label_text(app, "#label-master_image") == (
            "Image URI"
        )
        assert not shown(app, "#f-master_type") and not shown(app, "#f-master_acc_type")
        assert not shown(app, "#custom-roles")

        await type_into(pilot, app, "master_image", IMAGE)
        await type_into(pilot, app, "args", "--steps\n20")
        await wait_for(pilot, lambda: engine_line(app) != "", describe=lambda: engine_line(app))
        assert engine_line(app).startswith("Runs with docker 1.2.3")
        screen = await settled(pilot, app)
        assert screen.check is not None and screen.check.problems == []
        yaml_text = screen.query_one("#yaml-preview", CodePreview).text
        assert f"  scaleTier: BASIC\n  masterConfig:\n    imageUri: {IMAGE}\n" in yaml_text
        assert "masterType" not in yaml_text
        gcloud = screen.query_one("#gcloud-preview", CodePreview).text
        assert f"--scale-tier basic \\\n  --master-image-uri {IMAGE} \\\n" in gcloud
        assert "--master-machine-type" not in gcloud and "--config" not in gcloud

        # Under CUSTOM the same field is the master's, under its machine rows; back to a
        # predefined tier it is the only one left, with what was typed.
        await choose(pilot, app, "scale_tier", "CUSTOM")
        await settled(pilot, app)
        assert shown(app, "#f-master_type") and shown(app, "#custom-roles")
        assert label_text(app, "#label-master_image") == "  image URI"
        await choose(pilot, app, "scale_tier", "STANDARD_1")
        screen = await settled(pilot, app)
        assert not shown(app, "#f-master_type") and field(app, "master_image").value == IMAGE
        assert screen.check is not None
        assert screen.check.job["trainingInput"]["masterConfig"] == {"imageUri": IMAGE}
        await choose(pilot, app, "scale_tier", "BASIC")
        await settled(pilot, app)

        await pilot.press("ctrl+j")
        await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen), timeout=60)
        await wait_for(pilot, lambda: app.screen.query_one(JobTable).cursor_key == job_id)

        # And a config.yaml of such a job fills the field again.
        screen = await open_builder(pilot, app, "n")
        text = to_config_yaml(engine_service.client(project).get(job_id))
        assert screen.load_config(text, "basic.yaml")
        screen = await settled(pilot, app)
        assert field(app, "master_image").value == IMAGE and shown(app, "#f-master_image")
        assert engine_line(app).startswith("Runs with docker 1.2.3")

    ti = engine_service.client(project).get(job_id)["trainingInput"]
    assert ti["scaleTier"] == "BASIC" and ti["masterConfig"] == {"imageUri": IMAGE}
    assert "masterType" not in ti and ti["args"] == ["--steps", "20"]


async def test_without_an_engine_the_image_field_says_why_and_submit_refuses(
    engineless_service: EngineService, tmp_path: Path
) -> None:
    project = "ctr-none"
    app = engineless_service.app(tmp_path, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_builder(pilot, app, "n")
        await choose(pilot, app, "scale_tier", "CUSTOM")
        await choose(pilot, app, "master_type", "n1-standard-4")
        await type_into(pilot, app, "master_image", IMAGE)
        await wait_for(
            pilot,
            lambda: "need a container engine" in error_text(app, "master_image"),
            describe=lambda: error_text(app, "master_image"),
        )
        why = error_text(app, "master_image")
        assert "no-such-engine" in why and "is not on PATH" in why
        assert engine_line(app) == ""  # said once, as the field's error
        status = str(app.screen.query_one("#builder-status", Static).render())
        assert "1 problem: trainingInput.masterConfig.imageUri" in status

        await pilot.press("ctrl+j")
        await wait_for(
            pilot, lambda: any("Cannot submit" in (n.title or "") for n in raised_toasts(app))
        )
        assert isinstance(app.screen, BuilderScreen)
        assert app.focused is field(app, "master_image")

        # A package job needs no engine: the problem goes with the image.
        await type_into(pilot, app, "master_image", "")
        await settled(pilot, app)
        assert error_text(app, "master_image") == ""
    assert engineless_service.client(project).list_jobs() == []


async def test_describe_lists_each_roles_image_and_the_engine_read_once(
    engine_service: EngineService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = "ctr-describe"
    job_id = unique_id("ctr_cluster")
    engine_service.client(project).create(
        {
            "jobId": job_id,
            "trainingInput": {
                "scaleTier": "CUSTOM",
                "region": "us-central1",
                "masterType": "n1-standard-4",
                "masterConfig": {"imageUri": IMAGE},
                "workerType": "n1-standard-4",
                "workerCount": "1",
                "workerConfig": {"imageUri": WORKER_IMAGE},
                "args": ["--steps", "20"],
            },
        }
    )
    reads: list[str] = []
    real_health = connection_module.service_health

    def counted(url: str) -> dict[str, Any] | None:
        reads.append(url)
        return real_health(url)

    monkeypatch.setattr(connection_module, "service_health", counted)
    app = engine_service.app(tmp_path, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.source.endpoint is not None and bool(app.last_rows))
        connected = len(reads)  # finding the service asked /healthz too
        app.push_screen(DescribeScreen(job_id))
        await wait_for(
            pilot, lambda: "Engine" in describe_text(app), describe=lambda: describe_text(app)
        )
        lines = [line.rstrip() for line in describe_text(app).splitlines()]
        at = lines.index(f"Container image  master: {IMAGE}")
        assert lines[at + 1] == f"                 worker: {WORKER_IMAGE}"
        assert lines[at + 2] == (
            f"Engine           docker 1.2.3 (--config {engine_service.engine_dir}/conf "
            "--security-opt label=disable)"
        )
        assert len(reads) == connected + 1

        # Re-reads of the job (every refresh of a live one) and a reopened describe on the
        # same connection ask the service nothing more.
        screen = app.screen
        assert isinstance(screen, DescribeScreen)
        for _ in range(3):
            screen._refetch()
            await wait_for(pilot, lambda: not screen._fetching)
        await pilot.press("escape")
        app.push_screen(DescribeScreen(job_id))
        await wait_for(pilot, lambda: "Engine" in describe_text(app))
        assert len(reads) == connected + 1


def test_jobs_describe_prints_the_engine(
    engine_service: EngineService, capsys: pytest.CaptureFixture[str]
) -> None:
    import argparse

    from tui_app.entry.jobs_cli import run_jobs_command

    project = "ctr-cli"
    job_id = unique_id("ctr_cli")
    engine_service.client(project).create(
        {
            "jobId": job_id,
            "trainingInput": {
                "scaleTier": "BASIC",
                "region": "us-central1",
                "masterConfig": {"imageUri": IMAGE},
            },
        }
    )
    args = argparse.Namespace(
        action="describe",
        job_id=job_id,
        json=False,
        yaml=False,
        profile=None,
        project=project,
        state_dir=None,
    )
    assert run_jobs_command(args, engine_service.settings) == 0
    out = capsys.readouterr().out
    assert f"Container image: {IMAGE}\n" in out
    assert "Engine:          docker 1.2.3 (--config " in out
