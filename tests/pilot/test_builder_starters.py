"""What a newcomer meets first in the builder: the built-in presets, and hints that do not look
like values (issue 29, item 13).

Most of this needs no service, so the app runs on fixed jobs and a frozen clock. That every
preset runs the sample trainer as given is checked against a real service: each validates
there, and the tuning one is submitted and runs to SUCCEEDED, its trials ranked by MINIMIZE.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, OptionList, Select, Static, TextArea
from textual.widgets._select import SelectCurrent

from tests.conftest import TRAINER_SRC
from tests.pilot.conftest import (
    FROZEN_NOW,
    QUIET_REFRESH_SECONDS,
    fixed_app,
    live_app,
    raised_toasts,
)
from tests.support.live_service import TERMINAL, LiveService
from tests.support.settle import wait_until
from tui_app.config.locations import ENV_CONFIG_DIR
from tui_app.config.presets import list_presets, save_preset
from tui_app.model.builder.starter_presets import (
    CODE_NOTE,
    SAMPLE_TRAINER_MODULE,
    STARTER_PRESETS,
    TUNING_NAME,
    TUNING_TRIALS,
)
from tui_app.model.jobs.job_id import split_job_id
from tui_app.model.jobs.tiers import LEGACY_MACHINE_TYPES
from tui_app.model.metrics.metric_goals import best_trial
from tui_app.model.views.trials import final_objectives, goal_of, trial_rows
from tui_app.shell.app import JobsApp
from tui_app.shell.screens.builder_form_widget import BuilderForm
from tui_app.shell.screens.builder_screen import BuilderScreen
from tui_app.shell.screens.confirm_screen import ConfirmScreen
from tui_app.shell.screens.jobs_screen import JobsScreen
from tui_app.shell.screens.presets_screen import PresetsScreen

NOW = FROZEN_NOW


@pytest.fixture(autouse=True)
def _config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_CONFIG_DIR, str(tmp_path / "cfg"))


async def open_builder(pilot: Pilot[None], app: JobsApp) -> BuilderScreen:
    await wait_until(pilot, lambda: app.last_rows, "the list")
    await pilot.press("3")
    await wait_until(
        pilot,
        lambda: isinstance(app.screen, BuilderScreen) and app.screen.check is not None,
        "the builder's first check",
    )
    screen = app.screen
    assert isinstance(screen, BuilderScreen)
    return screen


async def open_presets(pilot: Pilot[None], app: JobsApp) -> PresetsScreen:
    await pilot.press("ctrl+t")
    await wait_until(pilot, lambda: isinstance(app.screen, PresetsScreen), "the presets")
    screen = app.screen
    assert isinstance(screen, PresetsScreen)
    return screen


def listed(screen: PresetsScreen) -> list[str]:
    options = screen.query_one(OptionList)
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


async def test_the_built_in_presets_are_listed_marked_and_fill_the_form(
    tmp_path: Path,
) -> None:
    app = fixed_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        builder = await open_builder(pilot, app)
        form = builder.query_one(BuilderForm)
        form.query_one("#f-job_id", Input).value = "bert_20260101_000000"
        form.query_one("#f-region", Input).value = "europe-west4"

        presets = await open_presets(pilot, app)
        lines = listed(presets)
        assert [line.split()[0] for line in lines] == list(STARTER_PRESETS)
        assert all("built in · " in line for line in lines), lines
        standard = next(line for line in lines if line.startswith("STANDARD_1"))
        assert "master + 4 workers + 3 parameter servers" in standard

        await pilot.press("down", "enter")  # STANDARD_1, second in the tier table
        await wait_until(
            pilot, lambda: form.values().get("scale_tier") == "STANDARD_1", "STANDARD_1 loaded"
        )
        values = form.values()
        base, stamp = split_job_id(values.get("job_id"))
        assert base == "bert" and stamp is not None  # the form's own name, a fresh stamp
        assert values.get("region") == "europe-west4"  # and its own region
        assert builder.note == "Built-in preset STANDARD_1"

        # The tuning starter turns tuning on, with its parameter, minimising the loss the
        # sample trainer reports; like every built-in it runs the sample trainer as given.
        await open_presets(pilot, app)
        await pilot.press("end", "enter")
        await wait_until(pilot, lambda: form.values().tune, "tuning loaded")
        values = form.values()
        assert [p["parameterName"] for p in values.params] == ["learning_rate"]
        assert values.get("hp_goal") == "MINIMIZE"
        assert Path(values.get("package_path")).resolve() == TRAINER_SRC
        assert values.get("module") == SAMPLE_TRAINER_MODULE
        # Opening the tuning section to load it does not scroll the job id out of sight.
        await pilot.pause()
        await pilot.pause()
        assert form.scroll_y == 0 and form.can_view_entire(form.query_one("#f-job_id"))

        # Read-only: d says so and deletes nothing.
        presets = await open_presets(pilot, app)
        await pilot.press("d")
        error = presets.query_one("#preset-error", Static)
        await wait_until(pilot, lambda: "built in" in str(error.render()), "the refusal")
        assert app.screen is presets


async def test_a_saved_preset_of_a_built_in_name_is_listed_instead(tmp_path: Path) -> None:
    """A saved ``BASIC`` (the user's bucket, their module) replaces the built-in in the list and
    on load; saving under a built-in name asks first."""
    save_preset(
        "BASIC",
        {"base_name": "mine", "job": {"trainingInput": {"pythonModule": "mine.task"}}},
    )
    app = fixed_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        builder = await open_builder(pilot, app)
        form = builder.query_one(BuilderForm)
        presets = await open_presets(pilot, app)
        lines = listed(presets)
        assert [line.split()[0] for line in lines].count("BASIC") == 1
        assert lines[0].split() == ["BASIC", "saved"]
        await pilot.press("enter")
        await wait_until(pilot, lambda: form.values().get("module") == "mine.task", "theirs")

        await open_presets(pilot, app)
        await pilot.press("shift+tab")
        name = app.screen.query_one("#preset-name", Input)
        await wait_until(pilot, lambda: name.has_focus, "the name box")
        name.value = "STANDARD_1"
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        await pilot.press("y")
        await wait_until(pilot, lambda: "STANDARD_1" in list_presets(), "saved over it")


async def apply_preset(pilot: Pilot[None], app: JobsApp, name: str) -> None:
    """ctrl+t, the preset ``name`` highlighted in the list, enter: its toast raised."""
    before = len(raised_toasts(app))
    presets = await open_presets(pilot, app)
    options = presets.query_one(OptionList)
    options.highlighted = next(
        i for i in range(options.option_count) if options.get_option_at_index(i).id == name
    )
    await pilot.press("enter")
    await wait_until(
        pilot,
        lambda: isinstance(app.screen, BuilderScreen) and len(raised_toasts(app)) > before,
        f"the preset {name} loaded",
    )


async def test_a_built_in_says_what_to_fill_when_there_is_no_sample_trainer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An install without the sample trainer: the preset cannot know a package folder, so the
    toast says exactly what to fill, the status line says it is missing and the cursor waits
    in the package folder's field."""
    import tui_app.shell.screens.builder_screen as builder_screen

    monkeypatch.setattr(builder_screen, "sample_trainer_dir", lambda: None)
    app = fixed_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        builder = await open_builder(pilot, app)
        form = builder.query_one(BuilderForm)
        await apply_preset(pilot, app, TUNING_NAME)
        toast = raised_toasts(app)[-1]
        assert toast.severity == "warning"
        assert f"Fill in {CODE_NOTE}." in toast.message
        assert form.values().get("package_path") == ""
        assert form.values().get("module") == SAMPLE_TRAINER_MODULE
        assert builder.note == f"Built-in preset {TUNING_NAME}: fill in its package"
        status = builder.query_one("#builder-status", Static)
        await wait_until(pilot, lambda: "fill in its package" in str(status.render()), "said")
        await wait_until(pilot, lambda: app.focused is form.query_one("#f-package_path"), "cursor")


async def test_a_built_in_keeps_the_forms_own_package(tmp_path: Path) -> None:
    """A form that names its package keeps it and its module: a preset changes the machines,
    not the user's code."""
    app = fixed_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        builder = await open_builder(pilot, app)
        form = builder.query_one(BuilderForm)
        form.query_one("#f-package_uris", TextArea).load_text("gs://mine/pkg-1.0.tar.gz")
        form.query_one("#f-module", Input).value = "mine.train"
        await apply_preset(pilot, app, "CUSTOM")
        await wait_until(
            pilot, lambda: form.values().get("scale_tier") == "CUSTOM", "CUSTOM loaded"
        )
        values = form.values()
        assert values.get("package_uris") == "gs://mine/pkg-1.0.tar.gz"
        assert values.get("module") == "mine.train"
        assert values.get("package_path") == ""
        assert "Your package and module are kept." in raised_toasts(app)[-1].message


async def test_every_built_in_runs_the_sample_trainer_on_a_real_service(
    service: LiveService, tmp_path: Path
) -> None:
    """Issue item 3: applied to a new form, each built-in preset is a job the service takes as
    given (the sample trainer's folder and module filled in, nothing left to fill); the tuning
    one, submitted, runs to SUCCEEDED with its trials ranked by MINIMIZE, the lowest loss best."""
    project = "starters-run"
    app = live_app(service, tmp_path, project, refresh_seconds=QUIET_REFRESH_SECONDS)
    async with app.run_test(size=(120, 40)) as pilot:
        # An empty project: the list has no rows to wait for, only its screen.
        await wait_until(pilot, lambda: isinstance(app.screen, JobsScreen), "the list")
        await pilot.press("3")
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, BuilderScreen) and app.screen.check is not None,
            "the builder's first check",
        )
        builder = app.screen
        assert isinstance(builder, BuilderScreen)
        form = builder.query_one(BuilderForm)
        for name in STARTER_PRESETS:
            await apply_preset(pilot, app, name)
            check = builder.validate_now()
            assert check.problems == [], (name, check.problems)
            assert Path(check.package_path).resolve() == TRAINER_SRC, name
            assert check.job["trainingInput"]["pythonModule"] == SAMPLE_TRAINER_MODULE
            assert "It runs the sample trainer" in raised_toasts(app)[-1].message
        assert form.values().get("hp_goal") == "MINIMIZE"  # tuning, the last one

        await pilot.press("ctrl+j")
        await wait_until(pilot, lambda: isinstance(app.screen, JobsScreen), "submitted", 120)
    (job_id,) = [j["jobId"] for j in service.client(project).list_jobs()]
    job = service.wait_state(job_id, TERMINAL, timeout=240, project=project)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    assert goal_of(job) == "MINIMIZE"
    finals = final_objectives(job)
    assert len(finals) == TUNING_TRIALS
    lowest = min(finals, key=lambda trial: finals[trial])
    assert best_trial(finals, "MINIMIZE") == lowest
    rows = trial_rows(job, FROZEN_NOW)
    assert rows[0].best and rows[0].trial_id == lowest  # the trials table: best first
    assert [r.objective for r in rows] == sorted(finals.values())


def hint_style(widget: Input | TextArea) -> tuple[str, bool]:
    if isinstance(widget, Input):
        return str(widget.placeholder), bool(
            widget.get_component_rich_style("input--placeholder").italic
        )
    return str(widget.placeholder), bool(
        widget.get_component_rich_style("text-area--placeholder").italic
    )


async def test_every_empty_field_shows_a_hint_not_a_value(tmp_path: Path) -> None:
    """Each box of the form, the CUSTOM roles' and tuning's included, has a hint phrased as
    one (``e.g. trainer.task``, ``empty: 7d``) and drawn in italics; an empty choice too, and a
    chosen one is drawn plain."""
    app = fixed_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        builder = await open_builder(pilot, app)
        form = builder.query_one(BuilderForm)
        form.query_one("#f-scale_tier", Select).value = "CUSTOM"
        boxes = list(form.query(Input)) + list(form.query(TextArea))
        assert len(boxes) > 20
        for box in boxes:
            hint, italic = hint_style(box)
            assert hint.startswith(("e.g. ", "empty: ", "one per line, e.g. ")), (box.id, hint)
            assert italic, box.id

        worker = form.query_one("#f-worker_type", Select)
        await wait_until(pilot, lambda: worker.is_blank(), "no worker type yet")
        label = worker.query_one(SelectCurrent).query_one("#label")
        assert label.rich_style.italic
        worker.value = LEGACY_MACHINE_TYPES[0]
        await wait_until(pilot, lambda: not label.rich_style.italic, "a chosen type drawn plain")
