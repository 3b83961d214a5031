"""Small helpers shared by every role: line logging and atomic file writes."""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
import tempfile
import threading
from typing import Any

from trainer import gcs

_PRINT_LOCK = threading.Lock()


def log(message: str) -> None:
    """Print one INFO-ish line to stdout and flush it at once.

    The jobs service streams each replica's stdout into the job's logs as lines arrive; without
    the flush, a block-buffered pipe would hold them back until exit. The lock keeps lines from
    the parameter server's request threads from interleaving mid-line.
    """
    with _PRINT_LOCK:
        print(message, flush=True)


def warn(message: str) -> None:
    """Print one warning/error line to stderr (where the service expects trouble to show up)."""
    with _PRINT_LOCK:
        print(message, file=sys.stderr, flush=True)


def atomic_write_text(path: str, text: str) -> None:
    """Write ``text`` to ``path`` so a concurrent reader sees the old file or the new one.

    Readers (the tests, the jobs service polling the metric file, a resuming master) may look at
    these files at any moment; writing a temporary file in the same directory and
    ``os.replace``-ing it over the target makes the switch atomic on POSIX.
    """
    if gcs.is_gcs(path):  # one upload replaces an object atomically
        gcs.write_bytes(path, text.encode("utf-8"))
        return
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp_path = tempfile.mkstemp(
        dir=directory, prefix="." + os.path.basename(path) + ".", suffix=".tmp"
    )
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_path, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_path)
        raise


def atomic_write_json(path: str, payload: Any) -> None:
    """Atomically write ``payload`` as indented, key-sorted JSON (stable, diff-friendly)."""
    atomic_write_text(path, json.dumps(payload, indent=2, sort_keys=True) + "\n")


FLOAT32_MAX = 3.4028234663852886e38


def as_float32(value: float) -> float:
    """``value`` as a float32 holds it: beyond float32's largest finite value it is inf (NaN
    stays NaN). Frameworks train in float32, and TensorBoard summaries store float32."""
    if math.isfinite(value) and abs(value) > FLOAT32_MAX:
        return math.copysign(math.inf, value)
    return value
