"""Chief-owned checkpoints under ``<job-dir>/checkpoints/ckpt-<step>.json``.

``<job-dir>`` is a local folder or a ``gs://`` URI (``trainer.gcs``), as the platform passed it.

They let a restarted or re-submitted job (same ``--job-dir``) continue instead of starting over,
which is what the platform's own restarts of a failed master rely on. Writes are atomic so a
master killed mid-write never leaves a checkpoint that a resume would choke on.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Sequence

from trainer import gcs
from trainer.util import atomic_write_json, warn

KEEP_LAST = 3
_NAME = re.compile(r"ckpt-(\d+)\.json")


def checkpoint_dir(job_dir: str) -> str:
    """Where checkpoints live inside the job directory."""
    return os.path.join(job_dir, "checkpoints")


def list_checkpoints(job_dir: str) -> list[tuple[int, str]]:
    """``(step, path)`` of every finished checkpoint, oldest first (temp files are ignored)."""
    directory = checkpoint_dir(job_dir)
    try:
        names = gcs.listdir(directory)
    except FileNotFoundError:
        return []
    found = []
    for name in names:
        match = _NAME.fullmatch(name)
        if match:
            found.append((int(match.group(1)), os.path.join(directory, name)))
    return sorted(found)


def save(job_dir: str, step: int, params: Sequence[float], keep: int = KEEP_LAST) -> str:
    """Write ``ckpt-<step>.json`` and delete all but the newest ``keep`` checkpoints."""
    path = os.path.join(checkpoint_dir(job_dir), f"ckpt-{step}.json")
    atomic_write_json(
        path,
        {"step": int(step), "params": [float(p) for p in params], "timestamp": time.time()},
    )
    for _, old_path in list_checkpoints(job_dir)[:-keep]:
        with contextlib.suppress(FileNotFoundError):
            gcs.remove(old_path)
    return path


def load_latest(job_dir: str, num_params: int) -> tuple[int, list[float]] | None:
    """The newest readable checkpoint as ``(step, params)``, or None when there is none.

    An unreadable or mismatched checkpoint (say, written with another ``--dim``) is skipped with
    a warning rather than crashing the job, falling back to the next older one.
    """
    for step, path in reversed(list_checkpoints(job_dir)):
        try:
            payload = json.loads(gcs.read_bytes(path).decode("utf-8"))
            params = [float(p) for p in payload["params"]]
            if len(params) != num_params:
                raise ValueError(f"has {len(params)} parameters, expected {num_params}")
            return int(payload.get("step", step)), params
        except (OSError, ValueError, KeyError, TypeError) as exc:
            warn(f"WARNING: skipping checkpoint {path}: {exc}")
    return None
