"""``trainingInput.scheduling`` time limits: how long a job may wait and run (pure).

The platform cancelled a job still QUEUED or PREPARING ``maxWaitTime`` after it was created (no
limit by default), and one still RUNNING ``maxRunningTime`` after it started (seven days by
default); the two never overlap (ml v1 discovery document, ``GoogleCloudMlV1__Scheduling``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tui_app.model.jobs.job_spec import duration_seconds

DEFAULT_MAX_RUNNING_TIME = "604800s"
"""Seven days: maxRunningTime when the job sets none."""


@dataclass(frozen=True)
class TimeLimit:
    """One scheduling limit of a job, and what it means here."""

    field: str
    """``maxWaitTime`` or ``maxRunningTime``."""
    written: str
    """The duration as the job wrote it (or the default), e.g. ``1800s``."""
    seconds: float
    """How long it lasts on this service."""
    default: bool = False

    def message(self) -> str:
        """The job's errorMessage once the limit ran out: which limit, and its value."""
        value = self.written + (", the default" if self.default else "")
        if abs(self.seconds - duration_seconds(self.written)) > 1e-9:
            value += f"; {self.seconds:g}s on this service"
        if self.field == "maxWaitTime":
            return (
                f"Job cancelled: it did not start running within scheduling.maxWaitTime ({value})."
            )
        return f"Job cancelled: it was still running after scheduling.maxRunningTime ({value})."


def _scheduling(training_input: Mapping[str, Any]) -> Mapping[str, Any]:
    scheduling = training_input.get("scheduling")
    return scheduling if isinstance(scheduling, Mapping) else {}


def wait_limit(training_input: Mapping[str, Any], scale: float = 1.0) -> TimeLimit | None:
    """The maxWaitTime of a (validated) trainingInput, times ``scale``; None without one.

    ``scale`` exists because the platform's minimum is 1800s: a service started with a small
    scale lets a test or a demo see the limit run out.
    """
    written = _scheduling(training_input).get("maxWaitTime")
    if not written:
        return None
    return TimeLimit("maxWaitTime", written, duration_seconds(written) * scale)


def running_limit(training_input: Mapping[str, Any]) -> TimeLimit:
    """The maxRunningTime of a (validated) trainingInput, or the seven-day default."""
    written = _scheduling(training_input).get("maxRunningTime")
    if not written:
        return TimeLimit(
            "maxRunningTime",
            DEFAULT_MAX_RUNNING_TIME,
            duration_seconds(DEFAULT_MAX_RUNNING_TIME),
            default=True,
        )
    return TimeLimit("maxRunningTime", written, duration_seconds(written))
