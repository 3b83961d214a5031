"""The hand-built Vertex AI fixtures are what the server would send, and the replay serves them.

The fixtures stand in for recordings (see tests/fixtures/vertex/README.md), so they are checked
here against the discovery document's response schemas and against each other; the replay is
checked through googleapiclient itself, the way the product's client will use it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any

import pytest
from googleapiclient.discovery import build
from googleapiclient.errors import HttpError

from tests.support.discovery_schema import discovery_document, violations
from tests.support.vertex_replay import (
    ENDPOINT,
    FAILED_ID,
    FIXTURES,
    HP_ID,
    PROJECT,
    PROJECT_NUMBER,
    REGION,
    RUNNING_ID,
    VertexReplay,
    fixture,
)

LIST_JOBS = "GoogleCloudAiplatformV1ListCustomJobsResponse"
LIST_TUNING = "GoogleCloudAiplatformV1ListHyperparameterTuningJobsResponse"
JOB = "GoogleCloudAiplatformV1CustomJob"
TUNING = "GoogleCloudAiplatformV1HyperparameterTuningJob"
SCHEMAS = {
    "custom_jobs_list_page1.json": LIST_JOBS,
    "custom_jobs_list_page2.json": LIST_JOBS,
    "custom_job_get_running.json": JOB,
    "custom_job_failed.json": JOB,
    "custom_job_create_response.json": JOB,
    "custom_job_cancelling.json": JOB,
    "custom_job_cancelled.json": JOB,
    "cancel_response.json": "GoogleProtobufEmpty",
    "tuning_jobs_list.json": LIST_TUNING,
    "tuning_job_get.json": TUNING,
}
ERRORS = {
    "error_not_found.json": (404, "NOT_FOUND"),
    "error_invalid_argument.json": (400, "INVALID_ARGUMENT"),
    "error_permission_denied.json": (403, "PERMISSION_DENIED"),
}
PARENT = f"projects/{PROJECT_NUMBER}/locations/{REGION}"
NAME = re.compile(rf"^{PARENT}/(customJobs|hyperparameterTuningJobs)/\d{{15,19}}$")
TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
DISPLAY = re.compile(r"^(?P<base>[a-z][a-z0-9_]*)_(?P<stamp>\d{8}_\d{6})$")


def custom_jobs() -> list[dict[str, Any]]:
    """Every custom job of the world, in list order."""
    return [
        *fixture("custom_jobs_list_page1.json")["customJobs"],
        *fixture("custom_jobs_list_page2.json")["customJobs"],
    ]


def resources() -> Iterator[tuple[str, dict[str, Any]]]:
    """Every job resource in every fixture, with the file it came from."""
    for name, schema in SCHEMAS.items():
        body = fixture(name)
        if schema in (JOB, TUNING):
            yield name, body
        elif schema == LIST_JOBS:
            yield from ((name, job) for job in body["customJobs"])
        elif schema == LIST_TUNING:
            yield from ((name, job) for job in body["hyperparameterTuningJobs"])


def service(replay: VertexReplay) -> Any:
    return build(
        "aiplatform",
        "v1",
        http=replay,
        static_discovery=True,
        cache_discovery=False,
        client_options={"api_endpoint": ENDPOINT},
    )


def test_the_fixtures_are_the_documented_set() -> None:
    on_disk = {p.name for p in FIXTURES.glob("*.json")}
    assert on_disk == set(SCHEMAS) | set(ERRORS)
    readme = (FIXTURES / "README.md").read_text()
    assert "by hand" in readme
    assert discovery_document("aiplatform", "v1")["revision"] in readme


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_each_fixture_matches_its_response_schema(name: str) -> None:
    assert violations("aiplatform", "v1", SCHEMAS[name], fixture(name)) == []


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_bodies_are_google_api_errors(name: str) -> None:
    body = fixture(name)
    assert set(body) == {"error"}
    error = dict(body["error"])
    assert (error.pop("code"), error.pop("status")) == ERRORS[name]
    # What is left is a google.rpc.Status (its own code is the HTTP one in the JSON mapping).
    assert violations("aiplatform", "v1", "GoogleRpcStatus", error) == []
    assert error["message"]
    for detail in error.get("details", []):
        assert detail["@type"].startswith("type.googleapis.com/google.rpc.")


def test_bad_request_names_the_field() -> None:
    (detail,) = fixture("error_invalid_argument.json")["error"]["details"]
    assert detail["@type"] == "type.googleapis.com/google.rpc.BadRequest"
    (violation,) = detail["fieldViolations"]
    assert violation["field"] == "job_spec.worker_pool_specs[0].machine_spec.machine_type"
    assert "n1-standard-3" in violation["description"]


@pytest.mark.parametrize(("name", "job"), list(resources()), ids=lambda v: str(v)[:40])
def test_resources_look_like_the_server_wrote_them(name: str, job: dict[str, Any]) -> None:
    assert NAME.match(job["name"]), job["name"]
    assert DISPLAY.match(job["displayName"]), job["displayName"]
    for key in ("createTime", "startTime", "endTime", "updateTime"):
        assert key not in job or TIME.match(job[key]), (key, job.get(key))
    assert "updateTime" in job and job["updateTime"] >= job["createTime"]
    # The display name is <base>_<local submit time>; the server stamps creation just after.
    stamp = datetime.strptime(DISPLAY.match(job["displayName"])["stamp"], "%Y%m%d_%H%M%S")  # type: ignore[index]
    created = datetime.fromisoformat(job["createTime"]).replace(tzinfo=None)
    assert 0 <= (created - stamp).total_seconds() < 60
    state = job["state"]
    assert ("endTime" in job) == (
        state in {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED"}
    )
    assert ("error" in job) == (state in {"JOB_STATE_FAILED", "JOB_STATE_CANCELLED"})
    assert ("startTime" in job) == (state not in {"JOB_STATE_QUEUED", "JOB_STATE_PENDING"})
    spec = job["jobSpec"] if "jobSpec" in job else job["trialJobSpec"]
    out_dir = spec.get("baseOutputDirectory", {}).get("outputUriPrefix")
    for pool in spec["workerPoolSpecs"]:
        if not pool:
            continue  # a skipped pool before a used one
        assert pool["diskSpec"] == {"bootDiskType": "pd-ssd", "bootDiskSizeGb": 100}
        assert isinstance(pool["replicaCount"], str)
        assert ("pythonPackageSpec" in pool) != ("containerSpec" in pool)
        task = pool.get("pythonPackageSpec")
        if task and out_dir:
            assert task["args"][-1] == f"--job-dir={out_dir}"
            assert out_dir.endswith("/" + job["displayName"])


def test_the_world_hangs_together() -> None:
    jobs = custom_jobs()
    ids = [j["name"].rsplit("/", 1)[1] for j in jobs]
    assert len(set(ids)) == len(ids) == 6
    assert len({j["displayName"] for j in jobs}) == 6
    # Newest first, as list returns them.
    assert [j["createTime"] for j in jobs] == sorted((j["createTime"] for j in jobs), reverse=True)
    states = {j["state"].removeprefix("JOB_STATE_") for j in jobs}
    assert states == {"QUEUED", "PENDING", "RUNNING", "FAILED", "CANCELLING", "SUCCEEDED"}
    by_id = dict(zip(ids, jobs, strict=True))
    assert by_id[RUNNING_ID] == fixture("custom_job_get_running.json")
    assert by_id[FAILED_ID] == fixture("custom_job_failed.json")
    assert fixture("custom_job_create_response.json")["name"].rsplit("/", 1)[1] not in by_id
    assert fixture("tuning_jobs_list.json")["hyperparameterTuningJobs"] == [
        fixture("tuning_job_get.json")
    ]
    # The running job, as cancel moves it on: same job, later state, later update.
    running = fixture("custom_job_get_running.json")
    cancelling, cancelled = (
        fixture("custom_job_cancelling.json"),
        fixture("custom_job_cancelled.json"),
    )
    assert cancelling["name"] == cancelled["name"] == running["name"]
    assert cancelling["state"] == "JOB_STATE_CANCELLING"
    assert cancelled["state"] == "JOB_STATE_CANCELLED"
    assert cancelled["error"] == {"code": 1, "message": "CANCELED"}
    assert running["updateTime"] < cancelling["updateTime"] < cancelled["updateTime"]
    assert fixture("cancel_response.json") == {}


def test_the_distributed_and_evaluator_layouts() -> None:
    by_name = {j["displayName"]: j for j in custom_jobs()}
    pools = by_name["census_dist_20261122_090000"]["jobSpec"]["workerPoolSpecs"]
    assert [p["replicaCount"] for p in pools] == ["1", "2", "1"]
    assert {p["machineSpec"]["machineType"] for p in pools} == {"n1-standard-8"}
    assert [p["machineSpec"].get("acceleratorType") for p in pools] == [
        "NVIDIA_TESLA_T4",
        "NVIDIA_TESLA_T4",
        None,
    ]
    evaluator = by_name["census_eval_20261121_120000"]["jobSpec"]["workerPoolSpecs"]
    assert [bool(p) for p in evaluator] == [True, False, False, True]
    container = by_name["serve_export_20261122_092000"]["jobSpec"]["workerPoolSpecs"][0]
    assert container["containerSpec"]["imageUri"].endswith(":1.4")
    failed = fixture("custom_job_failed.json")["error"]
    assert failed["code"] == 3
    assert failed["message"].startswith("The replica workerpool0-0 exited with a non-zero status")
    assert "Traceback (most recent call last)" in failed["message"]


def test_the_tuning_job() -> None:
    job = fixture("tuning_job_get.json")
    study = job["studySpec"]
    assert study["metrics"] == [{"metricId": "accuracy", "goal": "MAXIMIZE"}]
    specs = {p["parameterId"]: p for p in study["parameters"]}
    assert specs["batch_size"]["integerValueSpec"] == {"minValue": "16", "maxValue": "128"}
    assert specs["learning_rate"]["scaleType"] == "UNIT_LOG_SCALE"
    assert (job["maxTrialCount"], job["parallelTrialCount"]) == (6, 2)
    trials = job["trials"]
    assert [t["id"] for t in trials] == ["1", "2", "3", "4", "5", "6"]
    assert {t["state"] for t in trials} == {"SUCCEEDED", "INFEASIBLE", "ACTIVE", "REQUESTED"}
    for t in trials:
        values = {p["parameterId"]: p["value"] for p in t["parameters"]}
        assert set(values) == set(specs)
        # Integer and discrete values come back as doubles: 32.0, not 32.
        assert isinstance(values["batch_size"], float) and values["batch_size"].is_integer()
        assert isinstance(values["optimizer"], str)
        done = t["state"] in {"SUCCEEDED", "INFEASIBLE"}
        assert ("endTime" in t) == done
        assert ("finalMeasurement" in t) == (t["state"] == "SUCCEEDED")
        assert ("infeasibleReason" in t) == (t["state"] == "INFEASIBLE")
        if "customJob" in t:
            assert NAME.match(t["customJob"])
    assert trials[0]["finalMeasurement"] == {
        "stepCount": "200",
        "metrics": [{"metricId": "accuracy", "value": 0.93}],
    }
    raw = (FIXTURES / "tuning_job_get.json").read_text()
    assert '"value": 32.0' in raw


# --- the replay, through googleapiclient ---


def test_list_pages_through_both_fixtures() -> None:
    replay = VertexReplay()
    jobs = service(replay).projects().locations().customJobs()
    parent = f"projects/{PROJECT}/locations/{REGION}"
    request = jobs.list(parent=parent, pageSize=100)
    seen: list[str] = []
    while request is not None:
        page = request.execute()
        seen += [j["displayName"] for j in page["customJobs"]]
        request = jobs.list_next(request, page)
    assert seen == [j["displayName"] for j in custom_jobs()]
    first, second = replay.requests
    assert first.method == second.method == "GET"
    assert first.uri.startswith(f"{ENDPOINT}/v1/{parent}/customJobs?")
    assert "pageToken" not in first.query and first.query["pageSize"] == "100"
    assert second.query["pageToken"] == fixture("custom_jobs_list_page1.json")["nextPageToken"]


def test_list_filter_and_read_mask() -> None:
    replay = VertexReplay()
    jobs = service(replay).projects().locations().customJobs()
    parent = f"projects/{PROJECT}/locations/{REGION}"
    page = jobs.list(
        parent=parent,
        filter='display_name="census_dist_20261122_090000" AND state!="JOB_STATE_FAILED"',
        readMask="name,displayName,state",
    ).execute()
    (job,) = page["customJobs"]
    assert job == {
        "name": f"{PARENT}/customJobs/{RUNNING_ID}",
        "displayName": "census_dist_20261122_090000",
        "state": "JOB_STATE_RUNNING",
    }
    page = jobs.list(
        parent=parent, filter='display_name:"mnist_*"', pageToken=page["nextPageToken"]
    )
    assert [j["displayName"] for j in page.execute()["customJobs"]] == [
        "mnist_20261122_083000",
        "mnist_20261121_083000",
    ]


def test_get_by_number_or_by_project_id() -> None:
    replay = VertexReplay()
    jobs = service(replay).projects().locations().customJobs()
    by_number = jobs.get(name=f"{PARENT}/customJobs/{FAILED_ID}").execute()
    by_id = jobs.get(name=f"projects/{PROJECT}/locations/{REGION}/customJobs/{FAILED_ID}").execute()
    assert by_number == by_id == fixture("custom_job_failed.json")
    assert [r.path for r in replay.requests] == [
        f"/v1/{PARENT}/customJobs/{FAILED_ID}",
        f"/v1/projects/{PROJECT}/locations/{REGION}/customJobs/{FAILED_ID}",
    ]


def test_unknown_ids_and_projects_are_http_errors() -> None:
    replay = VertexReplay()
    api = service(replay).projects().locations()
    with pytest.raises(HttpError) as missing:
        api.customJobs().get(name=f"{PARENT}/customJobs/1234567890123456789").execute()
    assert missing.value.status_code == 404
    assert json.loads(missing.value.content) == fixture("error_not_found.json")
    with pytest.raises(HttpError) as wrong_kind:
        api.hyperparameterTuningJobs().get(
            name=f"{PARENT}/hyperparameterTuningJobs/{RUNNING_ID}"
        ).execute()
    assert wrong_kind.value.status_code == 404
    with pytest.raises(HttpError) as foreign:
        api.customJobs().list(parent=f"projects/other-project/locations/{REGION}").execute()
    assert foreign.value.status_code == 403
    assert foreign.value.reason.startswith("Permission 'aiplatform.customJobs.list' denied")


def test_create_echoes_the_job_with_server_fields() -> None:
    replay = VertexReplay()
    jobs = service(replay).projects().locations().customJobs()
    parent = f"projects/{PROJECT}/locations/{REGION}"
    template = fixture("custom_job_create_response.json")
    body = {
        "displayName": template["displayName"],
        "labels": {"owner": "ann"},
        "jobSpec": {
            "workerPoolSpecs": [
                {
                    "machineSpec": {"machineType": "n1-standard-4"},
                    "replicaCount": "1",
                    "pythonPackageSpec": template["jobSpec"]["workerPoolSpecs"][0][
                        "pythonPackageSpec"
                    ],
                }
            ],
            "scheduling": {"timeout": "7200s"},
            "baseOutputDirectory": template["jobSpec"]["baseOutputDirectory"],
        },
    }
    assert violations("aiplatform", "v1", JOB, body, request=True) == []
    created = jobs.create(parent=parent, body=body).execute()
    assert created == template  # the server fills in the disk defaults
    (sent,) = replay.requests
    assert (sent.method, sent.path, sent.body) == ("POST", f"/v1/{parent}/customJobs", body)
    listed = jobs.list(parent=parent).execute()["customJobs"]
    assert listed[0] == created and len(listed) == 4
    again = jobs.create(parent=parent, body=body).execute()  # not idempotent: a second job
    assert int(again["name"].rsplit("/", 1)[1]) == int(created["name"].rsplit("/", 1)[1]) + 1


def test_cancel_moves_the_job_on() -> None:
    replay = VertexReplay()
    jobs = service(replay).projects().locations().customJobs()
    name = f"projects/{PROJECT}/locations/{REGION}/customJobs/{RUNNING_ID}"
    assert jobs.cancel(name=name, body={}).execute() == {}
    sent = replay.requests[-1]
    assert (sent.method, sent.path) == ("POST", f"/v1/{name}:cancel")
    assert jobs.get(name=name).execute() == fixture("custom_job_cancelling.json")
    listed = jobs.list(parent=f"projects/{PROJECT}/locations/{REGION}").execute()["customJobs"]
    assert [j["state"] for j in listed if j["name"].endswith(RUNNING_ID)] == [
        "JOB_STATE_CANCELLING"
    ]
    replay.override(RUNNING_ID, fixture("custom_job_cancelled.json"))
    assert jobs.get(name=name).execute()["state"] == "JOB_STATE_CANCELLED"
    with pytest.raises(HttpError) as finished:
        jobs.cancel(name=name, body={}).execute()
    assert finished.value.status_code == 400


def test_tuning_jobs_list_get_and_cancel() -> None:
    replay = VertexReplay()
    tuning = service(replay).projects().locations().hyperparameterTuningJobs()
    parent = f"projects/{PROJECT}/locations/{REGION}"
    listed = tuning.list(parent=parent).execute()
    assert listed == fixture("tuning_jobs_list.json")
    name = f"{parent}/hyperparameterTuningJobs/{HP_ID}"
    assert tuning.get(name=name).execute() == fixture("tuning_job_get.json")
    assert tuning.cancel(name=name, body={}).execute() == {}
    assert replay.requests[-1].path == f"/v1/{name}:cancel"
    assert tuning.get(name=name).execute()["state"] == "JOB_STATE_CANCELLING"


def test_set_route_serves_errors_first() -> None:
    replay = VertexReplay()
    jobs = service(replay).projects().locations().customJobs()
    replay.set_route("POST", r"/customJobs$", "error_invalid_argument.json", status=400)
    with pytest.raises(HttpError) as bad:
        jobs.create(parent=f"projects/{PROJECT}/locations/{REGION}", body={}).execute()
    assert bad.value.status_code == 400
    assert bad.value.error_details == fixture("error_invalid_argument.json")["error"]["details"]
    replay.override(FAILED_ID, None)
    with pytest.raises(HttpError):
        jobs.get(name=f"{PARENT}/customJobs/{FAILED_ID}").execute()


def test_concurrent_requests_each_get_their_own_answer() -> None:
    replay = VertexReplay()
    ids = [j["name"].rsplit("/", 1)[1] for j in custom_jobs()] * 5

    def get(job_id: str) -> str:
        jobs = service(replay).projects().locations().customJobs()
        return str(jobs.get(name=f"{PARENT}/customJobs/{job_id}").execute()["name"])

    with ThreadPoolExecutor(8) as pool:
        names = list(pool.map(get, ids))
    assert [n.rsplit("/", 1)[1] for n in names] == ids
    assert len(replay.requests) == len(ids)
