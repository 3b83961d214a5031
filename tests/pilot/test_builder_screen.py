"""The config builder against a real local service (issue 5, done-when 2).

Keys go in through Pilot; jobs really run (the sample trainer, built from its folder as
``gcloud --package-path`` would). Selects are set by value: choosing from Textual's menu is
Textual's to test, what the builder does with the choice is ours.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Select, Static, TextArea

from tests.conftest import TRAINER_SRC
from tests.pilot.conftest import QUIET_REFRESH_SECONDS, live_app, raised_toasts, wait_for
from tests.support.live_service import TERMINAL, LiveService, basic_job
from tui_app.config.locations import ENV_CONFIG_DIR
from tui_app.config.settings import Profile, Settings
from tui_app.entry.launch import connector
from tui_app.model.jobs.job_config import from_config_yaml, to_config_yaml
from tui_app.model.jobs.job_id import split_job_id
from tui_app.model.jobs.job_spec import parse_job
from tui_app.shell.app import JobsApp
from tui_app.shell.screens.builder_screen import BuilderScreen
from tui_app.shell.screens.confirm_screen import ConfirmScreen
from tui_app.shell.screens.jobs_screen import JobsScreen
from tui_app.shell.screens.logs_screen import LogsScreen
from tui_app.shell.screens.message_screen import MessageScreen
from tui_app.shell.screens.presets_screen import PresetsScreen
from tui_app.shell.screens.prompt_screen import PromptScreen
from tui_app.widgets.code_preview import CodePreview
from tui_app.widgets.job_table import JobTable
from tui_app.widgets.tier_panel import TierPanel


def form_app(service: LiveService, tmp_path: Path, project: str) -> JobsApp:
    """The real app on the service, polling the list at the product's pace: these tests work
    in the builder's form, and a submit polls at once."""
    return live_app(service, tmp_path, project, refresh_seconds=QUIET_REFRESH_SECONDS)


def builder(app: JobsApp) -> BuilderScreen:
    screen = app.screen
    assert isinstance(screen, BuilderScreen), type(screen).__name__
    return screen


async def open_builder(pilot: Any, app: JobsApp, key: str = "3") -> BuilderScreen:
    await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen))
    await pilot.press(key)
    await wait_for(pilot, lambda: isinstance(app.screen, BuilderScreen))
    await wait_for(pilot, lambda: builder(app).check is not None)
    return builder(app)


def field(app: JobsApp, key: str) -> Any:
    return app.screen.query_one(f"#f-{key}")


async def type_into(pilot: Any, app: JobsApp, key: str, text: str) -> None:
    """Focus a field and replace its text with ``text`` (``\\n`` is enter, in a TextArea).

    All but the last character are set on the widget and the last one is a real key press:
    the form reacts to the field's Changed message either way, and a press per character
    (each a full refresh of a large form) made these tests take half a minute each.
    """
    widget = field(app, key)
    widget.focus()
    await pilot.pause()
    head, last = text[:-1], text[-1:]
    if isinstance(widget, TextArea):
        widget.load_text(head)
        widget.move_cursor(widget.document.end)
    else:
        widget.value = head
        widget.cursor_position = len(head)
    if last:
        await pilot.press("enter" if last == "\n" else last)
    await pilot.pause()


async def choose(pilot: Any, app: JobsApp, key: str, value: str) -> None:
    select = field(app, key)
    assert isinstance(select, Select)
    select.value = value
    await pilot.pause()


async def settled(pilot: Any, app: JobsApp) -> BuilderScreen:
    """The form validated with what was typed (now, not after the debounce)."""
    await pilot.pause()
    screen = builder(app)
    screen.validate_now()
    await pilot.pause()
    return screen


def error_text(app: JobsApp, key: str) -> str:
    line = app.screen.query_one(f"#e-{key}", Static)
    return str(line.render()) if line.display else ""


def shown(app: JobsApp, selector: str) -> bool:
    widget = app.screen.query_one(selector)
    return bool(widget.display) and all(a.display for a in widget.ancestors_with_self[:-1])


async def test_switching_tiers_shows_and_hides_the_custom_fields(
    service: LiveService, tmp_path: Path
) -> None:
    app = form_app(service, tmp_path, "builder-tiers")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_builder(pilot, app)
        panel = screen.query_one(TierPanel)
        assert not shown(app, "#custom-roles")
        assert panel.summary is not None and panel.summary.tier == "BASIC"
        assert [r.machine_type for r in panel.summary.rows] == ["standard"]

        await choose(pilot, app, "scale_tier", "CUSTOM")
        await settled(pilot, app)
        assert shown(app, "#custom-roles")
        assert shown(app, "#f-master_type") and shown(app, "#f-master_acc_type")
        # A role shows its accelerator and image only once it has a machine type.
        assert shown(app, "#f-worker_type") and not shown(app, "#f-worker_acc_type")
        assert "masterType is required" in error_text(app, "master_type")
        await choose(pilot, app, "master_type", "n1-standard-8")
        await choose(pilot, app, "worker_type", "n1-standard-8")
        await type_into(pilot, app, "worker_count", "3")
        await choose(pilot, app, "worker_acc_type", "NVIDIA_TESLA_T4")
        await settled(pilot, app)
        assert shown(app, "#f-worker_acc_type")
        assert error_text(app, "master_type") == ""
        summary = panel.summary
        assert summary is not None
        assert [(r.role, r.count, r.gpus) for r in summary.rows] == [
            ("master", 1, 0),
            ("workers", 3, 1),
        ]
        assert summary.gpus == 3
        yaml_text = screen.query_one("#yaml-preview", CodePreview).text
        assert "workerCount: 3" in yaml_text and "NVIDIA_TESLA_T4" in yaml_text
        gcloud = screen.query_one("#gcloud-preview", CodePreview).text
        assert "--worker-accelerator count=1,type=nvidia-tesla-t4" in gcloud

        # Back to a predefined tier: the cluster fields go, and leave nothing in the job.
        await choose(pilot, app, "scale_tier", "BASIC_GPU")
        check = (await settled(pilot, app)).check
        assert check is not None
        assert not shown(app, "#custom-roles")
        assert not {"masterType", "workerType", "workerConfig"} & set(check.job["trainingInput"])
        assert panel.summary is not None
        assert [(r.machine_type, r.gpus, r.accelerator) for r in panel.summary.rows] == [
            ("standard_gpu", 1, "K80")
        ]


async def test_custom_cluster_from_a_package_folder_runs_its_replicas(
    service: LiveService, tmp_path: Path
) -> None:
    """CUSTOM 1 master + 2 workers + 1 ps, examples/trainer built at submit, really run."""
    project = "builder-submit"
    app = form_app(service, tmp_path, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_builder(pilot, app, "n")
        await type_into(pilot, app, "job_id", "cluster_20260101_000000")
        await choose(pilot, app, "scale_tier", "CUSTOM")
        await choose(pilot, app, "master_type", "standard")
        await choose(pilot, app, "worker_type", "standard")
        await type_into(pilot, app, "worker_count", "2")
        await choose(pilot, app, "ps_type", "standard")
        await type_into(pilot, app, "ps_count", "1")
        await type_into(pilot, app, "package_path", str(TRAINER_SRC))
        await type_into(pilot, app, "module", "trainer.task")
        await type_into(pilot, app, "args", "--steps\n30")
        screen = await settled(pilot, app)
        assert screen.check is not None and screen.check.problems == []
        gcloud = screen.query_one("#gcloud-preview", CodePreview).text
        # gcloud's --package-path names the package itself and builds from its parent.
        assert f"--package-path {TRAINER_SRC}/trainer " in gcloud

        await pilot.press("ctrl+j")
        await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen), timeout=60)
        job_id = "cluster_20260101_000000"
        await wait_for(pilot, lambda: app.screen.query_one(JobTable).cursor_key == job_id)
        # Back in the builder, the same form is there for another run, under a fresh id.
        await pilot.press("3")
        await wait_for(pilot, lambda: isinstance(app.screen, BuilderScreen))
        again = field(app, "job_id").value
        assert again != job_id and split_job_id(again)[0] == "cluster"
        assert field(app, "worker_count").value == "2"

    job = service.client(project).get(job_id)
    ti = job["trainingInput"]
    assert (ti["scaleTier"], ti["workerCount"], ti["parameterServerCount"]) == ("CUSTOM", "2", "1")
    (package,) = ti["packageUris"]
    assert Path(package).is_absolute() and package.endswith(".tar.gz")
    assert ti["args"] == ["--steps", "30"]
    done = service.wait_state(job_id, TERMINAL, timeout=120, project=project)
    assert done["state"] == "SUCCEEDED", done.get("errorMessage")
    entries = service.entries(f'resource.labels.job_id="{job_id}"', project=project)
    tasks = {e["resource"]["labels"].get("task_name") for e in entries}
    assert {"master-replica-0", "worker-replica-0", "worker-replica-1", "ps-replica-0"} <= tasks


async def test_an_invalid_field_blocks_submit_and_says_why(
    service: LiveService, tmp_path: Path, package_uri: str
) -> None:
    project = "builder-invalid"
    app = form_app(service, tmp_path, project)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_builder(pilot, app)
        await type_into(pilot, app, "package_uris", package_uri)
        await type_into(pilot, app, "module", "trainer/task.py")
        await type_into(pilot, app, "max_wait_time", "10m")
        screen = await settled(pilot, app)
        assert "not a Python module name" in error_text(app, "module")
        assert "maxWaitTime must be at least 1800s" in error_text(app, "max_wait_time")
        assert "2 problems" in str(screen.query_one("#builder-status", Static).render())

        await pilot.press("ctrl+j")
        await wait_for(
            pilot, lambda: any("Cannot submit" in (n.title or "") for n in raised_toasts(app))
        )
        assert isinstance(app.screen, BuilderScreen)
        assert app.focused is field(app, "module")
        assert service.client(project).list_jobs() == []

        # Fixed, the service still refuses a package it cannot find: the error lands on it.
        await type_into(pilot, app, "module", "trainer.task")
        await type_into(pilot, app, "max_wait_time", "")
        await type_into(pilot, app, "package_uris", "gs://test-bucket/packages/missing.tar.gz")
        await settled(pilot, app)
        await pilot.press("ctrl+j")
        await wait_for(pilot, lambda: "does not exist" in error_text(app, "package_uris"))
        assert isinstance(app.screen, BuilderScreen)
        assert service.client(project).list_jobs() == []

        # An id that is taken: the service's 409 (field job.job_id) lands on the job id.
        service.client(project).create(basic_job("taken_20260101_000000", package_uri))
        await type_into(pilot, app, "package_uris", package_uri)
        await type_into(pilot, app, "job_id", "taken_20260101_000000")
        await settled(pilot, app)
        await pilot.press("ctrl+j")
        await wait_for(
            pilot,
            lambda: "already exists" in error_text(app, "job_id"),
            timeout=60,
            describe=lambda: f"{builder(app).check} {raised_toasts(app)}",
        )
        assert app.focused is field(app, "job_id")
        await type_into(pilot, app, "job_id", "taken_20260101_000001")
        await settled(pilot, app)
        assert error_text(app, "job_id") == ""  # editing the field clears the service's word


async def test_E_on_a_finished_job_prefills_a_copy(
    service: LiveService, tmp_path: Path, package_uri: str
) -> None:
    project = "builder-copy"
    old = "mnist_20260101_000000"
    body = basic_job(old, package_uri, "--steps", "1", scaleTier="BASIC")
    body["labels"] = {"owner": "ann"}
    service.client(project).create(body)
    service.wait_state(old, project=project)
    app = form_app(service, tmp_path, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.screen.query_one(JobTable).cursor_key == old)
        screen = await open_builder(pilot, app, "E")
        new_id = field(app, "job_id").value
        base, stamp = split_job_id(new_id)
        assert base == "mnist" and stamp is not None and new_id != old
        assert field(app, "module").value == "trainer.task"
        assert field(app, "package_uris").text == package_uri
        assert field(app, "args").text == "--steps\n1"
        assert field(app, "labels").value == "owner=ann"
        assert "Copy of mnist_20260101_000000" in str(
            screen.query_one("#builder-status", Static).render()
        )
        assert screen.check is not None and screen.check.problems == []
        original = service.client(project).get(old)
        assert screen.check.job["trainingInput"] == original["trainingInput"]


async def test_save_writes_a_config_that_loads_back_equal(
    service: LiveService, tmp_path: Path, package_uri: str
) -> None:
    app = form_app(service, tmp_path, "builder-save")
    target = tmp_path / "out" / "config.yaml"
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_builder(pilot, app)
        await choose(pilot, app, "scale_tier", "CUSTOM")
        await choose(pilot, app, "master_type", "n1-standard-8")
        await choose(pilot, app, "master_acc_type", "NVIDIA_TESLA_T4")
        await type_into(pilot, app, "master_acc_count", "2")
        await type_into(pilot, app, "package_uris", package_uri)
        await type_into(pilot, app, "module", "trainer.task")
        await type_into(pilot, app, "labels", "owner=ann, team=ml")
        await type_into(pilot, app, "max_running_time", "2h")
        await settled(pilot, app)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen))
        prompt = app.screen.query_one(Input)
        assert prompt.value == "config.yaml"  # the default: ./config.yaml
        prompt.value = str(target)
        await pilot.press("enter")
        await wait_for(pilot, target.exists)
        assert builder(app) is screen
        check = screen.check
        assert check is not None
        saved = from_config_yaml(target.read_text())
        assert saved == parse_job(check.job)
        assert saved["trainingInput"]["scheduling"] == {"maxRunningTime": "7200s"}
        assert target.read_text() == to_config_yaml(check.job)

        # Saving over an existing file asks first; No keeps the file as it was.
        before = target.read_text()
        await type_into(pilot, app, "module", "trainer.other")
        await settled(pilot, app)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen))
        assert app.screen.query_one(Input).value == str(target)  # where it was saved
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, BuilderScreen))
        assert target.read_text() == before

        # And ctrl+o opens it again: the form is the saved job.
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen))
        app.screen.query_one(Input).value = str(target)
        await pilot.press("enter")
        await wait_for(pilot, lambda: field(app, "module").value == "trainer.task")
        assert field(app, "master_acc_count").value == "2"


async def test_open_reports_yaml_errors_with_their_line(
    service: LiveService, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("trainingInput:\n  scaleTier: BASIC\n  args: [unclosed\n")
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text("trainingInput:\n  scaleTier: HUGE\n")
    app = form_app(service, tmp_path, "builder-open")
    async with app.run_test(size=(120, 40)) as pilot:
        await open_builder(pilot, app)
        for path, words in ((bad, "Line 4"), (unknown, "trainingInput.scaleTier")):
            await pilot.press("ctrl+o")
            await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen))
            app.screen.query_one(Input).value = str(path)
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, MessageScreen))
            assert isinstance(app.screen, MessageScreen)
            assert words in app.screen.text, app.screen.text
            await pilot.press("escape")
            await wait_for(pilot, lambda: isinstance(app.screen, BuilderScreen))

        # examples/trainer/config.yaml names no package: its folder (with setup.py) becomes one.
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen))
        app.screen.query_one(Input).value = str(TRAINER_SRC / "config.yaml")
        await pilot.press("enter")
        await wait_for(pilot, lambda: field(app, "scale_tier").value == "CUSTOM")
        assert Path(field(app, "package_path").value).resolve() == TRAINER_SRC
        screen = await settled(pilot, app)
        assert screen.check is not None and screen.check.problems == []


async def test_presets_save_load_delete(
    service: LiveService,
    tmp_path: Path,
    package_uri: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(ENV_CONFIG_DIR, str(tmp_path / "cfg"))
    preset_file = tmp_path / "cfg" / "presets" / "gpu-box.yaml"
    app = form_app(service, tmp_path, "builder-presets")
    async with app.run_test(size=(120, 40)) as pilot:
        await open_builder(pilot, app)
        await type_into(pilot, app, "job_id", "bert_20260101_000000")
        await choose(pilot, app, "scale_tier", "BASIC_GPU")
        await type_into(pilot, app, "package_uris", package_uri)
        await type_into(pilot, app, "module", "trainer.task")
        await settled(pilot, app)

        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: isinstance(app.screen, PresetsScreen))
        name = app.screen.query_one("#preset-name", Input)
        assert name.value == "bert"
        await pilot.press("shift+tab")  # from the list (the built-in presets) to the name box
        await wait_for(pilot, lambda: name.has_focus)
        name.value = "gpu-box"
        await pilot.press("enter")
        await wait_for(pilot, preset_file.exists)

        # Change the form, then load the preset back: its values, a fresh id for its base.
        await choose(pilot, app, "scale_tier", "BASIC")
        await type_into(pilot, app, "module", "other.module")
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: isinstance(app.screen, PresetsScreen))
        await pilot.press("enter")  # the list has focus, on gpu-box: saved ones come first
        await wait_for(pilot, lambda: field(app, "module").value == "trainer.task")
        assert field(app, "scale_tier").value == "BASIC_GPU"
        base, stamp = split_job_id(field(app, "job_id").value)
        assert base == "bert" and stamp is not None

        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: isinstance(app.screen, PresetsScreen))
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_for(pilot, lambda: not preset_file.exists())


async def test_command_mode_and_the_kept_form(
    service: LiveService, tmp_path: Path, package_uri: str
) -> None:
    project = "builder-commands"
    job_id = "cmd_20260101_000000"
    service.client(project).create(basic_job(job_id, package_uri, "--steps", "1"))
    app = form_app(service, tmp_path, project)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.screen.query_one(JobTable).cursor_key == job_id)
        await pilot.press("colon", *"builder", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, BuilderScreen))
        await type_into(pilot, app, "module", "kept.module")
        await settled(pilot, app)
        await pilot.press("escape")  # back to the list; the form is kept as it was
        await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen))
        await pilot.press("3")
        await wait_for(pilot, lambda: isinstance(app.screen, BuilderScreen))
        assert field(app, "module").value == "kept.module"

        # In a form ':' is a character (gs://...): command mode is for the other screens.
        await pilot.press("colon")
        assert isinstance(app.screen, BuilderScreen)
        assert isinstance(app.focused, Input) and app.focused.value.endswith(":")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen))
        await pilot.press("colon", *"lo", "enter")  # a unique prefix is enough
        await wait_for(pilot, lambda: isinstance(app.screen, LogsScreen))
        assert isinstance(app.screen, LogsScreen) and app.screen.job_id == job_id
        await pilot.press("colon", *"jobs", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen))


async def test_narrow_preview_toggle_and_copy(service: LiveService, tmp_path: Path) -> None:
    app = form_app(service, tmp_path, "builder-narrow")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_builder(pilot, app)
        assert screen.has_class("-narrow")
        assert not shown(app, "#builder-preview") and shown(app, "#builder-form")
        await pilot.press("f2")
        await pilot.pause()
        assert shown(app, "#builder-preview") and not shown(app, "#builder-form")
        preview = screen.query_one("#yaml-preview", CodePreview)
        assert preview.has_focus
        await pilot.press("c")
        assert app.clipboard == preview.text and preview.text.startswith("# An AI Platform")
        await pilot.press("tab", "c")
        assert app.clipboard.startswith("gcloud ai-platform jobs submit training job_")
        await pilot.press("escape")  # first back to the form
        await pilot.pause()
        assert shown(app, "#builder-form") and isinstance(app.screen, BuilderScreen)


async def test_a_package_folder_needs_the_local_service(
    service: LiveService, tmp_path: Path
) -> None:
    """Through a URL profile (here: the same service, reached as any ml v1 endpoint), a folder
    would need an upload to Cloud Storage: the builder says so on the field, submits nothing."""
    project = "builder-remote"
    profile = Profile("remote", kind="url", endpoint=service.url, token=service.token)
    app = JobsApp(
        Settings(refresh_seconds=QUIET_REFRESH_SECONDS),
        connector(profile, None),
        project,
        "remote",
        settings_file=tmp_path / "settings.yaml",
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await open_builder(pilot, app)
        await type_into(pilot, app, "package_path", str(TRAINER_SRC))
        await type_into(pilot, app, "module", "trainer.task")
        await settled(pilot, app)
        await pilot.press("ctrl+j")
        await wait_for(pilot, lambda: "upload" in error_text(app, "package_path"))
        assert "Package URIs" in error_text(app, "package_path")
        assert isinstance(app.screen, BuilderScreen)
        assert service.client(project).list_jobs() == []


async def test_a_saved_config_keeps_its_package_folder(
    service: LiveService, tmp_path: Path
) -> None:
    """gcloud's config format has no field for a package folder: the save keeps it in a header
    comment, so a reopened config (in a fresh builder) still has code to run."""
    target = tmp_path / "saved" / "config.yaml"
    app = form_app(service, tmp_path, "builder-folder")
    async with app.run_test(size=(120, 40)) as pilot:
        await open_builder(pilot, app, "n")
        await type_into(pilot, app, "package_path", str(TRAINER_SRC))
        await type_into(pilot, app, "module", "trainer.task")
        screen = await settled(pilot, app)
        assert screen.check is not None and screen.check.problems == []
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen))
        app.screen.query_one(Input).value = str(target)
        await pilot.press("enter")
        await wait_for(pilot, target.exists)
        assert f"# tui-app package folder: {TRAINER_SRC.resolve()}" in target.read_text()

        await type_into(pilot, app, "package_path", "")  # as a fresh builder would have it
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen))
        app.screen.query_one(Input).value = str(target)
        await pilot.press("enter")
        await wait_for(pilot, lambda: field(app, "package_path").value != "")
        assert Path(field(app, "package_path").value) == TRAINER_SRC.resolve()
        screen = await settled(pilot, app)
        assert screen.check is not None and screen.check.problems == []


def _taken_check_done(app: JobsApp) -> bool:
    """The ctrl+o worker that asks the service about the opened id has answered."""
    return not any(w.group == "builder-taken" and not w.is_finished for w in app.workers)


async def open_config(pilot: Any, app: JobsApp, path: Path) -> None:
    """ctrl+o, the path, enter: the form loaded from it."""
    await pilot.press("ctrl+o")
    await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen))
    app.screen.query_one(Input).value = str(path)
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, BuilderScreen))


async def test_opening_a_config_whose_job_exists_gives_a_fresh_id(
    service: LiveService, tmp_path: Path, package_uri: str
) -> None:
    """Issue item 2: a config.yaml saved from the builder keeps the id its job was submitted
    under; opened again (ctrl+o), the form takes a fresh id of the same base name and says so,
    and ctrl+j submits it. An id the service does not have is left as it is."""
    project = "builder-reopen"
    old = "mnist_20261207_034046"
    body = basic_job(old, package_uri, "--steps", "1")
    service.client(project).create(body)
    saved = tmp_path / "saved" / "config.yaml"
    saved.parent.mkdir()
    saved.write_text(to_config_yaml(body))
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text(to_config_yaml({**body, "jobId": "fresh_20261207_034046"}))
    app = form_app(service, tmp_path, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_builder(pilot, app)

        await open_config(pilot, app, unknown)
        await wait_for(pilot, lambda: field(app, "module").value == "trainer.task")
        await wait_for(pilot, lambda: _taken_check_done(app))
        await pilot.pause()
        assert field(app, "job_id").value == "fresh_20261207_034046"

        await open_config(pilot, app, saved)
        await wait_for(
            pilot,
            lambda: field(app, "job_id").value not in (old, "fresh_20261207_034046"),
            describe=lambda: field(app, "job_id").value,
        )
        fresh = field(app, "job_id").value
        base, stamp = split_job_id(fresh)
        assert base == "mnist" and stamp is not None
        said = f"{old} exists: this copy will be submitted as {fresh}."
        await wait_for(pilot, lambda: said in [n.message for n in raised_toasts(app)])
        screen = await settled(pilot, app)
        assert screen.check is not None and screen.check.problems == []

        await pilot.press("ctrl+j")
        await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen), timeout=60)
    created = service.client(project).get(fresh)
    assert created["trainingInput"]["args"] == ["--steps", "1"]
    service.end_jobs([old, fresh], project=project)


async def test_a_taken_id_at_submit_names_the_field_and_brings_it_into_view(
    service: LiveService, tmp_path: Path, package_uri: str
) -> None:
    """Issue item 2: when the service answers ALREADY_EXISTS, the toast names the form's Job
    id (not ``job.job_id``), and the field, with its error, is brought into view with the
    cursor on it: from the narrow previews (F2), and from a form scrolled away from it."""
    project = "builder-taken"
    taken = "taken_20261207_034046"
    service.client(project).create(basic_job(taken, package_uri, "--steps", "1"))
    app = form_app(service, tmp_path, project)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_builder(pilot, app)
        await type_into(pilot, app, "package_uris", package_uri)
        await type_into(pilot, app, "module", "trainer.task")
        await type_into(pilot, app, "job_id", taken)
        await settled(pilot, app)
        form = screen.form
        id_box: Input = field(app, "job_id")

        def in_view() -> bool:
            return (
                shown(app, "#builder-form")
                and app.focused is id_box
                and form.can_view_entire(id_box)
                and form.can_view_entire(screen.query_one("#e-job_id"))
            )

        def refusals() -> list[str]:
            return [
                n.message
                for n in raised_toasts(app)
                if n.title in ("Not submitted", "Cannot submit: fix these first")
            ]

        # From the previews, which hide the form at 80 columns.
        await pilot.press("f2")
        await wait_for(pilot, lambda: shown(app, "#builder-preview"))
        await pilot.press("ctrl+j")
        await wait_for(pilot, lambda: len(refusals()) == 1, timeout=60)
        (message,) = refusals()
        assert message.startswith(f"Job id: {taken} already exists on the service"), message
        assert "Change the Job id" in message
        await wait_for(pilot, in_view, describe=lambda: f"focused: {app.focused}")
        assert "already exists" in error_text(app, "job_id")

        # The cursor on the id, the form scrolled to its end: ctrl+j again (refused at once,
        # the service's word still on the field) brings the id back into view.
        form.scroll_end(animate=False)
        await wait_for(pilot, lambda: not form.can_view_entire(id_box))
        assert app.focused is id_box
        await pilot.press("ctrl+j")
        await wait_for(pilot, lambda: len(refusals()) == 2, timeout=60)
        assert "already exists" in refusals()[1]
        await wait_for(pilot, in_view, describe=lambda: f"scroll_y={form.scroll_y}")
        assert isinstance(app.screen, BuilderScreen)
    assert [j["jobId"] for j in service.client(project).list_jobs()] == [taken]
