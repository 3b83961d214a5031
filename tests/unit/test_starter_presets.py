"""The builder's built-in presets: one per scale tier, all read from the tier table, each a job the
form can show and the service would accept, running the sample trainer as given (the builder
fills in its folder: tests/pilot/test_builder_starters.py)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

import tui_app.model.builder.starter_presets as starters
from tui_app.model.builder.builder_form import form_to_job, job_to_form
from tui_app.model.builder.starter_presets import (
    CODE_NOTE,
    CUSTOM_MACHINES_FROM,
    SAMPLE_TRAINER_MODULE,
    STARTER_PRESETS,
    TUNING_NAME,
    preset_choices,
)
from tui_app.model.jobs.job_spec import parse_job
from tui_app.model.jobs.tiers import MACHINE_TYPES, SCALE_TIERS, Role

PACKAGE = "gs://bucket/trainer-0.1.tar.gz"
TRAINER = Path(__file__).resolve().parents[2] / "examples" / "trainer"


def test_every_scale_tier_has_a_starter_then_the_tuning_one() -> None:
    assert list(STARTER_PRESETS) == [*SCALE_TIERS, TUNING_NAME]
    for name in SCALE_TIERS:
        assert STARTER_PRESETS[name].data["job"]["trainingInput"]["scaleTier"] == name


def test_each_line_says_what_runs() -> None:
    summary = {name: s.summary for name, s in STARTER_PRESETS.items()}
    assert summary["BASIC"] == "one machine: 4 vCPU, 15 GB"
    assert summary["BASIC_GPU"] == "one machine: 8 vCPU, 30 GB, 1 K80 GPU"
    assert summary["STANDARD_1"] == "master + 4 workers + 3 parameter servers"
    assert summary["CUSTOM"] == "master + 2 workers + 1 parameter server"
    assert summary[TUNING_NAME] == "one machine, 4 trials tuning learning_rate"


def test_the_custom_cluster_takes_its_machines_from_a_tier() -> None:
    ti = STARTER_PRESETS["CUSTOM"].data["job"]["trainingInput"]
    machines = {g.role: g.machine_type for g in SCALE_TIERS[CUSTOM_MACHINES_FROM].groups}
    assert ti["masterType"] == machines[Role.MASTER]
    assert (ti["workerType"], ti["workerCount"]) == (machines[Role.WORKER], "2")
    assert (ti["parameterServerType"], ti["parameterServerCount"]) == (
        machines[Role.PARAMETER_SERVER],
        "1",
    )


def test_no_machine_type_is_written_out_in_the_module() -> None:
    """tiers.py is the one table: a machine type named here would be a second one."""
    source = Path(starters.__file__).read_text(encoding="utf-8")
    assert not [m for m in MACHINE_TYPES if f'"{m}"' in source or f"'{m}'" in source]


@pytest.mark.parametrize("name", list(STARTER_PRESETS))
def test_each_fills_the_form_and_is_a_valid_job_once_code_is_named(name: str) -> None:
    data = copy.deepcopy(STARTER_PRESETS[name].data)
    assert data["base_name"] is None and data["package_path"] is None  # the form keeps its own
    job = {"jobId": "x_20260101_000000", **data["job"]}
    form, problems = job_to_form(job)
    assert problems == []
    assert form.tune == (name == TUNING_NAME)
    assert form.get("module") == SAMPLE_TRAINER_MODULE  # the sample trainer's, as given
    form.values.update(package_uris=PACKAGE, region="us-central1")
    back, problems = form_to_job(form)
    assert problems == []
    parse_job(back)  # raises JobSpecError naming what the service would refuse


def test_a_saved_preset_of_a_built_in_name_is_listed_instead_of_it() -> None:
    choices = preset_choices(["BASIC", "mnist"])
    names = [n for n, _ in choices]
    assert names[:2] == ["BASIC", "mnist"] and names.count("BASIC") == 1
    assert dict(choices)["BASIC"] is None  # the saved one
    assert dict(choices)["STANDARD_1"] is STARTER_PRESETS["STANDARD_1"]
    assert [n for n, _ in preset_choices([])] == list(STARTER_PRESETS)


def test_every_starter_runs_the_sample_trainers_module() -> None:
    """The module named is the sample trainer's (examples/trainer), so a preset applied to an
    empty form runs as given once the builder fills in the folder."""
    module_file = TRAINER / Path(*SAMPLE_TRAINER_MODULE.split("."))
    assert module_file.with_suffix(".py").is_file()
    for starter in STARTER_PRESETS.values():
        assert starter.data["job"]["trainingInput"]["pythonModule"] == SAMPLE_TRAINER_MODULE
        assert starter.code_note == CODE_NOTE
    # Where the builder finds no sample trainer, the note says which fields to fill, and how.
    assert CODE_NOTE.startswith("Package dir: ") and "setup.py" in CODE_NOTE
    assert "Module: " in CODE_NOTE and SAMPLE_TRAINER_MODULE in CODE_NOTE


def test_the_tuning_starter_minimises_the_loss_the_sample_trainer_reports() -> None:
    """The sample trainer reports its held-out MSE as ``training/hptuning/metric``: maximising
    it ranks the worst learning rate best (issue item 3)."""
    hp = STARTER_PRESETS[TUNING_NAME].data["job"]["trainingInput"]["hyperparameters"]
    assert hp["goal"] == "MINIMIZE"
    reporter = (TRAINER / "trainer" / "hypertune.py").read_text(encoding="utf-8")
    assert f'DEFAULT_METRIC_TAG = "{hp["hyperparameterMetricTag"]}"' in reporter
    assert "goal`` should be\n``MINIMIZE``" in reporter  # what the trainer's docstring says
