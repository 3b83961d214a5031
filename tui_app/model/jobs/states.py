"""Job states of the ml v1 API and the facts the rest of the product derives from them."""

from __future__ import annotations

from enum import StrEnum


class JobState(StrEnum):
    """The ml v1 ``Job.state`` enum, spelled exactly as on the wire."""

    STATE_UNSPECIFIED = "STATE_UNSPECIFIED"
    QUEUED = "QUEUED"
    PREPARING = "PREPARING"
    RUNNING = "RUNNING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    CANCELLING = "CANCELLING"
    CANCELLED = "CANCELLED"

    @property
    def is_terminal(self) -> bool:
        """True once the job can never change again (endTime is set)."""
        return self in TERMINAL_STATES

    @property
    def is_live(self) -> bool:
        """True while the job may still change state by itself."""
        return self in LIVE_STATES


TERMINAL_STATES: frozenset[JobState] = frozenset(
    {JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED}
)
LIVE_STATES: frozenset[JobState] = frozenset(
    {JobState.QUEUED, JobState.PREPARING, JobState.RUNNING, JobState.CANCELLING}
)
CANCELLABLE_STATES: frozenset[JobState] = frozenset(
    {JobState.QUEUED, JobState.PREPARING, JobState.RUNNING, JobState.CANCELLING}
)

# The order a person reads a lifecycle in; used to sort by state and to count per state.
STATE_ORDER: tuple[JobState, ...] = (
    JobState.QUEUED,
    JobState.PREPARING,
    JobState.RUNNING,
    JobState.CANCELLING,
    JobState.SUCCEEDED,
    JobState.FAILED,
    JobState.CANCELLED,
)

# One glyph per state so a state reads without colour (terminals without colour, colour blindness).
STATE_SYMBOL: dict[JobState, str] = {
    JobState.QUEUED: "◷",
    JobState.PREPARING: "◌",
    JobState.RUNNING: "▶",
    JobState.SUCCEEDED: "✓",
    JobState.FAILED: "✗",
    JobState.CANCELLING: "◍",
    JobState.CANCELLED: "⊘",
    JobState.STATE_UNSPECIFIED: "?",
}
