"""What the job list shows: one compact row per job, its sort orders and its folded groups.

Pure: no Textual, no IO. The list holds up to ~100k jobs, so a :class:`JobRow` keeps only the
columns the list shows (never the raw resource dict; ~0.85 KB per row). ``from_job`` runs for
every job before the first paint (100k on the biggest lists), so what the list does not need
to sort and count is made when first read and then kept: the text the ``/`` filter searches
(``haystack``; the list makes it for every row once painted, :func:`warm_haystacks`) and the
three times. They were a sixth and a seventh of its cost; it is now ~4.5 us per job on a slow
2-core machine (0.45 s for 100k, from 0.61 s). Build rows for new or changed jobs, not for
every poll, and keep ``from_job``'s common path free of per-field checked readers.

Invariants:

- Rows are keyed by ``job_id``; folded groups by ``group:<base>`` (see :attr:`GroupRow.key`).
- The master list is sorted once (by :func:`sort_default`, which is ``default_key``'s order, or
  :func:`sort_rows`), and filtering keeps its order, so nothing re-sorts per keystroke.
"""

from __future__ import annotations

import sys
from bisect import bisect_left, insort
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from operator import attrgetter
from typing import Any

from tui_app.model.jobs.cluster import replica_groups
from tui_app.model.jobs.job_id import split_job_id
from tui_app.model.jobs.states import LIVE_STATES, STATE_ORDER, STATE_SYMBOL, JobState
from tui_app.model.jobs.tiers import DEFAULT_SCALE_TIER
from tui_app.model.jobs.wire import as_float, as_int, parse_time
from tui_app.model.logs.failure_cause import failure_cause
from tui_app.model.running.restarts import ReplicaRestarts, restarts_from_job, total_restarts
from tui_app.model.running.stalls import stall_from_job

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
GROUP_KEY_PREFIX = "group:"
TIMES = "\u00d7"
"""The multiplication sign between a tier and its replica count: ``CUSTOM`` TIMES ``4``."""
RESTART_GLYPH = "\u21bb"
"""``↻``: before a job's restart count, as k9s's RESTARTS column counts a pod's; one cell wide
(Unicode gives it a neutral East Asian width), so the STATE column keeps its width."""

# STATE_UNSPECIFIED is 17 characters; the list's STATE column is narrow, so show it as this.
_STATE_NAME: dict[JobState, str] = {s: s.value for s in JobState} | {
    JobState.STATE_UNSPECIFIED: "UNKNOWN"
}
_STATE_OF: dict[str, JobState] = {s.value: s for s in JobState}
"""Each state by its wire name: what nearly every job's ``state`` is, read with no exception."""
_STATE_RANK: dict[JobState, int] = {s: i for i, s in enumerate(STATE_ORDER)}
_UNRANKED = len(STATE_ORDER)


def state_name(state: JobState) -> str:
    """The name the list shows for a state (``STATE_UNSPECIFIED`` reads ``UNKNOWN``)."""
    return _STATE_NAME[state]


def parse_state(value: object) -> JobState:
    """The JobState of a wire value; anything unknown is ``STATE_UNSPECIFIED``."""
    if type(value) is str:
        state = _STATE_OF.get(value)
        if state is not None:
            return state
    try:
        return JobState(str(value).upper()) if value is not None else JobState.STATE_UNSPECIFIED
    except ValueError:
        return JobState.STATE_UNSPECIFIED


def _flat(text: str) -> str:
    """``text`` on one line with no tabs: the haystack's separators stay unambiguous."""
    if "\t" in text or "\n" in text or "\r" in text:
        return text.replace("\t", " ").replace("\n", " ").replace("\r", " ")
    return text


_TIER_COUNTS: dict[str, int] = {}
"""A named tier's replica count (it reads nothing else of the trainingInput), by tier name."""
_TIER_COUNTS_MAX = 64
"""Names beyond this many are counted each time: the cache is not grown by untrusted data."""


def _replica_count(training_input: object) -> int:
    """``len(replicas(training_input))``, without building the replicas; 0 when malformed."""
    if training_input is None:
        training_input = {}
    if not isinstance(training_input, Mapping):
        return 0
    tier = training_input.get("scaleTier") or DEFAULT_SCALE_TIER  # as replica_groups reads it
    if type(tier) is str and tier != "CUSTOM":
        count = _TIER_COUNTS.get(tier)
        if count is None:
            count = _count_replicas({"scaleTier": tier})
            if len(_TIER_COUNTS) < _TIER_COUNTS_MAX:
                _TIER_COUNTS[tier] = count
        return count
    return _count_replicas(training_input)


def _tier_and_count(training_input: object) -> tuple[str, int]:
    """The TIER cell's two parts: the tier's name (as given, or ``BASIC``; interned) and the
    replica count (``_replica_count``), read once for the usual dict with a named tier."""
    if type(training_input) is dict:
        raw = training_input.get("scaleTier")
        if type(raw) is str and raw and raw != "CUSTOM":
            count = _TIER_COUNTS.get(raw)
            if count is not None:
                return sys.intern(raw), count
    tier = DEFAULT_SCALE_TIER
    if isinstance(training_input, Mapping):
        tier = str(training_input.get("scaleTier") or DEFAULT_SCALE_TIER)
    return sys.intern(tier), _replica_count(training_input)


def _count_replicas(training_input: Mapping[str, Any]) -> int:
    try:
        return sum(group.count for group in replica_groups(training_input))
    except Exception:  # a malformed trainingInput must never break the list
        return 0


STALL_GLYPH = "⚠"
"""Marks a stalled job in the list's ERROR cell (a failed job's cause has no such mark)."""
FAULT_STATES = frozenset({JobState.FAILED, JobState.CANCELLED})
"""The ended states ``z`` keeps (``JobRow.is_fault``)."""


def restart_marker(count: int) -> str:
    """``↻2`` for a job restarted twice; "" for one never restarted, which looks as before."""
    return f"{RESTART_GLYPH}{count}" if count > 0 else ""


def format_elapsed(delta: timedelta | None) -> str:
    """A duration as every view shows it: ``7s``, ``4m05s``, ``1h02m``, ``3d04h``; "" for None.

    The one format of the list, the detail, the trials table and ``tui-app jobs``: two units at
    most, the larger first, so it fits the list's ELAPSED column at any length.
    """
    if delta is None:
        return ""
    total = max(0, int(delta.total_seconds()))
    if total < 60:
        return f"{total}s"
    if total < 3600:
        return f"{total // 60}m{total % 60:02d}s"
    if total < 86400:
        return f"{total // 3600}h{total % 3600 // 60:02d}m"
    return f"{total // 86400}d{total % 86400 // 3600:02d}h"


@dataclass(frozen=True, slots=True)
class JobRow:
    """One job as the list shows it; built by :meth:`from_job`, keyed by ``job_id``."""

    job_id: str
    base: str
    """The id without its ``_YYYYMMDD_HHMMSS`` suffix: the family the job belongs to."""
    stamp: datetime | None
    """The id's timestamp suffix (UTC), or None when the id has none."""
    state: JobState
    _created: datetime | str | None = field(compare=False, repr=False)
    _started: datetime | str | None = field(compare=False, repr=False)
    _ended: datetime | str | None = field(compare=False, repr=False)
    """``createTime``, ``startTime`` and ``endTime`` as sent (a string), until first read
    (:attr:`created`, :attr:`started`, :attr:`ended`), then as read. Apart from the id's
    stamp, the list does not need them to sort or count: only the rows on screen read them,
    and ``from_job`` runs for every job before the first paint (three parses were a seventh
    of its cost). A row's equality leaves them out: their form changes when they are read,
    and two rows of one job's state (one etag) were sent the same times."""
    scale_tier: str
    replica_count: int
    ml_units: float | None
    error: str
    """Why it failed, in one line (``failure_cause`` of ``errorMessage``); empty for none."""
    labels: tuple[tuple[str, str], ...]
    """Sorted ``(key, value)`` pairs."""
    position: int | None
    """``jobPosition`` (QUEUED jobs only): how many jobs are ahead in the queue."""
    restarts: tuple[ReplicaRestarts, ...] = ()
    """``replicaRestarts``, per replica (the local service's; empty, the shared ``()``, for
    the many jobs that never restarted): the list's marker and the watch's toast read it."""
    stalled_since: datetime | None = None
    """Since when the live job has been stalled (the local service's ``stall``): the list's
    ``⚠ stalled 12m``, the watch's notice; None for a job that is not (or no longer live)."""
    stalled: tuple[str, ...] = ()
    """The stalled replicas' names (``trial 3 worker-replica-0`` for a trial's)."""
    _haystack_cased: str | None = field(default=None, compare=False, repr=False)
    _haystack: str | None = field(default=None, compare=False, repr=False)
    """:attr:`haystack_cased` and :attr:`haystack` once made (None before): derived from the
    fields above, so they take no part in equality."""

    @classmethod
    def from_job(cls, job: Mapping[str, Any]) -> JobRow:
        """The row for an ml v1 Job resource; every field may be missing or malformed.

        A poll of 100k jobs builds 100k rows before the list can be painted, so the common
        shapes (dicts, absent optional fields) take the short way; anything else the checked one.
        """
        get = job.get
        raw_id = get("jobId")
        job_id = raw_id if type(raw_id) is str else str(raw_id or "")
        base, stamp = split_job_id(job_id)
        raw_state = get("state")
        state = _STATE_OF.get(raw_state) if type(raw_state) is str else None
        if state is None:
            state = parse_state(raw_state)
        tier, count = _tier_and_count(get("trainingInput"))
        output = get("trainingOutput")
        ml_units = None
        if type(output) is dict or isinstance(output, Mapping):
            units = output.get("consumedMLUnits")
            # A JSON number as it comes; anything else through the reader (NaN is kept).
            ml_units = units if type(units) is float else as_float(units, keep_nan=True)
        message = get("errorMessage")
        error = ""
        if isinstance(message, str) and message:  # "" has no cause: failure_cause("") is ""
            error = _flat(failure_cause(message))
        raw_labels = get("labels")
        labels: tuple[tuple[str, str], ...] = ()
        if raw_labels is not None and isinstance(raw_labels, Mapping):
            labels = tuple(
                sorted((sys.intern(str(k)), sys.intern(str(v))) for k, v in raw_labels.items())
            )
        raw_position = get("jobPosition")
        position = None if raw_position is None else as_int(raw_position)
        stall = stall_from_job(job) if get("stall") and state in LIVE_STATES else None
        make = _make_row if cls is JobRow else cls
        return make(
            job_id,
            # Interned: many rows share a base name and a tier; this keeps 100k rows small.
            sys.intern(base),
            stamp,
            state,
            _wire_text(get("createTime")),
            _wire_text(get("startTime")),
            _wire_text(get("endTime")),
            tier,
            count,
            ml_units,
            error,
            labels,
            position,
            tuple(restarts_from_job(job)) if get("replicaRestarts") else (),
            datetime.fromtimestamp(stall.since, UTC) if stall and stall.stalled else None,
            tuple(
                f"trial {r.trial_id} {r.task_name}" if r.trial_id else r.task_name
                for r in stall.stalled
            )
            if stall
            else (),
            None,
            None,
        )

    @property
    def key(self) -> str:
        """The row's key in the list: its job id."""
        return self.job_id

    @property
    def created(self) -> datetime | None:
        """When the job was created (``createTime``); None when not sent or not a time."""
        return _read_time(self, self._created, _set_created)

    @property
    def started(self) -> datetime | None:
        """When the job started running (``startTime``); None before, or when not a time."""
        return _read_time(self, self._started, _set_started)

    @property
    def ended(self) -> datetime | None:
        """When the job ended (``endTime``); None before, or when not a time."""
        return _read_time(self, self._ended, _set_ended)

    @property
    def haystack_cased(self) -> str:
        """The visible columns' text: what a filter with an uppercase letter searches.

        ``"<id> <state> <tier> ×<n> <error>\\t<k>=<v>\\t…"``: labels are tab-delimited so that
        the filter's ``label:`` tokens are exact substring tests. Made on first use, then kept.
        """
        text = self._haystack_cased
        if text is None:
            text = _haystack_text(self)
            _set_haystack_cased(self, text)
        return text

    @property
    def haystack(self) -> str:
        """:attr:`haystack_cased` in lowercase: what a case-insensitive filter searches."""
        text = self._haystack
        if text is None:
            text = self.haystack_cased.lower()
            _set_haystack(self, text)
        return text

    @property
    def is_fault(self) -> bool:
        """What ``z`` (faults only) keeps: a job that failed or was cancelled, or one that
        hangs (``stalled_since``)."""
        return self.state in FAULT_STATES or self.stalled_since is not None

    def stall_text(self, now: datetime) -> str:
        """``⚠ stalled 12m05s``: the list's ERROR cell of a stalled job without an error."""
        if self.stalled_since is None:
            return ""
        return f"{STALL_GLYPH} stalled {format_elapsed(now - self.stalled_since)}"

    @property
    def restart_count(self) -> int:
        """Every restart of the job's replicas, and its whole-job retries: the list's figure."""
        return total_restarts(self.restarts) if self.restarts else 0

    @property
    def tier_label(self) -> str:
        """The TIER cell: tier, multiplication sign, replica count (``CUSTOM`` TIMES ``4``)."""
        return f"{self.scale_tier} {TIMES}{self.replica_count}"

    @property
    def sort_time(self) -> datetime:
        """When the job was submitted: the id's stamp, else createTime, else the epoch."""
        return self.stamp or self.created or EPOCH

    def elapsed(self, now: datetime) -> timedelta | None:
        """How long the job has run: ``(end or now) - start``; None before it started.

        A job that ended without ever starting (cancelled while QUEUED, refused while PREPARING)
        never ran: None, not its time in the queue passed off as a run. The wait is
        :meth:`waited`, shown apart: counting it here made ``QUEUED 5m23s`` turn into
        ``RUNNING 2s`` when the job started."""
        if self.started is None:
            return None
        return (self.ended or now) - self.started

    def waited(self, now: datetime) -> timedelta | None:
        """How long the job waited to start (so far, while it still waits): from creation to
        its start, or to its end when it never started; None without a createTime."""
        if self.created is None:
            return None
        return (self.started or self.ended or now) - self.created


def _slot_setter(cls: type, name: str) -> Callable[[Any, Any], None]:
    """The setter of ``cls``'s slot ``name`` (its member descriptor's ``__set__``): it sets the
    slot even on a frozen dataclass, whose own ``__setattr__`` refuses."""
    setter: Callable[[Any, Any], None] = getattr(cls, name).__set__
    return setter


def _slot_constructor(cls: type) -> Callable[..., Any]:
    """A function that makes a ``cls`` from every field's value, in field order, as the
    dataclass's ``__init__`` does (``cls(*values)``) but in half the time: each slot is set
    through its descriptor, not through ``object.__setattr__`` looked up per field (a frozen
    dataclass's way). Built with exec, like the dataclass's own ``__init__``; no defaults, no
    ``__post_init__`` (the class must have neither that matters here)."""
    names = [f.name for f in fields(cls)]
    setters = {f"_set_{name}": _slot_setter(cls, name) for name in names}
    body = "".join(f"    _set_{name}(row, {name})\n" for name in names)
    source = f"def make({', '.join(names)}):\n    row = _new(_cls)\n{body}    return row\n"
    namespace: dict[str, Any] = {"_new": object.__new__, "_cls": cls, **setters}
    exec(source, namespace)  # the source holds the class's own field names, nothing else
    make: Callable[..., Any] = namespace["make"]
    return make


_make_row: Callable[..., JobRow] = _slot_constructor(JobRow)
"""``JobRow(*values)`` for :meth:`JobRow.from_job`, which builds 100k of them per poll."""
# A frozen row's derived values are still set once, when first made: through the slots' setters.
_set_haystack_cased = _slot_setter(JobRow, "_haystack_cased")
_set_haystack = _slot_setter(JobRow, "_haystack")
_set_created = _slot_setter(JobRow, "_created")
_set_started = _slot_setter(JobRow, "_started")
_set_ended = _slot_setter(JobRow, "_ended")


def _read_time(
    row: JobRow, value: datetime | str | None, keep: Callable[[Any, Any], None]
) -> datetime | None:
    """A time slot's ``value``; the wire text of one not read yet is parsed and kept."""
    if isinstance(value, str):
        value = parse_time(value)
        keep(row, value)
    return value


def _wire_text(value: object) -> str | None:
    """A time as sent, kept for :func:`parse_time` on first read; anything but a string is no
    time (None), as ``parse_time`` would say."""
    return value if type(value) is str else None


def _haystack_text(row: JobRow) -> str:
    """:attr:`JobRow.haystack_cased` of ``row``, from its fields."""
    # A filter finds "stalled" where the cell shows it (with its age, added when drawn).
    error = row.error or (f"{STALL_GLYPH} stalled" if row.stalled_since is not None else "")
    # Labels follow as "\tkey=value" and the text ends in "\t", so the filter's label tokens
    # are exact substring tests ("\tteam=nlp\t") with no per-row Python.
    text = (
        f"{_flat(row.job_id)} {_STATE_NAME[row.state]} {_flat(row.scale_tier)}"
        f" {TIMES}{row.replica_count} {error}\t"
    )
    if row.labels:
        text += "".join(f"{_flat(k)}={_flat(v)}\t" for k, v in row.labels)
    return text


def joined_haystacks(rows: Sequence[JobRow], cased: bool = False) -> str:
    """Every row's :attr:`~JobRow.haystack` (``haystack_cased`` when ``cased``), in order,
    joined by newlines (the text has none): what a filter index splits into its copy.

    The slots are read as they are, and only when one is still empty (the list not yet warmed,
    :func:`warm_haystacks`) is each read through its property, which makes it: the property
    on every row cost 45 ms per 100k rows against 28, on the first keystroke after each list.
    """
    texts = [r._haystack_cased for r in rows] if cased else [r._haystack for r in rows]
    try:
        return "\n".join(texts)  # type: ignore[arg-type]  # a None raises, as wanted
    except TypeError:  # some row's text is not made yet
        made = [r.haystack_cased for r in rows] if cased else [r.haystack for r in rows]
        return "\n".join(made)


WARM_STEP_ROWS = 5_000
"""Rows :func:`warm_haystacks` reads per call: ~5 ms, so a keystroke never waits longer."""


def warm_haystacks(rows: Sequence[JobRow], start: int = 0) -> int | None:
    """Make the filter's text of ``rows[start:start + WARM_STEP_ROWS]`` (those without it):
    where the next call starts, or None once ``rows`` are done.

    The list calls it step by step once a new list is painted, so the first ``/`` keystroke on
    100k rows does not make them all (~90 ms) and the first paint did not either.
    """
    end = min(len(rows), start + WARM_STEP_ROWS)
    for i in range(start, end):
        row = rows[i]
        if row._haystack is None:
            row.haystack  # noqa: B018 (made and kept by the property)
    return end if end < len(rows) else None


@dataclass(frozen=True, slots=True)
class GroupRow:
    """A folded family of jobs (consecutive rows sharing a base name), shown as one line."""

    base: str
    count: int
    counts: tuple[tuple[JobState, int], ...]
    """Non-zero counts per state, in ``STATE_ORDER`` (``STATE_UNSPECIFIED`` last)."""
    newest: datetime | None
    """The newest ``createTime`` in the group."""
    job_ids: tuple[str, ...] = ()
    """The jobs the line stands for (marks on them show on the group's line)."""

    @property
    def key(self) -> str:
        """The row's key in the list: ``group:<base>``."""
        return GROUP_KEY_PREFIX + self.base

    @classmethod
    def of(cls, base: str, rows: Sequence[JobRow]) -> GroupRow:
        """The group of ``rows`` (all sharing ``base``)."""
        by_state = count_by_state(rows)
        created = [r.created for r in rows if r.created is not None]
        return cls(
            base=base,
            count=len(rows),
            counts=tuple((s, n) for s, n in by_state.items() if n),
            newest=max(created) if created else None,
            job_ids=tuple(r.job_id for r in rows),
        )


ListRow = JobRow | GroupRow


def count_by_state(rows: Iterable[JobRow]) -> dict[JobState, int]:
    """How many rows are in each state; every state is a key (zeros included), in
    ``STATE_ORDER`` followed by ``STATE_UNSPECIFIED``."""
    counts = dict.fromkeys((*STATE_ORDER, JobState.STATE_UNSPECIFIED), 0)
    for row in rows:
        counts[row.state] += 1
    return counts


def group_summary(group: GroupRow) -> str:
    """``5 jobs: ▶1 ✓3 ✗1``."""
    noun = "job" if group.count == 1 else "jobs"
    parts = " ".join(f"{STATE_SYMBOL[s]}{n}" for s, n in group.counts)
    return f"{group.count} {noun}: {parts}" if parts else f"{group.count} {noun}"


# ---------------------------------------------------------------------------------------------
# Sorting


def default_key(row: JobRow) -> tuple[str, str, float, str]:
    """Base name (case-insensitive), then newest first by the id's stamp or createTime, then id."""
    return (row.base.casefold(), row.base, -row.sort_time.timestamp(), row.job_id)


def _family_key(base: str) -> tuple[str, str]:
    return (base.casefold(), base)


_BY_ID = attrgetter("job_id")
_BY_TIME = attrgetter("sort_time")


def sort_default(rows: Iterable[JobRow]) -> list[JobRow]:
    """``sorted(rows, key=default_key)``, in a third of the time (~70 ms for 100k rows).

    The rows are put in families by base name (a few hundred at most, sorted by name), and
    each family is sorted twice with keys Python computes without a tuple per row: by id,
    then, keeping that order among equals, newest first. Aware times (every row
    :meth:`JobRow.from_job` builds) compare as their timestamps do; rows that mix naive and
    aware times are sorted by ``default_key`` itself.
    """
    rows = list(rows)
    families: dict[str, list[JobRow]] = {}
    for row in rows:
        family = families.get(row.base)
        if family is None:
            families[row.base] = family = []
        family.append(row)
    out: list[JobRow] = []
    try:
        for base in sorted(families, key=_family_key):
            family = families[base]
            family.sort(key=_BY_ID)
            family.sort(key=_BY_TIME, reverse=True)  # stable: equal times stay in id order
            out += family
    except TypeError:  # naive and aware times cannot be compared
        return sorted(rows, key=default_key)
    return out


def keeps_place(old: JobRow, new: JobRow) -> bool:
    """Whether ``new`` sorts where ``old`` did in the default order (same name, time and id):
    a job whose state or end changed keeps its place, and the list need not be sorted again."""
    return old.job_id == new.job_id and old.base == new.base and old.sort_time == new.sort_time


def find_in_default_order(rows: Sequence[JobRow], row: JobRow) -> int | None:
    """Where ``row`` (this very object) is in ``rows``, which are in the default order; None
    when it is not there.

    A bisect by ``default_key``: some 17 keys for 100k rows, where a map of every row to its
    place cost 34 ms to build for each new list. Rows with equal keys (one id listed twice)
    are walked.
    """
    key = default_key(row)
    for at in range(bisect_left(rows, key, key=default_key), len(rows)):
        other = rows[at]
        if other is row:
            return at
        if default_key(other) != key:
            break
    return None


def insert_default(rows_sorted: list[JobRow], added: Iterable[JobRow]) -> list[JobRow]:
    """``rows_sorted`` (in the default order, changed in place) with ``added`` put in their
    places: what sorting them all again would give, for a few new jobs among 100k."""
    for row in added:
        insort(rows_sorted, row, key=default_key)
    return rows_sorted


class SortColumn(StrEnum):
    """The orders the list can show; each has a natural direction (see :attr:`descending`)."""

    DEFAULT = "default"
    """Base name A→Z, newest first within a name."""
    ID = "id"
    """Job id A→Z (case-insensitive)."""
    STATE = "state"
    """Lifecycle order: QUEUED … CANCELLED (``STATE_ORDER``)."""
    CREATED = "created"
    """Newest first."""
    ELAPSED = "elapsed"
    """Longest first; unknown last."""
    TIER = "tier"
    """Tier name A→Z, then replica count."""
    ML_UNITS = "ml_units"
    """Most expensive first; unknown last."""

    @property
    def descending(self) -> bool:
        """True when the natural order (``reverse=False``) puts the largest value first."""
        return self in (SortColumn.CREATED, SortColumn.ELAPSED, SortColumn.ML_UNITS)


SORT_CYCLE: tuple[SortColumn, ...] = tuple(SortColumn)
"""The orders ``o`` steps through, from the default back to it."""

_SORT_WORDS: dict[SortColumn, tuple[str, str, str]] = {
    # (what is sorted, its natural direction, the opposite): the toast and the header say these.
    SortColumn.DEFAULT: ("name", "A→Z, newest first", "Z→A, oldest first"),
    SortColumn.ID: ("job id", "A→Z", "Z→A"),
    SortColumn.STATE: ("state", "QUEUED→CANCELLED", "CANCELLED→QUEUED"),
    SortColumn.CREATED: ("created", "newest first", "oldest first"),
    SortColumn.ELAPSED: ("elapsed", "longest first", "shortest first"),
    SortColumn.TIER: ("tier", "A→Z", "Z→A"),
    SortColumn.ML_UNITS: ("ML units", "most first", "fewest first"),
}


def next_sort(column: SortColumn, shown: Collection[SortColumn] = SORT_CYCLE) -> SortColumn:
    """The order ``o`` moves to after ``column`` (after the last, the default again).

    Only the columns ``shown`` at the list's width count: an order by a column the width hides
    would sort the rows by something nobody can see, with no arrow anywhere to say so. The
    default order is always there (it lives in JOB ID's title).
    """
    i = SORT_CYCLE.index(column)
    for step in range(1, len(SORT_CYCLE) + 1):
        candidate = SORT_CYCLE[(i + step) % len(SORT_CYCLE)]
        if candidate is SortColumn.DEFAULT or candidate in shown:
            return candidate
    return SortColumn.DEFAULT


def sort_arrow(column: SortColumn, reverse: bool) -> str:
    """▲ when the smallest value comes first, ▼ when the largest does (as the header shows)."""
    return "▼" if column.descending != reverse else "▲"


def sort_description(column: SortColumn, reverse: bool) -> str:
    """The list's order in words: ``name, A→Z, newest first``, ``created, oldest first``."""
    what, natural, opposite = _SORT_WORDS[column]
    return f"{what}, {opposite if reverse else natural}"


def sort_header(column: SortColumn, reverse: bool, width: int = 80) -> str:
    """The JOB ID column's title for the orders it carries.

    The default order (base name, then newest) and a plain id sort both live in this column;
    each gets its own title, so the header never claims ``JOB ID▲`` for two different orders.
    ``width`` is the column's: the title is never cut mid-word.
    """
    arrow = sort_arrow(column, reverse)
    if column is SortColumn.DEFAULT:
        full = f"JOB ID · name{arrow} {'oldest' if reverse else 'newest'} first"
        # Narrower than that, the title keeps what tells this order from a plain id sort.
        return full if len(full) <= width else f"JOB ID · name{arrow}"
    if column is SortColumn.ID:
        return "JOB ID" + arrow
    return "JOB ID"


def sort_rows(
    rows: Iterable[JobRow],
    column: SortColumn = SortColumn.DEFAULT,
    reverse: bool = False,
    now: datetime | None = None,
) -> list[JobRow]:
    """The rows in ``column``'s natural order, or its opposite when ``reverse``.

    Ties keep the default order (base name, newest first) in both directions, and rows with no
    value for the column (no createTime, no elapsed, no ML units) always come last.

    Args:
        rows: The rows to sort (not modified).
        column: The column to sort by.
        reverse: Flip the column's natural direction.
        now: The time elapsed is measured to; only ``SortColumn.ELAPSED`` reads it.

    Returns:
        A new sorted list.
    """
    out = sort_default(rows)
    if column is SortColumn.DEFAULT:
        if reverse:
            out.reverse()
        return out
    descending = column.descending != reverse
    if column is SortColumn.ID:
        out.sort(key=lambda r: (r.job_id.casefold(), r.job_id), reverse=descending)
        return out
    if column is SortColumn.STATE:
        out.sort(key=lambda r: _STATE_RANK.get(r.state, _UNRANKED), reverse=descending)
        return out
    if column is SortColumn.TIER:
        out.sort(key=lambda r: (r.scale_tier, r.replica_count), reverse=descending)
        return out
    # Each row's value read once, into a list; then positions sorted by it. A row object
    # (scattered in memory, its times read from the wire text on first use) is touched once.
    keys: list[float | None]
    if column is SortColumn.CREATED:
        keys = [None if t is None else t.timestamp() for t in [row.created for row in out]]
    elif column is SortColumn.ELAPSED:
        at = now or datetime.now(UTC)
        keys = [None if d is None else d.total_seconds() for d in [r.elapsed(at) for r in out]]
    else:
        keys = [row.ml_units for row in out]
    known = [i for i, key in enumerate(keys) if key is not None]
    values = [key for key in keys if key is not None]  # values[j] is known[j]'s
    order = sorted(range(len(values)), key=values.__getitem__, reverse=descending)  # stable
    unknown = [row for row, key in zip(out, keys, strict=True) if key is None]
    return [out[known[j]] for j in order] + unknown


# ---------------------------------------------------------------------------------------------
# Folding


def display_rows(
    rows_sorted: Sequence[JobRow],
    folded: AbstractSet[str],
    column: SortColumn = SortColumn.DEFAULT,
) -> Sequence[ListRow]:
    """The lines of the list: runs of rows whose base name is in ``folded`` become one GroupRow.

    Folding only means something in the default order, where a family's rows are adjacent: in
    any other ``column`` it is ignored and the rows come back unchanged (in a new list). A run
    of one job is never folded: a group line would only hide that job's state.

    Args:
        rows_sorted: Rows in display order.
        folded: Base names to fold.
        column: The order ``rows_sorted`` is in.

    Returns:
        JobRows and GroupRows; a GroupRow sits where its run starts.
    """
    if not folded or column is not SortColumn.DEFAULT:
        return rows_sorted  # unchanged, not copied: a filter's result on 100k rows is a view
    out: list[ListRow] = []
    i, n = 0, len(rows_sorted)
    while i < n:
        row = rows_sorted[i]
        if row.base not in folded:
            out.append(row)
            i += 1
            continue
        j = i + 1
        while j < n and rows_sorted[j].base == row.base:
            j += 1
        if j - i == 1:
            out.append(row)
        else:
            out.append(GroupRow.of(row.base, rows_sorted[i:j]))
        i = j
    return out
