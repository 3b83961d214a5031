"""The scheduler's admission order, queue positions and GPU grants (issue 6), without a service.

The service tests (tests/service/test_scheduling.py) show the same against real replicas; these
pin the rules one by one.
"""

from __future__ import annotations

import asyncio

from tui_app.local.execution.scheduler import Grant, JobKey, Scheduler
from tui_app.model.running.capacity import Capacity, Demand


def demand(replicas: int = 1, gpus: tuple[int, ...] | None = None) -> Demand:
    names = tuple(f"r{i}" for i in range(replicas))
    return Demand(names, gpus or (0,) * replicas, replicas)


class Recorder:
    """Keeps the last queue positions the scheduler announced."""

    def __init__(self) -> None:
        self.positions: dict[JobKey, int] = {}

    def __call__(self, positions: dict[JobKey, int]) -> None:
        self.positions = positions


def key(name: str) -> JobKey:
    return ("p", name)


async def test_priority_then_arrival_and_positions() -> None:
    rec = Recorder()
    s = Scheduler(Capacity(1), rec)
    first = s.request(key("first"), demand())
    low = s.request(key("low"), demand(), priority=0)
    mid_a = s.request(key("mid_a"), demand(), priority=500)
    high = s.request(key("high"), demand(), priority=1000)
    mid_b = s.request(key("mid_b"), demand(), priority=500)
    assert first.done()
    assert rec.positions == {key("high"): 1, key("mid_a"): 2, key("mid_b"): 3, key("low"): 4}
    s.release(key("first"))
    assert high.done() and not mid_a.done()
    assert rec.positions == {key("mid_a"): 1, key("mid_b"): 2, key("low"): 3}
    s.release(key("high"))
    assert mid_a.done() and not mid_b.done()
    s.release(key("mid_a"))
    assert mid_b.done() and not low.done()
    s.release(key("mid_b"))
    assert low.done() and rec.positions == {}


async def test_strict_order_no_backfill() -> None:
    """A small job behind a big one waits, so the big one is not starved."""
    s = Scheduler(Capacity(4))
    s.request(key("a"), demand(3))
    big = s.request(key("big"), demand(4))
    small = s.request(key("small"), demand(1))
    assert not big.done() and not small.done()
    assert s.positions() == {key("big"): 1, key("small"): 2}
    s.release(key("a"))
    assert big.done() and not small.done()


async def test_gpus_are_granted_and_returned() -> None:
    s = Scheduler(Capacity(8, ("0", "1", "2")))
    a = s.request(key("a"), demand(2, (1, 1)))
    b = s.request(key("b"), demand(1, (2,)))  # needs 2, 1 free: waits although slots are free
    c = s.request(key("c"), demand(1))
    assert a.result() == Grant(demand(2, (1, 1)), (("0",), ("1",)))
    assert not b.done() and not c.done()
    s.release(key("a"))
    assert b.result().gpus == (("0", "1"),)
    assert c.result().gpus == ((),)
    s.release(key("b"))
    d = s.request(key("d"), demand(1, (3,)))
    assert d.result().gpus == (("0", "1", "2"),)


async def test_a_job_bigger_than_the_machine_runs_alone() -> None:
    s = Scheduler(Capacity(2, ("0",)))
    s.request(key("a"), demand(1))
    huge = s.request(key("huge"), demand(5, (2, 2, 0, 0, 0)))
    assert not huge.done()
    s.release(key("a"))
    grant = huge.result()
    assert grant.demand.slots == 2 and grant.gpus == (("0",), (), (), (), ())
    later = s.request(key("later"), demand(1))
    assert not later.done()
    s.release(key("huge"))
    assert later.done()


async def test_a_cancelled_waiter_is_never_admitted() -> None:
    s = Scheduler(Capacity(1))
    s.request(key("a"), demand())
    gone = s.request(key("gone"), demand())
    after = s.request(key("after"), demand())
    gone.cancel()
    s.release(key("a"))
    assert after.done() and s.used_slots == 1
    await asyncio.sleep(0)
