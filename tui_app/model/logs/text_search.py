"""Turning a log search into a full-text index query, without changing what it matches.

The local service indexes every stored line with SQLite FTS5's ``unicode61`` tokenizer
(``tui_app/local/logs/log_index.py``): a word is a run of letters and digits, case-folded. A
filter's text search (``"out of memory"``, ``textPayload:"NaN loss"``) matches a *substring*,
case-insensitively, so the index can only narrow the lines to check, never decide: every line
that holds the substring must be among the candidates, and the exact check runs on them.

Which words of the search text a matching line must hold as words: a run of letters and
digits that has a separator before it inside the text is the start of a word in the line; if
it also has one after it, it is that whole word (``"of"`` in ``out of memory``), else the
line's word starts with it (``memory*``). A run at the very start of the text may be the end
of a longer word in the line (``out`` may be ``timeout``) and narrows nothing. A search with
no usable run (a single word, ``NaN``) has no index query: it is answered by scan.

``SEARCH("...")`` (Cloud Logging's token search) is different: it matches words, so the index
answers it alone (``token_query``).
"""

from __future__ import annotations

import unicodedata

__all__ = [
    "is_word_char",
    "substring_candidates",
    "token_query",
    "token_spec",
    "word_runs",
    "words_match",
]

MAX_TERMS = 16
"""Words of a search text used to narrow (more add little and cost a posting list each)."""


def is_word_char(ch: str) -> bool:
    """What ``unicode61`` keeps in a word: letters, digits, and private-use characters."""
    category = unicodedata.category(ch)
    return category[0] in "LN" or category == "Co"


def word_runs(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each run of word characters in ``text``."""
    runs: list[tuple[int, int]] = []
    start: int | None = None
    for i, ch in enumerate(text):
        if is_word_char(ch):
            if start is None:
                start = i
        elif start is not None:
            runs.append((start, i))
            start = None
    if start is not None:
        runs.append((start, len(text)))
    return runs


def _quoted(word: str) -> str:
    return '"' + word.replace('"', '""') + '"'


def substring_candidates(text: str) -> str | None:
    """An FTS5 query every line holding ``text`` (case-insensitively) matches, or None when
    no word of it narrows (the caller scans). See the module doc."""
    terms: list[str] = []
    for start, end in word_runs(text):
        if start == 0:
            continue  # may be the tail of a longer word in the line
        word = text[start:end]
        terms.append(_quoted(word) + ("*" if end == len(text) else ""))
        if len(terms) >= MAX_TERMS:
            break
    return " AND ".join(terms) if terms else None


def _search_words(text: str) -> tuple[bool, list[str]]:
    """``SEARCH(text)``'s reading: whether it is a phrase (in backticks), and its words (all
    of a phrase's; at most ``MAX_TERMS`` otherwise). ``token_query`` and ``token_spec`` both
    read it so, so the index and the check of unindexed lines look for the same words."""
    phrase = len(text) >= 2 and text.startswith("`") and text.endswith("`")
    body = text[1:-1] if phrase else text
    words = [body[s:e] for s, e in word_runs(body)]
    return phrase, words if phrase else words[:MAX_TERMS]


def token_query(text: str) -> str | None:
    """The FTS5 query of ``SEARCH(text)``: every word of ``text``, in any order; a text in
    backticks is one phrase (its words in order, adjacent). None when it has no word."""
    phrase, words = _search_words(text)
    if not words:
        return None
    if phrase:
        return _quoted(" ".join(words))
    return " AND ".join(_quoted(w) for w in words)


def _words(text: str) -> list[str]:
    return [text[s:e].casefold() for s, e in word_runs(text)]


def token_spec(text: str) -> str:
    """``SEARCH(text)`` as ``words_match`` takes it: ``p`` (a phrase) or ``w`` (words), then
    the folded words, tab-separated (a word never holds a tab)."""
    phrase, words = _search_words(text)
    return ("p" if phrase else "w") + "\t".join(["", *(w.casefold() for w in words)])


def words_match(message: str, spec: str) -> bool:
    """Whether ``message`` matches ``SEARCH`` as the index does (every word as a word, or the
    phrase's words adjacent and in order), for the lines the index has not reached yet.
    Diacritics are compared as they are (the index folds them): such a line is found once
    indexed, a second or two later."""
    kind, *wanted = spec.split("\t")
    if not wanted:
        return False
    words = _words(message)
    if kind == "p":
        n = len(wanted)
        return any(words[i : i + n] == wanted for i in range(len(words) - n + 1))
    present = set(words)
    return all(w in present for w in wanted)
