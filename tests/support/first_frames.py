"""The real app on fixed data, and what each frame it paints shows: for the tests of the list's
first frame (the list begun at launch, the list paging in)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tui_app.config.settings import Settings
from tui_app.shell.app import JobsApp
from tui_app.shell.first_list import FirstList
from tui_app.shell.jobs_source import JobsSource
from tui_app.widgets.job_table import JobTable


def app_on(
    source: JobsSource, first: FirstList | None = None, refresh_seconds: float = 0.5
) -> JobsApp:
    """The app on ``source``, or on ``first``'s (its round begun as tui-app begins it)."""
    return JobsApp(
        Settings(refresh_seconds=refresh_seconds),
        lambda **_: None,  # type: ignore[arg-type]  # never called: the source is fixed
        "demo-project",
        "local",
        clock=lambda: datetime(2026, 11, 22, 12, 0, tzinfo=UTC),
        source=source if first is None else None,
        first_list=first,
    )


def table_rows(app: JobsApp) -> int:
    """How many rows the list's table holds now."""
    return app.screen.query_one(JobTable).row_count


def rows_per_frame(app: JobsApp) -> list[int]:
    """A list that gets, for every frame ``app`` paints from now on, how many rows the list's
    table then had (0 before the list is on screen)."""
    seen: list[int] = []
    display = app._display

    def counting(screen: Any, renderable: Any) -> None:
        if renderable is not None:
            seen.append(table_rows(app) if app.screen.query(JobTable) else 0)
        display(screen, renderable)

    app._display = counting  # type: ignore[method-assign]
    return seen
