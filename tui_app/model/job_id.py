"""The job-id rule and the ``<base>_<YYYYMMDD_HHMMSS>`` naming convention.

AI Platform only requires ids to match ``JOB_ID_PATTERN``; by convention (and in every tool of ours)
an id is a base name plus the submit time, so resubmitting ``mnist_20261122_083000`` gives
``mnist_20261122_091500`` and the two sort together.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime

JOB_ID_MAX_LEN = 128
JOB_ID_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,127}$")
JOB_ID_RULE = (
    "must start with a letter and contain only letters, digits and underscores, "
    f"at most {JOB_ID_MAX_LEN} characters"
)
TIMESTAMP_FORMAT = "%Y%m%d_%H%M%S"
_SUFFIX = re.compile(r"^(?P<base>.+?)_(?P<ts>\d{8}_\d{6})$")


def job_id_error(job_id: object) -> str | None:
    """Say why ``job_id`` is not a valid ml v1 job id, or None when it is."""
    if not isinstance(job_id, str) or not job_id:
        return "A job id is required: it " + JOB_ID_RULE + "."
    if len(job_id) > JOB_ID_MAX_LEN:
        return f"The job id is {len(job_id)} characters long; it " + JOB_ID_RULE + "."
    if not job_id[0].isascii() or not job_id[0].isalpha():
        return f"The job id {job_id[:40]!r} does not start with a letter; it " + JOB_ID_RULE + "."
    if not JOB_ID_PATTERN.match(job_id):
        bad = next(c for c in job_id if not (c.isascii() and (c.isalnum() or c == "_")))
        return f"The job id contains {bad!r}; it " + JOB_ID_RULE + "."
    return None


def is_valid_job_id(job_id: object) -> bool:
    """True when ``job_id`` satisfies the ml v1 rule."""
    return job_id_error(job_id) is None


def split_job_id(job_id: str) -> tuple[str, datetime | None]:
    """Split an id into its base name and the timestamp suffix, when it has a valid one."""
    m = _SUFFIX.match(job_id)
    if m:
        try:
            stamp = datetime.strptime(m.group("ts"), TIMESTAMP_FORMAT).replace(tzinfo=UTC)
        except ValueError:
            return job_id, None
        return m.group("base"), stamp
    return job_id, None


def base_name(job_id: str) -> str:
    """The id without its ``_YYYYMMDD_HHMMSS`` suffix."""
    return split_job_id(job_id)[0]


def new_job_id(base: str, now: datetime | None = None) -> str:
    """A fresh id for ``base`` stamped with ``now`` (UTC), e.g. for resubmitting a job."""
    stamp = (now or datetime.now(UTC)).astimezone(UTC).strftime(TIMESTAMP_FORMAT)
    candidate = f"{base_name(base)}_{stamp}"
    overflow = len(candidate) - JOB_ID_MAX_LEN
    if overflow > 0:
        trimmed = base_name(base)[:-overflow]
        candidate = f"{trimmed}_{stamp}"
    return candidate


def find_job_id(text: str, known: Iterable[str]) -> tuple[str | None, str]:
    """The job ``text`` names among ``known`` ids (``:logs ID``), or None and why not.

    An exact id wins; otherwise a prefix that only one id starts with (case-insensitive), so
    ``:logs census_2026`` is enough when it is unambiguous.
    """
    wanted = text.strip()
    ids = list(known)
    if wanted in ids:
        return wanted, ""
    folded = wanted.casefold()
    hits = sorted(j for j in ids if j.casefold().startswith(folded))
    if len(hits) == 1:
        return hits[0], ""
    if hits:
        shown = ", ".join(hits[:3]) + (", …" if len(hits) > 3 else "")
        return None, f"{wanted!r} matches {len(hits)} jobs ({shown}): type more of the id."
    return None, f"No job {wanted!r} in this project's {len(ids):,} jobs."
