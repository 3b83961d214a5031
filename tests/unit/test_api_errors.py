"""ApiCallError keeps what the server said about which field is wrong (the builder shows it)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tui_app.api.errors import ApiCallError


@dataclass
class _Resp:
    status: int


class _HttpError(Exception):
    """The two attributes of googleapiclient's HttpError that from_http_error reads."""

    def __init__(self, status: int, body: Any) -> None:
        super().__init__("HttpError")
        self.resp = _Resp(status)
        self.content = body if isinstance(body, bytes) else json.dumps(body).encode()


def test_bad_request_details_become_violations() -> None:
    body = {
        "error": {
            "code": 409,
            "status": "ALREADY_EXISTS",
            "message": "Field: job.job_id Error: A job with this id already exists.",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.BadRequest",
                    "fieldViolations": [
                        {"field": "job.job_id", "description": "A job with this id already exists."}
                    ],
                }
            ],
        }
    }
    exc = ApiCallError.from_http_error(_HttpError(409, body))
    assert (exc.status_code, exc.status) == (409, "ALREADY_EXISTS")
    assert exc.violations == [
        {"field": "job.job_id", "description": "A job with this id already exists."}
    ]


def test_a_field_message_without_details_still_names_its_field() -> None:
    body = {
        "error": {
            "code": 400,
            "status": "INVALID_ARGUMENT",
            "message": "Field: trainingInput.region Error: A region is required.",
        }
    }
    exc = ApiCallError.from_http_error(_HttpError(400, body))
    assert exc.violations == [
        {"field": "trainingInput.region", "description": "A region is required."}
    ]


def test_other_errors_have_no_violations() -> None:
    exc = ApiCallError.from_http_error(_HttpError(502, b"<html>bad gateway</html>"))
    assert exc.violations == [] and exc.status_code == 502


def test_transient_is_the_rule_the_log_followers_wrote_twice() -> None:
    """``transient`` replaces two hand-written copies (``jobs logs --follow`` and the log
    pane's first read); it answers as both did for every status."""

    def cli_rule(code: int) -> bool:  # jobs_cli._transient
        return code in (0, 408, 429) or code >= 500

    def pane_rule(code: int) -> bool:  # shell/screens/logs_screen.py: stop unless this holds
        return not (code and code not in (408, 429) and code < 500)

    for code in range(-1, 700):
        exc = ApiCallError("x", code, "UNKNOWN")
        assert exc.transient == cli_rule(code) == pane_rule(code), code
    assert ApiCallError("connection refused").transient  # nothing answered
    assert not ApiCallError("no such job", 404, "NOT_FOUND").transient
    assert ApiCallError("busy", 503, "UNAVAILABLE").transient


def test_rpc_error_parts_keep_what_was_read_before_a_malformed_part() -> None:
    from tui_app.api.errors import rpc_error_parts

    err = {
        "status": "INVALID_ARGUMENT",
        "message": "bad",
        "details": [{"fieldViolations": [{"field": "a", "description": "x"}]}, "garbled"],
    }
    assert rpc_error_parts(err, "UNKNOWN", "fallback") == (
        "INVALID_ARGUMENT",
        "bad",
        [{"field": "a", "description": "x"}],
    )
    assert rpc_error_parts(None, "UNKNOWN", "fallback") == ("UNKNOWN", "fallback", [])
    assert rpc_error_parts({"details": 5}, "UNKNOWN", "fallback") == ("UNKNOWN", "fallback", [])


def test_a_metrics_body_of_the_wrong_shape_reads_as_no_samples() -> None:
    from tui_app.api.metrics_client import parse_metrics

    assert parse_metrics({"replicas": 5}).replicas == []
    assert (
        parse_metrics({"replicas": [{"taskName": "master-replica-0", "samples": 3}]})
        .replicas[0]
        .samples
        == []
    )
    assert parse_metrics("not json").replicas == []
    one = parse_metrics(
        {
            "replicas": [
                {
                    "taskName": "master-replica-0",
                    "samples": [
                        {"time": "2026-11-22T08:30:00Z", "cpuPercent": "12.5", "memoryBytes": 7},
                        {"time": "not a time", "cpuPercent": 1},
                    ],
                }
            ],
            "sampleInterval": "2s",
        }
    )
    (sample,) = one.replicas[0].samples
    assert (sample.cpu_percent, sample.memory_bytes) == (12.5, 7)
    assert one.interval_seconds == 2.0
