"""The log search keeps the job list's narrowing, and reads on through a bounded scan's pages.

The service answers a search its index cannot drive (one word as a substring, ``NaN``) after a
1 ms scan, a few thousand lines a page, so the view gets several pages, most of them empty.
It shows every hit all the same. Opened from a filtered list, it searches the jobs the list
shows, says so in its title, and ``f`` widens it to every job.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.text import Text
from textual.widgets import Static

from tests.pilot.conftest import QUIET_REFRESH_SECONDS, live_app, search_for, wait_for
from tests.support.live_service import LiveService
from tests.support.task_packages import serve_ended_jobs
from tui_app.shell.screens.search_screen import SearchScreen

PROJECT = "grep-scope-project"
FILLER = 6_000
"""Lines of the long job: past the scan's first range, so its hits come pages apart."""
TASK = (
    "import sys\n"
    "if sys.argv[1] == 'long':\n"
    f"    for i in range({FILLER}):\n"
    "        print(f'step {i} loss NaN' if i in (10, 5000) else f'step {i} loss 0.5')\n"
    "else:\n"
    "    print('short job: loss NaN at the start')\n"
)


@pytest.fixture(scope="module")
def jobs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveService, str, str]]:
    """(service, the long job, the short one), both ended; the service scans 1 ms a page."""
    wanted = {"long": "long", "short": "short"}
    flags = ("--log-scan-seconds", "0.001")
    for svc, ids in serve_ended_jobs(tmp_path_factory, "grep_scope", PROJECT, TASK, wanted, *flags):
        yield svc, ids["long"], ids["short"]


def title(screen: SearchScreen) -> str:
    content = screen.query_one("#search-title", Static).content
    return content.plain if isinstance(content, Text) else str(content)


def hit_jobs(screen: SearchScreen) -> list[str]:
    return [hit.job_id for hit in screen.hits]


async def test_a_filtered_list_narrows_the_search_and_f_widens_it(
    jobs: tuple[LiveService, str, str], tmp_path: Path
) -> None:
    svc, long_job, short_job = jobs
    app = live_app(svc, tmp_path, PROJECT, refresh_seconds=QUIET_REFRESH_SECONDS)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: len(app.last_rows) >= 2, describe=lambda: str(app.last_rows))
        # The list narrowed to the short job, then the search.
        await pilot.press("slash", *short_job, "enter", "s")
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen))
        search = app.screen
        assert isinstance(search, SearchScreen)
        await search_for(
            pilot, search, "NaN", describe=lambda: f"{search.answers} answers, {hit_jobs(search)}"
        )
        assert hit_jobs(search) == [short_job]
        assert f"jobs: {short_job}" in title(search)
        # f: every job. The long job's two hits came pages apart (the bounded scan), all shown.
        await pilot.press("down", "f")
        await wait_for(
            pilot,
            lambda: not search.searching and len(search.hits) == 3,
            describe=lambda: f"{search.answers} answers, {hit_jobs(search)}",
        )
        assert sorted(hit_jobs(search)) == sorted([long_job, long_job, short_job])
        long_lines = [h.line.text for h in search.hits if h.job_id == long_job]
        assert long_lines == ["step 5000 loss NaN", "step 10 loss NaN"]  # newest first
        assert "jobs: all (f)" in title(search) and "more: m" not in title(search)
