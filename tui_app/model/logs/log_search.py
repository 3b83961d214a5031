"""A search over every job's logs, as a person types it: the filter it sends, the words to
highlight, the time window, and the hits grouped by job.

The TUI's search view (``:grep``) and ``tui-app logs search`` take the same query, so it is read
here once. What is typed is one of two things:

- **text** (``out of memory``, ``can't open "model.pt"``): Cloud Logging's global restriction,
  a case-insensitive substring search, sent quoted (``"out of memory"``), a ``"`` or ``\\`` in
  it escaped;
- **a Logging filter**, sent as typed: a query that starts with ``SEARCH(`` (whole words) or
  with ``"`` (a quoted text of the user's own), or that holds a field term (``severity>=ERROR``,
  ``textPayload:"NaN"``, ``resource.labels.job_id="J"``, ``timestamp>=...``).

The rule is deliberately short (docs/log-search.md says it): a person who wants the filter
language writes a term of it, and anything else is text, so ``loss: nan`` (no known field) is
searched for as it is.

No IO here: the clients read the pages, the callers print or draw them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Final, NamedTuple

from tui_app.model.logs.log_line import LogLine

__all__ = [
    "SEARCH_WINDOWS",
    "SearchHit",
    "group_by_job",
    "highlight_terms",
    "is_logging_filter",
    "logs_pattern",
    "quote_text",
    "search_filter",
    "since_term",
    "window_label",
    "with_window",
]

SEARCH_WINDOWS: Final[tuple[float | None, ...]] = (None, 3600.0, 86400.0, 7 * 86400.0, 30 * 86400.0)
"""The search view's time windows, in the order ``t`` cycles them: all, 1h, 24h, 7d, 30d."""

_FIELD_TERM: Final = re.compile(
    r"""(?<![\w."])                                   # a field starts a term
    (?:severity|timestamp|receiveTimestamp|insertId|logName|textPayload
      |resource\.[\w.]+|labels(?:\.(?:[\w./-]+|"[^"]*"))*|jsonPayload(?:\.[\w.]+)*)
    \s*(?:>=|<=|!=|=~|!~|=|:|<|>)""",
    re.VERBOSE,
)
"""A Logging field compared with something: what makes a query a filter rather than text."""

_QUOTED: Final = r'"(?P<{}>(?:[^"\\]|\\.)*)"'
_TERMS: Final = re.compile(
    r"(?P<search>\bSEARCH\s*\(\s*(?:[\w.]+\s*,\s*)?"
    + _QUOTED.format("words")
    + r"\s*\))"
    + r"|(?P<field>[\w.]+(?:\.\"[^\"]*\")*)\s*(?P<op>>=|<=|!=|=~|!~|=|:|<|>)\s*(?:"
    + _QUOTED.format("value")
    + r"|[^\s()]+)"
    + r"|"
    + _QUOTED.format("text"),
    re.IGNORECASE,
)
"""The parts of a filter that say which text a line holds: ``SEARCH("...")``, a field term
(only the message's are text searches), and a quoted global restriction."""
_MESSAGE_FIELDS: Final = frozenset({"textpayload", "jsonpayload.message"})
_ESCAPED: Final = re.compile(r"\\(.)")


class SearchHit(NamedTuple):
    """One line a search found, and the job it belongs to (a ``LogLine`` has no job: the
    log views hold one job's lines)."""

    job_id: str
    """The entry's ``resource.labels.job_id``."""
    line: LogLine


def quote_text(text: str) -> str:
    """``text`` as a Logging string literal: in double quotes, ``\\`` and ``"`` escaped."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def is_logging_filter(query: str) -> bool:
    """Whether ``query`` is sent as a Logging filter as it is (module doc), not as text."""
    text = query.strip()
    if text.startswith('"') or text.upper().startswith("SEARCH("):
        return True
    return _FIELD_TERM.search(text) is not None


def search_filter(query: str) -> str:
    """The Logging filter for what was typed ("" for nothing): text quoted, a filter as it is.

    Surrounding spaces are not part of the text (a trailing space typed before the next word
    would otherwise search for the space).
    """
    text = query.strip()
    if not text:
        return ""
    return text if is_logging_filter(text) else quote_text(text)


def since_term(now: datetime, seconds: float | None) -> str:
    """``timestamp>="..."`` for the last ``seconds`` before ``now`` (RFC 3339, UTC); "" for
    no window (None)."""
    if seconds is None:
        return ""
    start = (now.astimezone(UTC) - timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"timestamp>={quote_text(start)}"


def with_window(filter_text: str, window: str) -> str:
    """``filter_text`` restricted by ``window`` (a ``since_term``): the filter in parentheses,
    so an OR in it stays inside (AND binds tighter in Logging's grammar too)."""
    if not window:
        return filter_text
    return f"({filter_text}) AND {window}" if filter_text else window


def window_label(seconds: float | None) -> str:
    """``all``, ``1h``, ``24h``, ``7d``, ``30d``: a window as the view's title says it."""
    if seconds is None:
        return "all"
    if seconds % 86400 == 0 and seconds >= 7 * 86400:
        return f"{int(seconds // 86400)}d"
    if seconds % 3600 == 0:
        return f"{int(seconds // 3600)}h"
    return f"{int(seconds // 60)}m"


def highlight_terms(query: str) -> list[str]:
    """The texts to mark in a hit, longest first: what the search matched in the line.

    Text: the text. A filter: each quoted global restriction, each ``textPayload``/
    ``jsonPayload.message`` value, and ``SEARCH``'s words (a backticked phrase whole). Other
    terms (a job id, a severity) match no text of the line and give none.
    """
    text = query.strip()
    if not text:
        return []
    if not is_logging_filter(text):
        return [text]
    terms: list[str] = []
    for match in _TERMS.finditer(text):
        if match["search"] is not None:
            terms += _search_words(_unescape(match["words"]))
        elif match["field"] is not None:
            if match["field"].lower() in _MESSAGE_FIELDS and match["value"] is not None:
                terms.append(_unescape(match["value"]))
        elif match["text"] is not None:
            terms.append(_unescape(match["text"]))
    unique = dict.fromkeys(t for t in terms if t.strip())
    return sorted(unique, key=len, reverse=True)


def _unescape(value: str) -> str:
    return _ESCAPED.sub(r"\1", value)


def _search_words(value: str) -> list[str]:
    """``SEARCH``'s words: a `backticked phrase` as one, the rest split at spaces."""
    words: list[str] = []
    for i, part in enumerate(value.split("`")):
        if i % 2:
            words.append(part)
        else:
            words += part.split()
    return words


def group_by_job(hits: Iterable[SearchHit]) -> list[tuple[str, list[SearchHit]]]:
    """``hits`` (newest first) grouped by job: the job with the newest hit first, each job's
    hits in the order given. One job's hits read together, as in the job's own logs; the order
    of the groups keeps the newest news on top."""
    groups: dict[str, list[SearchHit]] = {}
    for hit in hits:
        groups.setdefault(hit.job_id, []).append(hit)
    return list(groups.items())


_REGEX_SPECIAL: Final = re.compile(r"([.^$*+?{}\[\]\\|()])")


def logs_pattern(terms: tuple[str, ...] | list[str]) -> str:
    """The logs pane's search (a regex, shown in its info bar) for the texts a search matched:
    each literal, the longest first so ``n`` lands on the whole phrase, in any case (the
    service's text search folds case; the pane's smart case would not for a capital, so a
    capital gets ``(?i)``). Only regex syntax is escaped: ``out of memory`` stays readable."""
    if not terms:
        return ""
    pattern = "|".join(_REGEX_SPECIAL.sub(r"\\\1", t) for t in sorted(terms, key=len, reverse=True))
    return f"(?i){pattern}" if any(c.isupper() for c in pattern) else pattern
