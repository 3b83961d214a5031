"""The cyclic collector held off for the TUI's start (shell/start_gc.py): on again after, and
never turned on by ``release`` where ``hold`` did not turn it off."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from tui_app.shell import start_gc


@pytest.fixture(autouse=True)
def collector_restored() -> Iterator[None]:
    yield
    start_gc._held = False
    gc.unfreeze()
    gc.enable()


def test_held_off_then_frozen_and_on_again() -> None:
    before = gc.get_freeze_count()
    start_gc.hold()
    assert not gc.isenabled()
    made: list[list[int]] = [[] for _ in range(10)]  # noqa: F841 - tracked objects
    start_gc.release()
    assert gc.isenabled()
    assert gc.get_freeze_count() >= before + 10  # out of later full passes
    frozen = gc.get_freeze_count()
    start_gc.release()  # once only
    assert gc.get_freeze_count() == frozen


def test_release_without_hold_changes_nothing() -> None:
    frozen = gc.get_freeze_count()
    start_gc.release()
    assert gc.isenabled()
    assert gc.get_freeze_count() == frozen


def test_an_app_that_ended_before_its_first_frame_freezes_nothing() -> None:
    frozen = gc.get_freeze_count()
    start_gc.hold()
    start_gc.release(freeze=False)
    assert gc.isenabled()
    assert gc.get_freeze_count() == frozen


def test_a_collector_turned_off_by_the_host_stays_off() -> None:
    gc.disable()
    start_gc.hold()
    start_gc.release()
    assert not gc.isenabled()
