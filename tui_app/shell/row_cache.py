"""The poll's memory of the last list: rows rebuilt only for the jobs that changed.

Kept apart from the app (no Textual here) because the first list starts before the app's
modules are imported (``shell/first_list.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from math import inf
from operator import attrgetter
from typing import TYPE_CHECKING

from tui_app.model.views.job_view import JobRow, insert_default, keeps_place, sort_default

if TYPE_CHECKING:
    from tui_app.api.jobs_api import JobsApi

YIELD_EVERY_JOBS = 100
"""How often (in jobs read) a poll checks for typing: one page of jobs.list."""
REUSE_ORDER_MAX_ADDED = 500
"""More new jobs than this in one poll are sorted with the rest, not inserted one by one."""
FIRST_PROGRESS_SECONDS = 0.1
FIRST_PROGRESS_ROWS = 2_000
FIRST_PROGRESS_LATE_SECONDS = 0.5
NEXT_PROGRESS_SECONDS = 2.0
"""A first list still coming shows what it has so far once it has ``FIRST_PROGRESS_ROWS`` rows
after ``FIRST_PROGRESS_SECONDS``, or whatever it has after ``FIRST_PROGRESS_LATE_SECONDS`` (a
slow backend); then again after ``NEXT_PROGRESS_SECONDS``, twice as long each time after that.
Each showing sorts every row read and redraws the list, so they thin out: 100k jobs from the
local service are whole in ~1.6 s, and a second showing after 1 s (some 75k rows) delayed the
whole list by ~150 ms for a view of it that lasted half a second. A list of a thousand jobs on
the local service is whole before the first showing, and is not shown in parts."""
_job_id = attrgetter("job_id")


class RowCache:
    """The last list, as rows; a row is rebuilt only when its job's etag changed.

    The service gives every change a new etag, and building a row costs ~4.5 us (0.45 s for 100k
    jobs). Rows are built page by page, so the whole list of job dicts is never held at once.
    The order is kept too: when the jobs that changed keep their places (a state, an end time)
    and few are new, the last order is reused instead of sorting 100k rows again.
    """

    def __init__(self) -> None:
        self._rows: dict[str, JobRow] = {}
        self._etags: dict[str, str] = {}
        """Apart from the rows, not paired with them: a dict of strings is no work for the
        cycle collector, and 100k (etag, row) tuples were 5.6 MB and 100k objects to scan."""
        self._order: list[JobRow] = []
        self._odd_ids = False
        """A job's key here was not its row's id (no id, or not a string): sort every time."""

    def collect(
        self,
        client: JobsApi,
        pause: Callable[[], object] | None = None,
        progress: Callable[[list[JobRow]], object] | None = None,
    ) -> tuple[list[JobRow], bool]:
        """Every job as a row, in the default order, and whether anything changed.

        ``pause`` is called between pages (it may block): the poll is Python work in a thread,
        and while it runs a keystroke's handler waits for the GIL (a filter keystroke on 100k
        jobs went from 35 ms to 75 ms at p95 with the poller running).

        ``progress`` is given the rows read so far, in the default order, while the first list
        is still coming (``FIRST_PROGRESS_SECONDS``): 100k jobs are a thousand pages of the
        jobs API, 1.2-1.5 s from the local service, and the list pages in instead of staying
        empty meanwhile.
        """
        rows: dict[str, JobRow] = {}
        etags: dict[str, str] = {}
        last_rows, last_etags = self._rows, self._etags
        changed = False
        moved = False
        """A rebuilt row may sort elsewhere than the row it replaces."""
        added: list[JobRow] = []
        began = time.monotonic()
        wait = FIRST_PROGRESS_SECONDS
        shown_at = began + wait if progress is not None and not last_rows else inf
        enough = FIRST_PROGRESS_ROWS
        for n, job in enumerate(client.iter_jobs(), 1):
            if pause is not None and n % YIELD_EVERY_JOBS == 0:
                pause()
            job_id, etag = str(job.get("jobId", "")), str(job.get("etag", ""))
            row = last_rows.get(job_id)
            if row is None or last_etags[job_id] != etag or not etag:
                new = JobRow.from_job(job)
                if new.job_id != job_id:
                    self._odd_ids = True
                if row is None:
                    added.append(new)
                elif not moved and not keeps_place(row, new):
                    moved = True
                row = new
                changed = True
            rows[job_id] = row
            etags[job_id] = etag
            if n % YIELD_EVERY_JOBS == 0 and time.monotonic() >= shown_at:  # after a page
                late = time.monotonic() - began >= FIRST_PROGRESS_LATE_SECONDS
                if len(rows) >= enough or late:
                    assert progress is not None
                    progress(sort_default(rows.values()))
                    enough, wait = 0, max(NEXT_PROGRESS_SECONDS, wait * 2)
                    shown_at = time.monotonic() + wait
        changed = changed or len(rows) != len(last_rows)
        if changed:
            self._order = self._sorted(rows, added, moved)
        self._rows, self._etags = rows, etags
        return self._order, changed

    def _sorted(self, rows: dict[str, JobRow], added: list[JobRow], moved: bool) -> list[JobRow]:
        """``rows`` in the default order: the last order with the changed rows in their
        (unchanged) places and the new ones inserted, when that is cheaper."""
        if moved or self._odd_ids or not self._order or len(added) > REUSE_ORDER_MAX_ADDED:
            return sort_default(rows.values())
        kept = [row for row in map(rows.get, map(_job_id, self._order)) if row is not None]
        if len(kept) + len(added) != len(rows):  # an id listed twice: sort from scratch
            return sort_default(rows.values())
        return insert_default(kept, added)
