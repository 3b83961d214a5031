"""The config builder as a person sees it, BASIC and CUSTOM, at 80x24 and 120x40 (issue 5).

Fixed jobs, a frozen clock and a fixed job id: the pictures must not change between runs.
Behaviour (validation, submit, save, presets) is tested against the real service in tests/pilot.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from tests.support.fixed_jobs import FixedSource
from tests.support.settle import settled, wait_until
from tui_app.shell.app import JobsApp
from tui_app.shell.screens.builder_screen import BuilderScreen
from tui_app.config.settings import Settings

NOW = datetime(2026, 11, 22, 9, 30, 0, tzinfo=UTC)
SIZES = [(80, 24), (120, 40)]
PACKAGE = "gs://demo-bucket/packages/trainer-0.1.0.tar.gz"

BASIC: dict[str, Any] = {
    "jobId": "mnist_20261122_093000",
    "labels": {"owner": "ann"},
    "trainingInput": {
        "scaleTier": "BASIC",
        "packageUris": [PACKAGE],
        "pythonModule": "trainer.task",
        "args": ["--steps", "200"],
        "region": "us-central1",
        "jobDir": "gs://demo-bucket/mnist",
    },
}
CUSTOM: dict[str, Any] = {
    "jobId": "census_dist_20261122_093000",
    "labels": {"owner": "ann", "team": "ml"},
    "trainingInput": {
        "scaleTier": "CUSTOM",
        "masterType": "n1-standard-8",
        "workerType": "n1-standard-8",
        "workerCount": "2",
        "parameterServerType": "n1-standard-4",
        "parameterServerCount": "1",
        "workerConfig": {"acceleratorConfig": {"count": "1", "type": "NVIDIA_TESLA_T4"}},
        "packageUris": [PACKAGE],
        "pythonModule": "trainer.task",
        "args": ["--steps", "2000"],
        "region": "us-central1",
        "scheduling": {"maxRunningTime": "7200s"},
    },
}


@pytest.fixture(autouse=True)
def _no_cursor_blink(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Input, "_toggle_cursor", lambda self: None)


def make_app(tmp_path: Path) -> JobsApp:
    return JobsApp(
        Settings(), lambda: None, "demo-project", "local",  # type: ignore[arg-type,return-value]
        settings_file=tmp_path / "settings.yaml", clock=lambda: NOW, source=FixedSource(),
    )


def opened(job: dict[str, Any]) -> Any:
    async def run_before(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, JobsApp)
        await wait_until(pilot, lambda: app.last_rows, "the jobs listed")
        app.open_builder(job, note=f"Copy of {job['jobId']}")
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, BuilderScreen) and app.screen.check is not None,
            "the builder's first check",
        )
        await settled(pilot)

    return run_before


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_builder_basic(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    """A valid BASIC job: status line says valid; the tier panel explains BASIC (one master,
    standard, 4 vCPU, 15 GB, 0.5661 ML units/h); no cluster fields. At 120 columns the
    config.yaml and the gcloud line are beside the form; at 80 only the form (F2 swaps)."""
    assert snap_compare(make_app(tmp_path), run_before=opened(BASIC), terminal_size=size)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_builder_custom(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    """A CUSTOM 1 master + 2 workers (a T4 each) + 1 parameter server: the panel rows per
    role with the total (4 replicas, 2 GPUs), then each role's machine type and count, the
    workers' accelerator; the previews show workerCount and --worker-accelerator."""
    assert snap_compare(make_app(tmp_path), run_before=opened(CUSTOM), terminal_size=size)


def test_builder_preview_narrow(snap_compare: Any, tmp_path: Path) -> None:
    """At 80x24, F2 shows the previews instead of the form: config.yaml on top, gcloud below."""

    async def run_before(pilot: Pilot[Any]) -> None:
        await opened(CUSTOM)(pilot)
        await pilot.press("f2")
        await settled(pilot)

    assert snap_compare(make_app(tmp_path), run_before=run_before, terminal_size=(80, 24))


def test_builder_invalid(snap_compare: Any, tmp_path: Path) -> None:
    """An invalid job: each problem in red under its field (workerType missing for 2 workers,
    a module that is not a module name); the status line counts them."""
    job = {
        **CUSTOM,
        "trainingInput": {
            **CUSTOM["trainingInput"],
            "workerType": None,
            "pythonModule": "trainer/task.py",
        },
    }
    job["trainingInput"] = {k: v for k, v in job["trainingInput"].items() if v is not None}
    job["trainingInput"].pop("workerConfig")
    assert snap_compare(make_app(tmp_path), run_before=opened(job), terminal_size=(120, 40))


CONTAINER: dict[str, Any] = {
    "jobId": "ctr_20261122_093000",
    "trainingInput": {
        "scaleTier": "CUSTOM",
        "masterType": "n1-standard-4",
        "masterConfig": {"imageUri": "localhost/tui-app-test-trainer:1"},
        "workerType": "n1-standard-4",
        "workerCount": "1",
        "workerConfig": {"imageUri": "localhost/tui-app-test-worker:2"},
        "args": ["--steps", "20", "--sleep", "0.05"],
        "region": "us-central1",
        "jobDir": "gs://demo-bucket/ctr",
    },
}


def test_builder_container_engine(snap_compare: Any, tmp_path: Path) -> None:
    """A custom-container job on the local profile: under the master's image URI, "Runs with
    podman 4.3.1 (--runtime runc)" (the service's engine, here given as its /healthz would);
    no module or package needed (valid); the gcloud line has --master-image-uri and
    --worker-image-uri and no --config."""

    async def run_before(pilot: Pilot[Any]) -> None:
        await opened(CONTAINER)(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, BuilderScreen)
        screen._engine_arrived(
            {
                "name": "podman",
                "version": "4.3.1",
                "command": "/usr/bin/podman --runtime runc",
                "runArgs": [],
            }
        )
        screen.form.focus_field("master_image")
        await settled(pilot)

    assert snap_compare(make_app(tmp_path), run_before=run_before, terminal_size=(120, 40))
