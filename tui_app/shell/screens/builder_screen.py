"""The config builder: a training job as a form, with its config.yaml and gcloud line beside it.

Every change is validated (debounced) by the same rules the service applies (``job_spec``); each
problem is shown under the field it names, and submit refuses while there are any. The YAML
preview is exactly what ``ctrl+s`` saves and what ``gcloud ... --config`` reads; the gcloud line
is the command that submits the same job from a shell.

Submitting builds a local package folder into an sdist first (as ``gcloud --package-path``
does); on the local service its absolute path goes into ``packageUris``. Everything blocking
(the build, the API) runs in a thread worker; an error from the service lands on its field.
A config opened (ctrl+o) whose id is a job on the service already gets a fresh id of the same
base name, since submitting it as it is could only fail with ALREADY_EXISTS.

On the local profile, a line under the master's image URI says which container engine the
service runs images with (its ``/healthz``, read once per connection), or why it has none.
"""

from __future__ import annotations

import copy
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import yaml
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input, Static

from tui_app.api.errors import ApiCallError
from tui_app.api.resubmit import ALREADY_EXISTS
from tui_app.config.presets import (
    PresetError,
    delete_preset,
    list_presets,
    load_preset,
    preset_exists,
    sample_trainer_dir,
    save_preset,
)
from tui_app.model.builder.builder_form import (
    FormValues,
    field_key,
    form_to_job,
    job_to_form,
    new_form,
    param_index,
)
from tui_app.model.builder.starter_presets import STARTER_PRESETS, preset_choices
from tui_app.model.builder.tier_summary import summarize_cluster
from tui_app.model.jobs.engine_label import engine_found, runs_with
from tui_app.model.jobs.gcloud_command import format_command, gcloud_package_path, submit_command
from tui_app.model.jobs.job_config import (
    CONFIG_HEADER,
    ConfigError,
    from_config_yaml,
    package_folder_of,
    to_config_yaml,
)
from tui_app.model.jobs.job_id import base_name, new_job_id
from tui_app.model.jobs.job_images import replica_image
from tui_app.model.jobs.job_spec import FieldViolation, JobSpecError, parse_job
from tui_app.model.jobs.tiers import Role
from tui_app.model.vertex.backend_notes import Backend
from tui_app.shell.app_protocol import ShellApp, shell_app
from tui_app.shell.package_build import PackageBuildError, cached_sdist, package_folder_error
from tui_app.shell.screens.builder_form_widget import BuilderForm, set_text
from tui_app.shell.screens.confirm_screen import ConfirmScreen
from tui_app.shell.screens.message_screen import MessageScreen
from tui_app.shell.screens.presets_screen import PresetAction, PresetsScreen
from tui_app.shell.screens.prompt_screen import PromptScreen, ask_where_to_save
from tui_app.shell.screens.screen_toasts import ScreenToasts
from tui_app.widgets.code_preview import CodePreview
from tui_app.widgets.key_footer import KeyFooter
from tui_app.widgets.status_header import StatusHeader
from tui_app.widgets.tier_panel import TierPanel

VALIDATE_DELAY = 0.15
"""Seconds of quiet after a keystroke before the form is validated again."""
NARROW_WIDTH = 110
"""Below this width the previews take the whole screen, toggled with F2."""
PACKAGE_PLACEHOLDER = "/built-at-submit/package.tar.gz"
"""Stands in for the sdist of a package folder while validating (it is built at submit)."""
REMOTE_PACKAGE_FOLDER = (
    "A package folder needs an upload to Cloud Storage, which tui-app cannot do yet for this "
    "profile: build it (python setup.py sdist), upload it with gsutil and list its gs:// URI "
    "under Package URIs instead."
)
DEFAULT_BASE = "job"
STAGING_PLACEHOLDER = "gs://STAGING_BUCKET"
"""The gcloud line's --staging-bucket for a package folder when no gs:// job dir says where."""


@dataclass
class Check:
    """The form read and validated once: the job, and each problem by the field it names."""

    job: dict[str, Any]
    package_path: str
    errors: dict[str, list[str]] = field(default_factory=dict)
    general: list[str] = field(default_factory=list)
    problems: list[FieldViolation] = field(default_factory=list)
    notes: list[FieldViolation] = field(default_factory=list)
    """Set fields the backend will ignore or change (not errors: the job can still go)."""


def check_form(
    form: FormValues, server: list[FieldViolation], backend: Backend | None = None
) -> Check:
    """Read ``form`` into a job and validate it as jobs.create would.

    A package folder stands in for ``packageUris`` (its sdist is built at submit); ``server``
    holds what the service said about the last submit, until the fields it names change.
    With ``backend``, a valid job is also reviewed for it: what it cannot take is a problem,
    what it ignores is a note.
    """
    job, problems = form_to_job(form)
    package_path = form.get("package_path").strip()
    probe = copy.deepcopy(job)
    if package_path:
        ti = probe.setdefault("trainingInput", {})
        ti["packageUris"] = [*ti.get("packageUris", []), PACKAGE_PLACEHOLDER]
        why = package_folder_error(package_path)
        if why:
            problems.append(FieldViolation("packagePath", why))
    if backend is not None:
        problems += backend.container_problems(job)
    notes: list[FieldViolation] = []
    try:
        parsed = parse_job(probe)
    except JobSpecError as exc:
        problems += exc.violations
    else:
        if backend is not None and backend.kind != "local" and package_path:
            problems.append(FieldViolation("packagePath", REMOTE_PACKAGE_FOLDER))
        elif backend is not None and not problems:
            refused, notes = backend.review(parsed)
            problems += refused
    problems += server
    result = Check(job, package_path, problems=problems, notes=notes)
    for problem in problems:
        key = field_key(problem.field)
        message = problem.description
        if key is None:
            result.general.append(f"{problem.field}: {message}")
            continue
        index = param_index(problem.field)
        if key == "params" and index is not None:
            message = f"parameter {index + 1}: {problem.field.rsplit('.', 1)[-1]}: {message}"
        if message not in result.errors.get(key, []):
            result.errors.setdefault(key, []).append(message)
    return result


def _fresh_form(shell: ShellApp, base: str = DEFAULT_BASE) -> FormValues:
    """An empty BASIC form with a new ``<base>_<timestamp>`` id, in a Vertex profile's region."""
    profile = shell.settings.profiles.get(shell.profile_name)
    if profile is not None and profile.kind == "vertex" and profile.region:
        return new_form(new_job_id(base, shell.clock()), region=profile.region)
    return new_form(new_job_id(base, shell.clock()))


def _form_for_job(job: Mapping[str, Any]) -> tuple[FormValues, list[str]]:
    """The form filled from ``job``, and what of the job it cannot show."""
    form, problems = job_to_form(job)
    if not form.get("region"):
        form.values["region"] = new_form("x").get("region")
    return form, [f"{p.field}: {p.description}" for p in problems]


class BuilderScreen(Screen[None], ScreenToasts):
    """``3``, ``n`` or ``E`` from the list: the form, its config.yaml and its gcloud line."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+j,alt+enter",
            "submit",
            "Submit",
            id="builder.submit",
            tooltip="Create the job on the service, then select it in the list",
        ),
        Binding("ctrl+s", "save", "Save", id="builder.save", tooltip="Save as config.yaml"),
        Binding("ctrl+o", "open", "Open", id="builder.open", tooltip="Open a config.yaml"),
        Binding(
            "f2",
            "toggle_preview",
            "Preview",
            id="builder.preview",
            tooltip="Show the previews (narrow) / focus them",
        ),
        Binding(
            "ctrl+t",
            "presets",
            "Presets",
            id="builder.presets",
            tooltip="Save, load or delete named forms",
        ),
        Binding(
            "f4",
            "edit_yaml",
            "Editor",
            id="builder.editor",
            tooltip="Edit the YAML in $EDITOR; the form reloads from it",
        ),
        Binding(
            "escape,q",
            "back",
            "Back",
            show=False,
            id="builder.back",
            tooltip="Back to the list; the form is kept",
        ),
    ]

    shell = shell_app()

    def __init__(self, form: FormValues, *, config_path: str | None = None, note: str = "") -> None:
        super().__init__()
        self._initial = form
        self.config_path = config_path
        """Where the config was last saved or opened (the gcloud line's --config)."""
        self.note = note
        """What this form is (``Copy of mnist_...``), for the status line."""
        self.server_errors: list[FieldViolation] = []
        """What the service said about the last submit, until the fields it names change."""
        self.check: Check | None = None
        """The last validation of the form."""
        self.submitting = False
        self.submitted = False
        """The form's job was created: the next visit stamps a fresh id."""
        self._timer: Timer | None = None
        self._show_preview = False
        self.engine: dict[str, Any] | None = None
        """The local service's container engine (``Connection.container_engine``), once read."""
        self.copied_from: str | None = None
        """The job this form is a copy of (``E``): a submit records the new job as resubmitted
        from it (``ResubmitHistory``); loading another form forgets it."""
        self.stamped_id: str | None = form.get("job_id") or None
        """The id the builder stamped itself (a new form, a copy, a visit after a submit).
        Submitted unchanged and taken meanwhile (a copy made in the same second, by ``R`` or
        another builder), it is stamped again with a later second, as ``R`` does; an id the
        user typed that is taken is refused, naming the field."""

    # -- building the screen -------------------------------------------------------------------

    @classmethod
    def for_job(cls, job: Mapping[str, Any], note: str = "") -> BuilderScreen:
        """The builder on ``job`` (``E``: a copy to resubmit); says what the form cannot show."""
        form, left_out = _form_for_job(job)
        screen = cls(form, note=note or "Copy")
        screen._say_left_out(left_out)
        return screen

    @classmethod
    def fresh(cls, shell: ShellApp, note: str = "") -> BuilderScreen:
        """The builder on a new form, stamped by the App's clock, in its profile's region."""
        return cls(_fresh_form(shell), note=note or "New job")

    def start_on_job(self, job: Mapping[str, Any], note: str = "") -> None:
        """Begin again on ``job`` (the App keeps one builder between visits)."""
        form, left_out = _form_for_job(job)
        self._say_left_out(left_out)
        self._start(form, note or "Copy")

    def start_fresh(self, note: str = "") -> None:
        """Begin again on a new form (``n``, ``:new``), dropping the draft."""
        self._start(_fresh_form(self.shell), note or "New job")

    def _say_left_out(self, left_out: list[str]) -> None:
        if left_out:
            self.notify(
                "Left out of the form: " + "; ".join(left_out), severity="warning", timeout=8
            )

    def _start(self, form: FormValues, note: str, config_path: str | None = None) -> None:
        """Begin again on ``form`` (the screen is kept between visits: this replaces the form).

        Args:
            form: What to fill the form with.
            note: What it is (``New job``, ``Copy of ...``), for the status line.
            config_path: The config file it came from, if any.
        """
        self.note = note
        self.config_path = config_path
        self.copied_from = None
        self.stamped_id = form.get("job_id") or None
        self.server_errors = []
        self.submitted = False
        if self.is_mounted:
            self.form.load(form)
            self.form.scroll_home(animate=False)
            self.query_one("#f-job_id").focus()
        else:
            self._initial = form

    def on_screen_resume(self) -> None:
        self._read_engine()  # free unless the app reconnected (to a service with another one)
        if self.submitted:
            # Coming back after a submit: the same form again needs a new id.
            self.submitted = False
            box = self.query_one("#f-job_id", Input)
            box.value = new_job_id(box.value or DEFAULT_BASE, self.shell.clock())
            self.stamped_id = box.value
            self.note = f"Again: {self.note.removeprefix('Again: ')}"

    @property
    def form(self) -> BuilderForm:
        return self.query_one(BuilderForm)

    def compose(self) -> ComposeResult:
        yield StatusHeader()
        yield Static("", id="builder-status")
        yield Static("", id="builder-notes")
        with Horizontal(id="builder-body"):
            yield BuilderForm(self._initial, id="builder-form")
            with Vertical(id="builder-preview"):
                yield CodePreview(
                    "yaml",
                    "config.yaml",
                    hidden_prefix=CONFIG_HEADER,
                    what="the config.yaml",
                    id="yaml-preview",
                )
                yield CodePreview("bash", "gcloud", what="the gcloud command", id="gcloud-preview")
        yield KeyFooter(compact=True)

    def on_mount(self) -> None:
        header = self.query_one(StatusHeader)
        header.profile = self.shell.source.label
        header.project = self.shell.project
        self._apply_width(self.size.width)
        self.query_one("#f-job_id").focus()
        self._read_engine()

    def on_resize(self) -> None:
        self._apply_width(self.size.width)

    def _apply_width(self, width: int) -> None:
        self.set_class(width < NARROW_WIDTH, "-narrow")
        self.set_class(self._show_preview, "-show-preview")

    # -- validation ------------------------------------------------------------------------------

    @on(BuilderForm.Changed)
    def _form_changed(self, event: BuilderForm.Changed) -> None:
        if event.key is not None:
            self.server_errors = [
                v for v in self.server_errors if field_key(v.field) not in (event.key, None)
            ]
        if event.key is None:
            self.validate_now()
            return
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(VALIDATE_DELAY, self.validate_now)

    def validate_now(self) -> Check:
        """Read and validate the form now; update the errors, the previews, the panel, the draft."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        form = self.form.values()
        check = check_form(form, self.server_errors, self.backend)
        self.check = check
        self.form.show_errors(check.errors, check.general)
        self.form.query_one(TierPanel).summary = summarize_cluster(
            check.job.get("trainingInput") or {}
        )
        self.query_one("#yaml-preview", CodePreview).text = to_config_yaml(check.job)
        job_dir = str((check.job.get("trainingInput") or {}).get("jobDir") or "")
        argv = submit_command(
            check.job,
            config_path=self.config_path or "config.yaml",
            package_path=gcloud_package_path(
                check.package_path,
                str((check.job.get("trainingInput") or {}).get("pythonModule") or ""),
            )
            if check.package_path
            else None,
            # gcloud uploads a package folder to --staging-bucket, or under a gs:// --job-dir.
            staging_bucket=None if job_dir.startswith("gs://") else STAGING_PLACEHOLDER,
        )
        self.query_one("#gcloud-preview", CodePreview).text = format_command(argv)
        self._show_status()
        self._show_notes(check.notes)
        self._show_engine(check.job)
        return check

    # -- the container engine --------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="builder-engine", exit_on_error=False)
    def _read_engine(self) -> None:
        """Ask the local service which engine runs containers (blocking: a worker). Only the
        local profile's: elsewhere the platform runs the images."""
        backend = self.backend
        if backend is None or backend.kind != "local":
            return
        try:
            engine = self.shell.source.connection().container_engine()
        except ApiCallError:
            return  # the service is away (the list's banner says so): no line until it is back
        if engine is not None:
            self.app.call_from_thread(self._engine_arrived, engine)

    def _engine_arrived(self, engine: dict[str, Any]) -> None:
        self.engine = engine
        if self.is_mounted:
            self.validate_now()  # an engine the service lacks is a problem of an image job

    def _show_engine(self, job: Mapping[str, Any]) -> None:
        """The engine line, while the job runs images (a package job needs no engine): read
        from the job, so an image field the tier leaves out (a worker's under BASIC) does not
        count. Without an engine the line is hidden: the image's error says why
        (``check_form``, on the same condition)."""
        ti = job.get("trainingInput")
        images = isinstance(ti, Mapping) and replica_image(ti, Role.MASTER) is not None
        backend = self.backend
        line = runs_with(self.engine) if self.engine is not None else None
        if not images or backend is None or backend.kind != "local":
            line = None
        self.form.show_engine(line, ok=self.engine is not None and engine_found(self.engine))

    @property
    def backend(self) -> Backend | None:
        """Where ctrl+j submits, from the active profile (known without connecting)."""
        profile = self.shell.settings.profiles.get(self.shell.profile_name)
        if profile is None:
            return None
        # The date lets the notes say when Vertex AI's image for the job is past its end of
        # availability on Google's list (the app's clock: frozen in tests).
        today = self.shell.clock().date()
        return Backend(
            profile.kind,
            profile.region,
            profile.executor_image,
            today=today,
            container_engine=self.engine,
        )

    def _show_notes(self, notes: list[FieldViolation]) -> None:
        box = self.query_one("#builder-notes", Static)
        backend = self.backend
        box.display = bool(notes) and backend is not None
        if not box.display or backend is None:
            return
        head = (
            f"{backend.label} ignores or changes {len(notes)} field{'s' if len(notes) > 1 else ''}:"
        )
        lines = [
            f"  • {n.field.removeprefix('trainingInput.')}: "
            + n.description.removeprefix("Ignored: ")
            for n in notes
        ]
        set_text(box, "\n".join([head, *lines]))

    def _show_status(self) -> None:
        check = self.check
        status = self.query_one("#builder-status", Static)
        what = self.note or "Job"
        if self.submitting:
            set_text(status, f"{what} · submitting…")
            status.set_classes("-busy")
            return
        if check is None:
            return
        n = len(check.problems)
        if n:
            first = check.problems[0]
            set_text(
                status,
                f"{what} · ✗ {n} problem{'s' if n > 1 else ''}: {first.field}: {first.description}",
            )
            status.set_classes("-invalid")
        else:
            set_text(status, f"{what} · ✓ valid: ctrl+j submits, ctrl+s saves config.yaml")
            status.set_classes("-valid")

    # -- submit ----------------------------------------------------------------------------------

    def action_submit(self) -> None:
        if self.submitting:
            self.notify("Already submitting…", severity="warning")
            return
        check = self.validate_now()
        if check.problems:
            listed = "\n".join(f"• {p.field}: {p.description}" for p in check.problems[:4])
            more = len(check.problems) - 4
            self.notify(
                listed + (f"\n… and {more} more" if more > 0 else ""),
                title="Cannot submit: fix these first",
                severity="error",
                timeout=8,
            )
            key = field_key(check.problems[0].field)
            if key:
                self._show_field(key)
            return
        self.submitting = True
        self._show_status()
        self._submit(copy.deepcopy(check.job), check.package_path)

    @work(thread=True, exclusive=True, group="builder", exit_on_error=False, description="Submit")
    def _submit(self, job: dict[str, Any], package_path: str) -> None:
        app, source = self.app, self.shell.source
        copied_from, project = self.copied_from, self.shell.project
        stamped = job.get("jobId") == self.stamped_id
        try:
            if package_path:
                if not source.connection().local:
                    raise PackageBuildError(REMOTE_PACKAGE_FOLDER)
                sdist = cached_sdist(package_path)
                ti = job.setdefault("trainingInput", {})
                ti["packageUris"] = [*ti.get("packageUris", []), str(sdist)]
            if stamped:
                from tui_app.api.resubmit import create_with_fresh_id

                made = create_with_fresh_id(
                    lambda body: source.call(lambda c: c.create(body)),
                    job,
                    source=(project, copied_from) if copied_from else None,
                )
                created = str(made["jobId"])
            else:
                created = str(source.call(lambda c: c.create(job))["jobId"])
                if copied_from:
                    from tui_app.api.job_compare import ResubmitHistory

                    ResubmitHistory().record(project, created, copied_from)
        except PackageBuildError as exc:
            app.call_from_thread(self._refused, [FieldViolation("packagePath", str(exc))], str(exc))
        except ApiCallError as exc:
            app.call_from_thread(self._refused_by_service, exc, str(job.get("jobId") or ""))
        except Exception as exc:  # the form must survive anything: say it, keep the draft
            app.call_from_thread(self._refused, [], f"Submit failed: {exc}")
        else:
            app.call_from_thread(self._created, created)

    def _refused_by_service(self, exc: ApiCallError, job_id: str = "") -> None:
        if exc.status_code == ALREADY_EXISTS:
            self._id_refused(job_id)
            return
        found = [
            FieldViolation(str(v.get("field") or "job"), str(v.get("description") or exc.message))
            for v in exc.violations
        ]
        if not found and not exc.unreachable:
            found = [FieldViolation("job", str(exc))]
        self._refused(found, f"The service refused the job: {exc}")

    def _id_refused(self, job_id: str) -> None:
        """The service has a job of this id (409 ALREADY_EXISTS): say that the Job id is the
        field to change, with an id that would do, and put the cursor on it, in view.

        The service's own words ("Field: job.job_id") name the wire field, not the form's,
        and the form may be scrolled far from its first field by then.
        """
        suggestion = new_job_id(job_id or DEFAULT_BASE, self.shell.clock())
        self._refused(
            [
                FieldViolation(
                    "jobId",
                    f"A job with this id already exists on the service: change it "
                    f"(e.g. {suggestion}) and submit again.",
                )
            ],
            f"Job id: {job_id or 'this id'} already exists on the service (ALREADY_EXISTS). "
            f"Change the Job id, the form's first field (e.g. to {suggestion}), and submit "
            "again.",
        )

    def _refused(self, found: list[FieldViolation], message: str) -> None:
        self.submitting = False
        self.server_errors = found
        self.validate_now()
        self.notify(message, title="Not submitted", severity="error", timeout=10)
        key = next((k for k in map(field_key, (v.field for v in found)) if k), None)
        if key:
            self._show_field(key)

    def _show_field(self, key: str) -> None:
        """Put the cursor on field ``key``, in view: a refused submit's field must be seen,
        and at a narrow width the previews (F2) hide the whole form."""
        if self.has_class("-narrow") and self._show_preview:
            self.action_toggle_preview()
        self.form.focus_field(key)

    def _created(self, job_id: str) -> None:
        self.submitting = False
        self.submitted = True
        self.shell.job_submitted(job_id, f"Submitted {job_id}.")
        self.shell.action_home()

    # -- save, open, edit --------------------------------------------------------------------------

    def action_save(self) -> None:
        ask_where_to_save(
            self.app,
            "Save config.yaml as",
            self.config_path or "config.yaml",
            "config.yaml",
            self._write,
        )

    def _write(self, path: Path) -> None:
        check = self.validate_now()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # Absolute: the file may be reopened from another working directory.
            folder = (
                str(Path(check.package_path).expanduser().resolve()) if check.package_path else None
            )
            path.write_text(to_config_yaml(check.job, folder), encoding="utf-8")
        except OSError as exc:
            self.notify(f"Cannot save {path}: {exc.strerror}", severity="error")
            return
        self.config_path = _shown_path(path)
        notes = [f"Saved {self.config_path}."]
        if check.problems:
            notes.append(f"It has {len(check.problems)} problem(s) still.")
        if check.package_path:
            notes.append(
                "Its package folder is kept in a comment; gcloud needs --package-path "
                "(the gcloud line has it)."
            )
        self.notify(" ".join(notes))
        self.validate_now()

    def action_open(self) -> None:
        self.app.push_screen(
            PromptScreen(
                "Open a config.yaml",
                self.config_path or "config.yaml",
                hint="gcloud's --config format: jobId, labels, trainingInput",
                paths=True,
            ),
            self._open,
        )

    def _open(self, text: str | None) -> None:
        if not text:
            return
        path = Path(text).expanduser()
        try:
            content = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            self.notify(f"Cannot open {path}: {why}", severity="error")
            return
        if self.load_config(content, str(path), folder=path.parent.resolve()):
            self.copied_from = None
            self.config_path = _shown_path(path)
            self.note = f"From {self.config_path}"
            self.validate_now()
            opened = self.form.values().get("job_id")
            if opened:
                self._restamp_if_taken(opened)

    @work(thread=True, exclusive=True, group="builder-taken", exit_on_error=False)
    def _restamp_if_taken(self, job_id: str) -> None:
        """Ask the service whether ``job_id`` (an opened config's) is a job already (blocking:
        a worker); if it is, the form takes a fresh id of the same base name.

        A config saved from the builder keeps the id of the job it was submitted as, so
        submitting it again could only fail with ALREADY_EXISTS. Any answer but the job (not
        found, no answer, a refusal) leaves the id as it is: the submit says the rest.
        """
        try:
            self.shell.source.call(lambda c: c.get(job_id))
        except Exception:  # not "exists", whatever it is: nothing to change
            return
        self.app.call_from_thread(self._id_taken, job_id)

    def _id_taken(self, job_id: str) -> None:
        """``job_id`` exists on the service: stamp the form's id afresh and say so, unless the
        user changed the id meanwhile (theirs wins)."""
        if not self.is_mounted:
            return
        box = self.query_one("#f-job_id", Input)
        if box.value != job_id:
            return
        fresh = new_job_id(job_id, self.shell.clock())
        # Stamped by the builder: a submit that finds it taken too (the same second, by
        # another copy) is stamped again, as R does, instead of refused.
        self.stamped_id = fresh
        box.value = fresh
        box.cursor_position = len(fresh)
        self.notify(
            f"{job_id} exists: this copy will be submitted as {fresh}.",
            title="A fresh job id",
            timeout=10,
        )

    def load_config(
        self,
        text: str,
        where: str,
        *,
        folder: Path | None = None,
        again: Callable[[], None] | None = None,
    ) -> bool:
        """Fill the form from config.yaml ``text``; say what is wrong (with its line or field).

        Rule violations do not stop the load (they show under their fields); YAML errors and
        values the form cannot show do, in a message that names the line or field.

        Args:
            text: The YAML.
            where: The file, for messages.
            folder: The file's folder: when the config names no package and this folder holds
                setup.py, it becomes the package folder (as ``--package-path`` next to
                ``--config`` in examples/trainer).
            again: Offer "Edit again" (the $EDITOR flow) with this callback.

        Returns:
            True when the form was loaded.
        """
        data: Any = None
        try:
            from_config_yaml(text)
        except ConfigError as exc:
            if exc.violations:
                data = yaml.safe_load(text)
            else:
                self._cannot_load(where, exc.message, again)
                return False
        else:
            data = yaml.safe_load(text)
        form, problems = job_to_form(data)
        if problems:
            listed = "\n".join(f"{p.field}: {p.description}" for p in problems)
            self._cannot_load(where, listed, again)
            return False
        current = self.form.values()
        if not form.get("job_id"):
            base = base_name(current.get("job_id") or DEFAULT_BASE)
            form.values["job_id"] = new_job_id(base, self.shell.clock())
            self.stamped_id = form.values["job_id"]  # ours: a taken one is stamped again
        if not form.get("region"):
            form.values["region"] = current.get("region")
        ti = data.get("trainingInput") if isinstance(data, dict) else None
        has_code = isinstance(ti, dict) and (
            ti.get("packageUris") or (ti.get("masterConfig") or {}).get("imageUri")
        )
        kept = package_folder_of(text)
        if kept and not has_code and not package_folder_error(kept):
            form.values["package_path"] = kept  # the folder a save wrote into the file
        elif current.get("package_path") and not has_code:
            form.values["package_path"] = current.get("package_path")
        elif folder is not None and not has_code and not package_folder_error(str(folder)):
            form.values["package_path"] = _shown_path(folder)
        self.server_errors = []
        self.form.load(form)
        self.notify(f"Loaded {where}.")
        return True

    def _cannot_load(self, where: str, message: str, again: Callable[[], None] | None) -> None:
        buttons = (("edit", "Edit again"), ("close", "Discard")) if again else ()

        def answered(choice: str | None) -> None:
            if choice == "edit" and again is not None:
                again()

        self.app.push_screen(MessageScreen(f"Cannot load {where}", message, buttons), answered)

    def action_edit_yaml(self) -> None:
        check = self.validate_now()
        folder = Path(tempfile.mkdtemp(prefix="tui-app-edit-"))
        name = check.job.get("jobId") or "config"
        path = folder / f"{name}.yaml"
        path.write_text(to_config_yaml(check.job), encoding="utf-8")
        self._edit_loop(path)

    def _edit_loop(self, path: Path) -> None:
        before = path.read_text(encoding="utf-8")
        if not self.shell.run_editor(path):
            return
        text = path.read_text(encoding="utf-8")
        if text == before:
            self.notify("The config is unchanged.")
            return
        if self.load_config(text, path.name, again=lambda: self._edit_loop(path)):
            self.validate_now()

    # -- presets ---------------------------------------------------------------------------------

    def action_presets(self) -> None:
        try:
            saved = list_presets()
        except PresetError as exc:
            self.notify(str(exc), severity="error")
            return
        choices = [(n, s.summary if s else None) for n, s in preset_choices(saved)]
        base = base_name(self.form.values().get("job_id") or DEFAULT_BASE)
        self.app.push_screen(PresetsScreen(choices, suggested=base), self._preset_chosen)

    def _preset_chosen(self, choice: PresetAction | None) -> None:
        if choice is None:
            return
        action, name = choice
        if action == "save":
            if preset_exists(name):
                self.app.push_screen(
                    ConfirmScreen(f"Replace the preset {name!r}?", [name], "Replace"),
                    lambda yes: self._save_preset(name) if yes else None,
                )
            elif name in STARTER_PRESETS:
                self.app.push_screen(
                    ConfirmScreen(
                        f"Save your own {name!r}? It is listed instead of the built-in one, "
                        "which comes back if you delete yours.",
                        [name],
                        "Save",
                    ),
                    lambda yes: self._save_preset(name) if yes else None,
                )
            else:
                self._save_preset(name)
        elif action == "load":
            self._load_preset(name)
        else:
            self.app.push_screen(
                ConfirmScreen(f"Delete the preset {name!r}?", [name], "Delete"),
                lambda yes: self._delete_preset(name) if yes else None,
            )

    def _save_preset(self, name: str) -> None:
        check = self.validate_now()
        job = {k: v for k, v in check.job.items() if k != "jobId"}
        data = {
            "base_name": base_name(check.job.get("jobId") or DEFAULT_BASE),
            "package_path": check.package_path or None,
            "job": job,
        }
        try:
            save_preset(name, data)
        except PresetError as exc:
            self.notify(str(exc), severity="error")
            return
        self.notify(f"Saved the preset {name!r}.")

    def _load_preset(self, name: str) -> None:
        """Fill the form from preset ``name``: the user's saved one, else the built-in one.

        A preset without a base name or a region (every built-in) keeps the form's: they are
        the user's job and place, not the preset's. A built-in runs the sample trainer as
        given (``_starter_code``), unless the form names a package of its own.
        """
        starter = STARTER_PRESETS.get(name)
        try:
            if starter is not None and not preset_exists(name):
                data: dict[str, Any] = copy.deepcopy(starter.data)
            else:
                starter = None
                data = load_preset(name)
        except PresetError as exc:
            self.notify(str(exc), severity="error")
            return
        current = self.form.values()
        saved = data.get("job")
        job: dict[str, Any] = dict(saved) if isinstance(saved, dict) else {}
        base = data.get("base_name") or base_name(current.get("job_id") or DEFAULT_BASE)
        job["jobId"] = new_job_id(str(base), self.shell.clock())
        form, problems = job_to_form(job)
        if problems:
            self._cannot_load(
                f"the preset {name!r}",
                "\n".join(f"{p.field}: {p.description}" for p in problems),
                None,
            )
            return
        if data.get("package_path"):
            form.values["package_path"] = str(data["package_path"])
        if not form.get("region"):
            form.values["region"] = current.get("region")
        code_said = _starter_code(form, current, starter.code_note) if starter else ""
        self.server_errors = []
        self.form.load(form)
        self.copied_from = None
        if starter is not None:
            missing = code_said.startswith(FILL_IN)
            self.note = f"Built-in preset {name}" + (": fill in its package" if missing else "")
            self.notify(
                f"Loaded the built-in preset {name!r}: {starter.summary}. {code_said}",
                severity="warning" if missing else "information",
                timeout=15 if missing else 8,
            )
            if missing:
                self.form.focus_field("package_path")
        else:
            self.note = f"Preset {name}"
            self.notify(f"Loaded the preset {name!r}.")

    def _delete_preset(self, name: str) -> None:
        try:
            delete_preset(name)
        except PresetError as exc:
            self.notify(str(exc), severity="error")
            return
        self.notify(f"Deleted the preset {name!r}.")

    # -- moving around ---------------------------------------------------------------------------

    def action_toggle_preview(self) -> None:
        """Narrow: switch between the form and the previews. Wide: move focus between them."""
        if self.has_class("-narrow"):
            self._show_preview = not self._show_preview
            self._apply_width(self.size.width)
            if self._show_preview:
                self.query_one("#yaml-preview").focus()
            else:
                self.form.focus_field("job_id")
            return
        preview = self.query_one("#builder-preview")
        if preview.has_focus_within:
            self.form.focus_field("job_id")
        else:
            self.query_one("#yaml-preview").focus()

    def action_back(self) -> None:
        if self.has_class("-narrow") and self._show_preview:
            self.action_toggle_preview()
            return
        self.validate_now()
        self.shell.action_home()


CODE_KEYS = ("package_path", "package_uris", "module")
"""The form's code: what a built-in preset fills for the sample trainer, or keeps of the form."""
FILL_IN = "Fill in "
"""How ``_starter_code``'s sentence starts when the user has a field to fill."""


def _starter_code(form: FormValues, current: FormValues, code_note: str) -> str:
    """Give ``form`` (a built-in preset, loaded) code to run, and say in a sentence which.

    A form that names a package of its own (a folder or URIs) keeps it with its module: the
    preset changes the machines, not the user's code. Otherwise (or when its package is the
    sample trainer, from an earlier preset) the preset runs the sample trainer as given: its
    folder becomes the package folder, built at submit like any other. Where this install has
    no sample trainer, ``code_note`` says what to fill.
    """
    folder = sample_trainer_dir()
    own_folder = current.get("package_path").strip()
    sample = (
        folder is not None
        and bool(own_folder)
        and Path(own_folder).expanduser().resolve() == folder.resolve()
    )
    if (own_folder and not sample) or current.get("package_uris"):
        for key in CODE_KEYS:
            form.values.pop(key, None)
            if current.get(key):
                form.values[key] = current.get(key)
        return "Your package and module are kept."
    if folder is None:
        form.values.pop("package_path", None)
        return f"{FILL_IN}{code_note}."
    form.values["package_path"] = _shown_path(folder)
    return (
        f"It runs the sample trainer ({form.values['package_path']}, "
        f"{form.get('module')}): put your own package folder and module in their place."
    )


def _shown_path(path: Path) -> str:
    """``path`` relative to the working directory when it is inside it, else absolute."""
    full = path.expanduser().resolve()
    try:
        return str(full.relative_to(Path.cwd()))
    except ValueError:
        return str(full)
