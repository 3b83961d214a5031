"""Wire timestamps: RFC 3339 UTC with ``Z``, one fixed width per kind.

gcloud's stream-logs keeps an entry only if its (timestamp, insertId) is greater than the last one
it kept, compared as plain strings, so every log timestamp must have the same width
(``.ffffffZ``): ``...:02Z`` then ``...:02.500Z`` would drop the second entry (``.`` < ``Z``).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from functools import lru_cache


def job_time(epoch: float | None = None) -> str:
    """A job timestamp (createTime, startTime, endTime): whole seconds, as the platform wrote."""
    t = time.time() if epoch is None else epoch
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def log_time(us: int) -> str:
    """A log entry timestamp from microseconds since the epoch: always ``.ffffffZ``."""
    secs, frac = divmod(us, 1_000_000)
    return f"{_whole_second(secs)}.{frac:06d}Z"


@lru_cache(maxsize=4096)
def _whole_second(secs: int) -> str:
    """Cached: a page of entries:list spans a few seconds, and strftime was a third of its cost."""
    return datetime.fromtimestamp(secs, UTC).strftime("%Y-%m-%dT%H:%M:%S")


def parse_job_time(text: str) -> float:
    """Seconds since the epoch of a job timestamp written by ``job_time`` (or with a fraction)."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
