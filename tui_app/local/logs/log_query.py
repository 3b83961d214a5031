"""Compile a Logging v2 `entries:list` filter into a SQLite WHERE clause over `log_entries`.

The local service stores log entries in SQLite (one row per entry; schema in
`compile_log_filter`'s docstring) and answers `entries:list` by running the filter as SQL, so
paging through a long job's logs uses the `ts_us` index instead of scanning every row in Python.

Choices that the Logging documentation leaves to us:

* Every stored entry has `resource.type` "ml_job", so comparisons on it become the constants
  `1` / `0`; gcloud's `(resource.type="ml_job" OR resource.type="cloudml_job")` costs nothing.
* A field our entries never carry (`labels.task_name`, any other `labels.*` or
  `resource.labels.*`, a NULL `trial_id`) is *missing*: every comparison with it is false except
  `!=`, which is true, as in Cloud Logging where `x != v` also matches entries without `x`.
  Every fragment is 0 or 1, never NULL, so `NOT` stays the exact complement of its operand.
* `timestamp` literals are parsed to nanoseconds and compared exactly against the microsecond
  column (`timestamp > L` is `ts_us > L // 1000`), so gcloud's resume cursor, which repeats the
  last timestamp it saw with `=` and `>`, neither skips nor repeats entries.
* `:` on text is a case-insensitive substring match; `field:*` (unquoted) tests presence.
  `:` on `severity` and `timestamp` is the same as `=`.
* `insertId` literals of digits compare numerically with `id` (on the wire the id is the
  18-digit zero-padded `printf('%018d', id)`, which orders the same way); any other literal
  compares as a string against that padded form.
* A bare search term (or `textPayload` / `jsonPayload.message`) searches the message text.
* `SEARCH("text")` and `SEARCH(field, "text")` (Cloud Logging's token search) match lines that
  hold every word of the text as a word, case-insensitively (a text in backticks: that phrase);
  the only text field is the message.

Given the full-text index's watermark (`indexed_upto`, `log_index.py`), a text term becomes
"its candidates from the index, or rows above the watermark, and the exact check": the same
lines as a scan (`model/logs/text_search.py` says why), found without reading every line.

User text only ever reaches SQLite as a `?` parameter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, TypeAlias

from tui_app.model.filters.filter_expr import (
    And,
    Compare,
    Node,
    Not,
    Or,
    Search,
    Text,
    parse_filter,
    parse_timestamp,
)
from tui_app.model.logs.severity import SEVERITIES, parse_severity, severity_name
from tui_app.model.logs.text_search import substring_candidates, token_query, token_spec

__all__ = [
    "MAX_SQL_NESTING",
    "SEVERITIES",
    "SUPPORTED_FIELDS",
    "Driven",
    "compile_driven",
    "compile_log_filter",
    "severity_name",
]

SUPPORTED_FIELDS: Final = (
    "resource.type",
    "resource.labels.project_id",
    "resource.labels.job_id",
    "resource.labels.task_name",
    'labels."ml.googleapis.com/task_name"',
    'labels."ml.googleapis.com/trial_id"',
    "logName",
    "severity",
    "insertId",
    "timestamp",
    "receiveTimestamp",
    "textPayload",
    "jsonPayload.message",
)
"""Fields a log filter may name (other `labels.*` / `resource.labels.*` keys are just missing)."""

RESOURCE_TYPE: Final = "ml_job"
"""The monitored-resource type of every stored entry."""

_INT64_MAX: Final = 2**63 - 1
_DIGITS = re.compile(r"[0-9]+", re.ASCII)
_PLAIN_SEGMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)
_INSERT_ID_SQL: Final = "printf('%018d', id)"

Sql: TypeAlias = tuple[str, list[object]]
MAX_SQL_NESTING: Final = 24
"""Deepest parenthesis nesting of generated SQL we hand to SQLite.

SQLite before 3.46 has a fixed parser stack that overflows at about 30 levels of
`(a AND (b OR ...))`; real filters nest two or three levels, so deeper ones are refused with a
ValueError instead of failing inside SQLite."""

WORDS_FUNCTION: Final = "log_words"
"""The SQL function (``text_search.words_match``, registered on every log store connection)
that checks ``SEARCH`` on the lines the index has not reached."""

_CHUNK: Final = 16
_TRUE: Final[Sql] = ("1", [])
_FALSE: Final[Sql] = ("0", [])


@dataclass(frozen=True, slots=True)
class _Column:
    """A column of `log_entries`; `kind` picks how literals are parsed and compared."""

    name: str
    kind: str  # "text", "severity", "insert_id" or "time"
    nullable: bool = False


@dataclass(frozen=True, slots=True)
class _Map:
    """A map field (`labels`, `resource.labels`): only `:` (key presence) applies to it."""

    name: str
    keys: dict[str, _Column]


class _Missing:
    """A field our entries never carry."""


_MISSING_FIELD: Final = _Missing()
_Field: TypeAlias = _Column | _Map | _Missing | str  # str: a constant value

_TASK_NAME = _Column("task_name", "text")
_RESOURCE_LABELS: Final = {
    "project_id": _Column("project", "text"),
    "job_id": _Column("job_id", "text"),
    "task_name": _TASK_NAME,
}
_ENTRY_LABELS: Final = {
    "ml.googleapis.com/task_name": _TASK_NAME,
    "ml.googleapis.com/trial_id": _Column("trial_id", "text", nullable=True),
}
_MESSAGE = _Column("message", "text")
_TOP_LEVEL: Final = {
    ("logName",): _Column("log_name", "text"),
    ("severity",): _Column("severity", "severity"),
    ("insertId",): _Column("id", "insert_id"),
    ("timestamp",): _Column("ts_us", "time"),
    ("receiveTimestamp",): _Column("receive_us", "time"),
    ("textPayload",): _MESSAGE,
    ("jsonPayload", "message"): _MESSAGE,
}


def compile_log_filter(text: str, indexed_upto: int | None = None) -> tuple[str, list[object]]:
    """Compile an `entries:list` filter into a WHERE fragment over `log_entries`.

    The table::

        CREATE TABLE log_entries (
          id INTEGER PRIMARY KEY,  -- insertId = printf('%018d', id)
          project TEXT NOT NULL, job_id TEXT NOT NULL, task_name TEXT NOT NULL,
          trial_id TEXT,           -- NULL when none
          log_name TEXT NOT NULL, ts_us INTEGER NOT NULL, receive_us INTEGER NOT NULL,
          severity INTEGER NOT NULL, message TEXT NOT NULL);

    Args:
        text: The filter, e.g. gcloud's
            `(resource.type="ml_job" OR resource.type="cloudml_job") AND ...`.
        indexed_upto: The full-text index's watermark (rows with a higher id are not in it);
            None: text terms and `SEARCH` read the rows they are given one by one.

    Returns:
        `(sql, params)`: a fragment for `WHERE <sql>` using `?` placeholders, and its parameters
        in order. An empty filter gives `("1", [])`.

    Raises:
        FilterSyntaxError: The filter is malformed.
        ValueError: It names an unsupported field, or a literal is not a valid severity or
            timestamp for its field.
    """
    node = parse_filter(text, search=True)
    if node is None:
        return "1", []
    sql, params = _compile(node, negated=False, index=indexed_upto)
    depth = _nesting(sql)
    if depth > MAX_SQL_NESTING:
        raise ValueError(
            f"Filter is nested too deeply for the log store ({depth} levels of parentheses"
            f" after simplification; at most {MAX_SQL_NESTING})"
        )
    low, high = _time_bounds(node, negated=False)
    if sql not in ("0", "1") and depth < MAX_SQL_NESTING and (low, high) != (None, None):
        ranges = [("ts_us >= ?", low), ("ts_us <= ?", high)]
        sql = " AND ".join([f"({sql})", *(term for term, v in ranges if v is not None)])
        params = [*params, *(v for _, v in ranges if v is not None)]
    return sql, list(params)


@dataclass(frozen=True)
class Driven:
    """A filter over every job whose rows the full-text index can hand out in id order, newest
    or oldest first, a page at a time: ``match`` picks the rows the index holds (its hits, in
    id order, stream without being collected first), ``indexed`` is the rest of the filter for
    them, ``tail`` the whole filter for the rows after the index's watermark. Built for a
    conjunction with a text term (``compile_driven``); ``entries`` runs it."""

    match: str
    indexed: Sql
    tail: Sql


def compile_driven(text: str) -> Driven | None:
    """The filter as a ``Driven`` one, or None when no text term drives it: none at the top
    level of an AND (under an OR or a NOT the index cannot pick the rows), or none with a word
    that narrows (``text_search``)."""
    node = parse_filter(text, search=True)
    if node is None:
        return None
    items = _flatten(node, False, True) if isinstance(node, And) else [(node, False)]
    for i, (item, negated) in enumerate(items):
        match = None if negated else _driving_query(item)
        if match is None:
            continue
        rest = [_compile(other, n) for j, (other, n) in enumerate(items) if j != i]
        if isinstance(item, Search):
            on_index, by_scan = _TRUE, _search(item, None)
        else:
            value = item.value if isinstance(item, Text | Compare) else ""
            on_index = by_scan = _substring(_MESSAGE.name, value)
        indexed, tail = _join([on_index, *rest], True), _join([by_scan, *rest], True)
        for sql, _ in (indexed, tail):
            if _nesting(sql) > MAX_SQL_NESTING:
                return None  # compile_log_filter's path refuses it with the reason
        return Driven(match, indexed, tail)
    return None


def _driving_query(node: Node) -> str | None:
    """The FTS5 query that finds ``node``'s candidates, when it can drive (see ``Driven``)."""
    if isinstance(node, Text):
        return substring_candidates(node.value)
    if isinstance(node, Search):
        if node.path is not None and _resolve(node.path) is not _MESSAGE:
            return None  # compile_log_filter refuses it
        return token_query(node.value)
    if isinstance(node, Compare) and node.op == ":" and not (node.value == "*" and not node.quoted):
        try:
            field = _resolve(node.path)
        except ValueError:
            return None
        if field is _MESSAGE:
            return substring_candidates(node.value)
    return None


def _compile(node: Node, negated: bool, index: int | None = None) -> Sql:
    """Compile `node` (or its negation) in negation normal form.

    NOTs are pushed down to the comparisons (De Morgan) and nested groups of the same kind are
    merged, so the SQL nests only where AND and OR alternate. That matters because SQLite's
    parser overflows at roughly 30 nested `(x AND (...))` levels, well inside what the filter
    grammar allows.
    """
    if isinstance(node, Not):
        return _compile(node.item, not negated, index)
    if isinstance(node, And | Or):
        conjunction = isinstance(node, And) != negated
        parts = [
            _compile(child, child_negated, index)
            for child, child_negated in _flatten(node, negated, conjunction)
        ]
        return _join(parts, conjunction)
    # The index narrows only where it is used positively (a NOT of it would read it all).
    narrow = None if negated else index
    if isinstance(node, Text):
        sql = _text(node.value, narrow)
    elif isinstance(node, Search):
        sql = _search(node, index)
    else:
        sql = _compile_compare(node, narrow)
    if not negated:
        return sql
    if sql[0] in ("0", "1"):
        return ("1" if sql[0] == "0" else "0"), []
    # Every fragment is 0 or 1 (never NULL), so NOT is the exact complement. Comparisons bind
    # tighter than NOT in SQLite, and compound fragments come parenthesised, so no extra parens.
    return f"NOT {sql[0]}", sql[1]


Bounds: TypeAlias = tuple[int | None, int | None]


def _time_bounds(node: Node, negated: bool) -> Bounds:
    """The ``ts_us`` range every entry matching ``node`` lies in: (lowest, highest), None where
    the filter implies no bound.

    The bound is ANDed to the compiled filter: it selects nothing more or less, but it is a
    range SQLite can seek the ``(project, job_id, ts_us, id)`` index with. A reader's resume
    cursor, ``(timestamp="T" AND insertId>"I") OR timestamp>"T"``, compiles to an OR that SQLite
    cannot seek with, so without the bound every page scanned the job's entries from its first:
    a follow page 4,000,000 lines into a flood read them all again. Only comparisons that are
    not negated give a bound (any other term gives none, which is always safe).
    """
    if isinstance(node, Not):
        return _time_bounds(node.item, not negated)
    if isinstance(node, And | Or):
        conjunction = isinstance(node, And) != negated
        bounds = [_time_bounds(c, n) for c, n in _flatten(node, negated, conjunction)]
        lows = [low for low, _ in bounds]
        highs = [high for _, high in bounds]
        if conjunction:  # the tightest bound of any term holds
            known_lows = [v for v in lows if v is not None]
            known_highs = [v for v in highs if v is not None]
            return (
                max(known_lows) if known_lows else None,
                min(known_highs) if known_highs else None,
            )
        # Either term may match: a bound holds only if every term has one.
        return (
            None if None in lows else min(v for v in lows if v is not None),
            None if None in highs else max(v for v in highs if v is not None),
        )
    if negated or not isinstance(node, Compare) or node.path != ("timestamp",):
        return None, None
    try:
        nanos = parse_timestamp(node.value)
    except ValueError:
        return None, None  # _compile_compare reports it
    floor_us, ceil_us = nanos // 1000, -(-nanos // 1000)
    if node.op in (":", "="):
        return (floor_us, floor_us) if nanos % 1000 == 0 else (None, None)
    return {
        ">": (floor_us + 1, None),
        ">=": (ceil_us, None),
        "<": (None, ceil_us - 1),
        "<=": (None, floor_us),
    }.get(node.op, (None, None))


def _flatten(node: And | Or, negated: bool, conjunction: bool) -> list[tuple[Node, bool]]:
    """The operands of `node` after merging nested groups that (under negation) are the same
    kind, each with whether it is negated; iterative, so long filters cost no recursion."""
    out: list[tuple[Node, bool]] = []
    stack = [(item, negated) for item in reversed(node.items)]
    while stack:
        child, child_negated = stack.pop()
        while isinstance(child, Not):
            child, child_negated = child.item, not child_negated
        if isinstance(child, And | Or) and (isinstance(child, And) != child_negated) == conjunction:
            stack.extend((item, child_negated) for item in reversed(child.items))
        else:
            out.append((child, child_negated))
    return out


def _join(parts: list[Sql], conjunction: bool) -> Sql:
    """AND (or OR) the fragments, folding constants and bounding SQLite's expression depth.

    Constant folding turns gcloud's `(resource.type="ml_job" OR resource.type="cloudml_job")`
    into nothing at all. A flat `a AND b AND ...` is as deep as it is long in SQLite's
    expression tree (limit 1000), so long runs are grouped `_CHUNK` at a time.
    """
    identity, absorbing = ("1", "0") if conjunction else ("0", "1")
    kept = [part for part in parts if part[0] != identity]
    if any(part[0] == absorbing for part in kept):
        return absorbing, []
    if not kept:
        return identity, []
    keyword = " AND " if conjunction else " OR "
    while len(kept) > 1:
        grouped: list[Sql] = []
        for start in range(0, len(kept), _CHUNK):
            chunk = kept[start : start + _CHUNK]
            if len(chunk) == 1:
                grouped.append(chunk[0])
                continue
            params: list[object] = []
            for _, chunk_params in chunk:
                params.extend(chunk_params)
            grouped.append((f"({keyword.join(sql for sql, _ in chunk)})", params))
        kept = grouped
    return kept[0]


def _nesting(sql: str) -> int:
    """Deepest parenthesis nesting in our generated SQL (it has no parentheses in strings)."""
    depth = deepest = 0
    for ch in sql:
        if ch == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif ch == ")":
            depth -= 1
    return deepest


def _compile_compare(node: Compare, index: int | None = None) -> Sql:
    field = _resolve(node.path)
    op, value = node.op, node.value
    presence = op == ":" and value == "*" and not node.quoted
    if isinstance(field, _Missing):
        return _TRUE if op == "!=" else _FALSE
    if isinstance(field, str):
        return _TRUE if _compare_constant(field, op, value, presence) else _FALSE
    if isinstance(field, _Map):
        if op != ":":
            raise ValueError(
                f"Operator {op!r} cannot be applied to the map field {field.name!r};"
                f" compare one key instead, e.g. {field.name}.KEY={value!r}"
            )
        if presence:
            return _TRUE
        column = field.keys.get(value)
        if column is None:
            return _FALSE
        return (f"{column.name} IS NOT NULL", []) if column.nullable else _TRUE
    if presence:
        return (f"{field.name} IS NOT NULL", []) if field.nullable else _TRUE
    path = _display_path(node.path)
    if field.kind == "time":
        sql = _compare_time(field.name, op, value, path)
    elif field.kind == "severity":
        sql = _compare_severity(op, value, path)
    elif field.kind == "insert_id":
        sql = _compare_insert_id(op, value)
    elif op == ":" and field is _MESSAGE:
        sql = _text(value, index)
    elif op == ":":
        sql = _substring(field.name, value)
    else:
        sql = (f"{field.name} {op} ?", [value])
    if not field.nullable:
        return sql
    # NULL = missing: keep the fragment 0/1 (never NULL) so NOT and != behave as documented.
    if op == "!=":
        return f"({field.name} IS NULL OR {sql[0]})", sql[1]
    return f"({field.name} IS NOT NULL AND {sql[0]})", sql[1]


def _resolve(path: tuple[str, ...]) -> _Field:
    if path == ("resource", "type"):
        return RESOURCE_TYPE
    if path == ("resource", "labels"):
        return _Map("resource.labels", _RESOURCE_LABELS)
    if path[:2] == ("resource", "labels"):
        return _RESOURCE_LABELS.get(path[2], _MISSING_FIELD) if len(path) == 3 else _MISSING_FIELD
    if path == ("labels",):
        return _Map("labels", _ENTRY_LABELS)
    if path[0] == "labels":
        return _ENTRY_LABELS.get(path[1], _MISSING_FIELD) if len(path) == 2 else _MISSING_FIELD
    column = _TOP_LEVEL.get(path)
    if column is None:
        raise ValueError(
            f"Unknown field {_display_path(path)!r} in log filter; supported fields:"
            f" {', '.join(SUPPORTED_FIELDS)} (other labels.* and resource.labels.* keys are"
            " accepted and never present)"
        )
    return column


def _display_path(path: tuple[str, ...]) -> str:
    return ".".join(
        segment if _PLAIN_SEGMENT.fullmatch(segment) else '"' + segment.replace('"', '\\"') + '"'
        for segment in path
    )


def _compare_constant(constant: str, op: str, value: str, presence: bool) -> bool:
    if op == ":":
        return presence or value.lower() in constant.lower()
    if op == "=":
        return constant == value
    if op == "!=":
        return constant != value
    if op == "<":
        return constant < value
    if op == "<=":
        return constant <= value
    if op == ">":
        return constant > value
    return constant >= value


def _text(value: str, index: int | None) -> Sql:
    """The message holds ``value`` (case-insensitively): the exact check, on the index's
    candidates (and the rows it has not reached) where ``value`` has a word that narrows."""
    exact = _substring(_MESSAGE.name, value)
    query = substring_candidates(value) if index is not None else None
    if query is None:
        return exact
    # One IN over a UNION, not "id > ? OR id IN (...)": SQLite looks the rows up by rowid only
    # when the IN stands alone; under an OR it read every row to test both.
    return (
        "(id IN (SELECT rowid FROM log_text WHERE log_text MATCH ?"
        f" UNION ALL SELECT id FROM log_entries WHERE id > ?) AND {exact[0]})",
        [query, index, *exact[1]],
    )


def _search(node: Search, index: int | None) -> Sql:
    """``SEARCH``: the lines holding every word (or the phrase) as words: from the index, with
    the rows it has not reached checked one by one; without the index, every row so (a search
    within one job, whose own rows are few next to the index's matches over every job)."""
    if node.path is not None and _resolve(node.path) is not _MESSAGE:
        raise ValueError(
            f"SEARCH applies to the message only here (textPayload or jsonPayload.message),"
            f" not {_display_path(node.path)}"
        )
    query = token_query(node.value)
    if query is None:
        return _FALSE  # no word to look for: matches nothing, as in Cloud Logging
    spec = token_spec(node.value)
    # The Python function runs only on lines SQLite found the ASCII words in.
    words = [w for w in spec.split("\t")[1:] if w.isascii()]
    check = "".join("instr(lower(message), ?) > 0 AND " for _ in words)
    check += f"{WORDS_FUNCTION}(message, ?)"
    if index is None:
        return f"({check})", [*words, spec]
    return (
        "id IN (SELECT rowid FROM log_text WHERE log_text MATCH ? UNION ALL"
        f" SELECT id FROM log_entries WHERE id > ? AND {check})",
        [query, index, *words, spec],
    )


def _substring(column: str, value: str) -> Sql:
    # SQLite's lower() folds ASCII only; lowering both sides in SQL keeps them consistent.
    return f"instr(lower({column}), lower(?)) > 0", [value]


def _compare_time(column: str, op: str, value: str, path: str) -> Sql:
    try:
        nanos = parse_timestamp(value)
    except ValueError as exc:
        raise ValueError(f"Invalid timestamp for {path}: {exc}") from None
    floor_us = nanos // 1000
    ceil_us = -(-nanos // 1000)
    whole = nanos % 1000 == 0
    # ts_us * 1000 compared with nanos, rewritten so the bare column stays indexable.
    if op in (":", "="):
        return (f"{column} = ?", [floor_us]) if whole else _FALSE
    if op == "!=":
        return (f"{column} != ?", [floor_us]) if whole else _TRUE
    if op == ">":
        return f"{column} > ?", [floor_us]
    if op == ">=":
        return f"{column} >= ?", [ceil_us]
    if op == "<":
        return f"{column} < ?", [ceil_us]
    return f"{column} <= ?", [floor_us]


def _compare_severity(op: str, value: str, path: str) -> Sql:
    try:
        level = parse_severity(value)
    except ValueError as exc:
        raise ValueError(f"Invalid {path} value: {exc}") from None
    return f"severity {'=' if op == ':' else op} ?", [level]


def _compare_insert_id(op: str, value: str) -> Sql:
    if op == ":":
        return _substring(_INSERT_ID_SQL, value)
    if not _DIGITS.fullmatch(value):
        return f"{_INSERT_ID_SQL} {op} ?", [value]
    significant = value.lstrip("0")
    # Compare lengths first: int() refuses strings of more than 4300 digits.
    if len(significant) > 19 or int(significant or "0") > _INT64_MAX:
        # Larger than any id SQLite can hold (and than sqlite3 can bind): decide here.
        return _TRUE if op in ("<", "<=", "!=") else _FALSE
    return f"id {op} ?", [int(value)]
