"""Metric tags as TensorBoard groups, orders and filters them on its scalars dashboard.

The rules, as TensorBoard's time-series dashboard implements them (read in
tensorflow/tensorboard, ``webapp/metrics/views/utils.ts``: ``groupCardIdWithMetdata``,
``compareTagNames``; the filter in ``filtered_view_container.ts``):

- **Groups.** A tag's group is the part before its first ``/`` (``tag.split('/', 1)[0]``), so
  a tag without a ``/`` is a group of its own, named by the whole tag (``loss`` and
  ``loss/aux`` share the group ``loss``). Tags are sorted first and groups appear in the order
  of their first tag, which puts the groups in the same natural order.
- **Order.** Runs of digits compare as numbers (``step2`` before ``step10``; decimals and
  exponents included, ``lr1e-3`` is 0.001), and ``/`` and digits come before any other
  character, so ``a/b`` sorts before ``a_b`` and ``a+/b``. :func:`tag_sort_key` is that
  comparison as a sort key; it differs in one corner only: TensorBoard's comparator treats a
  ``/`` facing a digit as equal and moves on, the key puts the ``/`` first.
- **Filter.** The query is a case-insensitive regular expression searched anywhere in the tag.
  A query that is not a valid regex yet (the user is typing ``(``) leaves TensorBoard showing
  the previous result; here it is taken as a plain substring instead, so something sensible
  shows at every keystroke.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

__all__ = ["filter_tags", "tag_groups", "tag_sort_key"]

_TOKEN = re.compile(r"(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)|(/)|(.)", re.DOTALL)
_SLASH = (0, float("-inf"))

TagKey = tuple[tuple[tuple[int, float | str], ...], str]


def tag_sort_key(tag: str) -> TagKey:
    """Sort key for TensorBoard's natural tag order (see the module doc).

    Numbers and ``/`` are ``(0, number)`` (a ``/`` is -inf), other characters ``(1, char)``, so
    both sort before letters; the tag itself breaks ties (``01`` and ``1`` compare equal).
    """
    tokens: list[tuple[int, float | str]] = []
    for number, slash, char in _TOKEN.findall(tag):
        if number:
            tokens.append((0, float(number)))
        elif slash:
            tokens.append(_SLASH)
        else:
            tokens.append((1, char))
    return tuple(tokens), tag


def tag_groups(tags: Iterable[str]) -> list[tuple[str, list[str]]]:
    """``(group, tags)`` pairs as TensorBoard groups tags: by the part before the first ``/``.

    Each tag appears once; tags are in natural order within their group, and groups in the
    order of their first tag.
    """
    groups: dict[str, list[str]] = {}
    for tag in sorted(set(tags), key=tag_sort_key):
        groups.setdefault(tag.split("/", 1)[0], []).append(tag)
    return list(groups.items())


def filter_tags(tags: Sequence[str], query: str) -> list[str]:
    """The tags matching ``query``, in the order given: filter-as-you-type.

    A query is a case-insensitive regex searched anywhere in the tag when it compiles, else a
    case-insensitive substring. An empty query matches every tag.
    """
    if not query:
        return list(tags)
    try:
        pattern = re.compile(query, re.IGNORECASE)
    except re.error:
        needle = query.casefold()
        return [tag for tag in tags if needle in tag.casefold()]
    search = pattern.search
    return [tag for tag in tags if search(tag)]
