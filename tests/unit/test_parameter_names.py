"""Hyperparameter names as the platform took them: Google's configs use `first-layer-size`.

The service (job_spec), the builder (builder_form, which applies job_spec's rules) and the
Vertex AI translation must agree: every name ml v1 accepted is accepted, and reaches the
trainer as ``--<name>=<value>``.
"""

from __future__ import annotations

from typing import Any

import pytest

from tui_app.model.builder.builder_form import form_to_job, job_to_form
from tui_app.model.jobs.job_spec import JobSpecError, parse_job
from tui_app.model.running.hp_search import arguments, params_from_spec
from tui_app.model.vertex.translate import TranslationError, to_vertex

# Names from Google's published tuning configs (cloudml-samples hptuning_config.yaml files and
# the AI Platform tuning guide), and other shapes the platform's only rule (required, unique)
# lets through.
ACCEPTED = [
    "learning-rate",
    "first-layer-size",
    "num-layers",
    "scale-factor",
    "learning_rate",
    "hidden_units",
    "lr",
    "Dropout.Rate",
    "2nd-layer",
    "x" * 200,
]


def _job(*names: str) -> dict[str, Any]:
    return {
        "jobId": "census_20261122_083000",
        "trainingInput": {
            "region": "us-central1",
            "pythonModule": "trainer.task",
            "packageUris": ["gs://bucket/trainer-0.1.tar.gz"],
            "jobDir": "gs://bucket/census",
            "runtimeVersion": "2.11",
            "hyperparameters": {
                "goal": "MAXIMIZE",
                "maxTrials": 4,
                "params": [
                    {"parameterName": n, "type": "INTEGER", "minValue": 1, "maxValue": 4}
                    for n in names
                ],
            },
        },
    }


def _violations(body: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(JobSpecError) as err:
        parse_job(body)
    return {v.field: v.description for v in err.value.violations}


@pytest.mark.parametrize("name", ACCEPTED)
def test_platform_names_are_accepted_and_become_flags(name: str) -> None:
    job = parse_job(_job(name))
    hp = job["trainingInput"]["hyperparameters"]
    [param] = params_from_spec(hp)
    assert arguments([param], {name: 3.0}) == [f"--{name}=3"]


def test_googles_hyphenated_config_passes_every_check() -> None:
    names = ("learning-rate", "first-layer-size", "num-layers", "scale-factor")
    job = parse_job(_job(*names))
    # The builder shows the same job without a problem and gives it back unchanged.
    form, problems = job_to_form(job)
    assert problems == []
    back, problems = form_to_job(form)
    assert problems == []
    assert [p["parameterName"] for p in back["trainingInput"]["hyperparameters"]["params"]] == [
        *names
    ]
    # Vertex AI's parameterId takes them as they are (its rule: no whitespace, unique).
    request = to_vertex(job, region="us-central1")
    ids = [p["parameterId"] for p in request.body["studySpec"]["parameters"]]
    assert ids == list(names)


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("", "A parameter name is required"),
        ("lr=0.1", "must not contain '='"),
        ("learning\nrate", "control characters"),
        ("tab\there", "control characters"),
    ],
)
def test_names_no_flag_can_carry_are_refused_with_the_reason(name: str, why: str) -> None:
    found = _violations(_job(name))
    assert why in found["trainingInput.hyperparameters.params[0].parameterName"]


def test_a_missing_name_is_refused() -> None:
    body = _job("x")
    del body["trainingInput"]["hyperparameters"]["params"][0]["parameterName"]
    found = _violations(body)
    assert "required" in found["trainingInput.hyperparameters.params[0].parameterName"]


def test_duplicates_are_refused_hyphens_and_all() -> None:
    found = _violations(_job("num-layers", "num-layers"))
    assert found == {
        "trainingInput.hyperparameters.params[1].parameterName": (
            "Parameter 'num-layers' is defined twice."
        )
    }


def test_the_builder_reports_a_bad_name_under_the_parameter_table() -> None:
    form, _ = job_to_form(parse_job(_job("ok")))
    form.params[0]["parameterName"] = "a=b"
    body, problems = form_to_job(form)
    assert problems == []
    # The builder checks the body with the service's own rules and shows them under the table.
    assert list(_violations(body)) == ["trainingInput.hyperparameters.params[0].parameterName"]


def test_vertex_refuses_whitespace_naming_its_own_rule() -> None:
    """ml v1 documents no character rule; Vertex AI's parameterId must not hold whitespace."""
    job = parse_job(_job("learning rate"))
    with pytest.raises(TranslationError) as err:
        to_vertex(job, region="us-central1")
    found = {v.field: v.description for v in err.value.violations}
    why = found["trainingInput.hyperparameters.params[0].parameterName"]
    assert "without whitespace" in why and "learning-rate" in why
