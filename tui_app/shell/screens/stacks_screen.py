"""The stacks view: where each replica of a job is, in its Python threads, right now.

::

    Stacks of hung_20261207_153800 · taken 15:38:22 · 4 replicas in 2 groups
    ▶ master 0, worker 0, 1 (3 replicas, the same stacks): in `pull` ← `readinto` (idle)
      (thread ids of master 0, pid 1749)
      Thread 140406354819968 "MainThread" (idle)
        readinto (socket.py:706)
        pull (ps.py:231)
        ...
      ps 0: in `_hang` ← `wait` (idle)
        ...

``S`` on the list (every replica) or in the logs (the replica shown, or every one from the
merged view; a trial's pane: that trial's) opens it, through ``ShellApp.open_stacks``. The
service takes the dumps (py-spy) when asked: the local service's ``:stacks`` extension, read
through ``MetricsClient.stacks`` in a thread worker (the call blocks for as long as the dumps
take, seconds for a Ray node), so the keys keep working meanwhile. A cloud endpoint has no such
method, and the view says so.

Replicas whose stacks are the same are folded into one section (``model.stacks.fold``), each
listed as ``tui-app jobs stacks`` prints it (``model.stacks.group_lines``: the same words), and
styled so that what matters stands out: the program's own frames bright and the library's dim,
each file:line dim, a section's idle or active state in words as well as in colour, a replica
that could not be dumped as a warning. ``[``/``]`` jump from section to section, ``o`` takes
them again with each frame's locals (they may hold secrets: the first time, a toast says so),
``K`` shows the dump the service kept when the job stalled (and back), ``r`` takes them again,
``y`` copies the whole text.

A screen given a ``JobStacks`` (``stacks=``) reads nothing: the snapshot tests draw it from
fixed data that way (a live process's thread ids and line numbers differ from run to run).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Static
from textual.worker import Worker, WorkerState, get_current_worker

from tui_app.api.errors import ApiCallError
from tui_app.model.jobs.wire import parse_time
from tui_app.model.stacks import (
    NO_STACKS_ENDPOINT,
    JobStacks,
    LineKind,
    Origin,
    StackGroup,
    StackLine,
    fold,
    group_lines,
    render_text,
)
from tui_app.shell.app_protocol import shell_app
from tui_app.shell.screens.screen_toasts import ScreenToasts
from tui_app.widgets.detail_scroll import DetailScroll
from tui_app.widgets.key_footer import KeyFooter
from tui_app.widgets.line_cursor import back_binding
from tui_app.widgets.status_header import StatusHeader

NO_ENDPOINT = NO_STACKS_ENDPOINT
"""What the view says where the endpoint has no ``:stacks`` (Vertex AI, a cloud URL)."""
LOCALS_WARNING = (
    "Locals can hold secrets (tokens, passwords, keys): they are on screen now, and y copies them."
)
"""Said once per view, the first time ``o`` asks for the locals."""

GROUP_KEYS = Binding.Group("Group")
"""``[`` and ``]``: one item in the footer, ``[ ] Group``."""


@dataclass(frozen=True)
class StacksRequest:
    """One taking of the stacks: what was asked, and its number, so that an answer to an
    earlier request (the user pressed ``o`` while it was on its way) is dropped, not shown
    under the title of the later one."""

    serial: int
    with_locals: bool
    at_stall: bool


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def heading_text(line: StackLine, *, current: bool) -> Text:
    """A section's heading: its replicas in bold, then where they are, with the state of the
    thread the summary is about in words (``(idle)`` is the summary's own; ``(active)`` is
    added), so it reads the same without colour. An error group's error is not here: the
    section shows it as a warning line of its own. ``▶`` marks the section ``[``/``]`` are at.
    """
    names = line.text[: line.split].removesuffix(": ")
    text = Text("▶ " if current else "  ", style="bold")
    text.append(names, style="bold")
    if line.error:
        return text
    text.append(": ")
    text.append(line.text[line.split :])
    if line.active:
        text.append(" (active)", style="bold")
    return text


_FRAME_STYLES = {Origin.OWN: "bold", Origin.LIBRARY: "dim", Origin.THIRD_PARTY: "dim"}
"""A frame's function by whose code it runs: the program's own stands out from the library's
(through bold and dim, which ``NO_COLOR`` keeps)."""


def listing_text(lines: list[StackLine]) -> Text:
    """The lines under a section's heading as one text: whose process, then each thread and
    its frames innermost first; each line's words are ``render_text``'s, only styled."""
    text = Text()
    for index, line in enumerate(lines):
        if index:
            text.append("\n")
        head, tail = line.text[: line.split], line.text[line.split :]
        if line.kind is LineKind.FRAME:
            text.append(head, style=_FRAME_STYLES[line.origin or Origin.OWN])
            text.append(tail, style="dim")
        elif line.kind is LineKind.THREAD:
            text.append(head + tail, style="bold" if line.active else "")
        elif line.kind is LineKind.LOCAL:
            text.append(head, style="italic")
            text.append(tail)
        else:  # whose process, a thread without Python frames
            text.append(line.text, style="dim italic")
    return text


class StackSections(Vertical):
    """The folded groups, one section each: a heading, a warning line for a group that could
    not be dumped, else its listing. Recomposed when new stacks arrive; ``[``/``]`` only move
    the marker (``mark``)."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 (Textual's name)
        super().__init__(id=id)
        self.groups: list[StackGroup] = []
        self.with_locals = False
        self.current = 0
        """The section ``[``/``]`` are at (marked ``▶``)."""

    def show(self, groups: list[StackGroup], *, with_locals: bool) -> None:
        """Show ``groups``: the marker stays on the same index where there still is one."""
        self.groups = groups
        self.with_locals = with_locals
        self.current = min(self.current, max(len(groups) - 1, 0))
        self.refresh(recompose=True)

    def compose(self) -> ComposeResult:
        for index, group in enumerate(self.groups):
            lines = group_lines(group, locals=self.with_locals)
            heading = lines[0]
            state = "-error" if heading.error else "-active" if heading.active else "-idle"
            classes = f"stacks-group {state}" + (" -current" if index == self.current else "")
            with Vertical(classes=classes):
                yield Static(
                    heading_text(heading, current=index == self.current),
                    classes="stacks-heading",
                )
                if group.error is not None:
                    yield Static(Text(f"⚠ {group.error}"), classes="stacks-error")
                else:
                    yield Static(listing_text(lines[1:]), classes="stacks-listing")

    def sections(self) -> list[Vertical]:
        return list(self.query_children(".stacks-group").results(Vertical))

    def mark(self, index: int) -> Vertical | None:
        """Move the marker to section ``index``; the section, to scroll to (None: no such)."""
        sections = self.sections()
        if not 0 <= index < len(sections) or len(sections) != len(self.groups):
            return None
        self.current = index
        for at, (section, group) in enumerate(zip(sections, self.groups, strict=True)):
            if section.has_class("-current") == (at == index):
                continue
            section.set_class(at == index, "-current")
            heading = group_lines(group, locals=False)[0]
            section.query_one(".stacks-heading", Static).update(
                heading_text(heading, current=at == index)
            )
        return sections[index]


class StacksScreen(Screen[None], ScreenToasts):
    """``S`` on the list or in the logs: a job's (or one replica's, or one trial's) stacks."""

    CSS_PATH = "stacks_screen.tcss"
    shell = shell_app()

    BINDINGS: ClassVar[list[BindingType]] = [
        back_binding("stacks"),
        Binding(
            "left_square_bracket,p",
            "group(-1)",
            "Prev group",
            id="stacks.prev-group",
            group=GROUP_KEYS,
        ),
        Binding(
            "right_square_bracket,n",
            "group(1)",
            "Next group",
            id="stacks.next-group",
            group=GROUP_KEYS,
        ),
        Binding(
            "o",
            "toggle_locals",
            "Locals",
            id="stacks.locals",
            tooltip="Take them again with each frame's locals (they may hold secrets), or without",
        ),
        Binding(
            "K",
            "toggle_at_stall",
            "At stall",
            id="stacks.at-stall",
            tooltip="The stacks the service kept when the job stalled, or back to now",
        ),
        Binding("r", "retake", "Take again", id="stacks.retake", tooltip="Take them again now"),
        Binding(
            "y",
            "copy",
            "Copy",
            id="stacks.copy",
            tooltip="The whole text, as tui-app jobs stacks prints it (OSC 52)",
        ),
    ]

    def __init__(
        self,
        job_id: str,
        replica: str | None = None,
        trial: str | None = None,
        *,
        at_stall: bool = False,
        stacks: JobStacks | None = None,
    ) -> None:
        """Args:
        job_id: The job.
        replica: Only this replica's stacks (``worker-replica-0``); None: every replica's.
        trial: Only this trial's replicas (a tuning job's trial id).
        at_stall: Show the stacks the service kept when the job stalled, not new ones.
        stacks: Show these and read nothing (fixed data, snapshots).
        """
        super().__init__()
        self.job_id = job_id
        self.replica = replica
        self.trial = trial
        self.at_stall = at_stall
        """``K``: the dump kept at the stall (it never has locals) rather than one taken now."""
        self.with_locals = stacks.locals if stacks is not None else False
        """``o``: ask for each frame's locals."""
        self.stacks: JobStacks | None = stacks
        """The stacks on screen (None: none yet, or the last taking failed)."""
        self.groups: list[StackGroup] = fold(stacks.replicas) if stacks is not None else []
        self.shown: StacksRequest | None = None
        """The request whose answer is on screen (what the title describes)."""
        self.error: str | None = None
        """Why the last taking failed: the service's words (it is shown on screen)."""
        self.no_endpoint = False
        """The endpoint has no ``:stacks`` (a cloud one)."""
        self.takes = 0
        """How many answers arrived (tests wait on it)."""
        self._fixed = stacks is not None
        self._serial = 0
        self._pending: StacksRequest | None = None
        """The request on its way (None: none)."""
        self._warned_locals = False
        if stacks is not None:
            self.shown = StacksRequest(0, stacks.locals, at_stall)

    @property
    def taking(self) -> bool:
        """A request is on its way."""
        return self._pending is not None

    # -- layout --------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield StatusHeader()
        yield Static("", id="stacks-title")
        yield Static("", id="stacks-status")
        with DetailScroll(id="stacks-body"):
            yield Static("", id="stacks-message")
            yield StackSections(id="stacks-groups")
        yield KeyFooter(
            first=("stacks.next-group", "toggle_locals", "toggle_at_stall", "retake", "copy")
        )

    def on_mount(self) -> None:
        header = self.query_one(StatusHeader)
        header.profile = self.shell.source.label
        header.project = self.shell.project
        self.query_one(DetailScroll).focus()
        if self._fixed:
            self._show()
        else:
            self._take()

    def title_text(self) -> Text:
        """``Stacks of J · taken 15:38:22 · 4 replicas in 2 groups · locals``: what is shown,
        the time in the user's zone (the clock's), and ``kept when it stalled`` for ``K``'s."""
        text = Text("Stacks of ", style="bold")
        text.append(self.job_id, style="bold")
        if self.trial is not None:
            text.append(f" · trial {self.trial}")
        if self.replica is not None:
            text.append(f" · {self.replica}")
        stacks, shown = self.stacks, self.shown
        if stacks is not None and shown is not None:
            taken = parse_time(stacks.taken_at)
            when = (
                taken.astimezone(self.shell.clock().tzinfo).strftime("%H:%M:%S")
                if taken is not None
                else stacks.taken_at
            )
            count = _plural(len(stacks.replicas), "replica")
            text.append(f" · taken {when} · {count} in {_plural(len(self.groups), 'group')}")
            if stacks.locals:
                text.append(" · locals", style="bold")
            if shown.at_stall:
                text.append(" · kept when it stalled", style="bold")
        return text

    def _status_text(self) -> str:
        """The line under the title: what is on its way, or what to do about an error."""
        pending = self._pending
        if pending is not None:
            what = "Reading the stacks kept when the job stalled…" if pending.at_stall else ""
            if not what:
                what = "Taking stacks with locals…" if pending.with_locals else "Taking stacks…"
            return what
        if self.error is not None:
            return "r tries again" + (" · K goes back to the stacks now." if self.at_stall else ".")
        return ""

    def _show(self) -> None:
        if not self.is_attached:
            return
        self.query_one("#stacks-title", Static).update(self.title_text())
        status = self.query_one("#stacks-status", Static)
        line = self._status_text()
        status.update(line)
        status.display = bool(line)
        message = self.query_one("#stacks-message", Static)
        sections = self.query_one(StackSections)
        if self.stacks is not None:
            message.display = False
            sections.display = True
            if sections.groups is not self.groups or sections.with_locals != self.stacks.locals:
                sections.show(self.groups, with_locals=self.stacks.locals)
            return
        sections.display = False
        if sections.groups:
            sections.show([], with_locals=False)
        if self.error is not None:
            message.update(Text(f"Cannot take the stacks of {self.job_id}: {self.error}"))
        elif self.no_endpoint:
            message.update(Text(NO_ENDPOINT))
        else:
            message.update("")
        message.display = self.error is not None or self.no_endpoint

    # -- taking them ---------------------------------------------------------------------------

    def _take(self) -> None:
        """Ask for the stacks as the view is set now (locals, kept at the stall); the answer
        replaces what is on screen. What is shown stays until then, unless it is of another
        kind than asked (with locals, kept): it would be taken for the answer."""
        if self._fixed:
            return
        self._serial += 1
        request = StacksRequest(self._serial, self.with_locals and not self.at_stall, self.at_stall)
        self._pending = request
        shown = self.shown
        if shown is not None and (shown.with_locals, shown.at_stall) != (
            request.with_locals,
            request.at_stall,
        ):
            self.stacks, self.groups, self.shown = None, [], None
        self.error = None
        self.no_endpoint = False
        self._show()
        self._fetch(request)

    @work(thread=True, exclusive=True, group="stacks", exit_on_error=False, description="Stacks")
    def _fetch(self, request: StacksRequest) -> None:
        """Take (or read the kept) stacks and fold them, off the event loop: the call blocks
        until every replica is dumped."""
        worker = get_current_worker()
        try:
            stacks = self._read(request)
        except ApiCallError as exc:
            if not worker.is_cancelled:
                self.app.call_from_thread(self._failed, request, str(exc))
            return
        groups = fold(stacks.replicas) if stacks is not None else []
        if not worker.is_cancelled:
            self.app.call_from_thread(self._arrived, request, stacks, groups)

    def _read(self, request: StacksRequest) -> JobStacks | None:
        """The service's answer to ``request`` (blocking: the worker's thread); None where the
        endpoint has no ``:stacks``."""
        connection = self.shell.source.connection()
        if connection.vertex:  # Vertex AI runs no py-spy for us; its endpoint has no :stacks
            return None
        with connection.metrics(self.shell.project) as client:
            return client.stacks(
                self.job_id,
                replica=self.replica,
                trial=self.trial,
                with_locals=request.with_locals,
                at_stall=request.at_stall,
            )

    def _arrived(
        self, request: StacksRequest, stacks: JobStacks | None, groups: list[StackGroup]
    ) -> None:
        if request is not self._pending:
            return  # a later request is on its way: its answer is the one to show
        self._pending = None
        self.takes += 1
        self.error = None
        self.no_endpoint = stacks is None
        self.stacks = stacks
        self.groups = groups
        self.shown = request if stacks is not None else None
        self._show()

    def _failed(self, request: StacksRequest, message: str) -> None:
        """The service refused (the job runs no replica, never stalled...) or did not answer:
        its words on screen, instead of stacks that are no longer the job's."""
        if request is not self._pending:
            return
        self._pending = None
        self.takes += 1
        self.error = message
        self.stacks, self.groups, self.shown = None, [], None
        self._show()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A taking that broke for a reason no call names (a bug, a broken answer) still ends
        the "Taking stacks…" line, with what went wrong, instead of leaving it up forever."""
        pending = self._pending
        if event.worker.group == "stacks" and event.state == WorkerState.ERROR and pending:
            self._failed(pending, f"{type(event.worker.error).__name__}: {event.worker.error}")

    # -- actions -------------------------------------------------------------------------------

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_group(self, step: int) -> None:
        """``[``/``]``: the previous or next section, scrolled to the top of the view."""
        sections = self.query_one(StackSections)
        if not sections.groups:
            return
        target = sections.current + step
        if not 0 <= target < len(sections.groups):
            where = "first" if step < 0 else "last"
            self.notify(f"This is the {where} group.", timeout=1.5)
            return
        section = sections.mark(target)
        if section is not None:
            self.query_one(DetailScroll).scroll_to_widget(section, animate=False, top=True)

    def _refuse_when_fixed(self) -> bool:
        if self._fixed:
            self.notify("These are fixed stacks: there is nothing to take again.")
        return self._fixed

    def action_toggle_locals(self) -> None:
        """``o``: take them again with each frame's locals, or without; the kept dump has none."""
        if self._refuse_when_fixed():
            return
        if self.at_stall:
            self.notify(
                "The stacks kept at a stall have no locals: K goes back to the stacks now, "
                "then o takes them with locals.",
                severity="warning",
            )
            return
        self.with_locals = not self.with_locals
        if self.with_locals and not self._warned_locals:
            self._warned_locals = True
            self.notify(LOCALS_WARNING, title="Locals", severity="warning", timeout=8)
        self._take()

    def action_toggle_at_stall(self) -> None:
        """``K``: the dump the service kept when the job stalled, or back to taking them now."""
        if self._refuse_when_fixed():
            return
        self.at_stall = not self.at_stall
        self._take()

    def action_retake(self) -> None:
        """``r``: take them again now (the kept dump: read it again), or try again after an
        error."""
        if not self._refuse_when_fixed():
            self._take()

    def copy_text(self) -> str:
        """What ``y`` copies: a title line, then ``render_text``, as ``jobs stacks`` prints."""
        stacks, shown = self.stacks, self.shown
        if stacks is None or shown is None:
            return ""
        when = "kept when the job stalled, taken" if shown.at_stall else "taken"
        lines = [f"Stacks of {self.job_id}, {when} {stacks.taken_at}:", ""]
        lines += render_text(self.groups, locals=stacks.locals)
        return "\n".join(lines) + "\n"

    def action_copy(self) -> None:
        text = self.copy_text()
        if not text:
            self.notify("Nothing to copy yet: no stacks are shown.")
            return
        self.app.copy_to_clipboard(text)
        lines = text.count("\n")
        self.notify(f"Copied the stacks ({lines} lines, OSC 52).")
