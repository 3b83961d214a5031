"""The result table both benchmark scripts print: rows as they are measured, a table at the end."""

from __future__ import annotations

from dataclasses import dataclass, field


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
