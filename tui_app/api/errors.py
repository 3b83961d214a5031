"""One error type for every failed API call, carrying what the server said."""

from __future__ import annotations

import json
import re
from typing import Any

# The message ml v1 writes for a field error ("Field: job.job_id Error: ..."), which names the
# field even when a server sends no google.rpc.BadRequest details.
_FIELD_MESSAGE = re.compile(r"^Field: (?P<field>\S+) Error: (?P<description>.+)$", re.DOTALL)
_TRANSIENT_ANSWERS = frozenset({408, 429})
"""The 4xx statuses that describe the moment, not the request: Request Timeout, Too Many
Requests."""


class ApiCallError(Exception):
    """A call failed: ``status_code`` is the HTTP status (0 when nothing answered)."""

    def __init__(
        self,
        message: str,
        status_code: int = 0,
        status: str = "UNAVAILABLE",
        violations: list[dict[str, str]] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.status = status
        self.violations = violations or []

    @property
    def unreachable(self) -> bool:
        """True when no server answered (connection refused, timeout)."""
        return self.status_code == 0

    @property
    def transient(self) -> bool:
        """Worth asking again: nothing answered, the request timed out (408), the server is
        shedding load (429) or failing (5xx). Any other answer is the server's decision about
        this request (NOT_FOUND, PERMISSION_DENIED, INVALID_ARGUMENT), which asking again will
        not change, so a follower stops on it rather than retrying for ever."""
        code = self.status_code
        return code == 0 or code in _TRANSIENT_ANSWERS or code >= 500

    def __str__(self) -> str:
        return f"{self.status}: {self.message}" if self.status_code else self.message

    @classmethod
    def from_http_error(cls, exc: Any) -> ApiCallError:
        """From googleapiclient's HttpError, keeping the google.rpc status and field violations.

        The violations come from the BadRequest details; without details, a message of the
        platform's ``Field: <path> Error: <why>`` form still names its field.
        """
        code = int(getattr(exc.resp, "status", 0) or 0)
        return cls.from_response(code, exc.content, str(getattr(exc, "reason", "") or exc))

    @classmethod
    def from_response(cls, code: int, content: bytes, reason: str) -> ApiCallError:
        """From an HTTP error answer: its status code, body and reason phrase (every client's
        answer, whatever transport read it: ``from_http_error``, ``json_http``)."""
        try:
            err = json.loads(content.decode("utf-8", "replace"))["error"]
        except (ValueError, KeyError, TypeError, AttributeError):
            err = None
        status, message, violations = rpc_error_parts(err, "UNKNOWN", reason)
        if not violations:
            m = _FIELD_MESSAGE.match(message)
            if m:
                violations = [{"field": m["field"], "description": m["description"]}]
        return cls(message, code, status, violations)


def rpc_error_parts(err: Any, status: str, message: str) -> tuple[Any, Any, list[dict[str, str]]]:
    """The status, message and field violations of a google.rpc error object (a body's
    ``"error"``), each part the caller's ``status``/``message`` where the server gave none.

    Every Google API and the local service answer with this shape, so all clients read it
    here. A malformed part ends the reading there: what was read before it is kept, and the
    call's error is still raised.
    """
    violations: list[dict[str, str]] = []
    try:
        status = err.get("status") or status
        message = err.get("message") or message
        for detail in err.get("details") or []:
            violations += detail.get("fieldViolations") or []
    except (ValueError, KeyError, TypeError, AttributeError):
        pass
    return status, message, violations
