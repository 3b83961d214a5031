"""A Footer that shows the keys that matter first, as many as fit, and ``? Help`` at the end.

Textual's Footer lists every shown binding in one row, in binding order, and cuts what does not
fit: at 80 columns the job list lost everything after ``l Logs``, and the logs screen everything
after ``w Wrap`` (``/`` search, ``e`` first error, ``f`` fullscreen and ``? Help`` with it), so
nothing on screen said how to find the rest. This footer

- puts the actions a screen names in ``first`` before the others, in that order;
- shows as many keys as fit in the width, most useful first, and always ``? Help`` last (the
  help screen and the palette list every key, so the one key that leads to them must show);
- puts the actions a screen names as ``secondary`` after all others, so they are the first
  to give way to the width (they are still shown where there is room: at 120 columns the list
  has room for a dozen keys, and leaving them out left most of the row empty);
- below ``NARROW_WIDTH`` columns, is compact;
- shows the keys of one ``Binding.Group`` (``[`` and ``]``) as one item, ``[ ] Replica``.

What fits is counted from the keys' text and ``FooterKey``'s padding and margins (``_cells``);
tests/pilot/test_key_footer.py lays the footer out for real and checks the count against it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Unpack

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.binding import ActiveBinding, Binding
from textual.widgets import Footer

# FooterKey is not exported by Textual; the footer builds its own to choose their order.
from textual.widgets._footer import FooterKey

from tui_app.widgets.widget_options import WidgetOptions

NARROW_WIDTH = 140
"""The job list's full footer needs ~135 columns: narrower, the keys go compact."""
HELP_ACTIONS = frozenset({"help"})
"""The App's ``?``: shown last on every screen, whatever the width."""


@dataclass
class _Item:
    """One key in the footer: a binding, or the bindings of one group shown together."""

    key: str
    """What a click on the item presses (the first binding's key)."""
    display: str
    description: str
    action: str
    enabled: bool
    tooltip: str
    names: set[str] = field(default_factory=set)
    """The actions and binding ids the item stands for (what ``first``/``secondary`` name)."""


class KeyFooter(Footer):
    """``Footer`` with the most useful keys first and ``? Help`` always shown (module doc)."""

    def __init__(
        self,
        first: Iterable[str] = (),
        secondary: Iterable[str] = (),
        *,
        compact: bool = False,
        **options: Unpack[WidgetOptions],
    ) -> None:
        """Args:
        first: Action names or binding ids, most useful first: shown before the rest, and
            kept when the row is too narrow for every key.
        secondary: Action names or binding ids shown after all others (the first to go).
        compact: Compact at every width (below ``NARROW_WIDTH`` it always is).
        """
        super().__init__(compact=compact, **options)
        self.always_compact = compact
        self.first = tuple(first)
        self.secondary = frozenset(secondary)
        self._narrow: bool | None = None
        self._width = 0
        """The width the keys were last chosen for."""
        self._composed: tuple[object, ...] | None = None
        """``_plan``'s key when the keys on show were composed (None: nothing composed yet)."""

    def _plan(self) -> tuple[list[_Item], ActiveBinding | None]:
        """The keys to show, in order, and the palette's binding (None: not shown)."""
        active = self.screen.active_bindings
        items = self._ordered(list(self._items(active)))
        palette = None
        if self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE:
            palette = active.get(self.app.COMMAND_PALETTE_BINDING)
        if self._width:
            room = self._width - (self._palette_cells(palette.binding) if palette else 0)
            items = self._fit(items, room)
        return items, palette

    def _plan_key(self, items: list[_Item], palette: ActiveBinding | None) -> tuple[object, ...]:
        shown = tuple(
            (i.key, i.display, i.description, i.action, i.enabled, i.tooltip) for i in items
        )
        return (shown, palette, self.compact)

    async def recompose(self) -> None:
        """Compose the keys again, unless they would be the same as those on show.

        Textual's Footer recomposes on every change of the screen's bindings, which a focus
        change or a binding's check makes: the job list's start did it seven times, each one
        removing and mounting a dozen keys (about 60 ms of the start, for the same keys).
        """
        ready = self._bindings_ready and self._composed is not None and self.is_attached
        if ready and self._plan_key(*self._plan()) == self._composed:
            return
        await super().recompose()

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        if not self._width:
            # Not laid out yet: take the terminal's width, which a footer spans, so that the
            # first Resize finds the keys already chosen for it (a narrower footer's Resize
            # chooses again).
            self._set_width(self.app.size.width)
        items, palette = self._plan()
        self._composed = self._plan_key(items, palette)
        for item in items:
            yield FooterKey(
                item.key,
                item.display,
                item.description,
                item.action,
                disabled=not item.enabled,
                tooltip=item.tooltip,
            ).data_bind(compact=Footer.compact)
        if palette is not None:
            yield FooterKey(
                palette.binding.key,
                self.app.get_key_display(palette.binding),
                palette.binding.description,
                palette.binding.action,
                classes="-command-palette",
                disabled=not palette.enabled,
                tooltip=palette.binding.tooltip or palette.binding.description,
            )

    def _items(self, active: dict[str, ActiveBinding]) -> Iterator[_Item]:
        """The shown bindings, one item per action (its first key), groups merged."""
        by_action: dict[str, _Item] = {}
        by_group: dict[int, _Item] = {}
        for _, binding, enabled, tooltip in active.values():
            if not binding.show:
                continue
            names = {binding.action, *([binding.id] if binding.id else [])}
            if binding.action in by_action:
                by_action[binding.action].names |= names
                continue
            group = binding.group
            if group is not None and id(group) in by_group:
                item = by_group[id(group)]
                item.display += " " + self.app.get_key_display(binding)
                item.names |= names
                item.enabled = item.enabled or enabled
                by_action[binding.action] = item
                continue
            item = _Item(
                binding.key,
                self.app.get_key_display(binding),
                group.description if group is not None else binding.description,
                binding.action,
                enabled,
                tooltip or (binding.description if group is not None else ""),
                names,
            )
            by_action[binding.action] = item
            if group is not None:
                by_group[id(group)] = item
            yield item

    def _ordered(self, items: list[_Item]) -> list[_Item]:
        """``first`` in its order, then the rest in binding order, then ``secondary``, help
        last: what does not fit goes from the end, so the secondary keys go first."""

        def rank(item: _Item) -> tuple[int, int]:
            if _is_help(item):
                return (3, 0)
            ranks = [i for i, name in enumerate(self.first) if name in item.names]
            if ranks:
                return (0, min(ranks))
            return (2, 0) if not item.names.isdisjoint(self.secondary) else (1, 0)

        return sorted(items, key=rank)  # stable: the unranked keep their binding order

    def _fit(self, items: list[_Item], room: int) -> list[_Item]:
        """The longest run of items, from the first, that fits in ``room`` beside help."""
        helps = [i for i in items if _is_help(i)]
        left = room - sum(self._cells(i) for i in helps)
        shown: list[_Item] = []
        for item in items:
            if _is_help(item):
                continue
            left -= self._cells(item)
            if left < 0:
                break
            shown.append(item)
        return shown + helps

    def _cells(self, item: _Item) -> int:
        """Columns an item takes, with FooterKey's padding and margin (Textual's CSS)."""
        text = cell_len(item.display)
        if item.description:
            text += 1 + cell_len(item.description)  # the padding between key and words
        # compact: margin-right 1; wide: the key padded "0 1", the description "0 1 0 0".
        return text + 1 if self.compact else text + 2

    def _palette_cells(self, binding: Binding) -> int:
        """The palette key, docked right: its border, its text, and padding or margin."""
        text = cell_len(self.app.get_key_display(binding)) + 1 + cell_len(binding.description)
        return 1 + text + 1

    def on_resize(self, event: events.Resize) -> None:
        if event.size.width == self._width:
            return
        self._set_width(event.size.width)
        self.call_after_refresh(self.recompose)

    def _set_width(self, width: int) -> None:
        self._width = width
        narrow = width < NARROW_WIDTH
        if narrow != self._narrow:
            self._narrow = narrow
            self.compact = narrow or self.always_compact


def _is_help(item: _Item) -> bool:
    return not item.names.isdisjoint(HELP_ACTIONS)
