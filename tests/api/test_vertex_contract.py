"""``VertexJobsClient`` against the replayed Vertex AI server: the JobsApi contract, in ml v1 terms.

The replay (tests/support/vertex_replay.py) serves the hand-built fixtures of
tests/fixtures/vertex through googleapiclient's own HttpMock, so what is checked here is the
real request the client builds (URL, numeric id, body) and the real parse of the response.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.support.discovery_schema import violations
from tests.support.vertex_replay import (
    ENDPOINT,
    FAILED_ID,
    HP_ID,
    PROJECT,
    REGION,
    RUNNING_ID,
    Recorded,
    VertexReplay,
    fixture,
)
from tui_app.api.errors import ApiCallError
from tui_app.api.vertex_client import VertexJobsClient

PARENT = f"projects/{PROJECT}/locations/{REGION}"
HP_NAME = "mnist_hptuning_20261122_100000"
FAILED_NAME = "mnist_20261122_083000"
RUNNING_NAME = "census_dist_20261122_090000"
CREATED = fixture("custom_job_create_response.json")
CREATED_ID = CREATED["name"].rsplit("/", 1)[1]
# Every job of the replayed world, newest first, with its ml v1 and its raw Vertex state.
WORLD = [
    (HP_NAME, "RUNNING", "JOB_STATE_RUNNING"),
    ("serve_export_20261122_092000", "QUEUED", "JOB_STATE_QUEUED"),
    ("mnist_20261122_091500", "PREPARING", "JOB_STATE_PENDING"),
    (RUNNING_NAME, "RUNNING", "JOB_STATE_RUNNING"),
    (FAILED_NAME, "FAILED", "JOB_STATE_FAILED"),
    ("census_eval_20261121_120000", "CANCELLING", "JOB_STATE_CANCELLING"),
    ("mnist_20261121_083000", "SUCCEEDED", "JOB_STATE_SUCCEEDED"),
]


@pytest.fixture
def replay() -> VertexReplay:
    return VertexReplay()


@pytest.fixture
def client(replay: VertexReplay) -> VertexJobsClient:
    return VertexJobsClient(PROJECT, REGION, http=replay)


def ml_job(job_id: str = CREATED["displayName"]) -> dict[str, Any]:
    """An ml v1 job a user would submit; it translates to the create fixture's CustomJob."""
    return {
        "jobId": job_id,
        "labels": {"owner": "ann"},
        "trainingInput": {
            "scaleTier": "CUSTOM",
            "masterType": "n1-standard-4",
            "packageUris": ["gs://my-project-ml/packages/trainer-0.1.0.tar.gz"],
            "pythonModule": "trainer.task",
            "args": ["--epochs=5", "--batch-size=64"],
            "region": REGION,
            "jobDir": f"gs://my-project-ml/jobs/{job_id}",
            "runtimeVersion": "2.11",
            "scheduling": {"maxRunningTime": "7200s"},
        },
    }


def calls(replay: VertexReplay, method: str | None = None) -> list[Recorded]:
    return [r for r in replay.requests if method is None or r.method == method]


# -- reading ------------------------------------------------------------------------------------


def test_list_merges_both_collections_and_every_page(
    client: VertexJobsClient, replay: VertexReplay
) -> None:
    jobs = client.list_jobs()
    assert [(j["jobId"], j["state"], j["vertexJob"]["state"]) for j in jobs] == WORLD
    created = [str(j["createTime"]) for j in jobs]
    assert created == sorted(created, reverse=True)
    paths = [r.path for r in replay.requests]
    assert f"/v1/{PARENT}/hyperparameterTuningJobs" in paths
    assert paths.count(f"/v1/{PARENT}/customJobs") == 2  # both pages
    page_two = [r for r in replay.requests if "pageToken" in r.query]
    assert [r.query["pageToken"] for r in page_two] == [
        fixture("custom_jobs_list_page1.json")["nextPageToken"]
    ]
    assert all(r.method == "GET" for r in replay.requests)
    assert all(r.uri.startswith(f"{ENDPOINT}/v1/") for r in replay.requests)


def test_listed_jobs_carry_their_vertex_identity(client: VertexJobsClient) -> None:
    jobs = {j["jobId"]: j for j in client.list_jobs()}
    running = jobs[RUNNING_NAME]["vertexJob"]
    assert running["id"] == RUNNING_ID
    assert running["name"] == fixture("custom_job_get_running.json")["name"]
    assert running["collection"] == "customJobs"
    assert RUNNING_ID in running["consoleUrl"]
    assert running["consoleUrl"].startswith("https://console.cloud.google.com/vertex-ai/")
    hp = jobs[HP_NAME]["vertexJob"]
    assert (hp["id"], hp["collection"]) == (HP_ID, "hyperparameterTuningJobs")
    etags = [j["etag"] for j in jobs.values()]
    assert all(etags) and len(set(etags)) == len(etags)


def test_pools_read_back_as_ml_v1_replicas(client: VertexJobsClient) -> None:
    jobs = {j["jobId"]: j for j in client.list_jobs()}
    census = jobs[RUNNING_NAME]["trainingInput"]
    assert census["scaleTier"] == "CUSTOM"
    assert (census["masterType"], census["workerType"], census["parameterServerType"]) == (
        "n1-standard-8",
        "n1-standard-8",
        "n1-standard-8",
    )
    assert (census["workerCount"], census["parameterServerCount"]) == ("2", "1")
    t4 = {"count": "1", "type": "NVIDIA_TESLA_T4"}
    assert census["masterConfig"]["acceleratorConfig"] == t4
    assert census["workerConfig"]["acceleratorConfig"] == t4
    assert "acceleratorConfig" not in census.get("parameterServerConfig", {})
    # --job-dir was appended for ml v1's sake: it reads back as jobDir, not as an argument.
    assert census["jobDir"] == f"gs://my-project-ml/jobs/{RUNNING_NAME}"
    assert census["args"] == ["--train-steps=20000", "--eval-steps=100"]
    assert census["pythonModule"] == "trainer.task"
    assert census["scheduling"] == {"maxRunningTime": "86400s"}
    evaluator = jobs["census_eval_20261121_120000"]["trainingInput"]
    assert evaluator["evaluatorType"] == "n1-standard-4"
    assert evaluator["evaluatorCount"] == "1"
    assert "workerType" not in evaluator and "parameterServerType" not in evaluator
    container = jobs["serve_export_20261122_092000"]["trainingInput"]
    assert container["masterConfig"]["imageUri"].endswith("/serve-export:1.4")
    mnist = jobs["mnist_20261121_083000"]["trainingInput"]
    assert mnist["runtimeVersion"] == "2.11"  # the tf-cpu.2-11 image reads as its runtime


def test_the_tuning_job_shows_its_trials(client: VertexJobsClient) -> None:
    job = {j["jobId"]: j for j in client.list_jobs()}[HP_NAME]
    hp = job["trainingInput"]["hyperparameters"]
    assert (hp["goal"], hp["hyperparameterMetricTag"]) == ("MAXIMIZE", "accuracy")
    assert (hp["maxTrials"], hp["maxParallelTrials"]) == (6, 2)
    params = {p["parameterName"]: p for p in hp["params"]}
    assert params["batch_size"]["type"] == "INTEGER"
    assert (params["batch_size"]["minValue"], params["batch_size"]["maxValue"]) == (16, 128)
    assert params["optimizer"]["categoricalValues"] == ["adam", "sgd"]
    out = job["trainingOutput"]
    assert out["isHyperparameterTuningJob"] is True
    assert out["completedTrialCount"] == "3"
    trials = {t["trialId"]: t for t in out["trials"]}
    assert list(trials) == ["1", "2", "3", "4", "5", "6"]
    assert {k: t["state"] for k, t in trials.items()} == {
        "1": "SUCCEEDED",
        "2": "SUCCEEDED",
        "3": "FAILED",  # INFEASIBLE
        "4": "SUCCEEDED",
        "5": "RUNNING",  # ACTIVE
        "6": "QUEUED",  # REQUESTED
    }
    assert trials["1"]["finalMetric"] == {"trainingStep": "200", "objectiveValue": 0.93}
    # Vertex sends integer values as doubles (32.0); ml v1 showed them as "32".
    assert trials["1"]["hyperparameters"]["batch_size"] == "32"
    assert trials["1"]["hyperparameters"]["hidden_units"] == "128"
    assert trials["1"]["hyperparameters"]["optimizer"] == "adam"
    assert "finalMetric" not in trials["5"]


def test_get_by_display_name_reads_the_numeric_id(
    client: VertexJobsClient, replay: VertexReplay
) -> None:
    job = client.get(FAILED_NAME)  # a fresh client: nothing listed yet
    last = replay.requests[-1]
    assert (last.method, last.path) == ("GET", f"/v1/{PARENT}/customJobs/{FAILED_ID}")
    lookups = [r.query.get("filter") for r in replay.requests[:-1]]
    assert lookups and all(f == f'display_name="{FAILED_NAME}"' for f in lookups)
    assert job["jobId"] == FAILED_NAME
    assert job["state"] == "FAILED"
    assert job["vertexJob"]["id"] == FAILED_ID
    assert job["endTime"] == fixture("custom_job_failed.json")["endTime"]


def test_get_after_a_list_goes_straight_to_the_job(
    client: VertexJobsClient, replay: VertexReplay
) -> None:
    client.list_jobs()
    before = len(replay.requests)
    job = client.get(HP_NAME)
    assert [r.path for r in replay.requests[before:]] == [
        f"/v1/{PARENT}/hyperparameterTuningJobs/{HP_ID}"
    ]
    assert len(job["trainingOutput"]["trials"]) == 6


def test_a_failed_job_carries_the_server_error(client: VertexJobsClient) -> None:
    job = client.get(FAILED_NAME)
    message = fixture("custom_job_failed.json")["error"]["message"]
    assert job["errorMessage"] == message
    assert job["errorMessage"].startswith("The replica workerpool0-0 exited with a non-zero")
    assert "ValueError: Shapes (None, 10) and (None, 1) are incompatible" in job["errorMessage"]


def test_a_cancelled_job_reads_as_cancelled(client: VertexJobsClient, replay: VertexReplay) -> None:
    replay.override(RUNNING_ID, fixture("custom_job_cancelled.json"))
    job = client.get(RUNNING_NAME)
    assert (job["state"], job["vertexJob"]["state"]) == ("CANCELLED", "JOB_STATE_CANCELLED")
    assert job["errorMessage"] == "CANCELED"
    assert job["endTime"] == fixture("custom_job_cancelled.json")["endTime"]


# -- writing ------------------------------------------------------------------------------------


def test_create_posts_a_valid_custom_job_and_returns_the_ml_v1_view(
    client: VertexJobsClient, replay: VertexReplay
) -> None:
    job = client.create(ml_job())
    (post,) = calls(replay, "POST")
    assert post.path == f"/v1/{PARENT}/customJobs"
    assert (
        violations("aiplatform", "v1", "GoogleCloudAiplatformV1CustomJob", post.body, request=True)
        == []
    )
    assert post.body["displayName"] == CREATED["displayName"]
    (pool,) = post.body["jobSpec"]["workerPoolSpecs"]
    assert pool["machineSpec"] == {"machineType": "n1-standard-4"}
    assert pool["replicaCount"] == "1"
    code = pool["pythonPackageSpec"]
    assert (
        code["executorImageUri"] == "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-11.py310:latest"
    )
    assert code["args"] == [
        "--epochs=5",
        "--batch-size=64",
        f"--job-dir=gs://my-project-ml/jobs/{CREATED['displayName']}",
    ]
    assert post.body["jobSpec"]["baseOutputDirectory"] == CREATED["jobSpec"]["baseOutputDirectory"]
    assert post.body["jobSpec"]["scheduling"] == {"timeout": "7200s"}
    # What came back is the ml v1 view of the created job.
    assert job["jobId"] == CREATED["displayName"]
    assert job["state"] == "PREPARING"
    assert job["createTime"] == CREATED["createTime"]
    assert job["vertexJob"]["id"] == CREATED_ID
    assert job["trainingInput"]["args"] == ["--epochs=5", "--batch-size=64"]
    assert job["trainingInput"]["jobDir"] == ml_job()["trainingInput"]["jobDir"]
    # The server's echo is the create fixture: the client sent what the fixture records.
    assert replay.job(CREATED_ID) == CREATED
    # And the new job is found by its jobId from now on.
    assert client.get(CREATED["displayName"])["vertexJob"]["id"] == CREATED_ID


def test_create_of_a_tuning_job_posts_to_its_collection(
    client: VertexJobsClient, replay: VertexReplay
) -> None:
    job = ml_job("mnist_hptuning_20261122_110000")
    job["trainingInput"]["hyperparameters"] = {
        "goal": "MAXIMIZE",
        "hyperparameterMetricTag": "accuracy",
        "maxTrials": 4,
        "maxParallelTrials": 2,
        "params": [
            {"parameterName": "batch_size", "type": "INTEGER", "minValue": 16, "maxValue": 128},
            {
                "parameterName": "optimizer",
                "type": "CATEGORICAL",
                "categoricalValues": ["adam", "sgd"],
            },
        ],
    }
    created = client.create(job)
    (post,) = calls(replay, "POST")
    assert post.path == f"/v1/{PARENT}/hyperparameterTuningJobs"
    schema = "GoogleCloudAiplatformV1HyperparameterTuningJob"
    assert violations("aiplatform", "v1", schema, post.body, request=True) == []
    ints = post.body["studySpec"]["parameters"][0]["integerValueSpec"]
    assert ints == {"minValue": "16", "maxValue": "128"}  # int64 bounds as strings
    assert created["jobId"] == "mnist_hptuning_20261122_110000"
    assert created["vertexJob"]["collection"] == "hyperparameterTuningJobs"


@pytest.mark.parametrize(
    ("changes", "fields"),
    [
        # Cannot run on Vertex AI as written: every such field is named at once.
        (
            {"region": "europe-west4", "runtimeVersion": "1.14"},  # 1.14: no image on the list
            {"trainingInput.region", "trainingInput.runtimeVersion"},
        ),
        # Not an ml v1 job at all: refused by ml v1's own validation.
        ({"masterTyp": "n1-standard-8"}, {"trainingInput.masterTyp"}),
    ],
    ids=["untranslatable", "invalid"],
)
def test_a_job_that_cannot_run_is_refused_before_any_request(
    client: VertexJobsClient, replay: VertexReplay, changes: dict[str, str], fields: set[str]
) -> None:
    job = ml_job()
    job["trainingInput"].update(changes)
    with pytest.raises(ApiCallError) as refused:
        client.create(job)
    err = refused.value
    assert (err.status_code, err.status) == (400, "INVALID_ARGUMENT")
    assert {v["field"] for v in err.violations} == fields
    assert all(v["description"] for v in err.violations)
    assert err.violations[0]["field"] in err.message
    assert replay.requests == []


def test_a_taken_job_id_is_not_created_twice(
    client: VertexJobsClient, replay: VertexReplay
) -> None:
    with pytest.raises(ApiCallError) as taken:
        client.create(ml_job(RUNNING_NAME))
    assert taken.value.status_code == 409
    assert calls(replay, "POST") == []


def test_cancel_posts_to_the_numeric_id(client: VertexJobsClient, replay: VertexReplay) -> None:
    client.list_jobs()
    client.cancel(RUNNING_NAME)
    post = replay.requests[-1]
    assert (post.method, post.path) == ("POST", f"/v1/{PARENT}/customJobs/{RUNNING_ID}:cancel")
    assert post.body == {}
    job = client.get(RUNNING_NAME)
    assert (job["state"], job["vertexJob"]["state"]) == ("CANCELLING", "JOB_STATE_CANCELLING")
    listed = {j["jobId"]: j["state"] for j in client.list_jobs()}
    assert listed[RUNNING_NAME] == "CANCELLING"


def test_cancel_of_a_tuning_job_goes_to_its_collection(
    client: VertexJobsClient, replay: VertexReplay
) -> None:
    client.cancel(HP_NAME)  # a fresh client: found by display name first
    post = replay.requests[-1]
    assert (post.method, post.path) == (
        "POST",
        f"/v1/{PARENT}/hyperparameterTuningJobs/{HP_ID}:cancel",
    )
    assert calls(replay, "POST") == [post]
    assert client.get(HP_NAME)["state"] == "CANCELLING"


def test_labels_cannot_change_and_nothing_is_sent(
    client: VertexJobsClient, replay: VertexReplay
) -> None:
    with pytest.raises(ApiCallError) as refused:
        client.set_labels(RUNNING_NAME, {"owner": "cat"})
    assert refused.value.status_code == 400
    assert replay.requests == []


# -- errors -------------------------------------------------------------------------------------


def test_an_unknown_job_is_not_found(client: VertexJobsClient) -> None:
    with pytest.raises(ApiCallError) as missing:
        client.get("nope_20261122_000000")
    assert (missing.value.status_code, missing.value.status) == (404, "NOT_FOUND")
    with pytest.raises(ApiCallError) as gone:
        client.get("whatever@1234567890123456789")
    assert (gone.value.status_code, gone.value.status) == (404, "NOT_FOUND")


def test_an_unknown_numeric_id_never_falls_back_to_its_display_name(
    client: VertexJobsClient, replay: VertexReplay
) -> None:
    """``name@id`` names one job: if that id is gone, a job that merely shares the display name
    must not be read (or cancelled) in its place."""
    with pytest.raises(ApiCallError) as gone:
        client.cancel("mnist_20261122_083000@1234567890123456789")
    assert gone.value.status_code == 404
    assert calls(replay, "POST") == []
    assert not any("filter" in r.query for r in calls(replay))


def test_a_job_deleted_since_the_list_answers_the_servers_404(
    client: VertexJobsClient, replay: VertexReplay
) -> None:
    client.list_jobs()
    replay.override(FAILED_ID, None)
    with pytest.raises(ApiCallError) as missing:
        client.get(FAILED_NAME)
    body = fixture("error_not_found.json")["error"]
    assert (missing.value.status_code, missing.value.status) == (404, "NOT_FOUND")
    assert missing.value.message == body["message"]


def test_permission_denied_keeps_the_servers_status_and_message(
    client: VertexJobsClient, replay: VertexReplay
) -> None:
    replay.set_route("GET", r"/customJobs$", "error_permission_denied.json", status=403)
    with pytest.raises(ApiCallError) as denied:
        client.list_jobs()
    body = fixture("error_permission_denied.json")["error"]
    assert (denied.value.status_code, denied.value.status) == (403, "PERMISSION_DENIED")
    assert denied.value.message == body["message"]
    assert "PERMISSION_DENIED" in str(denied.value)


def test_another_projects_jobs_are_denied(replay: VertexReplay) -> None:
    other = VertexJobsClient("someone-elses-project", REGION, http=replay)
    with pytest.raises(ApiCallError) as denied:
        other.list_jobs()
    assert denied.value.status_code == 403


def test_a_server_400_surfaces_its_field_violations(
    client: VertexJobsClient, replay: VertexReplay
) -> None:
    replay.set_route("POST", r"/customJobs$", "error_invalid_argument.json", status=400)
    with pytest.raises(ApiCallError) as bad:
        client.create(ml_job())
    body = fixture("error_invalid_argument.json")["error"]
    assert (bad.value.status_code, bad.value.status) == (400, "INVALID_ARGUMENT")
    assert bad.value.message == body["message"]
    assert bad.value.violations == body["details"][0]["fieldViolations"]
    assert len(calls(replay, "POST")) == 1  # no retry: a retried create could make two jobs


def test_a_changed_job_gets_a_new_etag(client: VertexJobsClient, replay: VertexReplay) -> None:
    before = client.get(RUNNING_NAME)["etag"]
    running = copy.deepcopy(fixture("custom_job_get_running.json"))
    running["updateTime"] = "2026-11-22T09:40:00.000000Z"
    replay.override(RUNNING_ID, running)
    assert client.get(RUNNING_NAME)["etag"] != before


def test_trial_custom_jobs_are_shown_inside_their_tuning_job(
    client: VertexJobsClient, replay: VertexReplay
) -> None:
    # Should customJobs.list also return the custom jobs a tuning job runs for its trials,
    # they show inside the tuning job, not beside it as jobs of their own.
    tuning = fixture("tuning_job_get.json")
    trial_job = copy.deepcopy(fixture("custom_job_get_running.json"))
    trial_job["name"] = tuning["trials"][0]["customJob"]
    trial_job["displayName"] = "mnist_hptuning_20261122_100000_trial_1"
    trial_job["jobSpec"] = tuning["trialJobSpec"]
    running = fixture("custom_job_get_running.json")
    replay.set_route("GET", r"/customJobs$", {"customJobs": [trial_job, running]})
    assert [j["jobId"] for j in client.list_jobs()] == [HP_NAME, RUNNING_NAME]
