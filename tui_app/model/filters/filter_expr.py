"""Filter-expression parser shared by the ml v1 jobs.list filter and Logging's entries:list filter.

Both APIs take a small boolean query language (`jobId:rnn* AND state:FAILED`,
`resource.labels.job_id="J" AND timestamp>="..."`). The syntax is the same for both, only the
meaning of the fields differs, so this module turns text into an immutable AST and the two
evaluators (`tui_app.local.job_filter`, `tui_app.local.logs.log_query`) give it meaning.

Grammar (keywords are upper case only, as in Cloud Logging; `and` is a search term)::

    filter   := conj
    conj     := disj ( ["AND"] disj )*          # juxtaposition is an implicit AND
    disj     := unary ( "OR" unary )*
    unary    := ("NOT" | "-") unary | primary
    primary  := "(" conj ")" | path op value | value
    path     := segment ( "." segment )*        # segment: name or "quoted string"
    op       := ":" | "=" | "!=" | "<" | "<=" | ">" | ">="

Precedence follows Cloud Logging, not most programming languages: NOT binds tightest, then
**OR, then AND**. So `a AND b OR c` means `a AND (b OR c)`. gcloud and google-cloud-logging
always parenthesise their OR groups, so they parse the same either way; we pick the Logging rule
so a filter pasted from the Cloud console means here what it means there.

The parser is pure (stdlib only, no IO) and defensive: the input length and nesting depth are
capped, so any text either parses or raises `FilterSyntaxError`, never `RecursionError`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TypeAlias

__all__ = [
    "MAX_DEPTH",
    "MAX_LENGTH",
    "OPERATORS",
    "And",
    "Compare",
    "FilterSyntaxError",
    "Node",
    "Not",
    "Or",
    "Search",
    "Text",
    "parse_filter",
    "parse_timestamp",
]

MAX_LENGTH = 20_000
"""Longest filter accepted; real filters are a few hundred characters, so this only stops abuse."""

MAX_DEPTH = 64
"""Deepest nesting of parentheses and NOTs accepted; keeps recursion far from Python's limit."""

OPERATORS = (":", "=", "!=", "<", "<=", ">", ">=")
"""Comparison operators, as they appear in `Compare.op`."""

_KEYWORDS = frozenset({"AND", "OR", "NOT"})
# A path segment that needs no quotes. `-` is allowed after the first character because label
# keys such as `airflow-version` contain it; the term is only a path if an operator follows.
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*")
_SEARCH = re.compile(r"SEARCH\s*\(")
# Characters that end an unquoted value or search term.
_VALUE_STOP = frozenset('()"')
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}


class FilterSyntaxError(ValueError):
    """The filter text is not well formed; the message names what was expected and where.

    Attributes:
        position: 0-based character offset the message refers to.
    """

    def __init__(self, message: str, position: int) -> None:
        super().__init__(message)
        self.position = position


@dataclass(frozen=True, slots=True)
class And:
    """All of `items` must hold (explicit `AND` or juxtaposed terms)."""

    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Or:
    """At least one of `items` must hold."""

    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Not:
    """`item` must not hold (`NOT x` or `-x`)."""

    item: Node


@dataclass(frozen=True, slots=True)
class Compare:
    """`path op value`, e.g. `labels.owner:ann` is `Compare(("labels", "owner"), ":", "ann")`.

    Attributes:
        path: Field path segments, with quoted segments unquoted
            (`labels."a.b/c"` is `("labels", "a.b/c")`).
        op: One of `OPERATORS`.
        value: The literal, with quotes and escapes removed.
        quoted: Whether the literal was a quoted string; `x:*` (presence) differs from `x:"*"`.
    """

    path: tuple[str, ...]
    op: str
    value: str
    quoted: bool = False


@dataclass(frozen=True, slots=True)
class Text:
    """A bare word or quoted string: a global text search for `value`."""

    value: str


@dataclass(frozen=True, slots=True)
class Search:
    """``SEARCH("text")`` or ``SEARCH(field, "text")``: Cloud Logging's token search (log
    filters only, ``parse_filter(..., search=True)``). ``path`` is None for every text field."""

    path: tuple[str, ...] | None
    value: str


Node: TypeAlias = And | Or | Not | Compare | Text | Search
"""Any node of the filter AST."""


def parse_filter(text: str, *, search: bool = False) -> Node | None:
    """Parse a jobs.list or entries:list filter into an AST.

    Args:
        text: The filter as sent on the wire.
        search: Read ``SEARCH(...)`` as a function (Logging's; a jobs filter has none).

    Returns:
        The root node, or None when `text` is empty or only whitespace (no filtering).

    Raises:
        FilterSyntaxError: The text is malformed, too long or nested too deeply.
    """
    if len(text) > MAX_LENGTH:
        raise FilterSyntaxError(
            f"Filter is too long ({len(text)} characters; the limit is {MAX_LENGTH})"
            f" at position {MAX_LENGTH}",
            MAX_LENGTH,
        )
    parser = _Parser(text, search)
    parser.skip_ws()
    if parser.at_end():
        return None
    node = parser.conjunction(depth=0, after=None)
    parser.skip_ws()
    if not parser.at_end():
        # conjunction() only stops at the end or at a ')' it cannot match.
        raise parser.error(
            f"Unexpected {parser.describe_here()} at position {parser.pos}", parser.pos
        )
    return node


class _Parser:
    """Recursive-descent parser over the raw string (scannerless).

    Scanning is context-dependent: after an operator, `2024-01-01T00:00:00Z` or `census*` is one
    value even though it contains `:` or `*`, while in term position `:` ends a field path. A
    separate tokenizer could not tell the two apart, so the parser reads characters directly.
    """

    def __init__(self, text: str, search: bool = False) -> None:
        self.text = text
        self.pos = 0
        self.search = search

    # -- low-level scanning -------------------------------------------------------------------

    def at_end(self) -> bool:
        return self.pos >= len(self.text)

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def skip_ws(self) -> None:
        text, pos = self.text, self.pos
        while pos < len(text) and text[pos].isspace():
            pos += 1
        self.pos = pos

    def error(self, message: str, position: int) -> FilterSyntaxError:
        return FilterSyntaxError(message, position)

    def describe_here(self) -> str:
        """What is at `pos`, for messages: `')'`, `'AND'` or `end of filter`."""
        if self.at_end():
            return "end of filter"
        return f"'{self.keyword_here() or self.peek()}'"

    def keyword_here(self) -> str | None:
        """The keyword starting at `pos` if it is a whole word (`ANDROID` is not `AND`)."""
        for word in _KEYWORDS:
            end = self.pos + len(word)
            if self.text.startswith(word, self.pos) and (
                end >= len(self.text) or self.text[end].isspace() or self.text[end] in "()"
            ):
                return word
        return None

    def operator_here(self) -> str | None:
        two = self.text[self.pos : self.pos + 2]
        if two in ("!=", "<=", ">="):
            return two
        one = self.peek()
        return one if one in (":", "=", "<", ">") else None

    def quoted_string(self) -> str:
        """Read a double-quoted string at `pos` (which is on the quote) and unescape it."""
        start = self.pos
        text = self.text
        pos = start + 1
        out: list[str] = []
        while pos < len(text):
            ch = text[pos]
            if ch == '"':
                self.pos = pos + 1
                return "".join(out)
            if ch == "\\":
                if pos + 1 >= len(text):
                    break
                nxt = text[pos + 1]
                # Unknown escapes stand for the character itself (`\"`, `\\`, `\*`).
                out.append(_ESCAPES.get(nxt, nxt))
                pos += 2
                continue
            out.append(ch)
            pos += 1
        raise self.error(f"Unterminated string starting at position {start}", start)

    def unquoted_run(self) -> str:
        """Read an unquoted value: everything up to whitespace, a parenthesis or a quote."""
        text, start = self.text, self.pos
        pos = start
        while pos < len(text) and not text[pos].isspace() and text[pos] not in _VALUE_STOP:
            pos += 1
        if pos < len(text) and text[pos] == '"' and pos > start:
            raise self.error(f"Unexpected '\"' at position {pos}", pos)
        self.pos = pos
        return text[start:pos]

    # -- grammar ------------------------------------------------------------------------------

    def conjunction(self, depth: int, after: tuple[str, int] | None) -> Node:
        """conj := disj ( ["AND"] disj )*; stops before ')' or at the end."""
        items = [self.disjunction(depth, after)]
        while True:
            self.skip_ws()
            if self.at_end() or self.peek() == ")":
                break
            if self.keyword_here() == "AND":
                where = self.pos
                self.pos += 3
                items.append(self.disjunction(depth, ("AND", where)))
            else:
                items.append(self.disjunction(depth, None))
        return items[0] if len(items) == 1 else And(tuple(items))

    def disjunction(self, depth: int, after: tuple[str, int] | None) -> Node:
        """disj := unary ( "OR" unary )*."""
        items = [self.unary(depth, after)]
        while True:
            self.skip_ws()
            if self.keyword_here() != "OR":
                break
            where = self.pos
            self.pos += 2
            items.append(self.unary(depth, ("OR", where)))
        return items[0] if len(items) == 1 else Or(tuple(items))

    def unary(self, depth: int, after: tuple[str, int] | None) -> Node:
        """unary := ("NOT" | "-") unary | primary."""
        self.skip_ws()
        if self.at_end():
            raise self.expected_term(after)
        start = self.pos
        if self.keyword_here() == "NOT":
            self.pos += 3
            self.check_depth(depth + 1, start)
            return Not(self.unary(depth + 1, ("NOT", start)))
        if self.peek() == "-":
            nxt = self.text[start + 1 : start + 2]
            if nxt == "" or nxt.isspace():
                raise self.error(f"Expected a term after '-' at position {start}", start)
            self.pos += 1
            self.check_depth(depth + 1, start)
            return Not(self.unary(depth + 1, ("-", start)))
        return self.primary(depth, after)

    def primary(self, depth: int, after: tuple[str, int] | None) -> Node:
        """primary := "(" conj ")" | comparison | search term."""
        start = self.pos
        ch = self.peek()
        if ch == "(":
            self.check_depth(depth + 1, start)
            self.pos += 1
            node = self.conjunction(depth + 1, ("(", start))
            self.skip_ws()
            if self.at_end():
                raise self.error(f"Missing ')' to close '(' at position {start}", start)
            self.pos += 1  # conjunction() only stops at ')' or the end
            return node
        if ch == ")":
            raise self.error(f"Unexpected ')' at position {start}", start)
        op = self.operator_here()
        if op is not None:
            raise self.error(
                f"Unexpected '{op}' at position {start}; expected a field name before it", start
            )
        keyword = self.keyword_here()
        if keyword is not None:
            raise self.error(f"Unexpected '{keyword}' at position {start}; expected a term", start)
        if self.search and _SEARCH.match(self.text, self.pos):
            return self.search_call()
        comparison = self.try_comparison()
        if comparison is not None:
            return comparison
        self.pos = start
        if ch == '"':
            return Text(self.quoted_string())
        return Text(self.unquoted_run())

    def search_call(self) -> Search:
        """``SEARCH("text")`` or ``SEARCH(field, "text")``, at ``pos``."""
        start = self.pos
        match = _SEARCH.match(self.text, self.pos)
        assert match is not None
        self.pos = match.end()
        self.skip_ws()
        path: tuple[str, ...] | None = None
        if self.peek() != '"':
            field = _NAME.match(self.text, self.pos)
            segments: list[str] = []
            while field is not None:
                segments.append(field.group())
                self.pos = field.end()
                if self.peek() != ".":
                    break
                self.pos += 1
                field = _NAME.match(self.text, self.pos)
            self.skip_ws()
            if not segments or self.peek() != ",":
                raise self.error(
                    f'SEARCH at position {start} takes "text" or a field and "text": '
                    f'SEARCH("out of memory") or SEARCH(textPayload, "NaN")',
                    self.pos,
                )
            path = tuple(segments)
            self.pos += 1
            self.skip_ws()
        if self.peek() != '"':
            raise self.error(
                f"SEARCH at position {start} needs a quoted string, found {self.describe_here()}",
                self.pos,
            )
        value = self.quoted_string()
        self.skip_ws()
        if self.peek() != ")":
            raise self.error(f"Missing ')' to close SEARCH( at position {start}", self.pos)
        self.pos += 1
        return Search(path, value)

    def try_comparison(self) -> Compare | None:
        """Parse `path op value` at `pos`, or return None (leaving `pos` anywhere) if no op."""
        path: list[str] = []
        while True:
            if self.peek() == '"':
                path.append(self.quoted_string())
            else:
                match = _NAME.match(self.text, self.pos)
                if match is None:
                    return None
                path.append(match.group())
                self.pos = match.end()
            nxt = self.text[self.pos + 1 : self.pos + 2]
            if self.peek() == "." and (nxt == '"' or (nxt != "" and _NAME.match(nxt))):
                self.pos += 1
                continue
            break
        self.skip_ws()
        op = self.operator_here()
        if op is None:
            return None
        op_pos = self.pos
        self.pos += len(op)
        self.skip_ws()
        if self.peek() == '"':
            return Compare(tuple(path), op, self.quoted_string(), quoted=True)
        if self.at_end() or self.peek() in "()" or self.keyword_here() is not None:
            raise self.error(
                f"Expected a value after '{op}' at position {op_pos}, found {self.describe_here()}",
                op_pos,
            )
        return Compare(tuple(path), op, self.unquoted_run(), quoted=False)

    def expected_term(self, after: tuple[str, int] | None) -> FilterSyntaxError:
        if after is None:
            return self.error(f"Expected a term at position {self.pos}", self.pos)
        word, where = after
        if word == "(":
            return self.error(f"Missing ')' to close '(' at position {where}", where)
        return self.error(f"Expected a term after '{word}' at position {where}", where)

    def check_depth(self, depth: int, position: int) -> None:
        if depth > MAX_DEPTH:
            raise self.error(
                f"Filter nests too deeply (more than {MAX_DEPTH} levels) at position {position}",
                position,
            )


# -- timestamps -----------------------------------------------------------------------------

# ASCII digits only: `\d` would also accept e.g. Arabic-Indic digits.
_TIMESTAMP = re.compile(
    r"(?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2})"
    r"(?:[Tt](?P<time>[0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.(?P<frac>[0-9]{1,9}))?"
    r"(?P<zone>[Zz]|[+-][0-9]{2}:?[0-9]{2})?)?"
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def parse_timestamp(text: str) -> int:
    """Parse an RFC 3339 timestamp literal into integer nanoseconds since the epoch (UTC).

    Integers, not datetimes, because gcloud sends 9-digit nanoseconds and its resume cursor is
    an exact `timestamp="<ts>"` match: rounding to microseconds would make that cursor match the
    wrong entries. Accepted: `1970-01-01T01:00:00.000000000Z` (gcloud), `...:52.289121Z`,
    `...:57.552480+0000` (google-cloud-logging's colon-less offset), `+00:00`, no fraction, no
    zone (taken as UTC) and a bare date `2026-11-21` (midnight UTC).

    Args:
        text: The literal, without quotes.

    Returns:
        Nanoseconds since 1970-01-01T00:00:00Z (negative before it).

    Raises:
        ValueError: `text` is not one of the accepted forms or is not a real date/time.
    """
    match = _TIMESTAMP.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"Not a timestamp: {text!r} (expected e.g. 2024-01-01T00:00:00Z)")
    year, month, day = (int(part) for part in match["date"].split("-"))
    hour = minute = second = 0
    if match["time"] is not None:
        hour, minute, second = (int(part) for part in match["time"].split(":"))
    try:
        moment = datetime(year, month, day, hour, minute, second, tzinfo=UTC)
    except ValueError as exc:
        raise ValueError(f"Not a timestamp: {text!r} ({exc})") from None
    seconds = (moment - _EPOCH) // timedelta(seconds=1)
    frac = match["frac"] or ""
    nanos = int(frac.ljust(9, "0")) if frac else 0
    zone = match["zone"]
    if zone and zone not in ("Z", "z"):
        digits = zone[1:].replace(":", "")
        off_h, off_m = int(digits[:2]), int(digits[2:])
        if off_h > 23 or off_m > 59:
            raise ValueError(f"Not a timestamp: {text!r} (bad UTC offset {zone})")
        offset = (off_h * 3600 + off_m * 60) * (1 if zone[0] == "+" else -1)
        seconds -= offset
    return seconds * 1_000_000_000 + nanos
