"""Where each replica runs: the node the local service's Ray executor placed it on.

The service's ``:metrics`` answer (documented in ``tui_app/local/metrics.py``) gives a replica
on another machine a ``node``: ``{"address": "127.0.0.3", "id": "<56-hex Ray node id>"}``; a
replica on the service's own machine has none, and then the views show nothing new. A tuning
job's trials' replicas that ran on other nodes come in the same list with a ``trialId``.

Answers come from services of any version, so a ``node`` that is not an object, or whose
fields are not strings, reads as no node rather than raising: the views lose a label, never
the screen.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from tui_app.model.jobs.wire import as_mapping, as_str

__all__ = [
    "SHORT_ID_LENGTH",
    "PlacedReplica",
    "ReplicaNode",
    "nodes_by_task",
    "parse_node",
    "parse_placed",
    "placement_rows",
]

SHORT_ID_LENGTH = 8
"""A Ray node id is 56 hex digits; its first 8 tell a handful of nodes apart (as a short git
hash does) and fit a row at 80 columns."""


@dataclass(frozen=True)
class ReplicaNode:
    """A node as the service named it; either part may be missing (an older service, a node
    whose id it did not learn)."""

    address: str | None = None
    id: str | None = None

    @property
    def short_id(self) -> str | None:
        return self.id[:SHORT_ID_LENGTH] if self.id else None

    @property
    def label(self) -> str:
        """``127.0.0.3 (node 2ae69e1b)``; the address alone, or ``node 2ae69e1b`` alone, when
        only one is known."""
        if self.address and self.short_id:
            return f"{self.address} (node {self.short_id})"
        return self.brief

    @property
    def brief(self) -> str:
        """What a narrow label (the logs picker, a chart's name) adds: the address, which is
        what a person types into ``ssh``; the short id where the address is unknown."""
        if self.address:
            return self.address
        return f"node {self.short_id}" if self.short_id else ""


@dataclass(frozen=True)
class PlacedReplica:
    """A replica and the node it ran on; ``trial_id`` set for a tuning job's trial's replica."""

    task_name: str
    node: ReplicaNode
    trial_id: str | None = None


def _text(value: object) -> str | None:
    """A non-blank string with its surrounding whitespace dropped; None for anything else."""
    text = as_str(value)
    return text.strip() or None if text is not None else None


def parse_node(raw: object) -> ReplicaNode | None:
    """A replica's ``node`` field; None when absent or unreadable (not an object, neither an
    address nor an id that is a non-empty string). A non-string part is dropped on its own."""
    if not isinstance(raw, Mapping):
        return None
    node = ReplicaNode(_text(raw.get("address")), _text(raw.get("id")))
    return node if node.address or node.id else None


def parse_placed(raw: object) -> PlacedReplica | None:
    """One entry of ``:metrics``' ``replicas`` as a placement; None when it names no task or
    has no readable node (a replica on the service's own machine)."""
    entry = as_mapping(raw)
    task = _text(entry.get("taskName"))
    node = parse_node(entry.get("node"))
    if task is None or node is None:
        return None
    return PlacedReplica(task, node, _text(entry.get("trialId")))


def placement_rows(placed: Iterable[PlacedReplica]) -> list[tuple[str, str]]:
    """The detail's "Replicas" rows: ``(replica, node label)``, the job's replicas first (in
    the service's order), then each trial's, keyed ``trial 3 · master-replica-0`` (every trial
    runs replicas of the same names). Empty when no replica has a node."""
    rows = [(p.task_name, p.node.label) for p in placed if p.trial_id is None]
    rows += [(f"trial {p.trial_id} · {p.task_name}", p.node.label) for p in placed if p.trial_id]
    return rows


def nodes_by_task(
    placed: Iterable[PlacedReplica], trial_id: str | None = None
) -> dict[str, ReplicaNode]:
    """Each replica's node by task name: the job's own replicas, or with ``trial_id`` that
    trial's (a trial's logs pane names its replicas by the same task names)."""
    return {p.task_name: p.node for p in placed if p.trial_id == trial_id}
