"""LogView driven through Pilot: following, pending counts, filters, search, wrap, bounds, safety.

Timings are printed (run with ``-s``), never asserted: the machines are shared and noisy.
"""

from __future__ import annotations

import asyncio
import gc
import random
import re
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from textual import events
from textual.app import App, ComposeResult
from textual.message import Message

from tui_app.model.logs.log_line import LogLine
from tui_app.model.logs.severity import SEVERITIES
from tui_app.widgets.log_view import LogView, TimestampMode

START = datetime(2026, 11, 22, 9, 30, 0, tzinfo=UTC)
TASKS = ("master-replica-0", "worker-replica-0", "worker-replica-1", "ps-replica-0")
INFO, WARNING, ERROR = SEVERITIES["INFO"], SEVERITIES["WARNING"], SEVERITIES["ERROR"]


def log_line(
    i: int, text: str | None = None, *, severity: int = INFO, task: str | None = None
) -> LogLine:
    """Line ``i``: one every 10 ms from START, round-robin over TASKS unless ``task`` is given."""
    when = START + timedelta(milliseconds=10 * i)
    return LogLine(
        timestamp=when.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        insert_id=f"{i:018d}",
        task_name=task or TASKS[i % len(TASKS)],
        severity=severity,
        text=f"line {i}" if text is None else text,
    )


def numbered(start: int, stop: int) -> list[LogLine]:
    return [log_line(i) for i in range(start, stop)]


class LogApp(App[None]):
    """Just a LogView, focused, with every message it posts recorded."""

    def __init__(self, **options: Any) -> None:
        super().__init__()
        self.options = options
        self.seen: list[Message] = []

    def compose(self) -> ComposeResult:
        yield LogView(**self.options)

    def on_mount(self) -> None:
        self.query_one(LogView).focus()

    def on_log_view_top_reached(self, message: LogView.TopReached) -> None:
        self.seen.append(message)

    def on_log_view_pending_changed(self, message: LogView.PendingChanged) -> None:
        self.seen.append(message)

    @property
    def view(self) -> LogView:
        return self.query_one(LogView)

    def of(self, kind: type[Message]) -> list[Any]:
        return [m for m in self.seen if isinstance(m, kind)]


def screen_lines(view: LogView) -> list[str]:
    """What the view draws, line by line (trailing spaces dropped)."""
    height = view.scrollable_content_region.height
    return ["".join(s.text for s in view.render_line(y)).rstrip() for y in range(height)]


def state(view: LogView) -> tuple[bool, int, int | None]:
    """(follow, cursor row, current match): read fresh (keys change them behind mypy's back)."""
    return view.follow, view.cursor_index, view.current_match_index


def bar_shown(view: LogView) -> bool:
    """Whether the horizontal scrollbar is shown: read fresh (layout changes it)."""
    return bool(view.show_horizontal_scrollbar)


def wheel(view: LogView, up: bool = True) -> None:
    """One notch of the mouse wheel over the view."""
    kind = events.MouseScrollUp if up else events.MouseScrollDown
    view.post_message(kind(view, 5, 5, 0, -1 if up else 1, 0, False, False, False))


async def test_append_keeps_order_and_follows_the_end() -> None:
    app = LogApp()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.view
        for start in range(0, 150, 50):
            view.append(numbered(start, start + 50))
        await pilot.pause()
        assert [text.text for _, text in view.lines] == [f"line {i}" for i in range(150)]
        assert view.follow
        assert view.scroll_offset.y == view.max_scroll_y > 0
        shown = screen_lines(view)
        assert shown[-1] == "line 149"
        assert shown[0] == f"line {150 - len(shown)}"
        assert view.cursor_index == 149
        assert view.current_line_text() == "line 149"
        # Following keeps up with later batches too.
        view.append(numbered(150, 160))
        await pilot.pause()
        assert screen_lines(view)[-1] == "line 159"


async def test_a_scrollbar_shown_after_the_end_was_checked_leaves_the_last_line_in_sight() -> None:
    """A long line brings the horizontal bar, which takes the view's last row in a layout pass.
    When that pass comes after the view checked its end (a batch holds layout back, as a busy
    app's message order can), a following view still ends on its last line."""
    app = LogApp()
    async with app.run_test(size=(60, 12)) as pilot:
        view = app.view
        view.append(numbered(0, 40))
        await pilot.pause()
        assert not bar_shown(view)
        with app.batch_update():
            view.append([log_line(40, "x" * 100), log_line(41, "the end")])
            await pilot.pause()
        await pilot.pause()
        assert bar_shown(view)
        assert view.scroll_offset.y == view.max_scroll_y
        assert screen_lines(view)[-1] == "the end"
        # Paused, the view stays where the user left it.
        view.follow = False
        view.show_horizontal_scrollbar = False
        await pilot.pause()
        y = view.scroll_offset.y
        view.show_horizontal_scrollbar = True
        await pilot.pause()
        assert not view.follow and view.scroll_offset.y == y


async def test_scrolling_up_pauses_and_counts_pending_then_resume() -> None:
    app = LogApp()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.view
        view.append(numbered(0, 100))
        await pilot.pause()
        bottom = view.scroll_offset.y
        wheel(view)
        await pilot.pause()
        assert not view.follow
        paused_at = view.scroll_offset.y
        assert paused_at < bottom
        for start in range(100, 130, 10):
            view.append(numbered(start, start + 10))
        await pilot.pause()
        assert view.pending == 30
        assert view.scroll_offset.y == paused_at  # the view stays where the user put it
        assert app.of(LogView.PendingChanged)[-1].pending == 30
        view.resume()
        await pilot.pause()
        assert state(view)[0] and view.pending == 0
        assert app.of(LogView.PendingChanged)[-1].pending == 0
        assert screen_lines(view)[-1] == "line 129"
        # A key up pauses too; scrolling back down to the bottom follows again.
        await pilot.press("up")
        assert state(view)[:2] == (False, 128)
        view.append(numbered(130, 131))
        await pilot.pause()
        assert view.pending == 1
        wheel(view, up=True)
        await pilot.pause()
        for _ in range(5):
            wheel(view, up=False)
            await pilot.pause()
        assert state(view)[0] and view.pending == 0
        assert screen_lines(view)[-1] == "line 130"


async def test_cursor_keys() -> None:
    app = LogApp()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.view
        view.append(numbered(0, 200))
        await pilot.pause()
        await pilot.press("k", "k", "up")
        assert (view.cursor_index, view.follow) == (196, False)
        await pilot.press("j", "down")
        assert view.cursor_index == 198
        await pilot.press("pageup")
        assert view.cursor_index == 198 - 24
        await pilot.press("ctrl+b")
        assert view.cursor_index == 198 - 48
        await pilot.press("pagedown")
        assert view.cursor_index == 198 - 24
        await pilot.press("g")
        assert (view.cursor_index, view.scroll_offset.y) == (0, 0)
        assert view.current_line_text() == "line 0"
        await pilot.press("G")
        assert state(view)[:2] == (True, 199)
        await pilot.press("home", "end")
        assert state(view)[0] and view.scroll_offset.y == view.max_scroll_y


async def test_min_severity_hides_lines_below_the_floor() -> None:
    app = LogApp()
    levels = [SEVERITIES[name] for name in ("DEFAULT", "DEBUG", "INFO", "WARNING", "ERROR")]
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.view
        view.append([log_line(i, severity=levels[i % 5]) for i in range(50)])
        view.min_severity = WARNING
        await pilot.pause()
        assert view.row_count == 20
        assert [line for line in screen_lines(view) if line][-1] == "line 49"
        assert all(int(text.split()[1]) % 5 >= 3 for text in view.visible_text().splitlines())
        # New lines are filtered as they arrive; lowering the floor shows everything again.
        view.append([log_line(50, severity=INFO), log_line(51, severity=ERROR)])
        assert view.row_count == 21
        view.min_severity = 0
        await pilot.pause()
        assert view.row_count == 52


async def test_search_counts_highlights_and_jumps() -> None:
    app = LogApp()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.view
        view.append(
            [log_line(i, "Epoch 3 loss=nan" if i % 10 == 7 else f"step {i} ok") for i in range(100)]
        )
        await pilot.pause()
        assert view.search("NaN") == 0  # smart case: a capital makes it case-sensitive
        assert view.search("nan") == 10  # lines 7, 17, … 97
        assert view.match_count == 10 and state(view)[2] is None
        await pilot.press("n")
        assert state(view) == (False, 7, 0)
        await pilot.press("n", "n")
        assert state(view) == (False, 27, 2)
        await pilot.press("N")
        assert state(view) == (False, 17, 1)
        await pilot.press("N", "N")  # wraps around to the last match
        assert state(view) == (False, 97, 9)
        # Every match on screen is highlighted; the cursor row's in the current-match style.
        await pilot.pause()
        styles = view._styles()
        y = view.cursor_index - view.scroll_offset.y
        current = [s for s in view.render_line(y) if s.text == "nan"]
        assert current and current[0].style == styles.match_current
        others = [
            s
            for row in range(view.scrollable_content_region.height)
            if row != y
            for s in view.render_line(row)
            if s.text == "nan"
        ]
        assert others and all(s.style is not None and s.style.bgcolor for s in others)
        # Lines that arrive later are searched too; an invalid regex is searched literally.
        view.append([log_line(100, "loss=nan again")])
        assert view.match_count == 11
        assert view.search("step [") == 0
        assert view.search_error is not None
        view.append([log_line(101, "a literal step [ here")])
        assert view.match_count == 1
        assert view.search("") == 0 and view.search_error is None


async def test_keep_and_drop_filters_with_context_and_separators() -> None:
    app = LogApp()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.view
        view.append(
            [log_line(i, f"{'ERROR boom' if i in (5, 6, 20) else 'fine'} {i}") for i in range(30)]
        )
        await pilot.pause()
        view.set_filter("error", "keep")
        assert view.visible_text().splitlines() == ["ERROR boom 5", "ERROR boom 6", "ERROR boom 20"]
        view.set_filter("error", "keep", context=2)
        assert view.visible_text().splitlines() == [
            "fine 3",
            "fine 4",
            "ERROR boom 5",
            "ERROR boom 6",
            "fine 7",
            "fine 8",
            "--",
            "fine 18",
            "fine 19",
            "ERROR boom 20",
            "fine 21",
            "fine 22",
        ]
        await pilot.pause()
        assert "--" in screen_lines(view)
        # The stream continues across batches: after-context, then a new group with its --.
        view.append([log_line(30, "fine 30"), log_line(31, "ERROR again 31")])
        view.append([log_line(32, "fine 32")])
        assert view.visible_text().splitlines()[-7:] == [
            "fine 21",
            "fine 22",
            "--",
            "fine 29",
            "fine 30",
            "ERROR again 31",
            "fine 32",
        ]
        view.set_filter("fine", "drop")
        assert view.visible_text().splitlines() == [
            "ERROR boom 5",
            "ERROR boom 6",
            "ERROR boom 20",
            "ERROR again 31",
        ]
        # Filters combine with the severity floor (context counts only lines above it).
        view.set_filter(None)
        assert view.row_count == 33
        view.append([log_line(33, "ERROR but debug", severity=SEVERITIES["DEBUG"])])
        view.min_severity = INFO
        view.set_filter("error", "keep", context=1)
        assert "ERROR but debug" not in view.visible_text()
        assert view.visible_text().splitlines()[-2:] == ["ERROR again 31", "fine 32"]


async def test_appending_under_a_context_filter_matches_filtering_afterwards() -> None:
    """The streaming grep -C state gives the same rows as one pass over the whole store."""
    rng = random.Random(7)
    app = LogApp()
    async with app.run_test(size=(80, 24)):
        view = app.view
        view.min_severity = INFO
        view.set_filter("hit", "keep", context=3)
        lines = [
            log_line(
                i,
                "hit" if rng.random() < 0.05 else "miss",
                severity=rng.choice([SEVERITIES["DEBUG"], INFO, ERROR]),
            )
            for i in range(3000)
        ]
        at = 0
        while at < len(lines):
            size = rng.randint(1, 200)
            view.append(lines[at : at + size])
            if rng.random() < 0.1:
                view.insert_marker(START)
            at += size
        streamed = view.visible_text()
        view.set_filter("hit", "keep", context=3)  # recomputed from the store
        assert view.visible_text() == streamed


async def test_marker_is_a_rule_that_filters_keep() -> None:
    app = LogApp()
    async with app.run_test(size=(60, 10)) as pilot:
        view = app.view
        view.append(numbered(0, 3))
        view.insert_marker(datetime(2026, 11, 22, 12, 34, 56, tzinfo=UTC))
        view.append(numbered(3, 4))
        await pilot.pause()
        assert view.visible_text().splitlines() == [
            "line 0",
            "line 1",
            "line 2",
            "── 12:34:56 ──",
            "line 3",
        ]
        rule = screen_lines(view)[3]
        assert " 12:34:56 " in rule and rule.startswith("──") and rule.endswith("──")
        assert len(rule) == view.scrollable_content_region.width
        view.set_filter("line 3")
        view.min_severity = ERROR
        assert view.visible_text().splitlines() == ["── 12:34:56 ──"]
        assert view.search("12") == 0  # markers are not log lines: search skips them
        assert view.pending == 0


async def test_wrap_and_a_one_mebibyte_line() -> None:
    app = LogApp()
    big = "0123456789" * ((1 << 20) // 10) + "end"
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.view
        # Timed: the synchronous work plus drawing every screen line (Pilot's waits excluded).
        started = time.perf_counter()
        view.append([log_line(0, "short"), log_line(1, big), log_line(2, "after")])
        screen_lines(view)
        no_wrap = time.perf_counter() - started
        await pilot.pause()
        width = view.scrollable_content_region.width
        assert view.row_count == 3 and view.virtual_size.height == 3
        assert screen_lines(view)[1] == big[:width]
        assert view.virtual_size.width > 20_000  # scrolls sideways to the cut and the note
        started = time.perf_counter()
        view.wrap = True
        lines = screen_lines(view)
        wrapped = time.perf_counter() - started
        await pilot.pause()
        width = view.scrollable_content_region.width
        assert view.virtual_size.height == 1 + -(-20_000 // width) + 1 + 1
        assert view.scroll_offset.y == view.max_scroll_y  # still following
        lines = screen_lines(view)
        assert lines[-1] == "after"
        assert lines[-2] == f"… {len(big) - 20_000:,} more characters"
        assert lines[-3] == big[(20_000 // width) * width : 20_000]
        started = time.perf_counter()
        view.action_first()
        screen_lines(view)
        top = time.perf_counter() - started
        await pilot.pause()
        assert screen_lines(view)[:2] == ["short", big[:width]]
        view.wrap = False
        await pilot.pause()
        assert view.virtual_size.height == 3 and view.cursor_index == 0
        print(
            f"\n1 MiB line (call + drawing the screen): append {no_wrap * 1e3:.1f} ms,"
            f" wrap on {wrapped * 1e3:.1f} ms, jump to its top {top * 1e3:.1f} ms"
        )


async def test_wrap_follows_the_width_and_keeps_the_cursor_row() -> None:
    app = LogApp(show_tags=True)
    async with app.run_test(size=(60, 12)) as pilot:
        view = app.view
        view.append([log_line(i, f"{i} " + "word " * (i % 20)) for i in range(200)])
        view.wrap = True
        await pilot.pause()
        view.move_to(101)
        await pilot.pause()
        assert any(line.startswith("W0  101 word") for line in screen_lines(view))
        await pilot.resize_terminal(40, 12)
        await pilot.pause()
        assert view.cursor_index == 101
        assert any(line.startswith("W0  101 word") for line in screen_lines(view))
        for line in screen_lines(view):
            assert len(line) <= view.scrollable_content_region.width


async def test_max_lines_drops_the_oldest() -> None:
    app = LogApp(max_lines=1000)
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.view
        for start in range(0, 2500, 500):
            view.append(numbered(start, start + 500))
        await pilot.pause()
        assert (view.line_count, view.dropped) == (1000, 1500)
        assert view.lines[0][1].text == "line 1500"
        assert screen_lines(view)[-1] == "line 2499"
        # Filtered rows, matches and a paused view survive the drops.
        view.search("line 2")
        view.set_filter("0$", "keep")
        await pilot.press("up")
        top_line = screen_lines(view)[0]
        view.append(numbered(2500, 2600))
        assert view.lines[0][1].text == "line 1600"
        assert view.visible_text().splitlines()[0] == "line 1600"
        assert view.match_count == sum(
            1 for i in range(1600, 2600) if i % 10 == 0 and str(i).startswith("2")
        )
        await pilot.pause()
        assert screen_lines(view)[0] == top_line  # paused: what the user reads stays put
        view.clear()
        assert (view.line_count, view.row_count, view.dropped, view.match_count) == (0, 0, 0, 0)


async def test_top_reached_once_per_arrival() -> None:
    app = LogApp()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.view
        view.append(numbered(100, 200))
        await pilot.pause()
        await pilot.press("g")
        await pilot.pause()
        assert len(app.of(LogView.TopReached)) == 1
        await pilot.press("g", "up")
        await pilot.pause()
        assert len(app.of(LogView.TopReached)) == 1  # still there: no second request
        # Older lines arrive; the view keeps showing what it showed.
        added = view.prepend(numbered(50, 100))
        await pilot.pause()
        assert added == 50 and view.lines[0][1].text == "line 50"
        assert view.current_line_text() == "line 100"
        assert screen_lines(view)[0] == "line 100"
        await pilot.press("g")
        await pilot.pause()
        assert len(app.of(LogView.TopReached)) == 2
        # The wheel arriving at the top counts too.
        await pilot.press("end")
        await pilot.pause()
        for _ in range(80):
            wheel(view)
        await pilot.pause()
        assert view.scroll_offset.y == 0
        assert len(app.of(LogView.TopReached)) == 3


async def test_tags_and_timestamps_prefix_lines() -> None:
    app = LogApp(show_tags=True, timestamps="utc")
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.view
        view.job_start = START - timedelta(seconds=83, milliseconds=456)
        view.append([log_line(i) for i in range(4)] + [log_line(4, task="service")])
        await pilot.pause()
        assert view.visible_text().splitlines() == [
            "M0  11-22 09:30:00.000Z line 0",
            "W0  11-22 09:30:00.010Z line 1",
            "W1  11-22 09:30:00.020Z line 2",
            "P0  11-22 09:30:00.030Z line 3",
            "SVC 11-22 09:30:00.040Z line 4",
        ]
        modes: dict[TimestampMode, str] = {
            "relative": "M0  +0:01:23.456  line 0",
            "off": "M0  line 0",
        }
        for mode, first in modes.items():
            view.timestamps = mode
            await pilot.pause()
            assert screen_lines(view)[0] == first
        view.timestamps = "local"
        local = START.astimezone()
        assert view.current_line_text().startswith(f"SVC {local:%m-%d %H:%M:%S}.040 ")
        view.show_tags = False
        assert view.current_line_text().startswith(f"{local:%m-%d %H:%M:%S}.040 line 4")
        # The same replica always gets the same colour, distinct across W0…W5.
        view.show_tags = True
        view.timestamps = "off"
        view.append([log_line(i, task=f"worker-replica-{i}") for i in range(6)])
        await pilot.pause()
        tag_styles = [next(iter(view.render_line(y))).style for y in range(5, 11)]
        assert len(set(tag_styles)) == 6


async def test_first_failure_jump() -> None:
    app = LogApp()
    async with app.run_test(size=(80, 10)) as pilot:
        view = app.view
        view.append(numbered(0, 40))
        view.append([log_line(40, "Traceback (most recent call last):")])
        view.append(numbered(41, 100))
        view.append([log_line(100, "boom", severity=ERROR)])
        await pilot.pause()
        index = view.first_matching(
            lambda line: line.severity >= ERROR or line.text.startswith("Traceback")
        )
        assert index == 40
        view.move_to(index)
        await pilot.pause()
        assert not view.follow
        assert view.current_line_text() == "Traceback (most recent call last):"
        assert "Traceback (most recent call last):" in screen_lines(view)
        assert view.first_matching(lambda line: "nothing" in line.text) is None


HOSTILE = [
    "\x1b[2J\x1b[Hcleared?",
    "\x1b]0;pwned title\x07title?",
    "\x1b]52;c;ZXZpbA==\x07clipboard?",
    "\x1b[31mred\x1b[0m \x1b[10;10Hmoved \x1b[?1049h alt screen",
    "progress  5%|▌ |\r progress 100%|██████████|",
    "bell\x07 nul\x00 del\x7f c1\x9b31m esc\x1b",
    "\x1bPq sixel\x1b\\dcs",
    "zero\u200bwidth \u202ebidi",
]


async def test_no_escape_from_the_log_reaches_the_screen() -> None:
    app = LogApp(show_tags=True)
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.view
        view.append([log_line(i, text) for i, text in enumerate(HOSTILE)])
        view.search("e")
        await pilot.pause()
        for y in range(view.scrollable_content_region.height):
            for segment in view.render_line(y):
                assert not re.search(r"[\x00-\x1f\x7f-\x9f\u200b\u202e]", segment.text)
        shown = "\n".join(screen_lines(view))
        assert "pwned" not in shown and "ZXZpbA" not in shown
        assert "progress 100%|██████████|" in shown and "progress  5%" not in shown
        assert "bell^G nul^@ del^? c1<9b>31m esc" in shown
        screenshot = app.export_screenshot()
        assert "\x1b" not in screenshot and "pwned" not in screenshot
        assert "\x1b" not in view.visible_text()


def _trainer_lines(start: int, stop: int) -> list[LogLine]:
    """~96-character trainer lines (a typical progress line), every 50th with an SGR colour."""
    return [
        log_line(
            i,
            f"step={i} loss={1 / (i + 1):.6f} lr=0.0003 tok/s={10_000 + i % 977}"
            f" grad_norm={(i % 113) / 7:.3f}" + (" \x1b[33mWARN\x1b[0m" if i % 50 == 0 else ""),
            severity=ERROR if i % 1000 == 999 else INFO,
        )
        for i in range(start, stop)
    ]


class _Heartbeat:
    """Lateness of a 10 ms sleep in the app's loop: the event-loop lag."""

    def __init__(self) -> None:
        self.lags: list[float] = []
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self._beat())

    async def _beat(self) -> None:
        while not self._stop.is_set():
            before = time.perf_counter()
            await asyncio.sleep(0.01)
            self.lags.append(time.perf_counter() - before - 0.01)

    async def stop(self) -> str:
        self._stop.set()
        await self._task
        lags = sorted(self.lags)
        p95 = lags[min(len(lags) - 1, int(len(lags) * 0.95))]
        return f"loop lag p95 {p95 * 1e3:.1f} ms, max {lags[-1] * 1e3:.1f} ms"


async def test_bulk_append_filter_and_search_at_scale() -> None:
    """Append throughput and loop lag, then filter/search/wrap at 40k lines (all printed)."""
    gc_thresholds = gc.get_threshold()
    gc.set_threshold(10_000, 50, 1000)  # fewer young passes while many lines are alive
    app = LogApp(show_tags=True, timestamps="utc")
    try:
        async with app.run_test(size=(160, 50)) as pilot:
            view = app.view
            # Paced: 20k lines/s in batches of 1,000 every 50 ms, for one second.
            paced = [_trainer_lines(start, start + 1000) for start in range(0, 20_000, 1000)]
            heartbeat = _Heartbeat()
            cpu = time.process_time()
            for batch in paced:
                view.append(batch)
                await asyncio.sleep(0.05)
            await pilot.pause()
            paced_cpu = time.process_time() - cpu
            paced_lag = await heartbeat.stop()
            # Saturating: batches back to back, yielding to the loop between them.
            saturating = [
                _trainer_lines(start, start + 1000) for start in range(20_000, 40_000, 1000)
            ]
            heartbeat = _Heartbeat()
            started = time.perf_counter()
            for batch in saturating:
                view.append(batch)
                await asyncio.sleep(0)
            await pilot.pause()
            elapsed = time.perf_counter() - started
            saturating_lag = await heartbeat.stop()
            assert view.line_count == 40_000
            assert "step=39999 " in screen_lines(view)[-1]

            timings: dict[str, float] = {}

            def timed(name: str, action: Callable[[], object]) -> None:
                started = time.perf_counter()
                action()
                timings[name] = time.perf_counter() - started

            timed("keep filter -C2", lambda: view.set_filter("loss=0.00002", "keep", context=2))
            rows = view.row_count
            timed("search", lambda: view.search("grad_norm=1[0-9]"))
            count = view.match_count
            timed("drop filter", lambda: view.set_filter("tok/s=10[0-4]", "drop"))
            timed("clear filter", lambda: view.set_filter(None))
            timed("ERROR floor", lambda: setattr(view, "min_severity", ERROR))
            timed("clear floor", lambda: setattr(view, "min_severity", 0))
            timed("search matching every line", lambda: view.search("tok/s"))
            timed("wrap on", lambda: setattr(view, "wrap", True))
            timed("visible_text", view.visible_text)
            await pilot.pause()
            assert rows > 0 and count > 0 and view.match_count == 40_000
            print(
                f"\nappend, paced 20k lines/s in batches of 1,000: {paced_lag},"
                f" CPU {paced_cpu * 1e6 / 20_000:.1f} µs/line"
                f"\nappend, saturating, 20k lines in batches of 1,000:"
                f" {20_000 / elapsed:,.0f} lines/s, {saturating_lag}"
                "\nat 40k lines: "
                + ", ".join(f"{name} {seconds * 1e3:.0f} ms" for name, seconds in timings.items())
            )
    finally:
        gc.set_threshold(*gc_thresholds)
