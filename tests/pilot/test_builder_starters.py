"""What a newcomer meets first in the builder: the built-in presets, and hints that do not look
like values (issue 29, item 13).

Nothing here submits, so the app runs on fixed jobs and a frozen clock; submitting is tested
against the real service in test_builder_screen.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, OptionList, Select, Static, TextArea
from textual.widgets._select import SelectCurrent

from tests.pilot.conftest import FROZEN_NOW, fixed_app
from tests.support.settle import wait_until
from tui_app.config.locations import ENV_CONFIG_DIR
from tui_app.config.presets import list_presets, save_preset
from tui_app.model.job_id import split_job_id
from tui_app.model.starter_presets import STARTER_PRESETS
from tui_app.model.tiers import LEGACY_MACHINE_TYPES
from tui_app.shell.app import JobsApp
from tui_app.shell.screens.builder_form_widget import BuilderForm
from tui_app.shell.screens.builder_screen import BuilderScreen
from tui_app.shell.screens.confirm_screen import ConfirmScreen
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

        # The tuning starter turns tuning on, with its parameter.
        await open_presets(pilot, app)
        await pilot.press("end", "enter")
        await wait_until(pilot, lambda: form.values().tune, "tuning loaded")
        assert [p["parameterName"] for p in form.values().params] == ["learning_rate"]

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
