"""TrialsSection: a tuning job's trials as the Console showed them, a plot and a table, live.

::

    Trials
    12 trials, 9 completed · goal MINIMIZE rmse · ★ best · enter a trial's logs · M its metrics
     0.4210 ┤ ●        ○
            │    ●  ●     ●
     0.0132 ┤       ★
       ★ Trial  Objective  Step  State         lr, layers  Curve       Duration  Output
       ★ 4      0.0132     1000  ✓ SUCCEEDED  0.01, 3     █▆▄▃▂▂▁▁▁▁  1m20s     4/

The table is a ``DataTable`` (a tuning job has tens of trials, not the job list's 100k rows, so
the stock widget's measuring costs nothing and gives row cursor, header and scrolling for free).
Rows are keyed by trial id: a refresh re-sorts them and, while the table has focus, the cursor
stays on its trial (unfocused, it rests on the best). The key columns come first, then the
parameters (named in the header, values in the cells), so at 80 columns what is cut is the
curve, the duration and the output, never the objective or the values that won. The Curve
column is each trial's metric over its reported steps (``allMetrics``), a sparkline whose ``×``
marks a NaN or inf report; ``M`` on a row opens that trial's metrics.

The plot is a small text scatter of the objective by trial id, not a ``Sparkline``: a sparkline
draws bars from the minimum up, which reads "higher is better" even when the goal is MINIMIZE, and
it cannot leave a gap for a trial without an objective yet. The scatter has its range on the
axis, a hollow point for a running trial's latest value, and the best trial's star.

Feed it with ``show`` (rows from ``tui_app.model.views.trials``); it never fetches anything. Colours
come only from the component classes in DEFAULT_CSS (theme variables).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import ClassVar, Unpack

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult, RenderResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widget import Widget
from textual.widgets import DataTable, Static

from tui_app.model.metrics.metric_goals import sparkline
from tui_app.model.views.trials import (
    BEST_GLYPH,
    PlotPoint,
    TrialRow,
    format_objective,
    objective_series,
    params_column,
    scatter_positions,
    trial_order,
)
from tui_app.widgets.job_table import MARK_GLYPH
from tui_app.widgets.line_cursor import table_bindings
from tui_app.widgets.widget_options import WidgetOptions

PLOT_ROWS = 4
FINAL_GLYPH = "●"
LATEST_GLYPH = "○"
COLUMNS = (
    "",
    "Trial",
    "Objective",
    "Step",
    "State",
    "Hyperparameters",
    "Curve",
    "Duration",
    "Output",
)
"""Column keys in order. The parameters come right after the state: which values won is what a
reader compares, so at 80 columns the curve, duration and output are what is cut. The
parameters' header names them (``model.trials.params_column``)."""
CURVE_WIDTH = 10
"""The sparkline's cells: ten reports side by side, or ten averages of a longer history."""


def trial_pair(
    rows: Sequence[TrialRow], marked: Collection[str], cursor: str | None
) -> tuple[str, str, str] | str:
    """The two trials ``D`` compares, ``(left, right, why)``, or why there are not two.

    Two marked trials, the lower id on the left; else the trial under the cursor against the
    best one (the best on the left, as the reference); on the best itself, against the
    runner-up (the next trial, best first, with a final objective).

    Args:
        rows: The table's rows, best first (``trial_rows``).
        marked: The marked trial ids.
        cursor: The trial under the cursor, if any.
    """
    if len(marked) == 2:
        left, right = sorted(marked, key=trial_order)
        return left, right, "two marked trials"
    if marked:
        count = f"{len(marked)} trial{'' if len(marked) == 1 else 's'} marked"
        return f"{count}: mark exactly two trials (space) to compare them."
    if cursor is None:
        return "No trial here: mark two trials (space) and press D."
    finished = [r for r in rows if r.final and r.objective is not None]
    best = next((r for r in rows if r.best), None)
    if best is None:
        return "No trial has a final objective yet: mark two trials (space) and press D."
    if cursor != best.trial_id:
        return best.trial_id, cursor, f"trial {cursor} against the best trial"
    runner_up = next((r for r in finished if r.trial_id != best.trial_id), None)
    if runner_up is None:
        return (
            f"Trial {best.trial_id} is the only one with a final objective: "
            "mark two trials (space) and press D."
        )
    return best.trial_id, runner_up.trial_id, "the best trial against the runner-up"


class TrialsPlot(Widget):
    """The objective of each trial, left to right in trial-id order, low at the bottom."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "trials-plot--axis",
        "trials-plot--point",
        "trials-plot--latest",
        "trials-plot--best",
    }
    DEFAULT_CSS = """
    TrialsPlot {
        height: 5;
    }
    TrialsPlot > .trials-plot--axis { color: $text-muted; }
    TrialsPlot > .trials-plot--point { color: $accent; }
    TrialsPlot > .trials-plot--latest { color: $text-muted; }
    TrialsPlot > .trials-plot--best { color: $success; text-style: bold; }
    """

    def __init__(self, **options: Unpack[WidgetOptions]) -> None:
        super().__init__(**options)
        self.points: list[PlotPoint] = []

    def show(self, points: Sequence[PlotPoint]) -> None:
        self.points = list(points)
        self.refresh()

    def render(self) -> RenderResult:
        known = [p.objective for p in self.points if p.objective is not None]
        if not known:
            return Text("no objective reported yet", style=self._style("trials-plot--axis"))
        high, low = format_objective(max(known)), format_objective(min(known))
        label_w = max(len(high), len(low))
        columns = max(1, self.size.width - label_w - 3)
        grid: list[list[tuple[str, str]]] = [[(" ", "")] * columns for _ in range(PLOT_ROWS)]
        places = scatter_positions([p.objective for p in self.points], columns, PLOT_ROWS)
        # The best is drawn last so that a column shared by several trials still shows its star.
        for point, place in sorted(
            zip(self.points, places, strict=True), key=lambda pair: pair[0].best
        ):
            if place is None:
                continue
            column, row = place
            if point.best:
                cell = (BEST_GLYPH, "trials-plot--best")
            elif point.final:
                cell = (FINAL_GLYPH, "trials-plot--point")
            else:
                cell = (LATEST_GLYPH, "trials-plot--latest")
            grid[row][column] = cell
        axis = self._style("trials-plot--axis")
        text = Text(no_wrap=True, overflow="crop")
        for r, cells in enumerate(grid):
            if r:
                text.append("\n")
            label = high if r == 0 else low if r == PLOT_ROWS - 1 else ""
            tick = "┤" if label else "│"
            text.append(f" {label:>{label_w}} {tick}", axis)
            for glyph, component in cells:
                text.append(glyph, self._style(component) if component else "")
        first, last = self.points[0].trial_id, self.points[-1].trial_id
        text.append(f"\n {'':>{label_w}} └ trial {first} → {last}", axis)
        return text

    def _style(self, component: str) -> str:
        return str(self.get_component_rich_style(component, partial=True))


class TrialsTable(DataTable[str | Text]):
    """One row per trial, best first; ``enter`` posts ``TrialSelected``, ``M``
    ``TrialMetricsRequested``, ``D`` ``TrialDiffRequested``; ``space`` marks a trial."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select_cursor", "Trial logs", id="trials.logs"),
        Binding(
            "M", "metrics", "Trial metrics", id="trials.metrics", tooltip="This trial's curves"
        ),
        Binding(
            "space",
            "toggle_mark",
            "Mark",
            show=False,
            id="trials.mark",
            tooltip="Mark or unmark the trial, then move down (D compares two)",
        ),
        Binding(
            "D",
            "diff",
            "Diff trials",
            show=False,
            id="trials.diff",
            tooltip="Two marked trials, or this one against the best",
        ),
        *table_bindings("trials"),
    ]
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "trials-table--best",
        "trials-table--failed",
        "trials-table--running",
        "trials-table--shared",
    }
    DEFAULT_CSS = """
    TrialsTable {
        height: auto;
        max-height: 14;
    }
    TrialsTable > .trials-table--best { color: $success; text-style: bold; }
    TrialsTable > .trials-table--failed { color: $error; }
    TrialsTable > .trials-table--running { color: $text-muted; }
    TrialsTable > .trials-table--shared { color: $warning; text-style: bold; }
    """

    @dataclass
    class TrialSelected(Message):
        """``enter`` on a trial: open its logs."""

        trial_id: str

    @dataclass
    class TrialMetricsRequested(Message):
        """``M`` on a trial: open its metrics (its own tags)."""

        trial_id: str

    @dataclass
    class TrialDiffRequested(Message):
        """``D``: compare two trials (``trial_pair`` chose them, and says why)."""

        left: str
        right: str
        reason: str

    def __init__(self, **options: Unpack[WidgetOptions]) -> None:
        super().__init__(cursor_type="row", zebra_stripes=False, **options)
        self.marked: set[str] = set()
        """The trials marked with ``space``, kept across refreshes."""
        self.shown: list[TrialRow] = []
        """The rows on screen, in their order."""
        self.with_output = False
        """Whether the Output column is there: only when the backend says where trials wrote."""
        self.params_header = "Hyperparameters"
        """The parameters column's header: their names when every trial has the same."""
        self.params_width: int | None = None
        """The parameters column's width: its values' widest, and its header's as far as the
        table's width leaves room (a long header is cut, never the values)."""
        self._add_columns()

    def _add_columns(self) -> None:
        for key in COLUMNS:
            if key != "Output" or self.with_output:
                if key == "Hyperparameters":
                    label = Text(self.params_header, overflow="ellipsis", no_wrap=True)
                    self.add_column(label, key=key, width=self.params_width)
                else:
                    self.add_column(key, key=key or "best")

    def _params_width(
        self, rows: Sequence[TrialRow], header: str, cells: Sequence[str]
    ) -> int | None:
        """See ``params_width``; None (the header's and values' widest) before the table
        knows its width."""
        width = self.scrollable_content_region.width
        if not width:
            return None
        values = max((cell_len(c) for c in cells), default=0)
        before = COLUMNS.index("Hyperparameters")
        # Every column before it as wide as its widest cell or label, with its padding.
        texts = [[str(t) for t in self._cells(row, "")[:before]] for row in rows]
        taken = sum(
            max(cell_len(COLUMNS[i]), *(cell_len(t[i]) for t in texts)) + 2 * self.cell_padding
            for i in range(before)
        )
        room = width - taken - 2 * self.cell_padding
        return max(values, min(cell_len(header), room), 1)

    def on_resize(self) -> None:
        header, params = params_column(self.shown)
        if self.shown and self._params_width(self.shown, header, params) != self.params_width:
            self.show(self.shown, force=True)

    def show(self, rows: Sequence[TrialRow], force: bool = False) -> None:
        """Show ``rows`` in their order (``force``: again, though they are the same).

        While the table has focus, the cursor stays on the trial it was on (someone is reading
        it); otherwise it sits on the top row, the best trial so far.
        """
        rows = list(rows)
        if rows == self.shown and not force:
            return
        current = (
            self.shown[self.cursor_row].trial_id if self.shown and self.cursor_row >= 0 else None
        )
        self.shown = rows
        with_output = any(r.output_text for r in rows)
        header, params = params_column(rows)
        width = self._params_width(rows, header, params)
        changed = (with_output, header, width) != (
            self.with_output,
            self.params_header,
            self.params_width,
        )
        self.clear(columns=changed)
        if changed:
            self.with_output = with_output
            self.params_header = header
            self.params_width = width
            self._add_columns()
        for row, param_text in zip(rows, params, strict=True):
            self.add_row(*self._cells(row, param_text), key=row.trial_id)
        ids = [r.trial_id for r in rows]
        if self.has_focus and current in ids:
            self.move_cursor(row=ids.index(current), animate=False, scroll=False)

    def _row_style(self, row: TrialRow) -> str:
        if row.best:
            style = self.get_component_rich_style("trials-table--best", partial=True)
        elif row.state in ("FAILED", "CANCELLED", "CANCELLING"):
            style = self.get_component_rich_style("trials-table--failed", partial=True)
        elif row.state in ("RUNNING", "PREPARING", "QUEUED"):
            style = self.get_component_rich_style("trials-table--running", partial=True)
        else:
            style = None
        return str(style) if style else ""

    def _cells(self, row: TrialRow, param_text: str) -> list[str | Text]:
        style_text = self._row_style(row)
        objective = row.objective_text
        if row.objective is not None and not row.final:
            objective += "…"  # a running trial's latest value, not its final one
        cells: list[str | Text] = [
            Text(BEST_GLYPH if row.best else " ", style=style_text),
            Text(self._trial_text(row.trial_id), style=style_text),
            Text(objective, style=style_text, justify="right"),
            Text(row.step_text, style=style_text, justify="right"),
            Text(row.state_text, style=style_text),
            Text(param_text, style=style_text),
            Text(sparkline(row.history, CURVE_WIDTH), style=style_text),
            Text(row.duration, style=style_text, justify="right"),
        ]
        if self.with_output:
            shared = self._shared_style() if row.shared_with else style_text
            cells.append(Text(row.output_text, style=shared))
        return cells

    def _trial_text(self, trial_id: str) -> str:
        return f"{MARK_GLYPH} {trial_id}" if trial_id in self.marked else trial_id

    def _current(self) -> str | None:
        if self.shown and 0 <= self.cursor_row < len(self.shown):
            return self.shown[self.cursor_row].trial_id
        return None

    def action_toggle_mark(self) -> None:
        trial_id = self._current()
        if trial_id is None:
            return
        self.marked.symmetric_difference_update({trial_id})
        row = self.shown[self.cursor_row]
        self.update_cell(
            trial_id, "Trial", Text(self._trial_text(trial_id), style=self._row_style(row))
        )
        self.action_cursor_down()

    def action_diff(self) -> None:
        pair = trial_pair(
            self.shown, self.marked & {r.trial_id for r in self.shown}, self._current()
        )
        if isinstance(pair, str):
            self.screen.notify(pair, severity="warning")  # the screen's toast: goes with it
        else:
            self.post_message(self.TrialDiffRequested(*pair))

    def _shared_style(self) -> str:
        return str(self.get_component_rich_style("trials-table--shared", partial=True))

    def action_metrics(self) -> None:
        if self.shown and 0 <= self.cursor_row < len(self.shown):
            self.post_message(self.TrialMetricsRequested(self.shown[self.cursor_row].trial_id))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value is not None:
            self.post_message(self.TrialSelected(event.row_key.value))


class TrialsSection(Widget):
    """The "Trials" section of the detail pane: title, caption, plot and table."""

    DEFAULT_CSS = """
    TrialsSection {
        height: auto;
        margin-bottom: 1;
    }
    TrialsSection > .trials--title { text-style: bold underline; }
    TrialsSection > .trials--caption {
        color: $text-muted;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    TrialsSection > TrialsPlot { margin-bottom: 1; }
    """

    def __init__(self, **options: Unpack[WidgetOptions]) -> None:
        super().__init__(**options)
        self.caption = Static("", classes="trials--caption", markup=False)
        self.plot = TrialsPlot()
        self.table = TrialsTable()

    def compose(self) -> ComposeResult:
        yield Static("Trials", classes="trials--title")
        yield self.caption
        yield self.plot
        yield self.table

    def show(
        self, rows: Sequence[TrialRow], goal: str, tag: str | None, completed: int | None
    ) -> None:
        """Draw ``rows`` (best first, from ``trial_rows``) for a job with ``goal``."""
        done = completed if completed is not None else sum(1 for r in rows if r.final)
        count = f"{len(rows)} trial{'' if len(rows) == 1 else 's'}, {done} completed"
        if not rows:
            count = "no trials yet"
        goal_text = f"goal {goal}" + (f" {tag}" if tag else "")
        self.caption.update(
            f"{count} · {goal_text} · {BEST_GLYPH} best · enter a trial's logs · M its metrics"
        )
        self.plot.show(objective_series(rows))
        self.plot.display = bool(rows)
        self.table.show(rows)
        self.table.display = bool(rows)
