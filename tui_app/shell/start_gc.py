"""The cyclic garbage collector, held off while the TUI opens.

Opening the TUI imports some 200 ms of modules (Textual's most of all) and builds the first
screen: some 70,000 objects the collector tracks, none of them garbage. Each time the youngest
generation fills, the collector walks them anyway and finds nothing: 13-15 ms of the imports
on the 2-core machine (a fresh interpreter importing the start modules with and without
``gc.disable()``, timed interleaved with ``farm-bench``; docs/performance.md).

So ``tui-app`` holds the collector off from the moment it knows it opens the TUI until the
list's first frame is drawn. Then ``gc.freeze()`` moves everything the start made into the
permanent generation, where later full collections do not walk it (the modules, classes and
widgets live as long as the app does), and the collector is on again. Reference counting frees
objects as ever meanwhile; only cycles made during the start wait, and they are few.
"""

from __future__ import annotations

import gc

__all__ = ["hold", "release"]

_held = False


def hold() -> None:
    """Turn the collector off for the start, if it is on (a host that turned it off itself
    keeps it off: ``release`` then changes nothing)."""
    global _held
    if gc.isenabled():
        gc.disable()
        _held = True


def release(*, freeze: bool = True) -> None:
    """After the first frame: freeze what the start made and turn the collector on again.
    Once only, and only if ``hold`` turned it off (tests run the app with it on). Without
    ``freeze`` (an app that ended before its first frame) it is only turned on."""
    global _held
    if _held:
        _held = False
        if freeze:
            gc.freeze()
        gc.enable()
