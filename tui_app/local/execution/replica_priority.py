"""Replicas run at a lower CPU priority than the service and the TUI.

A replica's supervisor starts it in a session of its own (so that the replica outlives a
service restart, and its whole process tree can be signalled). On Linux with the scheduler's
autogroups (the default on most distributions), every session is a group that gets an equal
share of a busy CPU, whatever its processes' nice values: four replicas printing as fast as
they can took four shares of two cores against the TUI's one, and the TUI's event loop waited
for a core for 50-200 ms at a time (``benchmarks/log_bench.py``; with ``--pin``, giving the app
a core of its own, the same flood left its lag p99 at 30-37 ms).

So the supervisor lowers a replica's priority both ways: the process's nice value (what counts
without autogroups, and within a group) and its session group's (``/proc/PID/autogroup``). An
unprivileged process may always lower a priority. It only matters when the CPU is contended:
an idle machine runs the replica as fast as before. ``service run --replica-nice 0`` turns it
off.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

__all__ = ["DEFAULT_REPLICA_NICE", "MAX_NICE", "lower_priority"]

DEFAULT_REPLICA_NICE: Final = 10
"""Nice steps a replica runs below the service: CFS weighs nice 10 at about a tenth of nice 0."""
MAX_NICE: Final = 19


def lower_priority(pid: int, increment: int, proc: Path = Path("/proc")) -> list[str]:
    """Lower process ``pid``'s CPU priority, and its autogroup's, by ``increment`` steps.

    Call it on a process that has just started in a session of its own (its threads and
    children inherit the nice value; the autogroup is the session's).

    Returns:
        What could not be done, as sentences for the replica's log (empty when all was done
        or there was nothing to do). A kernel without autogroups is not a failure.
    """
    if increment <= 0:
        return []
    problems: list[str] = []
    try:
        current = os.getpriority(os.PRIO_PROCESS, pid)
        os.setpriority(os.PRIO_PROCESS, pid, min(MAX_NICE, current + increment))
    except OSError as exc:
        problems.append(f"Cannot lower the replica's CPU priority: {exc.strerror or exc}")
    group = proc / str(pid) / "autogroup"
    try:
        # "/autogroup-123 nice 0": the session's group and its nice value.
        nice = int(group.read_text().split()[-1])
        group.write_text(str(min(MAX_NICE, nice + increment)))
    except FileNotFoundError:
        pass  # no autogroups in this kernel: the nice value above is what counts
    except (OSError, ValueError, IndexError) as exc:
        problems.append(f"Cannot lower the replica's session CPU priority: {exc}")
    return problems
