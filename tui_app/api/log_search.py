"""A text search over every job's logs, a page at a time: the TUI's search view (``:grep``) and
``tui-app logs search`` read it here.

One call is one Cloud Logging ``entries:list`` over the project (no job in the filter), newest
first, through the same client path as the log panes (``log_stream.logging_request`` and
``call_logging``): the local service answers a text term from its full-text index in
milliseconds, and Cloud Logging (Vertex AI) answers the same request as it is. A filter the
server refuses raises its INVALID_ARGUMENT ("Invalid filter: ...") unchanged, for the caller
to show.

A hit's context (the lines around it in its replica's log) is read with a ``LogStream`` on that
job and replica, from the hit's own (timestamp, insertId) position both ways: exact, ties and
all, where a window of timestamps would have to guess how wide to be.

No Textual here: every call blocks; the TUI runs them in thread workers.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from tui_app.api.log_stream import LogStream, call_logging, logging_request, to_line
from tui_app.model.jobs.wire import as_mapping
from tui_app.model.logs.log_line import LogLine
from tui_app.model.logs.log_search import SearchHit

if TYPE_CHECKING:
    from tui_app.api.connection import Connection

__all__ = ["DEFAULT_PAGE_SIZE", "MAX_PAGE_SIZE", "EntriesPage", "LogSearch", "hit_of"]

DEFAULT_PAGE_SIZE: Final = 200
"""Hits per page: a screenful of groups several times over, and one quick read."""
MAX_PAGE_SIZE: Final = 1000
"""The most ``entries:list`` answers at once (Cloud Logging's limit, and the service's)."""
TIMEOUT_SECONDS: Final = 30.0


@dataclass(frozen=True)
class EntriesPage:
    """One page of hits, newest first, and the token for the next (None: none follows)."""

    hits: list[SearchHit]
    next_page_token: str | None

    @property
    def full(self) -> bool:
        """More hits wait behind this page."""
        return self.next_page_token is not None


def hit_of(entry: dict[str, Any]) -> SearchHit | None:
    """A LogEntry (JSON) as a hit: its job (``resource.labels.job_id``, else a ``job_id``
    label) and its line; None for an entry without a usable timestamp."""
    line = to_line(entry)
    if line is None:
        return None
    labels = as_mapping(entry.get("labels"))
    res_labels = as_mapping(as_mapping(entry.get("resource")).get("labels"))
    job_id = res_labels.get("job_id") or labels.get("job_id")
    return SearchHit(str(job_id or ""), line)


class LogSearch:
    """Searches over one project's logs on one connection.

    It keeps the HTTP client between calls: the TUI searches again at each pause in typing,
    and building google-cloud-logging's client each time would cost more than the local
    service's answer.
    """

    def __init__(
        self, connection: Connection, project: str, timeout: float = TIMEOUT_SECONDS
    ) -> None:
        self.connection = connection
        self.project = project
        self.timeout = timeout
        self._request: Callable[..., Any] = logging_request(connection, project)

    def page(
        self,
        filter_text: str,
        page_size: int = DEFAULT_PAGE_SIZE,
        page_token: str | None = None,
    ) -> EntriesPage:
        """One page of the entries ``filter_text`` matches over every job, newest first.

        Args:
            filter_text: A Logging filter (``log_search.search_filter`` makes one from what a
                person typed).
            page_size: Hits wanted (at most ``MAX_PAGE_SIZE``).
            page_token: The previous page's ``next_page_token``; None for the first page.

        Raises:
            ApiCallError: the server refused (INVALID_ARGUMENT for a filter it cannot read)
                or did not answer.
        """
        body: dict[str, Any] = {
            "resourceNames": [f"projects/{self.project}"],
            "filter": filter_text,
            "orderBy": "timestamp desc",
            "pageSize": max(1, min(page_size, MAX_PAGE_SIZE)),
        }
        if page_token:
            body["pageToken"] = page_token
        resp = call_logging(self._request, "/entries:list", body, self.timeout)
        entries = resp.get("entries")
        hits = [
            hit
            for entry in (entries if isinstance(entries, list) else [])
            if isinstance(entry, dict) and (hit := hit_of(entry)) is not None
        ]
        token = resp.get("nextPageToken")
        return EntriesPage(hits, str(token) if token else None)

    def pages(
        self,
        filter_text: str,
        wanted: int,
        jobs: Collection[str] | None = None,
        page_token: str | None = None,
        first_size: int | None = None,
    ) -> Iterator[EntriesPage]:
        """The hits of ``filter_text``, newest first, one server page at a time, until
        ``wanted`` came or none follow; with ``jobs``, only those jobs' hits.

        A page may hold none and still be followed by more: the local service answers a search
        its index cannot drive after a bounded scan (``--log-scan-seconds``), with what it found
        so far, and ``jobs`` may keep none of a page. The caller shows each page as it comes and
        stops reading when it stops iterating. The last page may take the count past
        ``wanted`` (its token then follows its last hit). ``first_size`` asks the first server
        page for fewer, to show them sooner.

        Raises:
            ApiCallError: as ``page``.
        """
        got = 0
        token = page_token
        first = first_size
        while True:
            size = MAX_PAGE_SIZE if jobs is not None else wanted - got
            if first is not None:
                size, first = min(size, first), None
            page = self.page(filter_text, size, token)
            hits = page.hits if jobs is None else [h for h in page.hits if h.job_id in jobs]
            got += len(hits)
            token = page.next_page_token
            yield EntriesPage(hits, token)
            if token is None or got >= wanted:
                return

    def context(self, hit: SearchHit, lines: int) -> tuple[list[LogLine], list[LogLine]]:
        """The ``lines`` lines before ``hit`` and after it in its job's replica (its trial's,
        for a tuning job), each list oldest first.

        Raises:
            ApiCallError: a read failed.
        """
        if lines <= 0:
            return [], []
        line = hit.line
        stream = LogStream(
            self.connection,
            self.project,
            hit.job_id,
            task_name=line.task_name,
            trial_id=line.trial_id,
            timeout=self.timeout,
        )
        stream.start_before(line.key)
        before = stream.older(lines)
        stream.start_after(line.key)
        after = stream.poll(limit=lines)
        return before, after
