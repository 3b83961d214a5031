"""Which jobs the user watches (``w``, ``W``), and which of them just ended.

Kept apart from the App so the rules read and test without Textual: a job is told about once,
when a poll first sees it in an end state after one that was not; a job that had already ended
when it was watched tells nothing (there is no end left to wait for); a job submitted from the
TUI is known to be live at submission, so it tells even when it ends before the poll first
lists it (a command-line error fails a job within a second).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from tui_app.model.jobs.states import JobState
from tui_app.model.views.job_view import JobRow

__all__ = ["JobEnded", "JobWatch", "WatchChange"]


@dataclass(frozen=True)
class JobEnded:
    """A watched job went from a live state to an end state."""

    job_id: str
    state: JobState
    cause: str | None
    """Why it failed, in one line (the list's ERROR column); None when it gave none."""


@dataclass(frozen=True)
class WatchChange:
    """What one ``w`` did, for the toast that says so."""

    watched: tuple[str, ...] = ()
    unwatched: tuple[str, ...] = ()
    already_ended: tuple[tuple[str, JobState], ...] = ()
    """Jobs that had ended before they were watched, with their state: not watched."""

    def message(self) -> str:
        """One line for a toast: what changed, and why nothing did for jobs that had ended."""
        parts: list[str] = []
        if self.watched:
            parts.append(f"Watching {_names(self.watched)}: you are told when it ends.")
            if len(self.watched) > 1:
                parts[-1] = parts[-1].replace("when it ends", "when each ends")
        if self.unwatched:
            parts.append(f"Stopped watching {_names(self.unwatched)}.")
        if self.already_ended:
            ended = ", ".join(f"{job_id} ({state.value})" for job_id, state in self.already_ended)
            parts.append(f"Already ended, nothing to watch: {ended}.")
        return " ".join(parts)


def _names(ids: tuple[str, ...]) -> str:
    return ids[0] if len(ids) == 1 else f"{len(ids)} jobs"


@dataclass
class JobWatch:
    """The watched jobs and the state each was last seen in (None: not listed yet)."""

    _last: dict[str, JobState | None] = field(default_factory=dict)

    @property
    def watched(self) -> frozenset[str]:
        """The job ids being watched."""
        return frozenset(self._last)

    def __len__(self) -> int:
        return len(self._last)

    def toggle(self, job_ids: Iterable[str], rows: Mapping[str, JobRow]) -> WatchChange:
        """``w`` on ``job_ids``: unwatch them when every one is watched, else watch the rest.

        Args:
            job_ids: the marked jobs, or the one under the cursor (a folded group's jobs).
            rows: the last list, by job id: a job's state when it is watched.
        """
        ids = list(dict.fromkeys(job_ids))
        if ids and all(job_id in self._last for job_id in ids):
            for job_id in ids:
                del self._last[job_id]
            return WatchChange(unwatched=tuple(ids))
        watched: list[str] = []
        ended: list[tuple[str, JobState]] = []
        for job_id in ids:
            if job_id in self._last:
                continue
            row = rows.get(job_id)
            state = row.state if row is not None else None
            if state is not None and state.is_terminal:
                ended.append((job_id, state))
                continue
            self._last[job_id] = state
            watched.append(job_id)
        return WatchChange(watched=tuple(watched), already_ended=tuple(ended))

    def watch_submitted(self, job_ids: Iterable[str]) -> None:
        """Watch jobs this TUI just created: live at birth, whatever the next list says."""
        for job_id in job_ids:
            self._last.setdefault(job_id, JobState.QUEUED)

    def observe(self, rows: Iterable[JobRow]) -> list[JobEnded]:
        """The watched jobs that ``rows`` (a fresh list) shows ended; they are watched no more.

        A job seen for the first time already ended (watched by id before any list had it)
        counts only when it was known to be live: a submitted job's baseline is QUEUED.
        """
        if not self._last:
            return []
        last = self._last
        ended: list[JobEnded] = []
        # One pass over the list, on the event loop: ~7 ms for 100k jobs, and only for a list
        # in which something changed while a job is watched.
        for row in rows:
            if row.job_id not in last:
                continue
            before = last[row.job_id]
            if row.state.is_terminal:
                if before is not None and not before.is_terminal:
                    ended.append(JobEnded(row.job_id, row.state, row.error or None))
                del last[row.job_id]
            else:
                last[row.job_id] = row.state
        return ended
