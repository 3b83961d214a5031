"""The one place a job state's colour is chosen: every widget that colours a state builds its
component classes and their CSS from here, so the list, the diff and any later view agree and
a theme change is one edit.

The colours are theme variables, never literal colours, so each theme (and ``NO_COLOR``, where
Textual drops them) decides what they look like; the state's symbol (``model.jobs.states``) carries
the meaning without colour.
"""

from __future__ import annotations

from typing import Final

from tui_app.model.jobs.states import JobState

STATE_COLOURS: Final[dict[JobState, str]] = {
    JobState.QUEUED: "$warning",
    JobState.PREPARING: "$warning",
    JobState.RUNNING: "$primary",
    JobState.CANCELLING: "$accent",
    JobState.SUCCEEDED: "$success",
    JobState.FAILED: "$error",
    JobState.CANCELLED: "$text-muted",
}
"""A state's theme variable. STATE_UNSPECIFIED has none: a widget shows it dim."""


def state_classes(prefix: str) -> dict[JobState, str]:
    """A widget's component class per coloured state: ``<prefix>--state-failed``."""
    return {state: f"{prefix}--state-{state.value.lower()}" for state in STATE_COLOURS}


def state_css(prefix: str) -> str:
    """The rules that colour ``state_classes(prefix)``, to nest inside the widget's own
    DEFAULT_CSS block (each starts with ``& >``)."""
    classes = state_classes(prefix)
    return "\n".join(
        f"        & > .{classes[state]} {{ color: {colour}; }}"
        for state, colour in STATE_COLOURS.items()
    )
