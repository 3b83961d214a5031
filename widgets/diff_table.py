"""DiffTable: two jobs (or two trials) side by side, section by section, what changed first.

::

    Training input · 1 changed · 12 the same
      args[3]          │ --steps=1                 │ --steps=3
      ⋯ 12 the same (u shows them)
    Outcome · 2 changed · 2 the same
      state            │ ✓ SUCCEEDED               │ ✗ FAILED
      errorMessage     │ (not set)                 │ The replica master 0 exited with a
                       │                           │ non-zero status of 1. Traceback ...

Feed it the model's sections (``model.views.job_diff.diff_sections``) with ``show``; it never
reads anything. The first column is as wide as the longest label shown (at most a fifth of
the width, so the values keep the room at 80 columns); the two value columns share the rest
equally and wrap long values (args, errorMessage) instead of cutting them. ``DiffHeading``
draws the column titles with the same widths, so a screen can keep them above a scrolling body.

Colours come only from the component classes in DEFAULT_CSS (theme variables). A state is drawn
with its symbol and in its state's colour, the same variables as the job list's STATE cell
(``widgets.job_table``), so FAILED reads as FAILED here too, whether or not it changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Unpack

from rich import box
from rich.console import Group, RenderableType
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.app import RenderResult
from textual.widget import Widget

from tui_app.model.jobs.states import STATE_SYMBOL, JobState
from tui_app.model.views.job_diff import DiffRow, DiffSection
from tui_app.widgets.state_colours import state_classes, state_css
from tui_app.widgets.widget_options import WidgetOptions

ABSENT = "(not set)"
"""What a side shows for a field it does not have."""
LABEL_MIN = 8
LABEL_MAX = 28
"""The label column's widest, in cells; never more than a fifth of the width either, so that
at 80 columns each value column still holds a whole job id."""
FOLD_GLYPH = "⋯"

_STATE_CLASS: dict[JobState, str] = state_classes("diff-table")


def label_width(sections: Sequence[DiffSection], unchanged: bool, width: int) -> int:
    """The label column's width: its longest label shown, within LABEL_MIN..LABEL_MAX and at
    most a fifth of ``width`` (0: unknown yet)."""
    labels = [len(row.label) for s in sections for row in (s.rows if unchanged else s.changed)]
    wanted = max([LABEL_MIN, *labels])
    cap = LABEL_MAX if width <= 0 else max(LABEL_MIN, min(LABEL_MAX, width // 5))
    return min(wanted, cap)


def wrap_label(label: str, width: int) -> str:
    """``label`` in lines of at most ``width`` cells, broken after its dots where it can
    (``workerConfig.`` / ``acceleratorConfig.`` / ``count``; ``trainer-0.1.0.`` / ``tar.gz``):
    a name cut mid-word reads badly. A piece longer than ``width`` is left for the table to
    fold."""
    if len(label) <= width or "." not in label:
        return label
    lines: list[str] = []
    line = ""
    for part in label.replace(".", ".\n").split("\n"):
        if line and len(line) + len(part) > width:
            lines.append(line)
            line = ""
        line += part
    lines.append(line)
    return "\n".join(lines)


def _grid(label_w: int) -> Table:
    """Three columns, the values' two sharing what the label leaves, a rule between them.

    The heading and the body build theirs here, so at one width their columns line up.
    """
    table = Table(
        box=box.MINIMAL,
        show_header=False,
        show_edge=False,
        pad_edge=False,
        expand=True,
        padding=(0, 1),
    )
    table.add_column(width=label_w, no_wrap=False, overflow="fold")
    table.add_column(ratio=1, overflow="fold")
    table.add_column(ratio=1, overflow="fold")
    return table


def state_of(row: DiffRow, value: str | None) -> JobState | None:
    """The job (or trial) state ``value`` names, on a row that holds a state."""
    if value is None or row.path.rsplit(".", 1)[-1] != "state":
        return None
    try:
        return JobState(value)
    except ValueError:
        return None


class DiffTable(Widget):
    """The sections of a diff, changed rows first-class, unchanged rows folded or dimmed."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "diff-table--title",
        "diff-table--count",
        "diff-table--label",
        "diff-table--label-changed",
        "diff-table--old",
        "diff-table--new",
        "diff-table--same",
        "diff-table--absent",
        "diff-table--fold",
        *_STATE_CLASS.values(),
    }
    """
    | Class | Description |
    | :- | :- |
    | `diff-table--title` | A section's title ("Training input"). |
    | `diff-table--count` | "1 changed · 12 the same" beside it. |
    | `diff-table--label` / `-changed` | The field's name, plain or on a changed row. |
    | `diff-table--old` / `--new` | A changed value on the left / right. |
    | `diff-table--same` | A value both sides share (shown with ``u``). |
    | `diff-table--absent` | "(not set)": the side has no such field. |
    | `diff-table--fold` | "⋯ 12 the same": the folded rows. |
    | `diff-table--state-*` | A state's value, one per state (colours: widgets/state_colours.py). |
    """

    DEFAULT_CSS = (
        """
    DiffTable {
        height: auto;
        & > .diff-table--title { text-style: bold underline; }
        & > .diff-table--count { color: $text-muted; }
        & > .diff-table--label { color: $text-muted; }
        & > .diff-table--label-changed { color: $foreground; text-style: bold; }
        & > .diff-table--old { color: $text-error; background: $error 12%; }
        & > .diff-table--new { color: $text-success; background: $success 12%; }
        & > .diff-table--same { color: $text-muted; }
        & > .diff-table--absent { color: $text-muted; text-style: italic; }
        & > .diff-table--fold { color: $text-muted; }
    """
        + state_css("diff-table")
        + """
    }
    """
    )

    def __init__(self, **options: Unpack[WidgetOptions]) -> None:
        super().__init__(**options)
        self.sections: list[DiffSection] = []
        self.unchanged = False
        """Every row, the unchanged ones dimmed, instead of a "⋯ N the same" line each."""
        self._label_w = LABEL_MAX

    def show(self, sections: Sequence[DiffSection], *, unchanged: bool) -> None:
        self.sections = list(sections)
        self.unchanged = unchanged
        self.refresh(layout=True)

    def _style(self, component: str) -> Style:
        # Whole, not partial: a translucent background ($error 12%) is blended with what is
        # behind the widget only then; partial, it came out as the full colour.
        return self.get_component_rich_style(component)

    def render(self) -> RenderResult:
        return Group(*self._parts())

    def _parts(self) -> list[RenderableType]:
        width = self.size.width
        label_w = label_width(self.sections, self.unchanged, width)
        self._label_w = label_w
        parts: list[RenderableType] = []
        for n, section in enumerate(self.sections):
            if n:
                parts.append(Text(""))
            parts.append(self._title(section))
            rows = section.rows if self.unchanged else section.changed
            if rows:
                table = _grid(label_w)
                for row in rows:
                    table.add_row(*self._cells(row))
                parts.append(table)
            same = section.unchanged_count
            if same and section.changed and not self.unchanged:
                parts.append(
                    Text(
                        f"  {FOLD_GLYPH} {same} the same (u shows them)",
                        self._style("diff-table--fold"),
                    )
                )
        return parts

    def _title(self, section: DiffSection) -> Text:
        changed, same = len(section.changed), section.unchanged_count
        if not section.rows:
            count = "nothing to compare"
        elif not changed:
            count = f"the same ({same} field{'' if same == 1 else 's'})"
        else:
            count = f"{changed} changed" + (f" · {same} the same" if same else "")
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(section.title, self._style("diff-table--title"))
        text.append(f" · {count}", self._style("diff-table--count"))
        return text

    def _cells(self, row: DiffRow) -> tuple[Text, Text, Text]:
        changed = row.changed
        label = Text(
            wrap_label(row.label, self._label_w),
            self._style("diff-table--label-changed" if changed else "diff-table--label"),
        )
        return (
            label,
            self._value(row, row.left, "diff-table--old" if changed else "diff-table--same"),
            self._value(row, row.right, "diff-table--new" if changed else "diff-table--same"),
        )

    def _value(self, row: DiffRow, value: str | None, component: str) -> Text:
        if value is None:
            return Text(ABSENT, self._style("diff-table--absent"))
        state = state_of(row, value)
        if state is not None and state in _STATE_CLASS:
            style = self._style(_STATE_CLASS[state])
            if row.changed:
                style += Style(bold=True)
            return Text(f"{STATE_SYMBOL[state]} {value}", style)
        return Text(value, self._style(component))


class DiffHeading(Widget):
    """The column titles over a ``DiffTable``: what the rows are, then each side's name."""

    DEFAULT_CSS = """
    DiffHeading {
        height: auto;
        background: $panel;
        color: $foreground;
        text-style: bold;
    }
    """

    def __init__(self, **options: Unpack[WidgetOptions]) -> None:
        super().__init__(**options)
        self.names = ("", "")
        self.sections: list[DiffSection] = []
        self.unchanged = False

    def show(
        self, names: tuple[str, str], sections: Sequence[DiffSection], *, unchanged: bool
    ) -> None:
        """Title the columns for ``sections`` as the body shows them (the label width follows
        the labels shown)."""
        self.names = names
        self.sections = list(sections)
        self.unchanged = unchanged
        self.refresh(layout=True)

    def render(self) -> RenderResult:
        table = _grid(label_width(self.sections, self.unchanged, self.size.width))
        # One line whatever the width: the title above names both sides in full.
        table.add_row(*(Text(t, no_wrap=True, overflow="ellipsis") for t in ("field", *self.names)))
        return table
