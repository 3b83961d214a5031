"""The stacks view (``S``) against a real service and a hung cluster, and on fixed stacks.

The sample trainer's ``--hang-at-step 5`` hangs as a distributed job hangs: the parameter server
stops answering at step 5 and says so once (``hanging at step 5 (--hang-at-step)``), the master
and both workers block in the trainer's ``pull`` waiting on its socket. The service here flags a
stall after 3 s, so the dump it keeps then (``K``) is there to read too. py-spy runs as the
service's user (root in CI's container, ptrace allowed).

The fast tests at the end draw fixed stacks (tests/support/fixed_stacks.py): the keys that need
no service, the copied text, and the words where the endpoint has no stacks.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from tests.conftest import serve, unique_id
from tests.pilot.conftest import (
    QUIET_REFRESH_SECONDS,
    fixed_app,
    live_app,
    toast_messages,
    wait_for,
)
from tests.pilot.test_metrics_view import help_rows
from tests.support.fixed_stacks import JOB_ID as FIXED_JOB_ID
from tests.support.fixed_stacks import fixed_stacks
from tests.support.live_service import CLUSTER, PROJECT, LiveService, basic_job
from tui_app.model.stacks import JobStacks, fold, group_lines, render_text
from tui_app.shell.app import JobsApp
from tui_app.shell.screens.help_screen import HelpScreen
from tui_app.shell.screens.jobs_screen import JobsScreen
from tui_app.shell.screens.logs_screen import LogsScreen
from tui_app.shell.screens.stacks_screen import (
    NO_ENDPOINT,
    StackSections,
    StacksRequest,
    StacksScreen,
)
from tui_app.widgets.job_table import JobTable

HANG_ARGS = ("--steps", "1000", "--sleep", "0.02", "--hang-at-step", "5")
HANG_LINE = "hanging at step 5 (--hang-at-step)"
FOLDED = ["master 0, worker 0, 1", "ps 0"]
"""How the hung cluster folds: the three trainers wait alike, the parameter server apart."""


@pytest.fixture(scope="module")
def stall_service(
    tmp_path_factory: pytest.TempPathFactory, trainer_sdist: Path
) -> Iterator[LiveService]:
    """A service of this module's that flags a stall after 3 s, sampling CPU every 0.25 s."""
    env = {**os.environ, "TUI_APP_METRICS_SECONDS": "0.25"}
    yield from serve(tmp_path_factory, "svc-stacks", "--stall-seconds", "3", env=env)


def pane_app(service: LiveService, tmp_path: Path) -> JobsApp:
    """The real app on the service, its list polled at the product's pace."""
    return live_app(service, tmp_path, PROJECT, refresh_seconds=QUIET_REFRESH_SECONDS)


def _until(predicate: Any, what: str, timeout: float = 90.0) -> None:
    """Poll ``predicate`` (blocking: run it in a thread) until it holds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.2)


def _ps_has_hung(svc: LiveService, job_id: str) -> bool:
    flt = f'resource.labels.job_id="{job_id}" AND resource.labels.task_name="ps-replica-0"'
    for entry in svc.entries(flt):
        text = entry.get("textPayload") or (entry.get("jsonPayload") or {}).get("message") or ""
        if HANG_LINE in str(text):
            return True
    return False


def _folded_labels(svc: LiveService, job_id: str) -> list[str]:
    client = svc.connection().metrics(PROJECT)
    try:
        stacks = client.stacks(job_id)
    finally:
        client.close()
    return [g.label for g in fold(stacks.replicas)] if stacks is not None else []


def start_hung_job(svc: LiveService, uri: str, base: str) -> str:
    """Submit the hung cluster and wait until it hangs: the ps said so, and every trainer has
    reached its ``pull`` (a worker may still be finishing its step when the ps's line comes)."""
    job_id = unique_id(base)
    svc.client().create(basic_job(job_id, uri, *HANG_ARGS, **CLUSTER))
    _until(lambda: _ps_has_hung(svc, job_id), f"{job_id}'s ps to say {HANG_LINE!r}")
    _until(lambda: _folded_labels(svc, job_id) == FOLDED, "the trainers to wait in pull")
    return job_id


def _kept_at_stall(svc: LiveService, job_id: str) -> bool:
    return bool((svc.client().get(job_id).get("stall") or {}).get("stacksTakenAt"))


async def on_the_list(pilot: Any, job_id: str) -> None:
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen) and bool(app.last_rows))
    table = app.screen.query_one(JobTable)
    await wait_for(pilot, lambda: table.move_to_key(job_id) and table.cursor_key == job_id)


async def stacks_screen(pilot: Any, takes: int = 1) -> StacksScreen:
    """The stacks view once its ``takes``-th answer (stacks or a refusal) is on screen."""
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, StacksScreen), timeout=30)
    screen = app.screen
    assert isinstance(screen, StacksScreen)
    await wait_for(
        pilot,
        lambda: screen.takes >= takes and not screen.taking,
        timeout=60,
        describe=lambda: f"(takes {screen.takes}, error {screen.error!r})",
    )
    return screen


def plain(widget: Static) -> str:
    """What a Static shows, as plain text."""
    visual = widget.render()
    return str(getattr(visual, "plain", visual))


def shown(screen: StacksScreen, selector: str) -> str:
    """The plain text of the view's first Static that ``selector`` names."""
    return plain(screen.query_one(selector, Static))


def sections_text(screen: StacksScreen, part: str) -> list[str]:
    """Each section's ``part`` (``heading``, ``listing``, ``error``) as plain text ("" when the
    section has none)."""
    out = []
    for section in screen.query_one(StackSections).sections():
        found = section.query(f".stacks-{part}").results(Static)
        out.append(next((plain(w) for w in found), ""))
    return out


def headings(screen: StacksScreen) -> list[str]:
    return sections_text(screen, "heading")


async def test_s_on_the_list_folds_a_hung_cluster_o_adds_locals_k_shows_the_kept_ones(
    stall_service: LiveService, trainer_sdist: Path, tmp_path: Path
) -> None:
    svc = stall_service
    uri = svc.stage(trainer_sdist)
    job_id = await asyncio.to_thread(start_hung_job, svc, uri, "stacks_list")
    try:
        app = pane_app(svc, tmp_path)
        async with app.run_test(size=(120, 40)) as pilot:
            await on_the_list(pilot, job_id)
            await pilot.press("S")
            screen = await stacks_screen(pilot)
            assert (screen.job_id, screen.replica, screen.trial) == (job_id, None, None)
            assert screen.error is None and screen.stacks is not None
            # The master and both workers in one section, the ps in another.
            assert [g.label for g in screen.groups] == FOLDED
            await wait_for(pilot, lambda: len(headings(screen)) == 2)
            trainers, ps = headings(screen)
            assert "master 0, worker 0, 1 (3 replicas" in trainers, trainers
            assert "pull" in trainers or "ParameterClient" in trainers, trainers
            assert "(idle)" in trainers  # the state in words, not only in colour
            assert ps.lstrip("▶ ").startswith("ps 0: "), ps
            title = shown(screen, "#stacks-title")
            assert title.startswith(f"Stacks of {job_id} · taken ")
            assert "4 replicas in 2 groups" in title and "locals" not in title
            listing = sections_text(screen, "listing")[0]  # the trainers' threads
            assert "pull (trainer/ps.py:" in listing, listing

            # ] marks the ps's section; [ goes back.
            await pilot.press("right_square_bracket")
            assert screen.query_one(StackSections).current == 1
            assert headings(screen)[1].startswith("▶ ps 0")
            await pilot.press("left_square_bracket")
            assert screen.query_one(StackSections).current == 0

            # o takes them again with locals; the title says so, and a toast warns once.
            await pilot.press("o")
            screen = await stacks_screen(pilot, takes=2)
            assert screen.stacks is not None and screen.stacks.locals
            assert "· locals" in shown(screen, "#stacks-title")
            assert sum("secrets" in m for m in toast_messages(app)) == 1
            await pilot.press("o")
            screen = await stacks_screen(pilot, takes=3)
            assert screen.stacks is not None and not screen.stacks.locals
            assert "locals" not in shown(screen, "#stacks-title")

            # r takes them again; y copies the text jobs stacks prints.
            await pilot.press("r")
            screen = await stacks_screen(pilot, takes=4)
            await pilot.press("y")
            copied = app.clipboard
            assert copied.startswith(f"Stacks of {job_id}, taken ")
            assert "\n".join(render_text(screen.groups, locals=False)) in copied

            # K: the dump the service kept when the job stalled, then back to now.
            await asyncio.to_thread(
                _until, lambda: _kept_at_stall(svc, job_id), "the stacks kept at the stall"
            )
            await pilot.press("K")
            screen = await stacks_screen(pilot, takes=5)
            assert screen.error is None, screen.error
            assert "kept when it stalled" in shown(screen, "#stacks-title")
            kept = sorted(r.task_name for r in screen.stacks.replicas) if screen.stacks else []
            assert kept == [
                "master-replica-0",
                "ps-replica-0",
                "worker-replica-0",
                "worker-replica-1",
            ]
            await pilot.press("K")
            screen = await stacks_screen(pilot, takes=6)
            assert "kept" not in shown(screen, "#stacks-title")
            await pilot.press("escape")
            await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen))
    finally:
        await asyncio.to_thread(svc.end_jobs, [job_id])


async def test_s_in_the_logs_shows_the_replica_whose_view_is_shown(
    stall_service: LiveService, trainer_sdist: Path, tmp_path: Path
) -> None:
    svc = stall_service
    uri = svc.stage(trainer_sdist)
    job_id = await asyncio.to_thread(start_hung_job, svc, uri, "stacks_logs")
    try:
        app = pane_app(svc, tmp_path)
        async with app.run_test(size=(120, 40)) as pilot:
            app.open_logs(job_id)
            await wait_for(pilot, lambda: isinstance(app.screen, LogsScreen))
            logs = app.screen
            assert isinstance(logs, LogsScreen)
            await wait_for(pilot, lambda: "worker-replica-0" in logs.tasks, timeout=30)
            while logs.current != "worker-replica-0":
                await pilot.press("right_square_bracket")
            await pilot.press("S")
            screen = await stacks_screen(pilot)
            assert (screen.replica, screen.trial) == ("worker-replica-0", None)
            assert screen.stacks is not None
            assert [r.task_name for r in screen.stacks.replicas] == ["worker-replica-0"]
            assert [g.label for g in screen.groups] == ["worker 0"]
            title = shown(screen, "#stacks-title")
            assert "worker-replica-0" in title and "1 replica in 1 group" in title
            # From the merged view: every replica.
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is logs)
            await pilot.press("a", "S")
            screen = await stacks_screen(pilot)
            assert screen.replica is None
            assert [g.label for g in screen.groups] == FOLDED
    finally:
        await asyncio.to_thread(svc.end_jobs, [job_id])


async def test_a_job_that_ended_shows_the_services_refusal_and_r_asks_again(
    stall_service: LiveService, trainer_sdist: Path, tmp_path: Path
) -> None:
    svc = stall_service
    uri = svc.stage(trainer_sdist)
    job_id = unique_id("stacks_done")
    svc.client().create(basic_job(job_id, uri, "--steps", "3"))
    try:
        done = await asyncio.to_thread(svc.wait_state, job_id)
        assert done["state"] == "SUCCEEDED", done.get("errorMessage")
        app = pane_app(svc, tmp_path)
        async with app.run_test(size=(100, 30)) as pilot:
            await on_the_list(pilot, job_id)
            await pilot.press("S")
            screen = await stacks_screen(pilot)
            assert screen.stacks is None and screen.error, screen.error
            message = shown(screen, "#stacks-message")
            assert message == f"Cannot take the stacks of {job_id}: {screen.error}"
            assert f"The job {job_id} has no replica running now (SUCCEEDED)." in message
            assert "Traceback" not in message and "Error:" not in message
            assert shown(screen, "#stacks-status") == "r tries again."
            assert not screen.query_one(StackSections).display
            await pilot.press("r")
            screen = await stacks_screen(pilot, takes=2)
            assert screen.error and screen.stacks is None
    finally:
        await asyncio.to_thread(svc.end_jobs, [job_id])


# --- fixed stacks: no service --------------------------------------------------------------


async def test_fixed_stacks_jump_copy_and_refuse_to_take_again(tmp_path: Path) -> None:
    app = fixed_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        stacks = fixed_stacks()
        screen = StacksScreen(FIXED_JOB_ID, stacks=stacks)
        await app.push_screen(screen)
        sections = screen.query_one(StackSections)
        await wait_for(pilot, lambda: len(sections.sections()) == 4)
        assert shown(screen, "#stacks-title") == (
            f"Stacks of {FIXED_JOB_ID} · taken 09:29:41 · 6 replicas in 4 groups"
        )
        first, busy, ps, ended = headings(screen)
        assert first.startswith("▶ master 0, worker 0, 1 (3 replicas, the same stacks): in ")
        assert busy == "  worker 2: in `train_step` ← `dot` (active)"
        assert ps.endswith("(idle)")
        assert ended == "  evaluator 0"
        assert shown(screen, ".stacks-error") == "⚠ it ended meanwhile"
        # Each section lists what jobs stacks prints, word for word.
        groups = fold(stacks.replicas)
        for listing, group in zip(sections_text(screen, "listing"), groups, strict=True):
            expected = [line.text for line in group_lines(group, locals=False)[1:]]
            assert listing.splitlines() == (expected if group.error is None else [])
        text = render_text(groups, locals=False)
        # ] and [ move the marker, and stop at the ends.
        await pilot.press("right_square_bracket", "right_square_bracket", "right_square_bracket")
        assert sections.current == 3 and headings(screen)[3].startswith("▶ evaluator 0")
        await pilot.press("right_square_bracket")
        assert sections.current == 3
        await pilot.press("p")
        assert sections.current == 2
        # y copies the whole text.
        await pilot.press("y")
        assert app.clipboard == (
            f"Stacks of {FIXED_JOB_ID}, taken {stacks.taken_at}:\n\n" + "\n".join(text) + "\n"
        )
        # Nothing to take again: the keys say so rather than asking a service.
        await pilot.press("r", "o", "K")
        assert screen.takes == 0 and screen.stacks is stacks


async def test_an_endpoint_without_stacks_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The client answers None where the endpoint has no ``:stacks`` (a cloud one)."""
    monkeypatch.setattr(StacksScreen, "_read", lambda self, request: None)
    app = fixed_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        app.open_stacks("mnist_20261122_083000")
        screen = await stacks_screen(pilot)
        assert screen.no_endpoint and screen.stacks is None
        assert shown(screen, "#stacks-message") == NO_ENDPOINT


async def test_keys_work_while_the_stacks_are_taken_and_only_the_last_answer_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The taking blocks a worker's thread, never the view: a key pressed meanwhile is
    answered, and an answer to a request the user has moved on from (``o``) is dropped."""
    release = threading.Event()
    asked: list[StacksRequest] = []

    def slow_read(self: StacksScreen, request: StacksRequest) -> JobStacks:
        asked.append(request)
        release.wait(30)
        return fixed_stacks(with_locals=request.with_locals)

    monkeypatch.setattr(StacksScreen, "_read", slow_read)
    app = fixed_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        app.open_stacks(FIXED_JOB_ID)
        await wait_for(pilot, lambda: isinstance(app.screen, StacksScreen) and len(asked) == 1)
        screen = app.screen
        assert isinstance(screen, StacksScreen)
        await wait_for(pilot, lambda: shown(screen, "#stacks-status") == "Taking stacks…")
        await pilot.press("y")
        await wait_for(
            pilot, lambda: "Nothing to copy yet: no stacks are shown." in toast_messages(app)
        )
        await pilot.press("o")
        await wait_for(pilot, lambda: len(asked) == 2)
        assert shown(screen, "#stacks-status") == "Taking stacks with locals…"
        release.set()
        await wait_for(pilot, lambda: screen.takes == 1 and not screen.taking)
        assert screen.stacks is not None and screen.stacks.locals
        assert shown(screen, "#stacks-title").endswith("6 replicas in 4 groups · locals")
        assert not screen.query_one("#stacks-status", Static).display


async def test_help_lists_the_keys_and_the_keymap_knows_their_ids(tmp_path: Path) -> None:
    """``?`` on the view lists its keys with their ids; ``S`` is listed on the list; a remap
    of a stacks key is checked against the view's other keys like any screen's."""
    app = fixed_app(tmp_path, keymap={"stacks.locals": "K", "jobs.stacks": "ctrl+k"})
    warning = app.keymap_warning or ""
    assert "stacks.locals: K is already stacks.at-stall's key on the stacks" in warning
    assert "jobs.stacks" not in warning
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen) and bool(app.last_rows))
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        stacks_row = (
            "Jobs",
            "^k",
            "Stacks — Every replica's Python threads now (where a hung job waits)",
            "jobs.stacks",
        )
        assert stacks_row in help_rows(app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen))
        await app.push_screen(StacksScreen(FIXED_JOB_ID, stacks=fixed_stacks()))
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        ids = {row[3] for row in help_rows(app)}
        assert {
            "stacks.prev-group",
            "stacks.next-group",
            "stacks.locals",
            "stacks.at-stall",
            "stacks.retake",
            "stacks.copy",
            "stacks.back",
        } <= ids
