"""The job detail: ``gcloud ai-platform jobs describe --summarize`` as a screen, or the raw YAML.

The summary has a "Runtime environment" section on the local service (its ``:environment``
extension: the Python and framework versions the job got, and what was substituted). A
custom-container job's "Engine" row there says which engine runs its images (the service's
``/healthz``, read once per connection: ``Connection.container_engine``).

Under the summary, each replica's CPU and memory as sparklines (``widgets.replica_usage``), read
from the local service's ``:metrics`` extension while the job is live; hidden where the endpoint
has none (a cloud backend). When replicas run on other nodes (the service's Ray executor), the
same answer names each one's node: a "Replicas" section in the summary and each chart's label.

For a hyperparameter tuning job, a "Trials" section (``widgets.trials_table``) between the two:
a plot of the objective by trial and the trials table, best first, redrawn with every re-read of
the job (the list's poll, every ``refresh_seconds``, while the job is live). ``t`` focuses the
table and ``enter`` on a trial opens the logs filtered to it, ``M`` its metric curves (``M``
anywhere else: the job's, every trial's curve of the goal metric overlaid); ``space`` marks
trials and ``D`` compares two (or the one under the cursor with the best) in the diff view.
"""

from __future__ import annotations

import time
from datetime import UTC
from typing import TYPE_CHECKING, Any, ClassVar

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Static
from textual.worker import Worker, get_current_worker

from tui_app.api.errors import ApiCallError
from tui_app.api.metrics_client import UsageHistory
from tui_app.model.jobs.job_images import replica_image
from tui_app.model.jobs.states import JobState
from tui_app.model.jobs.tiers import Role
from tui_app.model.stacks import JobStacks
from tui_app.model.views.describe import job_yaml, summarize
from tui_app.model.views.replica_nodes import PlacedReplica
from tui_app.model.views.replica_usage import ReplicaSamples
from tui_app.model.views.trials import (
    completed_trials,
    goal_of,
    is_tuning_job,
    metric_tag,
    trial_rows,
)
from tui_app.shell.app_protocol import shell_app
from tui_app.shell.messages import JobsRefreshed
from tui_app.shell.screens.screen_toasts import ScreenToasts
from tui_app.widgets.detail_scroll import DetailScroll
from tui_app.widgets.key_footer import KeyFooter
from tui_app.widgets.line_cursor import back_binding
from tui_app.widgets.replica_usage import ReplicaUsage
from tui_app.widgets.status_header import StatusHeader
from tui_app.widgets.trials_table import TrialsSection, TrialsTable

if TYPE_CHECKING:
    from tui_app.api.metrics_client import MetricsClient

USAGE_POLL_SECONDS = 2.0
"""How often the per-replica CPU and memory are read while the job is live."""


def _sleep_unless_cancelled(worker: Worker[None], seconds: float) -> None:
    """Sleep ``seconds`` in short steps, returning early once ``worker`` is cancelled."""
    deadline = time.monotonic() + seconds
    while not worker.is_cancelled and time.monotonic() < deadline:
        time.sleep(0.1)


class DescribeScreen(Screen[None], ScreenToasts):
    """One job, refreshed with the list while it is live."""

    shell = shell_app()

    BINDINGS: ClassVar[list[BindingType]] = [
        back_binding("describe"),
        Binding("y", "toggle_yaml", "Summary/YAML", id="describe.yaml"),
        Binding("l", "logs", "Logs", id="describe.logs"),
        Binding("M", "metrics", "Metrics", id="describe.metrics", tooltip="Live metric curves"),
        Binding("t", "trials", "Trials", id="describe.trials", tooltip="The trials table"),
        Binding("x,ctrl+d", "cancel_job", "Cancel", id="describe.cancel"),
        Binding("R", "resubmit", "Resubmit", id="describe.resubmit"),
        Binding("E", "edit", "Edit+submit", id="describe.edit"),
        Binding("c", "copy", "Copy", id="describe.copy", tooltip="Copy the YAML or the error"),
    ]

    show_yaml: reactive[bool] = reactive(False)
    """Raw Job YAML instead of the summary."""
    job: reactive[dict[str, Any] | None] = reactive(None, always_update=True)
    """The Job resource as last fetched."""

    def __init__(self, job_id: str, yaml: bool = False) -> None:
        super().__init__()
        self.job_id = job_id
        self.set_reactive(DescribeScreen.show_yaml, yaml)
        self.error: str | None = None
        self.environment: dict[str, Any] | None = None
        """The local service's ``:environment`` answer ("Runtime environment" section)."""
        self.queue: dict[str, Any] | None = None
        """The local service's ``:queue`` answer while the job waits ("Waiting for resources")."""
        self.stall_stacks: JobStacks | None = None
        """The stacks the local service kept when the job stalled (the "Stall" section)."""
        self.engine: dict[str, Any] | None = None
        """The local service's container engine, for a custom-container job ("Engine")."""
        self.placement: list[PlacedReplica] = []
        """The replicas on other nodes, from ``:metrics`` ("Replicas"); [] on one machine."""
        self._engine_asked = False
        """The engine was asked for (once per screen: it is the service's, not the job's)."""
        self._fetching = False
        """A read of the job is on its way (see ``_refetch``)."""

    def compose(self) -> ComposeResult:
        yield StatusHeader()
        with DetailScroll(id="describe-body"):
            yield Static(Text(f"Loading {self.job_id}…"), id="describe-content")
            trials = TrialsSection(id="describe-trials")
            trials.display = False
            yield trials
            usage = ReplicaUsage(id="describe-usage")
            usage.display = False
            yield usage
        yield KeyFooter()

    def on_mount(self) -> None:
        header = self.query_one(StatusHeader)
        header.profile = self.shell.source.label
        header.project = self.shell.project
        self.query_one("#describe-body").focus()
        self._refetch()
        self._poll_usage()

    def on_jobs_refreshed(self, message: JobsRefreshed) -> None:
        if self.job is None or not JobState(self.job.get("state", "QUEUED")).is_terminal:
            self._refetch()

    def _refetch(self) -> None:
        """Read the job again, unless a read is already on its way (it brings the news).

        Starting another would cancel it: with a get slower than the list's refresh interval (a
        busy service, a far endpoint), no read would ever land and the pane would stay empty.
        """
        if not self._fetching:
            self._fetching = True
            self._fetch()

    @work(thread=True, exclusive=True, group="describe", exit_on_error=False)
    def _fetch(self) -> None:
        worker = get_current_worker()
        try:
            job = self.shell.source.call(lambda c: c.get(self.job_id))
        except ApiCallError as exc:
            if not worker.is_cancelled:
                self.app.call_from_thread(self._failed, str(exc))
        else:
            if not worker.is_cancelled:
                self.app.call_from_thread(setattr, self, "job", job)
        finally:
            if not worker.is_cancelled:
                self.app.call_from_thread(setattr, self, "_fetching", False)

    def _failed(self, message: str) -> None:
        self.error = message
        if self.job is None:
            self.query_one("#describe-content", Static).update(
                Text(f"Cannot load {self.job_id}: {message}", style="bold")
            )
        else:
            self.notify(f"Refresh failed: {message}", severity="warning")

    def watch_job(self) -> None:
        job = self.job
        if job is not None and not self._engine_asked:
            ti = job.get("trainingInput")
            # The master's image makes a container job (every role inherits it).
            if isinstance(ti, dict) and replica_image(ti, Role.MASTER):
                self._engine_asked = True
                self._read_engine()
        self._show()

    @work(thread=True, group="describe-engine", exit_on_error=False, description="Engine")
    def _read_engine(self) -> None:
        """The local service's engine (blocking; the connection keeps the answer, so a reopened
        describe costs no request)."""
        engine: dict[str, Any] | None = None
        try:
            conn = self.shell.source.connection()
            if not conn.local:  # a cloud backend runs containers itself: no row
                return
            engine = conn.container_engine()
        except ApiCallError:
            pass
        if engine is None:  # the service did not answer: ask again with the next refresh
            self.app.call_from_thread(setattr, self, "_engine_asked", False)
        else:
            self.app.call_from_thread(self._engine_arrived, engine)

    def _engine_arrived(self, engine: dict[str, Any]) -> None:
        self.engine = engine
        self._show()

    def watch_show_yaml(self) -> None:
        self._show()
        # Each view opens at its top: the other's scroll position means nothing in it.
        self.query_one("#describe-body").scroll_home(animate=False)

    def _show(self) -> None:
        if self.job is None or not self.is_mounted:
            return
        content = self.query_one("#describe-content", Static)
        content.update(self._yaml() if self.show_yaml else self._summary())
        self._show_trials()
        usage = self.query_one(ReplicaUsage)
        usage.display = bool(usage.replicas) and not self.show_yaml

    # -- trials of a tuning job ------------------------------------------------------------------

    def _show_trials(self) -> None:
        assert self.job is not None
        section = self.query_one(TrialsSection)
        shown = is_tuning_job(self.job) and not self.show_yaml
        if shown != section.display:
            self.refresh_bindings()
        section.display = shown
        if not shown:
            return
        section.show(
            trial_rows(self.job, self.shell.clock()),
            goal_of(self.job),
            metric_tag(self.job),
            completed_trials(self.job),
        )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "trials":  # only a tuning job's summary has the table
            return self.job is not None and is_tuning_job(self.job) and not self.show_yaml
        return True

    def action_trials(self) -> None:
        table = self.query_one(TrialsTable)
        if table.display:
            table.focus()
        else:
            self.query_one(TrialsSection).scroll_visible()

    def on_trials_table_trial_selected(self, message: TrialsTable.TrialSelected) -> None:
        self.shell.open_logs(self.job_id, trial=message.trial_id)

    def on_trials_table_trial_metrics_requested(
        self, message: TrialsTable.TrialMetricsRequested
    ) -> None:
        """``M`` on a trial row: that trial's own curves (``M`` elsewhere: the job's)."""
        message.stop()
        self.shell.open_metrics(self.job_id, message.trial_id)

    def on_trials_table_trial_diff_requested(self, message: TrialsTable.TrialDiffRequested) -> None:
        """``D`` on the trials: the two trials' documents side by side."""
        message.stop()
        self.shell.open_diff(message.left, message.right, message.reason, trials_of=self.job_id)

    # -- per-replica usage -----------------------------------------------------------------------

    @work(
        thread=True,
        exclusive=True,
        group="describe-usage",
        exit_on_error=False,
        description="Replica usage",
    )
    def _poll_usage(self) -> None:
        """Read the samples every few seconds until the job has ended (then once more)."""
        worker = get_current_worker()
        history = UsageHistory()
        client: MetricsClient | None = None
        connection: object = None
        while not worker.is_cancelled:
            job = self.job
            ended = job is not None and JobState(job.get("state", "QUEUED")).is_terminal
            try:
                conn = self.shell.source.connection()
                if conn.vertex:  # Vertex AI has no per-replica samples: no charts
                    return
                if client is None or conn is not connection:
                    connection = conn
                    client = conn.metrics(self.shell.project)
                if not self.environment:  # until the job's environment is known
                    environment = client.environment(self.job_id)
                    if environment and not worker.is_cancelled:
                        self.app.call_from_thread(self._environment_arrived, environment)
                taken = ((job or {}).get("stall") or {}).get("stacksTakenAt")
                kept = self.stall_stacks
                if taken and (kept is None or kept.taken_at != taken):  # once per stall
                    try:
                        stacks = client.stacks(self.job_id, at_stall=True)
                    except ApiCallError:
                        stacks = None  # not kept after all: the row says when they were taken
                    if stacks is not None and not worker.is_cancelled:
                        self.app.call_from_thread(self._stall_stacks_arrived, stacks)
                queued = job is not None and job.get("state") == JobState.QUEUED.value
                if queued or self.queue:  # why it waits, until it no longer does
                    queue = client.queue(self.job_id) if queued else None
                    if queue != self.queue and not worker.is_cancelled:
                        self.app.call_from_thread(self._queue_arrived, queue)
                full = history.needs_full_read
                metrics = client.read(self.job_id, None if full else history.since)
            except ApiCallError:
                pass  # the service is away: the list's banner says so; try again next round
            else:
                if metrics is None:  # no such endpoint (a cloud backend): the charts stay hidden
                    return
                if history.add(metrics, full) and not worker.is_cancelled:
                    self.app.call_from_thread(
                        self._usage_arrived,
                        history.replicas(),
                        history.interval_seconds,
                        history.placement(),
                    )
                if ended:  # read after the job ended: its last samples are in
                    return
            _sleep_unless_cancelled(worker, USAGE_POLL_SECONDS)

    def _stall_stacks_arrived(self, stacks: JobStacks) -> None:
        self.stall_stacks = stacks
        self._show()

    def _queue_arrived(self, queue: dict[str, Any] | None) -> None:
        self.queue = queue
        self._show()

    def _environment_arrived(self, environment: dict[str, Any]) -> None:
        self.environment = environment
        self._show()

    def _usage_arrived(
        self,
        replicas: list[ReplicaSamples],
        interval: float | None,
        placement: list[PlacedReplica] | None = None,
    ) -> None:
        if not self.is_mounted:
            return
        if placement is not None and placement != self.placement:
            # Rare (a job's replicas are placed once): the summary is redrawn only then.
            self.placement = placement
            self._show()
        usage = self.query_one(ReplicaUsage)
        ti = (self.job or {}).get("trainingInput")
        if isinstance(ti, dict) and replica_image(ti, Role.MASTER):
            engine = (self.engine or {}).get("name") or "the engine"
            usage.show(replicas, interval, f"Each replica's container, from {engine}'s stats")
        else:
            usage.show(replicas, interval)
        usage.display = bool(replicas) and not self.show_yaml

    def _yaml(self) -> RenderableType:
        assert self.job is not None
        return Syntax(
            job_yaml(self.job),
            "yaml",
            theme="ansi_dark",
            word_wrap=True,
            background_color="default",
        )

    def _summary(self) -> RenderableType:
        assert self.job is not None
        parts: list[RenderableType] = []
        now = self.shell.clock()
        tuning = is_tuning_job(self.job)
        sections = summarize(
            self.job,
            now,
            tz=now.tzinfo or UTC,
            environment=self.environment,
            queue=self.queue,
            engine=self.engine,
            placement=self.placement,
            stall_stacks=self.stall_stacks,
        )
        for section in sections:
            parts.append(Text(section.title, style="bold underline"))
            grid = Table.grid(padding=(0, 2))
            grid.add_column(style="bold", no_wrap=True)
            grid.add_column(overflow="fold")
            rows = _without_trials(section.rows) if tuning else section.rows
            for key, value in rows:
                grid.add_row(key, value)
            parts.append(grid)
            parts.append(Text(""))
        return Group(*parts)

    # -- actions ---------------------------------------------------------------------------------

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_logs(self) -> None:
        self.shell.open_logs(self.job_id)

    def action_metrics(self) -> None:
        self.shell.open_metrics(self.job_id)

    def action_toggle_yaml(self) -> None:
        self.show_yaml = not self.show_yaml

    def action_cancel_job(self) -> None:
        state = JobState((self.job or {}).get("state", "RUNNING"))
        self.shell.confirm_cancel([self.job_id], {self.job_id: state})

    def action_resubmit(self) -> None:
        self.shell.resubmit(self.job_id)

    def action_edit(self) -> None:
        self.shell.edit_and_resubmit(self.job_id)

    def action_copy(self) -> None:
        if self.job is None:
            return
        text = job_yaml(self.job) if self.show_yaml else self.job.get("errorMessage") or self.job_id
        self.app.copy_to_clipboard(text)
        self.notify("Copied (OSC 52).")


def _without_trials(rows: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The rows less the "Trials" list (and its continuation rows): the table shows them."""
    out: list[tuple[str, str]] = []
    in_trials = False
    for key, value in rows:
        if key:
            in_trials = key == "Trials"
        if not in_trials:
            out.append((key, value))
    return out
