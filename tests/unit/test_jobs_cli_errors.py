"""How ``tui-app jobs`` words a failed call (``cli_common.error_lines``)."""

from __future__ import annotations

from tui_app.api.errors import ApiCallError
from tui_app.entry.cli_common import error_lines


def test_a_violation_the_message_already_says_is_not_said_again() -> None:
    """The platform's NOT_FOUND for a job was printed as its message and again as its field
    violation: one error that read as two."""
    exc = ApiCallError(
        "Field: name Error: The specified job was not found: projects/p/jobs/x",
        404,
        "NOT_FOUND",
        [{"field": "name", "description": "The specified job was not found."}],
    )
    assert error_lines(exc) == [
        "error: NOT_FOUND: Field: name Error: The specified job was not found: projects/p/jobs/x"
    ]


def test_violations_the_message_does_not_say_are_listed() -> None:
    exc = ApiCallError(
        "Request contains an invalid argument.",
        400,
        "INVALID_ARGUMENT",
        [
            {"field": "job.training_input.region", "description": "Region is required."},
            {"field": "job.job_id", "description": "Job id is taken."},
        ],
    )
    assert error_lines(exc) == [
        "error: INVALID_ARGUMENT: Request contains an invalid argument.",
        "  job.training_input.region: Region is required.",
        "  job.job_id: Job id is taken.",
    ]
