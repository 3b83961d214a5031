"""The log pane against a real service and real replicas (issue 4, done-when 1).

Replicas print known sequences; the test reads what the views hold and what the screen shows.
"""

from __future__ import annotations

import asyncio
import re
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.widgets import Input

from tests.conftest import serve, unique_id
from tests.pilot.conftest import QUIET_REFRESH_SECONDS, live_app, raised_toasts, wait_for
from tests.support.live_service import CLUSTER, LiveService, basic_job, grid_search
from tests.support.task_packages import task_package
from tui_app.api.log_stream import FAST_PAGE_SIZE
from tui_app.model.logs.log_line import LogLine
from tui_app.shell.app import JobsApp
from tui_app.shell.screens.logs_screen import (
    ALL,
    SCREEN_BATCH,
    LinesArrived,
    LinesSkipped,
    LogsScreen,
)
from tui_app.shell.screens.picker_screen import PickerScreen
from tui_app.shell.screens.prompt_screen import PromptScreen
from tui_app.widgets.log_view import LogView

STEP = re.compile(r"step (\d+) loss=")


def pane_app(service: LiveService, tmp_path: Path, project: str) -> JobsApp:
    """The real app on the service; the log pane follows its job itself, so the job list
    under it polls at the product's pace."""
    return live_app(service, tmp_path, project, refresh_seconds=QUIET_REFRESH_SECONDS)


def log_lines(view: LogView) -> list[LogLine]:
    """The service's lines a view holds (markers left out)."""
    return [entry for entry, _ in view.lines if isinstance(entry, LogLine)]


def stream_state(logs: LogsScreen) -> str:
    """For a failed wait: what the pane says about its stream."""
    views = {t: logs.view(t).line_count for t in [ALL, *logs.tasks]}
    state = logs.job and logs.job.get("state")
    return f"(status {logs.status!r}, error {logs.error!r}, job {state}, {views})"


def screen(app: object) -> LogsScreen:
    s = app.screen  # type: ignore[attr-defined]
    assert isinstance(s, LogsScreen)
    return s


async def test_replica_views_every_line_once_in_order(
    service: LiveService, package_uri: str, tmp_path: Path
) -> None:
    project = "logs-project"
    job_id = unique_id("logs")
    service.client(project).create(
        basic_job(
            job_id, package_uri, "--steps", "40", "--log-every", "1", "--sleep", "0.02", **CLUSTER
        )
    )
    app = pane_app(service, tmp_path, project)
    async with app.run_test(size=(100, 30)) as pilot:
        app.push_screen(LogsScreen(job_id))
        logs = screen(app)
        await wait_for(
            pilot,
            lambda: "stream ended" in logs.status,
            timeout=60,
            describe=lambda: stream_state(logs),
        )
        assert logs.tasks[:4] == [
            "master-replica-0",
            "worker-replica-0",
            "worker-replica-1",
            "ps-replica-0",
        ]
        merged = log_lines(logs.view(ALL))
        keys = [line.key for line in merged]
        assert keys == sorted(keys) and len(set(keys)) == len(keys)
        total = 0
        for task in ("master-replica-0", "worker-replica-0", "worker-replica-1"):
            lines = log_lines(logs.view(task))
            assert {line.task_name for line in lines} == {task}
            steps = [int(m.group(1)) for line in lines if (m := STEP.match(line.text))]
            assert steps and steps == sorted(steps) and len(set(steps)) == len(steps)
            total += len(lines)
        assert total + len(logs.view("ps-replica-0").lines) + len(
            logs.view("service").lines
        ) == len(merged)
        # Switching views with the keys.
        assert logs.current == ALL
        # Replicas on the service's own machine: the picker lists their names alone.
        await wait_for(
            pilot,
            lambda: set(logs.tasks[:4]) <= (logs.listed_tasks or set()),
            describe=lambda: f"{logs.listed_tasks} {logs.tasks}",
        )
        assert logs.nodes == {}
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, PickerScreen))
        assert isinstance(app.screen, PickerScreen) and app.screen.labels is None
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is logs)
        await pilot.press("right_square_bracket")
        assert logs.current == "master-replica-0"
        await pilot.press("left_square_bracket", "left_square_bracket")
        assert logs.current == "service"
        await pilot.press("a")
        assert logs.current == ALL
        # ctrl+s writes what the view shows as a text file: every line ended, the last too.
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen))
        saved = tmp_path / "all.log"
        app.screen.query_one(Input).value = str(saved)
        await pilot.press("enter")
        await wait_for(pilot, saved.exists)
        text = saved.read_text()
        assert text.endswith("\n") and text.count("\n") == len(merged)


NOISY = textwrap.dedent(
    r"""
    import sys, time
    out = sys.stdout
    out.write("\x1b[31mred words\x1b[0m and \x1b[2J\x1b[H\x1b]0;evil title\x07 plain\n")
    out.write("  5%|#    | 1/20\r 50%|#####| 10/20\r100%|##########| 20/20\n")
    out.write("bell\x07 and nul\x00 and del\x7f\n")
    out.write("x" * (1024 * 1024) + "\n")
    out.flush()
    err = sys.stderr
    err.write("Traceback (most recent call last):\n  File \"t.py\", line 1\nValueError: boom\n")
    err.flush()
    time.sleep(0.2)
    sys.exit(3)
    """
)


@pytest.fixture(scope="module")
def noisy_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return task_package(tmp_path_factory.mktemp("noisy_logs"), "noisy2", NOISY)


async def test_hostile_text_is_neutralised_on_screen(
    service: LiveService, noisy_package: Path, tmp_path: Path
) -> None:
    project = "noisy-logs"
    job_id = unique_id("noisy")
    service.client(project).create(
        basic_job(job_id, service.stage(noisy_package), pythonModule="noisy2.task")
    )
    service.wait_state(job_id, project=project)
    app = pane_app(service, tmp_path, project)
    async with app.run_test(size=(100, 30)) as pilot:
        app.push_screen(LogsScreen(job_id, task="master-replica-0"))
        logs = screen(app)
        await wait_for(
            pilot,
            lambda: "stream ended" in logs.status,
            timeout=60,
            describe=lambda: stream_state(logs),
        )
        view = logs.view("master-replica-0")

        def shown_text() -> str:
            return "\n".join(
                view.render_line(y).text for y in range(view.scrollable_content_region.height)
            )

        await wait_for(pilot, lambda: "red words" in shown_text(), describe=shown_text)
        shown = shown_text()
        assert "\x1b" not in shown and "\x07" not in shown and "\x00" not in shown
        assert "evil title" not in shown
        assert "red words" in shown and "plain" in shown
        assert "100%|##########| 20/20" in shown and "50%|#####|" not in shown
        assert "^G" in shown  # BEL shown escaped, not rung
        assert any(len(line.text) == 1024 * 1024 for line in log_lines(view))  # stored whole
        # The 1 MiB line renders (cut for display), with wrap on too.
        await pilot.press("w")
        await wait_for(pilot, lambda: view.wrap)
        # e jumps to the first error across replicas: the traceback on stderr.
        await pilot.press("e")
        assert logs.current == ALL
        assert "Traceback" in logs.view(ALL).current_line_text()


async def test_search_and_filters_from_the_prompt(
    service: LiveService, package_uri: str, tmp_path: Path
) -> None:
    project = "search-logs"
    job_id = unique_id("search")
    service.client(project).create(
        basic_job(job_id, package_uri, "--steps", "30", "--log-every", "1")
    )
    service.wait_state(job_id, project=project)
    app = pane_app(service, tmp_path, project)
    async with app.run_test(size=(100, 30)) as pilot:
        app.push_screen(LogsScreen(job_id, task="master-replica-0"))
        logs = screen(app)
        await wait_for(
            pilot,
            lambda: "stream ended" in logs.status,
            timeout=60,
            describe=lambda: stream_state(logs),
        )
        view = logs.view("master-replica-0")
        await pilot.press("slash", *r"step \d+ ", "enter")
        assert view.match_count == 30
        await pilot.press("ampersand", *"step 1[0-9] ", "enter")
        kept = [ln for ln in view.visible_text().splitlines() if ln.startswith("step")]
        assert [int(m.group(1)) for ln in kept if (m := STEP.match(ln))] == list(range(10, 20))
        assert len(kept) == 10
        await pilot.press("C")  # two lines of context around each kept line
        with_context = view.visible_text().splitlines()
        assert "step 8 " in "\n".join(with_context) and "step 21 " in "\n".join(with_context)
        await pilot.press("escape")  # clears search and filter
        assert view.match_count == 0
        assert len(view.visible_text().splitlines()) == view.line_count
        await pilot.press("L", "L", "L")  # floor: ERROR; the trainer logged none
        assert view.visible_text() == ""


FLOOD = re.compile(r"flood (\d+) ")


def flood_numbers(view: LogView) -> list[int]:
    return [int(m.group(1)) for ln in log_lines(view) if (m := FLOOD.match(ln.text))]


async def test_bounded_views_fetch_older_lines_at_the_top(
    service: LiveService, package_uri: str, tmp_path: Path
) -> None:
    """Each view keeps max_lines; scrolling to the top fetches the lines before the first."""
    project = "history-logs"
    job_id = unique_id("history")
    service.client(project).create(
        basic_job(job_id, package_uri, "--flood", "3000", "--steps", "1")
    )
    service.wait_state(job_id, project=project)
    app = pane_app(service, tmp_path, project)
    async with app.run_test(size=(100, 30)) as pilot:
        app.push_screen(LogsScreen(job_id, task="master-replica-0", max_lines=1000))
        logs = screen(app)
        await wait_for(
            pilot,
            lambda: "stream ended" in logs.status,
            timeout=60,
            describe=lambda: stream_state(logs),
        )
        view = logs.view("master-replica-0")
        # Only the job's last 1000 lines were loaded (a few of them are the service's).
        assert 900 < view.line_count <= 1000
        flood = flood_numbers(view)
        first_before = flood[0]
        assert flood == list(range(first_before, first_before + len(flood)))
        before = view.line_count
        await pilot.press("home")  # to the top: the view asks for older lines
        await wait_for(pilot, lambda: view.line_count > before, timeout=20)
        flood = flood_numbers(view)
        assert flood[0] < first_before
        assert flood == list(range(flood[0], flood[0] + len(flood)))  # contiguous: none lost
        assert view.line_count <= 2 * 1000  # still bounded
        await pilot.pause()
        info = str(logs.query_one("#logs-info").render())
        assert f"{view.line_count:,} lines" in info, info  # the count says so too


async def test_a_long_tail_paints_its_newest_batch_then_fills_in_history(
    service: LiveService, package_uri: str, tmp_path: Path
) -> None:
    """Over SCREEN_BATCH lines: the newest batch first, the rest prepended, none lost or twice."""
    project = "tail-logs"
    job_id = unique_id("longtail")
    service.client(project).create(
        basic_job(job_id, package_uri, "--flood", "12000", "--steps", "1")
    )
    service.wait_state(job_id, project=project)
    entries = service.entries(f'resource.labels.job_id="{job_id}"', project=project)
    truth = [e["insertId"] for e in entries]
    assert len(truth) > 2 * SCREEN_BATCH
    app = pane_app(service, tmp_path, project)
    async with app.run_test(size=(100, 30)) as pilot:
        app.push_screen(LogsScreen(job_id))
        logs = screen(app)
        await pilot.pause()
        merged = logs.view(ALL)
        await wait_for(
            pilot,
            lambda: merged.line_count >= len(truth),
            timeout=60,
            describe=lambda: stream_state(logs),
        )
        assert [line.insert_id for line in log_lines(merged)] == truth
        master = flood_numbers(logs.view("master-replica-0"))
        assert master == list(range(12000))
        assert merged.follow  # history arrived above: the view still shows the newest line
        assert merged.cursor_index == merged.row_count - 1
        info = str(logs.query_one("#logs-info").render())
        assert f"{merged.line_count:,} lines" in info, info


async def test_a_job_that_does_not_exist_stops_the_stream_and_says_so(
    service: LiveService, tmp_path: Path
) -> None:
    """NOT_FOUND is final: the title must not promise a reconnect that never comes."""
    app = pane_app(service, tmp_path, "logs-project")
    async with app.run_test(size=(100, 30)) as pilot:
        app.push_screen(LogsScreen("no_such_job_20261125_000000"))
        logs = screen(app)
        await wait_for(pilot, lambda: logs.stopped, timeout=30, describe=lambda: stream_state(logs))
        await pilot.pause()
        title = str(logs.query_one("#logs-title").render())
        assert "stopped:" in title and "reconnecting" not in title, title
        assert logs.error and "no_such_job" in logs.error


async def test_g_after_a_backlog_lands_on_the_newest_line(
    service: LiveService, package_uri: str, tmp_path: Path
) -> None:
    """The pane follows a flood from the job's start; G, pressed while lines pour in, must end
    on the job's last line, in order, with the view still following (issue 15, item 1)."""
    project = "backlog-logs"
    job_id = unique_id("backlog")
    service.client(project).create(
        basic_job(job_id, package_uri, "--flood", "40000", "--steps", "1")
    )
    app = pane_app(service, tmp_path, project)
    async with app.run_test(size=(100, 30)) as pilot:
        app.push_screen(LogsScreen(job_id))
        logs = screen(app)
        await pilot.pause()
        merged = logs.view(ALL)
        await wait_for(pilot, lambda: merged.line_count > 0, timeout=60)
        await pilot.press("G")
        await wait_for(
            pilot,
            lambda: "stream ended" in logs.status,
            timeout=120,
            describe=lambda: stream_state(logs),
        )
        last = service.entries(
            f'resource.labels.job_id="{job_id}"', order="timestamp desc", project=project
        )[0]
        await wait_for(
            pilot, lambda: log_lines(merged)[-1].insert_id == last["insertId"], timeout=10
        )
        keys = [line.key for line in log_lines(merged)]
        assert keys == sorted(set(keys))  # history filled in behind: in order, none twice
        assert merged.follow
        assert merged.cursor_index == merged.row_count - 1
        # When the pane skipped lines it does not hold, the title says so and where they are.
        every = service.entries(f'resource.labels.job_id="{job_id}"', project=project)
        title = str(logs.query_one("#logs-title").render())
        if len(log_lines(merged)) < len(every):
            assert "skipped ahead: older lines load at the top" in title, title


async def test_a_large_batch_lets_the_event_loop_run_between_chunks(
    service: LiveService, tmp_path: Path
) -> None:
    """A stream batch (10,000 lines) is appended a chunk at a time: keys and frames are not held up
    behind it (issue 15, event-loop lag under a flood). A task running beside the handler
    must see the merged view part-filled, in order."""
    app = pane_app(service, tmp_path, "chunk-logs")
    async with app.run_test(size=(100, 30)) as pilot:
        app.push_screen(LogsScreen("no_such_job_20261127_000000"))
        logs = screen(app)
        await wait_for(pilot, lambda: logs.stopped, timeout=30, describe=lambda: stream_state(logs))
        merged = logs.view(ALL)
        before = merged.line_count
        batch = [
            LogLine(
                f"2026-11-27T01:00:00.{i:06d}000Z", f"{i:018d}", "master-replica-0", 200, f"n {i}"
            )
            for i in range(FAST_PAGE_SIZE)
        ]
        seen: list[int] = []

        async def watch() -> None:
            while merged.line_count < before + FAST_PAGE_SIZE:
                seen.append(merged.line_count - before)
                await asyncio.sleep(0)

        watcher = asyncio.ensure_future(watch())
        logs.post_message(LinesArrived(batch))
        await asyncio.wait_for(watcher, 30)
        partial = [n for n in seen if 0 < n < FAST_PAGE_SIZE]
        assert partial, seen
        assert partial == sorted(partial)
        assert [line.text for line in log_lines(merged)[before:]] == [ln.text for ln in batch]


@pytest.fixture(scope="module")
def one_slot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveService]:
    """A service with one CPU slot: a second job waits QUEUED behind the first."""
    yield from serve(tmp_path_factory, "one-slot", "--slots", "1")


async def test_the_title_follows_the_job_from_queued_to_running(
    one_slot: LiveService, trainer_sdist: Path, tmp_path: Path
) -> None:
    """Opened on a QUEUED job, the pane must say RUNNING once it runs, while its lines stream
    (it said QUEUED until the job ended)."""
    project = "title-logs"
    uri = one_slot.stage(trainer_sdist)
    client = one_slot.client(project)
    blocker = unique_id("blocker")
    client.create(basic_job(blocker, uri, "--steps", "100000", "--sleep", "0.05"))
    one_slot.wait_state(blocker, ("RUNNING",), project=project)
    job_id = unique_id("queued")
    client.create(basic_job(job_id, uri, "--steps", "400", "--log-every", "1", "--sleep", "0.05"))
    app = pane_app(one_slot, tmp_path, project)
    async with app.run_test(size=(100, 30)) as pilot:
        app.push_screen(LogsScreen(job_id))
        logs = screen(app)
        await pilot.pause()

        def title() -> str:
            return str(logs.query_one("#logs-title").render())

        await wait_for(pilot, lambda: "QUEUED" in title(), timeout=30, describe=title)
        client.cancel(blocker)
        await wait_for(pilot, lambda: logs.view(ALL).line_count > 20, timeout=60)
        await wait_for(pilot, lambda: "RUNNING" in title(), timeout=10, describe=title)
        assert one_slot.client(project).get(job_id)["state"] == "RUNNING"
        client.cancel(job_id)


async def test_a_skip_ahead_replaces_the_backlog_and_the_title_says_so(
    service: LiveService, tmp_path: Path
) -> None:
    """The stream jumped over lines the views will not hold: they show the tail alone, and the
    title says the older lines load at the top (the views no longer hold every line)."""
    app = pane_app(service, tmp_path, "skip-logs")
    async with app.run_test(size=(120, 35)) as pilot:
        app.push_screen(LogsScreen("no_such_job_20261127_000001"))
        logs = screen(app)
        await wait_for(pilot, lambda: logs.stopped, timeout=30, describe=lambda: stream_state(logs))

        def batch(start: int, n: int) -> list[LogLine]:
            ts = "2026-11-27T02:00:00.{:06d}000Z"
            return [
                LogLine(ts.format(i), f"{i:018d}", "worker-replica-0", 200, f"n {i}")
                for i in range(start, start + n)
            ]

        logs.post_message(LinesArrived(batch(0, 3000)))
        await wait_for(pilot, lambda: logs.view(ALL).line_count >= 3000)
        assert "skipped ahead" not in str(logs.query_one("#logs-title").render())
        logs.post_message(LinesSkipped(batch(500_000, 2000)))
        merged = logs.view(ALL)
        await wait_for(
            pilot,
            lambda: log_lines(merged)[0].text == "n 500000" and merged.line_count == 2000,
            describe=lambda: f"{merged.line_count} lines",
        )
        assert [ln.text for ln in log_lines(merged)] == [f"n {i}" for i in range(500_000, 502_000)]
        assert merged.follow and merged.cursor_index == merged.row_count - 1
        title = str(logs.query_one("#logs-title").render())
        assert "skipped ahead: older lines load at the top" in title, title


async def test_keys_typed_right_after_switching_views_go_to_the_new_view(
    service: LiveService, tmp_path: Path
) -> None:
    """``a`` then ``G`` at once (a fast typist, or keys queued behind a busy loop) reached the
    replica view still focused, because focus moved only after the queued keys: the merged view
    stayed paused. The switch now moves focus before the next key is taken."""
    from textual import events

    app = pane_app(service, tmp_path, "focus-race")
    async with app.run_test(size=(120, 35)) as pilot:
        app.push_screen(LogsScreen("no_such_job_20261127_000002"))
        logs = screen(app)
        await wait_for(pilot, lambda: logs.stopped, timeout=30, describe=lambda: stream_state(logs))
        ts = "2026-11-27T02:00:00.{:06d}000Z"
        logs.post_message(
            LinesArrived(
                [
                    LogLine(ts.format(i), f"{i:018d}", f"worker-replica-{i % 2}", 200, f"n {i}")
                    for i in range(200)
                ]
            )
        )
        await wait_for(pilot, lambda: logs.view(ALL).line_count >= 200)
        await pilot.press("s")  # pause the merged view
        await wait_for(pilot, lambda: not logs.view(ALL).follow)
        await pilot.press("]")  # to the first replica's view (it follows)
        await wait_for(pilot, lambda: logs.current != ALL and app.focused is logs.active)
        for key in ("a", "G"):  # queued together, before either is handled
            app.post_message(events.Key(key, key))
        await wait_for(pilot, lambda: logs.current == ALL and app.focused is logs.view(ALL))
        await pilot.pause()
        assert logs.view(ALL).follow, "G went to the view that had focus before 'a'"


def info_of(logs: LogsScreen) -> str:
    return str(logs.query_one("#logs-info").render())


async def test_search_says_which_match_and_when_n_wraps_and_fits_at_80_columns(
    service: LiveService, tmp_path: Path
) -> None:
    """After a search the bar said "/loss: 10 matches" behind the prompt's leftover hint, cut
    at 80 columns, and ``n``/``N`` wrapped without a word: it says ``match 3/10`` now, and
    when a jump went past an end and on from the other (as less and vim do)."""
    app = pane_app(service, tmp_path, "search-status")
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(LogsScreen("no_such_job_20261127_000003"))
        logs = screen(app)
        await wait_for(pilot, lambda: logs.stopped, timeout=30, describe=lambda: stream_state(logs))
        ts = "2026-11-27T02:00:00.{:06d}000Z"
        logs.post_message(
            LinesArrived(
                [
                    LogLine(
                        ts.format(i),
                        f"{i:018d}",
                        "master-replica-0",
                        200,
                        f"step {i} loss=0.{i:03d}" if i % 5 == 0 else f"line {i}",
                    )
                    for i in range(50)
                ]
            )
        )
        await wait_for(pilot, lambda: logs.view(ALL).line_count >= 50)
        await pilot.press("slash", *"loss", "enter")
        prompt = logs.query_one("#logs-prompt", Input)
        assert prompt.value == "" and prompt.placeholder == ""  # no leftover hint in the bar
        # Following, the cursor sat on the last line: the first match is past the bottom.
        assert info_of(logs).startswith("/loss  match 1/10 · hit BOTTOM, continuing at TOP")
        info = logs.query_one("#logs-info")
        assert info.region.width >= len(info_of(logs)) + 2  # drawn whole, padding and all
        await pilot.press("n")
        assert info_of(logs).startswith("/loss  match 2/10 · paused")
        await pilot.press("N", "N")
        assert info_of(logs).startswith("/loss  match 10/10 · hit TOP, continuing at BOTTOM")
        await pilot.press("N")
        assert info_of(logs).startswith("/loss  match 9/10 · ")
        assert "hit" not in info_of(logs)
        assert info.region.width >= len(info_of(logs)) + 2


async def test_ctrl_s_proposes_the_saved_logs_folder_and_names_the_full_path(
    service: LiveService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ctrl+s proposed a bare file name, so the view landed in the folder the TUI started from
    (a git checkout, once): it proposes the full path in the saved logs folder now, makes the
    folder, and the toast names where the file went."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))  # no user-dirs.dirs there
    monkeypatch.chdir(tmp_path)
    folder = home / "Downloads" / "tui-app-logs"
    app = pane_app(service, tmp_path, "save-logs")
    async with app.run_test(size=(100, 30)) as pilot:
        job_id = "no_such_job_20261127_000004"
        app.push_screen(LogsScreen(job_id))
        logs = screen(app)
        await wait_for(pilot, lambda: logs.stopped, timeout=30, describe=lambda: stream_state(logs))
        ts = "2026-11-27T02:00:00.{:06d}000Z"
        logs.post_message(
            LinesArrived(
                [
                    LogLine(ts.format(i), f"{i:018d}", "master-replica-0", 200, f"n {i}")
                    for i in range(7)
                ]
            )
        )
        await wait_for(pilot, lambda: logs.view(ALL).line_count >= 7)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen))
        proposed = Path(app.screen.query_one(Input).value)
        assert proposed.parent == folder and proposed.name.startswith(f"{job_id}-all-")
        hint = str(app.screen.query_one("#prompt-hint").render())
        assert str(folder) in hint, hint
        await pilot.press("enter")
        await wait_for(pilot, proposed.exists)
        assert proposed.read_text().count("\n") == 7
        assert list(tmp_path.glob("*.log")) == []  # nothing in the folder the TUI started from
        await wait_for(pilot, lambda: any(str(proposed) in n.message for n in raised_toasts(app)))


TRIALS = grid_search("steps", [40, 100000])
"""Trial 1 trains 40 steps, trial 2 far longer: the job runs on after trial 1 ended."""


async def test_a_trials_logs_show_its_own_state_and_end_with_it(
    service: LiveService, package_uri: str, tmp_path: Path
) -> None:
    """Opened from the trials table, the pane showed the job's state and followed until the job
    ended: trial 1's pane said RUNNING long after trial 1 finished, then SUCCEEDED with the
    job. It shows the trial's own state now, ends when the trial ends while the job runs on,
    and a running trial's pane keeps following."""
    project = "trial-logs"
    job_id = unique_id("trial_logs")
    client = service.client(project)
    client.create(
        basic_job(
            job_id, package_uri, "--sleep", "0.05", "--log-every", "1", hyperparameters=TRIALS
        )
    )
    app = pane_app(service, tmp_path, project)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            app.push_screen(LogsScreen(job_id, trial="1"))
            first = screen(app)

            def title(logs: LogsScreen) -> str:
                titles = logs.query("#logs-title")  # none until the screen has composed
                return str(titles.first().render()) if titles else ""

            await wait_for(
                pilot,
                lambda: "stream ended" in first.status,
                timeout=120,
                describe=lambda: f"{title(first)} {stream_state(first)}",
            )
            assert "trial 1 SUCCEEDED" in title(first), title(first)
            assert first.status == "stream ended (trial finished)"
            assert client.get(job_id)["state"] == "RUNNING"  # trial 2 runs on
            lines = log_lines(first.view(ALL))
            assert {line.trial_id for line in lines} == {"1"}
            assert any("Trial 1: completed" in line.text for line in lines)

            await pilot.press("escape")
            app.push_screen(LogsScreen(job_id, trial="2"))
            second = screen(app)
            await wait_for(
                pilot,
                lambda: (
                    "trial 2 RUNNING" in title(second)
                    and len(STEP.findall(second.view(ALL).visible_text())) >= 3
                ),
                timeout=60,
                describe=lambda: f"{title(second)} {stream_state(second)}",
            )
            seen = second.view(ALL).line_count
            await wait_for(
                pilot,
                lambda: second.view(ALL).line_count > seen + 5,
                timeout=30,
                describe=lambda: stream_state(second),
            )
            assert "stream ended" not in second.status
    finally:
        client.cancel(job_id)


async def test_a_failed_jobs_logs_end_with_its_cause_as_the_list_shows_it(
    service: LiveService, package_uri: str, tmp_path: Path
) -> None:
    """The log ended with the service's "Job failed." while the list and the detail said why
    (after a Ray node died, the lost replica and node): the pane's last line now carries the
    cause the list's ERROR column shows, for any failed job."""
    from tui_app.model.views.job_view import JobRow

    project = "failed-logs"
    job_id = unique_id("failed_logs")
    client = service.client(project)
    client.create(basic_job(job_id, package_uri, "--steps", "20", "--fail-at-step", "3"))
    job = service.wait_state(job_id, project=project)
    assert job["state"] == "FAILED", job
    cause = JobRow.from_job(job).error  # what the list shows
    assert cause and cause != job["errorMessage"].splitlines()[0]  # a traceback's exception
    app = pane_app(service, tmp_path, project)
    async with app.run_test(size=(100, 30)) as pilot:
        app.push_screen(LogsScreen(job_id))
        logs = screen(app)
        await wait_for(
            pilot,
            lambda: "stream ended" in logs.status,
            timeout=60,
            describe=lambda: stream_state(logs),
        )
        merged = log_lines(logs.view(ALL))
        # The service's own last line says why (so gcloud's stream-logs reads it too), and the
        # pane adds nothing after it.
        assert [line.text for line in merged[-2:]][-1] == f"Job failed: {cause}"
        assert sum(line.text.startswith("Job failed") for line in merged) == 1
        end = merged[-1]
        assert end.task_name == "service" and end.severity == 500
        assert merged[-2].key < end.key  # it sorts after the job's last line
        assert log_lines(logs.view("service"))[-1] == end
        # On screen: the merged view follows to its end, where the cause is.
        view = logs.view(ALL)

        def rows() -> list[str]:
            height = view.scrollable_content_region.height
            return [view.render_line(y).text.rstrip() for y in range(height)]

        await wait_for(
            pilot,
            lambda: any(f"Job failed: {cause}"[:50] in row for row in rows()),
            describe=lambda: "\n".join(
                [
                    f"follow={view.follow} y={view.scroll_offset.y} max={view.max_scroll_y} "
                    f"size={view.size} content={view.scrollable_content_region} "
                    f"bars={view.show_vertical_scrollbar},{view.show_horizontal_scrollbar} "
                    f"virtual={view.virtual_size} rows={view.row_count}",
                    *rows(),
                ]
            ),
        )
