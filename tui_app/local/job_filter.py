"""Evaluate an ml v1 `jobs.list` filter against Job resources (camelCase JSON dicts).

The local service keeps Job resources as the JSON the API returns, so the filter is evaluated on
that JSON rather than on SQL columns: every field the API documents is filterable without a
schema change, and the semantics match what a client sees in the resource.

Semantics (the API documents the syntax but not every corner; these are our choices):

* `:` is "has". With `*` anywhere in the value it is a case-sensitive glob over the whole value
  (`jobId:census*`); without `*` it is equality. On a map it tests keys (`labels:owner` holds
  when the key exists; `labels:own*` globs the keys).
* `=` / `!=` compare as strings, except that two numbers compare numerically (`"2"` = `2.0`)
  and two timestamps compare as instants (`...T00:00:00Z` = `...T00:00:00.000+00:00`).
* `<`, `<=`, `>`, `>=` compare as instants when both sides are timestamps, numerically when both
  are numbers, else as strings.
* A missing field makes every comparison false except `!=`, which is true: `!=` is defined as
  NOT `=`, so `labels.owner!=ann` also lists jobs that have no owner label.
* Lists fan out: a comparison holds if it holds for any element (`!=` if none equals).
* A bare search term matches when it is a substring of `jobId` (case-sensitive, like globs).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, Final

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

__all__ = ["JOB_FIELDS", "JobPredicate", "compile_job_filter"]

JOB_FIELDS: Final = frozenset(
    {
        "jobId",
        "state",
        "createTime",
        "startTime",
        "endTime",
        "errorMessage",
        "labels",
        "trainingInput",
        "trainingOutput",
        "etag",
        "jobPosition",
        "predictionInput",
        "predictionOutput",
    }
)
"""Top-level fields of the Job resource that a filter may name."""

JobPredicate = Callable[[dict[str, Any]], bool]
"""A compiled filter: True when the job matches."""

# ASCII only, and a bounded exponent so Decimal never has to build an absurd number.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,4})?", re.ASCII)
_ORDERINGS: Final[dict[str, Callable[[Any, Any], bool]]] = {
    "<": lambda a, b: bool(a < b),
    "<=": lambda a, b: bool(a <= b),
    ">": lambda a, b: bool(a > b),
    ">=": lambda a, b: bool(a >= b),
}
_MISSING: Final[list[Any]] = []


def compile_job_filter(text: str) -> JobPredicate:
    """Compile a jobs.list `filter` into a predicate over Job resource dicts.

    Compiling once and calling the predicate per job keeps literal parsing (numbers, timestamps,
    glob patterns) out of the per-job loop.

    Args:
        text: The filter, e.g. `jobId:rnn* AND state:FAILED`; empty matches every job.

    Returns:
        A function that takes a Job resource dict and says whether it matches.

    Raises:
        FilterSyntaxError: The filter is malformed.
        ValueError: The filter names a field the Job resource does not have.
    """
    node = parse_filter(text)
    if node is None:
        return _always
    _check_fields(node)
    return _compile(node)


def _always(job: dict[str, Any]) -> bool:
    return True


def _check_fields(root: Node) -> None:
    """Reject unknown top-level fields up front, so a typo is an error, not an empty list."""
    stack: list[Node] = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, And | Or):
            stack.extend(node.items)
        elif isinstance(node, Not):
            stack.append(node.item)
        elif isinstance(node, Compare) and node.path[0] not in JOB_FIELDS:
            field = ".".join(node.path)
            supported = ", ".join(sorted(JOB_FIELDS))
            raise ValueError(
                f"Unknown field {node.path[0]!r} in job filter ({field!r});"
                f" supported fields: {supported}"
            )


def _compile(node: Node) -> JobPredicate:
    if isinstance(node, And):
        parts = [_compile(item) for item in node.items]
        return lambda job: all(part(job) for part in parts)
    if isinstance(node, Or):
        parts = [_compile(item) for item in node.items]
        return lambda job: any(part(job) for part in parts)
    if isinstance(node, Not):
        inner = _compile(node.item)
        return lambda job: not inner(job)
    if isinstance(node, Text):
        needle = node.value

        def search(job: dict[str, Any]) -> bool:
            job_id = job.get("jobId")
            return isinstance(job_id, str) and needle in job_id

        return search
    if isinstance(node, Search):  # never parsed for a jobs filter (parse_filter(search=False))
        raise ValueError("SEARCH() applies to log filters only")
    return _compile_compare(node)


def _compile_compare(node: Compare) -> JobPredicate:
    literal = _Literal(node.value)
    path = node.path
    if node.op == "!=":
        return lambda job: not any(literal.equals(c) for c in _resolve(job, path))
    if node.op == "=":
        return lambda job: any(literal.equals(c) for c in _resolve(job, path))
    if node.op == ":":
        return lambda job: any(literal.has(c) for c in _resolve(job, path))
    ordering = _ORDERINGS[node.op]
    return lambda job: any(literal.compares(c, ordering) for c in _resolve(job, path))


def _resolve(job: Mapping[str, Any], path: tuple[str, ...]) -> list[Any]:
    """The values at `path`, fanning out through lists; empty when the field is missing."""
    current: list[Any] = [job]
    for segment in path:
        found: list[Any] = []
        for item in current:
            if not isinstance(item, Mapping) or segment not in item:
                continue
            value = item[segment]
            if isinstance(value, list):
                found.extend(v for v in value if v is not None)
            elif value is not None:  # JSON null is the same as an absent field
                found.append(value)
        if not found:
            return _MISSING
        current = found
    return current


def _scalar_text(value: Any) -> str | None:
    """The JSON scalar as the filter sees it; None for maps and lists (no scalar meaning)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return str(value)
    return None


def _as_number(text: str) -> Decimal | None:
    return Decimal(text) if _NUMBER.fullmatch(text) else None


def _as_timestamp(text: str) -> int | None:
    try:
        return parse_timestamp(text)
    except ValueError:
        return None


def _glob_match(pieces: tuple[str, ...], text: str) -> bool:
    """Whether `text` matches the glob whose `*`-separated pieces are `pieces`.

    Hand-written rather than a regex of `.*`s: a filter like `*a*a*a*a*b` would make a
    backtracking regex take polynomial time per job, while taking each middle piece at its
    leftmost occurrence is linear and exact when `*` is the only wildcard.
    """
    first, last = pieces[0], pieces[-1]
    if len(text) < len(first) + len(last) or not text.startswith(first):
        return False
    if not text.endswith(last):
        return False
    pos, end = len(first), len(text) - len(last)
    for piece in pieces[1:-1]:
        found = text.find(piece, pos, end)
        if found < 0:
            return False
        pos = found + len(piece)
    return True


class _Literal:
    """A filter literal with its number / timestamp / glob readings worked out once."""

    __slots__ = ("glob", "number", "text", "timestamp")

    def __init__(self, text: str) -> None:
        self.text = text
        self.number = _as_number(text)
        self.timestamp = _as_timestamp(text)
        # `*`-separated pieces, or None when there is no wildcard.
        self.glob = tuple(text.split("*")) if "*" in text else None

    def equals(self, candidate: Any) -> bool:
        return self.compares(candidate, operator.eq)

    def has(self, candidate: Any) -> bool:
        if isinstance(candidate, Mapping):
            return any(isinstance(key, str) and self._matches(key) for key in candidate)
        text = _scalar_text(candidate)
        if text is None:
            return False
        return _glob_match(self.glob, text) if self.glob else self.equals(candidate)

    def _matches(self, text: str) -> bool:
        return _glob_match(self.glob, text) if self.glob else text == self.text

    def compares(self, candidate: Any, relation: Callable[[Any, Any], bool]) -> bool:
        """Whether ``relation(candidate, literal)`` holds: as instants when both are timestamps,
        as numbers when both are numbers, else as text (the module doc's rule for ``=`` and the
        orderings alike). No text is both, so the order of the two tries does not matter: a
        timestamp's date has a ``-`` right after a digit, where a number cannot."""
        text = _scalar_text(candidate)
        if text is None:
            return False
        if self.timestamp is not None:
            instant = _as_timestamp(text)
            if instant is not None:
                return relation(instant, self.timestamp)
        if self.number is not None:
            number = _as_number(text)
            if number is not None:
                return relation(number, self.number)
        return relation(text, self.text)
