"""Which trainingInput fields describe each replica role of a CUSTOM cluster.

A CUSTOM ``trainingInput`` spells every role out in fields named after it: the machine type
(``workerType``), how many (``workerCount``; the master is always one and has no count field)
and the replica settings (``workerConfig``: accelerators, container, disk). Validation, the
cluster table, the builder's form and the Vertex AI translation all walk these fields; they
read the names from here so a role cannot be spelled two ways.
"""

from __future__ import annotations

from dataclasses import dataclass

from tui_app.model.jobs.tiers import Role

__all__ = ["ROLE_FIELDS", "RoleFields", "role_fields"]


@dataclass(frozen=True)
class RoleFields:
    """One role's fields in an ml v1 TrainingInput."""

    role: Role
    type_field: str
    count_field: str | None
    """None for the master: a CUSTOM job has exactly one."""
    config_field: str

    @property
    def position(self) -> int:
        """The role's place in the cluster (master 0, workers 1, parameter servers 2,
        evaluators 3): the order the platform lays a cluster out, which Vertex AI's
        ``workerPoolSpecs`` keep by position."""
        return _ORDER.index(self.role)


_ORDER: tuple[Role, ...] = tuple(Role)

ROLE_FIELDS: tuple[RoleFields, ...] = (
    RoleFields(Role.MASTER, "masterType", None, "masterConfig"),
    RoleFields(Role.WORKER, "workerType", "workerCount", "workerConfig"),
    RoleFields(
        Role.PARAMETER_SERVER,
        "parameterServerType",
        "parameterServerCount",
        "parameterServerConfig",
    ),
    RoleFields(Role.EVALUATOR, "evaluatorType", "evaluatorCount", "evaluatorConfig"),
)
"""Every role, in cluster order (``position``)."""

_BY_ROLE = {r.role: r for r in ROLE_FIELDS}


def role_fields(role: Role) -> RoleFields:
    """The fields of ``role``."""
    return _BY_ROLE[role]
