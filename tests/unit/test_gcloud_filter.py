"""gcloud's ``jobs list --filter`` terms, read as the list filter's own (``gcloud_filter``)."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui_app.model.filters.gcloud_filter import (
    ACCEPTED,
    VALID_STATES,
    GcloudFilterError,
    looks_like_gcloud,
    translate_gcloud_filter,
)

EVERY_STATE_BUT_SUCCEEDED = (
    "state:STATE_UNSPECIFIED,QUEUED,PREPARING,RUNNING,FAILED,CANCELLING,CANCELLED"
)


@pytest.mark.parametrize(
    ("gcloud", "ours"),
    [
        ("state=FAILED", "state:FAILED"),
        ("state:FAILED AND labels.owner=demo", "state:FAILED label:owner=demo"),
        ("STATE=failed", "state:FAILED"),
        ("state = FAILED", "state:FAILED"),
        ("state=FAILED OR state=CANCELLED", "state:FAILED,CANCELLED"),
        (
            "(state=FAILED OR state=CANCELLED) labels.team:nlp",
            "state:FAILED,CANCELLED label:team=nlp",
        ),
        ("NOT state=SUCCEEDED", "!state:SUCCEEDED"),
        ("-state=SUCCEEDED", "!state:SUCCEEDED"),
        ("!state=SUCCEEDED", "!state:SUCCEEDED"),  # the list's own ! before gcloud's terms
        (
            "NOT state=SUCCEEDED AND labels.owner=demo",
            f"{EVERY_STATE_BUT_SUCCEEDED} label:owner=demo",
        ),
        ("state!=SUCCEEDED labels.owner=demo", f"{EVERY_STATE_BUT_SUCCEEDED} label:owner=demo"),
        ("NOT (state=FAILED AND labels.owner=demo)", "!state:FAILED label:owner=demo"),
        ("labels.owner=demo", "label:owner=demo"),
        ("labels.owner:demo", "label:owner=demo"),
        ('labels.owner="demo"', "label:owner=demo"),
        ("labels:owner", "label:owner"),
        ("labels.owner:*", "label:owner"),
        ("jobId=mnist_20261127_074446", r"^mnist_20261127_074446\b"),
        ("jobId:mnist_20261127_074446", r"^mnist_20261127_074446\b"),  # ":" without * is =
        ("jobId:mnist*", r"^mnist\w*"),
        ("jobId:*_2026*", r"^\w*_2026\w*"),
        ("jobId:mnist* OR jobId:census*", r"^(?:mnist\w*|census\w*)"),
        ("jobId:*", ""),
        ("jobId:mnist* state=FAILED", r"state:FAILED ^mnist\w*"),
        ("mnist AND state=FAILED", "state:FAILED mnist"),  # a bare word keeps the list's meaning
        ("label:team=nlp AND state=FAILED", "state:FAILED label:team=nlp"),  # ours, mixed in
        ("state:failed,cancelled AND labels.owner=demo", "state:FAILED,CANCELLED label:owner=demo"),
    ],
)
def test_gcloud_terms_in_the_lists_syntax(gcloud: str, ours: str) -> None:
    assert looks_like_gcloud(gcloud)
    assert translate_gcloud_filter(gcloud) == ours


@pytest.mark.parametrize(
    ("gcloud", "why"),
    [
        ("state=BOGUS", f"Unknown state 'BOGUS'; valid states: {VALID_STATES}"),
        ("state=FAILED OR state=NOPE", "Unknown state 'NOPE'"),
        ("state<FAILED", "States have no order"),
        (
            "state=FAILED AND state=RUNNING",
            "No job's state can pass 'state=FAILED AND state=RUNNING'",
        ),
        ("createTime>2026-01-01", "cannot express 'createTime>2026-01-01'"),
        ("trainingInput.scaleTier=BASIC", "cannot express 'trainingInput.scaleTier=BASIC'"),
        ("labels.owner:de*", "A label value is matched exactly"),
        ("labels.owner!=demo", "NOT before the whole filter"),
        ("NOT labels.owner=demo AND state=FAILED", "cannot express 'NOT labels.owner=demo'"),
        ("state=FAILED OR labels.owner=demo", "OR only between terms of one field"),
        ("mnist OR census", "OR only between terms of one field"),
        ("jobId=mnist*", "A job id is letters, digits and '_'"),
        ("jobId=a-b", "A job id is letters, digits and '_'"),
        ("jobId!=mnist", "NOT before the whole filter"),
        ("jobId:mnist* AND census", "one text or jobId term"),
        ("state=", "Expected a value after '='"),
        ("state=FAILED AND", "Expected a term after 'AND'"),
        ('labels.owner="a b"', "with a space"),
        ("labels.a.b=c", "Labels have one level"),
    ],
)
def test_what_the_list_cannot_express_is_refused_saying_why(gcloud: str, why: str) -> None:
    assert looks_like_gcloud(gcloud)
    with pytest.raises(GcloudFilterError) as caught:
        translate_gcloud_filter(gcloud)
    assert why in str(caught.value)


@pytest.mark.parametrize(
    "ours",
    [
        "mnist",
        "state:FAILED",
        "state:",  # still being typed
        "label:team=nlp",
        "label:",
        "owner=grace",  # a search of the labels column
        r"^mnist_\d+",
        "census|adhoc",
        "!state:FAILED label:team",
        "stateful=1",
        "labels",
        "and or not",  # keywords are upper case only
    ],
)
def test_the_lists_own_syntax_is_left_alone(ours: str) -> None:
    assert not looks_like_gcloud(ours)


def test_accepted_names_both_syntaxes() -> None:
    for form in ("state:X", "label:K[=V]", "state=X", "labels.K=V", "jobId:PREFIX*", "NOT"):
        assert form in ACCEPTED


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='stajobIdlbe.=:!*() ANDORNOTFIL_-"', max_size=30))
def test_translation_only_raises_gcloud_filter_error(text: str) -> None:
    with contextlib.suppress(GcloudFilterError):
        translate_gcloud_filter(text)
