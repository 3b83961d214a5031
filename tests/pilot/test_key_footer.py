"""Every screen's footer at 80 and 100 columns: the most useful keys first, none cut, and
``? Help`` last (issue 29, item 11).

Textual's Footer listed keys in binding order and cut what did not fit: the logs footer ended at
``w Wrap`` (no ``/``, ``e``, ``f``, nor ``?``), the detail's at ``E Edit+``. The footer is laid
out for real here, so the widths ``KeyFooter`` counts are checked against Textual's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from textual.screen import Screen
from textual.widgets._footer import FooterKey

from tests.pilot.conftest import fixed_app
from tests.support.settle import settled, wait_until
from tui_app.shell.screens.describe_screen import DescribeScreen
from tui_app.shell.screens.logs_screen import LogsScreen
from tui_app.widgets.key_footer import KeyFooter

JOB = "mnist_20261122_083000"
Opener = Callable[[Any], Awaitable[type[Screen[Any]]]]


async def _jobs(pilot: Any) -> type[Screen[Any]]:
    from tui_app.shell.screens.jobs_screen import JobsScreen

    return JobsScreen


async def _describe(pilot: Any) -> type[Screen[Any]]:
    pilot.app.push_screen(DescribeScreen(JOB))
    return DescribeScreen


async def _logs(pilot: Any) -> type[Screen[Any]]:
    pilot.app.push_screen(LogsScreen(JOB))
    return LogsScreen


async def _builder(pilot: Any) -> type[Screen[Any]]:
    from tui_app.shell.screens.builder_screen import BuilderScreen

    pilot.app.open_builder(new=True)
    return BuilderScreen


def _laid_out(footer: KeyFooter, width: int) -> bool:
    return footer.region.width == width and len(shown(footer)) > 1


async def footer_at(pilot: Any, width: int, height: int = 30) -> KeyFooter:
    """The screen's footer once the terminal is ``width`` wide and its keys were chosen again
    for that width and laid out."""
    await pilot.resize_terminal(width, height)
    footer: KeyFooter = pilot.app.screen.query_one(KeyFooter)
    await wait_until(pilot, partial(_laid_out, footer, width), f"the footer at {width} columns")
    await settled(pilot)
    return footer


def shown(footer: KeyFooter) -> list[FooterKey]:
    return [k for k in footer.query(FooterKey) if not k.has_class("-command-palette")]


def label(key: FooterKey) -> str:
    return f"{key.key_display} {key.description}".strip()


@pytest.mark.parametrize(
    "open_screen", [_jobs, _describe, _logs, _builder], ids=lambda f: f.__name__[1:]
)
async def test_help_is_the_last_key_and_no_key_is_cut(tmp_path: Path, open_screen: Opener) -> None:
    app = fixed_app(tmp_path)
    async with app.run_test(size=(80, 30)) as pilot:
        await wait_until(pilot, lambda: app.last_rows, "the list")
        kind = await open_screen(pilot)
        await wait_until(pilot, lambda: isinstance(app.screen, kind), kind.__name__)
        for width in (80, 100):  # one app, resized: the footer lays itself out again
            footer = await footer_at(pilot, width)
            keys = shown(footer)
            # In a form `?` is a character: the footer names the help's other key there.
            assert label(keys[-1]) in ("? Help", "f1 Help"), [label(k) for k in keys]
            palette = footer.query_one(".-command-palette", FooterKey).region
            right = palette.x if palette.width else footer.region.right
            for key in keys:  # every key drawn whole, left of the palette's key
                assert key.region.width and key.region.right <= right, (
                    width, label(key), key.region, right,
                )  # fmt: skip


async def test_the_logs_footer_puts_the_most_useful_keys_first(tmp_path: Path) -> None:
    app = fixed_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.last_rows, "the list")
        app.push_screen(LogsScreen(JOB))
        await wait_until(pilot, lambda: isinstance(app.screen, LogsScreen), "the logs")
        await wait_until(pilot, lambda: len(shown(app.screen.query_one(KeyFooter))) > 1, "keys")
        await pilot.pause()
        footer = app.screen.query_one(KeyFooter)
        assert [label(k) for k in shown(footer)] == [
            "/ Search",
            "e First error",
            "s Follow",
            "a All",
            "[ ] Replica",
            "f Full",
            "? Help",
        ]
        await pilot.resize_terminal(160, 24)
        await wait_until(pilot, lambda: "esc Back" in [label(k) for k in shown(footer)], "wide")
        labels = [label(k) for k in shown(footer)]
        assert labels[:7] == [
            "/ Search",
            "e First error",
            "s Follow",
            "a All",
            "[ ] Replica",
            "f Full",
            "^s Save",
        ]
        assert labels[-1] == "? Help"


async def test_the_lists_secondary_keys_fill_the_room_there_is(tmp_path: Path) -> None:
    """At 120 columns the list's footer showed six keys and left half the row empty: the
    secondary keys (mark, open, YAML, resubmit...) are the first to go, not always gone."""
    app = fixed_app(tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(pilot, lambda: app.last_rows, "the list")
        labels = [label(k) for k in shown(await footer_at(pilot, 120))]
        assert labels[:5] == ["/ Filter", "z Faults", "d Describe", "l Logs", "x Cancel"]
        assert "R Resubmit" in labels and labels[-1] == "? Help"
        assert "R Resubmit" not in [label(k) for k in shown(await footer_at(pilot, 80))]


async def test_a_bindings_change_that_changes_no_key_keeps_the_keys_on_show(
    tmp_path: Path,
) -> None:
    """Textual's Footer removes and mounts every key on each change of the screen's bindings
    (a focus change makes one): the job list's start did that seven times for the same keys.
    The keys on show stay while what they would show is the same, and change when it is not."""
    app = fixed_app(tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(pilot, lambda: app.last_rows, "the list")
        footer = await footer_at(pilot, 120)
        before = shown(footer)
        app.screen.refresh_bindings()  # what a focus change or a binding's check does
        await settled(pilot)
        assert shown(footer) == before  # the same widgets, not new ones with the same text
        labels = [label(k) for k in before]
        await pilot.resize_terminal(80, 30)
        await wait_until(pilot, lambda: [label(k) for k in shown(footer)] != labels, "80 wide")
        assert shown(footer)[0] not in before
