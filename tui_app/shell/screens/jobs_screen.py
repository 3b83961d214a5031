"""The home screen: every job at a glance, filtered, sorted, folded, acted on."""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from functools import partial
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Input, Static

from tui_app.model.filters.job_scope import JobScope
from tui_app.model.filters.list_filter import (
    FilterIndex,
    ListFilter,
    filter_rows,
    parse_list_filter,
    refine,
)
from tui_app.model.views.job_view import (
    JobRow,
    SortColumn,
    count_by_state,
    display_rows,
    find_in_default_order,
    next_sort,
    sort_description,
    sort_rows,
    warm_haystacks,
)
from tui_app.shell.app_protocol import shell_app
from tui_app.shell.messages import ConnectionChanged, JobsRefreshed, JobsSubmitted
from tui_app.widgets.job_table import JobTable, longest_id_of
from tui_app.widgets.key_footer import KeyFooter
from tui_app.widgets.status_header import StatusHeader

REFINE_SHARE = 4
"""A keystroke filters the previous result when it holds at most 1/REFINE_SHARE of the list."""
WARM_PAUSE_SECONDS = 0.002
"""Between two steps of making a new list's filter text (~5 ms each): 100k rows take ~0.2 s
once painted, and a frame or a key waits for one step at most. Typed sooner, a filter makes
what is missing itself."""
_PARTNER_WHY = {"resubmitted from it": "the job it was resubmitted from"}
"""``diff_partner``'s reasons as the diff's header words them after "against"."""


def _age_key(row: JobRow | None, job_id: str) -> tuple[float, str]:
    """Older first: by creation (the id's stamp when the list has no createTime), then id."""
    when = (row.created or row.stamp) if row is not None else None
    return (when.timestamp() if when is not None else float("-inf"), job_id)


class JobsScreen(Screen[None]):
    """Rows keyed by job id; refreshes keep the cursor, the marks and the scroll position."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "filter", "Filter", id="jobs.filter", tooltip="Regex; !, state:, label:"),
        Binding("escape", "clear", "Clear", show=False, id="jobs.clear"),
        Binding(
            "z", "faults", "Faults", id="jobs.faults", tooltip="Only FAILED, CANCELLED and stalled"
        ),
        Binding("enter,d", "describe", "Describe", id="jobs.describe"),
        Binding("y", "yaml", "YAML", id="jobs.yaml"),
        Binding("l", "logs", "Logs", id="jobs.logs", tooltip="Live logs of every replica"),
        Binding(
            "s",
            "search_logs",
            "Search logs",
            show=False,
            id="jobs.search-logs",
            tooltip="Every job's log lines holding a text, by job (:grep TEXT)",
        ),
        Binding("x,ctrl+d", "cancel_jobs", "Cancel", id="jobs.cancel"),
        Binding("M", "metrics", "Metrics", id="jobs.metrics", tooltip="Live metric curves"),
        Binding(
            "S",
            "stacks",
            "Stacks",
            show=False,
            id="jobs.stacks",
            tooltip="Every replica's Python threads now (where a hung job waits)",
        ),
        Binding("R", "resubmit", "Resubmit", id="jobs.resubmit"),
        Binding("E", "edit", "Edit+submit", id="jobs.edit", tooltip="A copy in the builder"),
        Binding("n", "new", "New job", show=False, id="jobs.new", tooltip="The builder, empty"),
        Binding("o", "cycle_sort", "Sort", id="jobs.sort", tooltip="Next sort column"),
        Binding("O", "reverse_sort", "Reverse", show=False, id="jobs.sort-reverse"),
        Binding("minus", "fold", "Fold", show=False, id="jobs.fold", tooltip="Fold this base name"),
        Binding("F", "fold_all", "Fold all", show=False, id="jobs.fold-all"),
        Binding("c", "copy_id", "Copy id", show=False, id="jobs.copy-id"),
        Binding(
            "D",
            "diff",
            "Diff",
            show=False,
            id="jobs.diff",
            tooltip="Two marked jobs, or this one against its earlier run",
        ),
    ]

    shell = shell_app()

    sort_column: var[SortColumn] = var(SortColumn.DEFAULT)
    """The column the list is sorted by (DEFAULT: base name, then newest first)."""
    sort_reverse: var[bool] = var(False)
    """Flip the sort column's natural direction."""
    faults_only: var[bool] = var(False)
    """Show only FAILED, CANCELLED and stalled jobs (``z``: ``JobRow.is_fault``)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[JobRow] = []
        self._index = FilterIndex([])
        """The sorted rows (faults only, when on), indexed for fast filtering."""
        self._filtered: Sequence[JobRow] = ()
        self._filter: ListFilter = parse_list_filter("")
        """The filter the list shows: the last one typed that could be used as typed."""
        self._filter_error: str | None = None
        """Why the text in the box is not that filter (shown whole above the box), or None."""
        self._folded: set[str] = set()
        self._select_after: str | None = None
        self._loaded = False
        self._longest_id = 0

    @property
    def job_scope(self) -> JobScope:
        """What the list narrows to (its filter, ``z``): the log search searches those jobs."""
        return JobScope(self._filter, self.faults_only)

    @property
    def table(self) -> JobTable:
        return self.query_one(JobTable)

    def compose(self) -> ComposeResult:
        yield StatusHeader(id="status")
        yield Static("", id="banner")
        yield JobTable(id="jobs")
        yield Static("", id="filter-error")
        with Horizontal(id="filter-bar"):
            yield Input(
                placeholder="/ filter: regex, !invert, state:FAILED, label:k=v", id="filter"
            )
            yield Static("", id="filter-info")
        # At 80 columns: the keys to find, filter, read and act on a failure, and "? Help".
        yield KeyFooter(
            secondary=("toggle_mark", "activate", "yaml", "edit", "resubmit", "cycle_sort", "quit")
        )

    async def on_mount(self) -> None:
        header = self.query_one(StatusHeader)
        header.profile = self.shell.source.label
        header.project = self.shell.project
        self.table.now = self.shell.clock()
        self._set_loading(True)
        self.set_interval(1.0, self._tick)
        self.table.focus()
        await self.shell.list_mounted()  # may bring the list begun at launch, for this frame
        listed = self.shell.last_refresh
        if listed is not None:
            self.on_jobs_refreshed(listed)
            header.profile = self.shell.source.label  # connected by now: with its address

    def _set_loading(self, loading: bool) -> None:
        """Show or hide the table's loading indicator, and the footer's table keys with it.

        A loading widget's bindings are inactive, and Textual does not recompute the footer
        when ``loading`` changes: without the refresh the footer could keep the list's keys
        (space Mark, enter Open) hidden after the first list arrived.
        """
        if self.table.loading != loading:
            self.table.loading = loading
            self.refresh_bindings()

    def _tick(self) -> None:
        self.table.now = self.shell.clock()

    # -- data ----------------------------------------------------------------------------------

    def on_jobs_refreshed(self, message: JobsRefreshed) -> None:
        header = self.query_one(StatusHeader)
        header.refreshed = message.fetched_at
        header.listing = message.partial
        if (not message.changed or message.rows is self.rows) and self._loaded:
            return  # nothing new (or the list this screen took as it mounted, handed out again)
        self.rows = message.rows
        self._set_loading(False)
        self._loaded = True
        header.counts = count_by_state(self.rows)
        self._resort()
        if not message.partial:
            self.set_timer(WARM_PAUSE_SECONDS, partial(self._warm_haystacks, self.rows, 0))

    def _warm_haystacks(self, rows: list[JobRow], start: int) -> None:
        """Make the filter's text of the list just painted, a step at a time between frames
        and keys (see ``warm_haystacks``); a newer list takes over.

        Steps on a timer, not one after another: the table's first frame of a new list is
        made after the screen goes idle, and steps queued back to back held it back ~0.2 s.
        """
        if rows is self.rows:
            after = warm_haystacks(rows, start)
            if after is not None:
                self.set_timer(WARM_PAUSE_SECONDS, partial(self._warm_haystacks, rows, after))

    def on_connection_changed(self, message: ConnectionChanged) -> None:
        banner = self.query_one("#banner", Static)
        header = self.query_one(StatusHeader)
        header.profile = message.label
        header.connected = message.error is None
        if message.error is None:
            banner.display = False
            return
        self._set_loading(False)
        banner.update(
            f"Disconnected from {message.label}: {message.error}\n"
            "Retrying every 2 s; the list below is the last one received."
        )
        banner.display = True

    def on_jobs_submitted(self, message: JobsSubmitted) -> None:
        self._select_after = message.job_ids[0]

    def _reveal(self, job_id: str) -> bool:
        """Widen the view so the new ``job_id`` shows (k9s selects what you just made), and say
        what was given up; False when nothing hides it, or when it is not in the list yet."""
        row = next((r for r in self.rows if r.job_id == job_id), None)
        if row is None:
            return False
        undone: list[str] = []
        box = self.query_one("#filter", Input)
        if box.value and (self._filter_error or not self._filter.matches(row)):
            box.value = ""  # its Changed event reparses "" again: harmless
            self._filter = parse_list_filter("")
            self._filter_error = None
            self._show_filter_error()
            undone.append("filter cleared")
        if self.faults_only and not row.is_fault:
            self.set_reactive(JobsScreen.faults_only, False)
            undone.append("faults-only off")
        if row.base in self._folded:
            self._folded.discard(row.base)
            undone.append(f"{row.base} unfolded")
        if not undone:
            return False
        self.notify(f"{', '.join(undone).capitalize()} to show {job_id}.")
        return True

    def _resort(self) -> None:
        # The poller delivers rows in the default order already: sort only for other columns.
        rows = self.rows
        if self.sort_column is not SortColumn.DEFAULT or self.sort_reverse:
            rows = sort_rows(rows, self.sort_column, self.sort_reverse, self.shell.clock())
        # Once per list, not per keystroke, and of the whole list: the columns stay put while a
        # filter is typed or z hides rows (a TIER column coming and going was seen as a bug).
        self._longest_id = longest_id_of(rows)
        if self.faults_only:
            rows = [r for r in rows if r.is_fault]
        self._index = FilterIndex(rows)
        self._refilter()

    def _refilter(self, previous: ListFilter | None = None) -> None:
        # Narrowing walks the previous result's scattered rows: ~3x slower per row than the
        # index's contiguous haystacks, so it pays only once that result is small.
        small = len(self._filtered) * REFINE_SHARE <= len(self._index)
        narrowed = refine(self._filtered, previous, self._filter) if previous and small else None
        self._filtered = (
            narrowed if narrowed is not None else filter_rows(self._index, self._filter)
        )
        self._show()

    def _show(self) -> None:
        rows = display_rows(self._filtered, self._folded, self.sort_column)
        self.table.sort_column = self.sort_column
        self.table.sort_reverse = self.sort_reverse
        plain = not self._folded or self.sort_column is not SortColumn.DEFAULT
        cursor_at = self._cursor_in(self._filtered) if plain else None
        self.table.set_rows(rows, cursor_at=cursor_at, longest_id=self._longest_id)
        wanted = self._select_after
        if wanted:
            if any(isinstance(r, JobRow) and r.job_id == wanted for r in rows):
                self.table.move_to_key(wanted)
                self._select_after = None
            elif self._reveal(wanted):
                self._resort()  # shows it, and selects it on the way
                return
        self._show_info()

    def _show_info(self) -> None:
        """The status line: shown/total, the modes that hide rows, the marks, filter errors."""
        info = self.query_one("#filter-info", Static)
        parts = [f"{len(self._filtered)}/{len(self.rows)}"]
        if self.faults_only:
            parts.append("faults only")
        if self.table.marked:
            parts.append(f"{len(self.table.marked)} marked")
        if self._filter_error:
            parts.append("filter not applied ↑")
        if self.sort_column not in self.table.shown_sorts:  # a resize hid its column
            parts.append("sorted by " + sort_description(self.sort_column, self.sort_reverse))
        info.update(" · ".join(parts))

    def on_resize(self) -> None:
        self._show_info()

    def on_job_table_marks_changed(self, message: JobTable.MarksChanged) -> None:
        self._show_info()

    def _cursor_in(self, rows: Sequence[JobRow]) -> int | None:
        """Where the cursor's row is in ``rows`` (a subsequence of the index's rows, in its
        order), -1 when it is not there, None when unknown (the row came from an older list).

        A bisect: the table's own search walks every row, which costs more than the filter
        itself on a 100k list. In the default order, by the rows' sort key; in any other, by
        the index's ordinals (a map of every row to its place, built once per index: 34 ms for
        100k, which the default order, the usual one, no longer pays on each new list).
        """
        current = self.table.current
        if not isinstance(current, JobRow):
            return None
        index = self._index
        if self.sort_column is SortColumn.DEFAULT and not self.sort_reverse:
            if find_in_default_order(index.rows, current) is None:
                return None
            found = find_in_default_order(rows, current)
            return -1 if found is None else found
        try:
            at = bisect_left(rows, index.ordinal(current), key=index.ordinal)
        except KeyError:
            return None
        return at if at < len(rows) and rows[at] is current else -1

    def watch_faults_only(self) -> None:
        if self.is_mounted:
            self._resort()

    # -- filter ----------------------------------------------------------------------------------

    def action_filter(self) -> None:
        # Focus now, not after a refresh: keys typed right after "/" belong to the filter.
        # (The bar is always laid out: a box shown on demand drops keys typed before its
        # first layout.)
        self.set_focus(self.query_one("#filter", Input))

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        """Filter as the user types; a filter that cannot be used as typed (``mnist(``,
        ``state:BOGUS``) keeps the last good result on screen and says why, whole, above the
        box, rather than emptying the list under a message cut to the bar's width."""
        parsed = parse_list_filter(event.value)
        self._filter_error = parsed.error
        self._show_filter_error()
        if parsed.error:
            self._show_info()
            return
        previous, self._filter = self._filter, parsed
        self._refilter(previous)

    def _show_filter_error(self) -> None:
        line = self.query_one("#filter-error", Static)
        if self._filter_error:
            line.update(f"Filter not applied: {self._filter_error}")
        line.display = bool(self._filter_error)

    @on(Input.Submitted, "#filter")
    def _filter_done(self) -> None:
        self.table.focus()
        self._show()

    def action_clear(self) -> None:
        """esc: leave the filter box; a second esc (or esc from the list) clears everything."""
        box = self.query_one("#filter", Input)
        if box.has_focus and not box.value:
            self.table.focus()
        elif box.value or self.faults_only:
            box.value = ""
            self.faults_only = False
            self.table.focus()
        elif self.table.marked:
            self.table.clear_marks()
        self._show()

    def action_faults(self) -> None:
        self.faults_only = not self.faults_only

    # -- sort and fold ---------------------------------------------------------------------------

    def action_cycle_sort(self) -> None:
        self.sort_column = next_sort(self.sort_column, self.table.shown_sorts)
        self.sort_reverse = False
        self._sorted()

    def action_reverse_sort(self) -> None:
        self.sort_reverse = not self.sort_reverse
        self._sorted()

    def _sorted(self) -> None:
        self._resort()
        order = sort_description(self.sort_column, self.sort_reverse)
        self.notify(f"Sorted by {order}.", timeout=1.5)

    def action_fold(self) -> None:
        key = self.table.cursor_key
        if key is None:
            return
        base = key.removeprefix("group:") if key.startswith("group:") else None
        if base is None:
            row = next((r for r in self._filtered if r.job_id == key), None)
            base = row.base if row else None
        if base is None:
            return
        if base in self._folded:
            self._folded.discard(base)
        elif sum(r.base == base for r in self._filtered) < 2:
            self.notify(f"{base} has one job here: nothing to fold.", timeout=2)
            return
        else:
            self._folded.add(base)
        self._show()
        if base in self._folded:
            self.table.move_to_key(f"group:{base}")

    def action_fold_all(self) -> None:
        # Families of one job stay rows: a group line would only hide the job's state.
        bases = {base for base, n in Counter(r.base for r in self._filtered).items() if n > 1}
        if not bases:
            self.notify("Every name here has one job: nothing to fold.", timeout=2)
            return
        self._folded = set() if self._folded >= bases and bases else bases
        self._show()

    # -- job actions -------------------------------------------------------------------------

    def _selected(self) -> list[str]:
        """The marked jobs, or the one under the cursor (a folded group means all its jobs)."""
        if self.table.marked:
            return sorted(self.table.marked)
        key = self.table.cursor_key
        if key is None:
            return []
        if key.startswith("group:"):
            base = key.removeprefix("group:")
            return [r.job_id for r in self._filtered if r.base == base]
        return [key]

    def current_job_id(self) -> str | None:
        """The job under the cursor (None on a folded group or an empty list)."""
        return self._current()

    def _current(self) -> str | None:
        key = self.table.cursor_key
        if key is None or key.startswith("group:"):
            return None
        return key

    def _one_job(self, doing: str) -> str | None:
        """The job under the cursor for an action on one job; on a folded group, say why not
        (which of its jobs is meant is not for the list to guess)."""
        job_id = self._current()
        key = self.table.cursor_key
        if job_id is None and key is not None:
            base = key.removeprefix("group:")
            self.notify(
                f"{doing} works on one job and {base} is a folded group: "
                "unfold it (enter or -) and pick a job.",
                severity="warning",
            )
        return job_id

    def on_job_table_group_mark_requested(self, message: JobTable.GroupMarkRequested) -> None:
        """space on a folded group marks every job it stands for (or unmarks them all)."""
        members = {r.job_id for r in self._filtered if r.base == message.base}
        marked = set(self.table.marked)
        self.table.set_marks(marked - members if members <= marked else marked | members)

    def action_describe(self, yaml: bool = False) -> None:
        job_id = self._one_job("YAML" if yaml else "Describe")
        if job_id is not None:
            self.shell.open_describe(job_id, yaml=yaml)

    def action_logs(self) -> None:
        job_id = self._one_job("Logs")
        if job_id is not None:
            self.shell.open_logs(job_id)

    def action_search_logs(self) -> None:
        """``s``: search every job's logs, not only the one under the cursor."""
        self.shell.open_search()

    def action_metrics(self) -> None:
        job_id = self._one_job("Metrics")
        if job_id is not None:
            self.shell.open_metrics(job_id)

    def action_stacks(self) -> None:
        job_id = self._one_job("Stacks")
        if job_id is not None:
            self.shell.open_stacks(job_id)

    def action_yaml(self) -> None:
        self.action_describe(yaml=True)

    def on_job_table_activated(self, message: JobTable.Activated) -> None:
        """enter opens what is under the cursor: a job's detail, or a folded group's jobs.
        (The keys that act on one job, d, y, l, R, E, say why not on a group instead.)"""
        if message.key.startswith("group:"):
            self.action_fold()
        else:
            self.action_describe()

    def action_cancel_jobs(self) -> None:
        ids = self._selected()
        if not ids:
            return
        states = {r.job_id: r.state for r in self.rows}
        done = self.table.clear_marks if self.table.marked else None
        self.shell.confirm_cancel(ids, states, on_confirmed=done)

    def action_resubmit(self) -> None:
        job_id = self._one_job("Resubmit")
        if job_id:
            self.shell.resubmit(job_id)

    def action_edit(self) -> None:
        job_id = self._one_job("Edit")
        if job_id:
            self.shell.edit_and_resubmit(job_id)

    def action_new(self) -> None:
        self.shell.open_builder(new=True)

    def action_copy_id(self) -> None:
        job_id = self._one_job("Copy id")
        if job_id:
            self.app.copy_to_clipboard(job_id)
            self.notify(f"Copied {job_id}.")

    def action_diff(self) -> None:
        """``D``: two marked jobs side by side (older on the left); one job against the one it
        was resubmitted from, else the newest earlier job of its name; on a folded group, its
        newest job against the one before it. Says why not when there is no such pair."""
        marked = sorted(self.table.marked)
        if len(marked) == 1:
            self.notify(
                "1 job marked: mark exactly two jobs (space) to compare them, or clear the "
                "mark (esc) and press D on one job to compare it with its earlier run.",
                severity="warning",
            )
        elif len(marked) > 2:
            self.notify(
                f"{len(marked)} jobs marked: mark exactly two jobs to compare them.",
                severity="warning",
            )
        elif marked:
            by_id = {r.job_id: r for r in self.rows}
            older, newer = sorted(marked, key=lambda i: _age_key(by_id.get(i), i))
            self.shell.open_diff(older, newer, "two marked jobs, the older on the left")
        elif (key := self.table.cursor_key) is None:
            return
        elif key.startswith("group:"):
            base = key.removeprefix("group:")
            family = sorted(
                (r for r in self._filtered if r.base == base), key=lambda r: _age_key(r, r.job_id)
            )
            if len(family) >= 2:
                self.shell.open_diff(
                    family[-2].job_id,
                    family[-1].job_id,
                    f"the newest {base} job against the one before it",
                )
        else:
            self.diff_with_partner(key)

    def diff_with_partner(self, job_id: str) -> None:
        """Compare ``job_id`` with the job it was resubmitted from, else the newest earlier job
        of its name (``D`` on one job, ``:diff ID``); a toast says why when there is neither."""
        from tui_app.api.job_compare import ResubmitHistory
        from tui_app.model.views.job_diff import diff_partner

        by_id = {r.job_id: r for r in self.rows}
        sources = ResubmitHistory().sources(self.shell.project)
        partner = diff_partner(job_id, by_id.keys(), sources)
        if partner is None:
            row = by_id.get(job_id)
            base = row.base if row is not None else job_id
            self.notify(
                f"No earlier job named {base}, and {job_id} was not resubmitted from one: "
                "mark two jobs (space) and press D.",
                severity="warning",
            )
            return
        why = _PARTNER_WHY.get(partner.reason, partner.reason)
        self.shell.open_diff(partner.job_id, job_id, f"against {why}")

    def set_now(self, now: datetime) -> None:
        self.table.now = now
