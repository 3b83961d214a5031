"""Waiting for jobs to end: each job's reads as they change, until it has ended.

``tui-app jobs wait`` blocks on it; anything else that must hear of a job's end without a
screen's poll can use it the same way. The reads happen on worker threads (every client call
blocks) and come back to the caller through one queue, so the caller's thread stays free to
redraw a progress line, keep a time limit and take ctrl+c.

How the jobs are read, cheapest first:

- the local service's long poll (``MetricsClient.wait_for_change``): one request per job that
  the service answers when the job changes, so an end is seen at once and an idle wait costs a
  request every ``LONG_POLL_SECONDS``;
- elsewhere (a URL profile whose server lacks it, Vertex AI), ``jobs.get`` every
  ``POLL_SECONDS`` (``CLOUD_POLL_SECONDS`` on Vertex AI);
- past ``THREADS_AT_MOST`` jobs, one ``jobs.list`` per project per interval instead of a
  thread and a request per job.

A transient failure (nothing answered, 408, 429, 5xx: ``ApiCallError.transient``) is reported
and retried with backoff, and the wait resumes; any other failure ends that job's wait with a
fatal report, since asking again would get the same answer.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from tui_app.api.errors import ApiCallError
from tui_app.model.jobs.states import JobState
from tui_app.model.views.job_view import parse_state

if TYPE_CHECKING:
    from tui_app.api.connection import Connection
    from tui_app.api.jobs_api import JobsApi
    from tui_app.api.metrics_client import MetricsClient

__all__ = [
    "CLOUD_POLL_SECONDS",
    "LONG_POLL_SECONDS",
    "POLL_SECONDS",
    "THREADS_AT_MOST",
    "JobChanged",
    "JobWaiter",
    "ReadTrouble",
    "WaitEvent",
]

POLL_SECONDS: Final = 2.0
"""Between ``jobs.get`` reads of one job where there is no long poll: an end is seen at most
this late, which a person waiting on a job that ran minutes does not notice."""
CLOUD_POLL_SECONDS: Final = 10.0
"""The same on Vertex AI, where every read counts against the project's API quota that the
TUI, gcloud and other scripts share, and a job takes minutes just to provision."""
LONG_POLL_SECONDS: Final = 25.0
"""How long one long poll may wait on the service: under the minute that proxies and NATs
commonly allow an idle connection, and the service's own cap is 55 s."""
THREADS_AT_MOST: Final = 8
"""Past this many jobs, the list is read instead of each job: a thread per job would hold a
connection per job, and one ``jobs.list`` per interval costs the server less than N reads."""
BACKOFF_SECONDS: Final = (0.5, 1.0, 2.0, 4.0, 8.0, 10.0)
"""Waits after 1, 2, 3... failures in a row (the log follower's); the last one repeats."""
QUICK_ANSWER_SECONDS: Final = 1.0
"""A long poll answered this fast with the job unchanged did not wait (a server that does
not keep the etag): the next one waits a polling interval first, so it cannot spin."""


@dataclass(frozen=True)
class JobChanged:
    """A job read that differs from the last one (its state or etag): its latest answer."""

    project: str
    job: dict[str, Any]

    @property
    def job_id(self) -> str:
        return str(self.job.get("jobId") or "")

    @property
    def state(self) -> JobState:
        return parse_state(self.job.get("state"))

    @property
    def ended(self) -> bool:
        return self.state.is_terminal


@dataclass(frozen=True)
class ReadTrouble:
    """A read failed (``error``), or reads work again after failing (``error`` None).

    ``fatal``: the failure is not transient; that job (or, for a list read, every job of the
    project) is no longer waited for.
    """

    project: str
    job_id: str | None
    """The job whose read failed; None for a project's ``jobs.list``."""
    error: ApiCallError | None
    fatal: bool = False


WaitEvent = JobChanged | ReadTrouble
_WAKE: Final = None
"""Put by ``stop``: a ``next_event`` blocked without a timeout returns."""


def _etag(job: Mapping[str, Any]) -> str | None:
    etag = job.get("etag")
    return etag if isinstance(etag, str) and etag else None


def _differs(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """A backend without etags (or one that keeps it on a state change) still reports the
    state: either differing is a change."""
    return _etag(old) != _etag(new) or old.get("state") != new.get("state")


class _Troubles:
    """One reader's run of failed reads (of a job, or with ``job_id`` None of a project's
    list): each is reported as a ``ReadTrouble``, and the first good read after them too."""

    def __init__(self, put: Callable[[WaitEvent], None], project: str, job_id: str | None):
        self._put = put
        self._where = (project, job_id)
        self._count = 0

    def failed(self, exc: ApiCallError) -> float:
        """Report a failed read; the seconds to wait before the next try, or -1 to give up."""
        if not exc.transient:
            self._put(ReadTrouble(*self._where, exc, fatal=True))
            return -1.0
        self._put(ReadTrouble(*self._where, exc))
        delay = BACKOFF_SECONDS[min(self._count, len(BACKOFF_SECONDS) - 1)]
        self._count += 1
        return delay

    def read(self) -> None:
        """A read went through: say so if the reads before it failed."""
        if self._count:
            self._put(ReadTrouble(*self._where, None))
            self._count = 0


class JobWaiter:
    """Reads the given jobs until each has ended, and hands the changes to ``next_event``.

    Jobs that have already ended are not read again; ``start`` starts the readers,
    ``stop`` (or leaving a ``with`` block) ends them: the caller's ``next_event`` returns at
    once, and a reader blocked in a request leaves when it comes back, without reporting.
    """

    def __init__(
        self,
        connection: Connection,
        jobs: Iterable[tuple[str, Mapping[str, Any]]],
        *,
        long_poll: bool = True,
        interval: float | None = None,
    ) -> None:
        """
        Args:
            connection: Where the jobs are; its ``jobs(project)`` (and ``metrics(project)``
                for the long poll) give each reader a client of its own.
            jobs: ``(project, job)``: each job's last read (its ``jobId``, ``state`` and
                ``etag`` are the starting point).
            long_poll: Use the service's long poll where it has one.
            interval: Seconds between polls where there is no long poll; default
                ``POLL_SECONDS`` (``CLOUD_POLL_SECONDS`` on Vertex AI).
        """
        self.connection = connection
        self.live = [(p, dict(j)) for p, j in jobs if not parse_state(j.get("state")).is_terminal]
        self.long_poll = long_poll and not connection.vertex
        self.interval = interval or (CLOUD_POLL_SECONDS if connection.vertex else POLL_SECONDS)
        self.mode = "list" if len(self.live) > THREADS_AT_MOST else "job"
        """``job``: a reader per job; ``list``: a reader per project, listing its jobs."""
        self._events: queue.Queue[WaitEvent | None] = queue.Queue()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def __enter__(self) -> JobWaiter:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def start(self) -> None:
        """Start the readers (daemon threads: a process that exits does not wait for them)."""
        if self.mode == "job":
            for project, job in self.live:
                name = f"wait-{job.get('jobId')}"
                self._spawn(name, self._read_job, project, job)
        else:
            by_project: dict[str, list[dict[str, Any]]] = {}
            for project, job in self.live:
                by_project.setdefault(project, []).append(job)
            for project, jobs in by_project.items():
                self._spawn(f"wait-list-{project}", self._read_list, project, jobs)

    def _spawn(self, name: str, target: Any, *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)
        self._threads.append(thread)
        thread.start()

    def stop(self) -> None:
        """End the wait: no reader reports again, and ``next_event`` answers None at once,
        even one another thread is blocked in."""
        self._stop.set()
        self._events.put(_WAKE)

    def next_event(self, timeout: float | None = None) -> WaitEvent | None:
        """The next change or trouble; None when ``timeout`` seconds pass without one, or
        once stopped. A waiting caller still takes ctrl+c (the queue's wait is interruptible).
        """
        if self._stop.is_set():
            return None
        try:
            event = self._events.get(timeout=timeout)
        except queue.Empty:
            return None
        return None if self._stop.is_set() else event

    def _put(self, event: WaitEvent) -> None:
        if not self._stop.is_set():
            self._events.put(event)

    def _read_job(self, project: str, job: dict[str, Any]) -> None:
        """One job's reader: long polls while the service has them, else ``jobs.get``."""
        job_id = str(job.get("jobId"))
        client: JobsApi | None = None
        metrics: MetricsClient | None = None
        long_poll = self.long_poll
        troubles = _Troubles(self._put, project, job_id)
        delay = 0.0 if long_poll else self.interval
        try:
            while not self._stop.wait(delay):
                began = time.monotonic()
                try:
                    if long_poll:
                        if metrics is None:
                            metrics = self.connection.metrics(project)
                        fresh = metrics.wait_for_change(job_id, _etag(job), LONG_POLL_SECONDS)
                        if fresh is None:  # a server without the long poll: poll it instead
                            long_poll, delay = False, self.interval
                            continue
                    else:
                        if client is None:
                            client = self.connection.jobs(project)
                        fresh = client.get(job_id)
                except ApiCallError as exc:
                    delay = troubles.failed(exc)
                    if delay < 0:
                        return
                    continue
                troubles.read()
                delay = self.interval
                if _differs(job, fresh):
                    job = fresh
                    self._put(JobChanged(project, fresh))
                    delay = 0.0 if long_poll else delay
                elif long_poll and time.monotonic() - began >= QUICK_ANSWER_SECONDS:
                    delay = 0.0  # the wait ran its time: ask again at once
                if parse_state(fresh.get("state")).is_terminal:
                    return
        finally:
            if metrics is not None:
                metrics.close()

    def _read_list(self, project: str, jobs: list[dict[str, Any]]) -> None:
        """One project's reader: ``jobs.list`` each interval; a job the list lacks (a backend
        that pages it away) is read by itself."""
        pending = {str(j.get("jobId")): j for j in jobs}
        client: JobsApi | None = None
        troubles = _Troubles(self._put, project, None)
        delay = self.interval
        while pending and not self._stop.wait(delay):
            try:
                if client is None:
                    client = self.connection.jobs(project)
                listed = {str(j.get("jobId")): j for j in client.list_jobs()}
                for job_id in pending.keys() - listed.keys():
                    listed[job_id] = client.get(job_id)
            except ApiCallError as exc:
                delay = troubles.failed(exc)
                if delay < 0:
                    return
                continue
            troubles.read()
            delay = self.interval
            for job_id, old in list(pending.items()):
                fresh = listed[job_id]
                if _differs(old, fresh):
                    pending[job_id] = fresh
                    self._put(JobChanged(project, fresh))
                if parse_state(fresh.get("state")).is_terminal:
                    del pending[job_id]
