"""StallWatch's bookkeeping (tui_app/local/execution/stall_watch.py) over made-up replicas: when
it writes the job's ``stall`` field, that the stacks are kept once, and that every later write
still says when they were taken."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from tui_app.local.execution.stall_watch import StallWatch

T = 10.0


class Host:
    """What the watch sees of the service: one job's runner, and what it was told."""

    def __init__(self, handles: list[Any]) -> None:
        runner = SimpleNamespace(live_replicas=lambda: [(None, h) for h in handles])
        self.runners = {("p", "j"): runner}
        self.writes: list[dict[str, Any] | None] = []
        self.lines: list[str] = []
        self.kept = 0

    def set_stall(self, project: str, job_id: str, stall: dict[str, Any] | None) -> None:
        self.writes.append(stall)

    def service_log(
        self, project: str, job_id: str, message: str, severity: int, trial: str | None = None
    ) -> None:
        self.lines.append(message)

    async def keep_stall_stacks(self, project: str, job_id: str) -> str | None:
        self.kept += 1
        return "2026-12-07T10:00:00.000000Z"


def handle(name: str, last_output: float) -> Any:
    source = SimpleNamespace(last_line_at=last_output, last_line=f"{name} last")
    return SimpleNamespace(
        replica=SimpleNamespace(task_name=name), started=0.0, sources=[source, source]
    )


def test_the_field_is_written_on_change_and_keeps_saying_when_the_stacks_were_taken() -> None:
    master, ps = handle("master-replica-0", 100.0), handle("ps-replica-0", 100.0)
    host = Host([master, ps])
    cpu = {"master-replica-0": 0.0, "ps-replica-0": 50.0}
    watch = StallWatch(
        host,  # type: ignore[arg-type]
        lambda: {("p", "j", "", n): (t_now[0], c) for n, c in cpu.items()},
        T,
        1.0,
    )
    t_now = [101.0]

    def tick(t: float) -> None:
        t_now[0] = t
        asyncio.run(watch.check(t))

    tick(101.0)  # both printed a second ago: nothing
    tick(105.0)
    assert host.writes == []
    tick(112.0)  # both quiet; the master idle for 11 s only since its first sample at 101
    [first] = host.writes
    assert first is not None
    assert [(r["taskName"], r["state"]) for r in first["replicas"]] == [
        ("master-replica-0", "stalled"),
        ("ps-replica-0", "quiet"),
    ]
    assert first["stacksTakenAt"] == "2026-12-07T10:00:00.000000Z" and host.kept == 1
    assert host.lines[0].startswith("Job stalled: master-replica-0 printed nothing")
    tick(113.0)  # the same answer: no write
    assert len(host.writes) == 1
    cpu["ps-replica-0"] = 0.0  # the ps goes idle too, and after the threshold is stalled
    tick(114.0)
    tick(125.0)
    last = host.writes[-1]
    assert last is not None
    assert {r["state"] for r in last["replicas"]} == {"stalled"}
    assert last["stacksTakenAt"] == first["stacksTakenAt"] and host.kept == 1
    master.sources[0].last_line_at = 126.0  # the master prints again: the stall is over
    tick(126.5)
    assert host.writes[-1] is None
    assert len(host.lines) == 1
