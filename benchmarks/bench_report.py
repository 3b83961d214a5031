"""What the benchmark scripts share: the result table, the machine line, the workspace, Ctrl-C."""

from __future__ import annotations

import contextlib
import os
import platform
import shutil
import tempfile
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Figure:
    """One row of the result table."""

    section: str
    name: str
    n: int
    value: str
    goal: str = ""
    verdict: str = ""


@dataclass
class Results:
    figures: list[Figure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, fig: Figure) -> None:
        """Keep the row, and print it at once (a long run shows progress)."""
        self.figures.append(fig)
        goal = f"  [goal {fig.goal}: {fig.verdict}]" if fig.goal else ""
        print(f"  {fig.name}: {fig.value}{goal}", flush=True)


def print_table(res: Results, value_header: str = "result") -> None:
    """Every row, aligned, grouped by section, then the notes."""
    headers = ("metric", "n", value_header, "goal", "verdict")
    rows: list[tuple[str, str, str, str, str]] = []
    section = ""
    for f in res.figures:
        if f.section != section:
            section = f.section
            rows.append((f"[{section}]", "", "", "", ""))
        rows.append(("  " + f.name, str(f.n), f.value, f.goal, f.verdict))
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]

    def fmt(r: tuple[str, ...]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()

    print()
    print(fmt(headers))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(fmt(r))
    if res.notes:
        print()
        for note in res.notes:
            print(f"note: {note}")


def machine_line() -> str:
    """``machine: 2 cores (CPU), 24 GiB RAM, Linux 6.x; load average at start: …``."""
    cpu = platform.processor() or "?"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = "?"
    with contextlib.suppress(OSError, ValueError, IndexError):
        mem = f"{int(Path('/proc/meminfo').read_text().split()[1]) / 2**20:.0f}"
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"machine: {os.cpu_count()} cores ({cpu}), {mem} GiB RAM, "
        f"{platform.system()} {platform.release()}; load average at start: {load}"
    )


def raise_interrupt(signum: int, frame: types.FrameType | None) -> None:
    """A signal handler that turns SIGTERM/SIGHUP into the clean-up path of Ctrl-C."""
    raise KeyboardInterrupt(f"signal {signum}")


@contextlib.contextmanager
def workspace(prefix: str, keep: bool) -> Iterator[Path]:
    """A temporary folder for one run, removed afterwards unless ``keep``."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield root
    finally:
        if keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
