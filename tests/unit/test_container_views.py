"""Custom-container jobs as the UI shows them (issue 30): each role's image and the engine in
the describe rows, and the builder's engine line or the image's error without an engine."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tui_app.model.jobs.engine_label import engine_problem, runs_with
from tui_app.model.vertex.backend_notes import Backend
from tui_app.model.views.describe import Section, image_rows, render_text, summarize

NOW = datetime(2026, 11, 22, 10, 0, 0, tzinfo=UTC)
PODMAN = {
    "name": "podman",
    "version": "4.3.1",
    "command": "/usr/bin/podman --runtime runc",
    "runArgs": ["--security-opt", "label=disable"],
}
NO_ENGINE = {"problem": "No container engine answers on this machine. Install podman or docker."}


# -- describe ------------------------------------------------------------------------------------


def container_job(**ti: Any) -> dict[str, Any]:
    return {
        "jobId": "ctr_20261122_093000",
        "state": "RUNNING",
        "createTime": "2026-11-22T09:30:00Z",
        "trainingInput": {
            "scaleTier": "CUSTOM",
            "masterType": "n1-standard-4",
            "masterConfig": {"imageUri": "localhost/trainer:1"},
            "args": ["--steps", "20"],
            "region": "us-central1",
            **ti,
        },
    }


def rows_of(sections: list[Section], title: str) -> list[tuple[str, str]]:
    return next(s.rows for s in sections if s.title == title)


def test_one_image_for_every_replica_is_one_row_with_the_engine() -> None:
    job = container_job(workerType="n1-standard-4", workerCount="2")
    rows = rows_of(summarize(job, NOW, engine=PODMAN), "Training Input")
    at = rows.index(("Container image", "localhost/trainer:1"))
    assert rows[at + 1] == ("Engine", "podman 4.3.1 (--runtime runc --security-opt label=disable)")
    assert [k for k, _ in rows].count("Container image") == 1


def test_roles_with_their_own_image_are_listed_after_the_masters() -> None:
    job = container_job(
        workerType="n1-standard-4",
        workerCount="2",
        workerConfig={"imageUri": "localhost/worker:2"},
        parameterServerType="n1-standard-4",
        parameterServerCount="1",
        parameterServerConfig={"imageUri": "localhost/trainer:1"},  # the master's: not listed
        evaluatorType="n1-standard-4",
        evaluatorCount="1",
        evaluatorConfig={"imageUri": "localhost/eval:3"},
    )
    assert image_rows(job["trainingInput"], NO_ENGINE) == [
        ("Container image", "master: localhost/trainer:1"),
        ("", "workers: localhost/worker:2"),
        ("", "evaluator: localhost/eval:3"),
        ("Engine", f"none: {NO_ENGINE['problem']}"),
    ]
    text = render_text(summarize(job, NOW, engine=NO_ENGINE))
    assert "  Container image: master: localhost/trainer:1\n" in text
    assert "\n                   workers: localhost/worker:2\n" in text


def test_a_role_image_of_a_role_the_cluster_lacks_is_not_listed() -> None:
    job = container_job(workerConfig={"imageUri": "localhost/worker:2"})  # no workers
    assert image_rows(job["trainingInput"]) == [("Container image", "localhost/trainer:1")]


def test_package_jobs_have_no_image_or_engine_rows() -> None:
    job = container_job()
    ti = job["trainingInput"]
    del ti["masterConfig"]
    ti.update(pythonModule="trainer.task", packageUris=["gs://b/t.tar.gz"])
    keys = [k for k, _ in rows_of(summarize(job, NOW, engine=PODMAN), "Training Input")]
    assert "Engine" not in keys and "Container image" not in keys
    # A container job off the local service (no engine passed) has its image but no engine.
    keys = [k for k, _ in rows_of(summarize(container_job(), NOW), "Training Input")]
    assert "Container image" in keys and "Engine" not in keys


# -- the builder's line --------------------------------------------------------------------------


def test_the_builders_line_names_the_engine_or_leaves_the_problem_to_the_field() -> None:
    assert (
        runs_with(PODMAN) == "Runs with podman 4.3.1 (--runtime runc --security-opt label=disable)"
    )
    assert runs_with({"name": "docker", "version": "27.1", "command": "/usr/bin/docker"}) == (
        "Runs with docker 27.1"
    )
    assert runs_with(NO_ENGINE) is None  # the image field's error says it
    assert engine_problem(NO_ENGINE) == NO_ENGINE["problem"]
    assert engine_problem(PODMAN) is None and engine_problem({}) is None
    assert str(runs_with({})).startswith("Container engine: unknown")


def test_a_local_service_without_an_engine_refuses_a_container_job_on_its_image() -> None:
    job = container_job()
    (problem,) = Backend("local", container_engine=NO_ENGINE).container_problems(job)
    assert problem.field == "trainingInput.masterConfig.imageUri"
    assert problem.description.startswith("Custom containers need a container engine")
    assert problem.description.endswith(NO_ENGINE["problem"])
    # An engine, nothing known yet, a package job, another backend: nothing to say.
    assert Backend("local", container_engine=PODMAN).container_problems(job) == []
    assert Backend("local").container_problems(job) == []
    package = container_job()
    del package["trainingInput"]["masterConfig"]
    assert Backend("local", container_engine=NO_ENGINE).container_problems(package) == []
    assert (
        Backend("vertex", "us-central1", container_engine=NO_ENGINE).container_problems(job) == []
    )
