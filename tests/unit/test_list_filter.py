"""The job list's ``/`` filter: tokens, regex, smart case, ``!``, errors, and its fast paths."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui_app.model.filters.list_filter import (
    FilterIndex,
    ListFilter,
    filter_rows,
    parse_list_filter,
    refine,
)
from tui_app.model.jobs.states import JobState
from tui_app.model.views.job_view import JobRow


def row(job_id: str, state: str = "SUCCEEDED", **fields: Any) -> JobRow:
    return JobRow.from_job({"jobId": job_id, "state": state, **fields})


CLUSTER = {"scaleTier": "CUSTOM", "masterType": "standard", "workerType": "standard"}
ROWS = [
    row("mnist_20261122_083000", "RUNNING", labels={"team": "vision", "owner": "ada"}),
    row(
        "mnist_20261121_120000",
        "FAILED",
        errorMessage="The replica worker 0 exited with a non-zero status of 1.\nTraceback",
        labels={"team": "vision2"},
    ),
    row("MNIST_big_20261120_000000", "CANCELLED", labels={"team": "nlp"}),
    row("census_20261122_010000", "QUEUED", jobPosition="2"),
    row("adhoc", "FAILED", errorMessage="bad input [abc"),
    row(
        "llama_7b_20261122_090000",
        "SUCCEEDED",
        trainingInput={**CLUSTER, "workerCount": "3"},
        labels={"team": "nlp", "owner": "grace"},
    ),
]


def keep(text: str, rows: list[JobRow] = ROWS) -> list[str]:
    """The ids the filter keeps, checked against every evaluation path."""
    flt = parse_list_filter(text)
    expected = [r.job_id for r in rows if flt.matches(r)]
    assert [r.job_id for r in filter_rows(rows, flt)] == expected
    assert [r.job_id for r in filter_rows(FilterIndex(rows), flt)] == expected
    assert [r.job_id for r in filter_rows(iter(rows), flt)] == expected
    return expected


def test_empty_filter_keeps_everything() -> None:
    assert keep("") == [r.job_id for r in ROWS]
    assert keep("   ") == [r.job_id for r in ROWS]
    assert keep("!") == [r.job_id for r in ROWS]  # a lone "!" is still being typed
    assert parse_list_filter("").is_empty


def test_plain_text_is_a_case_insensitive_substring_of_the_visible_columns() -> None:
    assert keep("mnist") == [
        "mnist_20261122_083000",
        "mnist_20261121_120000",
        "MNIST_big_20261120_000000",
    ]
    assert keep("non-zero status") == ["mnist_20261121_120000"]  # the error column
    assert keep("custom \u00d74") == ["llama_7b_20261122_090000"]  # the tier column
    assert keep("queued") == ["census_20261122_010000"]  # the state column
    assert keep("owner=grace") == ["llama_7b_20261122_090000"]  # labels as k=v


def test_words_are_joined_by_one_space() -> None:
    assert parse_list_filter("worker    0  exited").pattern == "worker 0 exited"
    assert keep("worker    0  exited") == ["mnist_20261121_120000"]


def test_smart_case() -> None:
    assert keep("MNIST") == ["MNIST_big_20261120_000000"]
    assert parse_list_filter("MNIST").case_sensitive
    assert not parse_list_filter(r"mnist\S+big").case_sensitive  # escapes don't count
    assert keep(r"mnist\S+big") == ["MNIST_big_20261120_000000"]
    assert keep("Failed") == []  # case-sensitive: the state reads FAILED


def test_regex() -> None:
    assert keep(r"^mnist_\d+_12") == ["mnist_20261121_120000"]
    assert keep("census|adhoc") == ["census_20261122_010000", "adhoc"]
    assert not parse_list_filter("census|adhoc").literal


def test_invalid_regex_says_why_and_would_match_literally() -> None:
    # The list keeps its last good result and the CLI refuses (the error is what they show);
    # applied anyway, the text matches as typed.
    flt = parse_list_filter("[abc")
    assert flt.error == "Invalid regex (unterminated character set)"
    assert flt.literal
    assert keep("[abc") == ["adhoc"]
    assert parse_list_filter("(").error is not None


def test_state_tokens() -> None:
    assert keep("state:FAILED") == ["mnist_20261121_120000", "adhoc"]
    assert keep("state:failed") == ["mnist_20261121_120000", "adhoc"]
    assert keep("STATE:queued state:cancelled") == [
        "MNIST_big_20261120_000000",
        "census_20261122_010000",
    ]
    assert keep("state:queued,running") == ["mnist_20261122_083000", "census_20261122_010000"]
    assert keep("state:FAILED mnist") == ["mnist_20261121_120000"]
    assert parse_list_filter("state:FAILED").states == {JobState.FAILED}


def test_unknown_state_matches_nothing_and_lists_the_valid_ones() -> None:
    flt = parse_list_filter("state:EXPLODED mnist")
    assert flt.error is not None
    assert "'EXPLODED'" in flt.error
    for state in ("QUEUED", "PREPARING", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLING"):
        assert state in flt.error
    assert keep("state:EXPLODED mnist") == []
    assert keep("!state:EXPLODED") == []


def test_bare_tokens_being_typed_are_ignored() -> None:
    assert keep("state:") == [r.job_id for r in ROWS]
    assert keep("label:") == [r.job_id for r in ROWS]
    assert parse_list_filter("state: label:").error is None


def test_label_tokens() -> None:
    assert keep("label:team=vision") == ["mnist_20261122_083000"]  # exact: not "vision2"
    assert keep("label:team") == [
        "mnist_20261122_083000",
        "mnist_20261121_120000",
        "MNIST_big_20261120_000000",
        "llama_7b_20261122_090000",
    ]
    assert keep("label:team=nlp label:owner") == ["llama_7b_20261122_090000"]
    assert keep("label:owner=ada mnist") == ["mnist_20261122_083000"]
    assert keep("label:Team=nlp") == []  # label keys and values are exact
    assert keep("label:team=") == []


def test_bang_inverts_the_whole_filter() -> None:
    assert keep("!mnist") == ["census_20261122_010000", "adhoc", "llama_7b_20261122_090000"]
    assert keep("!state:FAILED label:team") == [
        "mnist_20261122_083000",
        "MNIST_big_20261120_000000",
        "census_20261122_010000",
        "adhoc",
        "llama_7b_20261122_090000",
    ]
    assert keep("! state:FAILED") == keep("!state:FAILED")


def test_gcloud_filter_terms_mean_what_they_mean_in_gcloud() -> None:
    """``state=FAILED``, ``labels.owner=ada`` (what ``gcloud ... jobs list --filter`` takes)
    used to be literal searches that kept nothing."""
    assert keep("state=FAILED") == keep("state:FAILED") == ["mnist_20261121_120000", "adhoc"]
    assert keep("labels.team=nlp") == ["MNIST_big_20261120_000000", "llama_7b_20261122_090000"]
    assert keep("labels.team:vision") == ["mnist_20261122_083000"]  # exact, not vision2
    assert keep("labels:owner") == ["mnist_20261122_083000", "llama_7b_20261122_090000"]
    assert keep("labels.team=nlp AND state=SUCCEEDED") == ["llama_7b_20261122_090000"]
    assert keep("state=FAILED OR state=QUEUED") == [
        "mnist_20261121_120000",
        "census_20261122_010000",
        "adhoc",
    ]
    assert keep("NOT state=SUCCEEDED AND labels.team=nlp") == ["MNIST_big_20261120_000000"]
    assert keep("NOT labels:team") == ["census_20261122_010000", "adhoc"]
    assert keep("jobId:mnist_2026*") == ["mnist_20261122_083000", "mnist_20261121_120000"]
    assert keep("jobId=adhoc") == ["adhoc"]
    assert keep("jobId=mnist") == []  # the whole id, not a prefix
    assert keep("jobId:MNIST*") == ["MNIST_big_20261120_000000"]  # smart case
    flt = parse_list_filter("state=FAILED AND labels.owner=ada")
    assert flt.read_as == "state:FAILED label:owner=ada" and flt.text.startswith("state=")
    assert parse_list_filter("state:FAILED").read_as is None


def test_a_gcloud_filter_the_list_cannot_express_matches_nothing_and_says_why() -> None:
    for text, why in [
        ("state=BOGUS", "Unknown state 'BOGUS'; valid states: QUEUED, PREPARING"),
        ("createTime>2026-01-01", "cannot express 'createTime>2026-01-01'"),
        ("labels.owner=", "Expected a value after '='"),  # still being typed
    ]:
        flt = parse_list_filter(text)
        assert flt.error is not None and why in flt.error, text
        assert flt.matches_nothing and keep(text) == []


def test_refine_narrows_the_previous_result() -> None:
    prev = parse_list_filter("mn")
    prev_result = filter_rows(ROWS, prev)
    for text in ("mni", "mnist_2026112", "mn state:FAILED", "mnist label:team"):
        new = parse_list_filter(text)
        refined = refine(prev_result, prev, new)
        assert refined is not None, text
        assert refined == filter_rows(ROWS, new), text


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("mn", "mn|census"),  # regex syntax can widen
        ("mn", "!mn"),
        ("state:FAILED", "state:FAILED,QUEUED"),
        ("mnist", "mnis"),  # deleting widens
        ("label:team", "x"),
        ("!mn", "!mni"),
    ],
)
def test_refine_declines_when_the_new_filter_could_widen(before: str, after: str) -> None:
    prev = parse_list_filter(before)
    assert refine(filter_rows(ROWS, prev), prev, parse_list_filter(after)) is None


def test_refine_from_nothing_is_a_full_filter() -> None:
    prev = parse_list_filter("")
    new = parse_list_filter("!mnist")
    assert refine(ROWS, prev, new) == filter_rows(ROWS, new)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_parse_never_raises(text: str) -> None:
    flt = parse_list_filter(text)
    assert isinstance(flt, ListFilter)
    for r in ROWS[:2]:
        flt.matches(r)


_ALPHABET = "mnist_2026 !|.*[]()\\:=labeltsF0AIEDQU"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=_ALPHABET, max_size=20), st.text(alphabet=_ALPHABET, max_size=4))
def test_every_path_agrees_and_refine_is_exact(text: str, more: str) -> None:
    """filter_rows (list, index) equals matches(); refine, when it answers, equals a full filter."""
    keep(text)
    prev, new = parse_list_filter(text), parse_list_filter(text + more)
    refined = refine(filter_rows(ROWS, prev), prev, new)
    if refined is not None:
        assert refined == filter_rows(ROWS, new)
