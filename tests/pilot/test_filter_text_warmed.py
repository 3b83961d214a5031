"""A painted list makes its rows' filter text by itself, a step at a time (``warm_haystacks``):
the rows are built without it, so that the first paint of a big list does not wait for it, and
the first ``/`` keystroke should not pay for it either."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pilot.conftest import fixed_app, wait_for
from tui_app.model.views import job_view
from tui_app.model.views.job_view import JobRow
from tui_app.shell.screens.jobs_screen import JobsScreen
from tui_app.widgets.job_table import JobTable


async def test_a_painted_list_makes_every_rows_filter_text_without_a_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(job_view, "WARM_STEP_ROWS", 2)  # the fixed jobs take several steps
    app = fixed_app(tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:

        def rows() -> list[JobRow]:
            screen = app.screen
            return screen.rows if isinstance(screen, JobsScreen) else []

        await wait_for(pilot, lambda: bool(app.screen.query_one(JobTable).rows))
        listed = rows()
        assert len(listed) > 2 * job_view.WARM_STEP_ROWS
        await wait_for(
            pilot,
            lambda: all(r._haystack is not None for r in listed),
            describe=lambda: f"{sum(r._haystack is None for r in listed)} rows without text",
        )
        assert all(r.haystack == r.haystack_cased.lower() for r in listed)
        await pilot.press("slash", *"nan")  # the fixed jobs' one "loss is NaN" error
        await wait_for(pilot, lambda: len(app.screen.query_one(JobTable).rows) == 1)
