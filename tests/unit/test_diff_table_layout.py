"""The diff table's layout rules (widgets/diff_table.py): how wide its label column is, where
a long label breaks, which values are drawn as states; and the widths the diff screen's heading
shortens the two names to (shell/screens/diff_screen.py), which must be the grid's own."""

from __future__ import annotations

import io

from rich.console import Console
from rich.text import Text

from tui_app.model.jobs.states import JobState
from tui_app.model.views.job_diff import DiffRow, DiffSection
from tui_app.shell.screens.diff_screen import shown_sections, value_widths
from tui_app.widgets.diff_table import (
    LABEL_MAX,
    LABEL_MIN,
    _grid,
    label_width,
    state_of,
    wrap_label,
)


def _section(*labels: str, changed: bool = True) -> DiffSection:
    rows = tuple(
        DiffRow(f"trainingInput.{label}", label, "a", "b" if changed else "a") for label in labels
    )
    return DiffSection("trainingInput", "Training input", rows)


def test_label_column_fits_the_labels_shown_within_a_fifth_of_the_width() -> None:
    sections = [_section("args[3]"), _section("parameterServerCount", changed=False)]
    # Folded: only the changed row's label counts; never under LABEL_MIN.
    assert label_width(sections, False, 200) == LABEL_MIN
    # Unfolded: the longest label shown, up to a fifth of the width (80 columns: 16).
    assert label_width(sections, True, 200) == len("parameterServerCount")
    assert label_width(sections, True, 80) == 16
    # Before the widget knows its width: LABEL_MAX at most.
    long = [_section("x" * 60)]
    assert label_width(long, False, 0) == LABEL_MAX


def test_a_long_path_breaks_after_its_dots() -> None:
    label = "workerConfig.acceleratorConfig.count"
    assert wrap_label(label, 20) == "workerConfig.\nacceleratorConfig.\ncount"
    assert wrap_label(label, 40) == label
    assert wrap_label("workerConfig.acceleratorConfig.count", 31) == (
        "workerConfig.acceleratorConfig.\ncount"
    )
    # A package's file name too (at 80 columns the label column is 15 wide).
    assert wrap_label("trainer-0.1.0.tar.gz", 15) == "trainer-0.1.0.\ntar.gz"
    # No dot: left whole, for the table to fold.
    assert wrap_label("a" * 30, 10) == "a" * 30


def test_only_a_state_field_is_drawn_as_a_state() -> None:
    state = DiffRow("outcome.state", "state", "FAILED", "SUCCEEDED")
    assert state_of(state, state.left) is JobState.FAILED
    assert state_of(state, None) is None
    assert state_of(state, "not a state") is None
    label = DiffRow("labels.status", "status", "FAILED", "FAILED")
    assert state_of(label, "FAILED") is None


def _drawn_widths(width: int, label_w: int) -> tuple[int, int]:
    """The cells the grid gives each value column at ``width``, as rich draws it."""
    table = _grid(label_w)
    table.add_row(*(Text(c * 500, no_wrap=True, overflow="crop") for c in "lab"))
    console = Console(width=width, file=io.StringIO(), record=True)
    console.print(table)
    line = console.export_text().splitlines()[0]
    return line.count("a"), line.count("b")


def test_the_headings_value_widths_are_the_grids() -> None:
    """The heading shortens each name to its column's width: one cell too many and the column
    cuts the name's end again (the "/4" of a trial), one too few and a cell is wasted."""
    for width in range(40, 260):
        for label_w in range(LABEL_MIN, min(LABEL_MAX, max(LABEL_MIN, width // 5)) + 1):
            assert value_widths(width, label_w) == _drawn_widths(width, label_w), (width, label_w)


def test_rows_not_known_yet_are_counted_in_the_title_not_drawn() -> None:
    pending = DiffRow("environment.runtimeVersion", "runtimeVersion", "2.11", "x", pending=True)
    same = DiffRow("environment.exact", "exact", "true", "true")
    section = DiffSection("environment", "Runtime environment", (pending, same))
    (shown,) = shown_sections([section])
    assert shown.title == "Runtime environment · 1 not known yet"
    assert shown.rows == (same,) and shown.unchanged_count == 1 and not shown.changed
    plain = _section("args[3]")
    assert shown_sections([plain]) == [plain]
