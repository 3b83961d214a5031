"""Run a job again under a fresh id: the one implementation behind the TUI's ``R`` and
``tui-app jobs resubmit``.

The new id is the old one's base with the current second (``mnist_20260101_083000``), so two
resubmits of one job in the same second, or a resubmit in the second its job was created, want
the same id and jobs.create answers 409. That is a clash of names, not a problem with the job:
the next second's id is free, so a 409 is tried again (three times in all) instead of being
shown to the user. Any other error is the server's verdict on the job and is raised at once.

No Textual here: every call blocks, and the TUI runs this in a thread worker.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Final

from tui_app.api.errors import ApiCallError

__all__ = ["ATTEMPTS", "RETRY_WAIT_SECONDS", "create_with_fresh_id", "resubmit"]

ATTEMPTS: Final = 3
"""jobs.create calls at most: a name can only be taken for so many seconds in a row by accident."""
RETRY_WAIT_SECONDS: Final = 1.0
"""Between attempts: ids are stamped to the second, so the next one is a different id."""
ALREADY_EXISTS: Final = 409


def _utc_now() -> datetime:
    return datetime.now(UTC)


def create_with_fresh_id(
    create: Callable[[dict[str, Any]], dict[str, Any]],
    body: dict[str, Any],
    *,
    now: Callable[[], datetime] = _utc_now,
    wait: float = RETRY_WAIT_SECONDS,
    source: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """Create ``body``; while its id is taken (409), restamp it with a later second and retry.

    Args:
        create: jobs.create (``JobsApi.create``, or the TUI's call through its job source).
        body: A jobs.create body whose ``jobId`` ends in a timestamp (``resubmission``'s).
        now: The clock the new ids are stamped from (tests pin it).
        wait: Seconds between attempts, so that the real clock reaches the next second.
        source: ``(project, job id)`` of the job ``body`` is a copy of: once created, the
            copy is recorded as resubmitted from it (``ResubmitHistory``, for ``D``).

    Returns:
        The created Job, as the server answered.

    Raises:
        ApiCallError: any error but 409 at once; 409 ALREADY_EXISTS after ``ATTEMPTS`` clashes.
    """
    from tui_app.model.jobs.job_config import resubmission  # pydantic: loaded only when used

    for attempt in range(ATTEMPTS):
        try:
            created = create(body)
        except ApiCallError as exc:
            if exc.status_code != ALREADY_EXISTS:
                raise
        else:
            if source is not None:
                from tui_app.api.job_compare import ResubmitHistory

                ResubmitHistory().record(source[0], str(created.get("jobId")), source[1])
            return created
        if attempt + 1 < ATTEMPTS:
            time.sleep(wait)
            # The same job under the id of this moment; a jobDir named after the id follows it.
            body = resubmission(body, now())
    raise ApiCallError("A job with this id already exists.", ALREADY_EXISTS, "ALREADY_EXISTS")


def resubmit(
    job_id: str,
    get: Callable[[str], Mapping[str, Any]],
    create: Callable[[dict[str, Any]], dict[str, Any]],
    *,
    now: Callable[[], datetime] = _utc_now,
    wait: float = RETRY_WAIT_SECONDS,
    project: str | None = None,
) -> dict[str, Any]:
    """Read ``job_id`` and create a copy of it (what the user submitted, nothing output only)
    under a fresh timestamped id.

    ``get`` and ``create`` are passed rather than a client so the TUI can route them through
    its job source, which reconnects after the service went away. With ``project``, the copy
    is recorded as resubmitted from ``job_id`` (see :func:`create_with_fresh_id`).

    Returns:
        The created Job; its ``jobId`` is the new id.

    Raises:
        ApiCallError: the job cannot be read, or the copy was refused (see
            :func:`create_with_fresh_id`).
    """
    from tui_app.model.jobs.job_config import resubmission

    job = get(job_id)
    source = (project, job_id) if project is not None else None
    body = resubmission(job, now())
    return create_with_fresh_id(create, body, now=now, wait=wait, source=source)
