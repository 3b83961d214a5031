"""Logging v2 ``entries:list`` over the log store, answered as Cloud Logging did for ml v1 jobs.

The request: ``resourceNames`` (``projects/P``; the deprecated ``projectIds`` too), ``filter``,
``orderBy`` (``timestamp asc``, the default, or ``timestamp desc``), ``pageSize`` (default 50;
gcloud asks for 1000) and ``pageToken``; the answer ``{"entries": [...], "nextPageToken": ...}``,
or ``{}`` when nothing matches.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from typing import Any, Final

from tui_app.local.errors import ApiError, checked, invalid_field
from tui_app.local.logs.log_index import indexed_upto
from tui_app.local.logs.log_limits import DEFAULT_SCAN_SECONDS
from tui_app.local.logs.log_query import Driven, compile_driven, compile_log_filter
from tui_app.local.page_tokens import NOT_OURS, decode_page_token, encode_page_token, fingerprint
from tui_app.local.paths import project_error
from tui_app.local.store import LogStore
from tui_app.local.timefmt import log_time
from tui_app.model.filters.filter_expr import FilterSyntaxError
from tui_app.model.logs.severity import severity_name

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 1000
MAX_FOLLOW_PAGE_SIZE = 10_000
"""``entries:follow``'s largest page: two of a log pane's 5,000-line batches."""
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_COLUMNS = (
    "id, project, job_id, task_name, trial_id, log_name, ts_us, receive_us, severity, message"
)
_FOLLOW_ROW = (
    "json_array(printf('%018d', id),"
    " strftime('%Y-%m-%dT%H:%M:%S', ts_us / 1000000, 'unixepoch')"
    " || printf('.%06d000Z', ts_us % 1000000), task_name, trial_id, severity, message)"
)
"""``entries:follow``'s row as JSON text, built by SQLite: the values ``follow_entries`` builds
in Python (``ts_us`` is never negative: the log writer stamps entries with the clock)."""
_FOLLOW_ROW_NUMERIC = "json_array(id, ts_us, task_name, trial_id, severity, message)"
"""The same with ``"rowFormat": "numeric"``: the row id and microseconds as numbers. Formatting
them (``strftime`` above all) was a third of a page's time in SQLite; the client formats a
timestamp's date once per second of a flood."""
ROW_FORMATS: Final = ("text", "numeric")
FIRST_ANSWER_SECONDS = 0.025
"""A page over every job that found something answers after this long, full or not: the
newest hits reach a person at once while the rest are read page by page."""
_SCAN_SECONDS_PER_ID = 1e-6
"""About what reading a row and checking a text on it costs here (a million a second): an index
read of a range slower than that gives way to the scan (``_ranged_rows``)."""
_FIRST_RANGE_IDS = 4_096
_MOST_RANGE_IDS = 262_144
"""Ranges are read from the first size, doubling up to the second: the newest lines come back at
once, and a long read checks its time every quarter second or so (about a million lines a
second here)."""


def _projects(body: dict[str, Any]) -> list[str]:
    names = body.get("resourceNames")
    ids = body.get("projectIds")
    projects: list[str] = []
    if names is not None:
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise invalid_field("resourceNames", "resourceNames must be a list of strings.")
        for n in names:
            kind, _, project = n.partition("/")
            if kind != "projects" or not project or "/" in project:
                raise invalid_field(
                    "resourceNames",
                    f"{n[:80]!r} is not supported; use projects/PROJECT_ID.",
                )
            projects.append(project)
    if ids is not None:
        if not isinstance(ids, list) or not all(isinstance(n, str) for n in ids):
            raise invalid_field("projectIds", "projectIds must be a list of strings.")
        projects += ids
    if not projects:
        raise invalid_field("resourceNames", 'resourceNames is required, e.g. ["projects/P"].')
    for p in projects:
        checked("resourceNames", p, project_error)
    return sorted(set(projects))


def _int_field(body: dict[str, Any], name: str, default: int) -> int:
    value = body.get(name, default)
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise invalid_field(name, f"{name} must be an integer.")
    try:
        return int(value)
    except ValueError:
        raise invalid_field(name, f"{name} must be an integer.") from None


def entry_json(row: tuple[Any, ...]) -> dict[str, Any]:
    """One stored row as a LogEntry, shaped like AI Platform's.

    gcloud's ``--task-name`` filters on ``resource.labels.task_name``, so the task is there as
    well as in the ``ml.googleapis.com/`` labels; google-cloud-logging requires ``logName`` and
    timestamps ending in ``Z``. The insertId is the row id zero-padded to 18 digits, so that it
    orders as a string the way it does as a number.
    """
    rid, project, job_id, task, trial, log_name, ts_us, recv_us, sev, message = row
    labels = {"ml.googleapis.com/task_name": task}
    if trial is not None:
        labels["ml.googleapis.com/trial_id"] = trial
    return {
        "insertId": f"{rid:018d}",
        "logName": log_name,
        "resource": {
            "type": "ml_job",
            "labels": {"project_id": project, "job_id": job_id, "task_name": task},
        },
        "timestamp": log_time(ts_us),
        "receiveTimestamp": log_time(recv_us),
        "severity": severity_name(sev),
        "labels": labels,
        "jsonPayload": {"message": message},
    }


def _watermark(store: LogStore) -> int:
    """The full-text index's watermark, read as the page's query will see the store."""
    try:
        return indexed_upto(store.reader())
    except sqlite3.OperationalError as exc:
        raise ApiError("UNAVAILABLE", f"The log store is busy, retry: {exc}") from None


def list_entries(
    store: LogStore, body: object, scan_seconds: float = DEFAULT_SCAN_SECONDS
) -> dict[str, Any]:
    """Answer one entries:list request (blocking: run it in a thread).

    ``scan_seconds`` bounds a page over every job (``_ranged_rows``): past it the page holds
    what was found, maybe nothing, and a ``nextPageToken`` to go on, as Cloud Logging answered
    a long search."""
    page = _Page.read(body, MAX_PAGE_SIZE, _watermark(store))
    rows, token = _select(store, page, scan_seconds)
    resp: dict[str, Any] = {}
    if rows:
        resp["entries"] = [entry_json(r) for r in rows]
    if token:
        resp["nextPageToken"] = token
    return resp


def follow_entries(store: LogStore, body: object) -> tuple[bytes, int]:
    """Answer one ``entries:follow`` request: ``entries:list``'s entries, as compact rows.

    The local service's fast path for a log pane (``docs/wire-formats.md``): the same body,
    filter, order and page tokens as ``entries:list``, pages of up to ``MAX_FOLLOW_PAGE_SIZE``,
    and each entry as ``[insertId, timestamp, task_name, trial_id, severity, message]``
    (the timestamp with nine fraction digits, the severity a number; with ``"rowFormat":
    "numeric"`` the insertId is the row id and the timestamp microseconds, as numbers). A
    LogEntry's JSON is five times its message and took most of a page's time to build, send and
    parse. Encoded here (in the caller's thread), not on the event loop; by SQLite itself where
    it has JSON functions (``_joined_rows``).

    Returns:
        The JSON body, and how many entries it holds (0: the caller may wait and ask again).
    """
    page = _Page.read(body, MAX_FOLLOW_PAGE_SIZE, _watermark(store))
    fmt = body.get("rowFormat") if isinstance(body, dict) else None
    fmt = "text" if fmt is None else fmt  # JSON null is the default, as absent
    if fmt not in ROW_FORMATS:
        raise invalid_field(
            "rowFormat", f"rowFormat must be one of {', '.join(map(repr, ROW_FORMATS))}."
        )
    numeric = fmt == "numeric"
    if store.has_json_functions:
        row_sql = _FOLLOW_ROW_NUMERIC if numeric else _FOLLOW_ROW
        text, count, token = _joined_rows(store, page, row_sql)
        tail = f',"nextPageToken":{json.dumps(token)}}}' if token else "}"
        return ('{"rows":[' + text + "]" + tail).encode(), count
    rows, token = _select(store, page)
    compact: list[tuple[Any, ...]]
    if numeric:
        compact = [(r[0], r[6], r[3], r[4], r[8], r[9]) for r in rows]
    else:
        # Timestamps with nine fraction digits: what the client keys lines by, so it need not
        # rewrite each one.
        compact = [
            (f"{r[0]:018d}", log_time(r[6])[:-1] + "000Z", r[3], r[4], r[8], r[9]) for r in rows
        ]
    resp: dict[str, Any] = {"rows": compact}
    if token:
        resp["nextPageToken"] = token
    return json.dumps(resp, separators=(",", ":")).encode(), len(rows)


@dataclass(frozen=True)
class _Page:
    """One page request, checked: which entries, in which order, from where, how many."""

    where: str
    """``project IN (...) AND (<the filter as SQL>)``."""
    args: list[Any]
    desc: bool
    size: int
    key: str
    """The fingerprint of (projects, filter, order) a page token must carry."""
    cursor: tuple[int, int] | None
    """(ts_us, id) of the last entry of the previous page."""
    driven: Driven | None = None
    """A text search over every job, read through the full-text index (``_ranged_rows``)."""
    indexed_upto: int = 0
    """The index's watermark when the page was asked for."""
    projects: tuple[str, ...] = ()
    scan: bool = False
    """Over every job, with no text term the index can drive: read by id ranges, bounded in
    time (``_ranged_rows``), as a ``Driven`` page is. The cursor is the id."""

    @classmethod
    def read(cls, body: object, max_size: int, indexed_upto: int | None = None) -> _Page:
        """``indexed_upto``: the full-text index's watermark, for text terms (``log_query``).

        Raises: ApiError (INVALID_ARGUMENT) naming the field that is wrong."""
        if not isinstance(body, dict):
            raise invalid_field("body", "The request body must be a JSON object.")
        projects = _projects(body)
        filter_text = body.get("filter") or ""
        if not isinstance(filter_text, str):
            raise invalid_field("filter", "filter must be a string.")
        order = body.get("orderBy") or "timestamp asc"
        if not isinstance(order, str) or order.strip().lower() not in (
            "timestamp",
            "timestamp asc",
            "timestamp desc",
        ):
            raise invalid_field("orderBy", 'orderBy must be "timestamp asc" or "timestamp desc".')
        desc = order.strip().lower() == "timestamp desc"
        size = _int_field(body, "pageSize", DEFAULT_PAGE_SIZE)
        size = DEFAULT_PAGE_SIZE if size <= 0 else min(size, max_size)
        driven = None
        try:
            where, params = compile_log_filter(filter_text)
            # Over every job the full-text index finds the rows; within one job its own index
            # does, and reading its rows beats the index's matches over every job.
            if indexed_upto is not None and "job_id" not in where:
                driven = compile_driven(filter_text)
                where, params = compile_log_filter(filter_text, indexed_upto)
        except (FilterSyntaxError, ValueError) as exc:
            raise invalid_field("filter", f"Invalid filter: {exc}") from None
        key = fingerprint(json.dumps([projects, filter_text, desc]))
        cursor: tuple[int, int] | None = None
        token = body.get("pageToken")
        if token:
            if not isinstance(token, str):
                raise invalid_field("pageToken", "pageToken must be a string.")
            data = decode_page_token(token)
            try:
                ts, rid, tkey = int(data["t"]), int(data["i"]), data["k"]
                if not (_INT64_MIN <= ts <= _INT64_MAX and _INT64_MIN <= rid <= _INT64_MAX):
                    raise ValueError("out of SQLite's integer range")
            except (ValueError, KeyError, TypeError, OverflowError):
                raise invalid_field("pageToken", NOT_OURS) from None
            if tkey != key:
                raise invalid_field(
                    "pageToken", "The page token was issued for a different filter or order."
                )
            cursor = (ts, rid)
        marks = ",".join("?" * len(projects))
        # A text search over every job: let the full-text index pick the rows (``+`` keeps
        # SQLite off the per-job index, which would read each of the project's lines to test it).
        scan = driven is None and indexed_upto is not None and "job_id" not in where
        column = "+project" if "log_text" in where or scan else "project"
        return cls(
            f"{column} IN ({marks}) AND ({where})",
            [*projects, *params],
            desc,
            size,
            key,
            cursor,
            driven,
            indexed_upto or 0,
            tuple(projects),
            scan,
        )

    @property
    def order(self) -> str:
        direction = "DESC" if self.desc else "ASC"
        return f" ORDER BY ts_us {direction}, id {direction} LIMIT ?"

    def parts(self, cursor: tuple[int, int] | None = None) -> list[tuple[str, list[Any]]]:
        """The WHERE clauses of the entries after ``cursor`` (default: the page's), in order.

        After a cursor there are two: the rest of its timestamp (an index seek on
        ``ts_us = ? AND id > ?``), then later timestamps. One ``(ts_us, id) > (?, ?)`` query
        walks every entry sharing the timestamp, which made deep pages of a flood 8x slower.
        """
        cursor = cursor or self.cursor
        if cursor is None:
            return [(self.where, self.args)]
        past = "<" if self.desc else ">"
        return [
            (f"{self.where} AND ts_us = ? AND id {past} ?", [*self.args, *cursor]),
            (f"{self.where} AND ts_us {past} ?", [*self.args, cursor[0]]),
        ]

    def token(self, ts_us: int, rid: int) -> str:
        return encode_page_token({"t": ts_us, "i": rid, "k": self.key})

    def cut(self, rows: list[tuple[Any, ...]]) -> tuple[list[tuple[Any, ...]], str | None]:
        """Up to ``size + 1`` rows (``_COLUMNS``) read for this page: the page's rows, and the
        token of the next page when the extra row says one follows."""
        if len(rows) <= self.size:
            return rows, None
        last = rows[self.size - 1]
        return rows[: self.size], self.token(last[6], last[0])


def _range_rows(
    conn: sqlite3.Connection,
    page: _Page,
    first: int,
    last: int,
    limit: int,
    scan: bool = False,
) -> list[tuple[Any, ...]]:
    """Up to ``limit`` rows of a ranged page with ids in [first, last], in the page's order.

    A ``Driven`` page reads the index's hits in the range (FTS5 seeks a rowid range), each
    checked against the rest of the filter; ids above the index's watermark (the last second's
    rows, or a store the index is still catching up with) are read by scan, and so is the
    whole range with ``scan``. A ``scan`` page reads the range's rows."""
    order = "DESC" if page.desc else "ASC"
    marks = ",".join("?" * len(page.projects))
    driven = page.driven
    if driven is None:
        sql = (
            f"SELECT {_COLUMNS} FROM log_entries WHERE id >= ? AND id <= ? AND {page.where}"
            f" ORDER BY id {order} LIMIT ?"
        )
        return conn.execute(sql, [first, last, *page.args, limit]).fetchall()
    upto = last if scan else page.indexed_upto
    runs: list[tuple[str, list[Any]]] = []
    if scan or last > upto:
        tail_sql = (
            f"SELECT {_COLUMNS} FROM log_entries WHERE id >= ? AND id <= ?"
            f" AND +project IN ({marks}) AND ({driven.tail[0]}) ORDER BY id {order} LIMIT ?"
        )
        tail_first = first if scan else max(first, upto + 1)
        runs.append((tail_sql, [tail_first, last, *page.projects, *driven.tail[1]]))
    if not scan and first <= upto:
        hits_sql = (
            f"SELECT {_COLUMNS} FROM (SELECT rowid AS hit FROM log_text WHERE log_text MATCH ?"
            f" AND rowid >= ? AND rowid <= ? ORDER BY rowid {order}) AS h"
            f" CROSS JOIN log_entries ON log_entries.id = h.hit"
            f" WHERE project IN ({marks}) AND ({driven.indexed[0]}) ORDER BY h.hit {order}"
            f" LIMIT ?"
        )
        bounds = [first, min(last, upto)]
        runs.append((hits_sql, [driven.match, *bounds, *page.projects, *driven.indexed[1]]))
    if not page.desc:
        runs.reverse()  # oldest first: the index's rows come before the newest
    rows: list[tuple[Any, ...]] = []
    for sql, args in runs:
        rows += conn.execute(sql, [*args, limit - len(rows)]).fetchall()
        if len(rows) >= limit:
            break
    return rows


def _index_narrows(conn: sqlite3.Connection, page: _Page, start: int) -> bool:
    """Whether a ``Driven`` page's index read is worth it, asked of the exact words.

    A word starting a longer one (the text's last word, ``loss`` in ``"NaN loss"``) is an
    FTS5 prefix query, and FTS5 merges the doclists of every word with that prefix whole for
    each read, a range or not: for a word in most lines that is slower than reading the rows
    (70 ms a range on 2M lines, growing with the store). The exact words' doclists are read by
    seeking, so counting them over the ``_FIRST_RANGE_IDS`` indexed ids nearest ``start``
    costs a few ms: where they are in most of those lines the index narrows nothing, and the
    page is read by scan from the start. False positives cost only a slower page."""
    driven = page.driven
    if driven is None or "*" not in driven.match:
        return True
    upto = page.indexed_upto
    last = min(start, upto) if page.desc else min(max(start, 1) + _FIRST_RANGE_IDS - 1, upto)
    first = max(1, last - _FIRST_RANGE_IDS + 1)
    if last < first:
        return True  # nothing indexed there: the tail is read by scan anyway
    cap = (last - first + 1) // 4
    sql = (
        "SELECT count(*) FROM (SELECT rowid FROM log_text WHERE log_text MATCH ?"
        " AND rowid >= ? AND rowid <= ? LIMIT ?)"
    )
    exact = driven.match.replace("*", "")
    (found,) = conn.execute(sql, [exact, first, last, cap]).fetchone()
    return int(found) < cap


def _ranged_rows(
    conn: sqlite3.Connection, page: _Page, budget_s: float
) -> tuple[list[tuple[Any, ...]], str | None]:
    """A page over every job (``Driven`` or ``scan``): id ranges read newest (or oldest)
    first (``_range_rows``) until the page is full, the store ends, or time is up.

    Without a job in the filter no index gives the timestamps' order, so SQLite read every
    matching line and sorted them before the first came back: about 10 s over 10 million lines
    for a word the index cannot narrow, as long for one whose candidates are most lines
    (``"NaN loss"``: ``loss`` starts a word in nearly every line). Ids and timestamps grow
    together (one writer stamps both, ``log_writer``), so an id range is a time range, and the
    rowid, or the index's rowid, reads it in order.

    Time is up at ``budget_s``, or sooner (``FIRST_ANSWER_SECONDS``) once something was found:
    the answer is the rows so far and a token that goes on where the reading stopped, even
    with no rows, as Cloud Logging answered a long search. A client that follows
    ``nextPageToken`` (gcloud, google-cloud-logging, the search view) gets the whole answer, a
    page at a time, each within the budget, and a person sees the newest hits at once.
    """
    # Apart: SQLite finds a lone min() or max() in the rowid's b-tree, both at once by a scan.
    low = conn.execute("SELECT min(id) FROM log_entries").fetchone()[0]
    high = conn.execute("SELECT max(id) FROM log_entries").fetchone()[0]
    if low is None or high is None:
        return [], None
    wanted = page.size + 1
    rows: list[tuple[Any, ...]] = []
    # [start, end]: the ids left to read, in the page's order; the cursor is "ids past this".
    if page.desc:
        start = min(high, page.cursor[1] - 1) if page.cursor else high
        end = low
    else:
        start = max(low, page.cursor[1] + 1) if page.cursor else low
        end = high
    began = time.monotonic()
    span = _FIRST_RANGE_IDS
    scan = page.driven is not None and not _index_narrows(conn, page, start)
    while (start >= end) if page.desc else (start <= end):
        if page.desc:
            first, last = max(end, start - span + 1), start
            start = first - 1
        else:
            first, last = start, min(end, start + span - 1)
            start = last + 1
        t0 = time.monotonic()
        rows += _range_rows(conn, page, first, last, wanted - len(rows), scan)
        if len(rows) >= wanted:
            break
        if not scan and page.driven is not None and last <= page.indexed_upto:
            # An index slower than reading the rows: a prefix of a word in most lines
            # (``"NaN loss"`` asks for words starting ``loss``), whose doclists FTS5 merges
            # whole for every range. The rest of the page is read by scan: the same rows.
            scan = time.monotonic() - t0 > (last - first + 1) * _SCAN_SECONDS_PER_ID
        span = min(span * 2, _MOST_RANGE_IDS)
        spent = time.monotonic() - began
        more = (start >= end) if page.desc else (start <= end)
        if more and (spent >= budget_s or (rows and spent >= FIRST_ANSWER_SECONDS)):
            return rows, page.token(0, start + 1 if page.desc else start - 1)
    return page.cut(rows)


def _select(
    store: LogStore, page: _Page, scan_seconds: float = DEFAULT_SCAN_SECONDS
) -> tuple[list[tuple[Any, ...]], str | None]:
    """The rows of one page (``_COLUMNS``) and the token of the next, if any."""
    rows: list[tuple[Any, ...]] = []
    try:
        conn = store.reader()
        if page.scan or page.driven is not None:
            return _ranged_rows(conn, page, scan_seconds)
        for where, args in page.parts():
            sql = f"SELECT {_COLUMNS} FROM log_entries WHERE {where}{page.order}"
            rows += conn.execute(sql, [*args, page.size + 1 - len(rows)]).fetchall()
            if len(rows) > page.size:
                break
    except sqlite3.OperationalError as exc:
        raise ApiError("UNAVAILABLE", f"The log store is busy, retry: {exc}") from None
    return page.cut(rows)


def _joined_rows(
    store: LogStore, page: _Page, row_sql: str = _FOLLOW_ROW
) -> tuple[str, int, str | None]:
    """A page of ``entries:follow`` rows as one JSON text (without brackets), its size, and
    the token of the next page, if any.

    SQLite builds each row (``_FOLLOW_ROW``) and joins them in one step of one query. Reading
    row by row, the thread gave up and took back Python's lock for every entry; while replicas
    flood, the log writer holds that lock and each take-back waits: a 10,000-entry page beside
    a busy Python thread took 129 ms row by row, 57 ms as one step (25 ms at rest either way).

    ``group_concat`` over an ordered, limited subquery joins the rows in the subquery's order:
    SQLite's behaviour (the subquery is not flattened into an aggregate), not the SQL
    standard's, so ``tests/service/test_follow_rows_sql.py`` compares every page with the
    Python path's, and ``test_log_follow_route.py`` with ``entries:list``.
    """
    texts: list[str] = []
    count = 0
    last: str | None = None
    edge = "min" if page.desc else "max"  # the page's last entry, as "ts_us:id" (both >= 0)
    try:
        conn = store.reader()
        for where, args in page.parts():
            inner = f"SELECT ts_us, id, {row_sql} AS j FROM log_entries WHERE {where}"
            sql = (
                f"SELECT count(*), group_concat(j, ','), {edge}(printf('%020d:%020d', ts_us, id))"
                f" FROM ({inner}{page.order})"
            )
            n, text, key = conn.execute(sql, [*args, page.size - count]).fetchone()
            if n:
                texts.append(text)
                count += n
                last = key
            if count >= page.size:
                break
        if count < page.size or last is None:
            return ",".join(texts), count, None
        ts_us, rid = (int(v) for v in last.split(":"))
        for where, args in page.parts((ts_us, rid)):
            if conn.execute(f"SELECT 1 FROM log_entries WHERE {where} LIMIT 1", args).fetchone():
                return ",".join(texts), count, page.token(ts_us, rid)
    except sqlite3.OperationalError as exc:
        raise ApiError("UNAVAILABLE", f"The log store is busy, retry: {exc}") from None
    return ",".join(texts), count, None
