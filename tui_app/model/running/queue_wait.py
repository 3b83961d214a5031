"""Why a QUEUED job waits, in words: the local service's ``:queue`` answer as a person reads it.

The platform's console said "waiting for resources"; a bare queue position says nothing about
what the job needs or who holds it. The service answers in numbers (docs/wire-formats.md,
``:queue``); this module words them for the describe pane, ``tui-app jobs describe`` and the
job's own log. Like every reader of the wire it never raises on an odd answer: what it cannot
read it leaves out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tui_app.model.jobs.wire import as_int, as_list, as_mapping

SHOWN_JOBS = 3
"""Jobs named per row before "and N more"."""


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _resources(slots: int, gpus: int) -> str:
    """``2 CPU slots``, ``1 CPU slot and 1 GPU``."""
    text = _count(slots, "CPU slot")
    return f"{text} and {_count(gpus, 'GPU')}" if gpus else text


def _jobs(entries: list[Any], with_state: bool) -> str:
    parts = []
    for raw in entries[:SHOWN_JOBS]:
        entry = as_mapping(raw)
        job_id = str(entry.get("jobId") or "?")
        held = _resources(as_int(entry.get("slots")) or 0, as_int(entry.get("gpus")) or 0)
        state = str(entry.get("state") or "") if with_state else ""
        parts.append(f"{job_id} ({held}{', ' + state if state else ''})")
    if len(entries) > SHOWN_JOBS:
        parts.append(f"and {len(entries) - SHOWN_JOBS} more")
    return ", ".join(parts)


def wait_rows(info: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The "Waiting for resources" rows of a job's detail; none when it does not wait.

    Args:
        info: The ``:queue`` answer (``{}`` for a job that does not wait).

    Returns:
        ``(key, value)`` rows: what it needs, what the machine has free, who holds the rest,
        who goes first, and when it starts.
    """
    reason = info.get("reason") if info else None
    if isinstance(reason, str) and reason:
        # A cluster executor words its own wait ("Waiting for the Ray cluster: ..."): the
        # section's title already says it waits, the row says for what.
        head, sep, rest = reason.partition(": ")
        if sep and head.startswith("Waiting for "):
            what = head.removeprefix("Waiting for ")
            return [(what[:1].upper() + what[1:], rest)]
        return [("Why", reason)]
    if not info or as_int(info.get("position")) is None:
        return []
    position = as_int(info.get("position")) or 1
    needs = as_mapping(info.get("needs"))
    machine = as_mapping(info.get("machine"))
    free = as_mapping(info.get("free"))
    slots, gpus = as_int(needs.get("slots")) or 0, as_int(needs.get("gpus")) or 0
    replicas = as_int(needs.get("replicas")) or slots
    machine_slots = as_int(machine.get("slots")) or 0
    machine_gpus = as_int(machine.get("gpus")) or 0
    free_slots, free_gpus = as_int(free.get("slots")) or 0, as_int(free.get("gpus")) or 0

    need = _resources(slots, gpus)
    if replicas > slots:
        need += f" ({replicas} replicas sharing all of the machine's {machine_slots})"
    elif replicas > 1:
        need += f" (one per replica, {replicas} replicas)"
    rows = [("Needs", need)]
    have = _resources(machine_slots, machine_gpus)
    rows.append(("Machine", f"{have}; free now: {_resources(free_slots, free_gpus)}"))
    running = as_list(info.get("running"))
    if running:
        rows.append(("Held by", _jobs(running, with_state=True)))
    ahead = as_list(info.get("ahead"))
    if ahead:
        rows.append(("Ahead", _jobs(ahead, with_state=False)))
    rows.append(("Starts", _when(position, slots, gpus, free_slots, free_gpus, len(ahead))))
    return rows


def _when(position: int, slots: int, gpus: int, free_slots: int, free_gpus: int, ahead: int) -> str:
    if position > 1 or ahead:
        before = max(ahead, position - 1)
        return (
            f"after the {_count(before, 'job')} ahead of it "
            f"{'has' if before == 1 else 'have'} started (jobs start in queue order)"
        )
    more_slots, more_gpus = max(0, slots - free_slots), max(0, gpus - free_gpus)
    short = [
        _count(n, f"more {noun}") for n, noun in ((more_slots, "CPU slot"), (more_gpus, "GPU")) if n
    ]
    if not short:
        return "now"
    return f"when {' and '.join(short)} {'is' if more_slots + more_gpus == 1 else 'are'} free"


def wait_summary(info: Mapping[str, Any]) -> str:
    """One line for a log: ``Waiting for resources: needs 2 CPU slots; held by ...``."""
    rows = dict(wait_rows(info))
    if not rows:
        return ""
    reason = info.get("reason")
    if isinstance(reason, str) and reason:
        return reason
    parts = [f"needs {rows['Needs']}", f"the machine has {rows['Machine']}"]
    if "Held by" in rows:
        parts.append(f"held by {rows['Held by']}")
    if "Ahead" in rows:
        parts.append(f"ahead in the queue: {rows['Ahead']}")
    parts.append(f"starts {rows['Starts']}")
    return "Waiting for resources: " + "; ".join(parts) + "."
