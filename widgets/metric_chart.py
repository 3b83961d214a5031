"""MetricChart: one tag's curves (one per run or trial), its legend and its axes, drawn by
textual-plotext.

::

    epoch_loss · epoch · events
    1.2┤⠑⡄•
       │ ⠈⠢⡀••
    0.6┤    ⠈⠑⠤⣀•••
       │        ⠈⠉⠒⠒⠤⠤⣀⣀⣀⣀•••••
    0.0┤  ×
       └┬──────────┬──────────┬──
        0         500        1k
    ⣿ train       last 0.082  min 0.071  max 1.04
    • validation  last 0.1  2 NaN  min 0.09  max 1.1

Each series is its smoothed curve with its raw curve faint behind it (when smoothing is on), as
TensorBoard draws them. In a tuning job's overlay the best trial is drawn strongest and the
others faint. Every curve is told apart by its marker as well as by its colour, so the chart still
reads under ``NO_COLOR``: raw points are ``·``, the first other curve braille dots, the next
``•``, ``+``, ``o``, ``*``, and the best trial's quadrant blocks. Non-finite values (a loss that
blew up) are ``×`` marks on the x axis where they happened, in their curve's colour, counted in
the legend with the step they start at. Where a trainer resumed from a checkpoint (its steps went
back: the orphaned points are gone and the curve is one line) a faint vertical line in the
curve's colour runs up the plot, topped by ``↻``, and the legend says ``↻ resumed at step N``;
a series that never resumed draws exactly as before.

The chart asks each series for a view with as many columns as the plot has (the model keeps at
most two points per column), and sets round ticks itself (``model.chart_ticks``): plotext's own
ticks sit at equal fractions of the range, ``0.0781 0.3142``.

A redraw of four charts (smoothing, zoom, a resize) must fit in about 30 ms, so the chart is a
Line API widget: plotext draws its cells (character, colours, style) and the chart turns them
into strips itself (``_matrix_strips``). plotext's own ``build()`` writes the cells out as ANSI
text, which Rich would then parse back and Textual render line by line again: at 60x15 that
round trip cost more than plotext's drawing. The strips are kept and rebuilt only when a
series' data version, the size, an option or the theme changed: a refresh for any other reason
(a focus change, a toast) reuses them.

Feed it with ``show``; it never fetches anything. Series may be written by a thread while the
chart draws: pass that thread's lock as ``data_lock`` and the views are taken under it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import tzinfo
from functools import lru_cache
from itertools import groupby
from operator import itemgetter
from typing import Any, ClassVar, Literal, Unpack

import numpy as np
import plotext._utility as plotext_utility  # type: ignore[import-untyped]
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.color import Color
from textual.strip import Strip
from textual_plotext import PlotextPlot

from tui_app.model.metrics.chart_ticks import format_step, format_value, x_ticks, y_ticks
from tui_app.model.metrics.metric_series import Series, SeriesView, XAxis
from tui_app.widgets.widget_options import WidgetOptions

LineRole = Literal["normal", "best", "faint"]
"""How strongly a curve is drawn: ``best`` is the winning trial of an overlay, ``faint`` the
other trials."""

RAW_MARKER = "·"
"""The raw curve behind a smoothed one: one small dot per cell, never mistaken for a line."""
NONFINITE_MARKER = "×"
RESUME_MARKER = "↻"
"""Tops a resume's vertical line: under ``NO_COLOR`` it is what tells that line from the axis."""
SERIES_MARKERS: tuple[str, ...] = ("braille", "dot", "+", "o", "*")
"""Markers of the smoothed curves of a chart's runs, in order: the marker tells the runs apart
where colour cannot (``NO_COLOR``, colour blindness)."""
BEST_MARKER = "hd"
MARKER_GLYPHS: dict[str, str] = {"braille": "⣿", "hd": "▚", "dot": "•"}
"""The legend's sample of each plotext marker (a single-character marker is its own sample)."""
PALETTE: tuple[str, ...] = ("primary", "accent", "secondary", "warning", "success")
"""Theme variables the runs' colours come from, in order (``success`` last: it is the best
trial's colour in an overlay)."""
FAINT = 0.55
"""How far a faint curve's colour goes towards the background (0 none, 1 all the way)."""
LEGEND_MAX_LINES = 4
"""Legend lines at most; more series end in one "+ N more" line."""
MIN_PLOT_ROWS = 4
X_LABEL_CELLS = 10
"""Room per x tick label: ``08:30:00`` and a gap."""
TEXT_CACHE_SIZE = 16
"""Rendered titles and legends kept per chart (a few per option a user toggles back and
forth)."""
Y_LABEL_GUESS = 6
"""The y labels' width the first views are taken at (``0.0125``); a wider label takes them
again at the right width."""

RGB = tuple[int, int, int]


@dataclass(frozen=True)
class ChartLine:
    """One series on a chart."""

    label: str
    """``train``, ``★ trial 3``: the legend's name for it."""
    series: Series = field(compare=False)
    version: int
    """The series' data version: a new one redraws the chart."""
    role: LineRole = "normal"
    source: str = ""
    """Where its points came from: ``events``, ``hypertune`` or ``logs``."""


@dataclass(frozen=True)
class ChartOptions:
    """The view's settings every chart shares."""

    smoothing: float = 0.6
    """TensorBoard's exponential moving average weight, 0 (off) to 0.99."""
    log_y: bool = False
    x_axis: XAxis = "step"
    last_steps: int | None = None
    """Zoom: only the last N steps; None for the whole history."""
    legend_rows: int = 0
    """Rows every chart keeps for its legend (charts side by side line up); 0: its own."""


@dataclass
class _Drawn:
    """A line's view and how it is drawn."""

    line: ChartLine
    view: SeriesView
    marker: str
    color: RGB
    raw_color: RGB


@dataclass
class _Axes:
    x_low: float
    x_high: float
    y_low: float
    y_high: float
    y_ticks: list[float]
    y_labels: list[str]

    @property
    def label_width(self) -> int:
        return max((len(label) for label in self.y_labels), default=1)


class MetricChart(PlotextPlot):
    """A tag's curves, title and legend in one widget (see the module docstring)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "metric-chart--title",
        "metric-chart--dim",
        "metric-chart--best",
        "metric-chart--note",
    }
    """
    | Class | Description |
    | :- | :- |
    | `metric-chart--title` | The tag (accented on the chart the keys move between). |
    | `metric-chart--dim` | The group, the sources, the legend's figures. |
    | `metric-chart--best` | The best trial's name in the legend. |
    | `metric-chart--note` | What the plot cannot say itself (curves squeezed flat, only NaN). |
    """
    DEFAULT_CSS = """
    MetricChart {
        width: 1fr;
        height: 1fr;
        min-height: 8;
        background: $surface;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    MetricChart > .metric-chart--title { text-style: bold; color: $foreground; }
    MetricChart.-current > .metric-chart--title { text-style: bold underline; color: $accent; }
    MetricChart > .metric-chart--dim { color: $text-muted; }
    MetricChart > .metric-chart--best { text-style: bold; }
    MetricChart > .metric-chart--note { color: $text-warning; text-style: italic; }
    """

    def __init__(
        self,
        *,
        data_lock: AbstractContextManager[Any] | None = None,
        tz: tzinfo | None = None,
        **options: Unpack[WidgetOptions],
    ) -> None:
        """Args:
        data_lock: Held while the series are viewed (a worker thread may be writing them).
        tz: The time zone of wall-clock ticks (None: the local zone).
        """
        super().__init__(**options)
        self.data_lock = data_lock
        self.tz = tz
        self.tag = ""
        self.group = ""
        self.lines: tuple[ChartLine, ...] = ()
        self.options = ChartOptions()
        self._cache_key: object = None
        self._cached: list[Strip] | None = None
        self._text_cache: dict[object, list[Strip]] = {}
        self.builds = 0
        """How many times the drawing was built (tests check that a bare refresh reuses it)."""

    def show(self, tag: str, group: str, lines: Sequence[ChartLine], options: ChartOptions) -> None:
        """Draw ``lines`` of ``tag``; nothing happens when nothing changed since the last call.

        Args:
            tag: The tag, the chart's title.
            group: Its TensorBoard group (the part before the first ``/``), said beside it.
            lines: One per series of the tag, each with its data version.
            options: Smoothing, log y, x axis and zoom.
        """
        lines = tuple(lines)
        if (tag, group, lines, options) == (self.tag, self.group, self.lines, self.options):
            return
        self.tag, self.group, self.lines, self.options = tag, group, lines, options
        self.refresh()

    # -- drawing --------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        strips = self._strips()
        if y < len(strips):
            return strips[y]
        return Strip.blank(self.size.width, self.rich_style)

    def _strips(self) -> list[Strip]:
        """The drawing, built again only when what it shows changed."""
        width, height = self.size.width, self.size.height
        key = (
            width,
            height,
            self.tag,
            self.group,
            self.lines,
            self.options,
            self.app.theme,
            self.has_class("-current"),
        )
        if key != self._cache_key or self._cached is None:
            self._cached = self._build(width, height)
            self._cache_key = key
            self.builds += 1
        return self._cached

    def _build(self, width: int, height: int) -> list[Strip]:
        strips = self._text_strips(self._title(), width)
        dim = self._style("metric-chart--dim")
        if not self.lines:
            return strips + self._text_strips(Text("no points yet", dim), width)
        legend_rows = self.options.legend_rows or min(len(self.lines), LEGEND_MAX_LINES)
        plot_height = height - 1 - legend_rows
        with self.data_lock or nullcontext():
            if plot_height < MIN_PLOT_ROWS or width < 20:
                # Too small for a plot (a squeezed grid cell): the title and the figures.
                drawn = self._view_all(max(1, width))
                axes = None
            else:
                drawn = self._view_all(max(1, width - Y_LABEL_GUESS - 1))
                axes = self._axes(drawn, plot_height)
                if axes is not None and axes.label_width > Y_LABEL_GUESS:
                    drawn = self._view_all(max(1, width - axes.label_width - 1))
                    axes = self._axes(drawn, plot_height)
        if axes is not None:
            note = chart_note(drawn, axes, plot_height, self.options)
            if note:
                strips = self._text_strips(self._title(note), width)
            strips += self._draw_plot(drawn, axes, width, plot_height)
        elif plot_height >= MIN_PLOT_ROWS:
            strips += self._text_strips(Text("no finite values in range", dim), width)
        return strips + self._text_strips(self._legend(drawn, width), width)

    def _text_strips(self, text: Text, width: int) -> list[Strip]:
        """``text``'s lines, cut at ``width`` (an ellipsis where cut) on the widget's style.

        The title and the legend rarely change when an option does (the legend's figures are
        of the whole series): their strips are kept, keyed by what they show."""
        base = self.rich_style
        key = (width, base, text.plain, tuple(text.spans))
        cached = self._text_cache.get(key)
        if cached is not None:
            return list(cached)
        console = self.app.console
        options = console.options.update(width=width, height=None, no_wrap=True)
        lines = console.render_lines(text, options, style=base, pad=True)
        strips = [Strip(line, width) for line in lines]
        if len(self._text_cache) >= TEXT_CACHE_SIZE:
            self._text_cache.clear()
        self._text_cache[key] = strips
        return list(strips)  # the caller's to extend; the cached list stays as it is

    def _title(self, note: str = "") -> Text:
        """The tag, its group and sources; ``note`` (what the plot cannot say itself) right
        after the tag, where a narrow chart keeps it."""
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(self.tag or "(no tag)", self._style("metric-chart--title"))
        dim = self._style("metric-chart--dim")
        if note:
            text.append(f" · {note}", self._style("metric-chart--note"))
        if self.group and self.group != self.tag:
            text.append(f" · {self.group}", dim)
        sources = sorted({line.source for line in self.lines if line.source})
        if sources:
            text.append(f" · {', '.join(sources)}", dim)
        return text

    def _view_all(self, columns: int) -> list[_Drawn]:
        """Each line's view ``columns`` wide, with its marker and colours."""
        options = self.options
        theme = self.app.theme_variables
        background = Color.parse(theme.get("surface", "#000000"))
        out: list[_Drawn] = []
        normal = 0
        # A zoom to the last N steps is of the chart, not of each series: from the newest step
        # any of them reached (a run that stopped early, or a log curve counting epochs, would
        # otherwise keep its own last N steps and stretch the axis back to them).
        lasts = [s for s in (line.series.last_step for line in self.lines) if s is not None]
        cutoff = max(lasts) - options.last_steps if options.last_steps and lasts else None
        for line in self.lines:
            last_steps = options.last_steps
            if cutoff is not None:
                last_steps = max(0, (line.series.last_step or 0) - cutoff)
            view = line.series.view(
                x_axis=options.x_axis,
                last_steps=last_steps,
                columns=columns,
                smoothing=options.smoothing,
                log_y=options.log_y,
            )
            if line.role == "best":
                marker, color_name = BEST_MARKER, "success"
            else:
                # Every other curve, a tuning job's faint trials too, gets a marker of its own:
                # under NO_COLOR (or to a colour-blind eye) the marker is what tells them apart.
                marker = SERIES_MARKERS[normal % len(SERIES_MARKERS)]
                color_name = PALETTE[normal % len(PALETTE)]
                normal += 1
            color = Color.parse(theme.get(color_name, "#ffffff"))
            if line.role == "faint":
                color = color.blend(background, FAINT)
            raw = color.blend(background, FAINT)
            out.append(_Drawn(line, view, marker, color.rgb, raw.rgb))
        return out

    def _axes(self, drawn: Sequence[_Drawn], plot_height: int) -> _Axes | None:
        """The x and y ranges of what is drawn, and the y ticks; None when nothing is."""
        log_y = self.options.log_y
        xs = [end for d in drawn if d.view.x_range for end in d.view.x_range]
        xs = [x for x in xs if math.isfinite(x)]
        arrays = [a for d in drawn for a in (d.view.ys, d.view.smoothed) if len(a)]
        values = np.concatenate(arrays) if arrays else np.empty(0)
        values = values[np.isfinite(values)]
        if log_y:
            values = values[values > 0]
        if not xs:
            return None
        if not len(values):
            # Only NaN or inf in range (a run that blew up, zoomed in): the axis and its marks.
            marks = any(len(d.view.nonfinite_xs) for d in drawn)
            return (
                _Axes(min(xs), max(xs) + (min(xs) == max(xs)), 1.0, 10.0, [], []) if marks else None
            )
        low, high = float(values.min()), float(values.max())
        if low == high:  # a flat curve: a band around it, so it is drawn mid-height
            pad = abs(low) * 0.1 or 1.0
            low, high = (low / 2, high * 2) if log_y else (low - pad, high + pad)
        most = max(2, (plot_height - 2) // 3)
        ticks, labels = y_ticks(low, high, most, log_y)
        if not log_y and len(ticks) >= 2:
            # Out to the ticks around the data: the top and bottom rows get a labelled value.
            step = ticks[1] - ticks[0]
            low = ticks[0] - step if ticks[0] > low else ticks[0]
            high = ticks[-1] + step if ticks[-1] < high else ticks[-1]
            ticks, labels = y_ticks(low, high, most + 2, False)
        x_low, x_high = min(xs), max(xs)
        if x_low == x_high:
            x_low, x_high = x_low - 1, x_high + 1
        return _Axes(x_low, x_high, low, high, ticks, labels)

    def _draw_plot(
        self, drawn: Sequence[_Drawn], axes: _Axes, width: int, plot_height: int
    ) -> list[Strip]:
        plt = self.plt
        # Only the data goes: every setting below is made again on each build (a new figure
        # costs more than a chart's cells).
        plt.clear_data()
        plt.plotsize(width, plot_height)
        plt._set_size(width, plot_height)  # textual-plotext does both: its issue 5
        theme = self.app.theme_variables
        # No background of plotext's own: the widget's shows through.
        plt.canvas_color("default")
        plt.axes_color("default")
        plt.ticks_color(Color.parse(theme.get("text-muted", "#888888")).rgb)
        plt.xaxes(True, False)
        plt.yaxes(True, False)
        log_y = self.options.log_y
        plt.yscale("log" if log_y else "linear")
        # plotext takes a log axis's data and ticks as they are and takes their log itself, but
        # not its limits: those it wants as logs.
        y_low, y_high = axes.y_low, axes.y_high
        plt.ylim(*((math.log10(y_low), math.log10(y_high)) if log_y else (y_low, y_high)))
        plt.xlim(axes.x_low, axes.x_high)
        label_w = axes.label_width
        columns = max(1, width - label_w - 1)
        xticks, xlabels = x_ticks(
            self.options.x_axis, axes.x_low, axes.x_high, max(2, columns // X_LABEL_CELLS), self.tz
        )
        plt.xticks(xticks, xlabels)
        plt.yticks(axes.y_ticks, [label.rjust(label_w) for label in axes.y_labels])
        smoothing = self.options.smoothing > 0
        # Faint first, the best last: what is drawn later covers what is under it.
        order = {"faint": 0, "normal": 1, "best": 2}
        for d in sorted(drawn, key=lambda d: order[d.line.role]):
            view = d.view
            # Hypertune reports have no wall time: on a time axis they have no place.
            keep = np.isfinite(view.xs)
            xs = view.xs[keep].tolist()
            if not xs:
                continue
            if smoothing and d.line.role != "faint":
                plt.scatter(xs, view.ys[keep].tolist(), marker=RAW_MARKER, color=d.raw_color)
            if smoothing:
                # A view has two points a column (a bucket's extremes): the raw curve needs
                # both, the smoothed one barely moves within a column, so every other point and
                # the last draw the same line at half of plotext's cost.
                picked = np.flatnonzero(keep)
                picked = np.union1d(picked[::2], picked[-1:])
                xs, ys = view.xs[picked].tolist(), view.smoothed[picked].tolist()
            else:
                ys = view.ys[keep].tolist()
            plt.plot(xs, ys, marker=d.marker, color=d.color)
        for d in drawn:
            # Each run's NaN and inf marks in its own colour, and its legend line says from
            # which step: whose they are reads either way.
            marks = [x for x in d.view.nonfinite_xs.tolist() if axes.x_low <= x <= axes.x_high]
            if marks:
                plt.scatter(marks, [y_low] * len(marks), marker=NONFINITE_MARKER, color=d.color)
        for d in drawn:
            # A restart: plotext draws its vertical line under the curves (faint, so they stay
            # readable across it) and the ↻ on top, in the run's colour like its × marks.
            resumes = [x for x in d.view.resume_xs.tolist() if axes.x_low <= x <= axes.x_high]
            for x in resumes:
                plt.vline(x, color=d.raw_color)
            if resumes:
                plt.scatter(resumes, [y_high] * len(resumes), marker=RESUME_MARKER, color=d.color)
        return self._matrix_strips(width)

    def _matrix_strips(self, width: int) -> list[Strip]:
        return matrix_strips(self.plt, width, self.rich_style)

    def _legend(self, drawn: Sequence[_Drawn], width: int) -> Text:
        """One line per series, the best first: marker, name, and its figures."""
        text = Text(no_wrap=True, overflow="ellipsis")
        shown = sorted(drawn, key=lambda d: d.line.role != "best")
        if len(shown) > LEGEND_MAX_LINES:
            shown = shown[: LEGEND_MAX_LINES - 1]
        mixed = len({d.line.source for d in drawn}) > 1
        labels = [
            d.line.label + (f" ({d.line.source})" if mixed and d.line.source else "") for d in shown
        ]
        label_w = min(max(map(len, labels), default=0), max(8, width // 3))
        dim = self._style("metric-chart--dim")
        for i, (d, label) in enumerate(zip(shown, labels, strict=True)):
            if i:
                text.append("\n")
            text.append(f"{MARKER_GLYPHS.get(d.marker, d.marker)} ", Color(*d.color).hex)
            best = d.line.role == "best"
            text.append(label.ljust(label_w), self._style("metric-chart--best") if best else "")
            text.append("  " + _figures(d.view, d.line), dim)
        hidden = len(drawn) - len(shown)
        if hidden > 0:
            text.append(f"\n+ {hidden} more", dim)
        return text

    def _style(self, component: str) -> str:
        return str(self.get_component_rich_style(component, partial=True))


def matrix_strips(figure: Any, width: int, base: Style) -> list[Strip]:
    """plotext's cells as strips, top row first, on ``base``: what ``figure.build()`` would
    write as ANSI text, without writing it and parsing it back (see the module docstring).
    ``tests/unit/test_metric_chart_cells.py`` holds the two equal, so a plotext whose cells
    change fails there, not on screen.

    Args:
        figure: A plotext figure, its data and settings given (its private members are used:
            they are not in textual-plotext's type stubs).
        width: The strips' width in cells.
        base: The widget's style, under each cell's own.
    """
    figure._set_sizes()
    figure._build_matrix()
    matrix = figure.monitor.matrix
    strips: list[Strip] = []
    for row in range(matrix.rows - 1, -1, -1):
        colours = (matrix.fullground[row], matrix.style[row], matrix.background[row])
        cells = zip(matrix.marker[row], zip(*colours, strict=True), strict=True)
        segments = [
            Segment("".join(marker for marker, _ in run), base + cell_style(*key))
            for key, run in groupby(cells, key=itemgetter(1))
        ]
        strips.append(Strip(segments).crop_extend(0, width, base))
    return strips


def cell_style(foreground: object, style: object, background: object) -> Style:
    """The Rich style of a plotext cell: plotext's own ANSI codes for it, read by Rich (so the
    cell looks as ``plt.build()`` would print it). A chart has a handful of distinct cells."""
    key = tuple(tuple(v) if isinstance(v, list) else v for v in (foreground, style, background))
    return _cell_style(*key)


@lru_cache(maxsize=256)
def _cell_style(foreground: object, style: object, background: object) -> Style:
    codes = plotext_utility.colors_to_ansi(foreground, style, background)
    text = Text.from_ansi(f"{codes}x")
    return text.spans[0].style if text.spans else Style()  # type: ignore[return-value]


def _figures(view: SeriesView, line: ChartLine | None = None) -> str:
    """``last 0.082  2 NaN  min 0.071  max 1.04``: of the whole series, not only the zoomed
    part (a legend that changed with the zoom would hide a blow-up outside it). The last value
    and the non-finite counts first: in a narrow chart they are what must not be cut. A run
    with no finite value says so instead of ``last inf``; its NaN and inf say from which step
    (whose ``×`` marks they are), and an event file's inf that it is past float32's range
    (TensorBoard summaries are float32: a loss of 1e39 is written as inf)."""
    stats = view.stats
    parts: list[str] = []
    if stats.count == 0 and stats.nonfinite_count:
        parts.append("no finite value")
    elif stats.last is not None:
        parts.append(f"last {format_value(stats.last)}")
    if stats.nan_count:
        parts.append(f"{stats.nan_count} NaN")
    if stats.inf_count:
        past = " past float32" if line is not None and line.source == "events" else ""
        parts.append(f"{stats.inf_count} inf{past}")
    if stats.nonfinite_count and line is not None:
        steps, _, _ = line.series.nonfinite_marks()
        if len(steps):
            parts.append(f"× from step {format_step(int(steps[0]))}")
    if line is not None and line.series.resumes:
        parts.append(resume_figure(line.series))
    if stats.minimum is not None and stats.maximum is not None:
        parts.append(f"min {format_value(stats.minimum)}")
        parts.append(f"max {format_value(stats.maximum)}")
    if view.hidden_nonpositive:
        parts.append(f"{view.hidden_nonpositive} ≤0 hidden")
    return "  ".join(parts) or "no values"


def resume_figure(series: Series) -> str:
    """``↻ resumed at step 500``, or ``↻ resumed 3×, last at step 500`` (``32+×`` when older
    ones were let go): the legend's word for the vertical lines, of the whole series like its
    other figures. The newest is the one named: it is where the curve now goes on from."""
    resumes = series.resumes
    at = f"step {format_step(resumes[-1].step)}"
    if len(resumes) == 1 and not series.resumes_dropped:
        return f"{RESUME_MARKER} resumed at {at}"
    more = "+" if series.resumes_dropped else ""
    return f"{RESUME_MARKER} resumed {len(resumes)}{more}×, last at {at}"


COLLAPSE_SHARE = 0.08
"""A curve whose values all lie in this bottom share of the y axis reads as a flat line."""


def chart_note(
    drawn: Sequence[_Drawn], axes: _Axes, plot_height: int, options: ChartOptions
) -> str:
    """What the plot cannot say itself, for the chart's title: that only NaN or inf lie in the
    zoomed range (an axis with marks and no curve), or that on a linear axis two or more
    curves are squeezed flat at the bottom by a larger one, where ``L`` (log y) tells them
    apart (only when every value is positive, so a log axis can show them all)."""
    if not axes.y_ticks:
        return "only NaN/inf in view" + (": Z shows every step" if options.last_steps else "")
    if options.log_y or len(drawn) < 2:
        return ""
    span = axes.y_high - axes.y_low
    if span <= 0:
        return ""
    squeezed = 0
    lowest = math.inf
    for d in drawn:
        ys = d.view.smoothed if options.smoothing > 0 and len(d.view.smoothed) else d.view.ys
        finite = ys[np.isfinite(ys)]
        if not len(finite):
            continue
        lowest = min(lowest, float(finite.min()))
        if float(finite.max()) - axes.y_low <= span * COLLAPSE_SHARE:
            squeezed += 1
    if squeezed >= 2 and lowest > 0:
        return "squeezed: L for log y"
    return ""
