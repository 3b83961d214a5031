"""``trainingOutput.consumedMLUnits``: the tier table's ML units per hour times the hours run.

The price of a job per hour is ``tui_app.model.jobs.cluster.ml_units_per_hour`` (the scale tier's
published figure, or for CUSTOM the sum over its replicas' machine types and accelerators). A job
consumes units only while it holds its machines: from startTime (RUNNING) until endTime, or until
now while it still runs or is being cancelled.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tui_app.model.jobs.cluster import ml_units_per_hour

ML_UNITS_DECIMALS = 4


def consumed_ml_units(
    training_input: Mapping[str, Any], started: float | None, ended: float
) -> float:
    """ML units used between ``started`` and ``ended`` (seconds since the epoch); 0 when the
    job never started."""
    if started is None:
        return 0.0
    hours = max(0.0, ended - started) / 3600
    return round(ml_units_per_hour(training_input) * hours, ML_UNITS_DECIMALS)
