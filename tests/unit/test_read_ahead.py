"""Pages read one ahead (api/read_ahead.py): the next page is being read while the caller
holds this one; order, errors and a caller that stops are as without it."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from tui_app.api.errors import ApiCallError
from tui_app.api.read_ahead import read_ahead

WAIT = 10.0
"""How long a test waits for a state a working reader reaches at once."""


def test_every_page_in_order() -> None:
    assert list(read_ahead(iter(range(250)))) == list(range(250))
    assert list(read_ahead(iter([]))) == []


def test_the_next_page_is_read_while_the_caller_holds_this_one() -> None:
    asked_for_second = threading.Event()

    def pages() -> Iterator[str]:
        yield "first"
        asked_for_second.set()
        yield "second"

    got = read_ahead(pages())
    assert next(got) == "first"
    # The caller has not asked for the second page: the reader has.
    assert asked_for_second.wait(WAIT)
    assert list(got) == ["second"]


def test_an_error_reaches_the_caller_where_it_asks_for_that_page() -> None:
    def pages() -> Iterator[int]:
        yield 1
        raise ApiCallError("The page token is not valid.", 400, "INVALID_ARGUMENT")

    got = read_ahead(pages())
    assert next(got) == 1
    with pytest.raises(ApiCallError, match="page token") as raised:
        next(got)
    assert raised.value.status_code == 400


def test_a_caller_that_stops_stops_the_reader() -> None:
    read: list[int] = []
    reader: list[threading.Thread] = []

    def pages() -> Iterator[int]:
        reader.append(threading.current_thread())
        n = 0
        while True:  # a list without end: only the caller's stopping ends it
            read.append(n)
            yield n
            n += 1

    got = read_ahead(pages())
    assert next(got) == 0
    got.close()
    deadline = time.monotonic() + WAIT
    while reader[0].is_alive() and time.monotonic() < deadline:
        reader[0].join(0.05)
    assert not reader[0].is_alive()
    assert len(read) <= 3  # the page given, one waiting to be taken, one read meanwhile


@pytest.mark.parametrize("taken", [1, 3])  # a caller that stops early, one that takes all
def test_the_pages_are_closed_in_the_readers_thread(taken: int) -> None:
    """A page generator's cleanup (json_http closes the thread's connection) runs where it
    began, whether the list ended or the caller stopped."""
    began: list[threading.Thread] = []
    closed_in: list[threading.Thread] = []
    closed = threading.Event()

    def pages() -> Iterator[int]:
        began.append(threading.current_thread())
        try:
            yield from range(3)
        finally:
            closed_in.append(threading.current_thread())
            closed.set()

    held = pages()  # kept here: only the reader's close can end it, not the last reference
    got = read_ahead(held)
    assert [next(got) for _ in range(taken)] == list(range(taken))
    got.close()
    assert closed.wait(WAIT)
    assert closed_in == began
    assert began[0] is not threading.current_thread()
