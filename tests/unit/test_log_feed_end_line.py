"""A failed job's logs end with its cause (``log_feed.failed_end_line``), as the list shows it.

After a Ray node died, the logs view ended with the service's "Job failed." while the list and
the detail said which replica was lost on which node; on Vertex AI a failed job's log has no
such line at all. tests/pilot/test_logs_screen.py checks the pane itself.
"""

from __future__ import annotations

from tui_app.api.log_feed import END_INSERT_ID, failed_end_line
from tui_app.model.views.job_view import JobRow

LOST = (
    "The replica worker-replica-0 was lost: its node 127.0.0.3 (Ray node 2ae69e1b5c0d) "
    "stopped answering."
)
TRACEBACK = (
    "The replica master 0 exited with a non-zero status of 1.\n"
    "Traceback (most recent call last):\n"
    '  File "task.py", line 3, in <module>\n'
    "ValueError: loss is NaN"
)
END = "2026-01-02T03:04:05.123456Z"


def job(state: str = "FAILED", message: str | None = LOST, **more: str) -> dict[str, str]:
    out = {"jobId": "j", "state": state, "endTime": END, **more}
    if message is not None:
        out["errorMessage"] = message
    return out


def test_the_end_line_says_the_cause_the_list_shows() -> None:
    for message in (LOST, TRACEBACK):
        line = failed_end_line(job(message=message), None)
        assert line is not None
        assert line.text == f"Job failed: {JobRow.from_job(job(message=message)).error}"
        assert line.task_name == "service" and line.severity == 500
        assert line.insert_id == END_INSERT_ID
    lost = failed_end_line(job(message=LOST), None)
    assert lost is not None and lost.text == f"Job failed: {LOST}"  # one line: all of it
    traceback = failed_end_line(job(message=TRACEBACK), None)
    assert traceback is not None and traceback.text == "Job failed: ValueError: loss is NaN"


def test_only_a_failed_job_with_a_message_gets_one() -> None:
    assert failed_end_line(job("SUCCEEDED", None), None) is None
    assert failed_end_line(job("CANCELLED", "Job cancelled by the user."), None) is None
    assert failed_end_line(job(message=None), None) is None
    assert failed_end_line(job(message="  \n "), None) is None


def test_it_sorts_after_the_last_line() -> None:
    at_end = failed_end_line(job(), None)
    assert at_end is not None and at_end.timestamp == "2026-01-02T03:04:05.123456000Z"
    later = ("2026-01-02T03:04:06.000000000Z", "42")
    after = failed_end_line(job(), later)
    assert after is not None and after.key > later
    same = ("2026-01-02T03:04:05.123456000Z", "zz-99")
    tied = failed_end_line(job(), same)
    assert tied is not None and tied.key > same
    no_end = failed_end_line({"state": "FAILED", "errorMessage": LOST}, later)
    assert no_end is not None and no_end.key > later
