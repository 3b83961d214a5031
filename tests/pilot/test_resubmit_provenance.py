"""Every way the TUI resubmits records which job the new one was made from (issue 27).

``D`` on one job compares it with the job it was resubmitted from, read from
``ResubmitHistory``; ``R`` and ``E`` then submit must both write it, and a form that is not a
copy (``n``) must not.
"""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Label

from tests.pilot.conftest import live_app, wait_for
from tests.support.live_service import LiveService, basic_job
from tui_app.api.job_compare import ResubmitHistory
from tui_app.model.views.job_view import JobRow
from tui_app.shell.screens.builder_screen import BuilderScreen
from tui_app.shell.screens.confirm_screen import ConfirmScreen
from tui_app.shell.screens.jobs_screen import JobsScreen
from tui_app.widgets.job_table import JobTable


def _ids(app: object) -> list[str]:
    table = app.screen.query_one(JobTable)  # type: ignore[attr-defined]
    return [r.job_id for r in table.rows if isinstance(r, JobRow)]


async def test_r_and_e_record_the_source_and_a_new_form_does_not(
    service: LiveService, package_uri: str, tmp_path: Path
) -> None:
    project = "provenance-project"
    old = "provenance_check_20260101_000000"  # long: the confirmation wraps
    service.client(project).create(basic_job(old, package_uri, "--steps", "1"))
    app = live_app(service, tmp_path, project)
    history = ResubmitHistory()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: _ids(app) == [old])
        await pilot.press("R")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        # The question names two job ids: longer than the dialog is wide, it wraps, whole.
        question = app.screen.query_one("#confirm-question", Label)
        await wait_for(pilot, lambda: question.size.width > 0)
        assert len(str(question.content)) > question.size.width
        lines = [question.render_line(y).text.strip() for y in range(question.size.height)]
        assert " ".join(lines) == str(question.content), lines
        await pilot.press("y")
        await wait_for(pilot, lambda: len(_ids(app)) == 2)
        by_r = next(k for k in _ids(app) if k != old)
        assert history.sources(project) == {by_r: old}

        # E on the copy R made, then submit: the newest job names that copy as its source.
        table = app.screen.query_one(JobTable)
        await wait_for(pilot, lambda: table.cursor_key == by_r)
        await pilot.press("E")
        await wait_for(pilot, lambda: isinstance(app.screen, BuilderScreen))
        builder = app.screen
        assert isinstance(builder, BuilderScreen) and builder.copied_from == by_r
        # The id the builder stamped is taken before the submit (a copy made in the same
        # second): kept unchanged by the user, it is stamped again with a later second.
        # (R's copy was made this second too, the builder's stamp is that copy's id.)
        stamped = builder.stamped_id
        assert stamped
        if stamped != by_r:
            service.client(project).create(basic_job(stamped, package_uri, "--steps", "1"))
        await pilot.press("ctrl+j")
        await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen), timeout=30)
        taken = {old, by_r, stamped}
        await wait_for(pilot, lambda: len(_ids(app)) == len(taken) + 1)
        by_e = next(k for k in _ids(app) if k not in taken)
        assert by_e > stamped  # a later stamp of the same base name
        assert history.sources(project) == {by_r: old, by_e: by_r}

        # A new form in the same builder is no copy: its submit records nothing.
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, BuilderScreen))
        assert builder.copied_from is None
