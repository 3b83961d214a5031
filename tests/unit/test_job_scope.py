"""Which jobs a log search keeps: the job list's filter and ``z``, applied as the list does."""

from __future__ import annotations

from tui_app.model.filters.job_scope import JobScope
from tui_app.model.filters.list_filter import parse_list_filter
from tui_app.model.views.job_view import JobRow

ROWS = [
    JobRow.from_job({"jobId": "mnist_20261122_083000", "state": "RUNNING"}),
    JobRow.from_job({"jobId": "mnist_20261121_120000", "state": "FAILED"}),
    JobRow.from_job({"jobId": "census_20261122_010000", "state": "FAILED"}),
    JobRow.from_job({"jobId": "census_20261120_010000", "state": "SUCCEEDED"}),
]


def test_an_empty_filter_with_z_off_does_not_narrow() -> None:
    scope = JobScope(parse_list_filter(""))
    assert not scope.narrows
    assert scope.jobs(ROWS) == {r.job_id for r in ROWS}
    assert scope.label() == ""


def test_the_filter_keeps_what_the_list_shows() -> None:
    scope = JobScope(parse_list_filter("mnist state:failed"))
    assert scope.narrows
    assert scope.jobs(ROWS) == {"mnist_20261121_120000"}
    assert scope.label() == "mnist state:failed"


def test_z_keeps_faults_and_joins_the_filter() -> None:
    assert JobScope(parse_list_filter(""), faults_only=True).jobs(ROWS) == {
        "mnist_20261121_120000",
        "census_20261122_010000",
    }
    scope = JobScope(parse_list_filter("census"), faults_only=True)
    assert scope.jobs(ROWS) == {"census_20261122_010000"}
    assert scope.label() == "census · faults"


def test_an_inverted_filter_keeps_the_rest() -> None:
    assert JobScope(parse_list_filter("!mnist")).jobs(ROWS) == {
        "census_20261122_010000",
        "census_20261120_010000",
    }
