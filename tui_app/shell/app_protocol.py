"""What a screen may ask of the App, as a Protocol: screens never import the App.

The App imports every screen it opens; a screen importing the App back made a cycle that the App
could only dodge with imports inside its methods, and let a screen reach into anything the App
has. Screens see the App through ``ShellApp`` instead: the state they read (the job source, the
project, the settings, the clock) and the requests they make (cancel, resubmit, go home, open a
screen). Everything else goes the Textual way: the App hands a screen what it needs when it
constructs it, and the App's workers reach screens with messages (``tui_app.shell.messages``).

Every full screen (logs, describe, metrics, diff, the log search, the builder) is opened one way:
an ``open_*`` method here (``self.shell.open_logs(job_id)``), because the App owns the screen
stack and what a screen reads (the metrics view's curves, the builder kept between visits), and
loads the heavy screens on first use. A widget cannot import the shell: it posts a request
message (``TrialsTable.TrialSelected``) that its screen answers with that method. A modal dialog
that answers (confirm, prompt, picker, a parameter) is pushed by whoever asks, with
``self.app.push_screen(dialog, callback)``: the answer goes back to the asker, not the App.

Textual's own App methods (``push_screen``, ``notify``, ``call_from_thread``...) stay on
``self.app``; ``self.shell`` is for what this project's App adds.

This module must not import the App (import-linter holds it): only the types the Protocol names.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from textual.message_pump import MessagePump
    from textual.worker import Worker

    from tui_app.config.settings import Settings
    from tui_app.model.jobs.states import JobState
    from tui_app.shell.jobs_source import JobsSource
    from tui_app.shell.messages import JobsRefreshed


@runtime_checkable
class ShellApp(Protocol):
    """The App as its screens see it: only what they use, so none comes to depend on the rest.

    ``JobsApp`` implements it; mypy checks that where the App hands itself to
    ``BuilderScreen.fresh``, and ``shell_app`` checks it at run time.
    """

    @property
    def source(self) -> JobsSource:
        """The jobs API, connected lazily; blocking, so call it from thread workers only."""
        ...

    @property
    def project(self) -> str: ...

    async def list_mounted(self) -> None:
        """The job list calls it as it mounts: the App may hand it the first list (in
        ``last_refresh``) for its first frame, and starts polling."""
        ...

    @property
    def last_refresh(self) -> JobsRefreshed | None:
        """The newest list of jobs as the screens got it; None until the first one."""
        ...

    @property
    def profile_name(self) -> str:
        """The active profile's name in ``settings.profiles``."""
        ...

    @property
    def settings(self) -> Settings: ...

    @property
    def clock(self) -> Callable[[], datetime]:
        """Now, in the user's time zone: screens ask this, never ``datetime.now`` (tests freeze
        it)."""
        ...

    def confirm_cancel(
        self,
        job_ids: list[str],
        states: dict[str, JobState],
        on_confirmed: Callable[[], None] | None = None,
    ) -> None:
        """Ask, naming the jobs, then cancel the ones that can be cancelled (``on_confirmed``
        runs when the user says yes)."""
        ...

    def resubmit(self, job_id: str) -> Worker[None]:
        """Submit the job again under a fresh id (in a worker; it notifies when done)."""
        ...

    def edit_and_resubmit(self, job_id: str) -> Worker[None]:
        """Open the builder on a copy of the job (``E``), read in a worker first."""
        ...

    def open_builder(
        self, job: dict[str, Any] | None = None, *, new: bool = False, note: str = ""
    ) -> None:
        """Show the builder: on ``job``, on a new form (``new``), or on the form as it was left."""
        ...

    def open_logs(
        self,
        job_id: str,
        *,
        trial: str | None = None,
        search: str = "",
        at: tuple[str, str] | None = None,
    ) -> None:
        """Show the job's logs (only trial ``trial``'s lines) over what is open; with ``search``
        (a regex) set as ``/`` sets it, and the cursor on the line keyed ``at`` (a search hit's
        (timestamp, insertId)) once the pane has it."""
        ...

    def open_search(self, query: str = "") -> None:
        """Show the search over every job's logs, searching for ``query`` at once when given."""
        ...

    def open_describe(self, job_id: str, *, yaml: bool = False) -> None:
        """Show the job's detail (its raw YAML with ``yaml``) over what is open."""
        ...

    def open_metrics(self, job_id: str, trial: str | None = None) -> None:
        """Show the job's (or its trial ``trial``'s) metric curves over what is open."""
        ...

    def open_stacks(
        self, job_id: str, replica: str | None = None, trial: str | None = None
    ) -> None:
        """Show the Python stacks of the job's replicas (only ``replica``, only trial
        ``trial``'s) over what is open."""
        ...

    def open_diff(
        self, left: str, right: str, reason: str, *, trials_of: str | None = None
    ) -> None:
        """Show jobs ``left`` and ``right`` side by side (or, ``trials_of``, two trials of that
        job) over what is open; ``reason`` says why these two."""
        ...

    def job_submitted(self, job_id: str, note: str) -> None:
        """A job was created from the UI thread: the list selects it when a poll brings it."""
        ...

    def action_home(self) -> None:
        """Back to the job list, closing whatever is open above it."""
        ...

    def run_editor(self, path: Path) -> bool:
        """Edit ``path`` in $VISUAL/$EDITOR, the TUI suspended; True when it exited 0."""
        ...


class shell_app:  # lower case: a getter, named and used like ``textual.getters.app``
    """``shell = shell_app()`` in a screen: ``self.shell`` is the running App as a ``ShellApp``.

    Textual types ``self.app`` as a plain ``App``; this gives screens the App's additions with
    their types, checked when used, without naming the App class.
    """

    def __get__(self, obj: MessagePump, owner: type[MessagePump] | None = None) -> ShellApp:
        app = obj.app
        if not isinstance(app, ShellApp):
            raise TypeError(f"{type(obj).__name__} needs an App that is a ShellApp, not {app!r}")
        return app
