"""Which words of a search text a matching line must hold (tui_app/model/logs/text_search.py):
the index may only narrow, so every line holding the text must be a candidate."""

from __future__ import annotations

import re

import pytest

from tui_app.model.logs.text_search import (
    substring_candidates,
    token_query,
    token_spec,
    word_runs,
    words_match,
)


def test_word_runs_follow_letters_and_digits_in_any_script() -> None:
    text = "größe 12µs, 東京-学習_x"
    assert [text[s:e] for s, e in word_runs(text)] == ["größe", "12µs", "東京", "学習", "x"]


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("out of memory", '"of" AND "memory"*'),
        (" out of", '"out" AND "of"*'),  # a leading separator: "out" starts a word
        ("memory", None),  # one word touching both ends: may sit inside any word
        ("NaN loss", '"loss"*'),
        ("(most recent", '"most" AND "recent"*'),
        ('say "hi"', '"hi"'),
        ("...", None),
    ],
)
def test_substring_candidates(text: str, query: str | None) -> None:
    assert substring_candidates(text) == query


def _fts_words(line: str) -> list[str]:
    return [line[s:e].casefold() for s, e in word_runs(line)]


@pytest.mark.parametrize(
    "line",
    [
        "CUDA out of memory.",
        "timeout of memoryless worker",
        "xx out of memory yy",
        "OUT OF MEMORY",
    ],
)
def test_every_line_holding_the_text_is_a_candidate(line: str) -> None:
    """The candidates' terms, checked as FTS5 would on the line's words."""
    text = "out of memory"
    assert text in line.lower()
    words = _fts_words(line)
    query = substring_candidates(text)
    assert query is not None
    for term in query.split(" AND "):
        prefix = term.endswith("*")
        word = term.strip("*").strip('"').casefold()
        assert any(w.startswith(word) if prefix else w == word for w in words), (line, term)


def test_search_takes_whole_words_or_a_phrase_in_backticks() -> None:
    assert token_query("out Of") == '"out" AND "Of"'
    assert token_query("`of memory`") == '"of memory"'
    assert token_query("...") is None
    spec = token_spec("MEMORY out")
    assert words_match("CUDA out of memory", spec)
    assert not words_match("timeout of memoryless", spec)
    phrase = token_spec("`of memory`")
    assert words_match("out of memory", phrase)
    assert not words_match("memory of out", phrase)
    assert not words_match("anything", token_spec(""))


def test_quotes_in_a_word_cannot_break_the_query() -> None:
    # Words hold no quotes (they are separators), so every term is one quoted word.
    for text in ['a "b" c', 'x""y z', "AND OR NEAR x"]:
        query = substring_candidates(text) or ""
        assert all(re.fullmatch(r'"[^"]+"\*?', t) for t in query.split(" AND ") if t), query
