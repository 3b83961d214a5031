"""A replica's CPU and memory samples: the data the usage charts draw and the metrics client
reads into. Plain data, so widgets can take it without importing a client."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from tui_app.model.views.replica_nodes import ReplicaNode

__all__ = ["ReplicaSamples", "UsageSample"]


@dataclass(frozen=True)
class UsageSample:
    """One sample of a replica's process tree (or a merged bucket of them)."""

    time: datetime
    cpu_percent: float
    """Percent of one core (mean over the sample's span)."""
    memory_bytes: int
    """Resident memory (the peak, for a merged sample)."""
    cpu_peak: float
    """The highest CPU percent inside the sample (``cpu_percent`` for a plain sample)."""
    stamp: str = ""
    """The ``time`` exactly as the server wrote it: the next ``since``."""


@dataclass
class ReplicaSamples:
    """One replica's samples, oldest first."""

    task_name: str
    samples: list[UsageSample] = field(default_factory=list)
    node: ReplicaNode | None = None
    """The node it runs on (the service's Ray executor); None on the service's own machine."""

    @property
    def cpu_peak(self) -> float:
        return max((s.cpu_peak for s in self.samples), default=0.0)

    @property
    def memory_peak(self) -> int:
        return max((s.memory_bytes for s in self.samples), default=0)
