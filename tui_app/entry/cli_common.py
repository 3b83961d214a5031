"""What the ``tui-app jobs`` commands share: their exit statuses, finding a job by the id or
prefix the user typed, and how a failed call (or any error a command answers) reads on stderr.

``jobs_cli`` (list, describe, cancel, resubmit, logs), ``diff_cli`` and ``wait_cli`` each import
this module; none imports another, so the commands stay independent of each other.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from tui_app.api.errors import ApiCallError
from tui_app.api.jobs_api import JobsApi
from tui_app.config.settings import SettingsError
from tui_app.model.jobs.job_id import match_job_id

__all__ = [
    "AMBIGUOUS_SHOWN",
    "REFUSED",
    "USAGE",
    "JobFinder",
    "Refused",
    "error_lines",
    "exit_status",
]

REFUSED = 1
"""Exit status: the server refused the call, or what was named does not exist."""
USAGE = 2
"""Exit status: the command line cannot be used as given (argparse's own status for a bad
option, so a script needs to know only one "fix the command" code)."""
AMBIGUOUS_SHOWN = 20
"""At most this many of the jobs an ambiguous prefix starts are listed."""


class Refused(Exception):
    """A request the command answers itself with one message and an exit status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class JobFinder:
    """Job ids as the user typed them -> the jobs, the TUI's way: exact, else a unique prefix.

    An exact id costs one jobs.get; only when that is NOT_FOUND is the project's list read
    (once, for all the ids of one command) to find the job a prefix names or the ids most like
    a typo.
    """

    def __init__(self, client: JobsApi) -> None:
        self.client = client
        self._ids: list[str] | None = None

    def find(self, text: str) -> dict[str, Any]:
        """The job ``text`` names.

        Raises:
            Refused: no job is named (``REFUSED``, with a "did you mean") or several are
                (``USAGE``, listing them).
            ApiCallError: a call failed otherwise.
        """
        if not text.strip():
            raise Refused("JOB_ID is empty: give a job id, or the start of one.", USAGE)
        # A name jobs.get cannot even ask for (a "/" in it) is a prefix or a typo to match.
        if "/" not in text:
            try:
                return self.client.get(text)
            except ApiCallError as exc:
                if exc.status_code != 404:
                    raise
        if self._ids is None:
            self._ids = [str(j.get("jobId")) for j in self.client.list_jobs()]
        match = match_job_id(text, self._ids)
        if match.ambiguous:
            shown = match.candidates[:AMBIGUOUS_SHOWN]
            more = len(match.candidates) - len(shown)
            lines = [
                f"{match.text!r} is the start of {len(match.candidates)} jobs in project "
                f"{self.client.project}; type more of the id:",
                *(f"  {job_id}" for job_id in shown),
                *([f"  … and {more} more"] if more else []),
            ]
            raise Refused("\n".join(lines), USAGE)
        if match.job_id is None:
            # The server's word for it, first: scripts look for it, as they did in its answer.
            raise Refused(f"NOT_FOUND: {match.message(self.client.project)}", REFUSED)
        return self.client.get(match.job_id)


def error_lines(exc: ApiCallError) -> list[str]:
    """What a failed call says on stderr: the server's status and message, then each field
    violation the message does not already say.

    The platform's message often is its violation ("Field: name Error: The specified job was
    not found: ..." with the violation "name: The specified job was not found."): printed
    both, one error read as two.
    """
    lines = [f"error: {exc}"]
    for v in exc.violations:
        if str(v.get("description") or "").rstrip(".") not in exc.message:
            lines.append(f"  {v.get('field')}: {v.get('description')}")
    return lines


def exit_status(command: Callable[[], int], failed_call: Callable[[ApiCallError], int]) -> int:
    """``command``'s exit status, or the one its error stands for, said on stderr: ^C is 130,
    bad settings ``USAGE``, a ``Refused`` its own status, a failed call ``failed_call``'s
    answer to it (commands read a failed call differently)."""
    try:
        return command()
    except KeyboardInterrupt:
        return 130
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return USAGE
    except Refused as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.status
    except ApiCallError as exc:
        print("\n".join(error_lines(exc)), file=sys.stderr)
        return failed_call(exc)
