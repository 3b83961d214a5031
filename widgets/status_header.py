"""One header line: where we are connected, which project, how many jobs per state."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from tui_app.model.states import STATE_ORDER, STATE_SYMBOL, JobState


class StatusHeader(Widget):
    """``tui-app │ local (127.0.0.1:8470) │ project │ ▶2 running ✓5 succeeded │ 17:40:12``."""

    DEFAULT_CSS = """
    StatusHeader {
        height: 1;
        background: $panel;
        color: $foreground;
    }
    StatusHeader > .status-header--title { text-style: bold; color: $accent; }
    StatusHeader > .status-header--dim { color: $text-muted; }
    StatusHeader > .status-header--down { color: $text-error; text-style: bold; }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "status-header--title",
        "status-header--dim",
        "status-header--down",
    }

    profile: reactive[str] = reactive("")
    """The connection's label (profile and endpoint)."""
    project: reactive[str] = reactive("")
    counts: reactive[dict[JobState, int]] = reactive(dict, always_update=True)
    """Jobs per state in the last list."""
    refreshed: reactive[datetime | None] = reactive(None)
    """When the last list arrived."""
    connected: reactive[bool] = reactive(True)

    def render(self) -> Text:
        title = self.get_component_rich_style("status-header--title")
        dim = self.get_component_rich_style("status-header--dim")
        down = self.get_component_rich_style("status-header--down")
        bar = (" │ ", dim)
        text = Text.assemble((" tui-app", title), bar, self.profile or "connecting…", bar)
        text.append(self.project)
        if not self.connected:
            text.append_text(Text.assemble(bar, ("DISCONNECTED", down)))
        counts = [(s, self.counts.get(s, 0)) for s in STATE_ORDER if self.counts.get(s)]
        if counts:
            text.append(" │ ", dim)
            text.append("  ".join(f"{STATE_SYMBOL[s]}{n} {s.value.lower()}" for s, n in counts))
        if self.refreshed is not None:
            stamp = self.refreshed.strftime("%H:%M:%S")
            pad = self.size.width - text.cell_len - len(stamp) - 1
            if pad >= 2:
                text.append(" " * pad)
                text.append(stamp, dim)
        text.truncate(max(self.size.width, 1), overflow="ellipsis")
        return text
