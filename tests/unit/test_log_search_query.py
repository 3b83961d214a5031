"""What a typed search query sends, what it highlights, and the logs pane's pattern for it
(``model.logs.log_search``, its ``logs_pattern`` included)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from tui_app.model.logs.log_line import LogLine
from tui_app.model.logs.log_search import (
    SearchHit,
    group_by_job,
    highlight_terms,
    is_logging_filter,
    logs_pattern,
    search_filter,
    since_term,
    window_label,
    with_window,
)


@pytest.mark.parametrize(
    ("typed", "sent"),
    [
        ("out of memory", '"out of memory"'),
        ("  out of memory ", '"out of memory"'),
        ('saved "model.pt"', '"saved \\"model.pt\\""'),
        ("C:\\data", '"C:\\\\data"'),
        ("loss: nan", '"loss: nan"'),  # no field of Logging's: text
        ('"out of memory"', '"out of memory"'),
        ('SEARCH("`out of memory`")', 'SEARCH("`out of memory`")'),
        ('severity>=ERROR AND "nan"', 'severity>=ERROR AND "nan"'),
        ('textPayload:"NaN loss"', 'textPayload:"NaN loss"'),
        ('resource.labels.job_id="j" AND "x"', 'resource.labels.job_id="j" AND "x"'),
        ('labels."ml.googleapis.com/trial_id"="3"', 'labels."ml.googleapis.com/trial_id"="3"'),
        ("", ""),
        ("   ", ""),
    ],
)
def test_text_is_quoted_and_a_filter_is_sent_as_typed(typed: str, sent: str) -> None:
    assert search_filter(typed) == sent


def test_a_field_name_inside_a_word_is_text() -> None:
    assert not is_logging_filter("mytimestamp: 3")
    assert is_logging_filter("timestamp>=2026")


@pytest.mark.parametrize(
    ("typed", "terms"),
    [
        ("out of memory", ["out of memory"]),
        ('"CUDA" AND "out of memory"', ["out of memory", "CUDA"]),
        ('SEARCH("nan loss")', ["loss", "nan"]),
        ('SEARCH("`out of memory` cuda")', ["out of memory", "cuda"]),
        ('SEARCH(textPayload, "nan")', ["nan"]),
        ('textPayload:"NaN loss" AND severity>=ERROR', ["NaN loss"]),
        ('jsonPayload.message:"a \\"b\\""', ['a "b"']),
        ('resource.labels.job_id="mnist" AND severity>=ERROR', []),
    ],
)
def test_highlights_are_the_texts_the_search_matched(typed: str, terms: list[str]) -> None:
    assert highlight_terms(typed) == terms


def test_the_time_window() -> None:
    now = datetime(2026, 11, 22, 9, 30, 0, tzinfo=UTC)
    assert since_term(now, 3600) == 'timestamp>="2026-11-22T08:30:00Z"'
    assert since_term(now, None) == ""
    assert with_window('"a" OR "b"', 'timestamp>="x"') == '("a" OR "b") AND timestamp>="x"'
    assert with_window('"a"', "") == '"a"'
    assert [window_label(s) for s in (None, 3600, 86400, 7 * 86400, 30 * 86400)] == [
        "all",
        "1h",
        "24h",
        "7d",
        "30d",
    ]


def test_hits_are_grouped_by_job_newest_first() -> None:
    def hit(job: str, ts: str) -> SearchHit:
        return SearchHit(job, LogLine(ts, ts, "master-replica-0", 200, "x"))

    hits = [hit("b", "3"), hit("a", "2"), hit("b", "1")]
    assert group_by_job(hits) == [("b", [hits[0], hits[2]]), ("a", [hits[1]])]


@pytest.mark.parametrize(
    ("terms", "line"),
    [
        (["out of memory"], "CUDA OUT OF MEMORY now"),
        (["CUDA out"], "cuda OUT of memory"),
        (["a.b (x)|[y]\\z"], "pre A.B (X)|[Y]\\Z post"),
    ],
)
def test_the_logs_pattern_finds_the_text_in_any_case(terms: list[str], line: str) -> None:
    pattern = logs_pattern(terms)
    flags = 0 if any(c.isupper() for c in pattern) else re.IGNORECASE  # the pane's smart case
    assert re.search(pattern, line, flags)
    assert not re.search(pattern, "nothing here", flags)
    assert "\\ " not in pattern  # spaces stay readable in the pane's info bar
