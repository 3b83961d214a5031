"""The trials of a tuning job in the detail pane: sorted, best marked, live, enter opens logs.

Fixed tuning jobs (tests/support/fixed_jobs.py TUNING_JOBS) drive the screen deterministically;
one test changes a job's trials between polls to see the table follow them live. The last test
runs a small grid search of the sample trainer on the real service.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from tests.conftest import unique_id
from tests.pilot.conftest import FROZEN_NOW, live_app, wait_for
from tests.pilot.test_logs_screen import log_lines
from tests.support.fixed_jobs import JOBS, TUNING_JOBS, FixedSource
from tests.support.live_service import LiveService, basic_job, grid_search
from tui_app.config.settings import Settings
from tui_app.shell.app import JobsApp
from tui_app.shell.screens.describe_screen import DescribeScreen
from tui_app.shell.screens.logs_screen import ALL, LogsScreen
from tui_app.widgets.trials_table import COLUMNS, TrialsPlot, TrialsSection, TrialsTable

RUNNING_ID = "hptune_20261122_084000"
DONE_ID = "hptune_20261122_075500"
BEST_FIRST = ["5", "9", "10", "7", "3", "8", "1", "6", "2", "4", "11"]


def fixed_app(tmp_path: Path, jobs: list[dict[str, Any]]) -> JobsApp:
    settings = Settings(refresh_seconds=0.3)
    return JobsApp(
        settings, lambda: None, "demo-project", "local",  # type: ignore[arg-type,return-value]
        settings_file=tmp_path / "settings.yaml", clock=lambda: FROZEN_NOW,
        source=FixedSource(jobs),
    )  # fmt: skip


def table_of(app: JobsApp) -> TrialsTable:
    return app.screen.query_one(TrialsTable)


def ids(app: JobsApp) -> list[str]:
    return [r.trial_id for r in table_of(app).shown]


def cell_text(table: TrialsTable, row: int, column: int) -> str:
    return str(table.get_row_at(row)[column]).strip()


async def open_detail(pilot: Any, job_id: str) -> None:
    pilot.app.push_screen(DescribeScreen(job_id))
    await wait_for(pilot, lambda: getattr(pilot.app.screen, "job", None) is not None)
    await pilot.pause(0.05)


async def test_trials_sorted_best_first_and_enter_opens_that_trials_logs(tmp_path: Path) -> None:
    app = fixed_app(tmp_path, copy.deepcopy(TUNING_JOBS))
    async with app.run_test(size=(120, 40)) as pilot:
        await open_detail(pilot, RUNNING_ID)
        section = app.screen.query_one(TrialsSection)
        assert section.display
        # MINIMIZE: lowest objective first; the running trial 10 by its latest value; trials
        # without an objective last, by id.
        assert ids(app) == BEST_FIRST
        table = table_of(app)
        assert [r.best for r in table.shown] == [True] + [False] * 10
        assert cell_text(table, 0, 0) == "★"
        assert cell_text(table, 1, 0) == ""
        assert cell_text(table, 0, 2) == "0.0132"
        assert cell_text(table, 2, 2) == "0.0517…"  # not final: marked as the latest value
        assert cell_text(table, 7, 4) == "✓ SUCCEEDED early"
        assert "goal MINIMIZE rmse" in str(section.caption.content)
        assert "9 completed" in str(section.caption.content)
        # The plot: one point per trial with an objective, the best as a star.
        plot = app.screen.query_one(TrialsPlot)

        def plotted() -> str:
            return "\n".join(plot.render_line(y).text for y in range(plot.size.height))

        await wait_for(pilot, lambda: "★" in plotted(), describe=plotted)  # laid out, drawn
        drawn = plotted()
        assert drawn.count("★") == 1
        assert "0.8871" in drawn and "0.0132" in drawn and "trial 1 → 11" in drawn
        # The summary no longer lists the trials as text; the table replaces it.
        summary = str(app.screen.query_one("#describe-content").render())
        assert "objective 0.0132" not in summary
        # t focuses the table; j moves to the next trial; enter opens its logs.
        await pilot.press("t")
        assert app.focused is table
        await pilot.press("j", "j")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, LogsScreen))
        logs = app.screen
        assert isinstance(logs, LogsScreen)
        assert (logs.job_id, logs.trial) == (RUNNING_ID, "10")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, DescribeScreen))
        assert table_of(app).cursor_row == 2


async def test_maximize_goal_puts_the_highest_first(tmp_path: Path) -> None:
    app = fixed_app(tmp_path, copy.deepcopy(TUNING_JOBS))
    async with app.run_test(size=(80, 24)) as pilot:
        await open_detail(pilot, DONE_ID)
        assert ids(app) == ["2", "3", "1"]
        assert table_of(app).shown[0].best
        await pilot.press("t")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, LogsScreen))
        assert app.screen.trial == "2"  # type: ignore[attr-defined]


async def test_table_follows_the_trials_live_and_keeps_the_cursor(tmp_path: Path) -> None:
    jobs = copy.deepcopy(TUNING_JOBS)
    app = fixed_app(tmp_path, jobs)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_detail(pilot, RUNNING_ID)
        await pilot.press("t", "j")  # on trial 9
        assert ids(app)[table_of(app).cursor_row] == "9"
        # Trial 10 finishes with the best objective yet; trial 11 reports a first value; a new
        # trial 12 starts.
        trials = jobs[0]["trainingOutput"]["trials"]
        trials[9].update(
            state="SUCCEEDED",
            endTime="2026-11-22T09:29:50Z",
            finalMetric={"trainingStep": "1000", "objectiveValue": 0.0101},
        )
        trials[10]["allMetrics"] = [{"trainingStep": "100", "objectiveValue": 0.5}]
        trials.append({"trialId": "12", "state": "RUNNING", "startTime": "2026-11-22T09:29:55Z"})
        jobs[0]["trainingOutput"]["completedTrialCount"] = "10"
        await wait_for(pilot, lambda: ids(app)[:1] == ["10"], describe=lambda: str(ids(app)))
        table = table_of(app)
        assert ids(app) == ["10", "5", "9", "7", "3", "8", "1", "11", "6", "2", "4", "12"]
        assert [r.trial_id for r in table.shown if r.best] == ["10"]
        assert ids(app)[table.cursor_row] == "9"  # the cursor stayed on its trial
        caption = str(app.screen.query_one(TrialsSection).caption.content)
        assert caption.startswith("12 trials, 10 completed")


async def test_not_a_tuning_job_has_no_trials_section(tmp_path: Path) -> None:
    app = fixed_app(tmp_path, [*copy.deepcopy(JOBS), *copy.deepcopy(TUNING_JOBS)])
    async with app.run_test(size=(80, 24)) as pilot:
        await open_detail(pilot, "census_dist_20261122_070000")
        assert not app.screen.query_one(TrialsSection).display
        assert app.screen.check_action("trials", ()) is False
        await pilot.press("t")  # nothing to focus: nothing happens
        assert isinstance(app.screen, DescribeScreen)


async def test_yaml_view_hides_the_trials(tmp_path: Path) -> None:
    app = fixed_app(tmp_path, copy.deepcopy(TUNING_JOBS))
    async with app.run_test(size=(80, 24)) as pilot:
        await open_detail(pilot, RUNNING_ID)
        shown = [app.screen.query_one(TrialsSection).display]
        for _ in range(2):
            await pilot.press("y")
            await pilot.pause(0.05)
            shown.append(app.screen.query_one(TrialsSection).display)
        assert shown == [True, False, True]


# -- against the real service ---------------------------------------------------------------

QUICK = ("--steps", "20", "--checkpoint-every", "10")


async def test_live_grid_search_fills_the_table_and_opens_a_trials_logs(
    service: LiveService, package_uri: str, tmp_path: Path
) -> None:
    """A 3-point grid of the sample trainer: the table fills in while the job runs, ends with
    every trial SUCCEEDED, best first by the service's own metrics, and enter on the best
    trial opens a log pane holding only that trial's lines."""
    job_id = unique_id("trials")
    hp = grid_search("learning_rate", [0.02, 0.05, 0.1])
    service.client().create(basic_job(job_id, package_uri, *QUICK, hyperparameters=hp))
    app = live_app(service, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        app.push_screen(DescribeScreen(job_id))
        await wait_for(pilot, lambda: isinstance(app.screen, DescribeScreen))
        screen = app.screen
        assert isinstance(screen, DescribeScreen)
        seen: set[int] = set()

        def finished() -> bool:
            if not screen.query(TrialsTable) or not screen.query_one(TrialsSection).display:
                return False
            rows = table_of(app).shown
            seen.add(len(rows))
            return len(rows) == 3 and all(r.state == "SUCCEEDED" for r in rows)

        await wait_for(pilot, finished, timeout=90, describe=lambda: str(table_of(app).shown))
        assert min(seen) < 3  # it filled in live, trial by trial
        job = service.client().get(job_id)
        by_objective = sorted(
            job["trainingOutput"]["trials"],
            key=lambda t: (t["finalMetric"]["objectiveValue"], int(t["trialId"])),
        )
        rows = table_of(app).shown
        assert ids(app) == [t["trialId"] for t in by_objective]
        assert [r.best for r in rows] == [True, False, False]
        assert {r.hyperparameters for r in rows} == {
            "learning_rate=0.02",
            "learning_rate=0.05",
            "learning_rate=0.1",
        }
        best = rows[0].trial_id
        await pilot.press("t", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, LogsScreen))
        logs = app.screen
        assert isinstance(logs, LogsScreen) and logs.trial == best
        view = logs.view(ALL)
        await wait_for(pilot, lambda: bool(log_lines(view)), timeout=30)
        assert {line.trial_id for line in log_lines(view)} == {best}


async def test_where_trials_wrote_and_who_shared_a_directory(tmp_path: Path) -> None:
    jobs = copy.deepcopy(TUNING_JOBS)
    done = next(j for j in jobs if j["jobId"] == DONE_ID)
    done["trainingInput"]["jobDir"] = "gs://bucket/hptune"
    trials = {t["trialId"]: t for t in done["trainingOutput"]["trials"]}
    trials["1"]["output"] = {"directory": "gs://bucket/hptune/1/", "objects": 3}
    trials["2"]["output"] = {"directory": "gs://bucket/hptune/", "sharedWith": ["3"]}
    trials["3"]["output"] = {"directory": "gs://bucket/hptune/", "sharedWith": ["2"]}
    trials["3"].pop("finalMetric", None)
    app = fixed_app(tmp_path, jobs)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_detail(pilot, DONE_ID)
        table = table_of(app)
        await wait_for(pilot, lambda: table.with_output)
        rows = {cell_text(table, i, 1): i for i in range(table.row_count)}
        output = COLUMNS.index("Output")
        assert cell_text(table, rows["1"], output) == "1/"
        assert cell_text(table, rows["2"], output) == "job dir ⚠ shared with 3"
        assert cell_text(table, rows["3"], 2) == "no metric"
    # A job whose backend says nothing of outputs has no Output column.
    app = fixed_app(tmp_path, copy.deepcopy(TUNING_JOBS))
    async with app.run_test(size=(120, 40)) as pilot:
        await open_detail(pilot, DONE_ID)
        assert not table_of(app).with_output
        assert "Output" not in [str(c.label) for c in table_of(app).columns.values()]


async def test_at_80_columns_the_trials_parameter_values_are_in_view(tmp_path: Path) -> None:
    """Issue 40: at 80 columns the hyperparameter column was cut to `Hyp` / `lea`. The
    parameters now follow the state, their names in the header, their values in the cells."""
    app = fixed_app(tmp_path, copy.deepcopy(TUNING_JOBS))
    async with app.run_test(size=(80, 24)) as pilot:
        await open_detail(pilot, RUNNING_ID)
        table = table_of(app)
        column = COLUMNS.index("Hyperparameters")
        header = str(table.ordered_columns[column].label)
        row = table.shown[0]
        assert header == ", ".join(name for name, _ in row.params)
        assert cell_text(table, 0, column) == ", ".join(value for _, value in row.params)
        # The whole column ends inside the 80 columns (its region, less the table's own border).
        end = sum(c.get_render_width(table) for c in table.ordered_columns[: column + 1])
        assert end <= table.size.width, (end, table.size.width)
