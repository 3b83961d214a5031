"""``WidgetOptions``: the keywords of Textual's ``Widget`` constructor that our widgets pass on.

Every widget here is built with its own arguments (rows, a language, a lock) and Textual's
(``id``, ``classes``...), which it hands to its base untouched. Spelled as parameters, each widget
repeated the same four lines and a ``noqa`` (``id`` shadows a builtin); as
``**options: Unpack[WidgetOptions]`` they are spelled once, and mypy still checks a caller's
keywords against them (``DiffTable(idd="x")`` fails the check, as it did before).
"""

from __future__ import annotations

from typing import TypedDict

__all__ = ["WidgetOptions"]


class WidgetOptions(TypedDict, total=False):
    """The keywords of ``Widget.__init__`` that a widget here accepts and passes on."""

    name: str | None
    id: str | None
    classes: str | None
    disabled: bool
