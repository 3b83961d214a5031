"""Pages read one ahead: the next page is fetched while the caller works on this one.

A list of 100k jobs is a thousand pages of ``jobs.list``, and reading them one after another
left each side idle half the time: the service answered while the poll waited, then the poll
built a hundred rows while the service waited. With the next request already out while the
rows are built, the list of the 100k-job store took about a quarter less time on a 2-core
machine (docs/performance.md).

The reader is a daemon thread, so a user who quits during a long list never waits for its
request; it stops after its page when the caller stops asking, and closes the page iterator
(a generator's ``finally`` runs in the reader's thread, which its resources belong to). Errors
reach the caller, where it asked for the page that failed, as they were raised.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import TypeVar, cast

__all__ = ["read_ahead"]

T = TypeVar("T")

HANDOFF_POLL_SECONDS = 0.5
"""How often a reader holding a page nobody takes checks whether the caller is gone."""


@dataclass(frozen=True, slots=True)
class _Failed:
    error: BaseException


_END = object()


def read_ahead(pages: Iterator[T]) -> Generator[T, None, None]:
    """``pages``, in order, with the next one read in a thread of its own while the caller
    works on the one it was given."""
    handoff: queue.Queue[object] = queue.Queue(maxsize=1)
    gone = threading.Event()

    def hand(item: object) -> bool:
        while not gone.is_set():
            try:
                handoff.put(item, timeout=HANDOFF_POLL_SECONDS)
                return True
            except queue.Full:
                continue
        return False

    def read() -> None:
        try:
            for page in pages:
                if not hand(page):
                    return
        except BaseException as exc:  # handed to the caller, which raises it
            hand(_Failed(exc))
            return
        finally:
            close = getattr(pages, "close", None)
            if close is not None:
                close()  # a generator's own cleanup runs in this thread, where it began
        hand(_END)

    threading.Thread(target=read, name="read-ahead", daemon=True).start()
    try:
        while True:
            item = handoff.get()
            if item is _END:
                return
            if isinstance(item, _Failed):
                raise item.error
            yield cast(T, item)
    finally:
        gone.set()
