"""The diff view (issue 27, item 1): ``D`` on the job list and on the trials table, ``:diff``.

The jobs really run on the service fixture (the sample trainer), so what the view compares is
what the service answered: the jobs, their ``:environment`` and their metrics. The trials come
from the fixed tuning jobs (tests/support/fixed_jobs.py): a trial document is read from the
job alone.
"""

from __future__ import annotations

import copy
import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual.widgets import Static

from tests.pilot.conftest import FROZEN_NOW, fixed_app, live_app, toast_messages, wait_for
from tests.support.fixed_jobs import JOBS, TUNING_JOBS, FixedSource
from tests.support.live_service import LiveService, basic_job
from tui_app.api.job_compare import ResubmitHistory
from tui_app.config.settings import Settings
from tui_app.model.views.job_diff import (
    ELLIPSIS,
    NOT_KNOWN_YET,
    DiffSection,
    JobFacts,
    comparison_document,
    unified_diff,
)
from tui_app.shell.app import JobsApp
from tui_app.shell.screens.describe_screen import DescribeScreen
from tui_app.shell.screens.diff_screen import DiffScreen
from tui_app.shell.screens.jobs_screen import JobsScreen
from tui_app.widgets.diff_table import DiffHeading, DiffTable
from tui_app.widgets.job_table import MARK_GLYPH, JobTable
from tui_app.widgets.trials_table import TrialsTable, trial_pair

OLD = "mnist_20260101_000000"
BETWEEN = "mnist_20260101_000030"
"""Newer than OLD, older than NEW: the base-name rule would pick it; provenance must win."""
NEW = "mnist_20260101_000100"
TUNING_ID = "hptune_20261122_084000"


def printed(renderable: Any, width: int = 160) -> str:
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def diff_of(app: JobsApp) -> DiffScreen:
    screen = app.screen
    assert isinstance(screen, DiffScreen), screen
    return screen


async def diff_read(pilot: Any) -> DiffScreen:
    """The diff view once both sides were read and compared."""
    app = pilot.app
    await wait_for(
        pilot,
        lambda: isinstance(app.screen, DiffScreen) and app.screen.reads > 0,
        timeout=60,
        describe=lambda: f"on {app.screen!r}: {getattr(app.screen, 'error', '')}",
    )
    return diff_of(app)


def section(screen: DiffScreen, key: str) -> DiffSection:
    return next(s for s in screen.sections if s.key == key)


def changed(screen: DiffScreen, key: str) -> list[tuple[str, str | None, str | None]]:
    return [(r.label, r.left, r.right) for r in section(screen, key).changed]


async def on_row(pilot: Any, key: str) -> JobTable:
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen) and bool(app.last_rows))
    table: JobTable = app.screen.query_one(JobTable)
    await wait_for(pilot, lambda: table.move_to_key(key) and table.cursor_key == key)
    return table


SHARED = "diff-shared"
"""The project of the three jobs the list tests share (created once per module)."""


@pytest.fixture(scope="module")
def shared_jobs(service: LiveService, trainer_sdist: Path) -> str:
    """OLD (--steps 1), BETWEEN and NEW (--steps 2), all ended, in SHARED: the tests only
    read them (a test that adds a job adds one no other test looks for)."""
    package_uri = service.stage(trainer_sdist)
    client = service.client(SHARED)
    client.create(basic_job(OLD, package_uri, "--steps", "1"))
    service.wait_state(OLD, project=SHARED)
    client.create(basic_job(BETWEEN, package_uri, "--steps", "1"))
    client.create(basic_job(NEW, package_uri, "--steps", "2"))
    for job_id in (BETWEEN, NEW):
        service.wait_state(job_id, project=SHARED)
    return SHARED


def resubmitted(project: str) -> str:
    """NEW recorded as resubmitted from OLD (the record lives in each test's own data dir)."""
    ResubmitHistory().record(project, NEW, OLD)
    return project


async def test_d_on_a_resubmitted_job_shows_the_one_changed_argument(
    service: LiveService, package_uri: str, shared_jobs: str, tmp_path: Path
) -> None:
    """The issue's done-when: one argument changed in a resubmit, and ``D`` on the new job
    shows exactly that argument as the training input's difference, with the new id and
    times; ``u`` unfolds the rest, ``s`` swaps, ``y`` copies ``diff -u``, esc goes back."""
    project = resubmitted(shared_jobs)
    app = live_app(service, tmp_path, project)
    async with app.run_test(size=(120, 35)) as pilot:
        await on_row(pilot, NEW)
        await pilot.press("D")
        screen = await diff_read(pilot)
        assert (screen.left.name, screen.right.name) == (OLD, NEW)
        assert screen.reason == "against the job it was resubmitted from"
        assert changed(screen, "trainingInput") == [("args --steps", "1", "2")]
        job_rows = {label for label, _, _ in changed(screen, "job")}
        # The id, and the times where they differ: jobs this short can start and end within
        # the second the documents keep, so which times differ is not fixed.
        assert "jobId" in job_rows
        assert job_rows <= {"jobId", "createTime", "startTime", "endTime"}
        assert changed(screen, "labels") == [] and changed(screen, "packages") == []
        # Drawn: the changed argument, the unchanged ones folded into a count.
        table = screen.query_one(DiffTable)
        text = printed(table.render())
        assert "args --steps" in text and "pythonModule" not in text
        assert f"{section(screen, 'trainingInput').unchanged_count} the same" in text
        title = printed(screen.query_one("#diff-title", Static).content)
        assert OLD in title and NEW in title and "resubmitted from" in title
        heading = printed(screen.query_one(DiffHeading).render())
        assert OLD in heading and NEW in heading
        # u: every row, the same ones too; again: folded.
        await pilot.press("u")
        assert "pythonModule" in printed(table.render())
        assert "u folds them" in printed(screen.query_one("#diff-summary", Static).content)
        await pilot.press("u")
        assert "pythonModule" not in printed(table.render())
        # s: sides swapped, the argument's values with them.
        await pilot.press("s")
        assert (screen.left.name, screen.right.name) == (NEW, OLD)
        assert changed(screen, "trainingInput") == [("args --steps", "2", "1")]
        # y: the unified diff, naming both sides, the argument among its changed lines.
        await pilot.press("y")
        copied = app.clipboard.splitlines()
        assert copied[0] == f"--- {NEW}" and copied[1] == f"+++ {OLD}"
        assert "-  - '2'" in copied and "+  - '1'" in copied
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen))


async def test_marks_groups_and_the_reasons_d_gives_when_there_is_no_pair(
    service: LiveService, package_uri: str, shared_jobs: str, tmp_path: Path
) -> None:
    """Two marked: the older on the left whatever the marking order; three: a toast; a folded
    group: its newest against the one before; a job with no earlier run: a toast saying so."""
    project = resubmitted(shared_jobs)
    lonely = "solo_20260101_000000"
    service.client(project).create(basic_job(lonely, package_uri, "--steps", "1"))
    app = live_app(service, tmp_path, project)
    async with app.run_test(size=(120, 35)) as pilot:
        table = await on_row(pilot, NEW)
        await pilot.press("space")
        await on_row(pilot, OLD)
        await pilot.press("space")
        assert table.marked == {NEW, OLD}
        await pilot.press("D")
        screen = await diff_read(pilot)
        assert (screen.left.name, screen.right.name) == (OLD, NEW)
        assert screen.reason == "two marked jobs, the older on the left"
        await pilot.press("escape")
        await on_row(pilot, BETWEEN)
        await pilot.press("space")
        assert len(table.marked) == 3
        await pilot.press("D")
        await wait_for(pilot, lambda: any("3 jobs marked" in t for t in toast_messages(app)))
        assert isinstance(app.screen, JobsScreen)
        await pilot.press("escape")  # clears the marks
        assert not table.marked
        # A job with no earlier run of its name, and no resubmit record.
        await on_row(pilot, lonely)
        await pilot.press("D")
        await wait_for(
            pilot,
            lambda: any(
                f"No earlier job named solo, and {lonely} was not resubmitted" in t
                for t in toast_messages(app)
            ),
        )
        assert isinstance(app.screen, JobsScreen)
        # The base-name rule, where no resubmit record names an earlier job.
        await on_row(pilot, BETWEEN)
        await pilot.press("D")
        screen = await diff_read(pilot)
        assert (screen.left.name, screen.right.name) == (OLD, BETWEEN)
        assert screen.reason == "against the newest earlier job named mnist"
        assert changed(screen, "trainingInput") == []
        await pilot.press("escape")
        # A folded group: its newest job against the one before it.
        await on_row(pilot, NEW)
        await pilot.press("minus")
        await wait_for(pilot, lambda: table.cursor_key == "group:mnist")
        await pilot.press("D")
        screen = await diff_read(pilot)
        assert (screen.left.name, screen.right.name) == (BETWEEN, NEW)
        assert changed(screen, "trainingInput") == [("args --steps", "1", "2")]


async def test_command_line_diff_and_a_side_that_cannot_be_read(
    service: LiveService, package_uri: str, shared_jobs: str, tmp_path: Path
) -> None:
    """``:diff A B`` (unique prefixes will do), ``:diff A`` (against its earlier run), an id
    that names no job, one job named twice; and a side that cannot be read says why."""
    project = resubmitted(shared_jobs)
    app = live_app(service, tmp_path, project)
    async with app.run_test(size=(80, 24)) as pilot:
        await on_row(pilot, OLD)

        async def command(text: str) -> None:
            await pilot.press("colon", *text, "enter")

        await command(f"diff {NEW} {OLD}")
        screen = await diff_read(pilot)
        assert (screen.left.name, screen.right.name) == (NEW, OLD)
        await pilot.press("escape")
        await command(f"diff {NEW}")
        screen = await diff_read(pilot)
        assert (screen.left.name, screen.right.name) == (OLD, NEW)
        await pilot.press("escape")
        await command("diff nope_2026 mnist")
        await wait_for(pilot, lambda: any("No job 'nope_2026'" in t for t in toast_messages(app)))
        await pilot.press("escape")  # the command line stays open with what was typed
        await command(f"diff {OLD} {OLD[:-1]}")
        await wait_for(pilot, lambda: any("nothing to compare" in t for t in toast_messages(app)))
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen))
        # A side the service does not know (deleted meanwhile): the error, not "Reading…".
        app.push_screen(DiffScreen.of_jobs("gone_20260101_000000", OLD))
        await wait_for(pilot, lambda: diff_of(app).error is not None)
        message = printed(app.screen.query_one("#diff-message", Static).content)
        assert "Cannot compare gone_20260101_000000 and" in message
        assert "not found" in message.lower()
        assert not app.screen.query_one(DiffTable).display


def outcome_state(screen: DiffScreen) -> str | None:
    row = next(r for r in section(screen, "outcome").rows if r.label == "state")
    return row.right


async def test_the_diff_follows_a_live_job_to_its_end(
    service: LiveService, package_uri: str, tmp_path: Path
) -> None:
    """Opened on a running resubmit, the view reads both jobs again when the list shows the
    job in another state: cancelled meanwhile, its outcome says CANCELLED without a key."""
    project = "diff-live"
    client = service.client(project)
    client.create(basic_job(OLD, package_uri, "--steps", "1"))
    service.wait_state(OLD, project=project)
    client.create(basic_job(NEW, package_uri, "--steps", "100000", "--sleep", "0.1"))
    service.wait_state(NEW, ("RUNNING",), project=project)
    app = live_app(service, tmp_path, project)
    async with app.run_test(size=(120, 35)) as pilot:
        await on_row(pilot, NEW)
        await pilot.press("D")
        screen = await diff_read(pilot)
        assert outcome_state(screen) == "RUNNING"
        assert screen.reason == "against the newest earlier job named mnist"
        client.cancel(NEW)
        await wait_for(
            pilot,
            lambda: outcome_state(screen) == "CANCELLED",
            timeout=60,
            describe=lambda: f"outcome {outcome_state(screen)} after {screen.reads} reads",
        )
        assert screen.reads >= 2 and app.screen is screen


def tuning_app(tmp_path: Path) -> JobsApp:
    return JobsApp(
        Settings(refresh_seconds=0.3), lambda: None, "demo-project", "local",  # type: ignore[arg-type,return-value]
        settings_file=tmp_path / "settings.yaml", clock=lambda: FROZEN_NOW,
        source=FixedSource(copy.deepcopy(TUNING_JOBS)),
    )  # fmt: skip


async def test_d_on_trials_best_runner_up_and_two_marked(tmp_path: Path) -> None:
    """``D`` on the best trial: against the runner-up; on another: against the best; two
    marked (space): those two, lower id on the left; one marked: a toast."""
    app = tuning_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        app.push_screen(DescribeScreen(TUNING_ID))
        await wait_for(pilot, lambda: getattr(app.screen, "job", None) is not None)
        await pilot.press("t")
        table = app.screen.query_one(TrialsTable)
        assert app.focused is table
        best, runner_up = table.shown[0].trial_id, table.shown[1].trial_id
        assert (best, runner_up) == ("5", "9")
        await pilot.press("D")
        screen = await diff_read(pilot)
        assert (screen.left.name, screen.right.name) == (f"{TUNING_ID}/5", f"{TUNING_ID}/9")
        assert screen.reason == "the best trial against the runner-up"
        assert [s.key for s in screen.sections] == ["trial", "hyperparameters", "metrics"]
        assert ("trialId", "5", "9") in changed(screen, "trial")
        params = {label for label, _, _ in changed(screen, "hyperparameters")}
        assert params and params <= {"learning-rate", "hidden-units", "optimizer"}
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, DescribeScreen))
        await pilot.press("j", "j")  # trial 10, running
        await pilot.press("D")
        screen = await diff_read(pilot)
        assert (screen.left.name, screen.right.name) == (f"{TUNING_ID}/5", f"{TUNING_ID}/10")
        assert screen.reason == "trial 10 against the best trial"
        assert ("state", "SUCCEEDED", "RUNNING") in changed(screen, "trial")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, DescribeScreen))
        # Marks: space marks and moves down; one marked is not a pair.
        await pilot.press("space")  # 10
        assert table.marked == {"10"}
        assert str(table.get_row_at(2)[1]).strip() == f"{MARK_GLYPH} 10"
        await pilot.press("D")
        await wait_for(pilot, lambda: any("1 trial marked" in t for t in toast_messages(app)))
        await pilot.press("space")  # 7
        await pilot.press("D")
        screen = await diff_read(pilot)
        assert (screen.left.name, screen.right.name) == (f"{TUNING_ID}/7", f"{TUNING_ID}/10")
        assert screen.reason == "two marked trials"


def test_trial_pair_without_a_finished_trial() -> None:
    """No trial with a final objective: nothing to take as the best, and the words say what to
    do instead; the best alone: no runner-up."""
    job = copy.deepcopy(next(j for j in TUNING_JOBS if j["jobId"] == TUNING_ID))
    from tui_app.model.views.trials import trial_rows

    rows = trial_rows(job, FROZEN_NOW)
    running = [r for r in rows if not r.final]
    why = trial_pair(running, set(), running[0].trial_id)
    assert isinstance(why, str) and why.startswith("No trial has a final objective yet")
    best = [r for r in rows if r.best]
    why = trial_pair(best, set(), best[0].trial_id)
    assert isinstance(why, str) and "only one with a final objective" in why
    assert trial_pair(rows, {"3", "11", "2"}, None) == (
        "3 trials marked: mark exactly two trials (space) to compare them."
    )
    assert trial_pair(rows, {"11", "2"}, "5") == ("2", "11", "two marked trials")


# -- what the rows and the headings name (issue 27, item 6) ---------------------------------------


def census_documents(
    old_args: list[str], new_args: list[str], new_state: str = "SUCCEEDED"
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The fixed failed census job with ``old_args`` and a later one with ``new_args``, as
    the model compares them; a ``new_state`` that has not started leaves its facts unknown."""
    old = copy.deepcopy(next(j for j in JOBS if j["jobId"] == "census_dist_20261122_070000"))
    old["trainingInput"]["args"] = old_args
    new = copy.deepcopy(old)
    del new["errorMessage"]
    new.update(jobId="census_dist_20261122_091000", state=new_state)
    new["trainingInput"]["args"] = new_args
    env = {
        "runtimeVersion": "2.11",
        "pythonVersion": "3.7",
        "interpreter": "/usr/bin/python3.7",
        "exact": True,
        "packages": {"tensorflow": "2.11.0", "numpy": "1.24.4"},
        "trainerPackages": [
            {"uri": "gs://demo-bucket/packages/trainer-0.1.0.tar.gz", "sha256": "3f" * 32}
        ],
    }
    if new_state in ("QUEUED", "PREPARING"):
        for key in ("startTime", "endTime", "trainingOutput"):
            new.pop(key, None)
        new_env: dict[str, Any] = {}  # what the service answers until the job has started
    else:
        new_env = env
    return (
        comparison_document(JobFacts(old, "demo-project", env), FROZEN_NOW),
        comparison_document(JobFacts(new, "demo-project", new_env), FROZEN_NOW),
    )


async def open_documents(
    pilot: Any, documents: tuple[dict[str, Any], dict[str, Any]], left: str, right: str
) -> DiffScreen:
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen))
    screen = DiffScreen.of_documents(left, right, documents, "two marked jobs")
    app.push_screen(screen)
    await wait_for(pilot, lambda: app.screen is screen and bool(screen.query(DiffTable)))
    await wait_for(pilot, lambda: bool(screen.query_one(DiffTable).sections))
    await wait_for(pilot, lambda: screen.query_one(DiffHeading).render_line(0).text.strip() != "")
    return screen


def table_text(screen: DiffScreen) -> str:
    table = screen.query_one(DiffTable)
    return printed(table.render(), width=table.size.width)


async def test_arguments_are_named_by_their_flags_on_screen(tmp_path: Path) -> None:
    """``args --learning-rate │ 0.1 │ 0.05`` whether the flag is written with a space or an
    "="; a flag removed is its own row (present/absent for a bare one) and renames no other;
    ``y`` still copies the documents' unified diff, argument by argument."""
    old = ["--train-steps", "1000", "--learning-rate", "0.1", "--dropout", "0.2", "--verbose"]
    new = ["--train-steps", "1000", "--learning-rate=0.05", "--layer", "64", "--layer", "32"]
    app = fixed_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_documents(
            pilot, census_documents(old, new), "census_dist_20261122_070000", "census_b"
        )
        # In the newer job's order; what it dropped, after what came before it on the left.
        assert changed(screen, "trainingInput") == [
            ("args --learning-rate", "0.1", "0.05"),
            ("args --dropout", "0.2", None),
            ("args --verbose", "present", None),
            ("args --layer[0]", None, "64"),
            ("args --layer[1]", None, "32"),
        ]
        text = table_text(screen)
        # At 80 columns the label column is 15 wide: the flag goes under "args", whole.
        assert "args[" not in text
        assert "--learning-rate" in text and "--dropout" in text and "present" in text
        lines = text.splitlines()
        at = next(n for n, line in enumerate(lines) if "--learning-rate" in line)
        assert "0.05" in lines[at] or "0.05" in lines[at - 1]
        assert "Training input · 5 changed · " in text
        await pilot.press("y")
        assert app.clipboard == unified_diff(
            *census_documents(old, new), "census_dist_20261122_070000", "census_b"
        )
        assert "+  - --learning-rate=0.05" in app.clipboard.splitlines()


LONG_TUNING_ID = "mnist_hptuning_20261207_033400"


def long_tuning_app(tmp_path: Path) -> JobsApp:
    """The fixed tuning job under a name as long as a real one: its trials' names
    (``<job>/5``) are longer than a value column at 80 columns."""
    jobs = copy.deepcopy(TUNING_JOBS)
    job = next(j for j in jobs if j["jobId"] == TUNING_ID)
    job["jobId"] = LONG_TUNING_ID
    return JobsApp(
        Settings(refresh_seconds=0.3), lambda: None, "demo-project", "local",  # type: ignore[arg-type,return-value]
        settings_file=tmp_path / "settings.yaml", clock=lambda: FROZEN_NOW,
        source=FixedSource(jobs),
    )  # fmt: skip


@pytest.mark.parametrize("size", [(80, 24), (120, 35)], ids=["80x24", "120x35"])
async def test_trial_headers_keep_what_tells_them_apart(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """At 80 columns both trials' names were ``mnist_hptuning_20261207_0334…``: the column
    titles now shorten the middle the two share, and keep ``/5`` and ``/9``; where they fit
    (120 columns) they are whole."""
    app = long_tuning_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        app.push_screen(DiffScreen.of_trials(LONG_TUNING_ID, "5", "9", "two marked trials"))
        screen = await diff_read(pilot)
        heading = screen.query_one(DiffHeading)
        await wait_for(pilot, lambda: "/9" in heading.render_line(0).text)
        line = heading.render_line(0).text
        field, left, right = (part.strip() for part in line.split("│"))
        assert field == "field"
        assert left.endswith("/5") and right.endswith("/9"), line
        if size[0] == 80:
            assert left.count(ELLIPSIS) == 1 and left.startswith("mnist_hp"), line
            assert left.replace("/5", "") == right.replace("/9", "")
        else:
            assert (left, right) == (f"{LONG_TUNING_ID}/5", f"{LONG_TUNING_ID}/9")
        # The title above names both in full, at any width.
        title = printed(screen.query_one("#diff-title", Static).content)
        assert f"{LONG_TUNING_ID}/5" in title and f"{LONG_TUNING_ID}/9" in title
        # s swaps the names with their columns.
        await pilot.press("s")
        await wait_for(
            pilot, lambda: heading.render_line(0).text.split("│")[1].strip().endswith("/9")
        )
        assert heading.render_line(0).text.split("│")[2].strip().endswith("/5")


@pytest.mark.parametrize("state", ["QUEUED", "PREPARING"])
async def test_a_job_not_started_has_its_facts_not_known_yet(tmp_path: Path, state: str) -> None:
    """A resubmit still QUEUED against the job it came from: its packages and runtime are
    "not known yet", neither drawn as changes nor counted as differences, in the rows, the
    section titles and the summary; its state and its missing run times are differences."""
    args = ["--train-steps", "1000"]
    documents = census_documents(args, args, new_state=state)
    app = fixed_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_documents(
            pilot, documents, "census_dist_20261122_070000", "census_dist_20261122_091000"
        )
        for key in ("packages", "environment"):
            assert changed(screen, key) == []
            assert section(screen, key).pending
        pending = sum(len(s.pending) for s in screen.sections)
        differences = sum(len(s.changed) for s in screen.sections)
        summary = printed(screen.query_one("#diff-summary", Static).content)
        assert f"{differences} differences in " in summary
        assert f"{pending} not known yet" in summary
        text = table_text(screen)
        assert "Packages · 1 not known yet" in text
        assert (
            f"Runtime environment · {len(section(screen, 'environment').pending)} not known" in text
        )
        assert NOT_KNOWN_YET not in text.replace(" not known yet", "")
        assert "unknown" not in text
        await pilot.press("u")
        await wait_for(pilot, lambda: screen.query_one(DiffTable).unchanged)
        unfolded = table_text(screen)
        assert "unknown" not in unfolded and "3f3f" not in unfolded
