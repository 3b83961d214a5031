"""Parsing of the ``TF_CONFIG`` environment variable the platform gives every replica.

The platform describes the whole cluster to each replica in ``TF_CONFIG``, e.g.::

    {"cluster": {"master": ["127.0.0.1:40001"], "worker": [...], "ps": [...]},
     "task": {"type": "worker", "index": 1, "trial": "3"}, "job": {...}, "environment": "cloud"}

Newer runtimes name the chief ``chief`` instead of ``master``; both mean the same role here.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

CHIEF_TYPES = ("master", "chief")
TASK_TYPES = ("master", "chief", "worker", "ps", "evaluator")


class TFConfigError(ValueError):
    """TF_CONFIG is present but unusable; the message says what is wrong with it."""


@dataclass
class TaskInfo:
    """What this replica is, as far as training is concerned."""

    task_type: str = "master"
    index: int = 0
    trial: str | None = None
    cluster: dict[str, list[str]] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def is_chief(self) -> bool:
        """The chief (``master`` or ``chief``) owns checkpoints, the model and the metric."""
        return self.task_type in CHIEF_TYPES

    @property
    def name(self) -> str:
        """``type-index``, used in log lines, file names and data shard seeds."""
        return f"{self.task_type}-{self.index}"

    @property
    def ps_addresses(self) -> list[str]:
        """Parameter server addresses; empty means every trainer keeps local parameters."""
        return list(self.cluster.get("ps", []))

    def own_address(self) -> tuple[str, int]:
        """This replica's ``(host, port)`` from the cluster spec (a ps binds its server there)."""
        addresses = self.cluster.get(self.task_type, [])
        if self.index >= len(addresses):
            raise TFConfigError(
                f"TF_CONFIG cluster has no address for {self.task_type}:{self.index}"
            )
        return split_address(addresses[self.index])


def split_address(address: str) -> tuple[str, int]:
    """Split ``host:port`` (``[v6]:port`` too) into its parts, failing clearly when malformed."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise TFConfigError(f"bad cluster address {address!r}: expected host:port")
    return host.strip("[]") or "127.0.0.1", int(port)


def parse_tf_config(text: str | None) -> TaskInfo:
    """Turn the raw ``TF_CONFIG`` value into a :class:`TaskInfo`.

    No TF_CONFIG (a local run, or ``python -m trainer.task`` by hand) means a lone master, which
    trains alone. Validation is strict because a wrong cluster silently trains the wrong thing.
    """
    if text is None or not text.strip():
        return TaskInfo()
    try:
        raw = json.loads(text)
    except ValueError as exc:
        raise TFConfigError(f"TF_CONFIG is not valid JSON: {exc}") from exc
    if not isinstance(raw, dict):
        raise TFConfigError(f"TF_CONFIG must be a JSON object, got {type(raw).__name__}")

    cluster_raw = raw.get("cluster") or {}
    if not isinstance(cluster_raw, dict):
        raise TFConfigError("TF_CONFIG.cluster must be an object")
    cluster: dict[str, list[str]] = {}
    for role, addresses in cluster_raw.items():
        if not isinstance(addresses, list) or not all(isinstance(a, str) for a in addresses):
            raise TFConfigError(f"TF_CONFIG.cluster.{role} must be a list of host:port strings")
        cluster[str(role)] = list(addresses)

    task = raw.get("task") or {}
    if not isinstance(task, dict):
        raise TFConfigError("TF_CONFIG.task must be an object")
    task_type = str(task.get("type") or ("chief" if "chief" in cluster else "master"))
    if task_type not in TASK_TYPES:
        raise TFConfigError(
            f"TF_CONFIG.task.type {task_type!r} is not one of {', '.join(TASK_TYPES)}"
        )
    try:
        index = int(task.get("index", 0))
    except (TypeError, ValueError) as exc:
        raise TFConfigError("TF_CONFIG.task.index must be an integer") from exc
    trial = task.get("trial")
    return TaskInfo(
        task_type=task_type,
        index=index,
        trial=None if trial is None else str(trial),
        cluster=cluster,
        raw=raw,
    )


def task_from_environment() -> TaskInfo:
    """Read and parse ``TF_CONFIG`` from this process's environment."""
    return parse_tf_config(os.environ.get("TF_CONFIG"))
