"""The diff view: what changed between two jobs, or two trials of one tuning job, side by side.

::

    Diff  mnist_20261122_083000 → mnist_20261122_101500 · resubmitted from it
    1 difference (Training input) · 43 fields the same · u shows them
    field            │ mnist_20261122_083000      │ mnist_20261122_101500
    Job · 3 changed · 2 the same
      jobId          │ mnist_20261122_083000      │ mnist_20261122_101500
    ...

Each side is read in a thread worker: the job (jobs.get), then what the model compares
(``tui_app.api.job_compare.gather_facts``: the ``:environment`` answer with the packages'
hashes, the last scalar values), made into one document per side
(``model.views.job_diff.comparison_document``, or ``trial_document`` for trials) and compared
field by field (``diff_sections``). The view shows the changed rows of each section and folds
the unchanged ones into "⋯ 12 the same", which ``u`` unfolds everywhere. What a job that has not
started cannot tell yet (its packages' bytes, its runtime: ``DiffRow.pending``) is neither: the
section's title and the summary count it as "not known yet", and no row shows it as a change.
The column titles keep what tells the two names apart when they are too long for their columns
(``shorten_apart``): two trials of one job differ only at their ends. ``s`` swaps the sides,
``y`` copies the unified diff (OSC 52, as ``c`` copies elsewhere), ``r`` reads both again.
While one of the jobs is live, a list refresh that shows its state changed reads them again,
so a resubmitted job's outcome fills in as it runs.

A screen given the two documents (``DiffScreen.of_documents``) reads nothing: the snapshot
tests draw it from fixed data that way.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult, RenderResult
from textual.binding import Binding, BindingType
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Static
from textual.worker import Worker, WorkerState, get_current_worker

from tui_app.api.errors import ApiCallError
from tui_app.model.views.job_diff import (
    DiffSection,
    comparison_document,
    diff_sections,
    shorten_apart,
    trial_document,
    unified_diff,
)
from tui_app.shell.app_protocol import shell_app
from tui_app.shell.messages import JobsRefreshed
from tui_app.shell.screens.screen_toasts import ScreenToasts
from tui_app.widgets.detail_scroll import DetailScroll
from tui_app.widgets.diff_table import DiffHeading, DiffTable, label_width
from tui_app.widgets.key_footer import KeyFooter
from tui_app.widgets.line_cursor import back_binding
from tui_app.widgets.status_header import StatusHeader

if TYPE_CHECKING:
    from tui_app.api.jobs_api import JobsApi

Document = Mapping[str, Any]


def _get(client: JobsApi, job_id: str) -> dict[str, Any]:
    return client.get(job_id)


def value_widths(width: int, label_w: int) -> tuple[int, int]:
    """The cells each value column of the diff's grid holds, at ``width`` with a ``label_w``
    label column: as rich lays out ``widgets.diff_table``'s grid (three columns, one cell of
    padding between them and none at the edges, a rule between columns, the value columns
    sharing the rest by ratio, the first taking the odd cell). The heading needs it to shorten
    a name by what tells it apart before the column cuts its end
    (tests/unit/test_diff_table_layout.py holds it to rich's own layout)."""
    flexible = width - 2 - (label_w + 1)
    first = math.ceil(flexible / 2)
    return first - 2, flexible - first - 1


class NamesHeading(DiffHeading):
    """The column titles, each side's name shortened in the middle of what it shares with the
    other rather than at its end: ``mnist_hptunin…61207_033400/4`` and ``…/6``, not twice
    ``mnist_hptuning_20261207_0334…`` (at 80 columns, two trials' names)."""

    full_names: tuple[str, str] = ("", "")
    """The two names whole; ``render`` shortens them to the columns' widths."""

    def show(
        self, names: tuple[str, str], sections: Sequence[DiffSection], *, unchanged: bool
    ) -> None:
        self.full_names = names
        super().show(names, sections, unchanged=unchanged)

    def render(self) -> RenderResult:
        width = self.size.width
        left_w, right_w = value_widths(width, label_width(self.sections, self.unchanged, width))
        left, right = self.full_names
        self.names = (shorten_apart(left, right, left_w), shorten_apart(right, left, right_w))
        return super().render()


def shown_sections(sections: Sequence[DiffSection]) -> list[DiffSection]:
    """The sections as the table draws them: rows not known yet left out, and counted in their
    section's title ("Runtime environment · 6 not known yet").

    The table draws a row as changed or as the same; a value a job that has not started cannot
    have yet is neither, so it is not drawn as either.
    """
    shown = []
    for section in sections:
        pending = len(section.pending)
        if pending:
            rows = tuple(r for r in section.rows if not r.pending)
            section = replace(
                section, title=f"{section.title} · {pending} not known yet", rows=rows
            )
        shown.append(section)
    return shown


@dataclass(frozen=True)
class DiffSubject:
    """One side of a diff: a job, or one trial of a tuning job."""

    job_id: str
    trial_id: str | None = None

    @property
    def name(self) -> str:
        """How the view and the copied diff name the side: ``mnist_…``, ``hptune_…/3``."""
        return self.job_id if self.trial_id is None else f"{self.job_id}/{self.trial_id}"


class DiffScreen(Screen[None], ScreenToasts):
    """``D`` on the list (two marked jobs, or a job and its partner) or on a trial; ``:diff``."""

    CSS_PATH = "diff_screen.tcss"
    shell = shell_app()

    BINDINGS: ClassVar[list[BindingType]] = [
        back_binding("diff"),
        Binding(
            "u",
            "toggle_unchanged",
            "Unchanged",
            id="diff.unchanged",
            tooltip="Show or fold the fields both sides share",
        ),
        Binding("s", "swap", "Swap", id="diff.swap", tooltip="Swap the left and right sides"),
        Binding(
            "y", "copy", "Copy diff", id="diff.copy", tooltip="The unified diff (diff -u), OSC 52"
        ),
        Binding("r", "reread", "Re-read", id="diff.reread", tooltip="Read both sides again"),
    ]

    show_unchanged: var[bool] = var(False)
    """Every field, the unchanged ones dimmed, instead of a "⋯ N the same" line per section."""

    def __init__(
        self,
        left: DiffSubject,
        right: DiffSubject,
        reason: str = "",
        *,
        documents: tuple[Document, Document] | None = None,
    ) -> None:
        """Args:
        left: The older side, as a rule (the partner, the earlier of two marked jobs).
        right: The other side.
        reason: Why these two, for the header ("resubmitted from it", "marked").
        documents: The two sides' comparison (or trial) documents: the screen shows them and
            reads nothing (fixed data, snapshots).
        """
        super().__init__()
        self.left = left
        self.right = right
        self.reason = reason
        self.documents: tuple[Document, Document] | None = documents
        self.sections: list[DiffSection] = (
            diff_sections(*documents) if documents is not None else []
        )
        self.error: str | None = None
        self.reads = 0
        """How many times both sides were read and compared (tests wait on it)."""
        self._fixed = documents is not None
        self._mounted = False
        """Composed: ``_show`` has its widgets (``show_unchanged`` may change before)."""
        self._reading = False
        self._states: dict[str, str] = {}
        """Each job's state when it was read: a list refresh that differs reads again."""
        self._missed = False
        """A list changed while a read was on its way (see ``on_jobs_refreshed``)."""

    @classmethod
    def of_jobs(cls, left_id: str, right_id: str, reason: str = "") -> DiffScreen:
        return cls(DiffSubject(left_id), DiffSubject(right_id), reason)

    @classmethod
    def of_trials(cls, job_id: str, left: str, right: str, reason: str = "") -> DiffScreen:
        return cls(DiffSubject(job_id, left), DiffSubject(job_id, right), reason)

    @classmethod
    def of_documents(
        cls, left: str, right: str, documents: tuple[Document, Document], reason: str = ""
    ) -> DiffScreen:
        return cls(DiffSubject(left), DiffSubject(right), reason, documents=documents)

    # -- layout --------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield StatusHeader()
        yield Static(self._title(), id="diff-title")
        yield Static("", id="diff-summary")
        yield NamesHeading(id="diff-heading")
        with DetailScroll(id="diff-body"):
            yield Static("", id="diff-message")
            yield DiffTable(id="diff-table")
        yield KeyFooter(first=("toggle_unchanged", "swap", "copy", "reread"))

    def on_mount(self) -> None:
        header = self.query_one(StatusHeader)
        header.profile = self.shell.source.label
        header.project = self.shell.project
        self.query_one(DetailScroll).focus()
        self._mounted = True
        if self._fixed:
            self._show()
        else:
            self._reread()

    def _title(self) -> Text:
        text = Text("Diff  ", style="bold")
        text.append(self.left.name)
        text.append(" → ", style="dim")
        text.append(self.right.name)
        if self.reason:
            text.append(f" · {self.reason}", style="dim")
        return text

    def _show(self) -> None:
        if not self._mounted:
            return
        message = self.query_one("#diff-message", Static)
        table = self.query_one(DiffTable)
        heading = self.query_one(DiffHeading)
        summary = self.query_one("#diff-summary", Static)
        self.query_one("#diff-title", Static).update(self._title())
        if self.documents is None:
            names = f"{self.left.name} and {self.right.name}"
            if self.error is not None:
                message.update(Text(f"Cannot compare {names}: {self.error}", style="bold"))
                summary.update("r tries again.")
            else:
                message.update(Text(f"Reading {names}…"))
                summary.update("")
            message.display = True
            table.display = heading.display = False
            return
        message.display = False
        table.display = heading.display = True
        shown = shown_sections(self.sections)
        table.show(shown, unchanged=self.show_unchanged)
        heading.show((self.left.name, self.right.name), shown, unchanged=self.show_unchanged)
        summary.update(self._summary())

    def _summary(self) -> str:
        changed = [(s.title, len(s.changed)) for s in self.sections if s.changed]
        same = sum(s.unchanged_count for s in self.sections)
        pending = sum(len(s.pending) for s in self.sections)
        # Not a difference: the job has not started, and will have them once it has.
        later = f" · {pending} not known yet (not started)" if pending else ""
        if not changed:
            return f"No differences: the same in every field compared ({same}){later}."
        total = sum(n for _, n in changed)
        noun = "difference" if total == 1 else "differences"
        where = (
            " and ".join(title for title, _ in changed)
            if len(changed) <= 2
            else f"{len(changed)} sections"
        )
        fold = "u folds them" if self.show_unchanged else "u shows them"
        return f"{total} {noun} in {where} · {same} fields the same{later} · {fold}"

    def watch_show_unchanged(self) -> None:
        self._show()

    # -- reading -------------------------------------------------------------------------------

    def _reread(self) -> None:
        if self._fixed or self._reading:
            return
        self._reading = True
        self._read()

    @work(thread=True, exclusive=True, group="diff", exit_on_error=False, description="Diff")
    def _read(self) -> None:
        worker = get_current_worker()
        try:
            documents, states = self._gather()
        except ApiCallError as exc:
            if not worker.is_cancelled:
                self.app.call_from_thread(self._failed, str(exc))
            return
        sections = diff_sections(*documents)
        if not worker.is_cancelled:
            self.app.call_from_thread(self._arrived, documents, sections, states)

    def _gather(self) -> tuple[tuple[Document, Document], dict[str, str]]:
        """Both sides' documents and each job's state (blocking: the worker's thread)."""
        source = self.shell.source
        project = self.shell.project
        jobs: dict[str, Mapping[str, Any]] = {}
        for job_id in dict.fromkeys((self.left.job_id, self.right.job_id)):
            jobs[job_id] = source.call(partial(_get, job_id=job_id))
        states = {job_id: str(job.get("state", "")) for job_id, job in jobs.items()}
        if self.left.trial_id is not None and self.right.trial_id is not None:
            return (
                trial_document(jobs[self.left.job_id], self.left.trial_id, project),
                trial_document(jobs[self.right.job_id], self.right.trial_id, project),
            ), states
        # Loaded here: the facts bring the metrics reader, which the list does not need.
        from tui_app.api.job_compare import gather_facts

        connection = source.connection()
        now = self.shell.clock()
        left, right = (
            comparison_document(gather_facts(connection, project, jobs[s.job_id]), now)
            for s in (self.left, self.right)
        )
        return (left, right), states

    def _arrived(
        self,
        documents: tuple[Document, Document],
        sections: list[DiffSection],
        states: dict[str, str],
    ) -> None:
        self._reading = False
        self.error = None
        self.documents = documents
        self.sections = sections
        self._states = states
        self.reads += 1
        self._show()

    def _failed(self, message: str) -> None:
        self._reading = False
        if self.documents is None:
            self.error = message
            self._show()
        else:  # keep the last comparison on screen
            self.notify(f"Reading again failed: {message}", severity="warning")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A read that broke for a reason no call names (a bug, a broken answer) still ends the
        "Reading…" line, with what went wrong, instead of leaving it up forever."""
        if event.worker.group == "diff" and event.state == WorkerState.ERROR:
            self._failed(f"{type(event.worker.error).__name__}: {event.worker.error}")

    def on_jobs_refreshed(self, message: JobsRefreshed) -> None:
        """Read again when the list shows one of the jobs in another state than was read.

        A list in which nothing changed is skipped (the list can hold 100k rows), unless a
        change came while a read was on its way: that read may predate it.
        """
        if self._fixed or not self._states or not (message.changed or self._missed):
            return
        if self._reading:
            self._missed = True
            return
        self._missed = False
        for row in message.rows:
            seen = self._states.get(row.job_id)
            if seen is not None and seen != row.state.value:
                self._reread()
                return

    # -- actions -------------------------------------------------------------------------------

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_toggle_unchanged(self) -> None:
        self.show_unchanged = not self.show_unchanged

    def action_swap(self) -> None:
        self.left, self.right = self.right, self.left
        if self.documents is not None:
            self.documents = (self.documents[1], self.documents[0])
            self.sections = diff_sections(*self.documents)
        self._show()

    def action_copy(self) -> None:
        if self.documents is None:
            self.notify("Nothing to copy yet: the two sides are still being read.")
            return
        text = unified_diff(*self.documents, self.left.name, self.right.name)
        if not text:
            self.notify("Nothing to copy: the two are the same in every field compared.")
            return
        self.app.copy_to_clipboard(text)
        lines = text.count("\n") + (not text.endswith("\n"))
        self.notify(f"Copied the unified diff ({lines} lines, OSC 52).")

    def action_reread(self) -> None:
        if self._fixed:
            self.notify("These are fixed documents: there is nothing to read again.")
            return
        self._reread()
