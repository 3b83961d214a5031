"""LogBuffer: the rows a log view shows (floor, keep/drop, grep -C), search hits, limits."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui_app.model.logs.log_buffer import Entry, LogBuffer, Marker, smart_case
from tui_app.model.logs.log_line import LogLine
from tui_app.model.logs.log_text import CleanLine, clean
from tui_app.model.logs.severity import SEVERITIES

DEBUG, INFO, WARNING, ERROR = (SEVERITIES[name] for name in ("DEBUG", "INFO", "WARNING", "ERROR"))
SEP = "--"


def entry(text: str, severity: int = INFO) -> Entry:
    line = LogLine("2026-11-22T09:30:00.000000Z", text, "master-replica-0", severity, text)
    return line, clean(text)


def marker() -> Entry:
    mark = Marker(datetime(2026, 11, 22, 9, 30, tzinfo=UTC))
    return mark, CleanLine(mark.label, (), 0)


def texts(buffer: LogBuffer) -> list[str]:
    """The shown rows as their text, ``--`` for a separator."""
    return [SEP if not row & 1 else buffer.entry(row)[1].text for row in buffer.iter_rows()]


def filled(texts_: Sequence[str], max_lines: int = 1000) -> LogBuffer:
    buffer = LogBuffer(max_lines)
    buffer.add([entry(text) for text in texts_])
    return buffer


# ---------------------------------------------------------------------------------------------
# Rows and their encoding


def test_unfiltered_rows_are_every_line_without_a_list() -> None:
    buffer = filled(["a", "b", "c"])
    assert buffer.rows is None  # the common case costs no row list
    assert buffer.row_count == 3
    assert [buffer.row(i) for i in range(3)] == [1, 3, 5] == list(buffer.iter_rows())
    assert [buffer.index_of(row) for row in (1, 3, 5)] == [0, 1, 2]
    assert buffer.entry(3)[1].text == "b"


def test_add_reports_only_the_lines_shown() -> None:
    buffer = LogBuffer()
    buffer.set_filter("keep")
    assert buffer.add([entry("keep 1"), entry("drop"), entry("keep 2")]) == 2
    assert texts(buffer) == ["keep 1", "keep 2"]
    assert buffer.add([entry("nothing")]) == 0


def test_floor_hides_lower_lines_but_never_markers() -> None:
    buffer = LogBuffer()
    buffer.add([entry("debug", DEBUG), entry("info"), marker(), entry("error", ERROR)])
    buffer.set_min_severity(WARNING)
    assert texts(buffer) == [marker()[1].text, "error"]
    buffer.set_min_severity(0)
    assert buffer.rows is None and buffer.row_count == 4


def test_keep_and_drop_filters_and_markers() -> None:
    buffer = LogBuffer()
    buffer.add([entry("loss=1"), entry("acc=1"), marker(), entry("loss=2")])
    buffer.set_filter("loss")
    assert texts(buffer) == ["loss=1", marker()[1].text, "loss=2"]
    buffer.set_filter("loss", "drop")
    assert texts(buffer) == ["acc=1", marker()[1].text]
    buffer.set_filter(None)
    assert buffer.rows is None and not buffer.filtering


def test_filter_mode_is_checked() -> None:
    with pytest.raises(ValueError, match="mode must be one of"):
        LogBuffer().set_filter("x", "grep")  # type: ignore[arg-type]  # the point of the test


def test_smart_case_and_invalid_regex() -> None:
    buffer = filled(["Loss up", "loss down", "f(x", "fx"])
    buffer.set_filter("loss")
    assert texts(buffer) == ["Loss up", "loss down"]  # no capital: any case
    buffer.set_filter("Loss")
    assert texts(buffer) == ["Loss up"]  # a capital: exactly that case
    buffer.set_filter("f(x")
    assert texts(buffer) == ["f(x"]  # taken literally, not as a broken group
    error = buffer.filter_error
    assert error is not None and "missing )" in error
    buffer.set_filter("f.x")
    assert buffer.filter_error is None and texts(buffer) == ["f(x"]
    pattern, literal_error = smart_case("[")
    assert literal_error is not None and pattern.search("a[b")


def test_nearest_row_keeps_a_cursor_close_to_its_line() -> None:
    buffer = filled([f"line {i}" + (" hit" if i in (3, 7) else "") for i in range(10)])
    buffer.set_filter("hit")
    assert buffer.nearest_row(2 * 5 + 1) == 2 * 7 + 1  # the next shown line
    assert buffer.nearest_row(2 * 9 + 1) == 2 * 7 + 1  # past the end: the last one
    assert buffer.nearest_row(-1) == 2 * 3 + 1
    buffer.set_filter("nothing at all")
    assert buffer.nearest_row(2 * 3 + 1) == -1


# ---------------------------------------------------------------------------------------------
# grep -C


def test_context_lines_and_separators() -> None:
    buffer = filled([f"line {i}" + (" hit" if i in (2, 7) else "") for i in range(12)])
    buffer.set_filter("hit", context=1)
    assert texts(buffer) == [
        "line 1",
        "line 2 hit",
        "line 3",
        SEP,
        "line 6",
        "line 7 hit",
        "line 8",
    ]
    # The separator is encoded before the first line of its group.
    assert buffer.rows is not None and buffer.rows[3] == 2 * 6
    buffer.set_filter("hit", context=2)  # the groups meet: no separator
    assert texts(buffer) == [f"line {i}" + (" hit" if i in (2, 7) else "") for i in range(10)]
    buffer.set_filter("hit", "drop", context=3)  # context is for keep only
    assert len(texts(buffer)) == 10


def test_context_counts_only_lines_above_the_floor() -> None:
    lines = [entry("a"), entry("noise", DEBUG), entry("hit"), entry("noise", DEBUG), entry("b")]
    buffer = LogBuffer()
    buffer.add(lines)
    buffer.set_min_severity(INFO)
    buffer.set_filter("hit", context=1)
    assert texts(buffer) == ["a", "hit", "b"]


def test_markers_show_without_context_and_cut_before_context() -> None:
    buffer = LogBuffer()
    buffer.add([entry("x1"), entry("x2"), marker(), entry("hit"), entry("x3"), entry("x4")])
    buffer.set_filter("hit", context=1)
    # The line before the marker is not context of the match after it.
    assert texts(buffer) == [marker()[1].text, "hit", "x3"]


def reference_grep(lines: Sequence[tuple[int, bool]], floor: int, context: int) -> list[int]:
    """grep -C written the obvious way: the encoded rows for (severity, matches) lines.

    Like grep, a plain filter (no context) has no ``--`` between its lines.
    """
    eligible = [serial for serial, (severity, _) in enumerate(lines) if severity >= floor]
    hits = [pos for pos, serial in enumerate(eligible) if lines[serial][1]]
    shown = sorted(
        {
            p
            for hit in hits
            for p in range(hit - context, hit + context + 1)
            if 0 <= p < len(eligible)
        }
    )
    rows: list[int] = []
    for i, pos in enumerate(shown):
        if context and i and pos != shown[i - 1] + 1:
            rows.append(2 * eligible[pos])
        rows.append(2 * eligible[pos] + 1)
    return rows


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(st.tuples(st.sampled_from([DEBUG, INFO, ERROR]), st.booleans()), max_size=60),
    floor=st.sampled_from([0, INFO, ERROR]),
    context=st.integers(0, 4),
    cuts=st.lists(st.integers(0, 60), max_size=5),
)
def test_grep_streamed_in_batches_equals_grep_of_the_whole(
    lines: list[tuple[int, bool]], floor: int, context: int, cuts: list[int]
) -> None:
    entries = [entry(f"{i} {'hit' if hit else 'miss'}", sev) for i, (sev, hit) in enumerate(lines)]
    expected = reference_grep(lines, floor, context)
    streamed = LogBuffer()
    streamed.set_min_severity(floor)
    streamed.set_filter("hit", context=context)
    bounds = sorted({0, len(entries), *(min(cut, len(entries)) for cut in cuts)})
    for start, stop in pairwise(bounds):
        streamed.add(entries[start:stop])
    assert streamed.rows == expected
    whole = LogBuffer()
    whole.add(entries)
    whole.set_min_severity(floor)
    whole.set_filter("hit", context=context)
    assert whole.rows == expected


# ---------------------------------------------------------------------------------------------
# Limits: trimming, history, clear


def test_trim_drops_the_oldest_and_keeps_serials() -> None:
    buffer = filled([f"line {i}" for i in range(8)], max_lines=5)
    assert buffer.trim() == 3
    assert (len(buffer.entries), buffer.offset, buffer.dropped) == (5, 3, 3)
    assert buffer.row(0) == 2 * 3 + 1 and buffer.entry(buffer.row(0))[1].text == "line 3"
    assert buffer.trim() == 0  # within the limit


def test_trim_never_leaves_a_separator_first_and_drops_old_matches() -> None:
    buffer = LogBuffer(max_lines=6)
    buffer.set_filter("hit", context=1)
    buffer.search("hit")
    buffer.add([entry(t) for t in ("hit 0", "x 1", "x 2", "x 3", "hit 4", "x 5")])
    assert texts(buffer) == ["hit 0", "x 1", SEP, "x 3", "hit 4", "x 5"]
    assert buffer.matches == [0, 4]
    buffer.add([entry("x 6"), entry("x 7")])
    assert buffer.trim() == 3  # "hit 0", "x 1" and the separator that followed them
    assert texts(buffer) == ["x 3", "hit 4", "x 5"]
    assert buffer.matches == [4] and buffer.dropped == 2


def test_trim_forgets_before_context_that_was_dropped() -> None:
    buffer = LogBuffer(max_lines=2)
    buffer.set_filter("hit", context=3)
    buffer.add([entry("old 0"), entry("old 1"), entry("old 2")])
    assert buffer.trim() == 0 and texts(buffer) == []  # "old 0" went, unseen
    buffer.add([entry("hit 3")])
    assert texts(buffer) == ["old 1", "old 2", "hit 3"]  # no row for the dropped line
    assert buffer.trim() == 1 and texts(buffer) == ["old 2", "hit 3"]


def test_prepend_fills_history_up_to_twice_the_limit() -> None:
    buffer = filled(["new 0", "new 1"], max_lines=3)
    assert buffer.history_room == 4
    older = [entry(f"old {i}") for i in range(6)]
    buffer.search("old")
    assert buffer.prepend(older) == 4  # only the newest that fit
    assert [text.text for _, text in buffer.entries] == [
        "old 2",
        "old 3",
        "old 4",
        "old 5",
        "new 0",
        "new 1",
    ]
    assert buffer.offset == -4 and buffer.matches == [-4, -3, -2, -1]
    assert buffer.history_room == 0 and buffer.prepend(older) == 0
    buffer.add([entry("new 2")])
    assert buffer.trim() == 4 and len(buffer.entries) == 3


def test_clear_moves_serials_past_every_old_one() -> None:
    buffer = filled(["a", "b"])
    buffer.set_filter("a")
    buffer.search("a")
    old_rows = list(buffer.iter_rows())
    buffer.clear()
    assert (buffer.row_count, buffer.matches, buffer.dropped) == (0, [], 0)
    assert buffer.rows == []  # still filtering
    buffer.add([entry("a")])
    assert texts(buffer) == ["a"] and buffer.matches == [buffer.offset]
    assert set(buffer.iter_rows()).isdisjoint(old_rows)


# ---------------------------------------------------------------------------------------------
# Search and match navigation


def test_search_counts_shown_lines_only_and_follows_appends() -> None:
    buffer = LogBuffer()
    buffer.add([entry("nan 0"), entry("ok"), marker(), entry("NaN 3", ERROR)])
    assert buffer.search("nan") == 2 and buffer.matches == [0, 3]
    assert buffer.search("NaN") == 1  # smart case
    buffer.search("nan")
    buffer.set_min_severity(WARNING)
    assert buffer.matches == [3]  # the hidden line is not a match any more
    buffer.add([entry("nan 4", ERROR), entry("nan 5", DEBUG)])
    assert buffer.matches == [3, 4]
    assert buffer.search("(") == 0 and buffer.search_error is not None
    buffer.add([entry("f( 6", ERROR)])
    assert buffer.matches == [6]
    assert buffer.search("") == 0 and buffer.search_pattern is None and buffer.search_error is None


def test_markers_never_match() -> None:
    buffer = LogBuffer()
    buffer.add([marker()])
    assert buffer.search("──") == 0


def test_next_and_previous_match_wrap_around() -> None:
    buffer = filled([f"line {i}" + (" hit" if i in (3, 7, 9) else "") for i in range(12)])
    buffer.search("hit")
    row = lambda serial: 2 * serial + 1  # noqa: E731

    assert buffer.next_match(row(0)) == 3
    assert buffer.next_match(row(3)) == 7
    assert buffer.next_match(row(9)) == 3  # wraps to the first
    assert buffer.previous_match(row(7)) == 3
    assert buffer.previous_match(row(3)) == 9  # wraps to the last
    assert buffer.previous_match(row(5)) == 3
    assert buffer.next_match(-1) == 3  # no cursor yet
    # On a separator (before line 7) that line itself is next.
    assert buffer.next_match(2 * 7) == 7
    assert buffer.previous_match(2 * 7) == 3
    assert [buffer.match_index(row(s)) for s in (3, 7, 9, 4)] == [0, 1, 2, None]
    assert buffer.match_index(2 * 7) is None
    buffer.search("")
    assert buffer.next_match(row(0)) is None and buffer.previous_match(row(0)) is None


def test_first_matching_gives_a_display_index_and_skips_markers() -> None:
    buffer = LogBuffer()
    buffer.add([entry("ok"), marker(), entry("Traceback", ERROR), entry("later", ERROR)])
    buffer.set_filter("ok", "drop")
    assert buffer.first_matching(lambda line: line.severity >= ERROR) == 1
    assert buffer.first_matching(lambda line: "──" in line.text) is None
