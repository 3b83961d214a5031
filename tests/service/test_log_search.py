"""Text searches in ``entries:list`` served from the full-text index give a scan's answer.

A replica prints lines chosen to trip a word index (words inside longer words, unicode,
punctuation, tracebacks, a very long line) and a service indexes them. Each search is then
asked of the service and compared with a scan of the replica's own output: the lines holding
the text (case-insensitively for ASCII), every one, nothing else. ``SEARCH("...")`` matches
whole words. A line written a moment ago is found before the index reaches it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.conftest import serve, unique_id
from tests.support.live_service import PROJECT, LiveService, basic_job
from tests.support.task_packages import task_package

LINES = [
    "CUDA out of memory. Tried to allocate 2.00 GiB",
    "RuntimeError: CUDA out of memory (timeout of memory pool)",
    "timeout of memoryless worker",
    "out of memory",
    "NaN loss at step 12",
    "nan loss? no: banana loss",
    "Ünïcode wörds: größe 12 µs, 東京 学習 loss",
    "tab\tseparated\tloss",
    "Traceback (most recent call last):",
    '  File "/app/trainer/task.py", line 12, in <module>',
    "ValueError: learning rate must be positive",
    "x" * 5000 + " long line tail out of memory " + "y" * 5000,
    "OutOfMemory in one word",
]

TASK = (
    "import sys, time\n"
    f"LINES = {LINES!r}\n"
    "for line in LINES:\n"
    "    print(line, flush=True)\n"
    "print('written', flush=True)\n"
    "time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 0)\n"
)

SEARCHES = [
    '"out of memory"',
    '"of memory"',
    '"memory"',
    'textPayload:"NaN loss"',
    'jsonPayload.message:"loss"',
    '"größe 12"',
    '"東京"',
    '"separated\tloss"',
    '"line 12, in"',
    '"tail out of mem"',
    '"Traceback (most"',
    '"learning rate must"',
    '"OutOfMemory"',
    '"no such text anywhere at all"',
]


@pytest.fixture(scope="module")
def search_service(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[LiveService, str]]:
    for svc in serve(tmp_path_factory, "svc-search"):  # one service, stopped after the module
        uri = svc.stage(task_package(tmp_path_factory.mktemp("lines"), "lines", TASK))
        yield svc, uri


def _messages(svc: LiveService, flt: str) -> list[str]:
    return [str(e["jsonPayload"]["message"]) for e in svc.entries(flt)]


def _scan(text: str) -> list[str]:
    """What a scan finds: the lines holding ``text``, ASCII case folded on both sides."""
    needle = text.translate(_ASCII_LOWER)
    return [ln for ln in LINES if needle in ln.translate(_ASCII_LOWER)]


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _indexed(svc: LiveService) -> bool:
    import sqlite3

    conn = sqlite3.connect(f"file:{svc.state_dir / 'logs.sqlite'}?mode=ro", uri=True)
    try:
        upto = conn.execute("SELECT indexed_upto FROM log_index_state").fetchone()[0]
        newest = conn.execute("SELECT max(id) FROM log_entries").fetchone()[0]
    finally:
        conn.close()
    return bool(newest) and upto >= newest


def test_indexed_searches_find_what_a_scan_finds(search_service: tuple[LiveService, str]) -> None:
    svc, uri = search_service
    job_id = unique_id("search")
    svc.client().create(basic_job(job_id, uri, pythonModule="lines.task"))
    assert svc.wait_state(job_id, timeout=60)["state"] == "SUCCEEDED"
    deadline = time.monotonic() + 30
    while not _indexed(svc):
        assert time.monotonic() < deadline, "the index did not catch up"
        time.sleep(0.1)
    scope = f'resource.labels.job_id="{job_id}" AND resource.labels.task_name="master-replica-0"'
    for search in SEARCHES:
        got = _messages(svc, f"{scope} AND {search}")
        value = (
            search.split(":", 1)[1] if search.startswith(("textPayload", "jsonPayload")) else search
        )
        expected = _scan(value.strip('"'))
        assert got == expected, search
    # NOT of a text term is the exact complement.
    everything = _messages(svc, scope)
    assert _messages(svc, f'{scope} AND NOT "out of memory"') == [
        ln for ln in everything if ln not in _scan("out of memory")
    ]


def test_search_matches_whole_words(search_service: tuple[LiveService, str]) -> None:
    svc, uri = search_service
    job_id = unique_id("search_words")
    svc.client().create(basic_job(job_id, uri, pythonModule="lines.task"))
    assert svc.wait_state(job_id, timeout=60)["state"] == "SUCCEEDED"
    scope = f'resource.labels.job_id="{job_id}" AND resource.labels.task_name="master-replica-0"'
    # Whole words, any order, case folded: "memory" the word, not "memoryless" or "OutOfMemory".
    assert _messages(svc, f'{scope} AND SEARCH("MEMORY out")') == [
        LINES[0],
        LINES[1],
        LINES[3],
        LINES[11],
    ]
    # A phrase in backticks: adjacent, in order.
    assert _messages(svc, f'{scope} AND SEARCH("`of memory`")') == [
        LINES[0],
        LINES[1],
        LINES[3],
        LINES[11],
    ]
    assert _messages(svc, f'{scope} AND SEARCH(textPayload, "banana")') == [LINES[5]]
    status, body = svc.post(
        "/v2/entries:list",
        {"resourceNames": [f"projects/{PROJECT}"], "filter": 'SEARCH(severity, "x")'},
    )
    assert status == 400 and "SEARCH applies to the message only" in str(body), body


def test_a_line_written_a_moment_ago_is_found_before_it_is_indexed(
    search_service: tuple[LiveService, str],
) -> None:
    """Searches read the rows above the index's watermark by scan: nothing is missed while
    the index is a batch behind."""
    svc, uri = search_service
    job_id = unique_id("search_fresh")
    svc.client().create(basic_job(job_id, uri, "30", pythonModule="lines.task"))
    scope = f'resource.labels.job_id="{job_id}"'
    deadline = time.monotonic() + 60
    while "written" not in _messages(svc, f'{scope} AND "written"'):
        assert time.monotonic() < deadline, "the line never came"
        time.sleep(0.05)
    assert _messages(svc, f'{scope} AND "out of memory"') == _scan("out of memory")
    assert _messages(svc, f'{scope} AND SEARCH("banana")') == [LINES[5]]
    svc.client().cancel(job_id)
    svc.wait_state(job_id, timeout=60)


@pytest.mark.parametrize("order", ["timestamp asc", "timestamp desc"])
@pytest.mark.parametrize(
    "text", ['"out of memory"', 'SEARCH("loss")', 'textPayload:"NaN loss" severity>=DEFAULT']
)
def test_a_search_over_every_job_pages_as_the_scan_does(
    search_service: tuple[LiveService, str], order: str, text: str
) -> None:
    """Over every job the index hands out the rows (in id order, a page at a time); the same
    filter narrowed to the module's jobs by a substring of their ids takes the scan's way. Both
    give the same entries, page after page, either way round."""
    svc, uri = search_service
    job_id = unique_id("search_pages")
    svc.client().create(basic_job(job_id, uri, pythonModule="lines.task"))
    assert svc.wait_state(job_id, timeout=60)["state"] == "SUCCEEDED"

    def ids(flt: str) -> list[str]:
        return [e["insertId"] for e in svc.entries(flt, order=order, page_size=3)]

    indexed = ids(text)
    scanned = ids(f'{text} AND resource.labels.job_id:"search"')
    assert indexed == scanned and indexed, text
