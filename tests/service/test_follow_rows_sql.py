"""``entries:follow`` rows built by SQLite's JSON functions must equal the ones Python builds.

Both paths run over the same store: the SQL one where SQLite has JSON functions (as here), the
Python one where it has not. Messages carry what trainers really print: escapes, quotes,
backslashes, NUL and other control characters, line separators, non-BMP characters.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tui_app.local.logs.entries import follow_entries
from tui_app.local.store import LogStore

MESSAGES = [
    "plain",
    'quotes " and \\ backslash',
    "\x1b[31mred\x1b[0m \x07 bell \x00 nul \x7f del \t tab",
    "line\u2028sep\u2029para",
    "emoji \U0001f600 and é, 日本",
    "",
    "x" * 5000,
]


@pytest.fixture
def store(tmp_path: Path) -> LogStore:
    s = LogStore(tmp_path / "logs.sqlite")
    conn = s.writer()
    rows = []
    ts = 1_795_000_000_123_456  # 2026-11-17
    for i in range(60):
        rows.append(
            (
                "p",
                "j",
                f"worker-replica-{i % 3}",
                None if i % 2 else str(i % 4 + 1),
                "master-replica-0",
                ts + (i // 7) * 1_000_003,  # runs of equal timestamps, as a writer cycle makes
                ts,
                (0, 200, 400, 500)[i % 4],
                MESSAGES[i % len(MESSAGES)],
            )
        )
    conn.executemany(
        "INSERT INTO log_entries (project, job_id, task_name, trial_id, log_name, ts_us,"
        " receive_us, severity, message) VALUES (?,?,?,?,?,?,?,?,?)",
        rows,
    )
    conn.close()
    return s


def _pages(
    store: LogStore, order: str, size: int, fmt: str | None = None
) -> list[dict[str, object]]:
    body: dict[str, object] = {
        "resourceNames": ["projects/p"],
        "filter": 'resource.labels.job_id="j"',
        "orderBy": order,
        "pageSize": size,
    }
    if fmt is not None:
        body["rowFormat"] = fmt
    pages = []
    while True:
        data, count = follow_entries(store, body)
        page = json.loads(data)
        assert len(page["rows"]) == count
        pages.append(page)
        if "nextPageToken" not in page:
            return pages
        body["pageToken"] = page["nextPageToken"]


@pytest.mark.parametrize("order", ["timestamp asc", "timestamp desc"])
@pytest.mark.parametrize("size", [7, 6, 60, 100])  # 6 and 60: the last page is a full one
def test_sql_rows_equal_python_rows_page_for_page(store: LogStore, order: str, size: int) -> None:
    assert store.has_json_functions, "this machine's SQLite has JSON functions"
    by_sql = _pages(store, order, size)
    store.__dict__["has_json_functions"] = False  # the path for an SQLite without them
    by_python = _pages(store, order, size)
    assert by_sql == by_python
    assert len(by_sql) == -(-60 // size)  # no empty page after a full last one
    rows = [row for page in by_sql for row in page["rows"]]  # type: ignore[attr-defined]
    assert len(rows) == 60
    assert {row[5] for row in rows} == set(MESSAGES)
    assert rows[0][1].endswith("000Z") and len(rows[0][1]) == 30


@pytest.mark.parametrize("order", ["timestamp asc", "timestamp desc"])
@pytest.mark.parametrize("size", [7, 60])
def test_numeric_rows_equal_python_rows_and_the_text_ones(
    store: LogStore, order: str, size: int
) -> None:
    """``"rowFormat": "numeric"``: the row id and microseconds as numbers, the rest as text
    rows have it; the client's reading of both gives the same lines."""
    from tui_app.api.log_stream import _row_lines

    by_sql = _pages(store, order, size, "numeric")
    text = _pages(store, order, size, "text")
    store.__dict__["has_json_functions"] = False
    assert _pages(store, order, size, "numeric") == by_sql
    numeric_rows = [row for page in by_sql for row in page["rows"]]  # type: ignore[attr-defined]
    text_rows = [row for page in text for row in page["rows"]]  # type: ignore[attr-defined]
    assert all(type(r[0]) is int and type(r[1]) is int for r in numeric_rows)
    assert [r[2:] for r in numeric_rows] == [r[2:] for r in text_rows]
    assert _row_lines(numeric_rows) == _row_lines(text_rows)
    assert [p.get("nextPageToken") is None for p in by_sql] == [
        p.get("nextPageToken") is None for p in text
    ]


@pytest.mark.parametrize("fmt", ["NUMERIC", "", 1, ["numeric"]])
def test_an_unknown_row_format_is_refused_by_name(store: LogStore, fmt: object) -> None:
    from tui_app.local.errors import ApiError

    body = {"resourceNames": ["projects/p"], "filter": "", "rowFormat": fmt}
    with pytest.raises(ApiError, match="rowFormat"):
        follow_entries(store, body)
