"""Bad input never gets a 5xx and never stores anything (hypothesis against the real service).

gcloud retries 5xx for ~26 s before giving up, and a half-stored job is worse than none, so
every malformed request must be a 4xx google.rpc error (`docs/wire-formats.md`, Errors). These
are the first, broad checks; test_fuzz_routes.py goes route by route with the strategies of
tests/support/fuzz.py.
"""

from __future__ import annotations

import json
import urllib.parse
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.fuzz import ANY_JSON as JSON
from tests.support.live_service import LiveService

PROJECT = "fuzz-project"
FIELDS = st.sampled_from(
    [
        "scaleTier",
        "masterType",
        "workerCount",
        "workerType",
        "region",
        "pythonModule",
        "packageUris",
        "args",
        "jobDir",
        "scheduling",
        "hyperparameters",
        "masterConfig",
        "runtimeVersion",
        "pythonVersion",
        "unknown",
    ]
)
FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _json_request(service: LiveService, method: str, path: str, body: Any) -> tuple[int, Any]:
    return service.request(
        method, path, json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )


def _assert_4xx(status: int, body: Any) -> None:
    assert 400 <= status < 500, (status, body)
    assert isinstance(body, dict) and body["error"]["code"] == status
    assert isinstance(body["error"]["message"], str) and body["error"]["status"]


@FUZZ
@given(job_id=st.text(max_size=30), training=st.dictionaries(FIELDS, JSON, max_size=5))
def test_create_with_garbage(service: LiveService, job_id: str, training: dict[str, Any]) -> None:
    status, body = _json_request(
        service,
        "POST",
        f"/v1/projects/{PROJECT}/jobs",
        {"jobId": job_id, "trainingInput": training},
    )
    _assert_4xx(status, body)
    status, listed = service.request("GET", f"/v1/projects/{PROJECT}/jobs")
    assert status == 200 and listed == {}  # nothing stored


@FUZZ
@given(raw=st.binary(max_size=200))
def test_create_with_raw_bytes(service: LiveService, raw: bytes) -> None:
    status, body = service.request("POST", f"/v1/projects/{PROJECT}/jobs", raw)
    _assert_4xx(status, body)


@FUZZ
@given(
    name=st.text(min_size=1, max_size=60).filter(lambda s: s not in (".", "..")),
    verb=st.sampled_from(["", ":cancel", ":getIamPolicy", ":nope"]),
)
def test_hostile_job_names(service: LiveService, name: str, verb: str) -> None:
    quoted = urllib.parse.quote(name, safe="")
    for method in ("GET", "POST", "PATCH"):
        status, body = service.request(method, f"/v1/projects/{PROJECT}/jobs/{quoted}{verb}")
        _assert_4xx(status, body)


@FUZZ
@given(flt=st.text(max_size=80), token=st.text(max_size=40), size=st.text(max_size=6))
def test_list_with_garbage_params(service: LiveService, flt: str, token: str, size: str) -> None:
    query = urllib.parse.urlencode({"filter": flt, "pageToken": token, "pageSize": size})
    status, body = service.request("GET", f"/v1/projects/{PROJECT}/jobs?{query}")
    assert status == 200 or 400 <= status < 500, (status, body)
    if status != 200:
        _assert_4xx(status, body)


@FUZZ
@given(
    body=st.dictionaries(
        st.sampled_from(
            ["resourceNames", "filter", "orderBy", "pageSize", "pageToken", "projectIds"]
        ),
        JSON,
        max_size=5,
    )
)
def test_entries_list_with_garbage(service: LiveService, body: dict[str, Any]) -> None:
    status, resp = _json_request(service, "POST", "/v2/entries:list", body)
    assert status == 200 or 400 <= status < 500, (status, resp)
    if status != 200:
        _assert_4xx(status, resp)
