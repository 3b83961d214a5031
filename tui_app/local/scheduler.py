"""Admission: which queued job may start, given the machine's replica slots.

Strictly in order (priority, then creation), so ``jobPosition`` means what it says: a job starts
only when every job ahead of it has. Each replica takes one slot; a job bigger than the whole
machine still runs, alone, rather than waiting forever.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(order=True)
class Ticket:
    """A job waiting for slots."""

    sort_key: tuple[int, int]
    key: tuple[str, str] = field(compare=False)
    slots: int = field(compare=False)
    admitted: asyncio.Future[None] = field(compare=False)


class Scheduler:
    """FIFO within priority; ``on_positions`` hears every change of queue positions."""

    def __init__(
        self,
        slots: int | None = None,
        on_positions: Callable[[dict[tuple[str, str], int]], None] | None = None,
    ) -> None:
        self.capacity = max(1, slots or os.cpu_count() or 1)
        self.used = 0
        self._queue: list[Ticket] = []
        self._running: dict[tuple[str, str], int] = {}
        self._seq = 0
        self._on_positions = on_positions or (lambda positions: None)

    def request(self, key: tuple[str, str], slots: int, priority: int = 0) -> asyncio.Future[None]:
        """Queue a job; the future completes when it may start."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._seq += 1
        self._queue.append(Ticket((-priority, self._seq), key, max(1, slots), fut))
        self._queue.sort()
        self._pump()
        return fut

    def release(self, key: tuple[str, str]) -> None:
        """The job ended (or left the queue): free its slots, start who fits."""
        self.used -= self._running.pop(key, 0)
        self._queue = [t for t in self._queue if t.key != key]
        self._pump()

    def positions(self) -> dict[tuple[str, str], int]:
        return {t.key: i + 1 for i, t in enumerate(self._queue)}

    def _pump(self) -> None:
        while self._queue:
            head = self._queue[0]
            if self.used and self.used + head.slots > self.capacity:
                break
            self._queue.pop(0)
            self.used += head.slots
            self._running[head.key] = head.slots
            if not head.admitted.done():
                head.admitted.set_result(None)
        self._on_positions(self.positions())
