"""Whether a user's keymap can be honoured: every id names a binding, and no remap takes a key
another binding of the same screen already answers to.

Textual applies a keymap silently: remapping ``jobs.cancel`` to ``k`` left ``k`` moving the list
cursor (the focused table's binding wins) and ``x`` no longer cancelling, with nothing said. So
the app checks the keymap first and refuses each remap that cannot work, naming both bindings.

Pure: the shell says which bindings are active together (``scopes``), as (id, keys) pairs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

Scope = Sequence[tuple[str, str]]
"""The (binding id, keys) of every binding active at once on one screen; keys as Textual
writes them, comma-separated (``"x,ctrl+d"``)."""


@dataclass(frozen=True)
class KeymapProblem:
    binding_id: str
    message: str


def _keys(text: str) -> list[str]:
    return [k.strip() for k in text.split(",") if k.strip()]


def keymap_problems(scopes: Mapping[str, Scope], keymap: Mapping[str, str]) -> list[KeymapProblem]:
    """Every remap in ``keymap`` that cannot be honoured, with why, in keymap order.

    A clash counts only when a remapped key meets another binding's key on the same screen;
    bindings that share a key by design (a screen's and its table's ``escape``) are left alone.
    """
    known = {bid for scope in scopes.values() for bid, _ in scope}
    problems: list[KeymapProblem] = []
    for bid, keys in keymap.items():
        if bid not in known:
            problems.append(
                KeymapProblem(
                    bid,
                    f"keymap: no binding has the id {bid!r}; ? lists each screen's ids.",
                )
            )
            continue
        if not _keys(keys):
            problems.append(KeymapProblem(bid, f"keymap: {bid} is given no key."))
            continue
        for where, scope in scopes.items():
            if bid not in {b for b, _ in scope}:
                continue
            clash = _first_clash(bid, scope, keymap)
            if clash is not None:
                other, key = clash
                problems.append(
                    KeymapProblem(
                        bid,
                        f"keymap: {bid}: {key} is already {other}'s key on {where}; "
                        f"choose another key, or remap {other} too. {bid} keeps its "
                        "own keys.",
                    )
                )
                break
    return problems


def _first_clash(bid: str, scope: Scope, keymap: Mapping[str, str]) -> tuple[str, str] | None:
    """Another binding of ``scope`` that answers to one of ``bid``'s new keys, and the key."""
    wanted = _keys(keymap[bid])
    for other, default in scope:
        if other == bid:
            continue
        theirs = _keys(keymap.get(other, default))
        for key in wanted:
            if key in theirs:
                return other, key
    return None
