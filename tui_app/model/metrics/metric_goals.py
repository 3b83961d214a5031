"""Small helpers for a tuning job's trials: which trial is best, and a one-line curve per trial.

A trials table shows each trial's final metric and a sparkline of its history, and marks the
best. A diverged trial reports NaN or inf as its metric; such a value must never be marked best,
however the comparison happens to order it, and its curve must show where it went wrong.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np

__all__ = ["SPARK_BLOCKS", "SPARK_NONFINITE", "Goal", "best_trial", "ranked_trials", "sparkline"]

Goal = Literal["MAXIMIZE", "MINIMIZE"]

SPARK_BLOCKS = "▁▂▃▄▅▆▇█"
SPARK_NONFINITE = "×"
_FLAT = SPARK_BLOCKS[3]
"""A series with no change is drawn mid-height: at the bottom it would read as "low"."""


def best_trial(finals: Mapping[str, float], goal: Goal) -> str | None:
    """The trial id with the best final value for ``goal``; None if no value is finite.

    Ties go to the lower trial id: numerically when ids are numbers (ml v1 numbers its trials
    ``1``, ``2``, ... ``10``), and ids that are not numbers after those, by text.
    """
    ranked = ranked_trials(finals, goal)
    return ranked[0] if ranked and math.isfinite(finals[ranked[0]]) else None


def ranked_trials(finals: Mapping[str, float], goal: Goal) -> list[str]:
    """Trial ids best first by ``goal`` (ties by trial order, as ``best_trial``), then those
    whose final value is NaN or inf, by trial order: the order a legend with room for a few
    lines lists them in, so the trials that nearly tie with the best are the ones shown."""
    if goal not in ("MAXIMIZE", "MINIMIZE"):
        raise ValueError(f"goal must be MAXIMIZE or MINIMIZE, not {goal!r}")
    sign = -1.0 if goal == "MAXIMIZE" else 1.0
    finite = sorted(
        (t for t, v in finals.items() if math.isfinite(v)),
        key=lambda t: (sign * finals[t], _trial_order(t)),
    )
    rest = sorted((t for t, v in finals.items() if not math.isfinite(v)), key=_trial_order)
    return finite + rest


def _trial_order(trial: str) -> tuple[int, int, str]:
    return (0, int(trial), trial) if trial.isdecimal() else (1, 0, trial)


def sparkline(values: Sequence[float], width: int) -> str:
    """``values`` as at most ``width`` block characters, lowest value ``▁``, highest ``█``.

    More values than ``width`` are averaged per column (columns split the values evenly). A
    column holding any NaN or inf is ``×``: a trial that diverged shows where. A series without
    change is a flat line at mid-height; no values (or no width) is ``""``.
    """
    if width <= 0 or not len(values):
        return ""
    data = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(data)
    if len(data) <= width:
        means, bad = data, ~finite
    else:
        starts = (np.arange(width) * len(data)) // width
        counts = np.diff(np.append(starts, len(data)))
        bad = np.add.reduceat(~finite, starts) > 0
        means = np.add.reduceat(np.where(finite, data, 0.0), starts) / counts
    shown = means[~bad]
    if not len(shown):
        return SPARK_NONFINITE * len(means)
    low, high = float(shown.min()), float(shown.max())
    chars: list[str] = []
    top = len(SPARK_BLOCKS) - 1
    # Halved so that a range as wide as the floats themselves does not overflow to inf.
    half_span = high / 2 - low / 2
    for mean, is_bad in zip(means.tolist(), bad.tolist(), strict=True):
        if is_bad:
            chars.append(SPARK_NONFINITE)
        elif high == low:
            chars.append(_FLAT)
        else:
            chars.append(SPARK_BLOCKS[round((mean / 2 - low / 2) / half_span * top)])
    return "".join(chars)
