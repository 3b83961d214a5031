"""Which jobs the user watches (``w``, ``W``), and which of them just ended.

Kept apart from the App so the rules read and test without Textual: a job is told about once,
when a poll first sees it in an end state after one that was not; a job that had already ended
when it was watched tells nothing (there is no end left to wait for); a job submitted from the
TUI is known to be live at submission, so it tells even when it ends before the poll first
lists it (a command-line error fails a job within a second).

While a watched job runs, a replica the service restarted (its machine was lost, it exited with
an error that may pass) is told too, as a toast of its own (``JobRestarted``): the job goes on,
so it is news, not an end, and it neither rings nor ends the watch. Restarts made before the
job was watched are its baseline, not news.

A watched job that stalls (every replica quiet, one idle: the service's ``stall``) is told
once per stall, through the same channels as an end (``JobStalled``): a hung job calls the
person back as a failed one does. A stall already under way when the job was watched is its
baseline; one that clears and comes back is told again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from tui_app.model.jobs.states import JobState
from tui_app.model.running.restarts import WHOLE_JOB, ReplicaRestarts, restart_note
from tui_app.model.views.job_view import JobRow

__all__ = ["JobEnded", "JobRestarted", "JobStalled", "JobWatch", "WatchChange", "WatchEvent"]

RESTARTS_TOLD = 3
"""Replicas named in one restart toast; more (a lost machine restarts them all) are counted."""


@dataclass(frozen=True)
class JobEnded:
    """A watched job went from a live state to an end state."""

    job_id: str
    state: JobState
    cause: str | None
    """Why it failed, in one line (the list's ERROR column); None when it gave none."""


@dataclass(frozen=True)
class JobRestarted:
    """Replicas of a watched, live job were restarted since the last list (the job goes on)."""

    job_id: str
    restarts: tuple[ReplicaRestarts, ...]
    """The replicas whose count grew, each with its count and last cause now."""
    retried: bool = False
    """The whole job was retried at some point: a replica's count is then no longer "of 5"."""

    def title(self) -> str:
        """The toast's title: what happened, in a word or two."""
        if all(r.task_name == WHOLE_JOB for r in self.restarts):
            return "Job retried"
        return "Replica restarted" if len(self.restarts) == 1 else "Replicas restarted"

    def message(self) -> str:
        """``mnist_…: master-replica-0 restarted (1 of 5): its machine restarted``, a line per
        replica, at most ``RESTARTS_TOLD`` of them."""
        notes = [f"{self.job_id}: {restart_note(r, retried=self.retried)}" for r in self.restarts]
        if len(notes) > RESTARTS_TOLD:
            more = len(notes) - RESTARTS_TOLD
            notes[RESTARTS_TOLD:] = [f"… and {more} more replica{'s' if more != 1 else ''}"]
        return "\n".join(notes)


@dataclass(frozen=True)
class JobStalled:
    """A watched, live job turned stalled since the last list."""

    job_id: str
    replicas: tuple[str, ...]
    """The stalled replicas (``trial 3 worker-replica-0`` for a trial's)."""

    def message(self) -> str:
        """``master-replica-0, worker-replica-0 print nothing and use no CPU.``"""
        names = ", ".join(self.replicas[:RESTARTS_TOLD])
        if len(self.replicas) > RESTARTS_TOLD:
            names += f" and {len(self.replicas) - RESTARTS_TOLD} more"
        return f"{names or 'Its replicas'} print nothing and use no CPU; S shows where they wait."


WatchEvent = JobEnded | JobRestarted | JobStalled
"""What ``JobWatch.observe`` tells of the watched jobs."""


def _counts(row: JobRow | None) -> dict[str, int] | None:
    """Restarts per replica of a listed job; None for one not listed yet (no baseline)."""
    return None if row is None else {r.task_name: r.count for r in row.restarts}


def _grown(before: dict[str, int], row: JobRow) -> tuple[ReplicaRestarts, ...]:
    """The replicas of ``row`` restarted more often than ``before`` counted."""
    return tuple(r for r in row.restarts if r.count > before.get(r.task_name, 0))


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
    _restarts: dict[str, dict[str, int] | None] = field(default_factory=dict)
    """Restarts per replica, by job, as last seen (None: not listed yet, no baseline)."""
    _stalled: dict[str, bool | None] = field(default_factory=dict)
    """Whether each job was stalled when last seen (None: not listed yet, no baseline)."""

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
                self._restarts.pop(job_id, None)
                self._stalled.pop(job_id, None)
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
            self._restarts[job_id] = _counts(row)
            self._stalled[job_id] = None if row is None else row.stalled_since is not None
            watched.append(job_id)
        return WatchChange(watched=tuple(watched), already_ended=tuple(ended))

    def watch_submitted(self, job_ids: Iterable[str]) -> None:
        """Watch jobs this TUI just created: live at birth, whatever the next list says."""
        for job_id in job_ids:
            self._last.setdefault(job_id, JobState.QUEUED)
            self._restarts.setdefault(job_id, {})  # born without restarts: each one is news
            self._stalled.setdefault(job_id, False)

    def observe(self, rows: Iterable[JobRow]) -> list[WatchEvent]:
        """What ``rows`` (a fresh list) shows of the watched jobs: those that ended (they are
        watched no more) and those whose replicas were restarted since the last list.

        A job seen for the first time already ended (watched by id before any list had it)
        counts only when it was known to be live: a submitted job's baseline is QUEUED. Its
        restarts likewise: a job watched before it was listed takes its first list's restarts
        as the baseline; a submitted one started from none.
        """
        if not self._last:
            return []
        last, restarts = self._last, self._restarts
        events: list[WatchEvent] = []
        # One pass over the list, on the event loop: ~7 ms for 100k jobs, and only for a list
        # in which something changed while a job is watched.
        for row in rows:
            if row.job_id not in last:
                continue
            before = last[row.job_id]
            counts = restarts.get(row.job_id)
            if row.restarts and counts is not None:
                grown = _grown(counts, row)
                if grown:
                    retried = any(r.task_name == WHOLE_JOB for r in row.restarts)
                    events.append(JobRestarted(row.job_id, grown, retried))
            restarts[row.job_id] = _counts(row)
            stalled = row.stalled_since is not None
            if stalled and self._stalled.get(row.job_id) is False:
                events.append(JobStalled(row.job_id, row.stalled))
            self._stalled[row.job_id] = stalled
            if row.state.is_terminal:
                if before is not None and not before.is_terminal:
                    events.append(JobEnded(row.job_id, row.state, row.error or None))
                del last[row.job_id]
                del restarts[row.job_id]
                self._stalled.pop(row.job_id, None)
            else:
                last[row.job_id] = row.state
        return events
