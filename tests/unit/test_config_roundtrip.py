"""config.yaml <-> model, for any valid job and for the corpus in ``examples/configs``.

The builder reads and writes gcloud's ``--config`` format, so a file must come back exactly as it
went out: any valid TrainingInput survives ``to_config_yaml`` -> ``from_config_yaml`` ->
``to_config_yaml`` with the text and the job unchanged (issue 5, done-when 1).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

from tests.support.config_corpus import (
    INVALID,
    SETTINGS,
    VALID,
    expected_field,
    load_corpus_file,
    valid_jobs,
)
from tui_app.model.jobs.job_config import ConfigError, from_config_yaml, to_config_yaml
from tui_app.model.jobs.job_spec import parse_job
from tui_app.model.jobs.tiers import SCALE_TIERS


@SETTINGS
@given(job=valid_jobs())
def test_any_valid_job_survives_the_config_file(job: dict[str, Any]) -> None:
    """config.yaml -> model -> config.yaml is the identity, for the text and for the job."""
    model = parse_job(job)
    text = to_config_yaml(model)
    loaded = from_config_yaml(text)
    assert loaded == model
    assert to_config_yaml(loaded) == text


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_valid_corpus_loads_and_saves_round_trip(path: Path) -> None:
    model = load_corpus_file(path)
    text = to_config_yaml(model)
    assert from_config_yaml(text) == model
    assert to_config_yaml(from_config_yaml(text)) == text


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.name)
def test_invalid_corpus_is_rejected_with_its_field(path: Path) -> None:
    field = expected_field(path)
    with pytest.raises(ConfigError) as err:
        load_corpus_file(path)
    found = {v.field: v.description for v in err.value.violations}
    assert field in found, found
    assert found[field].endswith("."), "each message is a sentence that says what is allowed"


def test_the_corpus_covers_every_tier_and_hyperparameter_choice() -> None:
    """The valid corpus is what done-when 1 lists: every tier, accelerators, containers, HP."""
    jobs = [load_corpus_file(p)["trainingInput"] for p in VALID]
    assert {ti["scaleTier"] for ti in jobs} == set(SCALE_TIERS)
    replicas = [
        ti.get(f"{role}Config", {})
        for ti in jobs
        for role in ("master", "worker", "parameterServer", "evaluator")
    ]
    assert {r["acceleratorConfig"]["type"] for r in replicas if "acceleratorConfig" in r} >= {
        "NVIDIA_TESLA_T4",
        "NVIDIA_TESLA_A100",
        "TPU_V3",
    }
    assert any("imageUri" in r for r in replicas)
    params = [p for ti in jobs for p in ti.get("hyperparameters", {}).get("params", [])]
    assert {p["type"] for p in params} == {"DOUBLE", "INTEGER", "CATEGORICAL", "DISCRETE"}
    assert {p.get("scaleType", "NONE") for p in params} == {
        "NONE",
        "UNIT_LINEAR_SCALE",
        "UNIT_LOG_SCALE",
        "UNIT_REVERSE_LOG_SCALE",
    }
    algorithms = {ti["hyperparameters"].get("algorithm") for ti in jobs if "hyperparameters" in ti}
    assert algorithms == {None, "GRID_SEARCH", "RANDOM_SEARCH"}
    assert any("scheduling" in ti for ti in jobs) and any("evaluatorCount" in ti for ti in jobs)
