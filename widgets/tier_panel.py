"""TierPanel: what a scale tier (or a CUSTOM cluster) runs, by role, with totals.

It draws a ``TierSummary`` (``model.builder.tier_summary``): one row per replica group with its
machine type, vCPUs, memory, GPUs or TPU cores and ML units per hour, then the cluster's totals.
"""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from tui_app.model.builder.tier_summary import SummaryRow, TierSummary

DASH = "–"


def _gpus(row: SummaryRow) -> str:
    if row.tpu_cores:
        # Google's own name for a TPU slice: version and cores, "v2-8".
        version = row.accelerator.removeprefix("TPU ").removesuffix(" Pod") or "TPU"
        return f"{version}-{row.tpu_cores}"
    if row.gpus:
        return f"{row.gpus}× {row.accelerator}" if row.accelerator else str(row.gpus)
    return DASH


def _units(value: float | None) -> str:
    return DASH if value is None else f"{value:.4f}"


def _vcpus(row: SummaryRow) -> str:
    return str(row.vcpus) if row.vcpus else DASH


def _memory(row: SummaryRow) -> str:
    return f"{row.memory_gb:g} GB" if row.memory_gb else DASH


class TierPanel(Widget):
    """The explanation under the scale-tier choice; set ``summary`` to redraw it."""

    DEFAULT_CSS = """
    TierPanel {
        height: auto;
        padding: 0 1;
        background: $boost;
    }
    TierPanel > .tier-panel--title { text-style: bold; color: $accent; }
    TierPanel > .tier-panel--dim { color: $text-muted; }
    TierPanel > .tier-panel--total { text-style: bold; }
    TierPanel > .tier-panel--note { color: $text-warning; }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "tier-panel--title",
        "tier-panel--dim",
        "tier-panel--total",
        "tier-panel--note",
    }

    summary: reactive[TierSummary | None] = reactive(None, layout=True)
    """The cluster to explain (None draws nothing)."""

    def render(self) -> RenderableType:
        summary = self.summary
        if summary is None:
            return Text("")
        title = self.get_component_rich_style("tier-panel--title")
        dim = self.get_component_rich_style("tier-panel--dim")
        total = self.get_component_rich_style("tier-panel--total")
        note = self.get_component_rich_style("tier-panel--note")
        head = Text.assemble((summary.tier, title), "  ", (summary.description, dim))
        parts: list[RenderableType] = [head]
        if summary.rows:
            table = Table(box=None, pad_edge=False, padding=(0, 1), expand=False, header_style=dim)
            table.add_column("Role", no_wrap=True)
            table.add_column("×", justify="right", no_wrap=True)
            table.add_column("Machine", no_wrap=True, overflow="ellipsis")
            table.add_column("vCPU", justify="right", no_wrap=True)
            table.add_column("Mem", justify="right", no_wrap=True)
            table.add_column("Accel", no_wrap=True)
            table.add_column("ML u/h", justify="right", no_wrap=True)
            for row in summary.rows:
                table.add_row(
                    row.role,
                    str(row.count),
                    row.machine_type,
                    _vcpus(row),
                    _memory(row),
                    _gpus(row),
                    _units(row.ml_units_per_hour),
                )
            accel = []
            if summary.gpus:
                accel.append(f"{summary.gpus} GPU")
            if summary.tpu_cores:
                accel.append(f"{summary.tpu_cores} TPU c.")
            table.add_row(
                Text("total", total),
                Text(str(summary.replicas), total),
                Text(f"{summary.replicas} replica{'s' if summary.replicas != 1 else ''}", dim),
                Text(str(summary.vcpus or DASH), total),
                Text(f"{summary.memory_gb:g} GB" if summary.memory_gb else DASH, total),
                Text(", ".join(accel) or DASH, total),
                Text(_units(summary.ml_units_per_hour), total),
            )
            parts.append(table)
        for line in summary.notes:
            parts.append(Text(f"! {line}", note))
        return Group(*parts)
