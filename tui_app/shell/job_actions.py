"""Cancel, resubmit and edit a copy: the actions every screen offers on a job.

Each asks (when it must), then does the blocking API work in a thread worker and reports back
with a notification; a server's error message is shown as the server wrote it, never a traceback.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
from collections.abc import Callable, Mapping
from operator import methodcaller
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import App, SuspendNotSupported

from tui_app.api.errors import ApiCallError
from tui_app.config.settings import Settings
from tui_app.model.jobs.states import CANCELLABLE_STATES, JobState
from tui_app.shell.messages import JobsSubmitted

if TYPE_CHECKING:
    from tui_app.shell.jobs_source import JobsSource


def resubmit_details(body: Mapping[str, Any], where: str) -> list[str]:
    """What the resubmit question lists: the cluster the copy starts, and where."""
    # Imported here, as the dialogs below are: nothing of a resubmit is on the list's first frame.
    from tui_app.model.builder.tier_summary import ROLE_LABELS
    from tui_app.model.jobs.cluster import ml_units_per_hour, replica_groups
    from tui_app.model.jobs.tiers import DEFAULT_SCALE_TIER
    from tui_app.model.jobs.wire import as_mapping

    ti = as_mapping(body.get("trainingInput"))
    try:
        groups = replica_groups(ti)
        units = ml_units_per_hour(ti)
    except Exception:  # an odd old job: the question still names the ids
        groups, units = (), 0.0
    replicas = sum(g.count for g in groups)
    tier = str(ti.get("scaleTier") or DEFAULT_SCALE_TIER)
    cluster = ", ".join(f"{ROLE_LABELS[g.role]} {g.count} × {g.machine_type}" for g in groups)
    lines = [f"{tier}: {replicas} replica{'s' if replicas != 1 else ''} ({cluster})"]
    if units:
        lines.append(f"{units:.2f} ML units per hour while it runs")
    lines.append(f"on {where}")
    return lines


class JobActions(App[None]):
    """The App's job actions, apart from its shell, so every screen shares one implementation."""

    source: JobsSource
    settings: Settings
    project: str

    def refresh_now(self) -> None:
        """Poll the job list now (the App implements it)."""
        raise NotImplementedError

    # -- cancel ------------------------------------------------------------------------------

    def confirm_cancel(
        self,
        job_ids: list[str],
        states: dict[str, JobState],
        on_confirmed: Callable[[], None] | None = None,
    ) -> None:
        """Ask, naming the jobs, then cancel the ones that can be cancelled.

        ``on_confirmed`` runs once the user says yes: the list drops its marks then, as k9s
        does after a bulk action, so a second ``x`` does not aim at the same jobs again.
        """
        live = [j for j in job_ids if states.get(j, JobState.RUNNING) in CANCELLABLE_STATES]
        done = [j for j in job_ids if j not in live]
        if not live:
            which = done[0] if len(done) == 1 else f"{len(done)} jobs"
            self.notify(f"Nothing to cancel: {which} already finished.", severity="warning")
            return
        from tui_app.shell.screens.confirm_screen import ConfirmScreen

        question = f"Cancel {len(live)} job{'s' if len(live) > 1 else ''}?"
        if done:
            question += f" ({len(done)} finished one{'s' if len(done) > 1 else ''} skipped)"

        def answered(yes: bool | None) -> None:
            if yes:
                self._cancel(live)
                if on_confirmed is not None:
                    on_confirmed()

        self.push_screen(ConfirmScreen(question, live, yes_label="Yes, cancel"), answered)

    @work(thread=True, group="actions", exit_on_error=False, description="Cancelling jobs")
    def _cancel(self, job_ids: list[str]) -> None:
        failed: list[str] = []
        for job_id in job_ids:
            try:
                self.source.call(methodcaller("cancel", job_id))
            except ApiCallError as exc:
                failed.append(f"{job_id}: {exc}")
        self.refresh_now()
        if failed:
            from tui_app.shell.screens.message_screen import MessageScreen

            self.call_from_thread(
                self.push_screen, MessageScreen("Some jobs were not cancelled", "\n".join(failed))
            )
        else:
            n = len(job_ids)
            what = job_ids[0] if n == 1 else f"{n} jobs"
            self.call_from_thread(self.notify, f"Cancelling {what}.")

    # -- resubmit ------------------------------------------------------------------------------

    @work(thread=True, group="actions", exit_on_error=False, description="Resubmitting")
    def resubmit(self, job_id: str) -> None:
        """Run the job again (its trainingInput and labels) under a fresh timestamped id,
        after asking, naming the new id and the cluster it starts (default No).

        One key must not start a job twice by being pressed twice, nor, on a cloud profile,
        a paid cluster unasked: ``confirm_resubmit: false`` in settings skips the question.
        """
        from tui_app.model.jobs.job_config import resubmission  # pydantic: not before first paint

        try:
            job = self.source.call(methodcaller("get", job_id))
        except ApiCallError as exc:
            self.call_from_thread(self.notify, f"Resubmit failed: {exc}", severity="error")
            return
        body = resubmission(job)
        if not self.settings.confirm_resubmit:
            self._create_copy(job_id, body)
            return
        question = f"Resubmit {job_id} as {body['jobId']}?"
        where = self.source.label
        from tui_app.shell.screens.confirm_screen import ConfirmScreen

        def answered(yes: bool | None) -> None:
            if yes:
                self._create_copy_worker(job_id, body)

        self.call_from_thread(
            self.push_screen,
            ConfirmScreen(question, resubmit_details(body, where), yes_label="Yes, resubmit"),
            answered,
        )

    @work(thread=True, group="actions", exit_on_error=False, description="Resubmitting")
    def _create_copy_worker(self, job_id: str, body: dict[str, Any]) -> None:
        self._create_copy(job_id, body)

    def _create_copy(self, job_id: str, body: dict[str, Any]) -> None:
        """jobs.create of the copy (a worker thread); a taken id is retried with a later one."""
        from tui_app.api.resubmit import create_with_fresh_id

        try:
            created = create_with_fresh_id(
                lambda b: self.source.call(methodcaller("create", b)),
                body,
                source=(self.project, job_id),
            )
        except ApiCallError as exc:
            self.call_from_thread(self.notify, f"Resubmit failed: {exc}", severity="error")
            return
        new_id = str(created["jobId"])
        self._submitted(new_id, f"Resubmitted {job_id} as {new_id}.")

    def _submitted(self, job_id: str, note: str) -> None:
        self.post_message(JobsSubmitted([job_id]))
        self.refresh_now()
        self.call_from_thread(self.notify, note)

    # -- edit a copy in the builder ---------------------------------------------------------

    def open_builder(
        self, job: dict[str, Any] | None = None, *, new: bool = False, note: str = ""
    ) -> None:
        """Show the builder (the App implements it)."""
        raise NotImplementedError

    @work(thread=True, group="actions", exit_on_error=False, description="Reading a job")
    def edit_and_resubmit(self, job_id: str) -> None:
        """Open the builder on a copy of the job under a fresh timestamped id (``E``)."""
        try:
            job = self.source.call(lambda c: c.get(job_id))
        except ApiCallError as exc:
            self.call_from_thread(self.notify, f"Cannot read {job_id}: {exc}", severity="error")
            return
        from tui_app.model.jobs.job_config import resubmission

        def open_copy() -> None:
            from tui_app.shell.screens.builder_screen import BuilderScreen

            self.open_builder(resubmission(job), note=f"Copy of {job_id}")
            if isinstance(self.screen, BuilderScreen):
                # Its submit is then recorded as resubmitted from this job (``D`` finds it).
                self.screen.copied_from = job_id

        self.call_from_thread(open_copy)

    def run_editor(self, path: Path) -> bool:
        """Edit ``path`` in $VISUAL/$EDITOR (vi), the TUI suspended; True when it exited 0."""
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        cmd = [*shlex.split(editor), str(path)]
        try:
            ctx: contextlib.AbstractContextManager[None] = self.suspend()
            ctx.__enter__()
        except SuspendNotSupported:
            ctx = contextlib.nullcontext()
        try:
            result = subprocess.run(cmd, check=False)
        except OSError as exc:
            ctx.__exit__(None, None, None)
            self.notify(f"Cannot run the editor {editor!r}: {exc.strerror}", severity="error")
            return False
        ctx.__exit__(None, None, None)
        if result.returncode != 0:
            self.notify(f"The editor exited with status {result.returncode}: nothing changed.")
            return False
        return True

    def job_submitted(self, job_id: str, note: str) -> None:
        """A job was created from the UI thread: select it in the list and say so."""
        self.post_message(JobsSubmitted([job_id]))
        self.refresh_now()
        self.notify(note)
