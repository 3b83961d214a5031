"""Reading ``entries:follow`` rows into lines (``log_stream._row_lines``): both row formats."""

from __future__ import annotations

from datetime import datetime

import pytest

from tui_app.api.log_stream import _row_lines


def _micros(text: str) -> int:
    when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return int(when.timestamp()) * 1_000_000 + when.microsecond


def test_numeric_rows_format_like_the_text_ones_across_second_boundaries() -> None:
    stamps = [
        "2026-11-27T03:10:24.999999Z",
        "2026-11-27T03:10:25.000000Z",
        "2026-11-27T03:10:25.000001Z",
        "2026-11-27T03:10:24.500000Z",  # back a second: the date is not reused
        "1970-01-01T00:00:00.000000Z",
        "2026-12-31T23:59:59.999999Z",
    ]
    numeric = [
        [i, _micros(t), "worker-replica-1", None, 200, f"m{i}"] for i, t in enumerate(stamps)
    ]
    text = [
        [f"{i:018d}", t[:-1] + "000Z", "worker-replica-1", None, 200, f"m{i}"]
        for i, t in enumerate(stamps)
    ]
    lines = _row_lines(numeric)
    assert lines == _row_lines(text)
    assert [ln.timestamp for ln in lines] == [t[:-1] + "000Z" for t in stamps]
    assert lines[1].insert_id == "000000000000000001"


@pytest.mark.parametrize(
    "row",
    [
        [-1, 1_795_000_000_000_000, "m", None, 200, "x"],  # a negative row id
        [1, -1, "m", None, 200, "x"],  # before the epoch
        [1, 10**20, "m", None, 200, "x"],  # past year 9999
        [1, "yesterday", "m", None, 200, "x"],
        [1, 1_795_000_000_000_000, "m", None, 200],  # a field short
    ],
)
def test_a_malformed_numeric_row_is_a_value_error(row: list[object]) -> None:
    """The stream turns ValueError (and TypeError) into "a malformed answer", never a crash."""
    with pytest.raises((ValueError, TypeError)):
        _row_lines([row])
