"""The metrics view: a job's (or one trial's) scalar curves, live, as TensorBoard's scalars
dashboard shows them, in the terminal.

::

    Metrics  mnist_20261122_083000 · ▶ RUNNING          smooth 0.6 · x step
    2 event files under gs://b/mnist_20261122_083000 (runs: train, validation).
    Log lines: no longer read (event files found).
    / filter tags      │ epoch_loss · epoch · events        │ epoch_accuracy · epoch · events
    ▾ epoch (2)        │ 1.2┤⠑⡄                             │ ...
      ● epoch_loss     │ ...                                │
        epoch_accuracy │ ⣿ train  min 0.07  max 1.2 ...     │

What it reads comes from a ``ScalarSource`` (``tui_app.api.job_scalars.JobScalars`` in the app:
event files, hypertune reports and log lines) polled by a thread worker every second while the
job runs, at once again while a backlog is left (``more``), once more after the job ended, then
never again. The points go into a ``MetricSet`` under a lock the charts take when they draw, so
neither a big backlog nor a slow storage read ever holds a keystroke.

Layout follows the width: at ``GRID_WIDTH`` columns and wider the charts are small multiples, two
side by side; narrower, one chart at a time and ``[`` ``]`` step through the tags (tab keeps its
Textual meaning, moving between the tag list and its filter). The tag list groups tags as
TensorBoard does and filters as the user types (``/``); ``space`` marks tags, ``enter`` charts
them.

Smoothing is asked for (``s``, a number from 0 to 0.99) rather than stepped with ``+``/``-``:
useful weights bunch up near the top (0.9, 0.95, 0.99 for a noisy loss), which steps of 0.1
cannot reach, and the prompt starts at the current weight so a small change is two keys.

A tuning job's view opens on its goal metric with every trial's curve overlaid, the best trial
(by the job's goal over finished trials) drawn strongest and named with a star in the legend.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from rich.cells import cell_len, set_cell_size
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Input, Static
from textual.worker import Worker, get_current_worker

from tui_app.api.errors import ApiCallError
from tui_app.model.jobs.job_spec import DEFAULT_METRIC_TAG
from tui_app.model.jobs.states import STATE_SYMBOL, JobState
from tui_app.model.metrics.chart_ticks import X_AXES, format_step, zoom_offer
from tui_app.model.metrics.metric_goals import Goal, best_trial, ranked_trials
from tui_app.model.metrics.metric_series import MetricSet, SeriesKey, XAxis, drawn_keys, run_labels
from tui_app.model.metrics.metric_tags import filter_tags, tag_sort_key
from tui_app.model.views.trials import (
    LIVE_STATES,
    TrialRow,
    final_objectives,
    format_objective,
    goal_of,
    is_tuning_job,
    metric_tag,
    trial_of,
    trial_order,
    trial_rows,
)
from tui_app.shell.app_protocol import shell_app
from tui_app.shell.screens.picker_screen import PickerScreen
from tui_app.shell.screens.prompt_screen import PromptScreen
from tui_app.shell.screens.screen_toasts import ScreenToasts
from tui_app.widgets.key_footer import KeyFooter
from tui_app.widgets.line_cursor import back_binding
from tui_app.widgets.metric_chart import (
    LEGEND_MAX_LINES,
    ChartLine,
    ChartOptions,
    LineRole,
    MetricChart,
)
from tui_app.widgets.status_header import StatusHeader
from tui_app.widgets.tag_picker import TagPicker, grouped_order, tag_group

if TYPE_CHECKING:
    from tui_app.api.job_scalars import ScalarPoll, SourceStatus

POLL_SECONDS = 1.0
"""How often a running job is read: a point the trainer flushed is on screen within 2 s."""
RETRY_SECONDS = 2.0
"""After a failed read (the service away): the next try."""
GRID_WIDTH = 120
"""Screens at least this wide show the charts side by side, two to a row."""
MAX_CHARTS = 8
"""Charts drawn at once: each costs 10-20 ms to build, and eight are four screens of them."""
DEFAULT_CHARTS = 4
"""Tags charted when the view opens (a 2x2 grid at 120 columns), until the user picks."""
DEFAULT_SMOOTHING = 0.6
"""TensorBoard's default, so the curves look as they did there."""
MAX_SMOOTHING = 0.99
DEFAULT_ZOOM_STEPS = 1000
ROW_MIN_HEIGHT = 12
"""A grid row's chart never gets shorter: the rows scroll instead."""

TAG_KEYS = Binding.Group("Tag")
"""``[`` and ``]``: one item in the footer, ``[ ] Tag``."""
FOOTER_FIRST = (
    "metrics.smoothing",
    "metrics.log-y",
    "metrics.x-axis",
    "metrics.zoom",
    "metrics.prev-tag",
    "metrics.filter",
    "tag-picker.mark",
)
"""The footer's keys, most useful first (at 80 columns the first five fit beside ``? Help``)."""


class ScalarSource(Protocol):
    """What the view polls: ``JobScalars`` in the app (see ``tui_app.api.job_scalars``)."""

    def poll(self) -> ScalarPoll: ...


ScalarsFactory = Callable[[str, str | None], ScalarSource]
"""``(job_id, trial_id)`` to the source of that job's (or trial's) curves; called in the
worker's thread, since making one may connect."""


class MetricsScreen(Screen[None], ScreenToasts):
    """``M`` from the list, the detail or a trial; ``:metrics [ID]``."""

    CSS_PATH = "metrics_screen.tcss"
    shell = shell_app()

    BINDINGS: ClassVar[list[BindingType]] = [
        back_binding("metrics"),
        Binding(
            "s",
            "smoothing",
            "Smoothing",
            id="metrics.smoothing",
            tooltip="0 to 0.99 (TensorBoard's 0.6); 0 is the raw curve",
        ),
        Binding("L", "log_y", "Log y", id="metrics.log-y", tooltip="A log scale for the values"),
        Binding(
            "x", "x_axis", "X axis", id="metrics.x-axis", tooltip="Step, wall time, relative time"
        ),
        Binding("z", "zoom", "Zoom", id="metrics.zoom", tooltip="Only the last N steps"),
        Binding("Z", "unzoom", "All steps", id="metrics.unzoom", tooltip="Undo the zoom"),
        Binding(
            "left_square_bracket",
            "move(-1)",
            "Previous tag",
            id="metrics.prev-tag",
            group=TAG_KEYS,
        ),
        Binding(
            "right_square_bracket",
            "move(1)",
            "Next tag",
            id="metrics.next-tag",
            group=TAG_KEYS,
        ),
        Binding("slash", "filter", "Filter tags", id="metrics.filter", tooltip="A regex"),
        Binding(
            "t",
            "trials",
            "Trials",
            id="metrics.trials",
            tooltip="A tuning job's trials: enter opens one's own tags",
        ),
    ]

    smoothing: var[float] = var(DEFAULT_SMOOTHING)
    """The exponential moving average weight of every curve (0: raw only)."""
    log_y: var[bool] = var(False)
    """Values on a log scale (values <= 0 are left out and counted)."""
    x_axis: var[XAxis] = var("step")
    """What the x axis counts: steps, wall-clock time, or time since each series' start."""
    last_steps: var[int | None] = var(None)
    """Zoom: only the last N steps; None shows everything."""
    wide: var[bool] = var(True)
    """The charts are small multiples (at ``GRID_WIDTH`` columns and wider)."""

    def __init__(self, job_id: str, trial: str | None = None, *, scalars: ScalarsFactory) -> None:
        """Args:
        job_id: The job.
        trial: One trial of a tuning job (its own curves), or None for the job (every trial's
            curve of a tag overlaid).
        scalars: Makes the source the view polls (``JobsApp`` hands it over).
        """
        super().__init__()
        self.job_id = job_id
        self.trial = trial
        self._scalars = scalars
        self.metrics = MetricSet()
        """Every series read so far; written by the worker under ``data_lock``."""
        self.data_lock = threading.Lock()
        self.job: dict[str, Any] | None = None
        """The job as last read (state, goal, trials)."""
        self.statuses: list[SourceStatus] = []
        self.error: str | None = None
        """Why the last read failed (shown until one works)."""
        self.ended = False
        """The job had ended at the last read: the worker has stopped."""
        self.polls = 0
        """Reads that brought news (tests wait on it rather than on time)."""
        self.shown: list[str] = []
        """The tags charted, in order."""
        self.current = 0
        """Which of ``shown`` the keys are on (the one chart, when narrow)."""
        self._chosen = False
        """The user picked tags (enter, ``[`` ``]``): new tags no longer change ``shown``."""
        self._all_tags: list[str] = []
        """Every tag in the picker's order (sorted once per new tag, filtered per keystroke)."""
        self._tags_seen: list[str] = []
        self._drawn: set[SeriesKey] = set()
        """The series the charts draw (``drawn_keys``), as of the last poll: keys change only
        when a poll brings new series, so a redraw does not scan them all again per chart."""
        self._run_names: dict[str, str] = {}
        """Event runs as the legend names them (``run_labels``), as of the last poll."""
        self._poller: Worker[None] | None = None

    # -- layout ----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield StatusHeader()
        yield Static("", id="metrics-title", markup=False)
        yield Static("", id="metrics-sources")
        with Horizontal(id="metrics-body"):
            with Vertical(id="metrics-side"):
                yield Input(placeholder="/ filter tags", id="metrics-filter")
                yield TagPicker(id="metrics-tags")
            yield VerticalScroll(id="metrics-charts", can_focus=False)
        yield KeyFooter(first=FOOTER_FIRST)

    def on_mount(self) -> None:
        header = self.query_one(StatusHeader)
        header.profile = self.shell.source.label
        header.project = self.shell.project
        self.wide = self.size.width >= GRID_WIDTH
        self._show_title()
        self._show_sources()
        self.query_one(TagPicker).focus()
        self._poller = self._poll()

    @property
    def polling(self) -> bool:
        """The worker still reads (it stops once the job has ended and was read once more)."""
        return self._poller is not None and not self._poller.is_finished

    def on_resize(self, event: events.Resize) -> None:
        self.wide = event.size.width >= GRID_WIDTH
        self._size_grid()
        self._show_title()

    def watch_wide(self) -> None:
        self.set_class(not self.wide, "-narrow")
        if self.is_mounted:
            self._draw()

    def _size_grid(self) -> None:
        """Up to two rows of charts share the pane's height; more rows scroll, each half of it
        (at least ``ROW_MIN_HEIGHT``)."""
        charts = self.query_one("#metrics-charts", VerticalScroll)
        count = len(self._visible())
        rows = math.ceil(count / 2) if self.wide else 1
        if rows <= 2:
            charts.styles.grid_rows = "1fr"
        else:
            charts.styles.grid_rows = str(max(ROW_MIN_HEIGHT, charts.size.height // 2))

    # -- reading ---------------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="metrics", exit_on_error=False, description="Metrics")
    def _poll(self) -> None:
        """Read every second while the job runs; at once while a backlog is left; once more
        after the job ended (``ScalarPoll.ended``), then stop."""
        worker = get_current_worker()
        source: ScalarSource | None = None
        while not worker.is_cancelled:
            try:
                source = source or self._scalars(self.job_id, self.trial)
                poll = source.poll()
            except ApiCallError as exc:
                if not _cancelled(worker):
                    self.app.call_from_thread(self._poll_failed, str(exc))
                _sleep_unless_cancelled(worker, RETRY_SECONDS)
                continue
            with self.data_lock:
                for batch in poll.batches:
                    self.metrics.add_points(batch.key, batch.steps, batch.wall_times, batch.values)
            if _cancelled(worker):  # the view was closed while the source was read
                return
            self.app.call_from_thread(self._polled, poll.statuses, poll.job, poll.ended)
            if poll.more:
                continue
            if poll.ended:
                return
            _sleep_unless_cancelled(worker, POLL_SECONDS)

    def _poll_failed(self, message: str) -> None:
        self.error = message
        self._show_sources()

    def _polled(
        self, statuses: list[SourceStatus], job: dict[str, Any] | None, ended: bool
    ) -> None:
        self.error = None
        self.statuses = statuses
        if job is not None:
            self.job = job
        self.ended = ended
        with self.data_lock:
            drawn = drawn_keys(self.metrics)
        self._drawn = set(drawn)
        self._run_names = run_labels(k.run for k in drawn if k.source == "events")
        tags = sorted({k.tag for k in drawn}, key=tag_sort_key)
        if tags != self._tags_seen:  # printed-only tags go once event files give points
            self._tags_seen = tags
            self._all_tags = grouped_order(tags)
            self._filter_tags()
        if not self._chosen:
            self._default_tags()
        self._show_title()
        self._show_sources()
        self._draw()
        self.polls += 1

    # -- what is shown ---------------------------------------------------------------------------

    @property
    def tuning(self) -> bool:
        """A tuning job's own view (not one trial's): a tag's trials are overlaid."""
        return self.trial is None and self.job is not None and is_tuning_job(self.job)

    def goal_tag(self) -> str:
        """The tuning job's goal metric (``hyperparameterMetricTag``, else the default)."""
        return (metric_tag(self.job) if self.job else None) or DEFAULT_METRIC_TAG

    def _default_tags(self) -> None:
        """Until the user picks: a tuning job's goal metric, else the first few tags."""
        shown = [self.goal_tag()] if self.tuning else self._all_tags[:DEFAULT_CHARTS]
        if shown != self.shown:
            self.shown = shown
            self.current = 0

    def _visible(self) -> list[str]:
        if not self.shown:
            return []
        if self.wide:
            return self.shown[:MAX_CHARTS]
        return [self.shown[min(self.current, len(self.shown) - 1)]]

    def charts(self) -> list[MetricChart]:
        """The charts on screen, in order (those not needed now are kept, hidden)."""
        return [chart for chart in self.query(MetricChart) if chart.display]

    def _draw(self) -> None:
        """Give each visible tag a chart (added or removed as needed) and its lines."""
        if not self.is_mounted:
            return
        pane = self.query_one("#metrics-charts", VerticalScroll)
        visible = self._visible()
        # Charts not needed now are hidden, not removed: a resize between one chart and four
        # (80 and 120 columns) then shows them again without mounting new widgets.
        charts = list(pane.query(MetricChart))
        for extra in charts[len(visible) :]:
            extra.display = False
        charts = charts[: len(visible)]
        tz = self.shell.clock().tzinfo
        while len(charts) < len(visible):
            chart = MetricChart(data_lock=self.data_lock, tz=tz)
            pane.mount(chart)
            charts.append(chart)
        for chart in charts:
            chart.display = True
        lines = {tag: self.lines_of(tag) for tag in visible}
        # Charts side by side keep their legends the same height, so their plots and x axes
        # line up row for row.
        legend_rows = max((min(len(v), LEGEND_MAX_LINES) for v in lines.values()), default=0)
        options = ChartOptions(
            self.smoothing, self.log_y, self.x_axis, self.last_steps, legend_rows
        )
        current = self.shown[self.current] if self.shown else None
        for chart, tag in zip(charts, visible, strict=True):
            chart.show(tag, tag_group(tag), lines[tag], options)
            chart.set_class(len(visible) > 1 and tag == current, "-current")
            chart.set_class(self.wide and len(visible) == 1, "-span")
        self.query_one(TagPicker).set_shown(visible)
        self._size_grid()

    def lines_of(self, tag: str) -> list[ChartLine]:
        """One line per series of ``tag``: named by run and trial, the best trial strongest."""
        with self.data_lock:
            keys = [k for k in self.metrics.keys_for(tag) if k in self._drawn]
            versions = [self.metrics.version(k) for k in keys]
            series = [self.metrics.series(k) for k in keys]
        best = self._best_trial()
        # A tuning job's trials by the goal, best first, then those with no final value by
        # number: the legend lists the first few, and they should be the ones that matter.
        ranks = {t: i for i, t in enumerate(self._ranked_trials())}
        keys_order = sorted(
            range(len(keys)),
            key=lambda i: (
                ranks.get(keys[i].trial or "", len(ranks)),
                trial_order(keys[i].trial),
                keys[i].source,
            ),
        )
        runs = {k.run for k in keys}
        lines: list[ChartLine] = []
        for i in keys_order:
            key = keys[i]
            role: LineRole = "normal"
            if self.tuning and key.trial and best is not None:
                role = "best" if key.trial == best else "faint"
            lines.append(
                ChartLine(self._label(key, runs, role), series[i], versions[i], role, key.source)
            )
        return lines

    def _label(self, key: SeriesKey, runs: set[str], role: LineRole) -> str:
        parts: list[str] = []
        if key.trial and self.trial is None:
            parts.append(("★ " if role == "best" else "") + f"trial {key.trial}")
        if key.run and (len(runs) > 1 or not parts):
            run = self._run_names.get(key.run, key.run) if key.source == "events" else key.run
            parts.append("job dir" if run == "." else run)
        return " ".join(parts) or key.source

    def _goal(self) -> Goal:
        return "MINIMIZE" if goal_of(self.job or {}) == "MINIMIZE" else "MAXIMIZE"

    def _best_trial(self) -> str | None:
        if not self.tuning or self.job is None:
            return None
        return best_trial(final_objectives(self.job), self._goal())

    def _ranked_trials(self) -> list[str]:
        if not self.tuning or self.job is None:
            return []
        return ranked_trials(final_objectives(self.job), self._goal())

    # -- header ----------------------------------------------------------------------------------

    def _show_title(self) -> None:
        name = f"Metrics  {self.job_id}"
        facts: list[str] = []
        if self.trial is not None:
            facts.append(f"trial {self.trial}")
        state = self._state()
        if state is not None:
            facts.append(f"{STATE_SYMBOL.get(state, '?')} {state.value}")
        goal: list[str] = []
        if self.tuning:
            best = self._best_trial()
            if best is not None:
                facts.append(f"★ trial {best}")
            goal = [
                f"goal {goal_of(self.job or {})} {self.goal_tag()}",
                f"goal {goal_of(self.job or {})}",
            ]
        options = [f"smooth {self.smoothing:g}", f"x {self.x_axis}"]
        if self.log_y:
            options.append("log y")
        if self.last_steps is not None:
            options.append(f"last {format_step(self.last_steps)} steps")
        # The options are what s, L, x and z just changed: they stay whole. What gives way, in
        # turn: the goal's tag (each chart's title names it), the middle of the job's id, the
        # goal, then the other facts from the last.
        width = self.size.width - 2 if self.size.width else 0
        tries = [[*facts, g] for g in goal] + [facts[:n] for n in range(len(facts), -1, -1)]
        line = fit_title(name, tries, " · ".join(options), width, whole=len(goal) + 1)
        self.query_one("#metrics-title", Static).update(line)

    def _state(self) -> JobState | None:
        if self.job is None:
            return None
        raw = self.job.get("state", "")
        if self.trial is not None:
            trial = trial_of(self.job, self.trial)
            raw = trial.get("state", "QUEUED") if trial is not None else "QUEUED"
        try:
            return JobState(str(raw))
        except ValueError:
            return None

    def _show_sources(self) -> None:
        lines: list[Content] = []
        if self.error:
            lines.append(Content.assemble(("✗ ", "$text-error"), (self.error, "$text-error")))
            lines.append(Content(f"  Reading again every {RETRY_SECONDS:g} s."))
        elif not self.statuses:
            lines.append(Content(f"Reading {self.job_id}…"))
        for status in [] if self.error else self.statuses:
            if status.problem:
                lines.append(Content.assemble(("✗ ", "$text-error"), (status.text, "$text-error")))
            else:
                lines.append(Content(status.text))
        if not self.error and self.statuses and not self._all_tags:
            lines.append(Content("No metrics yet: the curves appear here as they are written."))
        self.query_one("#metrics-sources", Static).update(Content("\n").join(lines))

    # -- tags ------------------------------------------------------------------------------------

    def action_filter(self) -> None:
        self.set_focus(self.query_one("#metrics-filter", Input))

    @on(Input.Changed, "#metrics-filter")
    def _filter_changed(self) -> None:
        self._filter_tags()

    @on(Input.Submitted, "#metrics-filter")
    def _filter_done(self) -> None:
        self.query_one(TagPicker).focus()

    def _filter_tags(self) -> None:
        query = self.query_one("#metrics-filter", Input).value
        self.query_one(TagPicker).set_tags(filter_tags(self._all_tags, query))

    def on_tag_picker_tags_chosen(self, message: TagPicker.TagsChosen) -> None:
        self._show_tags(message.tags)
        picker = self.query_one(TagPicker)
        picker.clear_marks()

    def _show_tags(self, tags: Sequence[str], current: int = 0) -> None:
        self._chosen = True
        self.shown = list(tags)
        self.current = max(0, min(current, len(self.shown) - 1))
        self._draw()
        self._scroll_to_current()

    def action_move(self, delta: int) -> None:
        """``[`` ``]``: the previous or next of the charted tags; with one charted, the
        previous or next tag of the list (so ``]`` pages through every tag at 80 columns)."""
        if len(self.shown) > 1:
            self._chosen = True
            self.current = (self.current + delta) % len(self.shown)
            self._draw()
            self._scroll_to_current()
            return
        listed = list(self.query_one(TagPicker).tags) or self._all_tags
        if not listed:
            return
        here = self.shown[0] if self.shown else None
        at = listed.index(here) + delta if here in listed else 0
        tag = listed[at % len(listed)]
        self._show_tags([tag])
        self.query_one(TagPicker).move_to_tag(tag)

    def _scroll_to_current(self) -> None:
        if not self.wide or not self.shown:
            return
        charts = self.charts()
        if 0 <= self.current < len(charts):
            charts[self.current].scroll_visible(animate=False)

    # -- options ---------------------------------------------------------------------------------

    def watch_smoothing(self) -> None:
        self._options_changed()

    def watch_log_y(self) -> None:
        self._options_changed()

    def watch_x_axis(self) -> None:
        self._options_changed()

    def watch_last_steps(self) -> None:
        self._options_changed()

    def _options_changed(self) -> None:
        if self.is_mounted:
            self._show_title()
            self._draw()

    def action_smoothing(self) -> None:
        def chosen(text: str | None) -> None:
            if text is None:
                return
            try:
                weight = float(text)
            except ValueError:
                weight = math.nan
            if not 0.0 <= weight <= MAX_SMOOTHING:
                self.notify(
                    f"Smoothing is a number from 0 to {MAX_SMOOTHING:g}, not {text!r}.",
                    severity="warning",
                )
                return
            self.smoothing = weight

        self.app.push_screen(
            PromptScreen(
                f"Smoothing, 0 to {MAX_SMOOTHING:g} (TensorBoard's default: 0.6)",
                f"{self.smoothing:g}",
                hint="0 draws the raw curve alone; higher is smoother.",
            ),
            chosen,
        )

    def action_log_y(self) -> None:
        self.log_y = not self.log_y

    def action_x_axis(self) -> None:
        self.x_axis = X_AXES[(X_AXES.index(self.x_axis) + 1) % len(X_AXES)]

    def action_zoom(self) -> None:
        def chosen(text: str | None) -> None:
            if text is None:
                return
            try:
                steps = int(text.replace(",", "").replace("_", ""))
            except ValueError:
                steps = 0
            if steps <= 0:
                self.notify(f"Zoom to a number of steps above 0, not {text!r}.", severity="warning")
                return
            self.last_steps = steps

        offer = zoom_offer(self._step_span(), self.last_steps, DEFAULT_ZOOM_STEPS)
        self.app.push_screen(
            PromptScreen(
                "Zoom to the last N steps",
                str(offer),
                hint="Z shows every step again.",
            ),
            chosen,
        )

    def _step_span(self) -> int | None:
        """The newest step among the drawn series (steps count from 0): what ``z`` halves."""
        with self.data_lock:
            lasts = [self.metrics.series(k).stats.last_step for k in self._drawn]
        known = [s for s in lasts if s is not None]
        return max(known) if known else None

    def action_unzoom(self) -> None:
        self.last_steps = None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "trials":
            return self.tuning  # only a tuning job's own view has trials to pick from
        return True

    def action_trials(self) -> None:
        """Pick a trial (best first, as the trials table orders them); enter opens that
        trial's own view, with every tag it wrote."""
        if not self.tuning or self.job is None:
            return
        rows = trial_rows(self.job, self.shell.clock())
        best = self._best_trial()  # the chart's star, so the two never disagree

        def value(row: TrialRow) -> str:
            if row.final:
                return format_objective(row.objective)
            return "running" if row.state in LIVE_STATES else "no metric"

        # The goal's tag is in the title; the values alone keep each item on one line at 80.
        items = [
            ("★ " if r.trial_id == best else "  ") + f"trial {r.trial_id}  {value(r)}" for r in rows
        ]
        ids = [r.trial_id for r in rows]
        if not items:
            self.notify("No trial has started yet.", severity="warning")
            return

        def chosen(item: str | None) -> None:
            if item is not None:
                self.shell.open_metrics(self.job_id, ids[items.index(item)])

        # The dialog is 50 columns: the title names no tag (the chart does), only the order.
        title = "A trial's own curves (best first)"
        self.app.push_screen(PickerScreen(title, items), chosen)

    def action_back(self) -> None:
        """``esc``: clear the tag filter first (as the job list's esc clears its filter), then
        leave the filter box, then the view."""
        box = self.query_one("#metrics-filter", Input)
        if box.value:
            box.value = ""
            self.query_one(TagPicker).focus()
            return
        if box.has_focus:
            self.query_one(TagPicker).focus()
            return
        self.app.pop_screen()


TITLE_NAME_MIN = 16
"""The fewest cells a job's id is cut to in the header before facts give way."""


def fit_title(name: str, tries: list[list[str]], right: str, width: int, whole: int = 1) -> str:
    """``name`` and facts, then ``right``, on one line of ``width`` cells (three apart).

    ``tries`` are the facts to show, most first: the first of the first ``whole`` tries whose
    line fits with ``name`` whole wins; else the first try that fits with ``name`` cut in its
    middle to no fewer than ``TITLE_NAME_MIN`` cells (``Metrics  mnist…_053907``); else
    ``right`` alone. ``right`` is never cut while it fits. A width of 0 (before the first
    layout) keeps the first try.
    """
    gap = "   "

    def joined(facts: list[str]) -> str:
        return "".join(f" · {fact}" for fact in facts)

    for facts in tries[:whole]:
        line = f"{name}{joined(facts)}{gap}{right}"
        if width <= 0 or cell_len(line) <= width:
            return line
    for facts in tries:
        room = width - cell_len(f"{joined(facts)}{gap}{right}")
        if room >= cell_len(name):
            return f"{name}{joined(facts)}{gap}{right}"
        if room >= TITLE_NAME_MIN:
            head = room // 2
            tail = room - head - 1
            return f"{set_cell_size(name, head)}…{name[-tail:]}{joined(facts)}{gap}{right}"
    return set_cell_size(right, width)


def _cancelled(worker: Worker[None]) -> bool:
    """``worker.is_cancelled``, read afresh (a loop's ``while not`` makes mypy think it
    cannot change)."""
    return worker.is_cancelled


def _sleep_unless_cancelled(worker: Worker[None], seconds: float) -> None:
    """Sleep ``seconds`` in short steps, returning early once ``worker`` is cancelled."""
    deadline = time.monotonic() + seconds
    while not worker.is_cancelled and time.monotonic() < deadline:
        time.sleep(0.05)
