"""ReplicaUsage: per-replica CPU and memory sparklines with current and peak figures.

Like the Console's utilisation charts, every replica on one time axis (the job's first sample to
its latest), every chart from zero. CPU has one scale for all replicas (up to the highest peak,
at least one core), so a hot worker stands out from an idle parameter server at a glance; memory
is scaled per replica (up to its own peak), so a slow leak shows in a small replica next to a big
one, and the figures carry the sizes::

    master-replica-0    CPU ▂▅▇█▇▇██▇▇█▇█  97% (peak 180%)
                        RSS ▁▂▃▄▄▄▅▅▅▅▅▅▅  212 MiB (peak 240 MiB)

A replica on another node (the local service's Ray executor) has that node's address under its
name, dim; one on the service's own machine shows its name alone::

    worker-replica-0    CPU ▂▅▇█▇▇██▇▇█▇█  97% (peak 180%)
    127.0.0.3           RSS ▁▂▃▄▄▄▅▅▅▅▅▅▅  212 MiB (peak 240 MiB)

Feed it with ``show`` (samples from ``tui_app.api.metrics_client``); it never fetches anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Unpack

from textual.app import ComposeResult, RenderResult
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Sparkline, Static

from tui_app.model.views.replica_usage import ReplicaSamples
from tui_app.widgets.widget_options import WidgetOptions

ONE_CORE = 100.0
"""The CPU scale never goes below one busy core: idle replicas stay flat, not noisy."""


def columns(
    points: Sequence[tuple[float, float]], start: float, end: float, width: int
) -> list[float]:
    """``points`` (time, value) as ``width`` values, one per equal slice of ``[start, end]``.

    A slice holding several points shows their highest; a slice between two points repeats the
    earlier one (samples are sparser than columns early in a job); slices before the replica's
    first point or after its last are 0.
    """
    if width <= 0:
        return []
    if not points:
        return [0.0] * width
    span = end - start
    if span <= 0:
        return [max(v for _, v in points)] * width
    cols: list[float | None] = [None] * width
    for t, v in points:
        i = min(width - 1, max(0, int((t - start) / span * width)))
        have = cols[i]
        cols[i] = v if have is None else max(have, v)
    filled = [i for i, c in enumerate(cols) if c is not None]
    first, last = filled[0], filled[-1]
    out: list[float] = []
    held = 0.0
    for i, c in enumerate(cols):
        if c is not None:
            held = c
        out.append(held if first <= i <= last else 0.0)
    return out


def _value_of_pair(pair: Sequence[float]) -> float:
    return pair[-1]


def scaled(values: Sequence[float], ceiling: float) -> list[float]:
    """Data for ``Sparkline`` that draws ``values`` one per column on the scale 0..``ceiling``.

    Sparkline scales each chart from its own minimum to its maximum and splits its data evenly
    into one bucket per column. Each column gets a pair (scale marker, value) and the summary
    takes the value: the markers (``ceiling`` once, 0 elsewhere) pin the scale without being drawn.
    """
    top = max(ceiling, *values) if values else ceiling
    data: list[float] = []
    for i, v in enumerate(values):
        data += [top if i == 0 else 0.0, v]
    return data


class UsageSparkline(Sparkline):
    """A Sparkline of a time series over a fixed window and a fixed scale (see ``scaled``)."""

    def __init__(self, **options: Unpack[WidgetOptions]) -> None:
        super().__init__([], summary_function=_value_of_pair, **options)
        self._points: list[tuple[float, float]] = []
        self._window = (0.0, 0.0)
        self._ceiling = 0.0

    def show(
        self, points: list[tuple[float, float]], start: float, end: float, ceiling: float
    ) -> None:
        """Draw ``points`` (epoch seconds, value) between ``start`` and ``end``."""
        self._points, self._window, self._ceiling = points, (start, end), ceiling
        self.refresh()

    def render(self) -> RenderResult:
        # The columns depend on the width, known only now; set without a watcher or a refresh.
        values = columns(self._points, *self._window, self.size.width)
        self.set_reactive(Sparkline.data, scaled(values, self._ceiling))
        return super().render()


def format_bytes(n: int) -> str:
    """``212 MiB``, ``1.4 GiB``, ``900 KiB``: binary units, two or three significant digits."""
    value = float(max(0, n))
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            break
        value /= 1024
    if unit == "B":
        return f"{int(value)} B"
    return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"


def format_cpu(percent: float) -> str:
    return f"{percent:.0f}%"


class ReplicaUsageRow(Widget):
    """One replica: its name, a CPU line and an RSS line, each a sparkline and its figures."""

    DEFAULT_CSS = """
    ReplicaUsageRow {
        layout: grid;
        grid-size: 4 2;
        grid-columns: 20 4 1fr 26;
        height: 2;
    }
    ReplicaUsageRow > .replica-usage--name {
        row-span: 2;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        color: $text;
        text-style: bold;
    }
    ReplicaUsageRow > .replica-usage--metric { color: $text-muted; }
    ReplicaUsageRow > .replica-usage--figures {
        padding-left: 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    ReplicaUsageRow > UsageSparkline.-memory > .sparkline--max-color { color: $accent; }
    ReplicaUsageRow > UsageSparkline.-memory > .sparkline--min-color { color: $accent 30%; }
    """

    def __init__(self, task_name: str) -> None:
        super().__init__(classes="replica-usage-row")
        self.task_name = task_name
        self.cpu = UsageSparkline(classes="-cpu")
        self.memory = UsageSparkline(classes="-memory")
        self.cpu_figures = Static("", classes="replica-usage--figures")
        self.memory_figures = Static("", classes="replica-usage--figures")
        self.name_label = Static(self.task_name, classes="replica-usage--name", markup=False)
        self.node_address: str | None = None
        """The address of the node it runs on, shown under its name; None on the service's
        own machine (the name alone, as before nodes existed)."""

    def compose(self) -> ComposeResult:
        yield self.name_label
        yield Static("CPU", classes="replica-usage--metric")
        yield self.cpu
        yield self.cpu_figures
        yield Static("RSS", classes="replica-usage--metric")
        yield self.memory
        yield self.memory_figures

    def show(
        self,
        replica: ReplicaSamples,
        start: float,
        end: float,
        cpu_ceiling: float,
    ) -> None:
        """Draw ``replica``'s samples on the shared window and CPU scale."""
        self._show_node(replica.node.brief if replica.node else None)
        samples = replica.samples
        times = [s.time.timestamp() for s in samples]
        self.cpu.show(
            [(t, s.cpu_percent) for t, s in zip(times, samples, strict=True)],
            start,
            end,
            cpu_ceiling,
        )
        self.memory.show(
            [(t, float(s.memory_bytes)) for t, s in zip(times, samples, strict=True)],
            start,
            end,
            float(replica.memory_peak),
        )
        if samples:
            last = samples[-1]
            self.cpu_figures.update(
                f"{format_cpu(last.cpu_percent)} (peak {format_cpu(replica.cpu_peak)})"
            )
            self.memory_figures.update(
                f"{format_bytes(last.memory_bytes)} (peak {format_bytes(replica.memory_peak)})"
            )
        else:
            self.cpu_figures.update("no samples yet")
            self.memory_figures.update("")

    def _show_node(self, address: str | None) -> None:
        """The name, and under it (the cell spans both lines) the node's address, dim: a style
        of the text rather than a widget of its own, so a replica without one draws as it did."""
        if address == self.node_address:
            return
        self.node_address = address
        if address is None:
            self.name_label.update(Content(self.task_name))
        else:
            self.name_label.update(
                Content.assemble(self.task_name, "\n", (address, "not bold dim"))
            )


class ReplicaUsage(Widget):
    """The "Resource usage" section: a title, a caption and one ``ReplicaUsageRow`` per replica."""

    DEFAULT_CSS = """
    ReplicaUsage {
        height: auto;
    }
    ReplicaUsage > .replica-usage--title {
        text-style: bold underline;
    }
    ReplicaUsage > .replica-usage--caption {
        color: $text-muted;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    def __init__(self, **options: Unpack[WidgetOptions]) -> None:
        super().__init__(**options)
        self._rows: dict[str, ReplicaUsageRow] = {}
        self.caption = Static("", classes="replica-usage--caption")
        self.replicas: list[ReplicaSamples] = []
        """What the rows show now."""

    def compose(self) -> ComposeResult:
        yield Static("Resource usage", classes="replica-usage--title")
        yield self.caption

    def rows(self) -> list[ReplicaUsageRow]:
        """The rows, in the replicas' order."""
        return list(self._rows.values())

    def show(
        self,
        replicas: Sequence[ReplicaSamples],
        interval: float | None = None,
        measured: str = "Whole process tree per replica",
    ) -> None:
        """Draw ``replicas`` (the service's order); rows come and go with their replicas.
        ``measured`` says what a figure covers (a container job's come from the engine)."""
        self.replicas = list(replicas)
        stamps = [s.time.timestamp() for r in replicas for s in r.samples]
        start, end = (min(stamps), max(stamps)) if stamps else (0.0, 0.0)
        cpu_ceiling = max([ONE_CORE, *(r.cpu_peak for r in replicas)])
        every = f" every {interval:g} s" if interval else ""
        self.caption.update(f"{measured} · CPU in % of one core · sampled{every}")
        order = [r.task_name for r in replicas]
        if list(self._rows) != order:  # rare: every replica normally arrives in the first read
            for row in self._rows.values():
                row.remove()
            self._rows = {name: ReplicaUsageRow(name) for name in order}
            self.mount_all(self._rows.values())
        for rep in replicas:
            self._rows[rep.task_name].show(rep, start, end, cpu_ceiling)
