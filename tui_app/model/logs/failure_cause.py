"""Why a job failed, in one line, from its errorMessage: what triage reads first.

The local service's errorMessage for a failed replica is ``The replica worker 1 exited with a
non-zero status of 1.`` followed by the tail of its traceback (``local/execution/runner.py``'s
``_describe_exit``, summarised by ``model/logs/tracebacks.error_summary``). The line a user needs is
the exception at the very end of that traceback; the list's ERROR column showed the first line, and
the detail put it under the frames. Other failures have other shapes:

- a pip install that failed: the service's sentence, then pip's last lines, the last of them
  ``ERROR: No matching distribution found for ...``;
- a replica killed by a signal with no traceback: ``... non-zero status of -6 (SIGABRT).``, maybe
  with a C++ ``terminate called ...`` / ``what():`` tail;
- a command-line error: ``task.py: error: unrecognized arguments: ...``;
- one sentence of the service's own (``The job has no master replica.``) or of a cloud backend.

:func:`split_failure` gives the cause, the replica's exit line and the rest; the list's ERROR
column shows the cause, and the detail shows all three in that order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from tui_app.model.logs.log_records import strip_rank
from tui_app.model.logs.tracebacks import last_traceback

__all__ = ["Failure", "failure_cause", "split_failure"]

_EXIT_LINE: Final = re.compile(r"The replica \S+(?: \d+)? (?:exited|ended)\b")
"""The first line ``_describe_exit`` writes (any role, any index), or Vertex AI's
(``The replica workerpool0-0 exited ...``)."""
_ERROR_LINE: Final = re.compile(
    r"(?:ERROR|FATAL|Fatal Python error|fatal|error)\b"  # pip's ERROR:, Python's fatal errors
    r"|\S+: error: "  # argparse: "task.py: error: unrecognized arguments"
    r"|terminate called\b"  # C++ abort: the exception's text follows on the "what():" line
    r"|\s*what\(\):\s"
)
"""An error line in output that has no Python traceback; the last one is the cause."""
_TF_NODE: Final = "Node: "
"""TF 2.x's "Graph execution error:" names the node, then says what went wrong on it."""


@dataclass(frozen=True, slots=True)
class Failure:
    """An errorMessage split for reading: the cause first."""

    cause: str
    """One line: the last exception (``RuntimeError: loss is NaN``) without its module path,
    or the last error line of a non-Python failure, or the message's first line."""
    exit_line: str
    """``The replica worker 1 exited with a non-zero status of 1.``; empty when the message
    has none (a failure before any replica ran, a cloud backend's own text)."""
    details: str
    """The rest of the message as it was (the traceback), without the exit line."""


def _short_exception(line: str) -> str:
    """``tensorflow.python.framework.errors_impl.NotFoundError: x`` -> ``NotFoundError: x``."""
    name, sep, rest = line.partition(":")
    if "." in name and " " not in name:
        name = name.rsplit(".", 1)[1]
    return name + sep + rest


def _traceback_cause(lines: list[str]) -> str | None:
    parsed = last_traceback(lines)
    if parsed is None:
        return None
    cause = _short_exception(parsed.exception.strip())
    if cause.endswith(":"):
        # "Graph execution error:" says nothing; TF 2.x's message says the rest after "Node:".
        message = parsed.message
        for i, line in enumerate(message[:-1]):
            if line.startswith(_TF_NODE):
                return f"{cause} {message[i + 1].strip()}"
    return cause


def split_failure(message: str) -> Failure:
    """The cause, the exit line and the rest of an errorMessage (any shape, possibly empty)."""
    text = message.strip()
    if not text:
        return Failure("", "", "")
    first, _, rest = text.partition("\n")
    exit_line = first.rstrip() if _EXIT_LINE.match(first) else ""
    details = rest.strip() if exit_line else text
    lines = [strip_rank(line.rstrip()) for line in text.splitlines()]
    lines = [line for line in lines if line.strip()]
    body = lines[1:] if exit_line else lines
    cause = _traceback_cause(body)
    if cause is None:
        errors = [line.strip() for line in body if _ERROR_LINE.match(line)]
        cause = errors[-1] if errors else (exit_line or lines[0])
        cause = cause.removeprefix("what():").strip()
    return Failure(cause=cause, exit_line=exit_line, details=details)


def failure_cause(message: str) -> str:
    """The one line that says why the job failed ("" for an empty message)."""
    return split_failure(message).cause


def job_failed_line(message: str | None) -> str:
    """A failed job's last log line: ``Job failed: <cause>`` with the cause as the job list
    shows it, on one line; ``Job failed.`` without one. The local service writes it as the
    job's last ``service`` entry, and a log reader ends a job whose server wrote none (Vertex
    AI) with the same words."""
    cause = " ".join(failure_cause(message).split()) if message else ""
    return f"Job failed: {cause}" if cause else "Job failed."
