"""Round ticks and short labels for the metrics charts' axes (model.chart_ticks)."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tui_app.model.metrics.chart_ticks import (
    format_relative,
    format_step,
    format_value,
    log_ticks,
    nice_ticks,
    tick_labels,
    time_ticks,
    x_ticks,
    y_ticks,
    zoom_offer,
)


def test_ticks_are_one_two_five_times_a_power_of_ten_inside_the_range() -> None:
    assert nice_ticks(0.078, 1.035, 5) == [0.2, 0.4, 0.6, 0.8, 1.0]
    assert nice_ticks(0, 1190, 6) == [0, 200, 400, 600, 800, 1000]
    assert nice_ticks(-3, 3, 5) == [-2, 0, 2]
    # Decimals stay exact: 0.1 * 3 is not 0.30000000000000004 on an axis.
    assert nice_ticks(0.0, 0.35, 4) == [0.0, 0.1, 0.2, 0.3]


def test_an_axis_gets_at_least_two_ticks_when_one_would_fit() -> None:
    # Step 0.5 would leave 0.5 alone on the axis: no scale to read.
    assert nice_ticks(0.08, 0.95, 3) == [0.2, 0.4, 0.6, 0.8]


def test_a_flat_or_broken_range() -> None:
    assert nice_ticks(2.5, 2.5) == [2.5]
    assert nice_ticks(float("nan"), 1.0) == []
    assert nice_ticks(5, 1, 5) == [1, 2, 3, 4, 5]


@given(
    st.floats(-1e9, 1e9, allow_nan=False),
    st.floats(1e-6, 1e9, allow_nan=False),
    st.integers(2, 12),
)
def test_ticks_lie_in_the_range_evenly_spaced(low: float, span: float, most: int) -> None:
    high = low + span
    if high == low:
        return
    ticks = nice_ticks(low, high, most)
    assert ticks == sorted(ticks)
    tolerance = span * 1e-6 + max(abs(low), abs(high)) * 1e-12  # float resolution
    assert all(low - tolerance <= t <= high + tolerance for t in ticks)
    assert len(ticks) <= 2 * most + 1
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    if gaps:
        assert max(gaps) - min(gaps) <= 1e-6 * max(abs(low), abs(high), 1.0)


def test_log_ticks_are_decades_with_two_and_five_between_when_there_is_room() -> None:
    assert log_ticks(0.01, 10, 12) == [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10]
    assert log_ticks(1e-5, 10, 5) == [1e-5, 1e-3, 0.1, 10]
    # Fewer than two powers of ten inside: their 2 and 5 multiples; fewer than two of those,
    # round linear ticks.
    assert log_ticks(0.1006, 2.4, 5) == [0.2, 0.5, 1, 2]
    assert log_ticks(0.2, 0.5, 4) == [0.2, 0.5]
    assert log_ticks(0.21, 0.45, 4) == [0.3, 0.4]
    assert log_ticks(0, 1, 4) == []


def test_time_ticks_fall_on_whole_minutes_and_local_hours() -> None:
    assert time_ticks(0, 95, 5) == [0, 30, 60, 90]
    start = datetime(2026, 11, 22, 8, 26, 40, tzinfo=UTC).timestamp()
    _, labels = x_ticks("wall", start, start + 3700, 5, UTC)
    assert labels == ["08:30:00", "08:45:00", "09:00:00", "09:15:00"]
    # In a zone half an hour off UTC, ticks fall on its own quarter hours.
    india = timezone(timedelta(hours=5, minutes=30))
    _, labels = x_ticks("wall", start, start + 3700, 5, india)
    assert labels == ["14:00:00", "14:15:00", "14:30:00", "14:45:00"]


def test_step_and_relative_labels_are_short() -> None:
    assert [format_step(s) for s in (0, 950, 1200, 12_000, 3_000_000, 1.5e9)] == [
        "0",
        "950",
        "1.2k",
        "12k",
        "3M",
        "1.5G",
    ]
    assert x_ticks("step", 0, 3, 6)[1] == ["0", "1", "2", "3"]
    assert [format_relative(s) for s in (0, 45, 90, 7500, 7200, 97200)] == [
        "0s",
        "45s",
        "1m30s",
        "2h05m",
        "2h",
        "1d3h",
    ]
    assert x_ticks("relative", 0, 95, 5)[1] == ["0s", "30s", "1m", "1m30s"]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.08214, "0.08214"),
        (1.2e-5, "1.2e-5"),
        (12345.6, "12346"),
        (3e7, "3e+7"),
        (0, "0"),
        (float("nan"), "nan"),
        (float("-inf"), "-inf"),
    ],
)
def test_values_stay_short(value: float, text: str) -> None:
    assert format_value(value) == text


def test_tick_labels_have_the_decimals_their_spacing_needs() -> None:
    assert tick_labels([0.05, 0.1, 0.15]) == ["0.05", "0.10", "0.15"]
    assert tick_labels([0, 500, 1000]) == ["0", "500", "1000"]
    assert y_ticks(0.078, 1.035, 5, log=False)[1] == ["0.2", "0.4", "0.6", "0.8", "1.0"]
    assert y_ticks(0.078, 1.035, 5, log=True)[1] == ["0.1", "0.2", "0.5", "1"]


def test_zoom_offers_a_round_window_that_always_shows_less() -> None:
    assert zoom_offer(600, None, 1000) == 200  # a demo job's 600 steps: 300 at most
    assert zoom_offer(100_000, None, 1000) == 50_000
    assert zoom_offer(None, None, 1000) == 1000  # nothing read yet
    assert zoom_offer(600, 200, 1000) == 100  # zoomed already: half of that
    assert zoom_offer(600, 50, 1000) == 20
    assert zoom_offer(1, None, 1000) == 1
    for span in range(1, 5000, 7):
        assert 1 <= zoom_offer(span, None, 1000) <= max(1, span / 2)


def test_a_log_axis_labels_its_ticks_in_one_notation() -> None:
    """Issue 40: log y mixed ``100000`` and ``1e+9`` on one axis."""
    _, labels = y_ticks(1, 1e9, 6, True)
    assert labels == ["1e+0", "1e+2", "1e+4", "1e+6", "1e+8"]
    _, labels = y_ticks(0.01, 10, 6, True)
    assert labels == ["0.01", "0.1", "1", "10"]
    for low, high in ((1, 1e5), (1e-6, 1), (3, 4e11), (0.5, 2e7)):
        _, labels = y_ticks(low, high, 6, True)
        assert len({"e" in label for label in labels}) == 1, labels
