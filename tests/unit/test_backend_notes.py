"""What each backend refuses or ignores in a config, as the builder shows it before submit."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from tui_app.api.connection import connect
from tui_app.api.errors import ApiCallError
from tui_app.api.vertex_client import VertexJobsClient
from tui_app.config.settings import Profile
from tui_app.model.vertex.backend_notes import Backend, local_notes

JOB: dict[str, Any] = {
    "jobId": "mnist_20261122_083000",
    "trainingInput": {
        "scaleTier": "BASIC",
        "region": "us-central1",
        "packageUris": ["gs://my-bucket/trainer-0.1.tar.gz"],
        "pythonModule": "trainer.task",
        "runtimeVersion": "2.11",
        "jobDir": "gs://my-bucket/mnist_20261122_083000",
    },
}


def _with(**ti: Any) -> dict[str, Any]:
    return {**JOB, "trainingInput": {**JOB["trainingInput"], **ti}}


def test_a_plain_config_has_nothing_to_say_on_vertex() -> None:
    assert Backend("vertex", "us-central1").review(JOB) == ([], [])


def test_vertex_names_what_it_ignores_and_what_it_refuses() -> None:
    refused, notes = Backend("vertex", "us-central1").review(
        _with(scheduling={"priority": 3}, useChiefInTfConfig=True)
    )
    assert refused == []
    assert [n.field for n in notes] == [
        "trainingInput.scheduling.priority",
        "trainingInput.useChiefInTfConfig",
    ]
    refused, _ = Backend("vertex", "europe-west4").review(JOB)
    assert [v.field for v in refused] == ["trainingInput.region"]
    assert "europe-west4" in refused[0].description


def test_vertex_says_where_tuning_trials_write_and_keeps_early_stopping() -> None:
    """A one-replica tuning job: the trial-directory note, and no word against early stopping
    (it runs as Vertex AI's median rule)."""
    hp = {
        "enableTrialEarlyStopping": True,
        "params": [{"parameterName": "lr", "type": "DOUBLE", "minValue": 0.01, "maxValue": 0.1}],
    }
    refused, notes = Backend("vertex", "us-central1").review(_with(hyperparameters=hp))
    assert refused == []
    assert [n.field for n in notes] == ["trainingInput.hyperparameters"]
    assert "AIP_MODEL_DIR=gs://my-bucket/mnist_20261122_083000/<trial id>/model/" in (
        notes[0].description
    )
    # Refused or not, the notes are the same (the builder shows both).
    refused, notes_too = Backend("vertex", "us-central1").review(
        _with(hyperparameters=hp, jobDir="/tmp/out")
    )
    assert [v.field for v in refused] == ["trainingInput.jobDir"]
    assert [n.field for n in notes_too] == ["trainingInput.hyperparameters"]


def test_vertex_notes_an_image_past_its_end_of_availability_when_given_the_date() -> None:
    assert Backend("vertex", "us-central1", today=date(2024, 11, 1)).review(JOB) == ([], [])
    refused, notes = Backend("vertex", "us-central1", today=date(2026, 11, 25)).review(JOB)
    assert refused == []
    assert [n.field for n in notes] == ["trainingInput.runtimeVersion"]
    assert "tf-cpu.2-11.py310" in notes[0].description
    assert "2024-11-15" in notes[0].description


def test_the_local_service_names_the_cloud_only_fields() -> None:
    job = _with(
        serviceAccount="trainer@p.iam.gserviceaccount.com",
        masterConfig={"diskConfig": {"bootDiskSizeGb": 200}},
    )
    refused, notes = Backend("local").review(job)
    assert refused == []
    assert [n.field for n in notes] == [
        "trainingInput.serviceAccount",
        "trainingInput.masterConfig.diskConfig",
    ]
    assert local_notes({"scaleTier": "BASIC"}) == []
    assert Backend("url").review(job) == ([], [])


def test_the_local_service_honours_python_version_only_with_a_runtime() -> None:
    """With a runtimeVersion the service looks for an interpreter of that Python; without one
    the replicas run on its own Python, and the builder says so before submit."""
    assert local_notes({"runtimeVersion": "2.11", "pythonVersion": "3.7"}) == []
    notes = local_notes({"pythonVersion": "3.7"})
    assert [n.field for n in notes] == ["trainingInput.pythonVersion"]
    assert "runtimeVersion" in notes[0].description


def test_a_vertex_profile_connects_to_the_regional_host_with_its_token(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("ya29.test\n")
    profile = Profile(
        "cloud", kind="vertex", project="p", region="europe-west4", token_file=str(token)
    )
    conn = connect(profile)
    assert conn.vertex and not conn.local
    assert conn.endpoint == "https://europe-west4-aiplatform.googleapis.com"
    assert conn.logs_endpoint == "https://logging.googleapis.com"
    assert conn.label == "cloud (Vertex AI europe-west4)"
    client = conn.jobs("p")
    assert isinstance(client, VertexJobsClient) and client.parent == (
        "projects/p/locations/europe-west4"
    )


def test_vertex_without_credentials_says_how_to_get_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "missing.json"))
    profile = Profile("cloud", kind="vertex", project="p", region="us-central1")
    with pytest.raises(ApiCallError) as err:
        connect(profile)
    assert err.value.status_code == 401
    assert "gcloud auth application-default login" in err.value.message


def test_vertex_uses_application_default_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    adc = tmp_path / "adc.json"
    adc.write_text(
        json.dumps(
            {
                "type": "authorized_user",
                "client_id": "id.apps.googleusercontent.com",
                "client_secret": "secret",
                "refresh_token": "1//refresh",
            }
        )
    )
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
    conn = connect(Profile("cloud", kind="vertex", project="p", region="us-central1"))
    assert type(conn.credentials).__module__ == "google.oauth2.credentials"
    assert getattr(conn.credentials, "refresh_token", None) == "1//refresh"
