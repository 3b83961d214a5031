"""The pure parts of the per-replica usage charts: parsing ``:metrics``, history, columns."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tui_app.api.metrics_client import UsageHistory, parse_metrics
from tui_app.widgets.replica_usage import columns, format_bytes, scaled


def _body(*samples: tuple[str, float, str], task: str = "master-replica-0") -> dict[str, object]:
    return {
        "sampleInterval": "2s",
        "replicas": [
            {
                "taskName": task,
                "samples": [
                    {"time": t, "cpuPercent": cpu, "memoryBytes": mem} for t, cpu, mem in samples
                ],
            }
        ],
    }


def test_parse_keeps_what_it_can_read() -> None:
    body = _body(
        ("2026-11-22T09:30:02.000000Z", 50.0, "1048576"),
        ("2026-11-22T09:30:00.000000Z", 10.0, "2048"),
    )
    replicas = body["replicas"]
    assert isinstance(replicas, list)
    replicas[0]["samples"] += [
        {"time": "not a time", "cpuPercent": 1},
        "junk",
        {"time": "2026-11-22T09:30:04.123456789Z", "span": "30s", "cpuPercent": "7",
         "cpuPercentMax": 99.5, "memoryBytes": "x"},
    ]  # fmt: skip
    replicas.append({"taskName": 7})
    metrics = parse_metrics(body)
    [rep] = metrics.replicas
    assert [s.cpu_percent for s in rep.samples] == [10.0, 50.0, 7.0]  # sorted by time
    assert rep.samples[0].time == datetime(2026, 11, 22, 9, 30, tzinfo=UTC)
    assert rep.samples[2].cpu_peak == 99.5 and rep.samples[2].memory_bytes == 0
    assert rep.cpu_peak == 99.5 and rep.memory_peak == 1048576
    assert metrics.interval_seconds == 2.0
    assert parse_metrics(None).replicas == [] and parse_metrics({"sampleInterval": "x"}) is not None


def _state(history: UsageHistory) -> tuple[str | None, bool]:
    """(cursor, needs a full read), read through a call so mypy does not pin them."""
    return history.since, history.needs_full_read


def test_history_appends_newer_reads_and_tracks_the_cursor() -> None:
    history = UsageHistory(cap=3)
    assert _state(history) == (None, True)
    assert history.add(parse_metrics({"replicas": []}), full=True) is False
    first = parse_metrics(_body(("2026-11-22T09:30:00.000000Z", 1.0, "1")))
    assert history.add(first, full=True)
    assert _state(history) == ("2026-11-22T09:30:00.000000Z", False)
    assert not history.add(parse_metrics(_body()), full=False)  # nothing new
    more = parse_metrics(
        _body(("2026-11-22T09:30:02.000000Z", 2.0, "1"), ("2026-11-22T09:30:04.000000Z", 3.0, "1"))
    )
    assert history.add(more, full=False)
    assert _state(history) == ("2026-11-22T09:30:04.000000Z", False)
    [rep] = history.replicas()
    assert [s.cpu_percent for s in rep.samples] == [1.0, 2.0, 3.0]
    rep.samples.clear()  # a copy: the history's own list is untouched
    assert len(history.replicas()[0].samples) == 3
    history.add(parse_metrics(_body(("2026-11-22T09:30:06.000000Z", 4.0, "1"))), full=False)
    assert _state(history)[1]  # over the cap: read the service's merged copy again
    assert history.add(first, full=True)
    assert len(history.replicas()[0].samples) == 1


def test_columns_slice_time_hold_between_points_and_zero_outside() -> None:
    points = [(10.0, 5.0), (12.0, 7.0), (20.0, 1.0)]
    assert columns(points, 0.0, 20.0, 10) == [0, 0, 0, 0, 0, 5.0, 7.0, 7.0, 7.0, 1.0]
    assert columns([(0.0, 1.0), (0.5, 3.0), (10.0, 2.0)], 0.0, 10.0, 2) == [3.0, 2.0]
    assert columns([], 0.0, 1.0, 3) == [0.0, 0.0, 0.0]
    assert columns([(5.0, 4.0)], 5.0, 5.0, 3) == [4.0, 4.0, 4.0]
    assert columns(points, 0.0, 20.0, 0) == []


def test_scaled_pins_the_scale_with_pairs() -> None:
    assert scaled([1.0, 2.0], 100.0) == [100.0, 1.0, 0.0, 2.0]
    assert scaled([150.0], 100.0) == [150.0, 150.0]  # a value above the ceiling raises it
    assert scaled([], 100.0) == []


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (0, "0 B"),
        (900, "900 B"),
        (1536, "1.5 KiB"),
        (212 * 1024 * 1024, "212 MiB"),
        (int(2.25 * 1024**3), "2.2 GiB"),
        (3 * 1024**5, "3072 TiB"),
    ],
)
def test_format_bytes(n: int, text: str) -> None:
    assert format_bytes(n) == text
