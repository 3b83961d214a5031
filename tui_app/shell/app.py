"""The Textual app: one poller, the screens, themes, the palette and the keymap.

Every call to the jobs API runs in a thread worker (google-api-python-client blocks); workers talk
to the screens only by posting messages, so a slow or dead service never freezes a keystroke.
"""

from __future__ import annotations

import asyncio
import contextvars
import gc
import os
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from rich.console import RenderableType
from textual import events, work
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.markup import escape
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.worker import get_current_worker

from tui_app.api.errors import ApiCallError
from tui_app.config.settings import Settings, save_setting
from tui_app.model.jobs.job_id import find_job_id
from tui_app.model.jobs.states import JobState
from tui_app.model.notify.terminal_notify import (
    desktop_sequences,
    in_tmux,
    notification_text,
    opted_out,
    terminal_bytes,
)
from tui_app.model.views.job_view import JobRow
from tui_app.shell import start_gc
from tui_app.shell.job_actions import JobActions
from tui_app.shell.job_watch import JobEnded, JobRestarted, JobStalled, JobWatch
from tui_app.shell.jobs_source import JobsSource
from tui_app.shell.messages import ConnectionChanged, JobsRefreshed, JobsSubmitted
from tui_app.shell.row_cache import RowCache
from tui_app.shell.screens.jobs_screen import JobsScreen
from tui_app.themes import DEFAULT_THEME, register_themes
from tui_app.widgets.job_table import WATCH_GLYPH, JobTable

if TYPE_CHECKING:
    from tui_app.api.connection import Connection
    from tui_app.shell.first_list import FirstList
    from tui_app.shell.screens.builder_screen import BuilderScreen
    from tui_app.shell.screens.command_screen import Command
    from tui_app.shell.screens.metrics_screen import ScalarsFactory, ScalarSource

RETRY_SECONDS = 2.0
FIRST_FRAME_WAIT_SECONDS = 0.25
"""How long the first frame waits for the list begun at launch (``list_mounted``)."""
SCREENS_CSS_DELAY_SECONDS = 0.3
"""How long after the list's first frame the other screens' CSS is parsed (while the user
reads the list: the frames that finish the first one come first)."""
FOLLOW_SECONDS = 0.1
"""How often the poll looks at a launch round still going on, to show its rows so far."""
TYPING_QUIET_SECONDS = 0.4
"""The poll reads no further page until the user has typed nothing for this long."""
TYPING_MAX_HOLD_SECONDS = 3.0
"""...but holds a poll back at most this long in all, so a list never goes stale for good."""


class WorkerThreads(ThreadPoolExecutor):
    """The loop's executor for thread workers: each call runs in a copy of the caller's context.

    Textual's thread worker sets its ``active_worker`` ContextVar inside the executor thread,
    in that thread's own context, which lives as long as the thread. The last worker each idle
    thread ran stayed reachable from there, and with it the worker's node and bound method: a
    closed logs screen (its lines, up to 100k per view) was never freed (log_bench, issue 45).
    Run in a copy (what ``asyncio.to_thread`` does), the variable is set in the copy, which is
    dropped with the call.
    """

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        return super().submit(contextvars.copy_context().run, fn, *args, **kwargs)


def _use_worker_threads(loop: asyncio.AbstractEventLoop) -> None:
    """Make ``WorkerThreads`` the loop's default executor (once per loop); one the loop had
    already (made by an earlier ``run_in_executor``) takes no new work and ends when idle."""
    before = getattr(loop, "_default_executor", None)
    if isinstance(before, WorkerThreads):
        return
    loop.set_default_executor(WorkerThreads(thread_name_prefix="asyncio"))
    if isinstance(before, ThreadPoolExecutor):
        before.shutdown(wait=False)


def _palette_help(keys: str, what: str) -> str:
    """A palette entry's second line: its key first, the same way on every entry.

    Escaped: the palette reads it as markup, and ``[`` (the logs' previous replica) would be
    taken for a tag.
    """
    head = f"Key: {keys}" if keys else "No key"
    return escape(f"{head} · {what}" if what else head)


class JobsApp(JobActions):
    """tui-app: the job list, details, actions, logs and the config builder."""

    CSS_PATH = "app.tcss"
    SCREENS_CSS = Path(__file__).with_name("screens.tcss")
    """Every other screen's layout, read after the list's first frame (``_read_screens_css``)."""
    TITLE = "tui-app"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark,f1", "help", "Help", id="help"),
        Binding("q", "quit", "Quit", id="quit"),
        Binding("ctrl+r", "refresh", "Refresh", show=False, id="refresh"),
        Binding("1", "home", "Jobs", show=False, id="show-jobs"),
        Binding("3", "builder", "Builder", show=False, id="show-builder", tooltip="Config builder"),
        Binding("colon", "command", "Command", show=False, id="command", tooltip=":jobs :logs ..."),
        Binding(
            "W",
            "toggle_watch_submitted",
            "Watch new jobs",
            show=False,
            id="watch-submitted",
            tooltip="On or off: every job submitted from here is watched, as w does",
        ),
    ]

    def __init__(
        self,
        settings: Settings,
        connect: Callable[..., Connection],
        project: str,
        profile_name: str,
        settings_file: Path | None = None,
        clock: Callable[[], datetime] | None = None,
        poll: bool = True,
        source: JobsSource | None = None,
        scalars: ScalarsFactory | None = None,
        first_list: FirstList | None = None,
    ) -> None:
        """``first_list``: the poll's first round, begun before this module was imported
        (``shell/first_list.py``); its source is the app's."""
        super().__init__()
        self.settings = settings
        profile = settings.profiles.get(profile_name)
        label = profile.label() if profile else profile_name
        self._first_list = first_list
        self._row_cache = first_list.cache if first_list is not None else RowCache()
        """The poll's rows between rounds (the first round's, when it was begun at launch)."""
        self._listed_at_mount = False
        """The first round's rows were painted in the first frame: the poll waits a round."""
        if first_list is not None:
            source = first_list.source
        self.source = source or JobsSource(connect, project, label)
        self.project = project
        self.scalars: ScalarsFactory = scalars or self._job_scalars
        """Where the metrics view reads a job's curves (tests hand fixed series)."""
        self.profile_name = profile_name
        self.settings_file = settings_file
        self.clock = clock or (lambda: datetime.now(UTC).astimezone())
        """Now, in the user's local time zone (tests freeze it)."""
        self._poll_enabled = poll
        self._poll_now = threading.Event()
        self._last_key = 0.0
        """time.monotonic() of the last key; the poll gives way while the user types."""
        self.connection_error: str | None = None
        self.last_refresh: JobsRefreshed | None = None
        """The newest list as it was handed to the screens (a screen mounted later starts
        from it)."""
        self.startup_warning: str | None = None
        """Shown once the screen is up (e.g. a broken settings file)."""
        self._screens_css_read = False
        """Whether ``screens.tcss`` is in the stylesheet yet (``_read_screens_css``)."""
        self._frame_dropped = False
        """A frame was made during a batch, and Textual did not write it (``_end_batch``)."""
        self.builder_screen: BuilderScreen | None = None
        """The builder, kept (installed) between visits: ``3`` comes back to the form as left."""
        # Fewer, cheaper cycle collections: with 100k rows or log lines alive, the default
        # thresholds ran 300-800 ms full passes in the middle of keystrokes (measured with
        # tui_bench and log_bench). gc.freeze() after each load would also do it, but it kept
        # closed screens alive (the one freeze is at the first frame, before any other screen
        # exists: shell/start_gc.py).
        # Under a log flood every line survives its young pass, so a pass of the middle
        # generation costs as much as the lines promoted since the last one. Young passes of
        # 20,000 allocations, with a middle one every other pass, still paused 60-125 ms
        # (log_bench, 4 replicas flooding); passes of 5,000 in which every survivor goes straight
        # to the old generation (middle threshold 0) pause under ~10-30 ms and scan each line
        # once, not twice. Full passes stay rare (every 10,000 middle ones).
        gc.set_threshold(5_000, 0, 10_000)
        register_themes(self)
        known = settings.theme in self.available_themes
        self._first_theme(settings.theme if known else DEFAULT_THEME)
        self.keymap_warning: str | None = None
        """Why parts of the user's keymap were not applied (shown once the screen is up)."""
        self.job_watch = JobWatch()
        """The jobs ``w`` watches; they outlive every screen, so the App keeps them."""
        self.watch_submitted = settings.notify.watch_submitted
        """``W``: every job submitted from this TUI is watched from its creation."""
        if settings.keymap:
            self.set_keymap(self._checked_keymap(settings.keymap))

    def _first_theme(self, name: str) -> None:
        """Start in theme ``name``, before any CSS has been read.

        Assigning ``theme`` runs Textual's watcher, which queues a re-parse of every stylesheet
        read by then for when the app starts: the app's CSS was parsed twice before the first
        frame (about 14 ms of the list's cold start, measured with ``tui_bench``). Before any
        CSS is read, the stylesheet only needs the theme's variables and the app the theme's
        classes, which is what the watcher would leave. A theme of the other darkness also
        changes the filter that maps ANSI colours, so that one goes through the watcher.
        """
        theme = self.get_theme(name)
        if theme is None or theme.dark != self.current_theme.dark:
            self.theme = name
            return
        self.set_reactive(App.theme, name)
        self.stylesheet.set_variables(self.get_css_variables())
        self.set_class(True, f"-theme-{name}", update=False)

    def _checked_keymap(self, keymap: dict[str, str]) -> dict[str, str]:
        """The keymap without the remaps that cannot work (an unknown id, a key another binding
        of the same screen answers to); ``keymap_warning`` says which and why."""
        from tui_app.config.keymap import keymap_problems
        from tui_app.shell.keymap_scopes import keymap_scopes

        problems = keymap_problems(keymap_scopes(self.BINDINGS), keymap)
        if problems:
            self.keymap_warning = "\n".join(p.message for p in problems)
        refused = {p.binding_id for p in problems}
        return {k: v for k, v in keymap.items() if k not in refused}

    async def on_mount(self) -> None:
        _use_worker_threads(asyncio.get_running_loop())  # before any worker starts
        # The list asks for its rows as it mounts, and that starts the poll (``list_mounted``).
        self.push_screen(JobsScreen())
        if self.startup_warning:
            self.notify(self.startup_warning, severity="warning", timeout=10)
        if self.keymap_warning:
            self.notify(self.keymap_warning, severity="warning", timeout=15)

    async def list_mounted(self) -> None:
        """The job list is mounting: let its first frame show the jobs, then start the poll.

        The list begun at launch is waited for a moment. Most openings are a glance at the
        list, and one frame with the jobs beats an empty list filled a frame (some 30-50 ms)
        later. A round not done by then, or failed, is left to the poll, which shows it when it
        comes. The poll starts after the list's first frame: elsewhere than the local service
        its first call imports Google's client stack (~150 ms of Python), which in a thread
        beside the event loop would hold the GIL while that frame is drawn.
        """
        if not self._poll_enabled:
            self.call_after_refresh(start_gc.release)
            return
        first = self._first_list
        if first is not None and await first.settle(FIRST_FRAME_WAIT_SECONDS):
            try:
                rows, changed = first.result()
            except ApiCallError:
                pass  # the poll takes the error and says so
            else:
                self._first_list = None
                self._listed_at_mount = True
                self.on_jobs_refreshed(JobsRefreshed(rows, self.clock(), first.seconds, changed))
        elif first is not None and first.so_far is not None:  # a large store: what is in
            self.on_jobs_refreshed(JobsRefreshed(first.so_far, self.clock(), 0.0, partial=True))
        self.call_after_refresh(self._after_first_frame)

    def _after_first_frame(self) -> None:
        start_gc.release()  # the collector tui-app held off while it started
        self._poll()
        self.set_timer(SCREENS_CSS_DELAY_SECONDS, self._read_screens_css)

    def _read_screens_css(self) -> None:
        """Read and parse ``screens.tcss``, once.

        Textual parses every stylesheet before the first frame, and the other screens' layout
        (dialogs, logs, builder: 90% of the app's CSS) took some 10 ms of the list's cold
        start to parse. It is read a moment after the list is on screen, or before another
        screen is shown, whichever comes first (``_load_screen_css``). ``Stylesheet.read``
        adds it as one more source, and parsing then only parses what is new: the other
        sources' rules come from the stylesheet's cache. No node on screen by then matches
        its rules, so nothing already styled needs styling again.
        """
        if self._screens_css_read:
            return
        self._screens_css_read = True
        self.stylesheet.read(self.SCREENS_CSS)
        self.stylesheet.parse()

    def _load_screen_css(self, screen: Screen[Any]) -> None:
        # Textual (pinned) calls this before it shows any screen: the default one and the list
        # at the start, then every screen pushed or switched to.
        if not isinstance(screen, JobsScreen) and type(screen) is not Screen:
            self._read_screens_css()
        super()._load_screen_css(screen)

    def _display(self, screen: Screen[Any], renderable: RenderableType | None) -> None:
        if renderable is not None and self._batch_count:
            self._frame_dropped = True
        super()._display(screen, renderable)

    def _end_batch(self) -> None:
        """Write the whole screen at once when a batch that swallowed a frame ends.

        Textual (pinned) does not write a frame made during a batch, yet its compositor counts
        it as shown: the next frame holds only the lines that changed after it. The app's own
        start is such a batch, and the list mounts inside it: its first frame (rows and the
        header's counts) was made there and dropped. In a terminal the rows came with the next
        frame, 16-27 ms after the batch ended, and the header's line with the one after. Now
        the whole screen is repainted as the batch ends, without waiting for the update timer
        (tmux, 20 interleaved starts: app made -> every line written, median 91 -> 83 ms).
        A headless app writes no frame, so it has none to make up for.
        """
        super()._end_batch()
        if self._frame_dropped and not self._batch_count and not self.is_headless:
            self._frame_dropped = False
            if not self.screen_stack:
                return
            screen = self.screen
            screen.refresh()
            screen._on_timer_update()

    def watch_theme(self, theme: str) -> None:
        """Remember the theme the user picked (palette or settings)."""
        if self.is_running and theme != self.settings.theme:
            self.settings = self.settings.with_changes(theme=theme)
            try:
                save_setting("theme", theme, self.settings_file)
            except OSError as exc:
                self.notify(f"Cannot save the theme: {exc}", severity="warning")

    # -- polling ------------------------------------------------------------------------------

    def refresh_now(self) -> None:
        """Poll immediately (after an action, or ctrl+r)."""
        self._poll_now.set()

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key):
            self._last_key = time.monotonic()
        await super().on_event(event)

    def _give_way_to_typing(self, deadline: float) -> None:
        """Block the poll thread while keys are arriving (until ``deadline`` at most)."""
        while True:
            now = time.monotonic()
            quiet_at = self._last_key + TYPING_QUIET_SECONDS
            if now >= quiet_at or now >= deadline:
                return
            time.sleep(min(quiet_at, deadline) - now)

    @work(thread=True, exclusive=True, group="poll", exit_on_error=False, description="Polling")
    def _poll(self) -> None:
        worker = get_current_worker()
        interval = self.settings.refresh_seconds
        first, self._first_list = self._first_list, None
        cache = self._row_cache
        if self._listed_at_mount:
            self._poll_now.wait(interval)
            self._poll_now.clear()
        while not worker.is_cancelled:
            started = time.monotonic()
            pause = partial(self._give_way_to_typing, started + TYPING_MAX_HOLD_SECONDS)
            try:
                if first is not None:  # the round begun at launch, taken once
                    begun, first = first, None
                    self._follow(begun)
                    rows, changed = begun.result()
                    seconds = begun.seconds
                else:
                    progress = None if self.last_rows else self._show_so_far
                    collect = partial(cache.collect, pause=pause, progress=progress)
                    rows, changed = self.source.call(collect)
                    seconds = time.monotonic() - started
            except ApiCallError as exc:
                self.post_message(ConnectionChanged(str(exc), self.source.label))
                wait = RETRY_SECONDS
            else:
                if self.connection_error is not None or not self.last_rows:
                    self.post_message(ConnectionChanged(None, self.source.label))
                self.post_message(JobsRefreshed(rows, self.clock(), seconds, changed))
                # Back off when listing is slow (huge lists): never spend more than half the time.
                wait = max(interval, 2 * seconds)
            self._poll_now.wait(wait)
            self._poll_now.clear()

    def _show_so_far(self, rows: list[JobRow]) -> None:
        """A first list still coming in: show the jobs read so far (from the poll's thread)."""
        self.post_message(JobsRefreshed(rows, self.clock(), 0.0, True, partial=True))

    def _follow(self, first: FirstList) -> None:
        """Wait for the round begun at launch, showing its rows so far while it goes on."""
        shown: list[JobRow] | None = self.last_rows or None  # shown in the first frame
        while not first.wait(FOLLOW_SECONDS):
            so_far = first.so_far
            if so_far is not None and so_far is not shown:
                self._show_so_far(so_far)
                shown = so_far

    def on_connection_changed(self, message: ConnectionChanged) -> None:
        self.connection_error = message.error
        for screen in self.screen_stack:
            screen.post_message(ConnectionChanged(message.error, message.label))

    @property
    def last_rows(self) -> list[JobRow]:
        """The newest list's rows (``last_refresh``); empty before the first. Read from the
        poll's thread too: ``last_refresh`` is read once, whole."""
        refresh = self.last_refresh
        return refresh.rows if refresh is not None else []

    def on_jobs_refreshed(self, message: JobsRefreshed) -> None:
        """Keep the newest list and hand it to every screen (messages only bubble up)."""
        self.last_refresh = message
        for screen in self.screen_stack:
            screen.post_message(
                JobsRefreshed(
                    message.rows,
                    message.fetched_at,
                    message.seconds,
                    message.changed,
                    message.partial,
                )
            )
        if message.changed and not message.partial and len(self.job_watch):
            for event in self.job_watch.observe(message.rows):
                if isinstance(event, JobRestarted):
                    self._tell_restarted(event)
                elif isinstance(event, JobStalled):
                    self._tell_stalled(event)
                else:
                    self._tell_ended(event)
        self._show_watches()

    def on_jobs_submitted(self, message: JobsSubmitted) -> None:
        for screen in self.screen_stack:
            screen.post_message(JobsSubmitted(message.job_ids))
        if self.watch_submitted:
            self.job_watch.watch_submitted(message.job_ids)
            self._show_watches()

    # -- watching jobs (w, W) -------------------------------------------------------------------

    def on_job_table_watch_requested(self, message: JobTable.WatchRequested) -> None:
        """``w`` on the list: watch the jobs (or stop), and say so; an ended job is not watched."""
        wanted = set(message.job_ids)
        rows = {row.job_id: row for row in self.last_rows if row.job_id in wanted}
        change = self.job_watch.toggle(message.job_ids, rows)
        self._show_watches()
        if change.already_ended and not change.watched:
            self.notify(change.message(), severity="warning", markup=False)
        else:
            self.notify(change.message(), markup=False)

    def action_toggle_watch_submitted(self) -> None:
        self.watch_submitted = not self.watch_submitted
        self._show_watches()
        if self.watch_submitted:
            self.notify("Watching every job submitted from here (W stops).", markup=False)
        else:
            self.notify("New jobs are no longer watched; the watched ones still are.")

    def _job_tables(self) -> list[JobTable]:
        return [table for screen in self.screen_stack for table in screen.query(JobTable)]

    def _show_watches(self) -> None:
        """Every job list marks the watched rows and counts them in its header."""
        count = len(self.job_watch)
        note = f"{WATCH_GLYPH}{count} watched" if count else ""
        if self.watch_submitted:
            note = f"{note} + new" if note else f"{WATCH_GLYPH} new jobs"
        watched = self.job_watch.watched
        for table in self._job_tables():
            table.set_watched(watched, note)

    def _tell_restarted(self, restarted: JobRestarted) -> None:
        """A watched job's replicas were restarted: a toast, where ``notify:`` allows toasts.

        Not the bell, the desktop notification or the flash: the job goes on (and the list's
        ``↻`` says so), so nothing here calls the person back to the terminal as an end does.
        """
        if "toast" not in self.settings.notify.channels:
            return
        self.notify(
            restarted.message(),
            title=restarted.title(),
            severity="warning",
            timeout=10,
            markup=False,
        )

    def _tell_stalled(self, stalled: JobStalled) -> None:
        """A watched job stalled: every channel ``notify:`` allows, as for an end (a hung job
        burns its machines as surely as a failed one stops), whatever its states filter says
        (stalled is no state)."""
        channels = self.settings.notify.channels
        title = f"{stalled.job_id} stalled"
        if "toast" in channels:
            self.notify(stalled.message(), title=title, severity="warning", timeout=15)
        if "flash" in channels:
            for table in self._job_tables():
                table.flash(stalled.job_id)
        self._ring(title, stalled.message())

    def _ring(self, title: str, body: str) -> None:
        """The bell and the desktop notification, where ``notify:`` allows them."""
        channels = self.settings.notify.channels
        environ = os.environ
        if opted_out(environ):
            return
        text = terminal_bytes(
            title,
            body,
            bell="bell" in channels,
            desktop="desktop" in channels,
            tmux=in_tmux(environ),
            sequences=desktop_sequences(environ),
        )
        if text and not self.is_headless and self._driver is not None:
            self._driver.write(text)

    def _tell_ended(self, ended: JobEnded) -> None:
        """A watched job ended: tell the person through each channel ``notify:`` allows.

        The bell and the desktop notification go to the terminal in one write through the
        driver, as Textual's own ``App.bell`` writes its BEL: between two frames, never inside
        one. Inside tmux the OSCs go through its passthrough and the BEL outside it, so tmux
        flags the window (``model/notify/terminal_notify``).
        """
        notify = self.settings.notify
        state = ended.state.value
        if state not in notify.states:
            return
        channels = notify.channels
        title, body = notification_text(ended.job_id, state, ended.cause)
        if "toast" in channels:
            severity: SeverityLevel = "information"
            if ended.state is JobState.FAILED:
                severity = "error"
            elif ended.state is JobState.CANCELLED:
                severity = "warning"
            self.notify(
                ended.cause or "Watched job ended.",
                title=f"{ended.job_id} {state}",
                severity=severity,
                timeout=15,
                markup=False,
            )
        if "flash" in channels:
            for table in self._job_tables():
                table.flash(ended.job_id)
        self._ring(title, body)

    # -- actions ----------------------------------------------------------------------------

    def action_refresh(self) -> None:
        self.refresh_now()

    def action_home(self) -> None:
        while len(self.screen_stack) > 2 and not isinstance(self.screen, JobsScreen):
            self.pop_screen()

    def action_builder(self) -> None:
        self.open_builder()

    def open_builder(
        self, job: dict[str, Any] | None = None, *, new: bool = False, note: str = ""
    ) -> None:
        """Show the builder: on ``job`` (a copy to edit), a new form, or the last draft.

        Args:
            job: A jobs.create body to fill the form with (``E``: a resubmission copy).
            new: Start from an empty form even when there is a draft (``n``).
            note: What the form is, for its status line.
        """
        # Loaded on first use, unlike the other screens: the builder's rules bring pydantic, which
        # would add about a quarter of a second before the first frame of the list.
        from tui_app.shell.screens.builder_screen import BuilderScreen

        screen = self.builder_screen
        if job is None and not new and screen is not None and self.screen is screen:
            return
        if screen is None:
            if job is not None:
                screen = BuilderScreen.for_job(job, note)
            else:
                screen = BuilderScreen.fresh(self, note)
            self.builder_screen = screen
            self.install_screen(screen, "builder")
        elif job is not None:
            screen.start_on_job(job, note)
        elif new:
            screen.start_fresh(note)
        self.action_home()
        self.push_screen(screen)

    def action_command(self) -> None:
        from tui_app.shell.screens.command_screen import CommandScreen  # loaded on first use

        if not isinstance(self.screen, CommandScreen):
            self.push_screen(CommandScreen(), self.run_command)

    def run_command(self, command: Command | None) -> None:
        """Do what a ``:`` command names (see ``tui_app.shell.screens.command_screen.COMMANDS``)."""
        if command is None:
            return
        name = command.name
        if name == "q":
            self.exit()
        elif name == "jobs":
            self.action_home()
        elif name == "builder":
            self.open_builder()
        elif name == "new":
            self.open_builder(new=True)
        elif name == "help":
            self.action_help()
        elif name in ("logs", "describe"):
            job_id = self._command_job(command)
            if job_id is not None:
                self.open_job(job_id, logs=name == "logs")
        elif name == "metrics":
            job_id = self._command_job(command)
            if job_id is not None:
                self.open_metrics(job_id)
        elif name == "grep":
            self.open_search(command.text)

    def _command_job(self, command: Command) -> str | None:
        """The job ``:logs``/``:describe``/``:metrics`` mean: the one named, else the one the user
        is on."""
        if not command.job_id:
            job_id = self.selected_job_id()
            if job_id is None:
                self.notify(
                    f"Select a job in the list first, or name one: :{command.name} ID.",
                    severity="warning",
                )
            return job_id
        if not self.last_rows:
            self.notify("The job list has not arrived yet; try again in a moment.")
            return None
        job_id, why = find_job_id(command.job_id, (r.job_id for r in self.last_rows))
        if job_id is None:
            self.notify(why, severity="warning")
        return job_id

    def open_job(self, job_id: str, *, logs: bool) -> None:
        """``:logs ID``/``:describe ID``: the logs or detail over the list, closing what was
        open above it (unless they are already showing)."""
        from tui_app.shell.screens.describe_screen import DescribeScreen  # pydantic: see jobs
        from tui_app.shell.screens.logs_screen import LogsScreen

        kind = LogsScreen if logs else DescribeScreen
        if isinstance(self.screen, kind) and self.screen.job_id == job_id:
            return
        self.action_home()
        if logs:
            self.open_logs(job_id)
        else:
            self.open_describe(job_id)

    def open_logs(
        self,
        job_id: str,
        *,
        trial: str | None = None,
        search: str = "",
        at: tuple[str, str] | None = None,
    ) -> None:
        """Show ``job_id``'s logs (only trial ``trial``'s lines) over what is open; ``search``
        and ``at`` open it on a search hit (``LogsScreen``'s arguments).

        Loaded on first use, as the other views behind a key are.
        """
        from tui_app.shell.screens.logs_screen import LogsScreen

        self.push_screen(LogsScreen(job_id, trial=trial, search=search, at=at))

    def open_search(self, query: str = "") -> None:
        """Show the search over every job's logs (``s``, ``:grep TEXT``) over what is open; when
        it is what is showing, search for ``query`` there instead of opening another. It
        searches the jobs the list's filter shows (``JobScope``), until ``f`` there lifts it.

        Loaded on first use, as the other views behind a key are.
        """
        from tui_app.shell.screens.search_screen import SearchScreen

        screen = self.screen
        if isinstance(screen, SearchScreen):
            if query:
                screen.set_query(query)
            return
        listing = next((s for s in self.screen_stack if isinstance(s, JobsScreen)), None)
        scope = listing.job_scope if listing is not None else None
        self.push_screen(SearchScreen(query, self.last_rows, scope))

    def open_describe(self, job_id: str, *, yaml: bool = False) -> None:
        """Show ``job_id``'s detail (its raw YAML with ``yaml``) over what is open.

        Loaded on first use: the detail's summary brings the model's pydantic rules, which
        would add a sixth of a second before the list's first frame.
        """
        from tui_app.shell.screens.describe_screen import DescribeScreen

        self.push_screen(DescribeScreen(job_id, yaml=yaml))

    def open_diff(
        self, left: str, right: str, reason: str, *, trials_of: str | None = None
    ) -> None:
        """Show two jobs side by side over what is open, or (``trials_of``) two trials of that
        tuning job; ``reason`` says why these two, for the view's header."""
        from tui_app.shell.screens.diff_screen import DiffScreen  # loaded on first use

        if trials_of is None:
            self.push_screen(DiffScreen.of_jobs(left, right, reason))
        else:
            self.push_screen(DiffScreen.of_trials(trials_of, left, right, reason))

    def open_metrics(self, job_id: str, trial: str | None = None) -> None:
        """Show the metric curves of ``job_id`` (or of its trial ``trial``) over what is open.

        Loaded on first use: the charts bring numpy and plotext, which the list's first frame
        does not wait for.
        """
        from tui_app.shell.screens.metrics_screen import MetricsScreen

        screen = self.screen
        if isinstance(screen, MetricsScreen) and (screen.job_id, screen.trial) == (job_id, trial):
            return
        self.push_screen(MetricsScreen(job_id, trial, scalars=self.scalars))

    def open_stacks(
        self, job_id: str, replica: str | None = None, trial: str | None = None
    ) -> None:
        """Show the Python stacks of ``job_id``'s replicas (only ``replica``, only trial
        ``trial``'s) over what is open, unless they are what is showing.

        Loaded on first use, as the other views behind a key are.
        """
        from tui_app.shell.screens.stacks_screen import StacksScreen

        screen = self.screen
        if isinstance(screen, StacksScreen) and (screen.job_id, screen.replica, screen.trial) == (
            job_id,
            replica,
            trial,
        ):
            return
        self.push_screen(StacksScreen(job_id, replica, trial))

    def _job_scalars(self, job_id: str, trial: str | None) -> ScalarSource:
        """``JobScalars`` on the profile's connection (called in the view's worker thread)."""
        from tui_app.api.job_scalars import JobScalars

        source = self.source
        return JobScalars(
            source.connection,
            self.project,
            job_id,
            read_job=lambda: source.call(lambda client: client.get(job_id)),
            trial_id=trial,
        )

    def selected_job_id(self) -> str | None:
        """The job the user is on: the open detail's or logs', else the list's cursor row."""
        for screen in reversed(self.screen_stack):
            job_id = getattr(screen, "job_id", None)
            if isinstance(job_id, str):
                return job_id
            if isinstance(screen, JobsScreen):
                return screen.current_job_id()
        return None

    def action_help(self) -> None:
        from tui_app.shell.screens.help_screen import HelpScreen  # loaded on first use

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """The palette offers every action of the current screen, then the App's, then Textual's.

        Each says first the key that does the same, as the footer and ``?`` write it and as the
        keymap remapped it (``key_label``), or that it has none: a newcomer learns the keys from
        the palette, so an action shown without its key (or with one the keymap replaced)
        teaches nothing, or the wrong thing.
        """
        from tui_app.shell.screens.help_screen import key_label  # the palette: on first use

        offered: set[str] = set()
        # The list's own w (its table's binding: it acts on the table's cursor and marks).
        tables = list(screen.query(JobTable))
        table_keys: list[BindingType] = [
            b for b in JobTable.BINDINGS if isinstance(b, Binding) and b.action == "toggle_watch"
        ]
        targets: list[tuple[Any, list[BindingType]]] = [(screen, list(screen.BINDINGS))]
        if tables:
            targets.append((tables[0], table_keys))
        targets.append((self, list(self.BINDINGS)))
        for target, bindings in targets:
            for binding in bindings:
                if not isinstance(binding, Binding) or not binding.description:
                    continue
                offered.add(binding.description)
                yield SystemCommand(
                    binding.description,
                    _palette_help(key_label(self, binding), binding.tooltip),
                    lambda a=binding.action, t=target: self.call_later(t.run_action, a),
                )
        for command in super().get_system_commands(screen):
            if command.title in offered:
                continue  # Quit: ours says its key
            action = getattr(command.callback, "__name__", "").removeprefix("action_")
            keys: list[str] = []
            for _, binding in self._bindings:  # one entry per key, each a Binding of its own
                label = key_label(self, binding)
                if binding.action in (action, f"app.{action}") and label not in keys:
                    keys.append(label)
            yield command._replace(help=_palette_help(" / ".join(keys), command.help))
