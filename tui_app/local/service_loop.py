"""A background task of the local service that runs rounds until the service stops it.

The stall watch and the metrics sampler each start one on the service's event loop, wait
between rounds in a way that ``stop`` cuts short, and on ``stop`` let the round in progress
finish before they return.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from typing import Any

__all__ = ["ServiceLoop"]


class ServiceLoop:
    """One named task: ``start(body)``, ``await stop()``; ``body`` loops while not ``stopping``."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self, body: Callable[[], Coroutine[Any, Any, None]]) -> None:
        self.stopping.clear()
        self._task = asyncio.get_running_loop().create_task(body(), name=self.name)

    async def stop(self) -> None:
        """Ask the body to stop and wait for it (the round in progress finishes first)."""
        self.stopping.set()
        if self._task is not None:
            await self._task
            self._task = None

    async def pause(self, seconds: float) -> None:
        """Wait ``seconds`` before the next round, or less when ``stop`` is called."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stopping.wait(), seconds)
