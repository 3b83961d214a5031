"""The job list's rough edges a newcomer met (issue 29, items 5, 6 and 13), each as they saw it.

The list runs on fixed jobs (tests/support/fixed_jobs.py: three mnist jobs, two census_dist and
two bert_large, one adhoc) with a frozen clock, at the widths where each was seen.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from rich.console import Console
from textual.widgets import Input, Static

from tests.pilot.conftest import FROZEN_NOW, fixed_app, toast_messages
from tests.support.settle import wait_until
from tui_app.api.errors import ApiCallError
from tui_app.config.settings import parse_settings
from tui_app.model.views.job_view import GroupRow, JobRow
from tui_app.shell.app import JobsApp
from tui_app.shell.screens.jobs_screen import JobsScreen
from tui_app.widgets.job_table import MARK_GLYPH, JobTable
from tui_app.widgets.status_header import StatusHeader

NOW = FROZEN_NOW


def table(app: JobsApp) -> JobTable:
    return app.screen.query_one(JobTable)


def header(app: JobsApp) -> str:
    return table(app).render_line(0).text


def line_of(app: JobsApp, key: str) -> str:
    t = table(app)
    index = next(i for i, r in enumerate(t.rows) if r.key == key)
    return t.render_line(index + 1 - t.scroll_offset.y).text


def keys(app: JobsApp) -> list[str]:
    return [r.key for r in table(app).rows]


def shown(app: JobsApp, selector: str) -> str:
    widget = app.screen.query_one(selector, Static)
    if not widget.display:
        return ""
    console = Console(width=300, record=True, file=io.StringIO())
    console.print(widget.content)
    return console.export_text().strip()


async def loaded(pilot: Any) -> None:
    """The eight jobs listed and drawn: a table that has its rows but not yet its size draws
    blank lines, and these tests read what is drawn."""
    await wait_until(
        pilot,
        lambda: len(table(pilot.app).rows) == 8 and bool(header(pilot.app).strip()),
        "the list drawn",
    )


async def test_o_cycles_only_through_columns_the_width_shows(tmp_path: Path) -> None:
    """Item 5: at 100 columns `o` sorted by TIER and ML UNITS, which that width hides; the
    header showed no arrow while the rows were in an order nobody could see."""
    app = fixed_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await loaded(pilot)
        assert "TIER" not in header(app) and "ML UNITS" not in header(app)
        seen = []
        for _ in range(8):
            await pilot.press("o")
            assert "▲" in header(app) or "▼" in header(app), header(app)
            seen.append(app.screen.sort_column)  # type: ignore[attr-defined]
        assert [c.value for c in seen[:5]] == ["id", "state", "created", "elapsed", "default"]

        # Sorted by a column that a narrower terminal then hides: the status line names it.
        await pilot.resize_terminal(120, 30)
        await wait_until(pilot, lambda: "TIER" in header(app), "TIER at 120 columns")
        while app.screen.sort_column.value != "tier":  # type: ignore[attr-defined]
            await pilot.press("o")
        await pilot.resize_terminal(100, 30)
        await wait_until(
            pilot, lambda: "sorted by tier" in shown(app, "#filter-info"), "the order named"
        )


async def test_a_bad_filter_keeps_the_last_good_result_and_says_why_whole(
    tmp_path: Path,
) -> None:
    """Item 6: `mnist(` and `state:BOGUS` emptied the list, and the message was cut at 100
    columns after "valid states:"."""
    app = fixed_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await loaded(pilot)
        await pilot.press("slash", *"mnist")
        await wait_until(pilot, lambda: len(keys(app)) == 3, "the mnist jobs")
        good = keys(app)
        await pilot.press("left_parenthesis")
        await wait_until(pilot, lambda: "Filter not applied" in shown(app, "#filter-error"), "why")
        assert keys(app) == good  # the last good result stays on screen
        assert "filter not applied" in shown(app, "#filter-info")
        await pilot.press("backspace")
        await wait_until(pilot, lambda: not shown(app, "#filter-error"), "the error gone")

        box = app.screen.query_one("#filter", Input)
        box.value = "state:BOGUS"
        await wait_until(pilot, lambda: "BOGUS" in shown(app, "#filter-error"), "why")
        message = shown(app, "#filter-error")
        # Whole: every state is named, however wide the terminal.
        for state in ("QUEUED", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED"):
            assert state in message, message
        assert keys(app) == good
        error = app.screen.query_one("#filter-error")
        await wait_until(pilot, lambda: error.region.height > 0, "the message laid out")
        region = error.region
        assert region.height >= 2 and region.width <= 100  # wrapped, not cut

        box.value = "state:failed"
        await wait_until(pilot, lambda: keys(app) == ["census_dist_20261122_070000"], "FAILED")
        assert not shown(app, "#filter-error")


async def test_z_keeps_the_columns_and_the_header_is_never_cut(tmp_path: Path) -> None:
    """Item 13: z (faults only) added a TIER column, and the id column's title was cut
    ("JOB ID · name▲ newest…")."""
    app = fixed_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await loaded(pilot)
        titles = header(app).split()
        await pilot.press("z")
        await wait_until(
            pilot, lambda: len(table(app).rows) == 2 and bool(header(app).strip()), "faults only"
        )
        assert header(app).split() == titles
        assert "…" not in header(app)
        await pilot.resize_terminal(80, 24)
        await wait_until(pilot, lambda: "JOB ID · name▲" in header(app), "the short title")
        assert "…" not in header(app).split("STATE")[0]


async def test_folded_rows_one_rule_marks_shown_and_single_jobs_never_folded(
    tmp_path: Path,
) -> None:
    """Item 13: `d` on a folded row silently unfolded it while `l` explained; `space` on a
    folded row left no mark on it; `F` folded single-job families and hid their state."""
    app = fixed_app(tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await loaded(pilot)
        await pilot.press("F")
        await wait_until(pilot, lambda: "group:mnist" in keys(app), "folded")
        assert "adhoc" in keys(app)  # one job: stays a row, with its state
        assert "group:adhoc" not in keys(app)
        assert sum(isinstance(r, GroupRow) for r in table(app).rows) == 3

        assert table(app).move_to_key("group:mnist")
        await pilot.press("d")
        await wait_until(
            pilot, lambda: any("folded group" in t for t in toast_messages(app)), "why"
        )
        assert "Describe" in toast_messages(app)[-1]
        assert isinstance(app.screen, JobsScreen) and "group:mnist" in keys(app)

        await pilot.press("space")
        await wait_until(pilot, lambda: len(table(app).marked) == 3, "its jobs marked")
        assert line_of(app, "group:mnist").startswith(MARK_GLYPH)

        assert table(app).move_to_key("group:mnist")
        await pilot.press("enter")  # enter opens what is under the cursor: the group's jobs
        await wait_until(pilot, lambda: "group:mnist" not in keys(app), "unfolded")

        assert table(app).move_to_key("adhoc")
        await pilot.press("minus")
        await wait_until(
            pilot, lambda: any("nothing to fold" in t for t in toast_messages(app)), "why"
        )
        assert "adhoc" in keys(app)

        # Filtered to families of one job, F says why nothing folds rather than nothing.
        app.screen.query_one("#filter", Input).value = "adhoc"
        await wait_until(pilot, lambda: keys(app) == ["adhoc"], "adhoc alone")
        await pilot.press("F")  # the list has the focus: F is not typed into the box
        await wait_until(
            pilot, lambda: any("one job: nothing" in t for t in toast_messages(app)), "why"
        )


async def test_elapsed_shows_the_wait_apart_from_the_run(tmp_path: Path) -> None:
    """Item 13: ELAPSED counted from creation while QUEUED, then restarted at the start
    (`QUEUED 5m23s` became `RUNNING 2s`)."""
    app = fixed_app(tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await loaded(pilot)
        # Queued at 09:00, now 09:30: 30 minutes of waiting, marked as such.
        assert "◷ 30m00s" in line_of(app, "census_dist_20261122_090000")
        # Running since 08:31:10, created 08:30: the run alone.
        assert " 58m50s " in line_of(app, "mnist_20261122_083000")
        row = next(r for r in table(app).rows if r.key == "mnist_20261121_170000")
        assert isinstance(row, JobRow)
        assert " 40m30s " in line_of(app, row.key)


async def test_header_keeps_the_address_at_100_columns(tmp_path: Path) -> None:
    """Item 13: at 100 columns the header dropped the service's address with room to spare."""
    app = fixed_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await loaded(pilot)
        text = app.screen.query_one(StatusHeader).render().plain
        assert "local (127.0.0.1:8470)" in text, text
        assert "✗1 failed" in text


def no_credentials(**kw: object) -> Any:
    """What connecting a Vertex profile does on a machine without Google credentials."""
    raise ApiCallError(
        "No Google application default credentials. Run `gcloud auth application-default"
        " login`, or set GOOGLE_APPLICATION_CREDENTIALS.",
        401,
        "UNAUTHENTICATED",
    )


async def test_a_cloud_profile_without_credentials_is_named_not_connecting(
    tmp_path: Path,
) -> None:
    """Item 13: the header said `connecting…` and the banner `Disconnected from
    connecting…`; both name the profile and its backend now."""
    settings = parse_settings(
        "profile: cloud\nprofiles: {cloud: {kind: vertex, project: p, region: us-central1}}"
    )
    app = JobsApp(
        settings,
        no_credentials,
        "p",
        "cloud",
        settings_file=tmp_path / "settings.yaml",
        clock=lambda: NOW,
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: shown(app, "#banner"), "the banner")
        banner = shown(app, "#banner")
        assert banner.startswith("Disconnected from cloud (Vertex AI us-central1):"), banner
        assert "application-default" in banner
        header_text = app.screen.query_one(StatusHeader).render().plain
        assert "cloud (Vertex AI us-central1)" in header_text
        assert "connecting" not in header_text
