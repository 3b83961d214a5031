"""The readers of untrusted JSON: each answers its type or nothing, and none raises (issue 16).

The cases are the ones the readers' earlier copies in describe, trials, job_view and
vertex_translate met: good values, wrong types, missing fields, ``true`` where a number belongs,
and numbers written as strings (int64 fields travel so).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from tui_app.model.jobs.wire import (
    as_float,
    as_int,
    as_list,
    as_mapping,
    as_number,
    as_str,
    parse_time,
)

MISSING: Any = None  # what ``job.get("field")`` gives for a field that is not there


# -- as_mapping -------------------------------------------------------------------------------


def test_as_mapping_returns_the_mapping_itself() -> None:
    job = {"trainingInput": {"scaleTier": "BASIC"}}
    assert as_mapping(job) is job


@pytest.mark.parametrize("value", [MISSING, [], [("a", 1)], "abc", 3, True, 1.5])
def test_as_mapping_reads_anything_else_as_empty(value: object) -> None:
    assert as_mapping(value) == {}


def test_as_mapping_chains_through_missing_levels() -> None:
    assert as_mapping(as_mapping({"a": "not a mapping"}).get("a")).get("b") is None


# -- as_list ----------------------------------------------------------------------------------


def test_as_list_returns_the_list_itself() -> None:
    trials = [{"trialId": "1"}]
    assert as_list(trials) is trials


@pytest.mark.parametrize("value", [MISSING, {}, {"a": 1}, "abc", 3, True, (1, 2)])
def test_as_list_reads_anything_else_as_empty(value: object) -> None:
    assert as_list(value) == []


def test_as_list_takes_tuples_only_when_asked() -> None:
    assert as_list((1, 2)) == []
    copied = as_list((1, 2), tuples=True)
    assert copied == [1, 2] and isinstance(copied, list)
    assert as_list("ab", tuples=True) == []


# -- as_str -----------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["n1-standard-4", ""])
def test_as_str_keeps_strings(value: str) -> None:
    assert as_str(value) == value


@pytest.mark.parametrize("value", [MISSING, 3, 3.0, True, ["a"], {"a": "b"}])
def test_as_str_refuses_other_types(value: object) -> None:
    assert as_str(value) is None


# -- as_int -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (3, 3),
        (-2, -2),
        (0, 0),
        ("3", 3),  # int64 fields travel as strings
        (" 12 ", 12),
        ("-4", -4),
        ("007", 7),
        (10**20, 10**20),
        (str(10**20), 10**20),
    ],
)
def test_as_int_reads_integers_and_decimal_strings(value: object, expected: int) -> None:
    assert as_int(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        MISSING,
        True,  # JSON booleans are not numbers
        False,
        3.0,  # ml v1 never sends an integer as a float
        3.5,
        "",
        "abc",
        "3.0",
        "1e3",
        "+3",  # Python's int() takes these; the API never writes them
        "1_000",
        "--3",  # the old copies in describe and trials raised on these
        "²",
        "9" * 5000,  # more digits than int() converts
        [3],
        {"n": 3},
    ],
)
def test_as_int_refuses_anything_else(value: object) -> None:
    assert as_int(value) is None


def test_as_int_takes_whole_floats_only_when_asked() -> None:
    # Vertex AI sends some integers as JSON numbers such as 3.0.
    assert as_int(3.0, whole_floats=True) == 3
    assert as_int(-2.0, whole_floats=True) == -2
    assert as_int(3.5, whole_floats=True) is None
    assert as_int(math.inf, whole_floats=True) is None
    assert as_int(math.nan, whole_floats=True) is None
    assert as_int(True, whole_floats=True) is None
    assert as_int("3", whole_floats=True) == 3


# -- as_float ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.25, 0.25),
        (3, 3.0),
        ("0.5", 0.5),  # a double may arrive as a string
        ("1e-3", 0.001),
        (" 2 ", 2.0),
        ("Infinity", math.inf),
        ("-Infinity", -math.inf),
    ],
)
def test_as_float_reads_numbers_and_numeric_strings(value: object, expected: float) -> None:
    assert as_float(value) == expected


@pytest.mark.parametrize("value", [MISSING, True, False, "", "abc", [1.0], {"v": 1.0}, 10**400])
def test_as_float_refuses_anything_else(value: object) -> None:
    assert as_float(value) is None


@pytest.mark.parametrize("value", [math.nan, "NaN", "nan"])
def test_as_float_reads_nan_as_nothing_unless_kept(value: object) -> None:
    assert as_float(value) is None
    kept = as_float(value, keep_nan=True)
    assert kept is not None and math.isnan(kept)


# -- as_number --------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "expected"), [(3, 3.0), (0.1, 0.1), (-2.5, -2.5)])
def test_as_number_reads_json_numbers(value: object, expected: float) -> None:
    number = as_number(value)
    assert number == expected and isinstance(number, float)


@pytest.mark.parametrize("value", [MISSING, True, False, "0.1", "3", [1], {"v": 1}])
def test_as_number_refuses_strings_and_booleans(value: object) -> None:
    # A config's minValue written as "0.1" is a mistake to report, not a number to read.
    assert as_number(value) is None


# -- parse_time -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-11-22T08:30:00Z", datetime(2026, 11, 22, 8, 30, tzinfo=UTC)),
        ("2026-11-22T08:30:00z", datetime(2026, 11, 22, 8, 30, tzinfo=UTC)),
        (" 2026-11-22T08:30:00Z ", datetime(2026, 11, 22, 8, 30, tzinfo=UTC)),
        # nanoseconds, as the API sends them: the digits past microseconds are dropped
        ("2026-11-22T08:30:00.123456789Z", datetime(2026, 11, 22, 8, 30, 0, 123456, tzinfo=UTC)),
        ("2026-11-22T08:30:00.5Z", datetime(2026, 11, 22, 8, 30, 0, 500000, tzinfo=UTC)),
        # no offset: UTC, which is what the API means
        ("2026-11-22T08:30:00", datetime(2026, 11, 22, 8, 30, tzinfo=UTC)),
    ],
)
def test_parse_time_reads_rfc3339(value: str, expected: datetime) -> None:
    moment = parse_time(value)
    assert moment == expected and moment is not None and moment.tzinfo is not None


def test_parse_time_keeps_an_offset() -> None:
    moment = parse_time("2026-11-22T08:30:00.5+01:00")
    assert moment is not None
    assert moment.utcoffset() == timedelta(hours=1)
    assert moment == datetime(2026, 11, 22, 7, 30, 0, 500000, tzinfo=UTC)
    assert moment.tzinfo == timezone(timedelta(hours=1))


@pytest.mark.parametrize(
    "value", [MISSING, "", "   ", "not a time", "2026-13-01T00:00:00Z", 0, True]
)
def test_parse_time_refuses_anything_else(value: object) -> None:
    assert parse_time(value) is None


# -- the views still agree ----------------------------------------------------------------------


def test_list_and_detail_read_the_queue_position_alike() -> None:
    """The job list and the detail read ``jobPosition`` with the one reader, so a value one of
    them shows is one the other shows too (the list once took ``"+3"`` and ``"1_000"``)."""
    from tui_app.model.views.describe import summarize
    from tui_app.model.views.job_view import JobRow

    now = datetime(2026, 11, 22, tzinfo=UTC)
    for raw, expected in (("3", 3), ("+3", None), ("1_000", None), (True, None), (2, 2)):
        job = {"jobId": "j", "state": "QUEUED", "jobPosition": raw}
        assert JobRow.from_job(job).position == expected
        rows = dict(summarize(job, now)[0].rows)
        assert rows.get("Queue position") == (str(expected) if expected else None)
