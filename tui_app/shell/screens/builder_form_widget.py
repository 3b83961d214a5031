"""The builder's form: every field of a training job, its inline errors, the parameter table.

It holds no rules: it reads and writes ``FormValues`` (``model.builder.builder_form``), shows the
errors it is given under the fields they name, and says ``Changed`` whenever a field changes. The
screen validates (debounced) and decides what the errors are.

Widget ids follow the form keys: the field ``worker_count`` is ``#f-worker_count``, its error line
``#e-worker_count``, the block holding both ``#field-worker_count``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.suggester import SuggestFromList
from textual.widget import Widget
from textual.widgets import Checkbox, Collapsible, Input, Label, Select, Static, TextArea
from textual.widgets.select import InvalidSelectValueError

from tui_app.model.builder.builder_form import (
    ALGORITHMS,
    FIELD_KEYS,
    GOALS,
    MASTER,
    ROLES,
    FormValues,
    RoleFields,
)
from tui_app.model.builder.tier_summary import short_accelerator
from tui_app.model.jobs.job_spec import DEFAULT_METRIC_TAG, PYTHON_VERSIONS, RUNTIME_PYTHON
from tui_app.model.jobs.tiers import (
    ACCELERATORS,
    COMPUTE_ENGINE_MACHINE_TYPES,
    LEGACY_MACHINE_TYPES,
    MACHINE_TYPES,
    SCALE_TIERS,
)
from tui_app.shell.screens.param_edit_screen import ParamEditScreen
from tui_app.shell.screens.prompt_screen import PathSuggester
from tui_app.widgets.params_table import ParamsTable
from tui_app.widgets.tier_panel import TierPanel

REGIONS = (
    "us-central1",
    "us-east1",
    "us-east4",
    "us-west1",
    "europe-west1",
    "europe-west2",
    "europe-west4",
    "asia-east1",
    "asia-northeast1",
    "asia-southeast1",
)
"""The regions AI Platform Training ran in (completion only: any region is accepted)."""

ERROR_KEYS: tuple[str, ...] = (*FIELD_KEYS, "params")
"""Every key an error can be shown under."""
IMAGE_LABEL = "Image URI"
"""The master's image field under a predefined tier, where it is the only role shown."""
IMAGE_LABEL_CUSTOM = "  image URI"
"""A role's image field in a CUSTOM cluster, indented under the role's machine row."""


def _machine_label(name: str) -> str:
    """``standard_gpu         8 vCPU, 30 GB, 1× K80``: one line, even in a narrow menu."""
    m = MACHINE_TYPES[name]
    parts = [f"{m.vcpus} vCPU" if m.vcpus else "", f"{m.memory_gb:g} GB" if m.memory_gb else ""]
    if m.gpus and m.gpu_type:
        parts.append(f"{m.gpus}× {short_accelerator(ACCELERATORS[m.gpu_type])}")
    if m.tpu_cores:
        parts.append(f"TPU v2-{m.tpu_cores}")
    return f"{name:<20} {', '.join(p for p in parts if p)}"


def _machine_options() -> list[tuple[str, str]]:
    """Every machine type with what it is: ``n1-standard-8  8 vCPU, 30 GB``."""
    names = (*LEGACY_MACHINE_TYPES, *COMPUTE_ENGINE_MACHINE_TYPES)
    return [(_machine_label(n), n) for n in names]


def _accelerator_options() -> list[tuple[str, str]]:
    return [(f"{a.name:<18} {a.label}", a.name) for a in ACCELERATORS.values()]


def _key(widget: Widget) -> str:
    return (widget.id or "").removeprefix("f-")


class TuningSection(Collapsible):
    """The tuning section: a Collapsible that ``BuilderForm.load`` opens or closes quietly.

    Textual's Collapsible scrolls itself into view whenever it opens or closes. Loaded with a
    tuning job (ctrl+o, a preset), the form then jumped down to tuning and left the job id out
    of sight, with the cursor still in it: the newcomer never saw which field a refused submit
    named. Opened by the user (or by ``focus_field``), it scrolls as before.
    """

    quiet = False
    """Skip the next scroll into view: set by ``load`` until after the refresh it asks for."""

    def scroll_visible(self, *args: Any, **kwargs: Any) -> None:
        if not self.quiet:
            super().scroll_visible(*args, **kwargs)


class BuilderForm(VerticalScroll):
    """The form; ``values()`` reads it, ``load()`` fills it, ``show_errors()`` marks it."""

    can_focus = False
    """The fields are the stops (the form scrolls to the focused one). Focusable, the form
    took the focus first when the screen opened and gave it to the job id at once: each change
    restyled its ~250 widgets, half a second of the builder's opening."""

    @dataclass
    class Changed(Message):
        """A field changed (``key`` names it; None after ``load``)."""

        key: str | None

    def __init__(self, form: FormValues, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self._initial = form
        self.params: list[dict[str, Any]] = list(form.params)
        """The ParameterSpecs the table shows (wire form)."""
        self.extra: dict[str, Any] = dict(form.extra)
        """The parts of the job no field shows, kept as loaded."""
        self._fields: dict[str, Widget] = {}
        self._error_lines: dict[str, Static] = {}
        self._boxes: dict[str, Widget] = {}
        self._shown_errors: dict[str, list[str]] = {}
        """What each error line shows now (a keystroke redraws only the lines that change)."""

    # -- layout --------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static("", id="form-problems")
        yield Label("Job", classes="section -first")
        yield self._field("job_id", "Job id", Input(placeholder="e.g. mnist_20261122_093000"))
        yield self._field(
            "region",
            "Region",
            Input(
                placeholder="e.g. us-central1",
                suggester=SuggestFromList(REGIONS, case_sensitive=False),
            ),
        )
        yield self._field(
            "scale_tier",
            "Scale tier",
            Select([(t, t) for t in SCALE_TIERS], allow_blank=False, value="BASIC"),
        )
        yield TierPanel(id="tier-panel")
        # The master's image is the form's under every tier (ml v1 ran a container under any);
        # its machine rows and the other roles are CUSTOM's.
        yield from self._role(MASTER)
        with Vertical(id="custom-roles"):
            for role in ROLES:
                if role is not MASTER:
                    yield from self._role(role)
        yield Label("Code", classes="section")
        yield self._field(
            "package_path",
            "Package dir",
            Input(
                placeholder="e.g. ./trainer: a folder with setup.py, built at submit",
                suggester=PathSuggester(),
            ),
        )
        yield self._field(
            "package_uris",
            "Package URIs",
            TextArea(placeholder="e.g. gs://bucket/trainer-0.1.tar.gz (one per line)"),
        )
        yield self._field("module", "Module", Input(placeholder="e.g. trainer.task"))
        yield self._field(
            "args", "Arguments", TextArea(placeholder="one per line, e.g. --steps then 200")
        )
        yield self._field("job_dir", "Job dir", Input(placeholder="e.g. gs://bucket/jobs/mnist"))
        yield self._field(
            "runtime_version",
            "Runtime",
            Input(
                placeholder="empty: the service's default; e.g. 2.11",
                suggester=SuggestFromList(list(RUNTIME_PYTHON)[::-1]),
            ),
        )
        yield self._field(
            "python_version",
            "Python",
            Input(
                placeholder="empty: the service's default; e.g. 3.7",
                suggester=SuggestFromList(PYTHON_VERSIONS),
            ),
        )
        yield Label("Scheduling", classes="section")
        yield self._field(
            "max_running_time",
            "Max running",
            Input(placeholder="empty: 7d; e.g. 2h, 90m, 7200s"),
        )
        yield self._field(
            "max_wait_time",
            "Max waiting",
            Input(placeholder="empty: no limit; e.g. 1h (at least 30m)"),
        )
        yield self._field(
            "priority",
            "Priority",
            Input(placeholder="empty: 0; e.g. 500 (0-1000, higher first)", type="integer"),
        )
        yield Label("Identity", classes="section")
        yield self._field("labels", "Labels", Input(placeholder="e.g. owner=ann, team=ml"))
        yield self._field(
            "service_account",
            "Service acct",
            Input(placeholder="e.g. trainer@project.iam.gserviceaccount.com"),
        )
        with TuningSection(title="Hyperparameter tuning", collapsed=True, id="hp"):
            yield self._field("tune", "Tune", Checkbox("tune this job's hyperparameters"))
            yield self._field(
                "hp_goal",
                "Goal",
                Select([(g, g) for g in GOALS], allow_blank=False, value="MAXIMIZE"),
            )
            yield self._field(
                "hp_metric", "Metric tag", Input(placeholder=f"empty: {DEFAULT_METRIC_TAG}")
            )
            yield self._field(
                "hp_max_trials",
                "Max trials",
                Input(placeholder="empty: 1; e.g. 10", type="integer"),
            )
            yield self._field(
                "hp_max_parallel",
                "In parallel",
                Input(placeholder="empty: 1; e.g. 2", type="integer"),
            )
            yield self._field(
                "hp_algorithm",
                "Algorithm",
                Select(
                    [(a or "Bayesian (default)", a) for a in ALGORITHMS],
                    allow_blank=False,
                    value="",
                ),
            )
            yield Label("Parameters  (a add · e/enter edit · x remove)", classes="field-hint")
            yield ParamsTable(id="f-params")
            yield Static("", id="e-params", classes="field-error")

    def _field(self, key: str, label: str, widget: Widget) -> Vertical:
        """A labelled field with its error line below it."""
        widget.id = f"f-{key}"
        if isinstance(widget, Input | Select | TextArea):
            widget.compact = True
        error = Static("", id=f"e-{key}", classes="field-error")
        row = Horizontal(Label(label, classes="field-label"), widget, classes="field-row")
        return Vertical(row, error, id=f"field-{key}", classes="field")

    def _role(self, role: RoleFields) -> Iterator[Widget]:
        """One role of a CUSTOM cluster: machine type and count, then accelerator and image.
        The master's machine rows are ``-custom-only``: under another tier only its image shows."""
        k = role.key
        kind = Select(
            _machine_options(),
            prompt="none" if role.count_field else "choose a machine type",
            id=f"f-{k}_type",
            compact=True,
        )
        first: list[Widget] = [Label(role.label, classes="field-label"), kind]
        if role.count_field:
            count = Input(placeholder="e.g. 2", type="integer", id=f"f-{k}_count", compact=True)
            first += [Label("×", classes="field-times"), count]
        acc = Select(
            _accelerator_options(), prompt="no accelerator", id=f"f-{k}_acc_type", compact=True
        )
        acc_count = Input(placeholder="e.g. 1", type="integer", id=f"f-{k}_acc_count", compact=True)
        image = Input(
            placeholder="e.g. gcr.io/project/trainer:1 (a custom container)",
            id=f"f-{k}_image",
            compact=True,
        )
        errors = [
            Static("", id=f"e-{key}", classes="field-error")
            for key in (f"{k}_type", f"{k}_count", f"{k}_acc_type", f"{k}_acc_count", f"{k}_image")
            if role.count_field or key != f"{k}_count"
        ]
        yield Vertical(
            Horizontal(*first, classes="field-row -custom-only"),
            Horizontal(
                Label("  accelerator", classes="field-label"),
                acc,
                Label("×", classes="field-times"),
                acc_count,
                classes="field-row role-extra -custom-only",
            ),
            Horizontal(
                Label(IMAGE_LABEL_CUSTOM, id=f"label-{k}_image", classes="field-label"),
                image,
                classes="field-row role-extra",
            ),
            # Which engine runs the images on the local service (every role's: one line).
            *([Static("", id="engine-line")] if role.key == "master" else []),
            *errors,
            id=f"role-{k}",
            classes="field role",
        )

    def on_mount(self) -> None:
        # Looked up once: validation runs on every keystroke and a query walks the whole form.
        for key in FIELD_KEYS:
            self._fields[key] = self.query_one(f"#f-{key}")
        for key in ERROR_KEYS:
            self._error_lines[key] = self.query_one(f"#e-{key}", Static)
        for box in self.query(".field"):
            if box.id and box.id.startswith("field-"):
                self._boxes[box.id.removeprefix("field-")] = box
        self.load(self._initial)

    # -- values ----------------------------------------------------------------------------------

    def values(self) -> FormValues:
        """What the form holds now."""
        values: dict[str, str] = {}
        for key in FIELD_KEYS:
            widget = self._fields[key]
            if isinstance(widget, TextArea):
                text = widget.text
            elif isinstance(widget, Select):
                text = "" if widget.is_blank() else str(widget.value)
            elif isinstance(widget, Input):
                text = widget.value
            else:
                continue
            if text:
                values[key] = text
        tune = self.query_one("#f-tune", Checkbox).value
        return FormValues(
            values=values, tune=tune, params=list(self.params), extra=dict(self.extra)
        )

    def load(self, form: FormValues) -> None:
        """Fill every field from ``form`` (values a Select cannot show are left blank)."""
        self.params = [dict(p) for p in form.params]
        self.extra = dict(form.extra)
        with self.prevent(Input.Changed, Select.Changed, TextArea.Changed, Checkbox.Changed):
            for key in FIELD_KEYS:
                widget = self._fields[key]
                text = form.get(key)
                if isinstance(widget, TextArea):
                    widget.load_text(text)
                elif isinstance(widget, Select):
                    # job_to_form keeps only values these lists hold; a Select without a
                    # blank keeps its default for an empty field.
                    with contextlib.suppress(InvalidSelectValueError):
                        if text or key == "hp_algorithm":
                            widget.value = text
                        else:
                            widget.clear()
                elif isinstance(widget, Input):
                    widget.value = text
                    widget.cursor_position = len(text)
            self.query_one("#f-tune", Checkbox).value = form.tune
        self.query_one(ParamsTable).show(self.params)
        section = self.query_one("#hp", TuningSection)
        section.quiet = True  # its scroll is asked for after the next refresh; this comes after
        section.collapsed = not form.tune
        self.call_after_refresh(setattr, section, "quiet", False)
        self._layout(form)
        self.post_message(self.Changed(None))

    def _layout(self, form: FormValues) -> None:
        """Show the CUSTOM fields only for CUSTOM (the master's image under every tier), and a
        role's extras only once it has a type."""
        custom = (form.get("scale_tier") or "BASIC") == "CUSTOM"
        self.query_one("#custom-roles").display = custom
        for role in ROLES:
            shown = role is MASTER or bool(form.get(f"{role.key}_type"))
            for row in self.query(f"#role-{role.key} .role-extra"):
                row.display = shown
        for row in self.query(f"#role-{MASTER.key} .-custom-only"):
            row.display = custom
        # Under "Master" it is that role's image; alone, the job's.
        label = self.query_one(f"#label-{MASTER.key}_image", Label)
        label.update(IMAGE_LABEL_CUSTOM if custom else IMAGE_LABEL)
        params = len(self.params)
        self.query_one("#hp", Collapsible).title = (
            f"Hyperparameter tuning: on, {params} parameter{'s' if params != 1 else ''}"
            if form.tune
            else "Hyperparameter tuning: off"
        )

    def show_engine(self, text: str | None, ok: bool = True) -> None:
        """Say under the master's image which engine runs the images (``ok``), or why none can;
        None hides the line."""
        line = self.query_one("#engine-line", Static)
        set_text(line, text or "")
        line.display = bool(text)
        line.set_class(not ok, "-problem")

    # -- errors ----------------------------------------------------------------------------------

    def show_errors(self, errors: Mapping[str, list[str]], general: list[str]) -> None:
        """Show each key's messages under its field, and ``general`` above the form."""
        for key in ERROR_KEYS:
            messages = list(errors.get(key, []))
            if self._shown_errors.get(key, []) == messages:
                continue
            self._shown_errors[key] = messages
            line = self._error_lines[key]
            line.update("\n".join(f"✗ {m}" for m in messages))
            line.display = bool(messages)
            box = self._boxes.get(key)
            if box is not None:
                box.set_class(bool(messages), "-invalid")
        top = self.query_one("#form-problems", Static)
        top.update("\n".join(f"✗ {m}" for m in general))
        top.display = bool(general)

    def focus_field(self, key: str) -> None:
        """Move the cursor to field ``key`` and scroll it into view, with its error line
        (opening the tuning section when it is there).

        Textual scrolls to a widget only when the focus moves to it: a refused submit whose
        field has the cursor already (the job id, the form scrolled away from it since) would
        leave the field and its error out of sight, so the scroll is asked for here.
        """
        if key in ("params", "tune") or key.startswith("hp_"):
            self.query_one("#hp", Collapsible).collapsed = False
        found = self.query(f"#f-{key}")
        if not found:
            return
        widget = found.first()
        # The field's block holds the field and its error line: both should be seen.
        block = self._boxes.get(key, widget)

        def show() -> None:
            widget.focus(scroll_visible=False)
            self.scroll_to_widget(block, animate=False)

        self.call_after_refresh(show)

    # -- changes ---------------------------------------------------------------------------------

    @on(Input.Changed)
    @on(Select.Changed)
    @on(TextArea.Changed)
    @on(Checkbox.Changed)
    def _changed(
        self, event: Input.Changed | Select.Changed | TextArea.Changed | Checkbox.Changed
    ) -> None:
        event.stop()
        widget = event.control
        key = _key(widget)
        if key in ("scale_tier", "tune") or key.endswith("_type"):
            self._layout(self.values())
        self.post_message(self.Changed(key))

    def on_params_table_add_requested(self, event: ParamsTable.AddRequested) -> None:
        event.stop()
        self.app.push_screen(ParamEditScreen(), lambda spec: self._param_done(None, spec))

    def on_params_table_edit_requested(self, event: ParamsTable.EditRequested) -> None:
        event.stop()
        if 0 <= event.index < len(self.params):
            self.app.push_screen(
                ParamEditScreen(self.params[event.index]),
                lambda spec: self._param_done(event.index, spec),
            )

    def on_params_table_remove_requested(self, event: ParamsTable.RemoveRequested) -> None:
        event.stop()
        if 0 <= event.index < len(self.params):
            del self.params[event.index]
            self._params_changed()

    def _param_done(self, index: int | None, spec: dict[str, Any] | None) -> None:
        if spec is None:
            return
        if index is None:
            self.params.append(spec)
        else:
            self.params[index] = spec
        self.query_one("#f-tune", Checkbox).value = True  # a parameter means tuning
        self._params_changed()

    def _params_changed(self) -> None:
        self.query_one(ParamsTable).show(self.params)
        self._layout(self.values())
        self.post_message(self.Changed("params"))


def set_text(line: Static, text: str) -> None:
    """``line.update(text)`` unless it already says ``text``: every update lays the whole form
    out again (Textual cannot know a line kept its size), and the builder sets its status,
    notes and engine lines again at every keystroke's validation, mostly to what they said."""
    if line.content != text:
        line.update(text)
