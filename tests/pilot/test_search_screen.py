"""The search over every job's logs (``s``, ``:grep``) against a real service and real replicas.

Two jobs print chosen lines: one a CUDA out-of-memory error in the middle of its log, the other
lines that only look alike. Typing finds the one job's line under that job's header with the
match highlighted; ``enter`` opens that job's logs on the very line; a query the service cannot
read says the service's words under the box and keeps the results on screen.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.text import Text
from textual.pilot import Pilot
from textual.widgets import Input, Static

from tests.pilot.conftest import QUIET_REFRESH_SECONDS, live_app, search_for, wait_for
from tests.support.live_service import LiveService
from tests.support.task_packages import serve_ended_jobs
from tui_app.model.logs.log_line import LogLine
from tui_app.model.logs.log_search import SearchHit
from tui_app.shell.app import JobsApp
from tui_app.shell.screens.jobs_screen import JobsScreen
from tui_app.shell.screens.logs_screen import ALL, LogsScreen
from tui_app.shell.screens.search_screen import SearchScreen

PROJECT = "grep-tui-project"
"""The module's own project: a search reads every job of it."""
OOM = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"
LINES = {
    "oom": [*(f"step {i} loss=0.{i:03d}" for i in range(300)), OOM]
    + [f"after the error {i}" for i in range(300)],
    "ok": ["step 0 loss=0.500", "memory is fine here", "done"],
}
TASK = (
    f"import sys\nLINES = {LINES!r}\nfor line in LINES[sys.argv[1]]:\n    print(line, flush=True)\n"
)


@pytest.fixture(scope="module")
def two_jobs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveService, str, str]]:
    """A service of the module's own with both jobs ended: (service, the OOM job, the other)."""
    jobs = {"oom": "oom", "ok": "ok"}
    for svc, ids in serve_ended_jobs(tmp_path_factory, "grep_tui", PROJECT, TASK, jobs):
        yield svc, ids["oom"], ids["ok"]


def search_app(service: LiveService, tmp_path: Path) -> JobsApp:
    """The real app on the module's project; nothing here watches the list change."""
    return live_app(service, tmp_path, PROJECT, refresh_seconds=QUIET_REFRESH_SECONDS)


def prompts(screen: SearchScreen) -> list[tuple[bool, Text]]:
    """The list's options: (a job's header?, its text)."""
    listing = screen.hit_list
    out = []
    for i in range(listing.option_count):
        option = listing.get_option_at_index(i)
        assert isinstance(option.prompt, Text)
        out.append((option.disabled, option.prompt))
    return out


def shown(screen: SearchScreen, selector: str) -> str:
    """What a line of the screen says (the screen gives its Statics Rich texts)."""
    content = screen.query_one(selector, Static).content
    return content.plain if isinstance(content, Text) else str(content)


def highlighted(text: Text) -> list[str]:
    """The parts of a row drawn as matches."""
    return [text.plain[s.start : s.end] for s in text.spans if "reverse" in str(s.style)]


async def open_search(pilot: Pilot[None], app: JobsApp) -> SearchScreen:
    """``s`` on the job list, once the list has both jobs (their headers' states)."""
    await wait_for(pilot, lambda: len(app.last_rows) >= 2, describe=lambda: str(app.last_rows))
    await pilot.press("s")
    await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen))
    screen = app.screen
    assert isinstance(screen, SearchScreen)
    return screen


async def test_typing_finds_the_job_and_enter_opens_its_logs_on_the_line(
    two_jobs: tuple[LiveService, str, str], tmp_path: Path
) -> None:
    svc, oom, ok = two_jobs
    app = search_app(svc, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        search = await open_search(pilot, app)
        await search_for(
            pilot,
            search,
            "out of memory",
            describe=lambda: f"{search.answers} answers, error {search.error!r}",
        )
        # The OOM job's header (its state as the list has it), then its one hit.
        rows = prompts(search)
        assert [disabled for disabled, _ in rows] == [True, False]
        header, hit = rows[0][1].plain, rows[1][1].plain
        assert header.startswith(oom) and "SUCCEEDED" in header and "1 hit" in header
        assert hit.lstrip().startswith("M0") and hit.endswith(OOM)
        assert highlighted(rows[1][1]) == ["out of memory"]
        assert all(ok not in text.plain for _, text in rows)
        assert "1 hit in 1 job" in shown(search, "#search-title")
        # enter in the box goes to the hits; enter on a hit opens its job's logs on that line.
        await pilot.press("enter")
        await wait_for(pilot, lambda: search.hit_list.has_focus)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, LogsScreen))
        logs = app.screen
        assert isinstance(logs, LogsScreen) and logs.job_id == oom
        await wait_for(pilot, lambda: logs.goto is None, timeout=30, describe=lambda: logs.status)
        merged = logs.view(ALL)
        entry = merged.lines[merged.cursor_index][0]
        assert isinstance(entry, LogLine) and entry.text == OOM
        assert not merged.follow  # it stays on the line rather than following to the end
        assert merged.cursor_index < merged.row_count - 100
        assert merged.match_count == 1  # the search is set: n/N go from match to match
        # esc: the search is cleared first (as after /), then back to the results.
        await pilot.press("escape", "escape")
        await wait_for(pilot, lambda: app.screen is search)
        assert prompts(search)[1][1].plain.endswith(OOM)


async def test_hits_are_grouped_by_job_and_n_moves_between_them(
    two_jobs: tuple[LiveService, str, str], tmp_path: Path
) -> None:
    svc, oom, ok = two_jobs
    app = search_app(svc, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: len(app.last_rows) >= 2)
        # :grep TEXT opens the view searching at once.
        await pilot.press("colon", *"grep step 0 loss", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen))
        search = app.screen
        assert isinstance(search, SearchScreen)
        assert search.query_one(Input).value == "step 0 loss"
        await wait_for(pilot, lambda: len({h.job_id for h in search.hits}) == 2)
        rows = prompts(search)
        assert [disabled for disabled, _ in rows] == [True, False, True, False]
        headers = [text.plain.split()[0] for disabled, text in rows if disabled]
        assert sorted(headers) == sorted([ok, oom])
        assert headers[0] == search.hits[0].job_id  # the job with the newest hit first
        await pilot.press("enter")  # to the hits, on the first
        await wait_for(pilot, lambda: search.hit_list.has_focus)
        assert search.hit_list.highlighted == 1
        await pilot.press("n")
        assert search.hit_list.highlighted == 3  # the header between is stepped over
        await pilot.press("N")
        assert search.hit_list.highlighted == 1
        # t: the time window, sent as timestamp>=; the jobs ran a moment ago.
        await pilot.press("t")
        await wait_for(pilot, lambda: "timestamp>=" in search.shown_filter and not search.searching)
        assert "window: 1h" in shown(search, "#search-title")
        assert len({h.job_id for h in search.hits}) == 2
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen))


async def test_a_query_the_service_refuses_keeps_the_results(
    two_jobs: tuple[LiveService, str, str], tmp_path: Path
) -> None:
    svc, oom, _ = two_jobs
    app = search_app(svc, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        search = await open_search(pilot, app)
        box = search.query_one(Input)
        box.value = 'SEARCH("`out of memory`")'
        await wait_for(pilot, lambda: bool(search.hits) and not search.searching)
        before = list(search.hits)
        assert [h.job_id for h in before] == [oom]
        error_line = search.query_one("#search-error", Static)

        def error_shown() -> bool:
            return bool(error_line.display)

        assert not error_shown()
        for bad, words in (
            ('SEARCH("out of memory"', "Missing ')'"),
            ('severity>=BOGUS AND "memory"', "BOGUS"),
        ):
            box.value = bad
            await wait_for(
                pilot,
                lambda: search.error is not None and not search.searching,
                describe=lambda: f"{search.answers} answers",
            )
            assert search.error is not None
            assert search.error.startswith("Invalid filter: ") and words in search.error
            assert error_shown() and shown(search, "#search-error") == search.error
            assert search.hits == before and prompts(search)[1][1].plain.endswith(OOM)
            box.value = 'SEARCH("`out of memory`")'
            await wait_for(pilot, lambda: search.error is None and not search.searching)
            assert not error_shown()


def shows(rows: list[str], hits: list[SearchHit]) -> bool:
    """Whether each row is its hit's line, in order."""
    return len(rows) == len(hits) and all(
        r.endswith(h.line.text) for r, h in zip(rows, hits, strict=True)
    )


async def test_a_job_with_many_hits_shows_three_and_enter_shows_the_rest(
    two_jobs: tuple[LiveService, str, str], tmp_path: Path
) -> None:
    """The OOM job prints 300 step lines: three stand under its header, then ``… N more in
    this job``; enter there shows the rest, the cursor on the first of them."""
    svc, oom, _ = two_jobs
    app = search_app(svc, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        search = await open_search(pilot, app)
        await search_for(
            pilot,
            search,
            "loss=0.",
            describe=lambda: f"{search.answers} answers, {len(search.hits)} hits",
        )
        oom_hits = [h for h in search.hits if h.job_id == oom]
        # Which job ran last decides whether the other's one line is on this page: not asked.
        assert len(oom_hits) > 3
        rows = [text.plain for _, text in prompts(search)]
        at = next(i for i, row in enumerate(rows) if row.startswith(oom))
        assert shows(rows[at + 1 : at + 4], oom_hits[:3])
        folded = rows[at + 4]
        assert folded.strip() == f"… {len(oom_hits) - 3} more in this job: enter"
        await pilot.press("enter")  # to the hits
        await wait_for(pilot, lambda: search.hit_list.has_focus)
        search.hit_list.highlighted = at + 4
        await pilot.press("enter")
        await wait_for(pilot, lambda: oom in search.expanded)
        rows = [text.plain for _, text in prompts(search)]
        shown = rows[at + 1 : at + 1 + len(oom_hits)]
        assert shows(shown, oom_hits)
        assert search.hit_list.highlighted == at + 4  # the fourth hit, where the fold was
        assert not any("more in this job" in r for r in rows[at : at + 1 + len(oom_hits)])
