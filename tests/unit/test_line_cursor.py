"""The pieces the job table and the log view share: where to scroll, and their cursor keys."""

from __future__ import annotations

import pytest
from textual.binding import Binding

from tui_app.widgets.line_cursor import cursor_bindings, scroll_target


@pytest.mark.parametrize(
    ("top", "height", "expected"),
    [
        (10, 1, None),  # first line of the page: already shown
        (19, 1, None),  # last line of the page
        (18, 2, None),  # a wrapped row that just fits
        (9, 1, 9),  # just above: it becomes the first line
        (20, 1, 11),  # just below: it becomes the last line
        (19, 3, 12),  # a wrapped row sticking out below: its end comes in
        (30, 15, 30),  # taller than the page: its start, not its end
        (0, 1, 0),
    ],
)
def test_scroll_target_scrolls_as_little_as_possible(
    top: int, height: int, expected: int | None
) -> None:
    assert scroll_target(top, height, 10, 10) == expected


def test_scroll_target_centers_a_far_row_when_asked() -> None:
    assert scroll_target(100, 1, 10, 10, center=True) == 100 - 4
    assert scroll_target(100, 4, 10, 10, center=True) == 100 - 3
    assert scroll_target(100, 12, 10, 10, center=True) == 100  # taller than the page
    assert scroll_target(15, 1, 10, 10, center=True) is None  # on screen: nothing moves


def test_each_widget_keeps_its_own_binding_ids() -> None:
    bindings = cursor_bindings("log-view")
    assert all(isinstance(binding, Binding) for binding in bindings)
    ids = [binding.id for binding in bindings if isinstance(binding, Binding)]
    assert ids == [
        "log-view.up",
        "log-view.down",
        "log-view.page-up",
        "log-view.page-down",
        "log-view.first",
    ]
