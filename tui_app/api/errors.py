"""One error type for every failed API call, carrying what the server said."""

from __future__ import annotations

import json
import re
from typing import Any

# The message ml v1 writes for a field error ("Field: job.job_id Error: ..."), which names the
# field even when a server sends no google.rpc.BadRequest details.
_FIELD_MESSAGE = re.compile(r"^Field: (?P<field>\S+) Error: (?P<description>.+)$", re.DOTALL)


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

    def __str__(self) -> str:
        return f"{self.status}: {self.message}" if self.status_code else self.message

    @classmethod
    def from_http_error(cls, exc: Any) -> ApiCallError:
        """From googleapiclient's HttpError, keeping the google.rpc status and field violations.

        The violations come from the BadRequest details; without details, a message of the
        platform's ``Field: <path> Error: <why>`` form still names its field.
        """
        code = int(getattr(exc.resp, "status", 0) or 0)
        status, message = "UNKNOWN", str(getattr(exc, "reason", "") or exc)
        violations: list[dict[str, str]] = []
        try:
            err = json.loads(exc.content.decode("utf-8", "replace"))["error"]
            status = err.get("status") or status
            message = err.get("message") or message
            for detail in err.get("details") or []:
                violations += detail.get("fieldViolations") or []
        except (ValueError, KeyError, TypeError, AttributeError):
            pass
        if not violations:
            m = _FIELD_MESSAGE.match(message)
            if m:
                violations = [{"field": m["field"], "description": m["description"]}]
        return cls(message, code, status, violations)
