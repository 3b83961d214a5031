"""gcloud's ``jobs list --filter`` terms, read as the job list's ``/`` filter.

People who know ``gcloud ai-platform jobs list --filter`` type ``state=FAILED`` or
``labels.owner=demo``. The list filter (``list_filter``) spells those ``state:FAILED`` and
``label:owner=demo``; read as its own syntax, gcloud's text was a literal search that matched
nothing, so a script got an empty table and exit 0 for a filter it had every reason to think
was understood. This module rewrites the gcloud terms the list filter can express into its
syntax, and refuses the rest with a message that names what is accepted.

What is rewritten (the ``read as`` column is the list filter's syntax):

==============================================  ==============================================
gcloud                                          read as
==============================================  ==============================================
``state=FAILED``, ``state:FAILED``              ``state:FAILED``
``state=FAILED OR state=CANCELLED``             ``state:FAILED,CANCELLED``
``NOT state=SUCCEEDED`` (among other terms)     ``state:`` every other state
``labels.owner=demo``, ``labels.owner:demo``    ``label:owner=demo``
``labels:owner``, ``labels.owner:*``            ``label:owner``
``jobId=mnist_1``, ``jobId:mnist_1``            ``^mnist_1\\b`` (the id is the row's first word)
``jobId:mnist*``                                ``^mnist\\w*``
``a AND b``, ``a b``                            both terms
``NOT (...)`` or ``-x`` around the whole filter  ``!`` before it
==============================================  ==============================================

Job ids match with the list's smart case (exact once the value has an uppercase letter), not
gcloud's always-exact comparison; a bare word keeps the list's meaning (a search of the row).
Anything else (another field, a glob in a label, ``!=`` inside a conjunction, OR across fields)
raises :class:`GcloudFilterError`.

Pure and stdlib-only, like the rest of the model; the parsing is ``filter_expr``'s.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from tui_app.model.filters.filter_expr import (
    And,
    Compare,
    FilterSyntaxError,
    Node,
    Not,
    Or,
    Search,
    Text,
    parse_filter,
)
from tui_app.model.jobs.states import JobState

__all__ = [
    "ACCEPTED",
    "VALID_STATES",
    "GcloudFilterError",
    "looks_like_gcloud",
    "parse_state_names",
    "translate_gcloud_filter",
    "unknown_states_error",
]

ACCEPTED = (
    "the list's filter (words: a regex over the row; state:X[,Y]; label:K[=V]; a leading ! "
    "inverts) or gcloud's terms state=X, state:X, labels.K=V, labels.K:V, labels:K, jobId=ID, "
    "jobId:PREFIX*, joined by AND or spaces, OR between terms of one field, NOT before a state "
    "term or the whole filter"
)
"""What a filter may be, for the message that refuses one."""

VALID_STATES = ", ".join(s.value for s in JobState if s is not JobState.STATE_UNSPECIFIED)

_STATE_ORDER = tuple(JobState)
_ALL_STATES = frozenset(JobState)

# The Job resource's fields (what gcloud's --filter can name), lower-cased, and ``label``: a
# term ``<field>`` followed by an operator is gcloud's syntax, never the list's regex.
_FIELDS = (
    "jobid|state|labels|label|createtime|starttime|endtime|errormessage|traininginput|"
    "trainingoutput|etag|jobposition|predictioninput|predictionoutput"
)
# ``state:X`` and ``label:K=V`` read the same in both syntaxes, so a bare ``:`` after them is
# not a sign of gcloud's; any other operator, or any operator after another field, is.
_GCLOUD_TERM = re.compile(
    rf"(?:^|[\s(!])-?(?:(?:{_FIELDS})(?:\.\S*?)?\s*(?:!=|<=|>=|=|<|>)"
    rf"|(?!(?:state|label):)(?:{_FIELDS})(?:\.\S*?)?\s*:)",
    re.IGNORECASE,
)
_KEYWORD = re.compile(r"(?:^|[\s(!])(?:AND|OR|NOT)(?=$|[\s()])")
_JOB_ID_GLOB = re.compile(r"[A-Za-z0-9_*]+")
_CANONICAL_FIELD = {"jobid": "jobId", "state": "state", "labels": "labels", "label": "label"}


class GcloudFilterError(ValueError):
    """The filter is gcloud's syntax but the list filter cannot express it (or it is
    malformed); the message says which part (``ACCEPTED`` says what a filter may be)."""


def looks_like_gcloud(text: str) -> bool:
    """True when ``text`` uses gcloud's syntax: a Job field with an operator (``state=X``,
    ``labels.owner:demo``, ``jobId:x*``) or ``AND``/``OR``/``NOT``.

    The list's own ``state:X`` and ``label:K=V`` alone do not count: they mean the same
    either way, and a half-typed ``state:`` must stay the list's (ignored until a value).
    """
    return _GCLOUD_TERM.search(text) is not None or _KEYWORD.search(text) is not None


def parse_state_names(value: str) -> tuple[set[JobState], list[str]]:
    """The states a comma-separated list names (any case; ``UNKNOWN`` is STATE_UNSPECIFIED),
    and the names that are no state."""
    states: set[JobState] = set()
    unknown: list[str] = []
    for name in value.split(","):
        if not name:
            continue
        upper = name.upper()
        if upper in ("UNKNOWN", "UNSPECIFIED"):
            upper = JobState.STATE_UNSPECIFIED.value
        try:
            states.add(JobState(upper))
        except ValueError:
            unknown.append(name)
    return states, unknown


def unknown_states_error(names: Iterable[str]) -> str:
    """The message for state names that are no state: it lists the valid ones."""
    shown = ", ".join(repr(n) for n in names)
    return f"Unknown state {shown}; valid states: {VALID_STATES}"


def translate_gcloud_filter(text: str) -> str:
    """``text`` (gcloud's syntax, possibly mixed with the list's) in the list filter's syntax.

    Args:
        text: What the user typed, e.g. ``state=FAILED AND labels.owner=demo``.

    Returns:
        The same filter in the list's syntax, e.g. ``state:FAILED label:owner=demo``.

    Raises:
        GcloudFilterError: the text is malformed, names a state that does not exist, or uses
            a term the list filter cannot express; the message says which.
    """
    body = text.strip()
    inverted = False
    if body.startswith("!"):  # the list's own inversion, before gcloud's terms
        inverted, body = True, body[1:]
    try:
        node = parse_filter(body)
    except FilterSyntaxError as exc:
        raise GcloudFilterError(f"{exc}") from None
    while isinstance(node, Not):  # NOT around the whole filter is the list's "!"
        inverted, node = not inverted, node.item
    if node is None:
        return "!" if inverted else ""
    return _Conjunction(node).render(inverted)


class _Conjunction:
    """The terms of one AND, gathered into the list filter's parts."""

    def __init__(self, node: Node) -> None:
        self.states: frozenset[JobState] | None = None  # None: no constraint
        self.labels: list[str] = []
        self.search: list[tuple[str, str]] = []  # (what the user wrote, our text)
        self._state_terms: list[str] = []
        for item in _flatten(node):
            self._add(item)

    def _add(self, node: Node) -> None:
        states = _states(node)
        if states is not None:
            self.states = states if self.states is None else self.states & states
            self._state_terms.append(_written(node))
            if not self.states:
                both = " AND ".join(self._state_terms)
                raise GcloudFilterError(f"No job's state can pass '{both}'")
            return
        if isinstance(node, Compare) and _field(node) in ("labels", "label"):
            token = _label(node)
            if token:
                self.labels.append(token)
            return
        if isinstance(node, Text):
            if node.value.startswith("!"):
                raise GcloudFilterError(
                    f"'!' inverts only the whole filter, at its start; write NOT before "
                    f"{node.value[1:]!r}"
                )
            if any(w.lower().startswith(("state:", "label:")) for w in node.value.split()):
                raise GcloudFilterError(f"The list filter cannot search for {_show(node)}")
            self.search.append((_show(node), node.value))
            return
        job_id = _job_id_regex(node)
        if job_id is not None:
            if job_id:
                self.search.append((_show(node), job_id))
            return
        raise GcloudFilterError(f"The list filter cannot express {_show(node)}")

    def render(self, inverted: bool) -> str:
        if len(self.search) > 1:
            shown = " AND ".join(shown for shown, _ in self.search)
            raise GcloudFilterError(f"The list filter searches one text or jobId term, not {shown}")
        parts: list[str] = []
        if self.states is not None and self.states != _ALL_STATES:
            parts.append("state:" + ",".join(s.value for s in _STATE_ORDER if s in self.states))
        parts += self.labels
        parts += [ours for _, ours in self.search]
        return ("!" if inverted else "") + " ".join(parts)


def _flatten(node: Node) -> list[Node]:
    if isinstance(node, And):
        return [leaf for item in node.items for leaf in _flatten(item)]
    return [node]


def _field(node: Compare) -> str:
    return _CANONICAL_FIELD.get(node.path[0].lower(), node.path[0])


def _show(node: Node) -> str:
    """A term as the user wrote it (near enough), quoted, for messages."""
    return f"'{_written(node)}'"


def _written(node: Node) -> str:
    if isinstance(node, Compare):
        value = f'"{node.value}"' if node.quoted or not node.value else node.value
        return f"{'.'.join(node.path)}{node.op}{value}"
    if isinstance(node, Text):
        return node.value
    if isinstance(node, Not):
        return f"NOT {_written(node.item)}"
    if isinstance(node, Search):  # never parsed here (parse_filter(search=False))
        return f'SEARCH("{node.value}")'
    word = " AND " if isinstance(node, And) else " OR "
    return "(" + word.join(_written(i) for i in node.items) + ")"


def _states(node: Node) -> frozenset[JobState] | None:
    """The states a state term allows; None when ``node`` is not a state term.

    A state term is ``state=X``/``state:X``/``state!=X``, ``NOT`` one, or an ``OR`` of them;
    a set of states is what the list filter's ``state:`` holds, and a complement is one too.
    """
    if isinstance(node, Compare) and _field(node) == "state" and len(node.path) == 1:
        if node.op not in ("=", ":", "!="):
            raise GcloudFilterError(f"States have no order: {_show(node)}")
        if node.op == ":" and node.value == "*" and not node.quoted:
            return _ALL_STATES  # every job has a state
        found, unknown = parse_state_names(node.value)
        if unknown or not found:
            raise GcloudFilterError(unknown_states_error(unknown or [node.value]))
        return _ALL_STATES - found if node.op == "!=" else frozenset(found)
    if isinstance(node, Not):
        inner = _states(node.item)
        return None if inner is None else _ALL_STATES - inner
    if isinstance(node, Or):
        parts = [_states(item) for item in node.items]
        if all(p is not None for p in parts):
            return frozenset().union(*(p for p in parts if p is not None))
        if any(p is not None for p in parts) or not all(_is_job_id(i) for i in node.items):
            raise GcloudFilterError(
                f"The list filter has OR only between terms of one field (state or jobId), "
                f"not {_show(node)}"
            )
    return None


def _label(node: Compare) -> str:
    """The list's ``label:`` token for a label term ("" for ``labels:*``, every job)."""
    field = _field(node)
    if field == "label" and len(node.path) == 1 and node.op == ":":
        key, eq, value = node.value.partition("=")  # the list's own label:K=V
        path: tuple[str, ...] = ("labels", key)
        op, wanted, quoted = ("=", value, True) if eq else (":", "*", False)
    else:
        path, op, wanted, quoted = node.path, node.op, node.value, node.quoted
    if len(path) == 1:  # labels:K is "the key K exists"
        if op != ":" or quoted or "*" in wanted:
            raise GcloudFilterError(
                f"labels takes a key to test for (labels:owner), not {_show(node)}"
            )
        key, op, wanted, quoted = wanted, ":", "*", False
    elif len(path) == 2:
        key = path[1]
    else:
        raise GcloudFilterError(f"Labels have one level: {_show(node)}")
    if op not in ("=", ":"):
        raise GcloudFilterError(
            f"The list filter tests a label for a value or for its key, not {_show(node)}"
            f"{' (NOT before the whole filter inverts it)' if op == '!=' else ''}"
        )
    if not key or any(c.isspace() or c == "=" for c in key):
        raise GcloudFilterError(f"No label key in {_show(node)}")
    if op == ":" and wanted == "*" and not quoted:
        return f"label:{key}"
    if "*" in wanted and not quoted:
        raise GcloudFilterError(f"A label value is matched exactly: {_show(node)} has a '*'")
    if any(c.isspace() for c in wanted):
        raise GcloudFilterError(f"A label value with a space cannot be searched for: {_show(node)}")
    return f"label:{key}={wanted}"


def _is_job_id(node: Node) -> bool:
    return isinstance(node, Compare) and _field(node) == "jobId" and len(node.path) == 1


def _job_id_regex(node: Node) -> str | None:
    """The list's regex for a jobId term or an OR of them ("" when it keeps every job); None
    when ``node`` is no jobId term.

    The row's text starts with the id and a space, and ids are letters, digits and ``_``:
    ``^`` anchors the id's start, ``\\b`` its end, ``\\w*`` is gcloud's ``*``.
    """
    if isinstance(node, Or) and all(_is_job_id(i) for i in node.items):
        alternatives = [_job_id_regex(i) for i in node.items]
        if any(not a for a in alternatives):
            return ""  # one of them is jobId:*, which every job has
        return "^(?:" + "|".join(a.removeprefix("^") for a in alternatives if a) + ")"
    if not _is_job_id(node):
        return None
    assert isinstance(node, Compare)
    if node.op not in ("=", ":"):
        raise GcloudFilterError(
            f"The list filter tests a job id for a value or a prefix, not {_show(node)}"
            f"{' (NOT before the whole filter inverts it)' if node.op == '!=' else ''}"
        )
    glob = node.op == ":" and not node.quoted
    value = node.value
    if glob and value.strip("*") == "":
        return ""  # jobId:* : every job has an id
    if not _JOB_ID_GLOB.fullmatch(value) or ("*" in value and not glob):
        raise GcloudFilterError(
            f"A job id is letters, digits and '_' ('*' in jobId:PREFIX*): {_show(node)}"
        )
    regex = r"\w*".join(value.split("*"))
    return "^" + regex + ("" if regex.endswith(r"\w*") else r"\b")
