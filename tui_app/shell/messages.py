"""Messages the app's workers post to the App, which hands them to every screen.

None bubbles: a screen's copy must not come back up to the App and be handed out again.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from textual.message import Message

from tui_app.model.views.job_view import JobRow


@dataclass
class JobsRefreshed(Message, bubble=False):
    """A fresh list of every job arrived."""

    rows: list[JobRow]
    fetched_at: datetime
    seconds: float
    """How long the fetch took (the poll interval backs off when it is slow)."""
    changed: bool = True
    """False when no job changed since the last list (the screens skip re-sorting)."""
    partial: bool = False
    """The first list, still coming in: the jobs read so far (a large store takes seconds)."""

    def can_replace(self, message: Message) -> bool:
        """Let a newer list (``message``, queued behind this one) supersede this one.

        Textual drops ``self`` and keeps ``message``; a change this list carried must survive
        that, or a later "nothing changed" list would hide it from the screens for good.
        """
        if not isinstance(message, JobsRefreshed):
            return False
        message.changed = message.changed or self.changed
        return True


@dataclass
class ConnectionChanged(Message, bubble=False):
    """The service stopped answering (``error`` set) or answers again (``error`` None)."""

    error: str | None
    label: str


@dataclass
class JobsSubmitted(Message, bubble=False):
    """New jobs were created (resubmit, edit): select the first when it shows up."""

    job_ids: list[str]
