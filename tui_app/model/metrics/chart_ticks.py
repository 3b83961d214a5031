"""Round tick values and short labels for the metrics charts' axes (no Textual here).

The plot library places its own ticks at equal fractions of the range (``0.0781``, ``0.3142``),
which a reader cannot compare across charts; these are the values people write on an axis by
hand: 1, 2 or 5 times a power of ten for steps and values, powers of ten on a log axis, and whole
seconds, minutes or hours for time. Labels stay short because a chart at 80 columns has room for
five or six of them: ``1.2k`` steps, ``14:05:30`` wall time, ``1m30s`` since the start.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from datetime import datetime, tzinfo

from tui_app.model.metrics.metric_series import XAxis

X_AXES: tuple[XAxis, ...] = ("step", "wall", "relative")
"""What the x axis counts, in the order ``x`` cycles through: the training step, the wall
clock (local time), the time since the series' first point (TensorBoard's "relative")."""

TIME_STEPS: tuple[int, ...] = (
    1, 2, 5, 10, 15, 30,
    60, 120, 300, 600, 900, 1800,
    3600, 7200, 10800, 21600, 43200,
    86400, 172800, 604800,
)  # fmt: skip
"""Tick spacings in seconds a clock reader expects: 1 s to a week, never 7 s or 40 min."""


def _count(low: float, high: float, step: float) -> int:
    """How many multiples of ``step`` lie in ``[low, high]``."""
    return math.floor(high / step + 1e-9) - math.ceil(low / step - 1e-9) + 1


def nice_step(low: float, high: float, max_ticks: int) -> float:
    """The smallest of 1, 2, 5 times a power of ten with at most ``max_ticks`` multiples in
    ``[low, high]``; the next smaller one when that leaves fewer than two (an axis with one
    label gives no scale). 1 for an empty or flat range."""
    span = high - low
    if not math.isfinite(span) or span <= 0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(span / max(1, max_ticks)))
    steps = [f * power * 10.0**k for k in range(-1, 4) for f in (1.0, 2.0, 5.0)]
    for i, step in enumerate(steps):
        if _count(low, high, step) <= max(1, max_ticks):
            if _count(low, high, step) < 2 and i > 0:
                return steps[i - 1]
            return step
    return steps[-1]


def _trivial_ticks(low: float, high: float) -> list[float] | None:
    """The ticks of a range with nothing to divide, the same on a linear and a time axis: none
    when an end is not finite, one at its value when flat; None for a range to divide."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return []
    return [low] if high == low else None


def nice_ticks(low: float, high: float, max_ticks: int = 5) -> list[float]:
    """Multiples of ``nice_step`` inside ``[low, high]`` (both ends included when on a tick).

    A flat range (``low == high``) gets one tick, at its value.
    """
    trivial = _trivial_ticks(low, high)
    if trivial is not None:
        return trivial
    if high < low:
        low, high = high, low
    step = nice_step(low, high, max_ticks)
    first = math.ceil(low / step - 1e-9)
    last = math.floor(high / step + 1e-9)
    # Rounded to the step's decimals: 0.1 * 3 is 0.30000000000000004 otherwise.
    digits = max(0, -math.floor(math.log10(step)) + 1)
    return [round(i * step, digits) for i in range(first, last + 1)]


def log_ticks(low: float, high: float, max_ticks: int = 5) -> list[float]:
    """Ticks for a log axis over ``[low, high]`` (both > 0): 1, 2 and 5 times the powers of
    ten when they fit in ``max_ticks``, else the powers of ten (every other one or sparser when
    there are many decades).

    A range with fewer than two of those (0.2-0.5) falls back to round linear ticks.
    """
    if not (low > 0 and high > 0 and math.isfinite(low) and math.isfinite(high)):
        return []
    if high < low:
        low, high = high, low
    lo_exp = math.floor(math.log10(low) + 1e-9)
    hi_exp = math.floor(math.log10(high) + 1e-9)
    decades = [10.0**e for e in range(lo_exp, hi_exp + 1) if low <= 10.0**e * (1 + 1e-9)]
    decades = [d for d in decades if d <= high * (1 + 1e-9)]
    fine = [10.0**e * f for e in range(lo_exp, hi_exp + 1) for f in (1.0, 2.0, 5.0)]
    fine = [t for t in fine if low * (1 - 1e-9) <= t <= high * (1 + 1e-9)]
    if len(decades) < 2 or len(fine) <= max_ticks:
        # 1, 2 and 5 times the powers of ten, where they fit; failing two of those (0.2-0.5),
        # round linear ticks.
        return (
            fine if len(fine) >= 2 and len(fine) <= max_ticks else nice_ticks(low, high, max_ticks)
        )
    every = math.ceil(len(decades) / max_ticks)
    return decades[::every]


def time_ticks(low: float, high: float, max_ticks: int = 5, offset: float = 0.0) -> list[float]:
    """Seconds at whole ``TIME_STEPS`` inside ``[low, high]``.

    ``offset`` is the local time zone's offset from UTC in seconds, for wall time: ticks fall on
    whole local minutes and hours (``14:00:00``), not on UTC ones shifted by the zone.
    """
    trivial = _trivial_ticks(low, high)
    if trivial is not None:
        return trivial
    if high < low:
        low, high = high, low
    most = max(1, max_ticks)
    step = next((s for s in TIME_STEPS if _count(low + offset, high + offset, s) <= most), None)
    if step is None:  # longer than TIME_STEPS covers: whole weeks
        week = TIME_STEPS[-1]
        step = week * math.ceil((high - low) / most / week)
    first = math.ceil((low + offset) / step - 1e-9)
    last = math.floor((high + offset) / step + 1e-9)
    return [i * step - offset for i in range(first, last + 1)]


def format_step(step: float) -> str:
    """``950``, ``1.2k``, ``12k``, ``3M``, ``1.5G``: three significant digits at most."""
    if not math.isfinite(step):
        return str(step)
    sign = "-" if step < 0 else ""
    value = abs(step)
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if value >= size:
            return sign + _trimmed(value / size) + unit
    if value == int(value):
        return sign + str(int(value))
    return sign + _trimmed(value)


def _trimmed(value: float) -> str:
    """``1.2``, ``12``, ``120``, ``1.25``: three significant digits without trailing zeros."""
    text = f"{value:.3g}"
    if "e" in text:  # 1000 after rounding 999.9: keep it plain
        text = f"{value:.0f}"
    return text


def format_wall(seconds: float, tz: tzinfo | None = None) -> str:
    """``14:05:30``: the wall clock in ``tz`` (the local zone when None)."""
    return datetime.fromtimestamp(seconds, tz).strftime("%H:%M:%S")


def format_relative(seconds: float) -> str:
    """``0s``, ``45s``, ``1m30s``, ``2h05m``, ``3d4h``: the two largest units."""
    if not math.isfinite(seconds):
        return str(seconds)
    sign = "-" if seconds < 0 else ""
    total = round(abs(seconds))
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        text = f"{days}d{hours}h" if hours else f"{days}d"
    elif hours:
        text = f"{hours}h{minutes:02d}m" if minutes else f"{hours}h"
    elif minutes:
        text = f"{minutes}m{secs:02d}s" if secs else f"{minutes}m"
    else:
        text = f"{secs}s"
    return sign + text


def format_value(value: float) -> str:
    """A metric value in at most about 7 characters: ``0.0821``, ``1.2e-5``, ``3.142``,
    ``12346``, ``1.2e+7``; ``nan`` and ``inf`` as such."""
    if not math.isfinite(value):
        return str(value)
    if value == 0:
        return "0"
    if 1e4 <= abs(value) < 1e7:  # 12346, not 1.235e+4
        return f"{value:.0f}"
    text = f"{value:.4g}"
    return text.replace("e-0", "e-").replace("e+0", "e+")


def tick_labels(ticks: Sequence[float]) -> list[str]:
    """Labels for value ticks that tell neighbours apart: as many decimals as the spacing
    needs (``0.05 0.10 0.15``), never more than ``format_value`` would write."""
    if len(ticks) < 2:
        return [format_value(t) for t in ticks]
    spacing = min(abs(b - a) for a, b in itertools.pairwise(ticks)) or 1.0
    largest = max(abs(t) for t in ticks)
    if largest >= 1e6 or spacing < 1e-4:
        return [format_value(t) for t in ticks]
    decimals = max(0, -math.floor(math.log10(spacing) + 1e-9))
    if all(t == 0 or abs(t) >= 1 for t in ticks) and spacing >= 1:
        decimals = 0
    return [f"{t:.{decimals}f}" for t in ticks]


def x_ticks(
    axis: XAxis, low: float, high: float, max_ticks: int, tz: tzinfo | None = None
) -> tuple[list[float], list[str]]:
    """The x axis's tick values and labels for ``axis`` over ``[low, high]``.

    Wall time is in epoch seconds; relative time in seconds since the first point.
    """
    if axis == "step":
        ticks = nice_ticks(low, high, max_ticks)
        # Steps are whole: a 0.5 step tick on a range of 3 steps says nothing.
        ticks = [t for t in ticks if t == int(t)] or ticks
        return ticks, [format_step(t) for t in ticks]
    if axis == "relative":
        ticks = time_ticks(low, high, max_ticks)
        return ticks, [format_relative(t) for t in ticks]
    offset = 0.0
    if math.isfinite(low):
        utc = datetime.fromtimestamp(low, tz).utcoffset()
        offset = utc.total_seconds() if utc is not None else 0.0
    ticks = time_ticks(low, high, max_ticks, offset)
    return ticks, [format_wall(t, tz) for t in ticks]


def y_ticks(low: float, high: float, max_ticks: int, log: bool) -> tuple[list[float], list[str]]:
    """The y axis's tick values and labels over ``[low, high]``, linear or log."""
    ticks = log_ticks(low, high, max_ticks) if log else nice_ticks(low, high, max_ticks)
    labels = log_labels(ticks) if log else tick_labels(ticks)
    return ticks, labels


def log_labels(ticks: Sequence[float]) -> list[str]:
    """A log axis's labels in one notation: plain while every tick reads short that way
    (``0.01 0.1 1 10``), else all as powers of ten (``1e+3 1e+6 1e+9``, never ``100000``
    beside ``1e+9``)."""
    plain = [format_value(t) for t in ticks]
    if not any("e" in label for label in plain) and all(len(label) <= 5 for label in plain):
        return plain
    out = []
    for t in ticks:
        text = f"{t:.1e}" if t and not _round_mantissa(t) else f"{t:.0e}"
        out.append(text.replace("e+0", "e+").replace("e-0", "e-"))
    return out


def _round_mantissa(value: float) -> bool:
    """Whether ``value`` is a whole number times a power of ten (``2e+5``, not ``2.5e+5``)."""
    mantissa = abs(value) / 10.0 ** math.floor(math.log10(abs(value)))
    return abs(mantissa - round(mantissa)) < 1e-6


def zoom_offer(span: int | None, current: int | None, default: int) -> int:
    """The window of steps ``z`` offers: a round number (1, 2 or 5 times a power of ten) at
    most half of what the chart shows now (the zoom in force, else the steps the runs span),
    so that taking the offer always changes the chart; ``default`` while no step is known."""
    shown = current if current is not None else span
    if shown is None or shown <= 0:
        return default
    target = shown / 2
    if target < 1:
        return 1
    power = 10 ** math.floor(math.log10(target))
    return next(int(f * power) for f in (5, 2, 1) if f * power <= target)
