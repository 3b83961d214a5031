"""One table of replica-role fields serves validation, the cluster, the builder and Vertex AI."""

from __future__ import annotations

from pydantic.alias_generators import to_camel

from tui_app.model.builder import builder_form
from tui_app.model.jobs.job_spec import TrainingInput
from tui_app.model.jobs.roles import ROLE_FIELDS, role_fields
from tui_app.model.jobs.tiers import Role


def test_every_role_once_in_cluster_order() -> None:
    assert [r.role for r in ROLE_FIELDS] == list(Role)
    assert [r.position for r in ROLE_FIELDS] == [0, 1, 2, 3]
    assert all(role_fields(r.role) is r for r in ROLE_FIELDS)


def test_the_fields_are_training_input_fields() -> None:
    known = {to_camel(name) for name in TrainingInput.model_fields}
    for r in ROLE_FIELDS:
        assert {r.type_field, r.config_field} <= known
        assert r.count_field is None or r.count_field in known
    assert role_fields(Role.MASTER).count_field is None
    assert role_fields(Role.PARAMETER_SERVER).count_field == "parameterServerCount"


def test_the_builder_reads_its_roles_from_the_table() -> None:
    assert [(r.key, r.label) for r in builder_form.ROLES] == [
        ("master", "Master"),
        ("worker", "Workers"),
        ("ps", "Param servers"),
        ("evaluator", "Evaluators"),
    ]
    for form_role, fields in zip(builder_form.ROLES, ROLE_FIELDS, strict=True):
        assert (form_role.type_field, form_role.count_field, form_role.config_field) == (
            fields.type_field,
            fields.count_field,
            fields.config_field,
        )
