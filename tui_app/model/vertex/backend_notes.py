"""What each backend does with a config: which set fields it refuses, and which it ignores.

One config.yaml can go to the local service or to Vertex AI, and neither honours every field
of ml v1's ``trainingInput``. The builder shows these notes beside the form, so a field that
will have no effect is said before submit, not discovered after a run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from tui_app.model.jobs.engine_label import engine_problem
from tui_app.model.jobs.job_images import replica_image
from tui_app.model.jobs.job_spec import FieldViolation
from tui_app.model.jobs.tiers import Role
from tui_app.model.vertex.translate import TranslationError, to_vertex, vertex_notes

ROLE_CONFIGS = ("masterConfig", "workerConfig", "parameterServerConfig", "evaluatorConfig")

# Not ``region``: gcloud requires one, so every config has it, and a note on every form is noise.
_LOCAL_IGNORED: tuple[tuple[str, str], ...] = (
    ("serviceAccount", "replicas run as your own user, not a service account"),
    ("network", "replicas share this machine's network"),
    ("enableWebAccess", "there is no web shell: read the replica's logs instead"),
    ("encryptionConfig", "nothing is encrypted with a Cloud KMS key"),
)


def local_notes(training_input: Mapping[str, Any]) -> list[FieldViolation]:
    """The set fields the local service accepts but has no use for on one machine."""
    notes = [
        FieldViolation(f"trainingInput.{name}", why)
        for name, why in _LOCAL_IGNORED
        if training_input.get(name) not in (None, "", [], {})
    ]
    if training_input.get("pythonVersion") and not training_input.get("runtimeVersion"):
        # With a runtimeVersion the service finds an interpreter of this Python (docs/runtimes.md).
        notes.append(
            FieldViolation(
                "trainingInput.pythonVersion",
                "without runtimeVersion, replicas run on the service's own Python",
            )
        )
    for role in ROLE_CONFIGS:
        config = training_input.get(role) or {}
        if config.get("diskConfig"):
            notes.append(
                FieldViolation(
                    f"trainingInput.{role}.diskConfig", "replicas use this machine's disk"
                )
            )
        if config.get("tpuTfVersion"):
            notes.append(
                FieldViolation(f"trainingInput.{role}.tpuTfVersion", "there are no TPUs here")
            )
    return notes


@dataclass(frozen=True)
class Backend:
    """Where the builder will submit: ``local``, ``url`` (any ml v1 endpoint) or ``vertex``."""

    kind: str
    region: str | None = None
    executor_image: str | None = None
    today: date | None = None
    """The date, when the screen passes it: a Vertex AI image past its end of availability on
    Google's list is then noted (the model never reads the clock itself)."""
    container_engine: Mapping[str, Any] | None = None
    """The local service's ``containerEngine`` (its ``/healthz``), once the screen has read
    it: a container job is refused before submit when the service says it has no engine."""

    @property
    def label(self) -> str:
        return {"local": "The local service", "vertex": "Vertex AI"}.get(self.kind, "")

    def container_problems(self, job: Mapping[str, Any]) -> list[FieldViolation]:
        """A custom-container job for a local service without an engine: refused on the master's
        image, in the service's words (it would answer the same 400), with what to install.

        Checked apart from ``review`` (which waits for a valid job): the reason is the machine's,
        and the person should see it as soon as they type an image.
        """
        ti = job.get("trainingInput")
        problem = engine_problem(self.container_engine) if self.kind == "local" else None
        if problem is None or not isinstance(ti, Mapping) or not replica_image(ti, Role.MASTER):
            return []
        return [
            FieldViolation(
                "trainingInput.masterConfig.imageUri",
                "Custom containers need a container engine on the machine running the local "
                f"jobs service. {problem}",
            )
        ]

    def review(self, job: Mapping[str, Any]) -> tuple[list[FieldViolation], list[FieldViolation]]:
        """``(refused, ignored)`` for a job that is valid ml v1.

        An ml v1 URL takes the config as it is: it has nothing to add.
        """
        ti = job.get("trainingInput") or {}
        if self.kind == "local":
            return [], local_notes(ti)
        if self.kind != "vertex" or self.region is None:
            return [], []
        region, image, today = self.region, self.executor_image, self.today
        try:
            request = to_vertex(job, region=region, executor_image=image, today=today)
        except TranslationError as exc:
            notes = vertex_notes(ti, region=region, executor_image=image, today=today)
            return list(exc.violations), notes
        return [], list(request.notes)
