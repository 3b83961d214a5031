"""LogLine: ordering key, parsed time, and the short replica tags of the merged view."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tui_app.model.logs.log_line import LogLine, task_tag
from tui_app.model.logs.severity import SEVERITIES


def _line(timestamp: str, insert_id: str = "000000000000000001") -> LogLine:
    return LogLine(timestamp, insert_id, "master-replica-0", SEVERITIES["INFO"], "hello")


def test_key_orders_by_time_then_insert_id() -> None:
    lines = [
        _line("2026-11-22T09:30:01.000000Z", "2"),
        _line("2026-11-22T09:30:00.500000Z", "9"),
        _line("2026-11-22T09:30:01.000000Z", "1"),
    ]
    ordered = sorted(lines, key=lambda line: line.key)
    assert [line.key for line in ordered] == [
        ("2026-11-22T09:30:00.500000Z", "9"),
        ("2026-11-22T09:30:01.000000Z", "1"),
        ("2026-11-22T09:30:01.000000Z", "2"),
    ]
    # Equal keys are the same entry (a reconnect's duplicate), whatever else differs.
    assert {line.key for line in [*lines, _line("2026-11-22T09:30:01.000000Z", "1")]} == {
        line.key for line in lines
    }


def test_when_parses_rfc3339_utc() -> None:
    assert _line("2026-11-22T09:30:00.123456Z").when() == datetime(
        2026, 11, 22, 9, 30, 0, 123456, tzinfo=UTC
    )
    # Cloud Logging's nanoseconds and whole seconds parse too.
    assert _line("2026-11-22T09:30:00.123456789Z").when().microsecond == 123456
    assert _line("2026-11-22T09:30:00Z").when() == datetime(2026, 11, 22, 9, 30, tzinfo=UTC)
    with pytest.raises(ValueError):
        _line("yesterday").when()


def test_line_is_immutable_and_has_no_dict() -> None:
    line = _line("2026-11-22T09:30:00.000000Z")
    with pytest.raises(AttributeError):
        line.text = "changed"  # type: ignore[misc]
    assert not hasattr(line, "__dict__")
    assert line.trial_id is None


def test_equal_lines_hash_alike_and_differ_by_any_field() -> None:
    a = _line("2026-11-22T09:30:00.000000Z")
    assert a == _line("2026-11-22T09:30:00.000000Z")
    assert len({a, _line("2026-11-22T09:30:00.000000Z")}) == 1
    assert a != a._replace(severity=500)
    assert a != a._replace(trial_id="1")


@pytest.mark.parametrize(
    ("task_name", "tag"),
    [
        ("master-replica-0", "M0"),
        ("worker-replica-1", "W1"),
        ("worker-replica-12", "W12"),
        ("ps-replica-0", "P0"),
        ("evaluator-replica-0", "E0"),
        ("chief-replica-0", "C0"),
        ("service", "SVC"),
        ("trainer", "TRA"),
        ("", "?"),
        ("\x1b[2J", "?"),
    ],
)
def test_task_tags(task_name: str, tag: str) -> None:
    assert task_tag(task_name) == tag
