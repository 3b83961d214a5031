"""The first list of jobs, started before the app's modules are imported.

Opening the TUI is mostly waiting: Textual and the screens take about 150 ms to import and
the first frame some 80 ms more on a 2-core machine, and only then did the poll connect to
the service (reading its address, a health check, maybe starting it) and list the jobs. Much
of that second part is waiting for the service, which runs in another process and on the
other core. ``FirstList.start`` does it in a thread of its own as soon as the command line
and the settings are read, so the answer is usually in when the list's first frame is drawn.

It is the poll's own first round, not a second path: the same ``JobsSource`` and the same
``RowCache.collect`` that every later poll uses; the poll takes its result (or its error,
raised as the poll's call would have raised it) and goes on with the same cache.
"""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import Future
from concurrent.futures import wait as futures_wait
from functools import partial

from tui_app.model.views.job_view import JobRow
from tui_app.shell.jobs_source import JobsSource
from tui_app.shell.row_cache import RowCache

__all__ = ["FirstList"]

SETTLE_STEP_SECONDS = 0.002


class FirstList:
    """One poll round begun early: its cache and its pending answer."""

    def __init__(self, source: JobsSource) -> None:
        self.source = source
        self.cache = RowCache()
        self.seconds = 0.0
        """How long the round took (the poll's back-off and the header use it)."""
        self.so_far: list[JobRow] | None = None
        """The rows read so far, sorted, while a long round goes on (``RowCache.collect``'s
        progress); None until the first such showing."""
        self._answer: Future[tuple[list[JobRow], bool]] = Future()

    @classmethod
    def start(cls, source: JobsSource) -> FirstList:
        first = cls(source)
        # A daemon thread: a user who quits before the service answers must not wait for it.
        threading.Thread(target=first._run, name="first-list", daemon=True).start()
        return first

    def _run(self) -> None:
        started = time.monotonic()
        try:
            answer = self.source.call(partial(self.cache.collect, progress=self._progress))
        except BaseException as exc:  # handed to the poll, which reports it as its own
            self._answer.set_exception(exc)
        else:
            self.seconds = time.monotonic() - started
            self._answer.set_result(answer)

    def _progress(self, rows: list[JobRow]) -> None:
        self.so_far = rows  # one assignment: the poll thread reads it whole or not at all

    def wait(self, seconds: float) -> bool:
        """Block up to ``seconds`` for the round to end (the poll's worker); whether it has."""
        return bool(futures_wait([self._answer], timeout=seconds).done)

    async def settle(self, seconds: float) -> bool:
        """Wait up to ``seconds`` (without blocking the event loop) for the round to end, or
        to have rows to show so far; whether it has ended. Polled, so that an error nobody
        takes is not reported as unretrieved."""
        deadline = time.monotonic() + seconds
        while not self._answer.done() and self.so_far is None and time.monotonic() < deadline:
            await asyncio.sleep(SETTLE_STEP_SECONDS)
        return self._answer.done()

    def result(self) -> tuple[list[JobRow], bool]:
        """Every job as a row and whether anything changed, once the round is done (blocking:
        the poll's worker calls it).

        Raises:
            ApiCallError: the round's call failed, as ``JobsSource.call`` raises it.
        """
        return self._answer.result()
