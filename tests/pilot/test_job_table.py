"""JobTable driven through Pilot: keys, the cursor and marks across refreshes, messages, scale."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from textual.app import App, ComposeResult
from textual.message import Message

from tui_app.model.views.job_view import (
    GroupRow,
    JobRow,
    ListRow,
    SortColumn,
    display_rows,
    sort_rows,
)
from tui_app.widgets.job_table import CAUSE_W, JobTable, column_layout, fit_job_id

NOW = datetime(2026, 11, 22, 12, 0, 0, tzinfo=UTC)


def job_row(job_id: str, state: str = "SUCCEEDED", **fields: Any) -> JobRow:
    return JobRow.from_job({"jobId": job_id, "state": state, **fields})


def many(n: int, prefix: str = "j") -> list[JobRow]:
    """``n`` rows in default order, in 97 families; ids short enough for 80 columns."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    return sort_rows(
        job_row(f"{prefix}_{i % 97}_{(start + timedelta(minutes=i)):%Y%m%d_%H%M%S}", "RUNNING")
        for i in range(n)
    )


class TableApp(App[None]):
    """Just a JobTable, focused, with every message it posts recorded."""

    def __init__(self, rows: Sequence[ListRow]) -> None:
        super().__init__()
        self.initial = rows
        self.seen: list[Message] = []

    def compose(self) -> ComposeResult:
        yield JobTable(self.initial, now=NOW)

    def on_mount(self) -> None:
        self.query_one(JobTable).focus()

    def on_job_table_cursor_moved(self, message: JobTable.CursorMoved) -> None:
        self.seen.append(message)

    def on_job_table_activated(self, message: JobTable.Activated) -> None:
        self.seen.append(message)

    def on_job_table_marks_changed(self, message: JobTable.MarksChanged) -> None:
        self.seen.append(message)

    @property
    def table(self) -> JobTable:
        return self.query_one(JobTable)

    def of(self, kind: type[Message]) -> list[Any]:
        return [m for m in self.seen if isinstance(m, kind)]


def line(table: JobTable, y: int) -> str:
    """The text of screen line ``y`` of the table (0 is the header)."""
    return "".join(segment.text for segment in table.render_line(y))


def cursor_of(table: JobTable) -> tuple[int, str | None, ListRow | None]:
    return table.cursor_row, table.cursor_key, table.current


FEW = [
    job_row("mnist_20261122_083000", "RUNNING", startTime="2026-11-22T11:00:00Z"),
    job_row("mnist_20261121_120000", "FAILED", errorMessage="OOM"),
    job_row("census_20261122_010000", "QUEUED", jobPosition="3"),
    job_row("adhoc"),
]
FEW_SORTED = sort_rows(FEW)  # adhoc, census, mnist (new), mnist (old)


async def test_keys_move_the_cursor() -> None:
    app = TableApp(many(200))
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.table
        assert table.cursor_row == 0
        await pilot.press("down", "j", "j")
        assert table.cursor_row == 3
        await pilot.press("up", "k")
        assert table.cursor_row == 1
        await pilot.press("pagedown")
        page = table.cursor_row - 1
        assert page == 23  # 24 lines minus the header
        await pilot.press("ctrl+f")
        assert table.cursor_row == 1 + 2 * page
        await pilot.press("pageup", "ctrl+b")
        assert table.cursor_row == 1
        await pilot.press("G")
        assert table.cursor_row == 199
        assert table.scroll_offset.y == 200 + 1 - 24  # the last row sits on the last line
        assert table.current is not None
        assert table.current.key in line(table, 23)
        await pilot.press("g")
        assert (table.cursor_row, table.scroll_offset.y) == (0, 0)
        await pilot.press("end")
        assert table.cursor_row == 199
        await pilot.press("home", "up")
        assert table.cursor_row == 0
        await pilot.pause()
        moves = app.of(JobTable.CursorMoved)
        assert moves and moves[-1].key == table.rows[0].key


async def test_cursor_follows_its_key_across_a_reordering_refresh() -> None:
    app = TableApp(many(300))
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.table
        await pilot.press(*["j"] * 5)
        key = table.cursor_key
        assert key is not None
        screen_line = table.cursor_row - table.scroll_offset.y
        reordered = [*table.rows[100:], *table.rows[:100]]
        table.set_rows(reordered)
        await pilot.pause()
        assert table.cursor_key == key
        assert table.cursor_row == 205
        # The cursor stays on the same screen line: the refresh doesn't make the view jump.
        assert table.cursor_row - table.scroll_offset.y == screen_line
        # New rows arriving above the cursor don't move it off its job either.
        table.set_rows([job_row("aaa_new"), *reordered])
        await pilot.pause()
        assert table.cursor_key == key


async def test_a_vanished_key_keeps_the_index() -> None:
    app = TableApp(list(FEW_SORTED))
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.table
        await pilot.press("j")
        gone = table.cursor_key
        table.set_rows([r for r in FEW_SORTED if r.key != gone])
        await pilot.pause()
        assert table.cursor_row == 1
        assert table.cursor_key == FEW_SORTED[2].key
        table.set_rows(FEW_SORTED[:1])
        assert table.cursor_row == 0
        table.set_rows([])
        assert cursor_of(table) == (0, None, None)
        await pilot.pause()
        assert app.of(JobTable.CursorMoved)[-1].key is None


async def test_folding_keeps_the_cursor_on_the_family() -> None:
    app = TableApp(list(FEW_SORTED))
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.table
        assert table.move_to_key("mnist_20261121_120000")
        table.set_rows(display_rows(FEW_SORTED, {"mnist"}))
        assert table.cursor_key == "group:mnist"
        table.set_rows(FEW_SORTED)
        assert table.cursor_key == "mnist_20261122_083000"  # the family's newest
        assert not table.move_to_key("nope")
        await pilot.pause()


async def test_space_marks_and_moves_down_and_marks_survive_set_rows() -> None:
    app = TableApp(list(FEW_SORTED))
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.table
        await pilot.press("space", "space")
        assert table.marked == {FEW_SORTED[0].key, FEW_SORTED[1].key}
        assert table.cursor_row == 2
        await pilot.pause()
        changes = app.of(JobTable.MarksChanged)
        assert [set(m.marked) for m in changes] == [
            {FEW_SORTED[0].key},
            {FEW_SORTED[0].key, FEW_SORTED[1].key},
        ]
        assert "\u25cf" in line(table, 1) and "\u25cf" in line(table, 2)
        assert "\u25cf" not in line(table, 3)
        # A refresh (and a filter hiding a marked job) keeps every mark.
        table.set_rows(FEW_SORTED[1:])
        table.set_rows(list(reversed(FEW_SORTED)))
        assert table.marked == {FEW_SORTED[0].key, FEW_SORTED[1].key}
        assert table.move_to_key(FEW_SORTED[1].key)
        await pilot.press("space")  # unmark
        assert table.marked == {FEW_SORTED[0].key}
        table.clear_marks()
        assert table.marked == set()
        await pilot.pause()
        assert app.of(JobTable.MarksChanged)[-1].marked == frozenset()


async def test_a_group_cannot_be_marked() -> None:
    app = TableApp(display_rows(FEW_SORTED, {"mnist"}))
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.table
        assert table.move_to_key("group:mnist")
        await pilot.press("space")
        assert table.marked == set()
        assert isinstance(table.rows[2], GroupRow)
        assert "\u25b8 mnist (2 jobs)" in line(table, 3)


async def test_enter_posts_activated() -> None:
    app = TableApp(list(FEW_SORTED))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("j", "enter")
        await pilot.pause()
        activated = app.of(JobTable.Activated)
        assert [m.key for m in activated] == [FEW_SORTED[1].key]
        assert activated[0].control is app.table


async def test_click_selects_and_double_click_activates() -> None:
    app = TableApp(list(FEW_SORTED))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.click(JobTable, offset=(5, 3))
        assert app.table.cursor_row == 2
        await pilot.click(JobTable, offset=(5, 0))  # the header: nothing happens
        assert app.table.cursor_row == 2
        await pilot.double_click(JobTable, offset=(5, 4))
        await pilot.pause()
        assert app.table.cursor_row == 3
        assert [m.key for m in app.of(JobTable.Activated)] == [FEW_SORTED[3].key]


async def test_elapsed_ticks_when_now_advances() -> None:
    app = TableApp(list(FEW_SORTED))
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.table
        running = 1 + next(i for i, r in enumerate(FEW_SORTED) if r.state.is_live and r.started)
        failed = 1 + next(i for i, r in enumerate(FEW_SORTED) if r.error)
        assert "1h00m" in line(table, running)
        before = line(table, failed)
        table.now = NOW + timedelta(seconds=60)
        await pilot.pause()
        assert "1h01m" in line(table, running)
        assert line(table, failed) == before  # finished jobs don't tick


async def test_columns_and_states_read_without_colour() -> None:
    app = TableApp(list(FEW_SORTED))
    async with app.run_test(size=(80, 24)):
        table = app.table
        header = line(table, 0)
        for title in ("JOB ID \u00b7 name\u25b2", "STATE", "ELAPSED", "ERROR"):
            assert title in header
        # At 80 columns triage needs which job, its state and why: ML UNITS, TIER and CREATED
        # (all in the detail; CREATED is also the id's stamp) give way, in that order.
        assert "ML UNITS" not in header and "TIER" not in header and "CREATED" not in header
        assert "OOM" in line(table, 4)
        assert "mnist_20261122_083000" in line(table, 3)  # a stamped id, whole
        assert "\u25f7 QUEUED #3" in line(table, 2)
        assert "\u25b6 RUNNING" in line(table, 3)
        assert "\u2717 FAILED" in line(table, 4)
        assert all(len(line(table, y)) == table.scrollable_content_region.width for y in range(6))


async def test_header_shows_the_sort_column_and_direction() -> None:
    app = TableApp(list(FEW_SORTED))
    async with app.run_test(size=(120, 24)) as pilot:
        table = app.table
        table.sort_column = SortColumn.CREATED
        await pilot.pause()
        assert "CREATED\u25bc" in line(table, 0)  # newest first
        assert "JOB ID\u25b2" not in line(table, 0)
        table.sort_reverse = True
        await pilot.pause()
        assert "CREATED\u25b2" in line(table, 0)
        table.sort_column = SortColumn.ML_UNITS
        table.sort_reverse = False
        await pilot.pause()
        assert "\u25bcML UNITS" in line(table, 0)


async def test_created_is_shown_in_the_zone_of_now() -> None:
    app = TableApp([job_row("a", createTime="2026-11-22T08:30:00Z")])
    async with app.run_test(size=(100, 24)) as pilot:
        table = app.table
        assert "11-22 08:30" in line(table, 1)
        table.now = NOW.astimezone(timezone(timedelta(hours=-9)))
        await pilot.pause()
        assert "11-21 23:30" in line(table, 1)


async def test_wide_terminal_shows_errors() -> None:
    app = TableApp(list(FEW_SORTED))
    async with app.run_test(size=(120, 24)):
        table = app.table
        assert "ERROR" in line(table, 0)
        assert "OOM" in line(table, 4)


async def test_empty_and_single_row() -> None:
    app = TableApp([])
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.table
        assert "No jobs" in line(table, 1)
        await pilot.press("down", "end", "space", "enter")
        assert (table.cursor_key, table.marked) == (None, set())
        table.set_rows(FEW_SORTED[:1])
        await pilot.press("down", "up", "end")
        assert table.cursor_key == FEW_SORTED[0].key
        assert "No jobs" not in line(table, 1)


async def test_100k_rows_jump_to_the_end() -> None:
    rows = many(100_000)
    app = TableApp(rows)
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.table
        await pilot.press("end")
        assert table.cursor_row == 99_999
        assert table.scroll_offset.y == 100_000 + 1 - 24
        assert rows[-1].key in line(table, 23)
        await pilot.press("up")
        assert table.cursor_row == 99_998


def test_columns_give_way_least_valuable_first() -> None:
    """Pure layout: JOB ID, STATE and ERROR stay; ML UNITS, TIER, CREATED, ELAPSED go in turn."""

    def shown(width: int) -> list[str]:
        layout = column_layout(width, 30)
        names = ("elapsed", "created", "tier", "ml")
        return [n for n in names if getattr(layout, n)]

    assert shown(60) == []
    assert shown(80) == ["elapsed"]
    assert shown(100) == ["elapsed", "created"]
    assert shown(120) == ["elapsed", "created", "tier", "ml"]
    assert column_layout(80, 30).error_w >= CAUSE_W
    assert column_layout(60, 30).error_w >= CAUSE_W  # the id is cut first


def test_a_cut_id_keeps_its_base_and_time() -> None:
    job_id, base = "census_dist_20261122_175721", "census_dist"
    assert fit_job_id(job_id, base, 27) == job_id
    assert fit_job_id(job_id, base, 24) == "census_dist_\u20261122_175721"
    assert fit_job_id(job_id, base, 20).rstrip() == "census_dist\u2026_175721"
    assert fit_job_id(job_id, base, 16) == "census_d\u2026_175721"
    assert fit_job_id("no-stamp-here-at-all", "no-stamp-here-at-all", 10) == "no-stamp-\u2026"
