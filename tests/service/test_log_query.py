"""Tests for compiling entries:list filters to SQL over the `log_entries` table.

The filters are the exact strings gcloud's `stream-logs` and google-cloud-logging send (see
`docs/wire-formats.md`, reading a job's log); each test checks the exact set of rows a real
SQLite database returns.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui_app.local.logs.log_query import (
    SEVERITIES,
    SUPPORTED_FIELDS,
    compile_log_filter,
    severity_name,
)
from tui_app.local.store import LOGS_SCHEMA
from tui_app.model.filters.filter_expr import FilterSyntaxError, parse_timestamp

SCHEMA = LOGS_SCHEMA  # the store's own table and indexes

P = "demo-project"
# id: (project, job, task, trial, timestamp, severity, message)
ENTRIES: dict[int, tuple[str, str, str, str | None, str, str, str]] = {
    1: (P, "J", "service", None, "1970-01-01T00:59:59.999999Z", "INFO", "ancient entry"),
    2: (P, "J", "service", None, "1970-01-01T01:00:00.000000Z", "INFO", "Job J is queued."),
    3: (P, "J", "master-replica-0", None, "2026-11-22T09:00:00.000000Z", "INFO", "Running task"),
    4: (P, "J", "master-replica-0", None, "2026-11-22T09:00:01.000000Z", "DEBUG", "epoch 1 loss=3"),
    5: (P, "J", "worker-replica-1", None, "2026-11-22T09:00:01.000000Z", "INFO", "Worker started"),
    6: (P, "J", "master-replica-0", None, "2026-11-22T09:00:01.000000Z", "WARNING", "Step SLOW"),
    7: (P, "J", "master-replica-0", None, "2026-11-22T09:01:52.289120Z", "ERROR", "Traceback:"),
    8: (P, "J", "worker-replica-1", None, "2026-11-22T09:01:52.289121Z", "ERROR", "ValueError"),
    9: (P, "J", "service", None, "2026-11-22T09:01:53.000000Z", "NOTICE", "Job failed."),
    10: (P, "K", "master-replica-0", "1", "2026-11-21T09:05:57.552479Z", "INFO", "t1 Epoch 1"),
    11: (P, "K", "master-replica-0", "1", "2026-11-21T09:05:57.552480Z", "INFO", "t1 epoch 2"),
    12: (P, "K", "master-replica-0", "2", "2026-11-21T09:05:57.552481Z", "INFO", "t2 epoch 1"),
    13: (P, "K", "worker-replica-0", "2", "2026-11-21T09:06:00.000000Z", "CRITICAL", "OOM"),
    14: (P, "K", "service", None, "2026-11-21T09:07:00.000000Z", "DEFAULT", "Job K succeeded."),
    15: ("other", "J", "master-replica-0", None, "2026-11-22T09:00:01.000000Z", "INFO", "epoch"),
    16: (P, "J", "master-replica-0", None, "2026-11-22T09:00:30.123456Z", "ALERT", "loss NaN"),
    17: (P, "K", "evaluator-replica-0", None, "2026-11-21T09:06:30.000000Z", "NOTICE", "acc=0.9"),
    18: (P, "J", "ps-replica-0", None, "2026-11-22T09:00:02.000000Z", "EMERGENCY", "ps crashed"),
    19: (P, "L", "master-replica-0", None, "2026-11-22T09:00:02.000000Z", "INFO", 'a " \\ b'),
    20: (P, "L", "master-replica-0", None, "2026-11-22T09:00:03.000000Z", "INFO", "Ünïcode ok"),
}
DEMO_IDS = sorted(i for i, entry in ENTRIES.items() if entry[0] == P)

GCLOUD_BASE = (
    '(resource.type="ml_job" OR resource.type="cloudml_job") AND resource.labels.job_id="J"'
)
GCLOUD_UPPER = 'timestamp<"2026-11-22T09:01:52.289121Z"'
GCLOUD_FILTER = f'{GCLOUD_BASE} AND timestamp>="1970-01-01T01:00:00.000000000Z" AND {GCLOUD_UPPER}'


def log_name(project: str, job: str, task: str) -> str:
    if task == "service":
        return f"projects/{project}/logs/ml.googleapis.com%2F{job}"
    return f"projects/{project}/logs/{task}"


@pytest.fixture(scope="module")
def db() -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(":memory:")
    conn.executescript(SCHEMA)
    for entry_id, (project, job, task, trial, ts, severity, message) in ENTRIES.items():
        ts_us = parse_timestamp(ts) // 1000
        conn.execute(
            "INSERT INTO log_entries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                entry_id,
                project,
                job,
                task,
                trial,
                log_name(project, job, task),
                ts_us,
                ts_us + 1500,
                SEVERITIES[severity],
                message,
            ),
        )
    yield conn
    conn.close()


def select(conn: sqlite3.Connection, text: str, project: str | None = P) -> list[int]:
    """Ids matching `text` in `project` (as the service scopes by resourceNames), by ts then id."""
    where, params = compile_log_filter(text)
    if project is None:
        sql = f"SELECT id FROM log_entries WHERE {where} ORDER BY ts_us, id"
        rows = conn.execute(sql, params).fetchall()
    else:
        sql = f"SELECT id FROM log_entries WHERE project = ? AND ({where}) ORDER BY ts_us, id"
        rows = conn.execute(sql, [project, *params]).fetchall()
    return [row[0] for row in rows]


# -- the filters real clients send -----------------------------------------------------------


def test_gcloud_stream_logs_filter(db: sqlite3.Connection) -> None:
    # Excludes 1 (before 01:00), 8 (exactly at the upper bound), 9 (after), 15 (other project).
    assert select(db, GCLOUD_FILTER) == [2, 3, 4, 5, 6, 18, 16, 7]


def test_gcloud_filter_across_projects(db: sqlite3.Connection) -> None:
    assert select(db, GCLOUD_FILTER, project=None) == [2, 3, 4, 5, 6, 15, 18, 16, 7]


def test_gcloud_task_name_clause(db: sqlite3.Connection) -> None:
    text = GCLOUD_FILTER + ' AND (resource.labels.task_name="T" OR labels.task_name="T")'
    assert select(db, text.replace('"T"', '"master-replica-0"')) == [3, 4, 6, 16, 7]
    assert select(db, text.replace('"T"', '"worker-replica-1"')) == [5]
    assert select(db, text) == []


@pytest.mark.parametrize(
    "cursor_ts", ["2026-11-22T09:00:01.000000Z", "2026-11-22T09:00:01.000000000Z"]
)
def test_gcloud_cursor_form_resumes_after_a_tie(db: sqlite3.Connection, cursor_ts: str) -> None:
    # Entries 4, 5 and 6 share a timestamp; gcloud last kept 4.
    cursor = (
        f'((timestamp="{cursor_ts}" AND insertId>"000000000000000004") OR timestamp>"{cursor_ts}")'
    )
    assert select(db, f"{GCLOUD_BASE} AND {cursor} AND {GCLOUD_UPPER}") == [5, 6, 18, 16, 7]


def test_gcloud_plain_lower_bound_after_last_timestamp(db: sqlite3.Connection) -> None:
    text = f'{GCLOUD_BASE} AND timestamp>="2026-11-22T09:00:01.000000Z" AND {GCLOUD_UPPER}'
    assert select(db, text) == [4, 5, 6, 18, 16, 7]


@pytest.mark.parametrize(
    "literal",
    [
        "2026-11-21T09:05:57.552480+0000",
        "2026-11-21T09:05:57.552480+00:00",
        "2026-11-21T09:05:57.552480Z",
        "2026-11-21T09:05:57.552480000Z",
        "2026-11-21T10:05:57.552480+0100",
    ],
)
def test_google_cloud_logging_lower_bound(db: sqlite3.Connection, literal: str) -> None:
    text = f'resource.type="ml_job" AND resource.labels.job_id="K" AND timestamp>="{literal}"'
    assert select(db, text) == [11, 12, 13, 17, 14]
    assert select(db, text.replace(">=", ">")) == [12, 13, 17, 14]


# -- timestamps at nanosecond precision ----------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('timestamp>="2026-11-21T09:05:57.552479500Z"', [11, 12]),
        ('timestamp>"2026-11-21T09:05:57.552479500Z"', [11, 12]),
        ('timestamp>"2026-11-21T09:05:57.552480000Z"', [12]),
        ('timestamp<"2026-11-21T09:05:57.552480001Z"', [10, 11]),
        ('timestamp<"2026-11-21T09:05:57.552480000Z"', [10]),
        ('timestamp<="2026-11-21T09:05:57.552480999Z"', [10, 11]),
        ('timestamp="2026-11-21T09:05:57.552480000Z"', [11]),
        ('timestamp="2026-11-21T09:05:57.552480001Z"', []),
        ('timestamp!="2026-11-21T09:05:57.552480001Z"', [10, 11, 12]),
        ('timestamp!="2026-11-21T09:05:57.552480Z"', [10, 12]),
        ("timestamp:2026-11-21T09:05:57.552480Z", [11]),
        ('NOT timestamp="2026-11-21T09:05:57.552480001Z"', [10, 11, 12]),
    ],
)
def test_timestamp_comparisons_are_exact(
    db: sqlite3.Connection, text: str, expected: list[int]
) -> None:
    window = "timestamp>=2026-11-21T09:05:57Z AND timestamp<2026-11-21T09:05:58Z"
    assert select(db, f"{window} AND {text}") == expected


def test_timestamp_forms(db: sqlite3.Connection) -> None:
    assert select(db, "timestamp<2026-11-21") == [1, 2]
    assert select(db, "timestamp<1970-01-01T01:00:00Z") == [1]
    assert select(db, 'receiveTimestamp>="2026-11-22T09:01:53.0015Z"') == [9]


def test_invalid_timestamp_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="timestamp"):
        compile_log_filter('timestamp>="yesterday"')


# -- other fields ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("severity>=ERROR", [7, 8, 13, 16, 18]),
        ("severity>=error", [7, 8, 13, 16, 18]),
        ("severity >= 500", [7, 8, 13, 16, 18]),
        ("severity=DEFAULT", [14]),
        ("severity:notice", [9, 17]),
        ("severity<INFO", [4, 14]),
        ("severity!=INFO AND resource.labels.job_id=J", [4, 6, 7, 8, 9, 16, 18]),
        ("-severity<=NOTICE", [6, 7, 8, 13, 16, 18]),
    ],
)
def test_severity(db: sqlite3.Connection, text: str, expected: list[int]) -> None:
    assert sorted(select(db, text)) == expected


def test_invalid_severity_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="severity"):
        compile_log_filter("severity>=LOUD")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('insertId>"000000000000000017"', [18, 19, 20]),
        ("insertId>17", [18, 19, 20]),
        ('insertId="000000000000000005"', [5]),
        ("insertId<=3", [1, 2, 3]),
        ('insertId<"abc"', DEMO_IDS),
        ('insertId>"abc"', []),
        ('insertId:"00019"', [19]),
        ("insertId<99999999999999999999999", DEMO_IDS),
        ("insertId>99999999999999999999999", []),
        ("insertId>" + "9" * 5000, []),
    ],
)
def test_insert_id(db: sqlite3.Connection, text: str, expected: list[int]) -> None:
    assert sorted(select(db, text)) == expected


NOT_TRIAL_1 = [i for i in DEMO_IDS if i not in (10, 11)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('labels."ml.googleapis.com/task_name"="worker-replica-1"', [5, 8]),
        ('labels."ml.googleapis.com/task_name":WORKER', [5, 8, 13]),
        ('labels."ml.googleapis.com/trial_id"="1"', [10, 11]),
        ('labels."ml.googleapis.com/trial_id"!="1"', NOT_TRIAL_1),
        ('NOT labels."ml.googleapis.com/trial_id"="1"', NOT_TRIAL_1),
        ('labels."ml.googleapis.com/trial_id":*', [10, 11, 12, 13]),
        ('labels."ml.googleapis.com/trial_id">"1"', [12, 13]),
        ('labels:"ml.googleapis.com/trial_id"', [10, 11, 12, 13]),
        ('labels:"ml.googleapis.com/task_name"', DEMO_IDS),
        ("labels:nothing", []),
        # gcloud also asks for labels.task_name, which our entries never carry.
        ('labels.task_name="master-replica-0"', []),
        ('labels.task_name!="master-replica-0"', DEMO_IDS),
        ("labels.anything:*", []),
        ("resource.labels.zone=x", []),
        ("resource.labels:job_id", DEMO_IDS),
        ('resource.labels.project_id="demo-project"', DEMO_IDS),
        ("resource.labels.job_id=L", [19, 20]),
        ('resource.labels.job_id:"j"', [1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 18]),
        ('resource.labels.task_name="service"', [1, 2, 9, 14]),
    ],
)
def test_labels(db: sqlite3.Connection, text: str, expected: list[int]) -> None:
    assert sorted(select(db, text)) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('resource.type="ml_job"', DEMO_IDS),
        ('resource.type="cloudml_job"', []),
        ('resource.type!="cloudml_job"', DEMO_IDS),
        ('NOT resource.type="ml_job"', []),
        ("resource.type:ML", DEMO_IDS),
        ("resource.type:*", DEMO_IDS),
    ],
)
def test_resource_type_is_constant(db: sqlite3.Connection, text: str, expected: list[int]) -> None:
    assert sorted(select(db, text)) == expected
    sql, _ = compile_log_filter(text)
    assert sql in ("1", "0")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("epoch", [4, 10, 11, 12]),
        ('"EPOCH 1"', [4, 10, 12]),
        ("textPayload:epoch", [4, 10, 11, 12]),
        ("jsonPayload.message:Epoch", [4, 10, 11, 12]),
        ('textPayload="t1 epoch 2"', [11]),
        ('jsonPayload.message!="t1 epoch 2" AND resource.labels.job_id=K', [10, 12, 13, 14, 17]),
        ("epoch -t1", [4, 12]),
        ("epoch AND NOT t1", [4, 12]),
        (r'"\" \\"', [19]),
        ("ÜnïCODE", [20]),
        # SQLite's lower() folds ASCII only, so non-ASCII letters match case-sensitively.
        ("ünïcode", []),
        ('logName="projects/demo-project/logs/ps-replica-0"', [18]),
        ('logName:"ml.googleapis.com%2FK"', [14]),
        ("logName:replica-1", [5, 8]),
    ],
)
def test_message_and_log_name(db: sqlite3.Connection, text: str, expected: list[int]) -> None:
    assert sorted(select(db, text)) == expected


def test_or_binds_tighter_than_and(db: sqlite3.Connection) -> None:
    # Cloud Logging reads this as job_id=K AND (severity=CRITICAL OR ...), not (K AND CRITICAL) OR.
    text = "resource.labels.job_id=K AND severity=CRITICAL OR severity=EMERGENCY"
    assert select(db, text) == [13]


# -- contract ----------------------------------------------------------------------------------


def test_empty_filter() -> None:
    assert compile_log_filter("") == ("1", [])
    assert compile_log_filter("   ") == ("1", [])


def test_user_text_is_never_interpolated() -> None:
    evil = "x'); DROP TABLE log_entries; --"
    sql, params = compile_log_filter(f'textPayload:"{evil}" OR logName="{evil}" OR "{evil}"')
    assert "DROP" not in sql
    assert params == [evil, evil, evil]


@pytest.mark.parametrize("text", ["foo=1", "jsonPayload.levelname=INFO", "resource=x", "a.b:c"])
def test_unknown_fields_name_the_field_and_the_supported_ones(text: str) -> None:
    with pytest.raises(ValueError) as info:
        compile_log_filter(text)
    assert not isinstance(info.value, FilterSyntaxError)
    message = str(info.value)
    assert repr(text.split("=")[0].split(":")[0]) in message
    assert all(field in message for field in SUPPORTED_FIELDS)


def test_map_fields_only_support_has() -> None:
    with pytest.raises(ValueError, match="labels"):
        compile_log_filter("labels=x")


def test_syntax_errors_propagate() -> None:
    with pytest.raises(FilterSyntaxError, match="position"):
        compile_log_filter('resource.labels.job_id="J')


def test_severity_table_is_shared() -> None:
    assert SEVERITIES["ERROR"] == 500
    assert list(SEVERITIES) == [
        "DEFAULT",
        "DEBUG",
        "INFO",
        "NOTICE",
        "WARNING",
        "ERROR",
        "CRITICAL",
        "ALERT",
        "EMERGENCY",
    ]
    assert severity_name(400) == "WARNING"
    assert severity_name(450) == "WARNING"
    assert severity_name(-5) == "DEFAULT"
    assert severity_name(10_000) == "EMERGENCY"


def test_long_and_deep_filters_execute(db: sqlite3.Connection) -> None:
    # OR binds tighter: (insertId=1 OR insertId!=1) AND insertId!=2 AND ... keeps only 1.
    flat = "insertId=1 OR " + " AND ".join(f"insertId!={i}" for i in range(1, 1000))
    assert select(db, flat) == [1]
    nested = "(" * 60 + " ".join(["-epoch"] * 200) + ")" * 60
    assert sorted(select(db, nested)) == [i for i in DEMO_IDS if i not in (4, 10, 11, 12)]


def test_deep_alternation_is_refused_with_a_value_error(db: sqlite3.Connection) -> None:
    def alternating(levels: int) -> str:
        # (severity>=0 AND (insertId=0 OR (severity>=0 AND ... epoch))): the same rows as epoch.
        text = "epoch"
        for level in range(levels):
            text = f"(insertId=0 OR {text})" if level % 2 else f"(severity>=0 AND {text})"
        return text

    assert select(db, alternating(12)) == [10, 11, 12, 4]
    with pytest.raises(ValueError, match="nested too deeply"):
        compile_log_filter(alternating(40))


def test_nots_are_pushed_down_and_groups_merged() -> None:
    sql, params = compile_log_filter("NOT (a OR (b OR -c)) AND NOT NOT d")
    assert sql == (
        "(NOT instr(lower(message), lower(?)) > 0 AND NOT instr(lower(message), lower(?)) > 0"
        " AND instr(lower(message), lower(?)) > 0 AND instr(lower(message), lower(?)) > 0)"
    )
    assert params == ["a", "b", "c", "d"]


# -- properties ------------------------------------------------------------------------------


def _run_or_reject(conn: sqlite3.Connection, text: str) -> set[int] | None:
    """Rows for `text`, or None when the filter is rejected with one of the documented errors."""
    try:
        where, params = compile_log_filter(text)
    except ValueError:  # FilterSyntaxError is a ValueError
        return None
    rows = conn.execute(f"SELECT id FROM log_entries WHERE {where}", params).fetchall()
    return {row[0] for row in rows}


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_arbitrary_text_is_rejected_or_runs(db: sqlite3.Connection, text: str) -> None:
    _run_or_reject(db, text)


_FIELDS = st.sampled_from(
    [
        "resource.type",
        "resource.labels.job_id",
        "resource.labels.task_name",
        "resource.labels.nope",
        "labels.task_name",
        'labels."ml.googleapis.com/task_name"',
        'labels."ml.googleapis.com/trial_id"',
        "labels",
        "logName",
        "severity",
        "insertId",
        "timestamp",
        "textPayload",
        "jsonPayload.message",
    ]
)
_VALUES = st.sampled_from(
    [
        "*",
        '"*"',
        "J",
        '"master-replica-0"',
        "1",
        '"1"',
        "ERROR",
        "info",
        "000000000000000004",
        '"2026-11-22T09:00:01.000000000Z"',
        "2026-11-21T09:05:57.552480+0000",
        "epoch",
        '""',
        "ml_job",
    ]
)
_OPS = st.sampled_from([":", "=", "!=", "<", "<=", ">", ">="])
_TERMS = st.one_of(
    st.builds(lambda f, o, v: f"{f}{o}{v}", _FIELDS, _OPS, _VALUES),
    st.sampled_from(["epoch", '"Job"', "OOM"]),
)
_FILTERS = st.recursive(
    _TERMS,
    lambda inner: st.one_of(
        st.builds(lambda a, b: f"{a} AND {b}", inner, inner),
        st.builds(lambda a, b: f"{a} OR {b}", inner, inner),
        st.builds(lambda a, b: f"{a} {b}", inner, inner),
        st.builds(lambda a: f"NOT {a}", inner),
        st.builds(lambda a: f"-{a}", inner),
        st.builds(lambda a: f"({a})", inner),
    ),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(_FILTERS)
def test_not_is_the_exact_complement(db: sqlite3.Connection, text: str) -> None:
    """Every fragment is 0/1, never NULL, so NOT (f) selects exactly the rows f does not."""
    selected = _run_or_reject(db, text)
    if selected is None:
        return
    negated = _run_or_reject(db, f"NOT ({text})")
    assert negated is not None
    assert selected.isdisjoint(negated)
    assert selected | negated == set(ENTRIES)


# -- the implied timestamp range (an index seek for resume cursors) -----------------------------

_TIMES = st.sampled_from(
    [
        '"1970-01-01T01:00:00Z"',
        '"2026-11-22T09:00:01.000000Z"',
        '"2026-11-22T09:00:01.000000000Z"',
        '"2026-11-22T09:00:01.000000001Z"',
        '"2026-11-22T09:01:52.289121Z"',
        '"2026-11-21T09:05:57.5524805Z"',
    ]
)
_TIME_TERMS = st.one_of(
    st.builds(lambda o, v: f"timestamp{o}{v}", _OPS, _TIMES),
    st.builds(lambda o, v: f"receiveTimestamp{o}{v}", _OPS, _TIMES),
    st.sampled_from(['insertId>"000000000000000005"', "severity>=ERROR", "epoch"]),
)
_TIME_FILTERS = st.recursive(
    _TIME_TERMS,
    lambda inner: st.one_of(
        st.builds(lambda a, b: f"({a} AND {b})", inner, inner),
        st.builds(lambda a, b: f"({a} OR {b})", inner, inner),
        st.builds(lambda a: f"NOT ({a})", inner),
    ),
    max_leaves=6,
)


@settings(max_examples=400, deadline=None)
@given(_TIME_FILTERS)
def test_the_implied_time_range_selects_the_same_rows(db: sqlite3.Connection, text: str) -> None:
    """The range ANDed to a filter is implied by it: the rows are those of the filter alone."""
    from tui_app.local.logs.log_query import _compile
    from tui_app.model.filters.filter_expr import parse_filter

    node = parse_filter(text)
    assert node is not None
    bare, bare_params = _compile(node, negated=False)
    where, params = compile_log_filter(text)
    ranged = db.execute(f"SELECT id FROM log_entries WHERE {where}", params).fetchall()
    plain = db.execute(f"SELECT id FROM log_entries WHERE {bare}", bare_params).fetchall()
    assert sorted(ranged) == sorted(plain)


@pytest.mark.parametrize(
    ("op", "order", "seek"), [(">", "ASC", "ts_us>?"), ("<", "DESC", "ts_us<?")]
)
def test_a_resume_cursor_seeks_the_index(
    db: sqlite3.Connection, op: str, order: str, seek: str
) -> None:
    """A reader's cursor is an OR, which SQLite cannot seek with: without the implied range a
    page deep into a flood scanned the job's entries from the first one."""
    ts = "2026-11-22T09:00:01.000000000Z"
    cursor = f'((timestamp="{ts}" AND insertId{op}"000000000000000004") OR timestamp{op}"{ts}")'
    where, params = compile_log_filter(f"{GCLOUD_BASE} AND {cursor}")
    sql = (
        f"SELECT id FROM log_entries WHERE project = ? AND ({where})"
        f" ORDER BY ts_us {order}, id {order} LIMIT 10"
    )
    plan = " ".join(row[3] for row in db.execute(f"EXPLAIN QUERY PLAN {sql}", [P, *params]))
    assert "log_job_ts" in plan and seek in plan.replace(" ", ""), plan
    ids = [row[0] for row in db.execute(sql, [P, *params])]
    assert ids == ([5, 6, 18, 16, 7, 8, 9] if op == ">" else [3, 2, 1])
