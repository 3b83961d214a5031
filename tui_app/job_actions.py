"""Cancel, resubmit and edit-and-resubmit: the actions every screen offers on a job.

Each asks (when it must), then does the blocking API work in a thread worker and reports back
with a notification; a server's error message is shown as the server wrote it, never a traceback.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
import tempfile
import time
from operator import methodcaller
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import App, SuspendNotSupported

from tui_app.api.errors import ApiCallError
from tui_app.messages import JobsSubmitted
from tui_app.model.states import CANCELLABLE_STATES, JobState
from tui_app.screens.confirm import ConfirmScreen
from tui_app.screens.message import MessageScreen

if TYPE_CHECKING:
    from tui_app.jobs_source import JobsSource


class JobActions(App[None]):
    """The App's job actions, apart from its shell, so every screen shares one implementation."""

    source: JobsSource

    def refresh_now(self) -> None:
        """Poll the job list now (the App implements it)."""
        raise NotImplementedError

    # -- cancel ------------------------------------------------------------------------------

    def confirm_cancel(self, job_ids: list[str], states: dict[str, JobState]) -> None:
        """Ask, naming the jobs, then cancel the ones that can be cancelled."""
        live = [j for j in job_ids if states.get(j, JobState.RUNNING) in CANCELLABLE_STATES]
        done = [j for j in job_ids if j not in live]
        if not live:
            which = done[0] if len(done) == 1 else f"{len(done)} jobs"
            self.notify(f"Nothing to cancel: {which} already finished.", severity="warning")
            return
        question = f"Cancel {len(live)} job{'s' if len(live) > 1 else ''}?"
        if done:
            question += f" ({len(done)} finished one{'s' if len(done) > 1 else ''} skipped)"

        def answered(yes: bool | None) -> None:
            if yes:
                self._cancel(live)

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
        """Submit the job's trainingInput and labels again under a fresh timestamped id."""
        from tui_app.model.job_config import resubmission  # pydantic: not before first paint

        try:
            job = self.source.call(lambda c: c.get(job_id))
            created = self._create_with_fresh_id(resubmission(job))
        except ApiCallError as exc:
            self.call_from_thread(self.notify, f"Resubmit failed: {exc}", severity="error")
            return
        self._submitted(created, f"Resubmitted {job_id} as {created}.")

    def _create_with_fresh_id(self, body: dict[str, Any]) -> str:
        """Create; when the new id exists already (same second), take the next second's id."""
        for _ in range(3):
            try:
                return str(self.source.call(methodcaller("create", body))["jobId"])
            except ApiCallError as exc:
                if exc.status_code != 409:
                    raise
                time.sleep(1.0)
                from tui_app.model.job_config import resubmission

                body = resubmission(body)
        raise ApiCallError("A job with this id already exists.", 409, "ALREADY_EXISTS")

    def _submitted(self, job_id: str, note: str) -> None:
        self.post_message(JobsSubmitted([job_id]))
        self.refresh_now()
        self.call_from_thread(self.notify, note)

    # -- edit and resubmit -------------------------------------------------------------------

    @work(thread=True, group="actions", exit_on_error=False, description="Editing a config")
    def edit_and_resubmit(self, job_id: str) -> None:
        """Open the job's config.yaml in $EDITOR; submit it when it validates, else say why."""
        try:
            job = self.source.call(lambda c: c.get(job_id))
        except ApiCallError as exc:
            self.call_from_thread(self.notify, f"Cannot read {job_id}: {exc}", severity="error")
            return
        from tui_app.model.job_config import resubmission, to_config_yaml

        body = resubmission(job)
        folder = Path(tempfile.mkdtemp(prefix="tui-app-edit-"))
        path = folder / f"{body['jobId']}.yaml"
        path.write_text(to_config_yaml(body))
        self.call_from_thread(self._edit_loop, path)

    def _edit_loop(self, path: Path) -> None:
        """Run the editor (suspending the TUI), then validate; on errors offer to edit again."""
        before = path.read_text()
        ok = self._run_editor(path)
        text = path.read_text()
        if not ok:
            return
        if text == before:
            self.notify("Config unchanged: nothing submitted.", severity="warning")
            return
        from tui_app.model.job_config import ConfigError, from_config_yaml

        try:
            body = from_config_yaml(text)
        except ConfigError as exc:

            def again(choice: str | None) -> None:
                if choice == "edit":
                    self._edit_loop(path)

            self.push_screen(
                MessageScreen(
                    "The config is not valid; your text is kept",
                    f"{exc}\n\nFile: {path}",
                    (("edit", "Edit again"), ("close", "Discard")),
                ),
                again,
            )
            return
        self._submit_edited(body)

    def _run_editor(self, path: Path) -> bool:
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
            self.notify(f"The editor exited with status {result.returncode}: nothing submitted.")
            return False
        return True

    @work(thread=True, group="actions", exit_on_error=False, description="Submitting")
    def _submit_edited(self, body: dict[str, Any]) -> None:
        try:
            created = str(self.source.call(lambda c: c.create(body))["jobId"])
        except ApiCallError as exc:
            text = str(exc)
            if exc.violations:
                text += "\n\n" + "\n".join(
                    f"{v.get('field')}: {v.get('description')}" for v in exc.violations
                )
            self.call_from_thread(
                self.push_screen, MessageScreen("The service refused the job", text)
            )
            return
        self._submitted(created, f"Submitted {created}.")
