"""The job-id rule and the ``<base>_<YYYYMMDD_HHMMSS>`` naming convention.

AI Platform only requires ids to match ``JOB_ID_PATTERN``; by convention (and in every tool of ours)
an id is a base name plus the submit time, so resubmitting ``mnist_20261122_083000`` gives
``mnist_20261122_091500`` and the two sort together.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from difflib import SequenceMatcher

JOB_ID_MAX_LEN = 128
JOB_ID_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,127}$")
JOB_ID_RULE = (
    "must start with a letter and contain only letters, digits and underscores, "
    f"at most {JOB_ID_MAX_LEN} characters"
)
TIMESTAMP_FORMAT = "%Y%m%d_%H%M%S"
_SUFFIX_LEN = len("_YYYYMMDD_HHMMSS")
_RESOURCE_NAME = re.compile(r"projects/(?P<project>[^/\s]+)/jobs/(?P<rest>[^/\s][^\s]*)\Z")


def split_job_name(text: str, project: str) -> tuple[str, str]:
    """``(project, what follows jobs/)`` of an id as a person types it: ``projects/P/jobs/ID``
    (the job's resource name, as gcloud prints it) names a job of project P; anything else
    names something of ``project`` and is returned as it is. What follows ``jobs/`` may go on
    (``ID/TRIAL``): the caller says whether that is allowed.

    Raises:
        ValueError: ``text`` starts like a resource name but is not one.
    """
    if not text.startswith("projects/"):
        return project, text
    match = _RESOURCE_NAME.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not a job's name: write projects/PROJECT/jobs/JOB_ID.")
    return match["project"], match["rest"]


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


def _suffix(job_id: str) -> tuple[str, str, str] | None:
    """``(base, day, clock)`` of an id ending in ``_YYYYMMDD_HHMMSS`` (ASCII digits, a base of
    at least one character), by the shape alone; None for any other id.

    Slices and ``str`` tests, not a regular expression: the list splits every id of a poll
    (100k), and a lazy ``(.+?)_(\\d{8}_\\d{6})$`` retried the suffix at each character of the
    base, which cost more than parsing the date.
    """
    if len(job_id) <= _SUFFIX_LEN or job_id[-_SUFFIX_LEN] != "_" or job_id[-7] != "_":
        return None
    day, clock = job_id[-15:-7], job_id[-6:]
    # isdigit alone also takes other scripts' digits (and superscripts); the stamp is ASCII.
    if not (day.isascii() and clock.isascii() and day.isdigit() and clock.isdigit()):
        return None
    return job_id[:-_SUFFIX_LEN], day, clock


def split_job_id(job_id: str) -> tuple[str, datetime | None]:
    """Split an id into its base name and the timestamp suffix, when it has a valid one."""
    parts = _suffix(job_id)
    if parts is None:
        return job_id, None
    base, day, clock = parts
    # Python 3.11's fromisoformat reads the basic form (20261122T083000Z) in C: the same
    # datetime as datetime(int(day[0:4]), ..., tzinfo=UTC) and the same ValueError for a
    # month, day or time out of range (what strptime(TIMESTAMP_FORMAT) accepts of 8 + 6
    # digits), at a sixth of the cost; the job list reads one per job.
    try:
        stamp = datetime.fromisoformat(f"{day}T{clock}Z")
    except ValueError:
        return job_id, None
    return base, stamp


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


SUGGESTIONS = 3
"""At most this many ids in a "did you mean"."""
_CLOSE = 0.7
"""How alike (difflib's ratio) a typed id and a known one must be to be suggested."""
_WINDOW = 200
"""How many ids (and base names) on each side of the typed text's place in sorted order are
compared with it."""


@dataclass(frozen=True)
class JobIdMatch:
    """What some typed text names among a project's job ids: one job, several, or none."""

    text: str
    """What was typed, stripped."""
    job_id: str | None
    """The job it names; None when it names none or several."""
    known: int
    """How many ids it was looked up among."""
    candidates: tuple[str, ...] = ()
    """Every id it is a prefix of, when there are several (sorted)."""
    suggestions: tuple[str, ...] = ()
    """When it names no job: the ids most like it, most alike first."""

    @property
    def ambiguous(self) -> bool:
        """True when several ids start with the text: typing more of it picks one."""
        return len(self.candidates) > 1

    def message(self, project: str | None = None) -> str:
        """Why no job was picked ("" when one was), with a "did you mean" when one helps.

        Args:
            project: The project, for a reader who may be pointed at the wrong one (the
                command line); None says "this project" (the TUI shows its project).
        """
        if self.job_id is not None:
            return ""
        if self.ambiguous:
            hits = self.candidates
            shown = ", ".join(hits[:3]) + (", …" if len(hits) > 3 else "")
            return f"{self.text!r} matches {len(hits)} jobs ({shown}): type more of the id."
        where = (
            f"in project {project} ({self.known:,} jobs)"
            if project
            else (f"in this project's {self.known:,} jobs")
        )
        why = f"No job {self.text!r} {where}."
        if self.suggestions:
            names = list(self.suggestions)
            either = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
            why += f" Did you mean {either}?"
        return why


def match_job_id(text: str, known: Iterable[str]) -> JobIdMatch:
    """The job ``text`` names among ``known`` ids, as ``:describe ID``/``jobs describe ID`` read it.

    An exact id wins; otherwise a prefix that only one id starts with (case-insensitive), so
    ``census_2026`` is enough when it is unambiguous. Text that names no job gets the ids most
    like it (difflib), so a slip of the fingers is answered with the id meant.
    """
    wanted = text.strip()
    ids = list(known)
    if wanted in ids:
        return JobIdMatch(wanted, wanted, len(ids))
    folded = wanted.casefold()
    lowered = [j.casefold() for j in ids]
    hits = sorted(j for j, low in zip(ids, lowered, strict=True) if low.startswith(folded))
    if len(hits) == 1:
        return JobIdMatch(wanted, hits[0], len(ids))
    if hits:
        return JobIdMatch(wanted, None, len(ids), candidates=tuple(hits))
    return JobIdMatch(wanted, None, len(ids), suggestions=_close_ids(folded, ids, lowered))


def _base(lower: str) -> str:
    """The base name by the suffix's shape alone (``base_name`` also parses the date: 20 us)."""
    parts = _suffix(lower)
    return parts[0] if parts is not None else lower


def _close_ids(folded: str, ids: list[str], lowered: list[str]) -> tuple[str, ...]:
    """The ids most like ``folded`` (case-folded ``ids``: ``lowered``), best first, at most
    ``SUGGESTIONS``; none when nothing is alike.

    An id's score is the best of its start (as much of it as was typed: ``census_dst``,
    ``mnist_20261127_074447``) and its base name (``mnsit``) compared with the text; among
    equals, the id whose base name is nearer, then the newest. Only ids within 0.1 of the best
    are kept: one good answer is not buried under three poor ones.

    difflib's ratio costs ~30 us a pair and scoring every id of a 100k list took seconds, so
    only two bounded sets are scored: the ids next to where the text sorts (they share the
    longest start with it) and each base name's newest id (``_WINDOW`` base names around the
    text when there are very many).
    """
    if not folded:
        return ()
    matcher = SequenceMatcher(autojunk=False)
    matcher.set_seq2(folded)  # difflib caches what it learns about the second sequence
    memo: dict[str, float] = {}

    def score(text: str) -> float:
        got = memo.get(text)
        if got is None:
            matcher.set_seq1(text)
            got = 0.0
            if matcher.real_quick_ratio() >= _CLOSE and matcher.quick_ratio() >= _CLOSE:
                got = matcher.ratio()
            memo[text] = got
        return got

    original = dict(zip(lowered, ids, strict=True))
    ordered = sorted(original)
    at = bisect_left(ordered, folded)
    picked = set(ordered[max(0, at - _WINDOW) : at + _WINDOW])
    newest: dict[str, str] = {}
    i = 0
    while i < len(ordered):  # one step per base name: its timestamped ids sort together
        base = _base(ordered[i])
        if base == ordered[i]:
            newest[base] = ordered[i]
            i += 1
            continue
        # base + "_" + a digit: everything below base + "_:" (":" follows the digits).
        i = max(i + 1, bisect_left(ordered, base + "_:", i))
        newest[base] = ordered[i - 1]
    bases = sorted(newest)
    if len(bases) > 2 * _WINDOW:
        at = bisect_left(bases, folded)
        bases = bases[max(0, at - _WINDOW) : at + _WINDOW]
    picked.update(newest[b] for b in bases)
    scored = []
    for lower in picked:
        near = score(_base(lower))
        best = max(score(lower[: len(folded)]), near)
        if best >= _CLOSE:
            scored.append((best, near, lower))
    if not scored:
        return ()
    scored.sort(reverse=True)
    top = scored[0][0]
    return tuple(original[lower] for best, _, lower in scored[:SUGGESTIONS] if best >= top - 0.1)


def find_job_id(text: str, known: Iterable[str]) -> tuple[str | None, str]:
    """The job ``text`` names among ``known`` ids (``:logs ID``), or None and why not.

    See :func:`match_job_id`; the reason names the candidates, or the ids most like it.
    """
    match = match_job_id(text, known)
    return match.job_id, match.message()
