"""MetricChart turns plotext's cells into strips itself (``matrix_strips``) instead of letting
plotext write ANSI text and Rich parse it back. These tests hold the two equal on figures like
the chart's own (braille, dots, quadrant blocks, marks, colours, tick labels, a log axis), so a
plotext release that changes its cells fails here rather than on screen."""

from __future__ import annotations

import math

import pytest
from rich.console import Console
from rich.style import Style
from rich.text import Text
from textual.strip import Strip
from textual_plotext.plot import Plot

from tui_app.widgets.metric_chart import cell_style, matrix_strips

WIDTH, HEIGHT = 46, 13


def figure(*, log_y: bool) -> Plot:
    plt = Plot()
    plt.plotsize(WIDTH, HEIGHT)
    plt._set_size(WIDTH, HEIGHT)
    plt.canvas_color("default")
    plt.axes_color("default")
    plt.ticks_color((149, 158, 174))
    plt.xaxes(True, False)
    plt.yaxes(True, False)
    plt.yscale("log" if log_y else "linear")
    xs = [float(x) for x in range(0, 2000, 25)]
    raw = [2.0 * math.exp(-x / 400) + 0.05 * math.sin(x) + 0.01 for x in xs]
    smooth = [2.0 * math.exp(-x / 400) + 0.01 for x in xs]
    if log_y:
        plt.ylim(math.log10(0.01), math.log10(3.0))
        plt.yticks([0.01, 0.1, 1.0], ["0.01", " 0.1", "   1"])
    else:
        plt.ylim(-0.5, 2.5)
        plt.yticks([0.0, 1.0, 2.0], ["0", "1", "2"])
    plt.xlim(0.0, 2000.0)
    plt.xticks([0.0, 1000.0, 2000.0], ["0", "1k", "2k"])
    plt.scatter(xs, raw, marker="·", color=(90, 90, 90))
    plt.plot(xs, smooth, marker="braille", color=(200, 100, 0))
    plt.plot(xs, [v * 1.2 for v in smooth], marker="hd", color=(0, 200, 80))
    plt.plot(xs, [v * 0.8 for v in smooth], marker="dot", color=(80, 80, 250))
    plt.scatter([500.0, 900.0], [0.01, 0.01], marker="×", color=(255, 0, 0))
    return plt


def via_ansi(plt: Plot, base: Style) -> list[Strip]:
    """What the chart drew before: plotext's ANSI text, parsed by Rich, on the widget's style."""
    console = Console(width=WIDTH, color_system="truecolor", legacy_windows=False)
    text = Text.from_ansi(plt.build().rstrip("\n"), no_wrap=True)
    lines = console.render_lines(text, console.options.update(width=WIDTH), style=base, pad=True)
    return [Strip(line, WIDTH) for line in lines]


@pytest.mark.parametrize("log_y", [False, True])
def test_the_strips_are_what_plotexts_ansi_text_reads_as(log_y: bool) -> None:
    base = Style(color="#e0e0e0", bgcolor="#1e1e1e")
    mine = matrix_strips(figure(log_y=log_y), WIDTH, base)
    theirs = via_ansi(figure(log_y=log_y), base)
    assert [strip.text for strip in mine] == [strip.text for strip in theirs]
    # Segment boundaries may differ where two runs have equal styles: compare cell by cell.
    for row, (a, b) in enumerate(zip(mine, theirs, strict=True)):
        cells_a = [(seg.style, ch) for seg in a for ch in seg.text]
        cells_b = [(seg.style, ch) for seg in b for ch in seg.text]
        assert cells_a == cells_b, f"row {row}"
    drawn = "".join(strip.text for strip in mine)
    assert "×" in drawn and "·" in drawn
    if not log_y:  # on the log axis the three close curves cover each other's cells
        assert any("⠀" < ch <= "⣿" for ch in drawn), "no braille drawn"


def test_a_cell_of_no_colour_takes_the_base_style() -> None:
    assert cell_style("default", "default", "default") == Style()
    assert cell_style([200, 100, 0], "default", "default").color.triplet == (200, 100, 0)  # type: ignore[union-attr]
