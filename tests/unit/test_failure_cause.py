"""The one-line cause of a failure, from errorMessages as the local service writes them.

A failed replica's errorMessage is ``_describe_exit``'s first line, then ``error_summary`` of the
replica's stderr (tests/fixtures/tracebacks: real trainers' output, see test_tracebacks.py); a
failed install is the service's sentence, then pip's last lines.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_app.model.logs.failure_cause import failure_cause, split_failure
from tui_app.model.logs.tracebacks import error_summary
from tui_app.model.views.job_view import JobRow

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "tracebacks"
EXIT_1 = "The replica worker 1 exited with a non-zero status of 1."


def _replica_failure(fixture: str, head: str = EXIT_1) -> str:
    """errorMessage as ``local/execution/runner.py``'s ``_describe_exit`` builds it."""
    return head + "\n" + error_summary((FIXTURES / fixture).read_text())


@pytest.mark.parametrize(
    ("fixture", "cause"),
    [
        ("plain_py311.txt", "KeyError: 'learning_rate'"),
        # Chained: the process died of the last exception, not of the one it was handling.
        ("cause_py312.txt", "DataError: column 'age' has a non-numeric value"),
        (
            "chained_py37.txt",
            "RuntimeError: training data missing: gs://census-data/adult.data was not staged",
        ),
        ("multiline_py311.txt", "ValueError: The input is missing 6 feature columns:"),
        ("kbd_py311.txt", "KeyboardInterrupt"),
        ("torch213_ddp_rank_prefix.txt", "RuntimeError: mat1 and mat2 shapes cannot be multiplied"),
        # TensorFlow: the exception's module path goes; the "Original stack trace" frames after
        # the message are not the cause.
        ("tf115_original_stack_trace.txt", "NotFoundError: Restoring from checkpoint failed."),
        # TF 2.x: "Graph execution error:" alone says nothing; the node's error says it.
        (
            "tf211_graph_execution_error.txt",
            "InvalidArgumentError: Graph execution error: Received a label value of 2 which is "
            "outside the valid range of [0, 2).",
        ),
        ("argparse_no_traceback.txt", "task.py: error: unrecognized arguments: --first-layer"),
    ],
)
def test_a_replica_failure_gives_its_last_exception(fixture: str, cause: str) -> None:
    failure = split_failure(_replica_failure(fixture))
    assert failure.cause.startswith(cause)
    assert failure.exit_line == EXIT_1
    assert EXIT_1 not in failure.details
    assert "\n" not in failure.cause


def test_a_whole_chained_stderr_gives_the_last_exception() -> None:
    """A backend that sends the whole stderr: both tracebacks and the chaining sentence."""
    text = (FIXTURES / "cause_py312.txt").read_text()
    assert "The above exception was the direct cause" in text
    assert failure_cause(text) == "DataError: column 'age' has a non-numeric value"
    handling = (
        "Traceback (most recent call last):\n"
        '  File "task.py", line 3, in <module>\n'
        "    loss = step()\n"
        "FloatingPointError: loss=nan at step 213\n"
        "\n"
        "During handling of the above exception, another exception occurred:\n"
        "\n"
        "Traceback (most recent call last):\n"
        '  File "task.py", line 5, in <module>\n'
        "    raise RuntimeError('loss is NaN')\n"
        "RuntimeError: loss is NaN\n"
    )
    assert failure_cause(EXIT_1 + "\n" + handling) == "RuntimeError: loss is NaN"


def test_vertex_names_its_replica_differently() -> None:
    message = _replica_failure(
        "plain_py311.txt", "The replica workerpool0-0 exited with a non-zero status of 1."
    )
    failure = split_failure(message)
    assert failure.exit_line.startswith("The replica workerpool0-0 exited")
    assert failure.cause == "KeyError: 'learning_rate'"


def test_details_keep_the_traceback_in_order() -> None:
    failure = split_failure(_replica_failure("plain_py311.txt"))
    details = failure.details.splitlines()
    assert details[0] == "Traceback (most recent call last):"
    assert details[-1] == "KeyError: 'learning_rate'"


def test_pip_failure_gives_pips_error_line() -> None:
    message = (
        "Installing the trainer package failed (pip exited with status 1):\n"
        "Processing /srv/state/packages/trainer-0.1.tar.gz\n"
        "ERROR: Could not find a version that satisfies the requirement tensorflow==9.9 "
        "(from trainer) (from versions: 2.15.0, 2.16.1)\n"
        "ERROR: No matching distribution found for tensorflow==9.9"
    )
    failure = split_failure(message)
    assert failure.cause == "ERROR: No matching distribution found for tensorflow==9.9"
    assert failure.exit_line == ""
    assert failure.details == message


@pytest.mark.parametrize(
    ("tail", "cause"),
    [
        # Nothing on stderr: the exit line is all there is.
        ("", "The replica master 0 exited with a non-zero status of -6 (SIGABRT)."),
        (
            "terminate called after throwing an instance of 'std::runtime_error'\n"
            "  what():  NCCL error: unhandled system error",
            "NCCL error: unhandled system error",
        ),
        (
            "Fatal Python error: Aborted\n\nCurrent thread 0x00007f (most recent call first):\n"
            '  File "task.py", line 3 in <module>',
            "Fatal Python error: Aborted",
        ),
        ("loading shard 3\nsaving checkpoint", "The replica master 0 exited"),
    ],
)
def test_a_signal_exit_without_a_traceback(tail: str, cause: str) -> None:
    head = "The replica master 0 exited with a non-zero status of -6 (SIGABRT)."
    failure = split_failure(head + ("\n" + tail if tail else ""))
    assert failure.cause.startswith(cause)
    assert failure.exit_line == head


def test_a_message_without_any_traceback_is_its_first_line() -> None:
    assert failure_cause("The job has no master replica.") == "The job has no master replica."
    assert failure_cause("Quota exceeded for ml.googleapis.com\nretry later") == (
        "Quota exceeded for ml.googleapis.com"
    )
    assert split_failure("") == split_failure("  \n ")
    assert failure_cause("") == ""


def test_the_list_row_shows_the_cause() -> None:
    row = JobRow.from_job(
        {
            "jobId": "census_20261122_175721",
            "state": "FAILED",
            "errorMessage": _replica_failure("plain_py311.txt"),
        }
    )
    assert row.error == "KeyError: 'learning_rate'"
    assert "keyerror: 'learning_rate'" in row.haystack  # the filter finds what it shows
