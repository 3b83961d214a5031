"""Waiting for the state a Pilot test or a snapshot pictures, never for a fixed time.

A snapshot taken after ``pilot.pause(0.3)`` pictures whatever the app had reached by then: on a
loaded 2-core machine running ``pytest -n 2`` that is sometimes an older state, and the test
fails for no reason of the product's. These helpers wait for a condition the test names (and
fail saying which, instead of taking a wrong picture), then for the screen itself to stop
changing, so the picture is of the state that was asked for and of its last paint.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot

# Generous: a condition that holds takes milliseconds; only a broken app reaches these, and
# then the test fails naming what never happened.
READY_TIMEOUT = 60.0
STABLE_TIMEOUT = 30.0
# How many identical screens in a row mean "painted and done": two consecutive ones can
# bracket a worker that has not posted its result yet; three, each after the event queue is
# drained, have not been seen to.
STABLE_FRAMES = 3


async def wait_until(
    pilot: Pilot[Any], ready: Callable[[], object], what: str, timeout: float = READY_TIMEOUT
) -> None:
    """Wait until ``ready()`` is true, processing the app's events meanwhile.

    Raises:
        AssertionError: ``timeout`` passed first; the message names ``what``.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            if ready():
                return
        except Exception:  # a widget not mounted yet: not ready
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        # Only a sleep: the app goes on in the same loop. ``pilot.pause`` waits on every
        # widget of the screen, which polled 50 times a second cost more than the app.
        await asyncio.sleep(0.02)


async def settled(pilot: Pilot[Any], timeout: float = STABLE_TIMEOUT) -> None:
    """Wait until the screen is the same over ``STABLE_FRAMES`` idle frames in a row.

    Raises:
        AssertionError: the screen kept changing for ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    previous: str | None = None
    same = 0
    while same < STABLE_FRAMES:
        await pilot.wait_for_scheduled_animations()
        await pilot.pause(0.03)
        shot = pilot.app.export_screenshot()
        same = same + 1 if shot == previous else 1
        previous = shot
        if time.monotonic() > deadline:
            raise AssertionError(f"the screen kept changing for {timeout:.0f} s")
