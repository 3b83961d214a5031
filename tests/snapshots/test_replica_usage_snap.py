"""How the per-replica CPU and memory sparklines look, from fixed samples (issue 6).

The widget is fed directly: no service, no clock, so the pictures never change between runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll

from tui_app.themes import DEFAULT_THEME, register_themes
from tui_app.model.views.replica_usage import ReplicaSamples, UsageSample
from tui_app.widgets.replica_usage import ReplicaUsage

START = datetime(2026, 11, 22, 9, 30, 0, tzinfo=UTC)
MiB = 1024 * 1024
SIZES = [(80, 24), (120, 40)]
SnapCompare = Callable[..., bool]


def _series(
    task: str, cpu: Callable[[int], float], mem: Callable[[int], float], first: int = 0
) -> ReplicaSamples:
    """120 samples 2 s apart (from sample ``first`` on)."""
    samples = [
        UsageSample(START + timedelta(seconds=2 * i), cpu(i), int(mem(i)), cpu(i))
        for i in range(first, 120)
    ]
    return ReplicaSamples(task, samples)


def _steady_worker(n: int) -> ReplicaSamples:
    def cpu(i: int) -> float:
        return 40.0 + 10 * n + (i % (n + 2)) * 5

    def mem(i: int) -> float:
        return (300 + 25 * n + i) * MiB

    return _series(f"worker-replica-{n}", cpu, mem)


def replicas() -> list[ReplicaSamples]:
    return [
        # Warms up, then trains on almost two cores with a dip at each checkpoint.
        _series(
            "master-replica-0",
            lambda i: min(180.0, 3.0 * i) * (0.4 if i % 30 in (14, 15, 16) else 1.0),
            lambda i: (40 + min(i, 60) * 3) * MiB,
        ),
        _series(
            "worker-replica-0",
            lambda i: 90 + 8 * math.sin(i / 5),
            lambda i: (120 + 30 * math.sin(i / 20)) * MiB,
        ),
        _series(
            "worker-replica-1",
            lambda i: 95 + 5 * math.cos(i / 7),
            lambda i: (118 + 20 * math.cos(i / 15)) * MiB,
        ),
        # Started late (its first samples are missing), then quickly busy.
        _series("worker-replica-2", lambda i: 70.0, lambda i: 2.2 * 1024 * MiB, first=60),
        # A bigger cluster: enough rows to scroll at 80x24.
        *(_steady_worker(n) for n in range(3, 10)),
        # Mostly idle: flat along the bottom of a scale shared with the busy replicas.
        _series("ps-replica-0", lambda i: 4.0 + (i % 3), lambda i: 25 * MiB),
        ReplicaSamples("evaluator-replica-0", []),
    ]


class UsageSnapApp(App[None]):
    """The usage section in a scrolling pane, as the describe screen holds it (app theme)."""

    CSS = "VerticalScroll { padding: 0 1; }"

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield ReplicaUsage()

    def on_mount(self) -> None:
        register_themes(self)
        self.theme = DEFAULT_THEME
        self.query_one(ReplicaUsage).show(replicas(), interval=2.0)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_replica_usage(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    """The reviewer should see:

    - a bold underlined "Resource usage" title and a dim caption ending "sampled every 2 s";
    - one two-line row per replica: its name, then "CPU" and "RSS" lines, each a sparkline
      across the width and figures on the right;
    - master-replica-0's CPU ramping up to full height (dips show at 120x40), "180% (peak
      180%)", its RSS
      ramping up then flat, "220 MiB (peak 220 MiB)";
    - the workers' CPU high (90-100% of a 180% scale: about half height) and wavy, their RSS
      waves on their own scales;
    - worker-replica-2 at zero for the first half (it started late), then a step: CPU "70%",
      RSS full height "2.2 GiB (peak 2.2 GiB)";
    - worker-replica-3 to -9 with growing RSS ramps and mid-height CPU;
    - ps-replica-0's CPU flat along the bottom ("6% (peak 6%)"), its RSS full ("25 MiB");
    - evaluator-replica-0 with "no samples yet" (at 80x24 below the fold: the pane scrolls,
      with a scrollbar on the right).
    """
    assert snap_compare(UsageSnapApp(), terminal_size=size)
