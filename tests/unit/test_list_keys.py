"""Every list and picker moves with the same keys (README: `j`/`k` or arrows, `g`/`G`,
`pgup`/`pgdn` everywhere): each list widget of the app binds them to its own cursor actions."""

from __future__ import annotations

import pytest
from textual.binding import Binding
from textual.widget import Widget

from tui_app.shell.screens.picker_screen import PickerList
from tui_app.shell.screens.presets_screen import PresetList
from tui_app.shell.screens.search_screen import SearchHitList
from tui_app.widgets.job_table import JobTable
from tui_app.widgets.log_view import LogView
from tui_app.widgets.params_table import ParamsTable
from tui_app.widgets.tag_picker import TagPicker
from tui_app.widgets.trials_table import TrialsTable

LISTS: list[type[Widget]] = [
    PickerList,
    PresetList,
    ParamsTable,
    TrialsTable,
    JobTable,
    TagPicker,
    LogView,
    SearchHitList,
]


def keys_of(cls: type[Widget]) -> dict[str, str]:
    """Key -> action of a widget class's own bindings (its bases' included)."""
    out: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        for binding in getattr(klass, "BINDINGS", []):
            if isinstance(binding, Binding):
                for key in binding.key.split(","):
                    out[key.strip()] = binding.action
    return out


@pytest.mark.parametrize("cls", LISTS, ids=lambda c: c.__name__)
def test_every_list_moves_with_j_k_g_and_G(cls: type[Widget]) -> None:
    keys = keys_of(cls)
    for key in ("j", "k", "g", "G", "up", "down"):
        assert key in keys, f"{cls.__name__} has no {key!r}"
        assert hasattr(cls, f"action_{keys[key]}"), (cls.__name__, key, keys[key])
    assert keys["j"] == keys["down"] and keys["k"] == keys["up"]
