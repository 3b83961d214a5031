"""google.rpc errors as the ml v1 and Logging APIs return them.

Every predictable failure is one of these, never a 5xx: gcloud retries 5xx five times (~26 s)
before it gives up with a "network connectivity" error, and prints a non-JSON body as a raw dump.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tui_app.model.jobs.job_spec import FieldViolation, format_violations

_STATUS_CODES = {
    "INVALID_ARGUMENT": 400,
    "FAILED_PRECONDITION": 400,
    "OUT_OF_RANGE": 400,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
    "ALREADY_EXISTS": 409,
    "ABORTED": 409,
    "RESOURCE_EXHAUSTED": 429,
    "INTERNAL": 500,
    "UNAVAILABLE": 503,
    "UNIMPLEMENTED": 501,
}


class ApiError(Exception):
    """An error the API answers with: a google.rpc.Status with an HTTP code."""

    def __init__(
        self,
        status: str,
        message: str,
        violations: Sequence[FieldViolation] = (),
        http_status: int | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.violations = list(violations)
        self.http_status = http_status or _STATUS_CODES[status]

    def body(self) -> dict[str, Any]:
        """The JSON body: ``{"error": {"code", "message", "status", "details"}}``."""
        err: dict[str, Any] = {
            "code": self.http_status,
            "message": self.message,
            "status": self.status,
        }
        if self.violations:
            err["details"] = [
                {
                    "@type": "type.googleapis.com/google.rpc.BadRequest",
                    "fieldViolations": [
                        {"field": v.field, "description": v.description} for v in self.violations
                    ],
                }
            ]
        return {"error": err}


def invalid(violations: Sequence[FieldViolation]) -> ApiError:
    """400 INVALID_ARGUMENT listing every violation."""
    return ApiError("INVALID_ARGUMENT", format_violations(list(violations)), violations)


def invalid_field(field: str, description: str) -> ApiError:
    """400 INVALID_ARGUMENT for one field."""
    return invalid([FieldViolation(field, description)])


def checked(field: str, value: str, error: Callable[[str], str | None]) -> str:
    """``value`` when ``error`` (``paths.project_error``, ``object_store.bucket_error``...)
    finds nothing wrong with it; else what it found, as ``invalid_field`` of ``field``: every
    route refuses a name it was given the same way.

    Raises:
        ApiError: 400 INVALID_ARGUMENT naming ``field``.
    """
    why = error(value)
    if why:
        raise invalid_field(field, why)
    return value


def not_found_job(name: str) -> ApiError:
    return ApiError(
        "NOT_FOUND",
        f"Field: name Error: The specified job was not found: {name}",
        [FieldViolation("name", "The specified job was not found.")],
    )
