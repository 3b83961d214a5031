"""Live per-replica logs of one job: one view per replica, a merged view, search and filters.

One feed per job (a thread worker running ``LogFeed.follow``) feeds every view: each line
goes to its replica's view and to the merged ``all`` view. Views are created when a replica
first shows up, so a job's real cluster decides the tabs.

Where replicas run on other nodes (the local service's Ray executor), the picker (``p``) and the
tab line name each one's node address, read from the service's ``:metrics`` answer when a replica
first shows up or the job moves on (to RUNNING: placed); on one machine, or a backend without
``:metrics``, nothing is added.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import subprocess
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, cast

from rich.cells import cell_len
from textual import on, work
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.markup import escape
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import ContentSwitcher, Input, Static
from textual.worker import get_current_worker

from tui_app.api.errors import ApiCallError
from tui_app.config.locations import saved_logs_dir
from tui_app.model.jobs.task_names import SERVICE_TASK, job_task_names
from tui_app.model.jobs.wire import as_mapping
from tui_app.model.logs.log_line import LogLine, task_tag
from tui_app.model.logs.log_text import CleanLine
from tui_app.model.logs.severity import SEVERITIES, severity_name
from tui_app.model.running.restarts import restart_line_task
from tui_app.model.views.replica_nodes import ReplicaNode, nodes_by_task
from tui_app.model.views.trials import trial_of
from tui_app.shell.app_protocol import shell_app
from tui_app.shell.screens.picker_screen import PickerScreen
from tui_app.shell.screens.prompt_screen import ask_where_to_save
from tui_app.shell.screens.screen_toasts import ScreenToasts
from tui_app.widgets.key_footer import KeyFooter
from tui_app.widgets.line_cursor import back_binding
from tui_app.widgets.log_view import FilterMode, LogView, TimestampMode

if TYPE_CHECKING:  # the clients load in the stream worker, not before the first frame
    from tui_app.api.log_feed import LogFeed

ALL = "all"
SEVERITY_FLOORS = ("DEFAULT", "INFO", "WARNING", "ERROR")
TIMESTAMP_MODES: tuple[TimestampMode, ...] = ("off", "utc", "local", "relative")
CONTEXT_STEPS = (0, 2, 5, 10)
VISIBLE_POLL_SECONDS = 0.25
HIDDEN_POLL_SECONDS = 5.0
CLOUD_HIDDEN_POLL_SECONDS = 15.0
"""On Vertex AI, while the pane is hidden (visible: ``log_stream.CLOUD_POLL_SECONDS``)."""
SCREEN_BATCH = 5_000
"""The first tail read when the pane opens: painted before the rest of the history fills in."""
APPEND_CHUNK = 1_000
"""Lines appended between two turns of the event loop (``_append_in_chunks``): ~3 ms each."""
HISTORY_BATCH = 5_000
"""Lines per screen update: a 100k-line tail is shown over several frames, not in one 0.8 s."""


@dataclass
class LinesArrived(Message, bubble=False):
    """A batch of new lines from the stream (never one message per line)."""

    lines: list[LogLine]


@dataclass
class LinesSkipped(Message, bubble=False):
    """The stream jumped over a backlog to the tail: ``lines`` replace what the views show (the
    lines between stay reachable by scrolling up, which reads history)."""

    lines: list[LogLine]


@dataclass
class StreamStatus(Message, bubble=False):
    """The stream failed (``error``, being retried), recovered (None), ended (``ended``), or
    stopped on an error that retrying cannot mend (``stopped``: a 401, a deleted job)."""

    error: str | None
    ended: bool = False
    stopped: bool = False


REPLICA_KEYS = Binding.Group("Replica")
"""``[`` and ``]``: one item in the footer, ``[ ] Replica``."""
FOOTER_FIRST = (
    "logs.search",
    "logs.first-error",
    "logs.follow",
    "logs.all",
    "logs.prev",
    "logs.fullscreen",
    "logs.save",
    "logs.severity",
    "logs.wrap",
    "logs.timestamps",
)
"""The footer's keys, most useful first: at 80 columns it has room for the first six (then
``? Help``, which lists the rest). ``esc`` comes after them: it backs out of every screen."""


def _view_id(task: str) -> str:
    return "view-" + "".join(c if c.isalnum() else "-" for c in task)


class LogsScreen(Screen[None], ScreenToasts):
    """``l`` from the job list."""

    shell = shell_app()

    BINDINGS: ClassVar[list[BindingType]] = [
        back_binding("logs"),
        Binding(
            "left_square_bracket",
            "switch(-1)",
            "Prev replica",
            id="logs.prev",
            group=REPLICA_KEYS,
        ),
        Binding(
            "right_square_bracket",
            "switch(1)",
            "Next replica",
            id="logs.next",
            group=REPLICA_KEYS,
        ),
        Binding("a", "show_all", "All", id="logs.all", tooltip="All replicas merged by time"),
        Binding("p", "pick", "Replicas", show=False, id="logs.pick"),
        Binding("s", "toggle_follow", "Follow", id="logs.follow"),
        Binding("G,end", "resume", "Resume", show=False, id="logs.resume"),
        Binding("w", "toggle_wrap", "Wrap", id="logs.wrap"),
        Binding("t", "cycle_timestamps", "Time", id="logs.timestamps"),
        Binding("L", "cycle_severity", "Level", id="logs.severity", tooltip="Minimum severity"),
        Binding("slash", "prompt('search')", "Search", id="logs.search"),
        Binding("n", "next_match", "Next", show=False, id="logs.next-match"),
        Binding("N", "previous_match", "Prev match", show=False, id="logs.prev-match"),
        Binding("ampersand", "prompt('keep')", "Keep", show=False, id="logs.keep"),
        Binding("exclamation_mark", "prompt('drop')", "Drop", show=False, id="logs.drop"),
        Binding("C", "cycle_context", "Context", show=False, id="logs.context"),
        Binding("e", "first_error", "First error", id="logs.first-error"),
        Binding("ctrl+s", "save", "Save", id="logs.save"),
        Binding("c", "copy_line", "Copy line", show=False, id="logs.copy"),
        Binding("v", "pager", "Pager", show=False, id="logs.pager"),
        Binding("m", "marker", "Mark time", show=False, id="logs.marker"),
        Binding("f", "fullscreen", "Full", id="logs.fullscreen"),
        Binding(
            "S",
            "stacks",
            "Stacks",
            show=False,
            id="logs.stacks",
            tooltip="The Python threads of the replica shown (of every one from all) now",
        ),
    ]

    current: reactive[str] = reactive(ALL)
    """The view shown: a task name or ``all``."""

    def __init__(
        self,
        job_id: str,
        task: str | None = None,
        trial: str | None = None,
        max_lines: int = 100_000,
        *,
        search: str = "",
        at: tuple[str, str] | None = None,
    ) -> None:
        """Args:
        job_id: The job.
        task: Open on this replica's view (None: every replica merged).
        trial: Only this trial's lines.
        max_lines: Lines each view keeps.
        search: Open with this search set (a regex, as ``/`` takes it): its matches are
            highlighted and ``n``/``N`` go from one to the next, as after ``/``.
        at: The key (timestamp, insertId) of a line to put the cursor on once the merged view
            holds it (a search hit): the view stops following there. A line older than the
            lines the pane loads is reached by scrolling up, then ``n``/``N``.
        """
        super().__init__()
        self.job_id = job_id
        self.max_lines = max_lines
        """Lines each view keeps (history fetched at the top may take it to twice that)."""
        self.trial = trial
        self.set_reactive(LogsScreen.current, task or ALL)
        self.tasks: list[str] = []
        self.job: dict[str, Any] | None = None
        self._stop = threading.Event()
        self._prompt_mode: Literal["search"] | FilterMode = "search"
        self._ctx_lines = 0
        self._floor = 0
        self._ts_mode = 0
        self._filter: tuple[FilterMode, str] | None = None
        self._search = search
        self.goto: tuple[str, str] | None = at
        """The line to put the cursor on when it arrives (``at``); None once done."""
        self.status = ""
        self.stopped = False
        self.error: str | None = None
        self._feed: LogFeed | None = None
        """Set by the stream worker; the history workers page back through it."""
        self._skips = 0
        """How many times the pane skipped ahead: history asked for before a skip is dropped.
        Once it did, the title says so: the views no longer hold every line in between."""
        self._info_text = ""
        """What the info bar shows (``_render_info``)."""
        self._wrap_note = ""
        """Set when ``n``/``N`` went past an end and on from the other (vim says so too); the
        next match or search clears it."""
        self._following = True
        """The shown view follows, as of the last info bar: the stream worker reads it (it may
        not query widgets) to know whether it may jump over a backlog."""
        self.nodes: dict[str, ReplicaNode] = {}
        """Each replica's node (of the trial, for a trial's logs); empty on one machine."""
        self.listed_tasks: set[str] | None = set()
        """The replicas the last ``:metrics`` read listed: a new view for one of them needs no
        read. None: the backend has no ``:metrics`` (nothing to read, ever)."""
        self._nodes_reading = False
        """A ``:metrics`` read for the nodes is on its way (``_read_nodes_if_unlisted``)."""
        self._nodes_asked_again = False
        """A view came meanwhile: look again when that read has answered."""

    # -- layout --------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static("", id="logs-title")
        yield Static("", id="logs-tabs")
        with ContentSwitcher(initial=_view_id(ALL), id="logs-views"):
            yield LogView(id=_view_id(ALL), classes="log-view", max_lines=self.max_lines)
        with Horizontal(id="logs-bar"):
            yield Input(placeholder="", id="logs-prompt")
            yield Static("", id="logs-info")
        yield KeyFooter(first=FOOTER_FIRST)

    def on_mount(self) -> None:
        self.view(ALL).show_tags = True
        if self._search:  # opened from a search: the other views get it in _apply_settings
            self.view(ALL).search(self._search)
        self._render_title()
        self._fetch_job_then_stream()

    def on_unmount(self) -> None:
        self._stop.set()
        for view in self.query(LogView):  # let the lines go even if something holds the screen
            view.clear()

    def view(self, task: str) -> LogView:
        return self.query_one(f"#{_view_id(task)}", LogView)

    @property
    def active(self) -> LogView:
        return self.view(self.current)

    def _ensure_view(self, task: str) -> None:
        if task in self.tasks:
            return
        self.tasks.append(task)
        order = {t: i for i, t in enumerate(self._expected_tasks())}
        self.tasks.sort(key=lambda t: (order.get(t, 999), t))
        view = LogView(id=_view_id(task), classes="log-view", max_lines=self.max_lines)
        view.display = False  # the switcher shows only the current view
        self.query_one(ContentSwitcher).mount(view)
        self._apply_settings(view)
        if task == self.current:  # opened on this replica (a trial's or a task's logs)
            self.query_one(ContentSwitcher).current = _view_id(task)
            view.focus()
        self._render_tabs()
        self._read_nodes_if_unlisted()

    def _read_nodes_if_unlisted(self) -> None:
        """Read the nodes when a replica with a view is not in the last answer. A replica's
        first lines (its package's install) come while the job is PREPARING, before the service
        lists it: the job's move to RUNNING (``_state_moved``) asks again.

        One read at a time: the replicas of a batch of lines each get a view, one after the
        other, and each asked while the first read was on its way (a second read, or a fourth).
        What asks meanwhile is looked at again when that read has answered.
        """
        listed = self.listed_tasks
        if listed is None or all(t in listed or t == SERVICE_TASK for t in self.tasks):
            return
        if self._nodes_reading:
            self._nodes_asked_again = True
            return
        self._nodes_reading = True
        self._read_nodes()

    def _label(self, task: str) -> str:
        """A replica's name, with its node's address when it runs on another node."""
        node = self.nodes.get(task)
        return f"{task} · {node.brief}" if node else task

    @work(thread=True, exclusive=True, group="logs-nodes", exit_on_error=False, description="Nodes")
    def _read_nodes(self) -> None:
        """Which node each replica runs on (a small read: the answer carries no samples)."""
        from tui_app.api.metrics_client import NO_SAMPLES_SINCE

        worker = get_current_worker()
        answer: tuple[dict[str, ReplicaNode], set[str] | None] | None = None
        try:
            connection = self.shell.source.connection()
            if connection.vertex:  # Vertex AI has no :metrics; it places replicas itself
                metrics = None
            else:
                with connection.metrics(self.shell.project) as client:
                    metrics = client.read(self.job_id, NO_SAMPLES_SINCE)
            if metrics is None:  # no :metrics for this job here: nothing to read, ever
                answer = ({}, None)
            else:
                placement = metrics.placement()
                listed = {r.task_name for r in metrics.replicas} | {
                    p.task_name for p in placement if p.trial_id == self.trial
                }
                answer = (nodes_by_task(placement, self.trial), listed)
        except ApiCallError:
            pass  # the service is away: a new replica or the job's next state asks again
        finally:
            if not worker.is_cancelled:
                self.app.call_from_thread(self._nodes_read, answer)

    def _nodes_read(self, answer: tuple[dict[str, ReplicaNode], set[str] | None] | None) -> None:
        """A read has ended, with the nodes and the replicas listed (None: no answer)."""
        self._nodes_reading = False
        if answer is not None:
            self._nodes_arrived(*answer)
        if self._nodes_asked_again:
            self._nodes_asked_again = False
            self._read_nodes_if_unlisted()

    def _nodes_arrived(self, nodes: dict[str, ReplicaNode], listed: set[str] | None) -> None:
        self.listed_tasks = listed
        if nodes != self.nodes:
            self.nodes = nodes
            if self.is_attached:
                self._render_tabs()

    def _expected_tasks(self) -> list[str]:
        """The replicas' views in the platform's order, then ``service`` (the rule ``tui-app
        jobs logs --task-name`` checks names against); before the job is read, a BASIC one's."""
        ti = (self.job or {}).get("trainingInput") or {}
        return list(job_task_names({"trainingInput": ti}) or (SERVICE_TASK,))

    def _render_title(self) -> None:
        state = self._shown_state(self.job)
        parts = [f" Logs of {self.job_id}", f"trial {self.trial} {state}" if self.trial else state]
        if self.error:
            verb = "stopped" if self.stopped else "reconnecting"
            parts.append(f"{verb}: {self.error}")
        elif self.status:
            parts.append(self.status)
        if self._skips:
            parts.append("skipped ahead: older lines load at the top")
        self.query_one("#logs-title", Static).update(" │ ".join(parts))

    def _render_tabs(self) -> None:
        names = [ALL, *self.tasks]
        shown = []
        for name in names:
            label = "all" if name == ALL else task_tag(name)
            shown.append(f"[reverse] {label} [/]" if name == self.current else f" {label} ")
        current = "all replicas" if self.current == ALL else self._label(self.current)
        # The label is the service's text (an address may be a host name): never markup.
        self.query_one("#logs-tabs", Static).update(" ".join(shown) + f"   {escape(current)}")

    def watch_current(self, task: str) -> None:
        if not self.is_mounted:
            return
        self.query_one(ContentSwitcher).current = _view_id(task)
        self._render_tabs()
        self._render_info()
        # At once, not through focus() (which moves it after the messages already queued): a
        # key typed right after the switch, `G` after `a`, belongs to the view now shown.
        self.set_focus(self.active)

    # -- streaming -------------------------------------------------------------------------------

    def _read_job(self) -> dict[str, Any]:
        """jobs.get through the App's source (it reconnects); the title shows its state.

        Runs in the stream thread. The title is redrawn when the state moved: otherwise a pane
        opened on a QUEUED job said QUEUED while its lines poured in, until the job ended.
        """
        fresh: dict[str, Any] = self.shell.source.call(lambda c: c.get(self.job_id))
        moved = self.job is not None and self._shown_state(self.job) != self._shown_state(fresh)
        self.job = fresh
        if moved:
            self.app.call_from_thread(self._state_moved)
        return fresh

    def _shown_state(self, job: dict[str, Any] | None) -> str:
        """The title's state: the job's, or for one trial the trial's own (the job runs on
        with the other trials long after this one ended)."""
        if job is None:
            return "…"
        if self.trial:
            return str(as_mapping(trial_of(job, self.trial)).get("state") or "…")
        return str(job.get("state") or "…")

    def _trial_ended(self) -> bool:
        return bool(self.trial and as_mapping(trial_of(self.job or {}, self.trial)).get("endTime"))

    def _state_moved(self) -> None:
        if self.is_attached:
            self._render_title()
            self._read_nodes_if_unlisted()

    @work(thread=True, exclusive=True, group="logs", exit_on_error=False, description="Log stream")
    def _fetch_job_then_stream(self) -> None:
        from tui_app.api.log_feed import LogFeed
        from tui_app.api.log_stream import CLOUD_POLL_SECONDS, FAST_PAGE_SIZE

        last: list[ApiCallError | None] = [None]

        def on_error(exc: ApiCallError | None) -> None:
            last[0] = exc
            self.post_message(StreamStatus(str(exc) if exc else None))

        # Batches keep a flood moving on screen: one poll that read a whole backlog held ~1M
        # parsed entries (2 GB) and showed nothing for 40 s (log_bench).
        feed = LogFeed(
            self.shell.project,
            self.job_id,
            self._read_job,
            self.shell.source.connection,
            trial_id=self.trial,
            # A poll (and the tail a skip ahead shows) takes up to one entries:follow page:
            # batches of 10,000 rather than 5,000 took the pane from 25-37k to 34-44k lines/s
            # end to end under a 4-replica flood (log_bench --quick).
            batch_limit=FAST_PAGE_SIZE,
        )
        self._feed = feed
        # The first read retries like the stream does: a dropped keep-alive connection or a
        # service that is restarting must not leave the pane empty for good.
        if feed.open_retrying(self._stop, on_error) is None:
            # Stopped, or the server said no (e.g. NOT_FOUND): the title shows it as final.
            if last[0] is not None and not self._stop.is_set():
                self.post_message(StreamStatus(str(last[0]), stopped=True))
            return
        self.app.call_from_thread(self._job_known)
        visible, hidden = (
            (CLOUD_POLL_SECONDS, CLOUD_HIDDEN_POLL_SECONDS)
            if feed.connection is not None and feed.connection.vertex
            else (VISIBLE_POLL_SECONDS, HIDDEN_POLL_SECONDS)
        )

        def interval() -> float:
            return visible if self.app.screen is self else hidden

        # The newest batch first, so the pane paints at once; the rest of the tail (up to the
        # views' max_lines) comes in the background while the stream already follows. Reading
        # a 100k-line tail before following kept a flooding job's pane blank for 2.7 s.
        try:
            initial = feed.tail(SCREEN_BATCH)
        except ApiCallError as exc:
            on_error(exc)
            initial = []
        if initial:
            self.post_message(LinesArrived(initial))
            if len(initial) == SCREEN_BATCH:
                self._load_history(initial[0].key, self.max_lines - len(initial))
        try:
            feed.follow(
                self._stop,
                lambda lines: self.post_message(LinesArrived(lines)),
                interval,
                on_error,
                on_skip=lambda lines: self.post_message(LinesSkipped(lines)),
                # A paused view is being read: leave its lines where they are.
                may_skip=lambda: self._following,
            )
        except ApiCallError as exc:
            # Not transient: the title keeps the server's answer, and says nothing is retried.
            self.post_message(StreamStatus(str(exc), stopped=True))
            return
        if not self._stop.is_set():
            # A failed job's log ends with "Job failed." (the local service) or with nothing
            # (Vertex AI); the list shows why. Its cause ends the view too.
            end = feed.end_line()
            if end is not None:
                self.post_message(LinesArrived([end]))
            self.post_message(StreamStatus(None, ended=True))

    @work(thread=True, group="history", exit_on_error=False, description="Log history")
    def _load_history(self, before: tuple[str, str], wanted: int) -> None:
        """Fill the views with up to ``wanted`` lines before ``before``, newest batch first."""
        if self._feed is None:
            return
        epoch = self._skips
        # call_from_thread awaits a coroutine function's result; mypy cannot solve its
        # signature for one, so it is given as what the call returns.
        prepend = cast("Callable[[list[LogLine], int], bool]", self._prepend_everywhere)
        try:
            for lines in self._feed.history(before, wanted, HISTORY_BATCH, stop=self._stop):
                if not self.app.call_from_thread(prepend, lines, epoch):
                    return
        except ApiCallError as exc:
            self.app.call_from_thread(self.notify, f"Cannot fetch older lines: {exc}")

    async def _prepend_everywhere(self, lines: list[LogLine], epoch: int) -> bool:
        """Older lines of every replica, newest chunk first, yielding as appends do.

        Returns whether more history is still wanted: not once live lines filled the merged
        view (under a flood they would push the history out again at once), nor once the pane
        skipped ahead since this history was asked for (it belongs before the old tail).
        """
        for end in range(len(lines), 0, -APPEND_CHUNK):
            if end != len(lines):
                await asyncio.sleep(0)
            if (
                self._stop.is_set()
                or epoch != self._skips
                or not self.is_attached
                or self.view(ALL).line_count >= self.max_lines
            ):
                return False
            self._prepend_batch(lines[max(0, end - APPEND_CHUNK) : end])
        self._render_info()  # the line count
        return True

    def _prepend_batch(self, lines: list[LogLine]) -> None:
        """Add older lines before the oldest in their replica's view and in the merged one."""
        merged = self.view(ALL)
        cleaned = merged.clean_lines(lines)
        for task, (older, texts) in _by_task(lines, cleaned).items():
            self._ensure_view(task)
            self.view(task).prepend(older, texts)
        merged.prepend(lines, cleaned)
        self._seek_goto(lines)

    def _job_known(self) -> None:
        for task in self._expected_tasks():
            self._ensure_view(task)
        start = (self.job or {}).get("startTime") or (self.job or {}).get("createTime")
        if start:
            with contextlib.suppress(ValueError):
                when = datetime.fromisoformat(start.replace("Z", "+00:00"))
                for v in self.query(LogView):
                    v.job_start = when
        self._render_title()

    async def on_lines_arrived(self, message: LinesArrived) -> None:
        await self._append_in_chunks(message.lines)

    async def _append_in_chunks(self, batch: list[LogLine]) -> None:
        """Append ``APPEND_CHUNK`` lines at a time, letting the event loop run in between.

        The message pump takes queued messages back to back without yielding, so a 5,000-line
        batch appended at once held the loop for 15-30 ms under a flood, and with a GC pass
        next to it keys and frames waited over 50 ms (log_bench). Awaiting here keeps this
        screen's messages in order: the pump takes the next one only when this one is done.
        """
        for start in range(0, len(batch), APPEND_CHUNK):
            if start:
                await asyncio.sleep(0)
                if not self.is_attached:  # closed meanwhile: its views are gone
                    return
            self._append_batch(batch[start : start + APPEND_CHUNK])

    def _append_batch(self, batch: list[LogLine]) -> None:
        """Add new lines to their replica's view and to the merged one."""
        merged = self.view(ALL)
        cleaned = merged.clean_lines(batch)  # once, for both views a line lands in
        for task, (lines, texts) in _by_task(batch, cleaned).items():
            self._ensure_view(task)
            self.view(task).append(lines, texts)
        merged.append(batch, cleaned)
        self._seek_goto(batch)
        self._render_info()

    def _seek_goto(self, batch: list[LogLine]) -> None:
        """Put the cursor on the line the pane was opened at (``goto``) once a batch brought
        it into the merged view; batches are in key order, so only one whose keys span it can
        hold it."""
        goto = self.goto
        if goto is None or not batch or not batch[0].key <= goto <= batch[-1].key:
            return
        merged = self.view(ALL)
        index = merged.first_matching(lambda line: line.key == goto)
        if index is None:
            return
        self.goto = None
        self.current = ALL
        merged.move_to(index)  # it stops following: the line stays under the cursor
        self._render_info()

    async def on_lines_skipped(self, message: LinesSkipped) -> None:
        """Show the tail in place of a backlog, then fill in a batch of history behind it."""
        lines = message.lines
        if not lines:
            return
        if not self.active.follow:  # paused since the stream asked: keep what is being read
            await self._append_in_chunks(lines)
            return
        self._skips += 1  # history still arriving for the old tail is dropped
        if self._skips == 1:
            self._render_title()
        for view in self.query(LogView):
            view.clear()
        await self._append_in_chunks(lines)
        self._load_history(lines[0].key, HISTORY_BATCH)

    def on_stream_status(self, message: StreamStatus) -> None:
        self.error = message.error
        self.stopped = message.stopped
        if message.ended:  # the stream's rule: the trial's end for a trial, else the job's
            self.status = f"stream ended ({'trial' if self._trial_ended() else 'job'} finished)"
        self._render_title()

    # -- info bar ----------------------------------------------------------------------------------

    def _render_info(self) -> None:
        view = self.active
        self._following = view.follow
        # Most useful first: what fits no more is left off the end (the width is checked).
        parts = []
        if self._search:
            parts.append(f"/{self._search}  {self._match_text(view)}")
        if self._wrap_note:
            parts.append(self._wrap_note)
        if not view.follow and view.pending:
            parts.append(f"{view.pending:,} new ↓ (G)")
        if self._filter:
            mode, pattern = self._filter
            ctx = f" ±{self._ctx_lines}" if self._ctx_lines else ""
            parts.append(f"{'&' if mode == 'keep' else '!'}{pattern}{ctx}")
        if self._floor:
            parts.append(f"≥{severity_name(self._floor)}")
        if not view.follow:
            parts.append("paused")
        parts.append(f"{view.line_count:,} lines")
        parts.append(f"time: {TIMESTAMP_MODES[self._ts_mode]}")
        text = _fit(parts, self._info_room())
        if text == self._info_text:
            return
        # The bar's width follows its text (width: auto). A layout pass re-arranges the whole
        # screen, and the line count changes with every chunk appended in a flood: only a new
        # width in cells needs one.
        layout = cell_len(text) != cell_len(self._info_text)
        self._info_text = text
        self.query_one("#logs-info", Static).update(text, layout=layout)

    @staticmethod
    def _match_text(view: LogView) -> str:
        """``match 3/40`` on a match, else how many there are (less and vim say both)."""
        count = view.match_count
        if not count:
            return "no match"
        index = view.current_match_index
        if index is None:
            return f"{count:,} match{'es' if count != 1 else ''}"
        return f"match {index + 1:,}/{count:,}"

    def _info_room(self) -> int | None:
        """Cells the info bar's text may take (its max-width less its padding); None before
        the first layout."""
        bar = self.query_one("#logs-bar")
        info = self.query_one("#logs-info", Static)
        if not bar.size.width:
            return None
        cap = info.styles.max_width
        room = bar.size.width if cap is None else int(cap.resolve(bar.size, self.app.size))
        return room - info.styles.padding.width

    def on_resize(self) -> None:
        # What fits in the bar changed. A pane opened on one replica has no view for it until
        # the job's cluster is known.
        if self.query(f"#{_view_id(self.current)}"):
            self._render_info()

    def on_log_view_match_reached(self, message: LogView.MatchReached) -> None:
        """Say where the cursor is among the matches, and when the search wrapped."""
        ends = ("BOTTOM", "TOP") if message.forward else ("TOP", "BOTTOM")
        self._wrap_note = "hit {}, continuing at {}".format(*ends) if message.wrapped else ""
        self._render_info()

    def on_log_view_top_reached(self, message: LogView.TopReached) -> None:
        """The user scrolled to the top of a view: fetch the lines before its first one."""
        view = message.widget
        first = next((e for e, _ in view.lines if isinstance(e, LogLine)), None)
        task = next((t for t in [ALL, *self.tasks] if _view_id(t) == view.id), None)
        if first is not None and task is not None:
            self._fetch_older(task, first.key)

    @work(thread=True, group="history", exit_on_error=False, description="Older log lines")
    def _fetch_older(self, task: str, before: tuple[str, str]) -> None:
        if self._feed is None:  # no line shown yet, so nothing to read before
            return
        try:
            pages = self._feed.history(
                before, HISTORY_BATCH, HISTORY_BATCH, task_name=None if task == ALL else task
            )
            lines = next(pages, [])
        except ApiCallError as exc:
            self.app.call_from_thread(self.notify, f"Cannot fetch older lines: {exc}")
            return
        if lines:
            self.app.call_from_thread(self._prepend, task, lines)

    def _prepend(self, task: str, lines: list[LogLine]) -> None:
        added = self.view(task).prepend(lines)
        if task == ALL:
            self._seek_goto(lines)
        if added:
            self._render_info()
            self.notify(f"{added:,} older lines loaded.", timeout=1.5)

    def on_log_view_pending_changed(self, message: LogView.PendingChanged) -> None:
        self._render_info()

    # -- settings applied to every view ------------------------------------------------------------

    def _apply_settings(self, view: LogView) -> None:
        main = self.view(ALL) if view is not self.view(ALL) else None
        if main is not None:
            view.wrap = main.wrap
            view.job_start = main.job_start
        view.timestamps = TIMESTAMP_MODES[self._ts_mode]
        view.min_severity = self._floor
        if self._filter:
            view.set_filter(self._filter[1], self._filter[0], self._ctx_lines)
        if self._search:
            view.search(self._search)

    def _each_view(self) -> list[LogView]:
        return list(self.query(LogView))

    def action_toggle_wrap(self) -> None:
        wrap = not self.active.wrap
        for v in self._each_view():
            v.wrap = wrap
        self.notify(f"Wrap {'on' if wrap else 'off'}.", timeout=1)

    def action_cycle_timestamps(self) -> None:
        self._ts_mode = (self._ts_mode + 1) % len(TIMESTAMP_MODES)
        for v in self._each_view():
            v.timestamps = TIMESTAMP_MODES[self._ts_mode]
        self._render_info()

    def action_cycle_severity(self) -> None:
        names = list(SEVERITY_FLOORS)
        current = severity_name(self._floor)
        nxt = names[(names.index(current) + 1) % len(names)] if current in names else "INFO"
        self._floor = SEVERITIES[nxt]
        for v in self._each_view():
            v.min_severity = self._floor
        self._render_info()

    def action_cycle_context(self) -> None:
        i = CONTEXT_STEPS.index(self._ctx_lines) if self._ctx_lines in CONTEXT_STEPS else 0
        self._ctx_lines = CONTEXT_STEPS[(i + 1) % len(CONTEXT_STEPS)]
        if self._filter:
            for v in self._each_view():
                v.set_filter(self._filter[1], self._filter[0], self._ctx_lines)
        self._render_info()

    # -- the prompt: search, keep, drop ----------------------------------------------------------

    def action_prompt(self, mode: str) -> None:
        self._prompt_mode = "keep" if mode == "keep" else "drop" if mode == "drop" else "search"
        box = self.query_one("#logs-prompt", Input)
        box.placeholder = {
            "search": "search (regex): highlights every match; n/N jump",
            "keep": "keep only lines matching (regex); C sets context lines",
            "drop": "drop lines matching (regex)",
        }[mode]
        box.value = self._search if mode == "search" else (self._filter or ("", ""))[1]
        self.set_focus(box)

    @on(Input.Submitted, "#logs-prompt")
    def _prompt_done(self, event: Input.Submitted) -> None:
        text = event.value
        if self._prompt_mode == "search":
            self._search = text
            self._wrap_note = ""
            for v in self._each_view():
                v.search(text)
            if text:
                self.active.next_match()
        else:
            mode: FilterMode = self._prompt_mode
            self._filter = (mode, text) if text else None
            for v in self._each_view():
                v.set_filter(text or None, mode, self._ctx_lines)
        event.input.value = ""
        event.input.placeholder = ""  # the bar says what was searched; the hint is done
        self.set_focus(self.active)  # at once: `n` typed right after enter is the view's
        self._render_info()

    def action_next_match(self) -> None:
        self.active.next_match()

    def action_previous_match(self) -> None:
        self.active.previous_match()

    # -- navigation --------------------------------------------------------------------------------

    def action_back(self) -> None:
        box = self.query_one("#logs-prompt", Input)
        if box.has_focus:
            box.value = ""
            box.placeholder = ""
            self.set_focus(self.active)
            return
        if self._search or self._filter:
            self._search, self._filter = "", None
            self._wrap_note = ""
            for v in self._each_view():
                v.search("")
                v.set_filter(None, "keep", 0)
            self._render_info()
            return
        self._stop.set()
        self.app.pop_screen()

    def action_switch(self, step: int) -> None:
        names = [ALL, *self.tasks]
        i = names.index(self.current) if self.current in names else 0
        self.current = names[(i + step) % len(names)]

    def action_show_all(self) -> None:
        self.current = ALL

    def action_pick(self) -> None:
        def chosen(task: str | None) -> None:
            if task:
                self.current = task

        items = [ALL, *self.tasks]
        labels = [ALL, *map(self._label, self.tasks)] if self.nodes else None
        self.app.push_screen(PickerScreen("Show the logs of", items, labels), chosen)

    def action_toggle_follow(self) -> None:
        view = self.active
        if view.follow:
            view.follow = False
        else:
            view.resume()
        self._render_info()

    def action_resume(self) -> None:
        self.active.resume()
        if self._feed is not None:  # behind a backlog: the stream jumps to the newest line
            self._feed.request_skip()
        self._render_info()

    def action_first_error(self) -> None:
        """The first ERROR (or worse) line or Traceback, across every replica."""
        self.current = ALL
        view = self.view(ALL)
        index = view.first_matching(
            lambda line: line.severity >= SEVERITIES["ERROR"] or "Traceback" in line.text
        )
        if index is None:
            self.notify("No ERROR line or Traceback in these logs.")
            return
        view.follow = False
        view.move_to(index)
        self._render_info()

    def action_marker(self) -> None:
        for v in self._each_view():
            v.insert_marker()

    def action_stacks(self) -> None:
        """``S``: the stacks of the replica whose view is shown, of every replica from the
        merged view (or the service's, which is no replica); a trial's pane: its trial's."""
        task = self.current
        replica = None if task in (ALL, SERVICE_TASK) else task
        self.shell.open_stacks(self.job_id, replica, self.trial)

    def action_fullscreen(self) -> None:
        for selector in ("#logs-title", "#logs-tabs"):
            widget = self.query_one(selector)
            widget.display = not widget.display

    # -- out of the view ---------------------------------------------------------------------------

    def action_copy_line(self) -> None:
        text = self.active.current_line_text()
        if text:
            self.app.copy_to_clipboard(text)
            self.notify("Copied the line (OSC 52).", timeout=1.5)

    def _export_name(self) -> str:
        view = "all" if self.current == ALL else self.current
        stamp = datetime.now(UTC).strftime("%Y%m%d_%H%M%S")
        return f"{self.job_id}-{view}-{stamp}.log"

    def action_save(self) -> None:
        """Ask where (the builder's prompt, pre-filled with a full path in the saved logs folder,
        never the folder the TUI started from, which may be a checkout), then write exactly what
        the view shows, filters and all."""
        name = self._export_name()
        folder = saved_logs_dir()
        ask_where_to_save(
            self.app,
            "Save the view as",
            str(folder / name),
            name,
            self._write_view,
            hint=f"In {folder}{os.sep} (made if missing).\nA relative path starts at {Path.cwd()}.",
        )

    def _write_view(self, path: Path) -> None:
        text = self.active.visible_text()
        if text and not text.endswith("\n"):
            text += "\n"  # a text file: wc -l, cat and editors expect the last line ended
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            self.notify(f"Cannot save {path}: {exc.strerror}", severity="error")
            return
        lines = text.count("\n")
        self.notify(f"Saved {lines:,} line{'s' if lines != 1 else ''} to {path.resolve()}.")

    def action_pager(self) -> None:
        fd, name = tempfile.mkstemp(prefix="tui-app-", suffix=".log")
        with os.fdopen(fd, "w") as fh:
            fh.write(self.active.visible_text())
        pager = os.environ.get("PAGER") or "less -R"
        try:
            with self.app.suspend():
                subprocess.run([*shlex.split(pager), name], check=False)
        except SuspendNotSupported:
            subprocess.run([*shlex.split(pager), name], check=False)
        except OSError as exc:
            self.notify(f"Cannot run the pager {pager!r}: {exc.strerror}", severity="error")
        finally:
            with contextlib.suppress(OSError):
                os.unlink(name)


def _fit(parts: list[str], room: int | None) -> str:
    """``parts`` joined by " · ", leaving parts off the end until the text fits in ``room``
    cells (all of them while the width is unknown); the first part is always kept."""
    shown = list(parts)
    while len(shown) > 1 and room is not None and cell_len(" · ".join(shown)) > room:
        shown.pop()
    return " · ".join(shown)


def _by_task(
    lines: list[LogLine], cleaned: list[CleanLine]
) -> dict[str, tuple[list[LogLine], list[CleanLine]]]:
    """The lines and their cleaned texts, split by replica (each view takes its own).

    The service's line that a replica restarted also goes to that replica's view, where it is
    drawn as a divider between the output of its two runs (read alone, the replica's log would
    otherwise start over from its first line without a word)."""
    out: dict[str, tuple[list[LogLine], list[CleanLine]]] = {}
    for line, text in zip(lines, cleaned, strict=True):
        own = out.setdefault(line.task_name, ([], []))
        own[0].append(line)
        own[1].append(text)
        if line.task_name == SERVICE_TASK:
            restarted = restart_line_task(line.task_name, line.text)
            if restarted is not None:
                theirs = out.setdefault(restarted, ([], []))
                theirs[0].append(line)
                theirs[1].append(text)
    return out
