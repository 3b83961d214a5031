"""Wake the ``:wait`` long polls of a job when its record changes.

Every write of a job goes through ``JobService._save`` on the event loop, which calls
``changed``; a ``:wait`` request parks on ``wait`` in between. Nothing polls: a job nobody
changes costs its waiters nothing until their timeout, and a service that holds many open
waits holds no thread for them (each is a coroutine parked on an ``asyncio.Event``).
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field

JobKey = tuple[str, str]
"""(project, job id)."""


@dataclass
class _Waiters:
    """The open waits on one job: one event they share, set by the next change."""

    event: asyncio.Event = field(default_factory=asyncio.Event)
    count: int = 0


class JobChanges:
    """Per-job events for long polls; ``close`` answers every open and later wait at once."""

    def __init__(self) -> None:
        self._waiters: dict[JobKey, _Waiters] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self.closed = False
        """Set when the service stops: a wait then returns at once, so shutting down never
        sits out the long polls still open (aiohttp waits for every handler to answer)."""

    def changed(self, project: str, job_id: str) -> None:
        """The job's record was written: wake its waits (they read it again)."""
        loop = self._loop
        if loop is not None and not _on(loop):
            # Jobs are written on the loop (store.py's rule); a write from elsewhere must still
            # wake the waits without touching an asyncio.Event off its loop.
            loop.call_soon_threadsafe(self._wake, (project, job_id))
            return
        self._wake((project, job_id))

    def _wake(self, key: JobKey) -> None:
        waiters = self._waiters.pop(key, None)
        if waiters is not None:
            waiters.event.set()

    def close(self) -> None:
        """Wake every wait, now and from now on."""
        self.closed = True
        for key in list(self._waiters):
            self._wake(key)

    async def wait(self, project: str, job_id: str, timeout: float) -> None:
        """Until the job's next change, ``close``, or ``timeout`` seconds, whichever is first.

        The caller reads the job before it calls this and again after: both run on the loop
        with no await in between, so a change cannot slip past unseen.
        """
        if self.closed or timeout <= 0:
            return
        self._loop = asyncio.get_running_loop()
        key = (project, job_id)
        waiters = self._waiters.setdefault(key, _Waiters())
        waiters.count += 1
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(waiters.event.wait(), timeout)
        finally:
            waiters.count -= 1
            # The last wait on a job nobody changed takes its event along: an ended job that
            # was waited on must not keep one for the life of the service.
            if waiters.count == 0 and self._waiters.get(key) is waiters:
                del self._waiters[key]

    @property
    def open_jobs(self) -> int:
        """Jobs with at least one open wait (what a test checks is released)."""
        return len(self._waiters)


def _on(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False
