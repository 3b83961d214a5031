"""``LogStream``: one job's log entries from Cloud Logging v2, as gcloud's stream-logs reads them.

The filter, the resume cursor and the stop rule follow ``gcloud ai-platform jobs stream-logs``
(the Cloud SDK's ``command_lib/logs/stream.py``; ``docs/wire-formats.md`` has the details)::

    (resource.type="ml_job" OR resource.type="cloudml_job") AND resource.labels.job_id="J"
      [AND (resource.labels.task_name="T" OR labels.task_name="T")]
      AND timestamp>="1970-01-01T00:00:00Z"                          (nothing taken yet)
       or ((timestamp="<ts>" AND insertId>"<id>") OR timestamp>"<ts>") (after the last line)
      [AND timestamp<"<now - settle>"]

The lower bound is always explicit, as gcloud's, so no default window applies (google-cloud-
logging's ``list_entries`` would add the last 24 hours). Requests go through google-cloud-
logging's HTTP connection (``Client(_use_grpc=False)``), but the entries are read as the JSON
the server sent rather than as ``LogEntry`` objects: those keep the timestamp only as a
microsecond ``datetime``, and the cloud's timestamps have nanoseconds, which the cursor must
repeat exactly. ``LogLine.timestamp`` is that timestamp in UTC with exactly nine fraction
digits, so ``LogLine.key`` tuples order correctly as plain strings.

**Settling.** Cloud Logging can make an entry visible after later ones, so a cursor past it
would skip it for good; gcloud therefore only reads entries older than *now - 5 s*. Pass
``settle_seconds=5.0`` for cloud endpoints. The local service commits entries in
(timestamp, insertId) order, so its streams use 0 (no upper bound, no delay).

**The local fast path.** On the local service (``connection.local``) the same filters go to
its ``entries:follow`` extension instead (``docs/wire-formats.md``): pages of up to 10,000
entries as compact rows, and a long poll while nothing is new. A LogEntry's JSON is five times
its message; building, sending and parsing it took most of the 0.2 s a 5,000-line batch cost.
A service without the route (404) gets ``entries:list`` from then on; the cloud always does.

No Textual here: the TUI runs ``follow`` in a thread worker, the CLI runs it directly.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from functools import lru_cache
from operator import attrgetter
from typing import Any, Final

from tui_app.api.connection import Connection
from tui_app.api.errors import ApiCallError, rpc_error_parts
from tui_app.model.jobs.cluster import task_from_vertex, task_to_vertex
from tui_app.model.jobs.vertex_resources import VERTEX_FIELD
from tui_app.model.jobs.wire import as_mapping
from tui_app.model.logs.follow_rule import should_skip_ahead
from tui_app.model.logs.log_line import LogLine
from tui_app.model.logs.severity import parse_severity, severity_name
from tui_app.model.views.trials import trial_of

__all__ = [
    "BACKOFF_SECONDS",
    "CLOUD_POLL_SECONDS",
    "CLOUD_SETTLE_SECONDS",
    "LogStream",
    "call_logging",
    "cloud_settle",
    "format_line",
    "logging_request",
    "normalize_timestamp",
    "to_line",
]

PAGE_SIZE: Final = 1000
FAST_PAGE_SIZE: Final = 10_000
"""``entries:follow``'s page: the local service answers up to this many entries at once."""
LONG_POLL_SECONDS: Final = 1.0
"""The longest an ``entries:follow`` poll waits on the server for a new line; it also bounds how
long ``stop`` may wait to be noticed."""
RECENT_IDS: Final = 10_000
"""How many recent insertIds ``poll`` remembers to drop an entry the server sends twice."""
CLOUD_POLL_SECONDS: Final = 5.0
"""Between polls on Vertex AI: Cloud Logging allows about 60 entries:list calls a minute per
project, and its lines are ``CLOUD_SETTLE_SECONDS`` late anyway."""
CLOUD_SETTLE_SECONDS: Final = 5.0
"""gcloud's upper bound: only entries older than now - 5 s are read from the cloud."""
BACKOFF_SECONDS: Final = (0.5, 1.0, 2.0, 4.0, 8.0, 10.0)
"""Waits after 1, 2, 3... failures in a row; the last one repeats."""
END_GRACE_SECONDS: Final = 1.0
"""Only a poll starting this long after the endTime was first seen can end the stream: the
service may commit the job's last lines (e.g. "Job completed successfully.") a moment after the
job shows its endTime, and gcloud, too, waits a polling interval between its GET and that poll."""
JOB_REFRESH_SECONDS: Final = 2.0
"""``follow`` reads the job (for its endTime) at least this often."""
DEFAULT_TIMEOUT_SECONDS: Final = 30.0
EPOCH: Final = "1970-01-01T00:00:00Z"

_TIMESTAMP = re.compile(
    r"(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(?:[.,](\d+))?\s*(Z|z|[+-]\d{2}:?\d{2})?",
    re.ASCII,
)


_CANONICAL_MICROS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", re.ASCII)
"""What the local service sends: only the three nanosecond digits are missing."""

_YEAR_10000: Final = 253_402_300_800
"""Seconds from the epoch to 10000-01-01: where four-digit years, and datetime, end."""

_KEY = attrgetter("timestamp", "insert_id")
"""``LogLine.key`` without a property call: sorting a 5,000-line batch calls it per line."""


def normalize_timestamp(text: str) -> str:
    """``text`` (RFC 3339, any fraction width, any offset) as UTC with exactly 9 fraction digits.

    One width keeps (timestamp, insertId) keys ordered as plain strings (``...:02Z`` sorts
    after ``...:02.5Z`` otherwise), and nanoseconds keep the cloud's timestamps exact.

    Raises:
        ValueError: ``text`` is not a timestamp.
    """
    if _CANONICAL_MICROS.fullmatch(text):
        return text[:26] + "000Z"
    m = _TIMESTAMP.fullmatch(text.strip())
    if not m:
        raise ValueError(f"not an RFC 3339 timestamp: {text!r}")
    day, clock, frac, zone = m.groups()
    nanos = (frac or "")[:9].ljust(9, "0")
    if zone in (None, "Z", "z", "+00:00", "+0000", "-00:00", "-0000"):
        return f"{day}T{clock}.{nanos}Z"
    offset = zone.replace(":", "")
    local = datetime.strptime(f"{day}T{clock}{offset}", "%Y-%m-%dT%H:%M:%S%z")
    return local.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S") + f".{nanos}Z"


def _epoch_seconds(text: str) -> float:
    norm = normalize_timestamp(text)
    whole = datetime.strptime(norm[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)
    return whole.timestamp() + int(norm[20:29]) / 1e9


def format_line(line: LogLine) -> list[str]:
    """``line`` as gcloud's stream-logs prints it, one output line per message line.

    ``SEVERITY<TAB>YYYY-MM-DD HH:MM:SS +0000<TAB>task_name<TAB>trial_id<TAB>message``, in UTC;
    a multi-line message becomes several lines, as gcloud without ``--allow-multiline-logs``.
    """
    when = line.timestamp[:10] + " " + line.timestamp[11:19] + " +0000"
    head = f"{severity_name(line.severity)}\t{when}\t{line.task_name}\t{line.trial_id or ''}\t"
    return [head + part for part in (line.text.splitlines() or [""])]


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _text(entry: dict[str, Any]) -> str:
    """The message, as gcloud picks it: jsonPayload.message, textPayload, else the payload."""
    payload = entry.get("jsonPayload")
    if isinstance(payload, dict):
        if "message" in payload:
            msg = payload["message"]
            return msg if isinstance(msg, str) else json.dumps(msg, sort_keys=True)
        return json.dumps(payload, sort_keys=True)
    text = entry.get("textPayload")
    if text is not None:
        return str(text)
    proto = entry.get("protoPayload")
    if proto is not None:
        return json.dumps(proto, sort_keys=True)
    return ""


@lru_cache(maxsize=64)
def _named_severity(value: str) -> int:
    try:
        return parse_severity(value)
    except ValueError:
        return 0


def _severity(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        return _named_severity(value)
    return 0


def to_line(entry: dict[str, Any]) -> LogLine | None:
    """A LogEntry (JSON) as a LogLine; None for one without a usable timestamp."""
    raw_ts = entry.get("timestamp") or entry.get("receiveTimestamp")
    try:
        ts = normalize_timestamp(str(raw_ts)) if raw_ts else None
    except ValueError:
        ts = None
    if ts is None:
        return None
    labels = as_mapping(entry.get("labels"))
    res_labels = as_mapping(as_mapping(entry.get("resource")).get("labels"))
    task = (
        res_labels.get("task_name")
        or labels.get("task_name")
        or labels.get("ml.googleapis.com/task_name")
        or "unknown_task"
    )
    trial = labels.get("trial_id") or labels.get("ml.googleapis.com/trial_id")
    return LogLine(
        timestamp=ts,
        insert_id=str(entry.get("insertId") or ""),
        task_name=task_from_vertex(str(task)),
        severity=_severity(entry.get("severity")),
        text=_text(entry),
        trial_id=str(trial) if trial is not None else None,
    )


def _call_error(exc: Any) -> ApiCallError:
    """From a google.api_core GoogleAPICallError, with the server's own status and message."""
    code = int(getattr(exc, "code", 0) or 0)
    response = getattr(exc, "response", None)
    try:
        err = response.json()["error"]  # type: ignore[union-attr]
    except (ValueError, KeyError, TypeError, AttributeError):
        err = None
    status, message, violations = rpc_error_parts(
        err, "UNKNOWN", str(getattr(exc, "message", "") or exc)
    )
    return ApiCallError(message, code, status, violations)


def logging_request(connection: Connection, project: str) -> Callable[..., Any]:
    """google-cloud-logging's HTTP ``api_request`` on ``connection``'s logging endpoint.

    Every read of entries goes through it (``LogStream``, the search over every job), so they
    all send the same credentials, user agent and endpoint, and read errors the same way.
    """
    from google.cloud import logging as gcl

    client = gcl.Client(  # type: ignore[no-untyped-call]
        project=project,
        credentials=connection.credentials,
        _use_grpc=False,
        client_options={"api_endpoint": connection.logs_endpoint.rstrip("/")},
    )
    request: Callable[..., Any] = client.logging_api.api_request
    return request


def call_logging(
    request: Callable[..., Any], path: str, body: dict[str, Any], timeout: float
) -> dict[str, Any]:
    """One POST through ``request`` (``logging_request``); every failure as an
    ``ApiCallError`` with the server's status and message (an INVALID_ARGUMENT filter keeps
    the service's "Invalid filter: ..." words)."""
    from google.api_core import exceptions as gexc
    from google.auth import exceptions as auth_exc
    from requests import RequestException

    try:
        resp = request(method="POST", path=path, data=body, timeout=timeout)
    except gexc.GoogleAPICallError as exc:
        raise _call_error(exc) from None
    except auth_exc.RefreshError as exc:
        raise ApiCallError(f"Cannot get credentials: {exc}", 401, "UNAUTHENTICATED") from None
    except (RequestException, auth_exc.TransportError, OSError) as exc:
        raise ApiCallError(f"The logging service does not answer: {exc}") from None
    except ValueError as exc:
        raise ApiCallError(
            f"The logging service sent a malformed answer: {exc}", 502, "UNKNOWN"
        ) from None
    if not isinstance(resp, dict):
        raise ApiCallError("The logging service sent a malformed answer.", 502, "UNKNOWN")
    return resp


class LogStream:
    """The log lines of one job (optionally one replica, one trial), read forwards and back.

    ``poll`` reads what is new since the newest line taken; ``older`` reads history before the
    oldest line taken; ``tail`` starts near the end instead of at the beginning. A failed call
    raises ``ApiCallError`` and moves no cursor, so a retry neither loses nor repeats a line.
    ``poll``/``tail`` belong to one thread (``follow``'s); ``older`` may run in another.
    """

    def __init__(
        self,
        connection: Connection,
        project: str,
        job_id: str,
        task_name: str | None = None,
        trial_id: str | None = None,
        settle_seconds: float = 0.0,
        page_size: int = PAGE_SIZE,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        recent_ids: int = RECENT_IDS,
        batch_limit: int | None = None,
        end_grace_seconds: float = END_GRACE_SECONDS,
        ordered_ties: bool | None = None,
        job: Mapping[str, Any] | None = None,
    ) -> None:
        """``job`` (the Job as read) is needed on Vertex AI: its entries carry the numeric id
        and ``workerpoolN-i`` task names, not the jobId and ``master-replica-0``."""
        self.project = project
        self.job_id = job_id
        self.task_name = task_name
        self.trial_id = trial_id
        self.settle_seconds = settle_seconds
        self.page_size = page_size
        self.timeout = timeout
        self.batch_limit = batch_limit
        self.end_grace_seconds = end_grace_seconds
        """At most this many lines per ``poll`` (None: all), so a huge backlog comes in parts."""
        self.ordered_ties = connection.local if ordered_ties is None else ordered_ties
        """The server orders entries of equal timestamp by insertId (the local service does;
        Cloud Logging does not promise it). Then a batch cut inside such a group needs no second
        read: under a flood a group holds thousands of lines, and that read doubled each poll."""
        self._request: Callable[..., Any] = logging_request(connection, project)
        self.fast = connection.local and self.ordered_ties
        """Read through the local service's ``entries:follow``; False once it answered 404."""
        if connection.vertex:
            log_id = str(as_mapping((job or {}).get(VERTEX_FIELD)).get("id") or job_id)
            # gcloud's Vertex filter (command_lib/ai/log_util.py): the job's numeric id.
            clauses = ['resource.type="ml_job"', f"resource.labels.job_id={_quote(log_id)}"]
            if task_name:
                clauses.append(f"resource.labels.task_name={_quote(task_to_vertex(task_name))}")
        else:
            clauses = [
                '(resource.type="ml_job" OR resource.type="cloudml_job")',
                f"resource.labels.job_id={_quote(job_id)}",
            ]
            if task_name:
                t = _quote(task_name)
                clauses.append(f"(resource.labels.task_name={t} OR labels.task_name={t})")
        if trial_id:
            clauses.append(f'labels."ml.googleapis.com/trial_id"={_quote(trial_id)}')
        self.base_filter = " AND ".join(clauses)
        self._lock = threading.Lock()
        self._newest: tuple[str, str] | None = None
        self._oldest: tuple[str, str] | None = None
        self._recent: deque[str] = deque(maxlen=recent_ids)
        self._recent_set: set[str] = set()
        self._end_time: float | None = None
        self._end_seen: float | None = None
        self._finished = False
        self._skip_request = threading.Event()

    # -- state -------------------------------------------------------------------------------

    @property
    def newest(self) -> tuple[str, str] | None:
        """Key of the newest line taken (where ``poll`` resumes); None before any."""
        return self._newest

    @property
    def oldest(self) -> tuple[str, str] | None:
        """Key of the oldest line taken (where ``older`` reads back from); None before any."""
        return self._oldest

    @property
    def finished(self) -> bool:
        """True once a poll found nothing new after the job (a trial's lines: the trial) had
        ended (gcloud's rule).

        "After" means the poll started ``end_grace_seconds`` after ``note_job`` first saw the
        endTime and, with settling, read past the endTime.
        """
        return self._finished

    def note_job(self, job: dict[str, Any]) -> None:
        """Learn when the lines end from the Job resource (jobs.get): the job's ``endTime``, or
        for one trial's lines the trial's own (``trainingOutput.trials``).

        A trial that ended writes no more lines while its job runs on with the other trials,
        so waiting for the job's end kept the trial's pane following for nothing. The job's end
        still counts for a trial not (yet) marked ended: nothing writes after the job ends.
        """
        end = job.get("endTime")
        if self.trial_id:
            end = as_mapping(trial_of(job, self.trial_id)).get("endTime") or end
        if end and self._end_time is None:
            try:
                self._end_time = _epoch_seconds(str(end))
            except ValueError:
                self._end_time = time.time()
            self._end_seen = time.monotonic()

    @property
    def job_ended(self) -> bool:
        """An ``endTime`` was seen: the job's, or for a trial's lines the trial's."""
        return self._end_time is not None

    # -- requests ----------------------------------------------------------------------------

    def _upper_bound(self) -> tuple[str, float] | None:
        if self.settle_seconds <= 0:
            return None
        now = time.time() - self.settle_seconds
        text = datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        return f"timestamp<{_quote(text)}", now

    def _filter(self, cursor: str, upper: str | None = None) -> str:
        return " AND ".join(c for c in (self.base_filter, cursor, upper) if c)

    def _call(self, path: str, body: dict[str, Any], timeout: float) -> dict[str, Any]:
        """One POST; every failure as an ``ApiCallError`` with the server's status."""
        return call_logging(self._request, path, body, timeout)

    def _fetch(
        self, filter_text: str, descending: bool = False, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """Every entry matching (up to ``limit``), following nextPageToken."""
        out: list[dict[str, Any]] = []
        token: str | None = None
        while True:
            size = self.page_size if limit is None else min(self.page_size, limit - len(out))
            body: dict[str, Any] = {
                "resourceNames": [f"projects/{self.project}"],
                "filter": filter_text,
                "orderBy": "timestamp desc" if descending else "timestamp asc",
                "pageSize": size,
            }
            if token:
                body["pageToken"] = token
            resp = self._call("/entries:list", body, self.timeout)
            entries = resp.get("entries") or []
            out.extend(e for e in entries if isinstance(e, dict))
            token = resp.get("nextPageToken") or None
            if token is None or (limit is not None and len(out) >= limit):
                return out if limit is None else out[:limit]

    def _fetch_fast(
        self, filter_text: str, descending: bool, limit: int | None, wait: float = 0.0
    ) -> list[LogLine] | None:
        """``_fetch`` through ``entries:follow``, as lines in the server's order; None when the
        service has no such route (then ``entries:list`` from now on)."""
        out: list[LogLine] = []
        token: str | None = None
        while True:
            size = FAST_PAGE_SIZE if limit is None else min(FAST_PAGE_SIZE, limit - len(out))
            body: dict[str, Any] = {
                "resourceNames": [f"projects/{self.project}"],
                "filter": filter_text,
                "orderBy": "timestamp desc" if descending else "timestamp asc",
                "pageSize": size,
                "rowFormat": "numeric",  # a service that predates it sends text: both are read
            }
            if token:
                body["pageToken"] = token
            elif wait > 0:
                body["waitSeconds"] = wait
            try:
                resp = self._call("/entries:follow", body, self.timeout + wait)
            except ApiCallError as exc:
                if exc.status_code in (404, 405, 501) and not out:
                    self.fast = False  # an older service: entries:list is the contract
                    return None
                raise
            rows = resp.get("rows")
            if not isinstance(rows, list):
                raise ApiCallError("The logging service sent a malformed answer.", 502, "UNKNOWN")
            try:
                out.extend(_row_lines(rows))
            except (TypeError, ValueError) as exc:
                raise ApiCallError(
                    f"The logging service sent a malformed answer: {exc}", 502, "UNKNOWN"
                ) from None
            token = resp.get("nextPageToken") or None
            if token is None or (limit is not None and len(out) >= limit):
                return out if limit is None else out[:limit]

    def _lines(self, entries: list[dict[str, Any]]) -> list[LogLine]:
        lines = [line for e in entries if (line := to_line(e)) is not None]
        lines.sort(key=_KEY)
        return lines

    def _remember(self, lines: list[LogLine]) -> None:
        if self.fast:
            return  # exact cursors over unique ids (see _unseen): nothing to remember
        for line in lines:
            if len(self._recent) == self._recent.maxlen:
                self._recent_set.discard(self._recent[0])
            self._recent.append(line.insert_id)
            self._recent_set.add(line.insert_id)

    def _unseen(self, lines: list[LogLine]) -> list[LogLine]:
        """``lines`` less those already taken.

        On the local fast path, ``self.fast`` still set after a read means ``entries:follow``
        served it: the service filters by the exact (timestamp, insertId) cursor and its
        insertIds are row ids, so a read never repeats a line and this is the identity (the
        bookkeeping cost ~1.5 µs a line, a sixth of the client's work in a flood).
        """
        if self.fast:
            return lines
        out: list[LogLine] = []
        batch: set[str] = set()
        for line in lines:
            if line.insert_id in self._recent_set or line.insert_id in batch:
                continue
            batch.add(line.insert_id)
            out.append(line)
        return out

    # -- reading -----------------------------------------------------------------------------

    def _window(
        self,
        cursor: tuple[str, str] | None,
        descending: bool,
        limit: int | None,
        wait: float = 0.0,
    ) -> tuple[list[LogLine], float | None]:
        """Lines after ``cursor`` (before it when ``descending``), nearest first, up to ``limit``.

        Returns the lines in ascending (timestamp, insertId) order, and the upper time bound
        the read used (None without settling).
        """
        if limit is not None and limit <= 0:
            return [], None
        if cursor is None:
            where = f"timestamp>={_quote(EPOCH)}"
        else:
            ts, iid = (_quote(v) for v in cursor)
            op = "<" if descending else ">"
            where = f"((timestamp={ts} AND insertId{op}{iid}) OR timestamp{op}{ts})"
        bound = self._upper_bound()
        flt = self._filter(where, bound[0] if bound else None)
        fast = self._fetch_fast(flt, descending, limit, wait) if self.fast else None
        if fast is not None:
            # The local service orders ties by insertId (``ordered_ties``): no cut to mend.
            lines = fast[::-1] if descending else fast
        elif limit is None:
            lines = self._lines(self._fetch(flt, descending))
        else:
            # One more than asked: if it shares the timestamp of the last one, the cut fell
            # inside a group of equal timestamps, which the cloud does not order by insertId.
            # Then read the rest of that group on our side of the cut as well, and cut by
            # (timestamp, insertId) here.
            entries = self._fetch(flt, descending, limit + 1)
            lines = sorted(self._lines(entries), key=_KEY, reverse=descending)
            edge = None if self.ordered_ties else _edge_timestamp(entries, limit)
            if edge is not None:
                group = [ln.insert_id for ln in lines if ln.timestamp == edge]
                far = min(group) if descending else max(group)
                op = ">" if descending else "<"
                more = self._lines(
                    self._fetch(f"{flt} AND timestamp={_quote(edge)} AND insertId{op}{_quote(far)}")
                )
                by_id = {ln.insert_id: ln for ln in [*lines, *more]}
                lines = sorted(by_id.values(), key=_KEY, reverse=descending)
            lines = sorted(lines[:limit], key=_KEY)
        if cursor is not None and fast is None:
            lines = [ln for ln in lines if (ln.key < cursor if descending else ln.key > cursor)]
        return lines, bound[1] if bound else None

    def poll(self, limit: int | None = None, wait: float = 0.0) -> list[LogLine]:
        """Every line since the newest one taken, in (timestamp, insertId) order.

        Args:
            limit: At most this many lines (default: the stream's ``batch_limit``, else all);
                the next poll continues after the last one returned.
            wait: On the fast path, let the server wait up to this long for a first new line
                (a long poll); ignored elsewhere.

        Raises:
            ApiCallError: the call failed; nothing changed, so the next poll retries it.
        """
        with self._lock:
            newest = self._newest
        seen = self._end_seen
        ended_before = seen is not None and time.monotonic() - seen >= self.end_grace_seconds
        lines, bound = self._window(newest, False, limit or self.batch_limit, wait)
        with self._lock:
            fresh = self._unseen(lines)
            self._remember(fresh)
            if lines:
                self._newest = lines[-1].key
                if self._oldest is None:
                    self._oldest = lines[0].key
        # With settling, the empty poll must also have covered the moment the job ended.
        end = self._end_time
        if not lines and ended_before and end is not None and (bound is None or bound > end):
            self._finished = True
        return fresh

    def start_before(self, key: tuple[str, str]) -> None:
        """Put the history cursor at ``key``: the next :meth:`older` returns the lines before it.

        For a view that already holds lines another stream fetched.
        """
        with self._lock:
            self._oldest = key

    def start_after(self, key: tuple[str, str]) -> None:
        """Put the forward cursor at ``key``: the next :meth:`poll` returns the lines after it.

        For the lines that follow one line found elsewhere (a search hit's context).
        """
        with self._lock:
            self._newest = key

    def older(self, limit: int) -> list[LogLine]:
        """The ``limit`` lines just before the oldest line taken, in ascending order.

        For history on demand (the user scrolled to the top). Empty before any line was taken,
        and once the beginning of the log is reached.

        Raises:
            ApiCallError: the call failed; nothing changed.
        """
        with self._lock:
            oldest = self._oldest
        if oldest is None:
            return []
        lines, _ = self._window(oldest, True, max(0, limit))
        with self._lock:
            if lines and (self._oldest is None or lines[0].key < self._oldest):
                self._oldest = lines[0].key
            self._remember(lines)
        return lines

    def tail(self, limit: int) -> list[LogLine]:
        """Start near the end: the last ``limit`` lines, ascending; ``poll`` continues after them.

        Call it instead of the first ``poll`` so that opening a huge job's logs reads one page,
        not all of them; ``older`` then reads back from the first line returned.

        Raises:
            ApiCallError: the call failed; nothing changed.
        """
        lines, _ = self._window(None, True, max(0, limit))
        with self._lock:
            if lines:
                self._newest = lines[-1].key
                self._oldest = lines[0].key
            self._remember(lines)
        return lines

    def _full(self, lines: list[LogLine]) -> bool:
        """Whether a read returned a whole batch: more lines wait behind it."""
        return self.batch_limit is not None and 0 < self.batch_limit <= len(lines)

    def _should_skip(
        self,
        on_skip: Callable[[list[LogLine]], object] | None,
        backlog: bool,
        may_skip: Callable[[], bool],
    ) -> bool:
        """Whether ``follow`` jumps to the tail now (``follow_rule.should_skip_ahead``), given
        whether a full batch showed that lines wait; a ``G`` it acts on is consumed."""
        if on_skip is None or not backlog:
            return False
        requested = self._skip_request.is_set()
        if (
            not should_skip_ahead(
                self.batch_limit or 0, self.batch_limit, self.behind_seconds(), requested
            )
            or not may_skip()
        ):
            return False
        self._skip_request.clear()
        return True

    def request_skip(self) -> None:
        """The reader wants the newest line now (``G``): ``follow`` jumps to the tail at its next
        poll if lines are waiting, instead of draining them. Any thread may call it."""
        self._skip_request.set()

    def behind_seconds(self) -> float:
        """How far the newest line taken is behind the newest the server can have (with settling,
        ``settle_seconds`` ago); 0 before any line."""
        newest = self._newest
        if newest is None:
            return 0.0
        try:
            return time.time() - self.settle_seconds - _epoch_seconds(newest[0])
        except ValueError:
            return 0.0

    def skip_to_tail(self, limit: int) -> tuple[list[LogLine], bool]:
        """Jump past a backlog: the last ``limit`` lines, ascending, ``poll`` continuing after them.

        Returns:
            The lines newer than the newest taken, and whether lines between were skipped (the
            tail did not reach back to the newest line taken). Without a skip the lines simply
            come next, like a poll's.

        Raises:
            ApiCallError: the call failed; nothing changed.
        """
        with self._lock:
            newest = self._newest
        lines, _ = self._window(None, True, max(0, limit))
        fresh = lines if newest is None else [ln for ln in lines if ln.key > newest]
        skipped = newest is not None and len(fresh) == len(lines) > 0
        with self._lock:
            fresh = self._unseen(fresh)
            self._remember(fresh)
            if fresh:
                self._newest = fresh[-1].key
        return fresh, skipped

    # -- the loop ------------------------------------------------------------------------------

    def follow(
        self,
        stop: threading.Event,
        on_lines: Callable[[list[LogLine]], object],
        job: Callable[[], dict[str, Any]],
        interval: Callable[[], float],
        on_error: Callable[[ApiCallError | None], object],
        on_skip: Callable[[list[LogLine]], object] | None = None,
        may_skip: Callable[[], bool] = lambda: True,
    ) -> None:
        """Poll until the job has ended and its logs are drained, or until ``stop`` is set.

        With ``on_skip`` (a pane; never ``jobs logs``, which prints every line), a backlog that
        ``follow_rule.should_skip_ahead`` says to leave (the newest line taken is more than
        ``MAX_BEHIND_SECONDS`` old, or the reader asked through ``request_skip``) is jumped over
        while ``may_skip()`` holds: the tail goes to ``on_skip`` instead of ``on_lines``, and the
        lines between are left for history. A backlog is known from a full batch, so the jump
        comes before the next read: no batch is read only to be dropped.
        On the local fast path an empty poll waits on the server (a long poll) rather than here.

        Non-empty batches go to ``on_lines``. Until it shows an endTime, the job is read through
        ``job()`` every ``JOB_REFRESH_SECONDS`` and after each empty poll. A poll or job read
        that failed for the moment (``ApiCallError.transient``: nothing answered, 408, 429,
        5xx) goes to ``on_error(exc)``, then the loop waits ``BACKOFF_SECONDS`` (0.5 s
        doubling to 10 s) and resumes from the same cursor; the first success after failures
        calls ``on_error(None)``. ``interval()`` is read before each wait (fast while the view is
        visible, slow while hidden).

        Raises:
            ApiCallError: a failure that is not transient (NOT_FOUND, PERMISSION_DENIED...):
                the server's decision, which asking again would only repeat for ever.
        """
        failures = 0
        last_job_read = float("-inf")
        refresh = True
        long_poll = False
        backlog = False
        skipped: list[LogLine] | None = None
        while not stop.is_set():
            try:
                due = refresh or time.monotonic() - last_job_read >= JOB_REFRESH_SECONDS
                if due and not self.job_ended:
                    self.note_job(job())
                    last_job_read = time.monotonic()
                    refresh = False
                skipped = None
                waited = 0.0
                # Lines wait when the last read was a full batch: decide before reading the
                # next one whether to jump over them, rather than read a batch and drop it.
                if self._should_skip(on_skip, backlog, may_skip):
                    lines, gap = self.skip_to_tail(self.batch_limit or 0)
                    if gap:
                        skipped = lines
                else:
                    # After an empty poll, the next one waits on the server for a new line (the
                    # fast path's long poll), except once the job has ended: then it decides
                    # the end.
                    wait = 0.0
                    if long_poll and self.fast and not self.job_ended:
                        wait = min(max(0.0, interval()), LONG_POLL_SECONDS)
                    started = time.monotonic()
                    lines = self.poll(wait=wait)
                    waited = time.monotonic() - started if wait else 0.0
                    # G while no backlog was known: this read shows whether lines wait.
                    full = self._full(lines)
                    if self._skip_request.is_set() and self._should_skip(on_skip, full, may_skip):
                        tail, gap = self.skip_to_tail(self.batch_limit or 0)
                        if gap:
                            skipped = tail
                        else:
                            lines += tail
                    self._skip_request.clear()  # a G with no backlog behind it is done
            except ApiCallError as exc:
                if not exc.transient:
                    raise
                on_error(exc)
                delay = BACKOFF_SECONDS[min(failures, len(BACKOFF_SECONDS) - 1)]
                failures += 1
                stop.wait(delay)
                continue
            if failures:
                failures = 0
                on_error(None)
            if skipped is not None and on_skip is not None:
                on_skip(skipped)
                lines = skipped
            elif lines:
                on_lines(lines)
            if self._finished:
                return
            # After an empty poll, read the job before the next one: if it has ended, that
            # next poll decides (it sees every line written before the end).
            refresh = not lines
            backlog = self._full(lines)
            if backlog:
                continue  # take the next batch at once while the view shows this one
            long_poll = not lines
            stop.wait(max(0.0, interval() - waited))


def _row_lines(rows: list[Any]) -> list[LogLine]:
    """``entries:follow`` rows, ``[insertId, timestamp, task, trial, severity, message]``.

    With ``"rowFormat": "numeric"`` the service sends the row id and the microseconds since the
    epoch as numbers: the date part of a timestamp is formatted once per second (a flood writes
    thousands of lines in each). A service that predates it sends the canonical nine-digit
    timestamps; anything else goes through the general readers. Per line this is most of the
    client's work in a flood.

    Raises:
        ValueError: a row that is not one (the caller reports a malformed answer).
    """
    out: list[LogLine] = []
    append = out.append
    second: int | None = None
    date = ""
    for insert_id, ts, task, trial, severity, text in rows:
        if type(ts) is int:
            whole, micros = divmod(ts, 1_000_000)
            if whole != second:
                date, second = _utc_second(whole), whole
            ts = f"{date}.{micros:06d}000Z"
        elif not (isinstance(ts, str) and len(ts) == 30 and ts[-1] == "Z"):
            ts = normalize_timestamp(str(ts))
        if type(insert_id) is int:
            if insert_id < 0:
                raise ValueError(f"a negative row id: {insert_id}")
            insert_id = f"{insert_id:018d}"
        if type(severity) is not int:
            severity = _severity(severity)
        append(LogLine(ts, str(insert_id), str(task), severity, str(text), trial))
    return out


def _utc_second(seconds: int) -> str:
    """``YYYY-MM-DDTHH:MM:SS`` of a second since the epoch, UTC (ValueError out of range)."""
    if not 0 <= seconds < _YEAR_10000:
        raise ValueError(f"a timestamp out of range: {seconds} s since the epoch")
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S")


def _edge_timestamp(entries: list[dict[str, Any]], limit: int) -> str | None:
    """The timestamp at the cut (entry ``limit``) when entry ``limit + 1`` shares it."""
    if len(entries) <= limit:
        return None
    lines = [to_line(e) for e in entries[limit - 1 : limit + 1]]
    if lines[0] is None or lines[1] is None or lines[0].timestamp != lines[1].timestamp:
        return None
    return lines[0].timestamp


def cloud_settle(local: bool) -> float:
    """The ``settle_seconds`` to use: 0 for the local service, gcloud's 5 s for the cloud."""
    return 0.0 if local else CLOUD_SETTLE_SECONDS
