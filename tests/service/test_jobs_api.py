"""The Jobs REST surface: validation, errors, auth, list paging and filters, patch and etags.

Real HTTP against a real service process; the jobs here need not finish (most never run).
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

from tests.conftest import unique_id
from tests.support.live_service import PROJECT, LiveService, basic_job
from tests.support.restartable import wait_for
from tui_app.api.errors import ApiCallError

JOBS = f"/v1/projects/{PROJECT}/jobs"


def _fields(body: dict[str, Any]) -> list[str]:
    details = body["error"].get("details", [])
    return [v["field"] for d in details for v in d.get("fieldViolations", [])]


@pytest.mark.parametrize(
    ("training", "job_id", "field"),
    [
        ({}, "1bad-id", "jobId"),
        ({"scaleTier": "HUGE"}, None, "trainingInput.scaleTier"),
        ({"scaleTier": "CUSTOM"}, None, "trainingInput.masterType"),
        (
            {"scaleTier": "CUSTOM", "masterType": "standard", "workerCount": "2"},
            None,
            "trainingInput.workerType",
        ),
        ({"masterType": "standard"}, None, "trainingInput.masterType"),
        ({"workerCount": "abc"}, None, "trainingInput.workerCount"),
        ({"region": ""}, None, "trainingInput.region"),
        ({"pythonModule": None}, None, "trainingInput.pythonModule"),
        (
            {"packageUris": ["gs://test-bucket/missing.tar.gz"]},
            None,
            "trainingInput.packageUris[0]",
        ),
        ({"packageUris": ["../../etc/passwd"]}, None, "trainingInput.packageUris[0]"),
        ({"jobDir": "gs://test-bucket/../../x"}, None, "trainingInput.jobDir"),
        (
            {"scheduling": {"maxRunningTime": "2 hours"}},
            None,
            "trainingInput.scheduling.maxRunningTime",
        ),
        ({"runtimeVersion": "2.11", "pythonVersion": "2.7"}, None, "trainingInput.pythonVersion"),
        ({"unknownField": 1}, None, "trainingInput.unknownField"),
        (
            {
                "scaleTier": "CUSTOM",
                "masterType": "standard",
                "masterConfig": {"acceleratorConfig": {"count": "1", "type": "NVIDIA_TESLA_T4"}},
            },
            None,
            "trainingInput.masterConfig.acceleratorConfig",
        ),
    ],
)
def test_bad_jobs_get_400_naming_the_field(
    service: LiveService, package_uri: str, training: dict[str, Any], job_id: str | None, field: str
) -> None:
    jid = job_id or unique_id("bad")
    body = basic_job(jid, package_uri)
    body["trainingInput"].update(training)
    body["trainingInput"] = {k: v for k, v in body["trainingInput"].items() if v is not None}
    status, resp = service.post_job(body)
    assert status == 400, resp
    assert resp["error"]["status"] == "INVALID_ARGUMENT"
    assert field in _fields(resp), resp
    assert f"Field: {field} Error:" in resp["error"]["message"]
    status, _ = service.request("GET", f"{JOBS}/{jid}")
    assert status in (400, 404)  # nothing was stored


def test_duplicate_id_is_409_and_keeps_the_first(service: LiveService, package_uri: str) -> None:
    jid = unique_id("dup")
    body = basic_job(jid, package_uri, "--steps", "1", scaleTier="BASIC")
    assert service.post_job(body)[0] == 200
    status, resp = service.post_job(basic_job(jid, package_uri, "--other"))
    assert status == 409
    assert resp["error"]["status"] == "ALREADY_EXISTS"
    assert resp["error"]["message"] == "Field: job.job_id Error: A job with this id already exists."
    assert service.client().get(jid)["trainingInput"]["args"] == ["--steps", "1"]


@pytest.mark.parametrize(
    "raw", [b"{not json", b"[1,2]", b'"a string"', b"null", '{"jobId": "\u00e9"}'.encode()]
)
def test_malformed_bodies_are_4xx_json(service: LiveService, raw: bytes) -> None:
    status, resp = service.request("POST", JOBS, raw, headers={"Content-Type": "application/json"})
    assert 400 <= status < 500
    assert resp["error"]["code"] == status


def test_unknown_job_route_and_method(service: LiveService) -> None:
    status, resp = service.request("GET", f"{JOBS}/no_such_job")
    assert status == 404 and resp["error"]["status"] == "NOT_FOUND"
    status, resp = service.request("GET", "/v1/nothing/here")
    assert status == 404 and resp["error"]["code"] == 404
    status, resp = service.request("DELETE", f"{JOBS}/x")
    assert status == 405 and resp["error"]["code"] == 405
    status, resp = service.request("POST", f"{JOBS}/no_such_job:cancel")
    assert status == 404


def test_requests_without_the_token_get_401(service: LiveService) -> None:
    for token in (None, "wrong-token"):
        status, resp = service.request("GET", JOBS, token=token)
        assert status == 401
        assert resp["error"]["status"] == "UNAUTHENTICATED"
        assert resp["error"]["code"] == 401
        status, resp = service.request("POST", "/v2/entries:list", b"{}", token=token)
        assert status == 401
    token_file = service.state_dir / "token"
    assert token_file.stat().st_mode & 0o777 == 0o600


def test_cancel_accepts_an_empty_body(service: LiveService, package_uri: str) -> None:
    """google-api-python-client sends no body and no Content-Type."""
    jid = unique_id("cancel_empty")
    service.client().create(basic_job(jid, package_uri, "--steps", "100000", "--sleep", "0.1"))
    status, resp = service.request("POST", f"{JOBS}/{jid}:cancel")
    assert status == 200 and resp == {}
    job = service.wait_state(jid, ("CANCELLED",), timeout=15)
    assert job["endTime"]


def test_list_pages_newest_first_and_filters(service: LiveService, package_uri: str) -> None:
    project = "list-project"
    client = service.client(project)
    ids = [unique_id(f"page{i:02d}") for i in range(25)]
    for i, jid in enumerate(ids):
        body = basic_job(jid, package_uri, "--steps", "1")
        body["labels"] = {"team": "a" if i % 2 else "b"}
        client.create(body)
    status, first = service.request("GET", f"/v1/projects/{project}/jobs")
    assert status == 200
    assert [j["jobId"] for j in first["jobs"]] == ids[::-1][:20]  # default pageSize 20
    token = first["nextPageToken"]
    status, second = service.request("GET", f"/v1/projects/{project}/jobs?pageToken={token}")
    assert [j["jobId"] for j in second["jobs"]] == ids[::-1][20:]
    assert "nextPageToken" not in second
    assert [j["jobId"] for j in client.list_jobs()] == ids[::-1]

    status, big = service.request("GET", f"/v1/projects/{project}/jobs?pageSize=1000")
    assert len(big["jobs"]) == 25  # clamped to 100, which holds them all
    team_a = [j["jobId"] for j in client.list_jobs("labels.team=a")]
    assert team_a == [jid for i, jid in enumerate(ids) if i % 2][::-1]
    assert [j["jobId"] for j in client.list_jobs(f"jobId:{ids[3][:10]}* AND labels.team=a")] == [
        ids[3]
    ]
    assert client.list_jobs("jobId:nomatch*") == []
    status, resp = service.request("GET", f"/v1/projects/{project}/jobs?filter=state%3D%28")
    assert status == 400 and "filter" in _fields(resp)
    status, resp = service.request("GET", f"/v1/projects/{project}/jobs?pageToken=garbage!!")
    assert status == 400 and "pageToken" in _fields(resp)
    other = base64.urlsafe_b64encode(b'{"p":"other","s":5,"f":"x"}').decode()
    status, resp = service.request("GET", f"/v1/projects/{project}/jobs?pageToken={other}")
    assert status == 400
    status, empty = service.request("GET", "/v1/projects/empty-project/jobs")
    assert status == 200 and empty == {}


def _units(job: dict[str, Any]) -> float:
    return float(job.get("trainingOutput", {}).get("consumedMLUnits", 0))


def _unmetered(job: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in job.items() if k not in ("etag", "trainingOutput")}


def test_list_answers_each_job_as_get_does(service: LiveService, package_uri: str) -> None:
    """A page copies finished jobs as stored, but a running job's ML units are counted up to
    now, in the list as in ``jobs.get``."""
    project = "list-render-project"
    client = service.client(project)
    done, running = unique_id("listed_done"), unique_id("listed_running")
    client.create(basic_job(done, package_uri, "--steps", "1"))
    service.wait_state(done, ("SUCCEEDED",), project=project)
    client.create(basic_job(running, package_uri, "--steps", "100000", "--sleep", "0.1"))
    service.wait_state(running, ("RUNNING",), project=project)
    try:
        # A job that just started has 0 units: wait until some show; the list must show as many.
        wait_for(lambda: _units(client.get(running)) > 0, 30, "ML units counted")
        before = _units(client.get(running))
        status, page = service.request("GET", f"/v1/projects/{project}/jobs?pageSize=5")
        assert status == 200
        listed = {job["jobId"]: job for job in page["jobs"]}
        assert listed.keys() == {done, running}
        assert listed[done] == client.get(done)
        after = client.get(running)
        assert listed[running]["state"] == after["state"] == "RUNNING"
        assert before <= _units(listed[running]) <= _units(after)
        assert _unmetered(listed[running]) == _unmetered(after)
    finally:
        client.cancel(running)
        service.wait_state(running, ("CANCELLED",), project=project)


def test_patch_labels_with_and_without_etag(service: LiveService, package_uri: str) -> None:
    client = service.client()
    jid = unique_id("patch")
    created = client.create(basic_job(jid, package_uri, "--steps", "1"))
    base64.urlsafe_b64decode(created["etag"])  # valid base64, or gcloud crashes
    # A running job's etag moves with its state; once it has ended only a patch moves it.
    created = service.wait_state(jid)

    updated = client.set_labels(jid, {"owner": "ann"})
    assert updated["labels"] == {"owner": "ann"}
    assert updated["etag"] != created["etag"]

    with pytest.raises(ApiCallError) as stale:
        client.set_labels(jid, {"owner": "bob"}, etag=created["etag"])
    assert stale.value.status_code == 409 and stale.value.status == "ABORTED"
    assert client.get(jid)["labels"] == {"owner": "ann"}

    fresh = client.set_labels(jid, {"owner": "bob"}, etag=updated["etag"])
    assert fresh["labels"] == {"owner": "bob"}

    with pytest.raises(ApiCallError) as bad:
        client.set_labels(jid, {"Owner": "x"})
    assert bad.value.status_code == 400 and bad.value.violations
    status, resp = service.request(
        "PATCH",
        f"{JOBS}/{jid}?updateMask=trainingInput",
        b"{}",
        headers={"Content-Type": "application/json"},
    )
    assert status == 400 and "updateMask" in _fields(resp)
    assert client.set_labels(jid, {}).get("labels") is None
