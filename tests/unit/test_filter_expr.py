"""Tests for the shared jobs.list / entries:list filter parser and timestamp literals."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui_app.model.filters.filter_expr import (
    MAX_DEPTH,
    MAX_LENGTH,
    And,
    Compare,
    FilterSyntaxError,
    Node,
    Not,
    Or,
    Text,
    parse_filter,
    parse_timestamp,
)

GCLOUD_FILTER = (
    '(resource.type="ml_job" OR resource.type="cloudml_job") AND resource.labels.job_id="J"'
    ' AND timestamp>="1970-01-01T01:00:00.000000000Z" AND timestamp<"2026-11-22T09:01:52.289121Z"'
)
TASK_CLAUSE = ' AND (resource.labels.task_name="T" OR labels.task_name="T")'
CURSOR_CLAUSE = (
    ' AND ((timestamp="2026-11-22T09:00:00.000000Z" AND insertId>"000000000000000042")'
    ' OR timestamp>"2026-11-22T09:00:00.000000Z")'
)


def c(field: str, op: str, value: str, quoted: bool = False) -> Compare:
    """Shorthand: a comparison on a dotted field without quoted segments."""
    return Compare(tuple(field.split(".")), op, value, quoted)


def test_empty_and_whitespace_filters_mean_no_filter() -> None:
    assert parse_filter("") is None
    assert parse_filter("  \t\n ") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("jobId:census*", c("jobId", ":", "census*")),
        ("state:FAILED", c("state", ":", "FAILED")),
        ("jobId:rnn* AND state:FAILED", And((c("jobId", ":", "rnn*"), c("state", ":", "FAILED")))),
        ("labels.owner=ann", c("labels.owner", "=", "ann")),
        ("trainingInput.scaleTier = BASIC", c("trainingInput.scaleTier", "=", "BASIC")),
        (
            'createTime>"2024-01-01T00:00:00Z"',
            c("createTime", ">", "2024-01-01T00:00:00Z", quoted=True),
        ),
        # Unquoted values run to whitespace or ')', so ':' inside a timestamp is fine.
        ("createTime>=2024-01-01T00:00:00Z", c("createTime", ">=", "2024-01-01T00:00:00Z")),
        ("severity >= ERROR", c("severity", ">=", "ERROR")),
        ("x!=1", c("x", "!=", "1")),
        ("x<1", c("x", "<", "1")),
        ("x<=1", c("x", "<=", "1")),
        ("x>1", c("x", ">", "1")),
        (
            'labels."ml.googleapis.com/task_name"="master-replica-0"',
            Compare(("labels", "ml.googleapis.com/task_name"), "=", "master-replica-0", True),
        ),
        ("labels.airflow-version:v2*", c("labels.airflow-version", ":", "v2*")),
        ("loss", Text("loss")),
        ('"epoch 1 loss"', Text("epoch 1 loss")),
        ("-severity>=ERROR", Not(c("severity", ">=", "ERROR"))),
        ("NOT state:FAILED", Not(c("state", ":", "FAILED"))),
        ("NOT(state:FAILED)", Not(c("state", ":", "FAILED"))),
        ("(((a)))", Text("a")),
    ],
)
def test_parses_to_expected_ast(text: str, expected: Node) -> None:
    assert parse_filter(text) == expected


def test_gcloud_stream_logs_filter_exact_ast() -> None:
    assert parse_filter(GCLOUD_FILTER) == And(
        (
            Or(
                (
                    c("resource.type", "=", "ml_job", quoted=True),
                    c("resource.type", "=", "cloudml_job", quoted=True),
                )
            ),
            c("resource.labels.job_id", "=", "J", quoted=True),
            c("timestamp", ">=", "1970-01-01T01:00:00.000000000Z", quoted=True),
            c("timestamp", "<", "2026-11-22T09:01:52.289121Z", quoted=True),
        )
    )


def test_gcloud_task_name_and_cursor_clauses_parse() -> None:
    node = parse_filter(GCLOUD_FILTER + TASK_CLAUSE + CURSOR_CLAUSE)
    assert isinstance(node, And)
    assert len(node.items) == 6
    assert node.items[4] == Or(
        (
            c("resource.labels.task_name", "=", "T", quoted=True),
            c("labels.task_name", "=", "T", quoted=True),
        )
    )
    assert node.items[5] == Or(
        (
            And(
                (
                    c("timestamp", "=", "2026-11-22T09:00:00.000000Z", quoted=True),
                    c("insertId", ">", "000000000000000042", quoted=True),
                )
            ),
            c("timestamp", ">", "2026-11-22T09:00:00.000000Z", quoted=True),
        )
    )


def test_google_cloud_logging_appended_lower_bound_parses() -> None:
    node = parse_filter(
        'resource.labels.job_id="J" AND timestamp>="2026-11-21T09:05:57.552480+0000"'
    )
    assert node == And(
        (
            c("resource.labels.job_id", "=", "J", quoted=True),
            c("timestamp", ">=", "2026-11-21T09:05:57.552480+0000", quoted=True),
        )
    )


# -- precedence ---------------------------------------------------------------------------------


def test_or_binds_tighter_than_and_as_in_cloud_logging() -> None:
    a, b, cc = Text("a"), Text("b"), Text("c")
    assert parse_filter("a AND b OR c") == And((a, Or((b, cc))))
    assert parse_filter("a OR b AND c") == And((Or((a, b)), cc))
    assert parse_filter("(a AND b) OR c") == Or((And((a, b)), cc))


def test_implicit_and_has_and_precedence() -> None:
    a, b, cc = Text("a"), Text("b"), Text("c")
    assert parse_filter("a b OR c") == And((a, Or((b, cc))))
    assert parse_filter("a b c") == And((a, b, cc))
    assert parse_filter("a AND b c") == And((a, b, cc))


def test_not_binds_tightest() -> None:
    a, b = Text("a"), Text("b")
    assert parse_filter("NOT a OR b") == Or((Not(a), b))
    assert parse_filter("NOT a AND b") == And((Not(a), b))
    assert parse_filter("-a b") == And((Not(a), b))
    assert parse_filter("NOT NOT a") == Not(Not(a))
    assert parse_filter("NOT (a OR b)") == Not(Or((a, b)))


def test_keywords_are_upper_case_only() -> None:
    assert parse_filter("a and b") == And((Text("a"), Text("and"), Text("b")))
    assert parse_filter("ANDROID OR NOTE") == Or((Text("ANDROID"), Text("NOTE")))


# -- quoting -----------------------------------------------------------------------------------


def test_string_escapes() -> None:
    assert parse_filter(r'x="a \"b\" \\ c"') == c("x", "=", 'a "b" \\ c', quoted=True)
    assert parse_filter(r'x="line\nnext\ttab"') == c("x", "=", "line\nnext\ttab", quoted=True)
    assert parse_filter(r'x="\*"') == c("x", "=", "*", quoted=True)


def test_quoted_value_keeps_keywords_and_parentheses() -> None:
    assert parse_filter('x="a AND (b)"') == c("x", "=", "a AND (b)", quoted=True)
    assert parse_filter('"NOT"') == Text("NOT")


def test_quoted_vs_unquoted_star_is_recorded() -> None:
    assert parse_filter("x:*") == c("x", ":", "*")
    assert parse_filter('x:"*"') == c("x", ":", "*", quoted=True)


def test_unquoted_value_stops_at_close_paren() -> None:
    assert parse_filter("(x=a)") == c("x", "=", "a")
    assert parse_filter("(x=a OR y=b)") == Or((c("x", "=", "a"), c("y", "=", "b")))


def test_bare_terms_that_are_not_paths_are_text() -> None:
    assert parse_filter("2024-01-01") == Text("2024-01-01")
    assert parse_filter("foo.bar") == Text("foo.bar")
    assert parse_filter("*error*") == Text("*error*")
    assert parse_filter("!x") == Text("!x")


# -- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("state:FAILED ) AND", "Unexpected ')' at position 13"),
        ("()", "Unexpected ')' at position 1"),
        ('x="abc', "Unterminated string starting at position 2"),
        ('x="abc\\"', "Unterminated string starting at position 2"),
        ('"abc', "Unterminated string starting at position 0"),
        ("timestamp>=", "Expected a value after '>=' at position 9, found end of filter"),
        ("severity >= ", "Expected a value after '>=' at position 9, found end of filter"),
        ("x=)", "Expected a value after '=' at position 1, found ')'"),
        ("x=(a)", "Expected a value after '=' at position 1, found '('"),
        ("x = AND y", "Expected a value after '=' at position 2, found 'AND'"),
        ("a AND", "Expected a term after 'AND' at position 2"),
        ("a OR ", "Expected a term after 'OR' at position 2"),
        ("NOT", "Expected a term after 'NOT' at position 0"),
        ("a - b", "Expected a term after '-' at position 2"),
        ("(a", "Missing ')' to close '(' at position 0"),
        ("((a) OR b", "Missing ')' to close '(' at position 0"),
        ("(", "Missing ')' to close '(' at position 0"),
        ("AND a", "Unexpected 'AND' at position 0; expected a term"),
        ("a OR OR b", "Unexpected 'OR' at position 5; expected a term"),
        ("=x", "Unexpected '=' at position 0; expected a field name before it"),
        ('x=ab"c"', "Unexpected '\"' at position 4"),
    ],
)
def test_error_messages(text: str, message: str) -> None:
    with pytest.raises(FilterSyntaxError) as info:
        parse_filter(text)
    assert str(info.value) == message
    assert f"position {info.value.position}" in message


def test_syntax_error_is_a_value_error() -> None:
    assert issubclass(FilterSyntaxError, ValueError)


def test_nesting_depth_is_limited() -> None:
    ok = "(" * MAX_DEPTH + "a" + ")" * MAX_DEPTH
    assert parse_filter(ok) == Text("a")
    deep = "(" * (MAX_DEPTH + 1) + "a" + ")" * (MAX_DEPTH + 1)
    with pytest.raises(FilterSyntaxError, match="nests too deeply"):
        parse_filter(deep)
    with pytest.raises(FilterSyntaxError, match="nests too deeply"):
        parse_filter("NOT " * (MAX_DEPTH + 1) + "a")
    with pytest.raises(FilterSyntaxError, match="nests too deeply"):
        parse_filter("-" * 10_000 + "a")
    with pytest.raises(FilterSyntaxError, match="nests too deeply"):
        parse_filter("(" * 10_000)


def test_input_length_is_limited() -> None:
    assert parse_filter(" " * MAX_LENGTH) is None
    with pytest.raises(FilterSyntaxError, match="too long"):
        parse_filter("a" * (MAX_LENGTH + 1))


def test_long_flat_filters_do_not_recurse() -> None:
    node = parse_filter(" AND ".join(f"x={i}" for i in range(1500)))
    assert isinstance(node, And)
    assert len(node.items) == 1500


@settings(max_examples=500)
@given(st.text())
def test_arbitrary_text_only_raises_filter_syntax_error(text: str) -> None:
    with contextlib.suppress(FilterSyntaxError):
        parse_filter(text)


_PIECES = st.sampled_from(
    [
        "(",
        ")",
        " ",
        "AND",
        "OR",
        "NOT",
        "-",
        '"',
        "\\",
        ":",
        "=",
        "!=",
        "<",
        ">=",
        "*",
        "x",
        ".",
        "labels",
        '"a.b"',
        "1",
        "\t",
    ]
)


@settings(max_examples=500)
@given(st.lists(_PIECES, max_size=30).map("".join))
def test_filter_shaped_text_only_raises_filter_syntax_error(text: str) -> None:
    try:
        parse_filter(text)
    except FilterSyntaxError as exc:
        assert 0 <= exc.position <= len(text)


# -- timestamps --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "nanos"),
    [
        ("1970-01-01T01:00:00.000000000Z", 3_600 * 10**9),
        ("2026-11-22T09:01:52.289121Z", 1_795_338_112_289_121_000),
        ("2026-11-21T09:05:57.552480+0000", 1_795_251_957_552_480_000),
        ("2026-11-21T09:05:57.552480+00:00", 1_795_251_957_552_480_000),
        ("2026-11-21T10:05:57.552480+01:00", 1_795_251_957_552_480_000),
        ("2026-11-21T08:05:57.552480-0100", 1_795_251_957_552_480_000),
        ("2026-11-21T09:05:57Z", 1_795_251_957 * 10**9),
        ("2026-11-21T09:05:57", 1_795_251_957 * 10**9),
        ("2026-11-21", 1_795_219_200 * 10**9),
        ("1970-01-01T00:00:00.000000001Z", 1),
        ("1970-01-01T00:00:00.5Z", 500_000_000),
        ("1969-12-31T23:59:59.5Z", -500_000_000),
    ],
)
def test_parse_timestamp(text: str, nanos: int) -> None:
    assert parse_timestamp(text) == nanos


@pytest.mark.parametrize(
    "text",
    [
        "",
        "yesterday",
        "2026-13-01",
        "2026-02-30T00:00:00Z",
        "2026-11-21T25:00:00Z",
        "2026-11-21T09:05:57.1234567890Z",
        "2026-11-21T09:05:57+2400",
        "2026-11-21T09:05Z",
        "12345",
        "\uff12\uff10\uff12\uff16-11-21",  # full-width digits
    ],
)
def test_parse_timestamp_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="Not a timestamp"):
        parse_timestamp(text)


def test_search_is_a_function_of_log_filters_only() -> None:
    from tui_app.model.filters.filter_expr import Search

    assert parse_filter('SEARCH("out of memory")', search=True) == Search(None, "out of memory")
    assert parse_filter('SEARCH( textPayload , "NaN")', search=True) == Search(
        ("textPayload",), "NaN"
    )
    node = parse_filter('severity>=ERROR SEARCH("oom")', search=True)
    assert node == And((Compare(("severity",), ">=", "ERROR"), Search(None, "oom")))
    # A jobs filter has no functions: the same text means what it always did.
    assert not isinstance(parse_filter('SEARCH("x")'), Search)
    for bad, where in [
        ("SEARCH(oom)", 'takes "text" or a field and "text"'),
        ("SEARCH(textPayload, oom)", "needs a quoted string"),
        ('SEARCH(textPayload "x")', "takes"),
        ('SEARCH("x"', "Missing '\\)'"),
    ]:
        with pytest.raises(FilterSyntaxError, match=where):
            parse_filter(bad, search=True)
