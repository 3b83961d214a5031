"""One header line: where we are connected, which project, how many jobs per state."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from tui_app.model.jobs.states import STATE_ORDER, STATE_SYMBOL, JobState


class StatusHeader(Widget):
    """``tui-app │ local (127.0.0.1:8470) │ project │ ▶2 running ✓5 succeeded │ 17:40:12``
    (``│ listing…`` after the counts while the first list of a large store comes in)."""

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
    listing: reactive[bool] = reactive(False)
    """The first list is still coming in: the counts are of the jobs read so far."""

    def render(self) -> Text:
        """The fullest line that fits; narrower, the less useful parts shorten first.

        In order: the other states' counts lose their words (``▶1 ✓5``: the symbols and
        colours say as much), the clock goes, then the endpoint (the profile keeps its name),
        the project, then the title. The failed count keeps its word (``✗3 failed``) to the
        last: it is what triage looks for. The endpoint says which service this is, so it
        outlasts words the symbols already carry.
        """
        width = max(self.size.width, 1)
        text = Text()
        for clock, short_label, short_counts, project, title in (
            (True, False, False, True, True),
            (True, False, True, True, True),
            (False, False, True, True, True),
            (False, True, True, True, True),
            (False, True, True, False, True),
            (False, True, True, False, False),
        ):
            text = self._line(width, clock, short_label, short_counts, project, title)
            if text.cell_len <= width:
                break
        text.truncate(width, overflow="ellipsis")
        return text

    def _line(
        self,
        width: int,
        clock: bool,
        short_label: bool,
        short_counts: bool,
        project: bool,
        title: bool,
    ) -> Text:
        title_style = self.get_component_rich_style("status-header--title")
        dim = self.get_component_rich_style("status-header--dim")
        down = self.get_component_rich_style("status-header--down")
        bar = (" │ ", dim)
        label = self.profile or "connecting…"
        if short_label:
            label = label.split(" (", 1)[0]  # "local (127.0.0.1:8470)" -> "local"
        parts: list[Text] = []
        if title:
            parts.append(Text("tui-app", title_style))
        parts.append(Text(label))
        if project and self.project:
            parts.append(Text(self.project))
        if not self.connected:
            parts.append(Text("DISCONNECTED", down))
        counts = [(s, self.counts.get(s, 0)) for s in STATE_ORDER if self.counts.get(s)]
        if counts:
            parts.append(
                Text(
                    "  ".join(
                        f"{STATE_SYMBOL[s]}{n} {s.value.lower()}"
                        if not short_counts or s is JobState.FAILED
                        else f"{STATE_SYMBOL[s]}{n}"
                        for s, n in counts
                    )
                )
            )
        if self.listing:
            parts.append(Text("listing…", dim))
        text = Text(" ")
        for i, part in enumerate(parts):
            if i:
                text.append(*bar)
            text.append_text(part)
        if self.refreshed is not None and clock:
            stamp = self.refreshed.strftime("%H:%M:%S")
            pad = width - text.cell_len - len(stamp) - 1
            if pad < 2:
                text.append(" " * (width + 1))  # too long: the next, shorter line is tried
            else:
                text.append(" " * pad)
                text.append(stamp, dim)
        return text
