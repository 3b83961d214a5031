"""The search over every job's logs: ``s`` on the job list, or ``:grep TEXT`` anywhere.

::

    Search every job's logs │ window: all │ 3 hits in 2 jobs
    out of memory▏
    mnist_20261122_083000  ✗ FAILED  2 hits
      M0  11-22 09:31:02  RuntimeError: CUDA [out of memory]. Tried to allocate 2.00 GiB
      W1  11-22 09:31:01  torch.cuda.[OutOfMemoryError]: CUDA [out of memory]
    bert_20261121_170000  ✓ SUCCEEDED  1 hit
      M0  11-21 17:12:40  warning: close to [out of memory] at batch 512

What is typed is read by ``model.logs.log_search`` (text is a case-insensitive substring, sent
quoted; ``SEARCH(...)``, a quoted text or a field term is a Logging filter, sent as typed), a
short pause after the last key (``DEBOUNCE_SECONDS``), in a thread worker: one
``entries:list`` over the project, newest first (``api.log_search.LogSearch``), which the
local service answers from its full-text index. Hits are grouped by job, the job with the newest
hit first; each job's header says its state as the job list last had it. A query the server
refuses (INVALID_ARGUMENT) is said under the box, and the last results stay.

``enter`` on a hit opens that job's logs (``ShellApp.open_logs``) with the search set (``n``/``N``
go from match to match there) and the cursor on that very line once the pane has loaded it.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from datetime import tzinfo
from typing import TYPE_CHECKING, ClassVar, Final

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from tui_app.api.errors import ApiCallError
from tui_app.model.filters.job_scope import JobScope
from tui_app.model.jobs.states import STATE_SYMBOL, JobState
from tui_app.model.logs.log_line import task_tag
from tui_app.model.logs.log_search import (
    SEARCH_WINDOWS,
    SearchHit,
    group_by_job,
    highlight_terms,
    logs_pattern,
    search_filter,
    since_term,
    window_label,
    with_window,
)
from tui_app.model.logs.log_text import clean
from tui_app.model.views.job_view import JobRow
from tui_app.shell.app_protocol import shell_app
from tui_app.shell.messages import JobsRefreshed
from tui_app.shell.screens.screen_toasts import ScreenToasts
from tui_app.widgets.key_footer import KeyFooter
from tui_app.widgets.line_cursor import back_binding, list_bindings

if TYPE_CHECKING:  # the clients load in the search worker, not before the screen's first frame
    from tui_app.api.log_search import EntriesPage, LogSearch

__all__ = ["DEBOUNCE_SECONDS", "SearchHitList", "SearchScreen"]

DEBOUNCE_SECONDS: Final = 0.15
"""Quiet after the last key before a search is sent: a word typed at speed sends one search,
not one per letter, and a pause shows its answer at once."""
FIRST_PAGE_SIZE: Final = 50
"""Hits of a new search's first server page, shown at once: more than a screenful, and quick to
lay out (200 hits over many jobs are some 350 rows, about 30 ms here, as long as the rest of
the answer together). The rest of ``PAGE_SIZE`` follows in the same read."""
PAGE_SIZE: Final = 200
"""Hits per read (``m`` reads the next)."""
HITS_PER_JOB: Final = 3
"""Hits shown under a job's header before ``… N more in this job`` (enter shows them): the
question is often which jobs, and a job that printed a line a thousand times would bury the
others."""
SHOWN_CHARS: Final = 400
"""Characters of a hit's line kept (around its first match): a 10k-character line would
otherwise be laid out whole for one row."""
LEAD_CHARS: Final = 24
"""Characters kept before a match that starts further into its line."""
HIGHLIGHT: Final = "bold reverse"
"""A match within a hit: reverse reads under ``NO_COLOR`` too."""


@dataclass(frozen=True)
class SearchRequest:
    """One read: which search (``serial``: an answer to an older one is dropped), the filter
    sent, the texts to highlight, and the page (None: the first)."""

    serial: int
    filter_text: str
    terms: tuple[str, ...]
    page_token: str | None = None
    jobs: frozenset[str] | None = None
    """Only these jobs' hits (the list's filter, ``JobScope``); None: every job's."""
    first_size: int | None = FIRST_PAGE_SIZE
    """The first server page's hits (``FIRST_PAGE_SIZE`` for a new search), None: all at once."""


def _matcher(terms: tuple[str, ...]) -> re.Pattern[str] | None:
    if not terms:
        return None
    return re.compile("|".join(re.escape(t) for t in terms), re.IGNORECASE)


def hit_text(hit: SearchHit, terms: tuple[str, ...], tz: tzinfo | None = None) -> Text:
    """One hit's row: its replica's tag (``M0``, a trial's ``3·M0``), its time (``MM-DD
    HH:MM:SS`` in ``tz``, the user's zone) and its first line, the matches highlighted.

    The line is the log view's cleaned text (no escape sequences reach the terminal), cut to
    ``SHOWN_CHARS`` around its first match so the match is on screen in a long line.
    """
    line = hit.line
    tag = task_tag(line.task_name)
    if line.trial_id:
        tag = f"{line.trial_id}·{tag}"
    try:
        stamp = line.when().astimezone(tz).strftime("%m-%d %H:%M:%S")
    except ValueError:
        stamp = line.timestamp[5:19].replace("T", " ")
    body = clean(line.text.split("\n", 1)[0]).text
    matcher = _matcher(terms)
    first = matcher.search(body) if matcher is not None else None
    start = max(0, first.start() - LEAD_CHARS) if first is not None else 0
    body = ("…" if start else "") + body[start : start + SHOWN_CHARS]
    text = Text(no_wrap=True, overflow="ellipsis", end="")
    text.append(f"  {tag:<5} ", style="bold")
    text.append(f"{stamp}  ", style="dim")
    offset = len(text.plain)
    text.append(body)
    if matcher is not None:
        for match in matcher.finditer(body):
            if match.end() > match.start():
                text.stylize(HIGHLIGHT, offset + match.start(), offset + match.end())
    return text


def header_text(job_id: str, count: int, state: JobState | None, more: bool) -> Text:
    """A job's header: its id, its state as the list last showed it (none for a job the list
    does not have), and how many of its hits were read (three are shown until enter unfolds
    the rest); ``more`` when the page was full, so later pages may hold more of its hits."""
    text = Text(no_wrap=True, overflow="ellipsis", end="")
    text.append(job_id, style="bold")
    if state is not None:
        text.append(f"  {STATE_SYMBOL[state]} {state.value}")
    noun = "hit" if count == 1 else "hits"
    text.append(f"  {count} {noun}{' so far · m reads on' if more else ''}", style="dim")
    return text


class SearchHitList(OptionList):
    """The hits under their jobs' headers (disabled options: the cursor steps over them), moved
    with ``j``/``k``, ``g``/``G`` as every list is."""

    BINDINGS: ClassVar[list[BindingType]] = list_bindings("search-hits")


class SearchScreen(Screen[None], ScreenToasts):
    """Every job's lines that match a text, grouped by job (module doc)."""

    CSS_PATH = "search_screen.tcss"
    shell = shell_app()

    BINDINGS: ClassVar[list[BindingType]] = [
        back_binding("search"),
        Binding("slash", "edit_query", "Query", id="search.query", tooltip="Back to the box"),
        Binding("down", "to_hits", "Hits", show=False, id="search.to-hits"),
        Binding("n", "hit(1)", "Next hit", show=False, id="search.next-hit"),
        Binding("N", "hit(-1)", "Prev hit", show=False, id="search.prev-hit"),
        Binding("right_square_bracket", "job(1)", "Next job", show=False, id="search.next-job"),
        Binding("left_square_bracket", "job(-1)", "Prev job", show=False, id="search.prev-job"),
        Binding(
            "t",
            "cycle_window",
            "Window",
            id="search.window",
            tooltip="Only lines of the last 1h, 24h, 7d, 30d, or all",
        ),
        Binding("m", "more", "More", id="search.more", tooltip="The next page of hits"),
        Binding(
            "f",
            "toggle_scope",
            "Jobs",
            id="search.scope",
            tooltip="Only the jobs the list's filter shows, or every job",
        ),
    ]

    def __init__(
        self, query: str = "", rows: list[JobRow] | None = None, scope: JobScope | None = None
    ) -> None:
        """Args:
        query: What to search for at once (``:grep TEXT``); "" waits for typing.
        rows: The job list as the App last had it: the headers' states, and the jobs
            ``scope`` keeps (the list's later polls update both).
        scope: The job list's filter when the view opened: only the jobs it shows are
            searched until ``f`` lifts it.
        """
        super().__init__()
        self.initial_query = query
        self.rows: list[JobRow] = list(rows or [])
        self.states: dict[str, JobState] = {r.job_id: r.state for r in self.rows}
        self.scope = scope if scope is not None and scope.narrows else None
        """The list's narrowing, when it narrows (``f`` turns ``scoped`` off and on)."""
        self.scoped = self.scope is not None
        """Only the jobs ``scope`` keeps are searched."""
        self.window = 0
        """Index into ``SEARCH_WINDOWS`` (``t``)."""
        self.hits: list[SearchHit] = []
        """What is shown, newest first."""
        self.next_token: str | None = None
        """Where the next page starts (None: the shown hits are all there are)."""
        self.terms: tuple[str, ...] = ()
        """The texts the shown hits matched (highlighted, and searched for in the logs)."""
        self.shown_filter = ""
        """The filter the shown hits answer."""
        self.error: str | None = None
        """Why the last search was refused (shown under the box), or None."""
        self.answers = 0
        """How many answers arrived (tests wait on it)."""
        self._serial = 0
        self._pending: SearchRequest | None = None
        self._timer: Timer | None = None
        self._row_hits: list[SearchHit | str | None] = []
        """Per option of the list: its hit, None for a job's header, the job's id for its
        ``… N more in this job`` line."""
        self.expanded: set[str] = set()
        """Jobs whose every hit read is shown (enter on ``… N more``); a new search folds all."""
        self._reader: LogSearch | None = None
        self._reader_lock = threading.Lock()
        """Kept between searches (its HTTP client); made again for a new connection."""

    # -- layout --------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static("", id="search-title")
        yield Input(
            value=self.initial_query,
            placeholder='text (any case), SEARCH("whole words"), or a filter: severity>=ERROR',
            id="search-input",
        )
        yield Static("", id="search-error")
        yield SearchHitList(id="search-hits")
        yield KeyFooter(first=("search.window", "search.more", "search.query"))

    def on_mount(self) -> None:
        self._render_title()
        self.set_focus(self.query_one(Input))
        if self.initial_query.strip():
            self._search_now()
        else:
            self._warm()

    @work(thread=True, group="search-warm", exit_on_error=False, description="Search client")
    def _warm(self) -> None:
        """Load and build the search's client while the user types its first word: the first
        build (google-cloud-logging's HTTP client, the connection) takes longer than the
        service's answer, and would otherwise stand between the pause and the first hits. A
        failure here ends this worker only (``exit_on_error``): the search reports its own."""
        self._searcher()

    @property
    def hit_list(self) -> SearchHitList:
        return self.query_one(SearchHitList)

    @property
    def searching(self) -> bool:
        """A read is on its way."""
        return self._pending is not None

    def set_query(self, query: str) -> None:
        """Search for ``query`` now (``:grep TEXT`` while this screen is open)."""
        box = self.query_one(Input)
        with box.prevent(Input.Changed):
            box.value = query
        self._search_now()

    # -- searching -------------------------------------------------------------------------------

    @on(Input.Changed, "#search-input")
    def _typed(self) -> None:
        """Search once typing pauses (``DEBOUNCE_SECONDS``), not at every key."""
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(DEBOUNCE_SECONDS, self._search_now)

    @on(Input.Submitted, "#search-input")
    def _submitted(self) -> None:
        """enter in the box: search now if the text changed, and go to the hits."""
        typed = self.query_one(Input).value
        if self._filter_for(typed) != self.shown_filter or self._timer is not None:
            self._search_now()
        if self._row_hits:
            self.action_to_hits()

    def _filter_for(self, typed: str) -> str:
        """The filter sent for ``typed`` in the current time window ("" for nothing typed)."""
        query = search_filter(typed)
        if not query:
            return ""
        window = since_term(self.shell.clock(), SEARCH_WINDOWS[self.window])
        return with_window(query, window)

    def _search_now(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        typed = self.query_one(Input).value
        filter_text = self._filter_for(typed)
        self._serial += 1
        if not filter_text:
            self._pending = None
            self._show_error(None)
            self._show_hits([], None, (), "")
            return
        request = SearchRequest(
            self._serial, filter_text, tuple(highlight_terms(typed)), jobs=self._kept_jobs()
        )
        self._read(request)

    def _kept_jobs(self) -> frozenset[str] | None:
        """The jobs searched: the scope's among the list's rows, or None for every job."""
        if self.scope is None or not self.scoped:
            return None
        return self.scope.jobs(self.rows)

    def _read(self, request: SearchRequest) -> None:
        self._pending = request
        self._render_title()
        self._read_page(request)

    @work(thread=True, exclusive=True, group="search", exit_on_error=False, description="Search")
    def _read_page(self, request: SearchRequest) -> None:
        """A page of hits, in a thread (the reads block), shown as each server page comes: a
        search the service answers by a bounded scan (or one the scope thins out) comes in
        several, some empty. A newer search cancels this one (``exclusive``: it stops reading),
        and ``_answered`` drops what still comes."""
        worker = get_current_worker()
        first = True
        try:
            searcher = self._searcher()
            pages = searcher.pages(
                request.filter_text,
                PAGE_SIZE,
                request.jobs,
                request.page_token,
                first_size=request.first_size,
            )
            for page in pages:
                if worker.is_cancelled:
                    return
                done = page.next_page_token is None
                self.app.call_from_thread(self._answered, request, page, first, done)
                first = False
        except ApiCallError as exc:
            if not worker.is_cancelled:
                self.app.call_from_thread(self._answered, request, exc, first, True)
            return
        if not worker.is_cancelled:
            self.app.call_from_thread(self._settled, request)

    def _searcher(self) -> LogSearch:
        """The project's searches on the current connection (blocking: the worker's)."""
        from tui_app.api.log_search import LogSearch

        with self._reader_lock:  # the warm-up and the first search build one, not two
            connection = self.shell.source.connection()
            reader = self._reader
            if reader is None or reader.connection is not connection:
                reader = self._reader = LogSearch(connection, self.shell.project)
            return reader

    def _answered(
        self,
        request: SearchRequest,
        answer: EntriesPage | ApiCallError,
        first: bool = True,
        done: bool = True,
    ) -> None:
        """One server page of ``request`` (``first``: its first, which replaces what a new search
        showed; ``done``: no page follows)."""
        if request.serial != self._serial or not self.is_attached:
            return  # typed on since: a newer search is on its way
        if done:
            self._pending = None
        if isinstance(answer, ApiCallError):
            self.answers += 1
            self._pending = None
            self._show_error(_refusal(answer))  # the last results stay
            self._render_title()
            return
        self._show_error(None)
        fresh = first and request.page_token is None  # a new search's first page
        if fresh:
            self.expanded = set()
        hits = answer.hits if fresh else [*self.hits, *answer.hits]
        self._show_hits(hits, answer.next_page_token, request.terms, request.filter_text)
        if done:
            self.answers += 1

    def _settled(self, request: SearchRequest) -> None:
        """The reads of ``request`` stopped with a page's worth: ``m`` reads on."""
        if request.serial != self._serial or not self.is_attached or self._pending is None:
            return
        self._pending = None
        self.answers += 1
        self._render_title()

    def _show_error(self, error: str | None) -> None:
        self.error = error
        line = self.query_one("#search-error", Static)
        line.update(Text(error or ""))
        line.display = error is not None

    # -- the hits ----------------------------------------------------------------------------------

    def _show_hits(
        self, hits: list[SearchHit], token: str | None, terms: tuple[str, ...], filter_text: str
    ) -> None:
        """Lay out ``hits`` under their jobs' headers, ``HITS_PER_JOB`` each unless expanded,
        keeping the cursor on the hit it was on (``m`` adds a page below it)."""
        listing = self.hit_list
        was = self._current_hit()
        self.hits, self.next_token, self.terms = hits, token, terms
        self.shown_filter = filter_text
        options: list[Option] = []
        self._row_hits = []
        tz = self.shell.clock().tzinfo
        more = token is not None
        for job_id, group in group_by_job(hits):
            state = self.states.get(job_id)
            options.append(Option(header_text(job_id, len(group), state, more), disabled=True))
            self._row_hits.append(None)
            shown = group if job_id in self.expanded else group[:HITS_PER_JOB]
            for hit in shown:
                options.append(Option(hit_text(hit, terms, tz)))
                self._row_hits.append(hit)
            if len(shown) < len(group):
                folded = len(group) - len(shown)
                options.append(Option(Text(f"  … {folded} more in this job: enter", style="dim")))
                self._row_hits.append(job_id)
        listing.set_options(options)
        rows = self._row_hits
        keep = next((i for i, h in enumerate(rows) if isinstance(h, SearchHit) and h == was), None)
        first = next((i for i, h in enumerate(rows) if isinstance(h, SearchHit)), None)
        listing.highlighted = keep if keep is not None else first
        self._render_title()

    def _current_hit(self) -> SearchHit | None:
        index = self.hit_list.highlighted
        if index is None or not 0 <= index < len(self._row_hits):
            return None
        row = self._row_hits[index]
        return row if isinstance(row, SearchHit) else None

    def _render_title(self) -> None:
        parts = [" Search every job's logs", f"window: {window_label(SEARCH_WINDOWS[self.window])}"]
        if self.scope is not None:
            parts.append(f"jobs: {self.scope.label()}" if self.scoped else "jobs: all (f)")
        if self.hits or self.shown_filter:
            jobs = len({h.job_id for h in self.hits})
            count = f"{len(self.hits)} hit{'s' if len(self.hits) != 1 else ''}"
            parts.append(f"{count} in {jobs} job{'s' if jobs != 1 else ''}")
            if self.next_token is not None:
                parts.append("more: m")
        if self._pending is not None:
            parts.append("searching…")
        self.query_one("#search-title", Static).update(Text(" │ ".join(parts)))

    def on_jobs_refreshed(self, message: JobsRefreshed) -> None:
        """The headers' states follow the list."""
        self.rows = list(message.rows)
        states = {r.job_id: r.state for r in message.rows}
        if states == self.states:
            return
        self.states = states
        if self.hits:
            self._show_hits(self.hits, self.next_token, self.terms, self.shown_filter)

    # -- keys ------------------------------------------------------------------------------------

    @on(OptionList.OptionSelected, "#search-hits")
    def _open_hit(self, event: OptionList.OptionSelected) -> None:
        """enter on a hit: its job's logs, the search set and the cursor on this line; on
        ``… N more``: that job's every hit read, the cursor on the first one it showed."""
        event.stop()
        hit = self._row_hits[event.option_index]
        if isinstance(hit, str):
            self.expanded.add(hit)
            following = [h for h in self.hits if h.job_id == hit][HITS_PER_JOB]
            self._show_hits(self.hits, self.next_token, self.terms, self.shown_filter)
            self.hit_list.highlighted = self._row_hits.index(following)
            return
        if hit is None:
            return
        self.shell.open_logs(hit.job_id, search=logs_pattern(self.terms), at=hit.line.key)

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_edit_query(self) -> None:
        self.set_focus(self.query_one(Input))

    def action_to_hits(self) -> None:
        if self._row_hits:
            self.set_focus(self.hit_list)

    def action_hit(self, step: int) -> None:
        """``n``/``N``: the next (previous) hit, across jobs."""
        listing = self.hit_list
        self.set_focus(listing)
        if step > 0:
            listing.action_cursor_down()
        else:
            listing.action_cursor_up()

    def action_job(self, step: int) -> None:
        """``]``/``[``: the first hit of the next (previous) job."""
        firsts = [
            i + 1 for i, h in enumerate(self._row_hits) if h is None and i + 1 < len(self._row_hits)
        ]
        if not firsts:
            return
        listing = self.hit_list
        at = listing.highlighted or 0
        if step > 0:
            target = next((i for i in firsts if i > at), firsts[0])
        else:
            current = max((i for i in firsts if i <= at), default=firsts[0])
            target = max((i for i in firsts if i < current), default=firsts[-1])
        self.set_focus(listing)
        listing.highlighted = target

    def action_cycle_window(self) -> None:
        """``t``: the next time window; the search runs again in it."""
        self.window = (self.window + 1) % len(SEARCH_WINDOWS)
        self._render_title()
        if self.query_one(Input).value.strip():
            self._search_now()

    def action_toggle_scope(self) -> None:
        """``f``: search every job, or again only the jobs the list's filter shows."""
        if self.scope is None:
            self.notify("The job list shows every job: every job is searched.", timeout=3)
            return
        self.scoped = not self.scoped
        self._render_title()
        if self.query_one(Input).value.strip():
            self._search_now()

    def action_more(self) -> None:
        """``m``: the next page of hits, added below the shown ones."""
        if self.next_token is None or not self.shown_filter:
            self.notify("Every hit is shown." if self.hits else "Nothing to read on.", timeout=2)
            return
        if self._pending is not None:
            return
        self._serial += 1
        jobs = self._kept_jobs()
        request = SearchRequest(
            self._serial, self.shown_filter, self.terms, self.next_token, jobs, first_size=None
        )
        self._read(request)


def _refusal(exc: ApiCallError) -> str:
    """What the line under the box says about a failed search: for a filter the server cannot
    read, its own words about the filter ("Invalid filter: Missing ')' ..."), else the error."""
    if exc.status == "INVALID_ARGUMENT":
        for violation in exc.violations:
            if violation.get("field") == "filter" and violation.get("description"):
                return str(violation["description"])
        return exc.message.removeprefix("Field: filter Error: ")
    return str(exc)
