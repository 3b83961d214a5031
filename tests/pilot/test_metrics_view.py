"""The metrics view (issue 26): its ways in, its keys, the tag picker, the layout by width, a
live job's new points, and a tuning job's overlay with the best trial marked.

Fixed jobs (tests/support/fixed_jobs.py) and fixed or test-fed curves
(tests/support/fixed_scalars.py) drive the screen deterministically; the real service and the
sample trainer's event files are in tests/pilot/test_metrics_live.py.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from rich.console import Console
from textual.command import CommandList, CommandPalette
from textual.widgets import Input, Static

from tests.pilot.conftest import FROZEN_NOW, raised_toasts, wait_for
from tests.support.fixed_jobs import JOBS, TUNING_JOBS, FixedSource
from tests.support.fixed_scalars import MNIST_ID, START, TUNING_ID, FedScalars, FixedScalars
from tui_app.config.settings import Settings
from tui_app.model.metrics.metric_goals import ranked_trials
from tui_app.model.metrics.metric_series import SeriesKey
from tui_app.model.views.trials import final_objectives
from tui_app.shell.app import JobsApp
from tui_app.shell.screens.describe_screen import DescribeScreen
from tui_app.shell.screens.help_screen import HelpScreen
from tui_app.shell.screens.jobs_screen import JobsScreen
from tui_app.shell.screens.logs_screen import LogsScreen
from tui_app.shell.screens.metrics_screen import MetricsScreen
from tui_app.shell.screens.prompt_screen import PromptScreen
from tui_app.widgets.job_table import JobTable
from tui_app.widgets.metric_chart import MetricChart
from tui_app.widgets.tag_picker import TagPicker
from tui_app.widgets.trials_table import TrialsTable

MNIST_TAGS = ["epoch_accuracy", "epoch_loss", "lr"]


def make_app(tmp_path: Path, scalars: Any = None) -> JobsApp:
    return JobsApp(
        Settings(refresh_seconds=0.3), lambda: None, "demo-project", "local",  # type: ignore[arg-type,return-value]
        settings_file=tmp_path / "settings.yaml", clock=lambda: FROZEN_NOW,
        source=FixedSource([*JOBS, *TUNING_JOBS]), scalars=scalars or FixedScalars(),
    )  # fmt: skip


def metrics(app: JobsApp) -> MetricsScreen:
    screen = app.screen
    assert isinstance(screen, MetricsScreen), screen
    return screen


def charts(app: JobsApp) -> list[MetricChart]:
    return metrics(app).charts()


def drawn(chart: MetricChart) -> str:
    return "\n".join(chart.render_line(y).text for y in range(chart.size.height))


async def opened(pilot: Any, job_id: str, trial: str | None = None) -> MetricsScreen:
    """Wait until the metrics view of ``job_id`` has read its curves and drawn them."""
    app = pilot.app

    def ready() -> bool:
        screen = app.screen
        return (
            isinstance(screen, MetricsScreen)
            and (screen.job_id, screen.trial) == (job_id, trial)
            and screen.polls > 0
            and all(c.builds for c in screen.charts())
        )

    await wait_for(pilot, ready, describe=lambda: f"on {app.screen!r}")
    return metrics(app)


async def on_the_list(pilot: Any, job_id: str) -> None:
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen) and bool(app.last_rows))
    table = app.screen.query_one(JobTable)
    await wait_for(pilot, lambda: table.move_to_key(job_id) and table.cursor_key == job_id)


async def test_m_on_the_list_opens_the_job_under_the_cursor(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 35)) as pilot:
        await on_the_list(pilot, MNIST_ID)
        await pilot.press("M")
        screen = await opened(pilot, MNIST_ID)
        # Until the user picks, the first tags in TensorBoard's order, as small multiples.
        assert screen.shown == MNIST_TAGS
        assert [c.tag for c in charts(app)] == MNIST_TAGS
        assert list(screen.query_one(TagPicker).tags) == MNIST_TAGS
        # Each series is named by its run and says its source.
        loss = charts(app)[1]
        assert [line.label for line in loss.lines] == ["train", "validation"]
        assert {line.source for line in loss.lines} == {"events"}
        text = drawn(loss)
        assert "epoch_loss · events" in text
        # The legend: last, min and max of each series, and the validation's NaN and inf.
        assert "1 NaN" in text and "1 inf" in text
        assert "×" in text  # the non-finite values' marks on the x axis
        sources = str(screen.query_one("#metrics-sources").render())
        assert "2 event files under gs://demo-bucket/mnist_20261122_083000" in sources
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen))


async def test_m_on_the_detail_and_on_a_trial_row_and_enter_keeps_opening_logs(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        app.push_screen(DescribeScreen(TUNING_ID))
        await wait_for(pilot, lambda: getattr(app.screen, "job", None) is not None)
        await pilot.press("M")
        screen = await opened(pilot, TUNING_ID)
        assert screen.trial is None
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, DescribeScreen))
        # On the trials table M is the trial's own view; enter keeps opening its logs.
        await pilot.press("t")
        table = app.screen.query_one(TrialsTable)
        await wait_for(pilot, lambda: app.focused is table)
        await pilot.press("j")  # the second best, trial 9
        await pilot.press("M")
        screen = await opened(pilot, TUNING_ID, "9")
        assert [line.label for c in charts(app) for line in c.lines] == ["hypertune"]
        assert "trial 9" in str(screen.query_one("#metrics-title").render())
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, DescribeScreen))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, LogsScreen))
        assert app.screen.trial == "9"  # type: ignore[attr-defined]


async def test_the_metrics_command_with_and_without_an_id(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await on_the_list(pilot, MNIST_ID)
        await pilot.press("colon", *"metrics", "enter")
        await opened(pilot, MNIST_ID)
        await pilot.press("escape")
        await pilot.press("colon", *f"metrics {TUNING_ID}", "enter")
        await opened(pilot, TUNING_ID)


async def test_smoothing_log_y_x_axis_and_zoom_keys(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_metrics(MNIST_ID)
        screen = await opened(pilot, MNIST_ID)
        (chart,) = charts(app)
        assert chart.options.smoothing == 0.6  # TensorBoard's default
        # s asks for the weight, starting at the current one.
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen))
        await pilot.press("backspace", "backspace", "backspace", *"0.95", "enter")
        await wait_for(pilot, lambda: chart.options.smoothing == 0.95)
        assert "smooth 0.95" in str(screen.query_one("#metrics-title").render())
        # A weight outside 0-0.99 is refused, saying why.
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen))
        await pilot.press("backspace", "backspace", "backspace", "backspace", "1", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, MetricsScreen))
        assert chart.options.smoothing == 0.95
        assert any("0 to 0.99" in n.message for n in raised_toasts(app))
        # 0: the raw curve alone, no faint dots behind it.
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen))
        await pilot.press(*["backspace"] * 4, "0", "enter")
        await wait_for(pilot, lambda: chart.options.smoothing == 0)
        await pilot.pause()
        assert "·" not in drawn(chart).split("\n", 1)[1].rsplit("┤", 1)[0]
        # L: log y; ticks are then decades.
        await pilot.press("L")
        await wait_for(pilot, lambda: chart.options.log_y)
        assert "log y" in str(screen.query_one("#metrics-title").render())
        await pilot.press("L")
        # x: step, then wall time (local, HH:MM:SS), then time since the start, then step.
        await pilot.press("x")
        await wait_for(pilot, lambda: chart.options.x_axis == "wall")
        await pilot.pause()
        assert "09:00:00" in drawn(chart)
        await pilot.press("x")
        await wait_for(pilot, lambda: chart.options.x_axis == "relative")
        await pilot.pause()
        assert "10m" in drawn(chart)
        await pilot.press("x")
        await wait_for(pilot, lambda: chart.options.x_axis == "step")
        # z: the last N steps (1000 offered); Z: everything again.
        await pilot.press("z")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen))
        await pilot.press(*["backspace"] * 4, *"200", "enter")
        await wait_for(pilot, lambda: chart.options.last_steps == 200)
        await pilot.pause()
        axis = drawn(chart)
        assert "900" in axis and "500" not in axis
        await pilot.press("Z")
        await wait_for(pilot, lambda: chart.options.last_steps is None)
        await pilot.pause()
        assert "500" in drawn(chart)


async def test_a_refresh_reuses_the_drawing_and_an_option_rebuilds_it(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_metrics(MNIST_ID)
        await opened(pilot, MNIST_ID)
        (chart,) = charts(app)
        builds = chart.builds
        chart.refresh()
        await pilot.pause()
        assert chart.builds == builds
        await pilot.press("L")
        await wait_for(pilot, lambda: chart.builds == builds + 1)


async def test_filter_mark_and_show_tags(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 35)) as pilot:
        app.open_metrics(MNIST_ID)
        screen = await opened(pilot, MNIST_ID)
        picker = screen.query_one(TagPicker)
        await pilot.press("slash", *"LOSS")  # case-insensitive
        await wait_for(pilot, lambda: list(picker.tags) == ["epoch_loss"])
        await pilot.press("backspace", "backspace", "backspace", "backspace", *"^e.*y$")
        await wait_for(pilot, lambda: list(picker.tags) == ["epoch_accuracy"])
        await pilot.press(*["backspace"] * 6, "(")  # not a regex yet: a substring
        await wait_for(pilot, lambda: list(picker.tags) == [])
        await pilot.press("backspace", "enter")  # enter: back to the list
        await wait_for(pilot, lambda: app.focused is picker)
        # space marks (a group line marks its tags); enter charts the marked tags.
        assert picker.move_to_tag("lr")
        await pilot.press("space")
        assert picker.move_to_tag("epoch_accuracy")
        await pilot.press("space", "enter")
        await wait_for(pilot, lambda: [c.tag for c in charts(app)] == ["epoch_accuracy", "lr"])
        assert not picker.marked
        # enter without marks: the tag under the cursor alone, across both columns.
        assert picker.move_to_tag("epoch_loss")
        await pilot.press("enter")
        await wait_for(pilot, lambda: [c.tag for c in charts(app)] == ["epoch_loss"])
        assert charts(app)[0].has_class("-span")


async def test_small_multiples_when_wide_one_chart_when_narrow(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 35)) as pilot:
        app.open_metrics(MNIST_ID)
        screen = await opened(pilot, MNIST_ID)
        assert len(charts(app)) == 3
        first, second = charts(app)[:2]
        assert first.region.y == second.region.y and first.region.x < second.region.x
        await pilot.resize_terminal(80, 24)
        await wait_for(pilot, lambda: len(charts(app)) == 1)
        assert screen.has_class("-narrow")
        assert charts(app)[0].tag == "epoch_accuracy"
        # ] and [ step through the charted tags, one at a time.
        await pilot.press("right_square_bracket")
        await wait_for(pilot, lambda: charts(app)[0].tag == "epoch_loss")
        await pilot.press("left_square_bracket", "left_square_bracket")
        await wait_for(pilot, lambda: charts(app)[0].tag == "lr")
        widgets = set(screen.query(MetricChart))
        assert len(widgets) == 3  # the two not shown are kept, hidden
        await pilot.resize_terminal(130, 35)
        await wait_for(pilot, lambda: len(charts(app)) == 3)
        assert charts(app)[2].has_class("-current")  # the keys stay on lr
        assert set(charts(app)) == widgets  # shown again, not made again
        await wait_for(pilot, lambda: all(drawn(chart).strip() for chart in charts(app)))


async def test_with_one_tag_charted_brackets_page_through_every_tag(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_metrics(MNIST_ID)
        screen = await opened(pilot, MNIST_ID)
        picker = screen.query_one(TagPicker)
        assert picker.move_to_tag("epoch_loss")
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.shown == ["epoch_loss"])
        await pilot.press("right_square_bracket")
        await wait_for(pilot, lambda: charts(app)[0].tag == "lr")
        assert picker.cursor_tag == "lr"
        await pilot.press("right_square_bracket")  # wraps around
        await wait_for(pilot, lambda: charts(app)[0].tag == "epoch_accuracy")


async def test_a_live_jobs_new_points_appear_and_the_poll_stops_after_it_ends(
    tmp_path: Path,
) -> None:
    fed = FedScalars(next(j for j in JOBS if j["jobId"] == MNIST_ID))
    key = SeriesKey("logs", "master-replica-0", "loss")
    fed.add(key, [1, 2, 3], [0.9, 0.7, 0.6])
    app = make_app(tmp_path, fed)
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_metrics(MNIST_ID)
        screen = await opened(pilot, MNIST_ID)
        (chart,) = charts(app)
        assert chart.lines[0].series.last_step == 3
        assert "last 0.6" in drawn(chart)
        # The trainer prints more: the chart follows at the next poll.
        fed.add(key, [4, 5], [0.5, 0.25])
        await wait_for(pilot, lambda: chart.lines[0].series.last_step == 5)
        await wait_for(pilot, lambda: "last 0.25" in drawn(chart))
        # A new tag arrives: the picker lists it and, the user not having picked, a chart.
        fed.add(SeriesKey("logs", "master-replica-0", "accuracy"), [5], [0.8])
        await wait_for(
            pilot, lambda: list(screen.query_one(TagPicker).tags) == ["accuracy", "loss"]
        )
        # The job ends: one more read, then no more.
        fed.end()
        await wait_for(pilot, lambda: screen.ended)
        polls = fed.polls
        assert fed.ended_polls == 1
        await wait_for(pilot, lambda: not screen.polling)
        assert fed.polls == polls
        assert "SUCCEEDED" in str(screen.query_one("#metrics-title").render())


async def test_a_tuning_jobs_view_overlays_every_trial_the_best_marked(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 35)) as pilot:
        app.open_metrics(TUNING_ID)
        screen = await opened(pilot, TUNING_ID)
        # Opens on the goal metric (hyperparameterMetricTag), every trial's curve on one chart.
        assert screen.shown == ["rmse"]
        (chart,) = charts(app)
        roles = {line.label: line.role for line in chart.lines}
        # MINIMIZE over finished trials: trial 5 (0.0132); trial 10 runs, so it cannot win.
        assert roles["★ trial 5"] == "best"
        assert {role for label, role in roles.items() if label != "★ trial 5"} == {"faint"}
        assert len(roles) == 9  # trials 4 (failed) and 11 reported nothing
        text = drawn(chart)
        legend = text.split("\n")[-4:]
        assert legend[0].startswith("▚ ★ trial 5")  # the legend names it first
        # Issue 40: then the trials nearest the best by the goal, not trials 1 and 2.
        job = next(j for j in TUNING_JOBS if j["jobId"] == TUNING_ID)
        ranked = ranked_trials(final_objectives(job), "MINIMIZE")
        assert ranked[0] == "5"
        assert [line.split()[2] for line in legend[1:3]] == ranked[1:3]
        # Each with a marker of its own: told apart without colour.
        assert len({line.split()[0] for line in legend[:3]}) == 3
        assert "+ 6 more" in text
        title = str(screen.query_one("#metrics-title").render())
        assert "goal MINIMIZE rmse" in title and "★ trial 5" in title
        # Told apart without colour: the best in quadrant blocks, the others in braille.
        plot = text.split("\n")[1:-4]
        assert any(ch in line for line in plot for ch in "▖▗▘▝▚▞▌▐▄▀█▙▛▜▟")
        assert any("\u2800" < ch <= "\u28ff" for line in plot for ch in line)


async def test_t_picks_a_trial_and_enter_opens_its_own_tags(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 35)) as pilot:
        app.open_metrics(TUNING_ID)
        screen = await opened(pilot, TUNING_ID)
        await pilot.press("t")
        await wait_for(pilot, lambda: _picker(app) is not None)
        items = _picker(app).items
        assert items[0].startswith("★ trial 5  0.0132")  # the best first
        assert any(i.strip() == "trial 10  running" for i in items)
        assert any(i.strip() == "trial 4  no metric" for i in items)  # it failed
        await pilot.press("down", "enter")  # the next trial, by id
        chosen = items[1].split()[1]
        trial_view = await opened(pilot, TUNING_ID, chosen)
        assert trial_view is not screen
        # A plain job's view has no trials to pick: the key does nothing there.
        await pilot.press("escape", "escape")
        app.open_metrics(MNIST_ID)
        await opened(pilot, MNIST_ID)
        await pilot.press("t")
        await pilot.pause()
        assert _picker(app) is None


def _picker(app: JobsApp) -> Any:
    from tui_app.shell.screens.picker_screen import PickerScreen

    return app.screen if isinstance(app.screen, PickerScreen) else None


async def test_ten_thousand_tags_stay_usable(tmp_path: Path) -> None:
    fed = FedScalars(next(j for j in JOBS if j["jobId"] == MNIST_ID))
    for i in range(10_000):
        fed.add(SeriesKey("events", "train", f"layer_{i // 10:04d}/stat_{i % 10}"), [1], [0.5])
    app = make_app(tmp_path, fed)
    async with app.run_test(size=(120, 35)) as pilot:
        app.open_metrics(MNIST_ID)
        screen = await opened(pilot, MNIST_ID)
        picker = screen.query_one(TagPicker)
        assert len(picker.tags) == 10_000
        assert len(charts(app)) == 4  # the first four, not ten thousand charts
        await pilot.press("slash", *"layer_0999/")
        await wait_for(pilot, lambda: len(picker.tags) == 10)
        await pilot.press("enter", "end")
        assert picker.cursor_tag == "layer_0999/stat_9"


async def test_a_zoom_is_of_the_chart_not_of_each_series(tmp_path: Path) -> None:
    """A run counting epochs (last step 30) beside one at step 1000: zoomed to the last 200
    steps, the axis is 810-1000 (steps after 800), and the epoch run, all before it, is not
    drawn."""
    fed = FedScalars(next(j for j in JOBS if j["jobId"] == MNIST_ID))
    fed.add(SeriesKey("events", "train", "loss"), list(range(0, 1001, 10)), [1.0] * 101)
    fed.add(SeriesKey("events", "epochs", "loss"), list(range(31)), [2.0] * 31)
    app = make_app(tmp_path, fed)
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_metrics(MNIST_ID)
        screen = await opened(pilot, MNIST_ID)
        screen.last_steps = 200
        (chart,) = charts(app)
        await wait_for(pilot, lambda: chart.options.last_steps == 200)
        await pilot.pause()
        labels = drawn(chart).split("\n")[-3].split()  # under the axis, above the legend
        assert labels[-1] == "1k" and all(int(t) > 800 for t in labels[:-1]), labels
        # The epoch run's steps are all before the zoom: only the train line is drawn.
        assert "last 1" in drawn(chart) and "epochs" in drawn(chart)


async def test_printed_metrics_give_way_to_event_files(tmp_path: Path) -> None:
    """Log lines read before the first event file existed: once events give points, the
    printed curve (the same numbers) is no longer drawn, nor a tag only it had; the legend
    names Keras' runs without the folder they share."""
    fed = FedScalars(next(j for j in JOBS if j["jobId"] == MNIST_ID))
    fed.add(SeriesKey("logs", "master-replica-0", "loss"), [1, 2, 3], [3.0, 2.0, 1.0])
    fed.add(SeriesKey("logs", "master-replica-0", "lr"), [1, 2, 3], [0.1, 0.1, 0.1])
    app = make_app(tmp_path, fed)
    async with app.run_test(size=(120, 35)) as pilot:
        app.open_metrics(MNIST_ID)
        screen = await opened(pilot, MNIST_ID)
        await wait_for(pilot, lambda: screen._all_tags == ["loss", "lr"])
        for run in ("keras_tensorboard/train", "keras_tensorboard/validation"):
            fed.add(SeriesKey("events", run, "loss"), [1, 2, 3], [2.5, 1.5, 0.5])
        await wait_for(pilot, lambda: screen._all_tags == ["loss"])
        await wait_for(pilot, lambda: len(charts(app)) == 1)  # lr's chart is being removed
        (chart,) = charts(app)
        await wait_for(pilot, lambda: "validation" in drawn(chart))
        text = drawn(chart)
        assert "master-replica-0" not in text and "keras_tensorboard" not in text
        assert "train" in text


async def test_a_curve_of_nothing_but_inf_still_marks_where(tmp_path: Path) -> None:
    """A loss that blew up at once: no finite value to draw, but the x axis carries its marks
    and the legend counts them."""
    fed = FedScalars(next(j for j in JOBS if j["jobId"] == MNIST_ID))
    inf = float("inf")
    fed.add(SeriesKey("events", "train", "loss"), [10, 20, 30], [inf, inf, float("nan")])
    app = make_app(tmp_path, fed)
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_metrics(MNIST_ID)
        await opened(pilot, MNIST_ID)
        text = drawn(charts(app)[0])
        plot, legend = text.split("\n")[1:-1], text.split("\n")[-1]
        assert sum(line.count("×") for line in plot) == 3
        # Issue 40: not "last nan" for a run with no curve; an event file's inf is float32's.
        assert "no finite value  1 NaN  2 inf past float32" in legend
        assert "only NaN/inf in view" in text.split("\n")[0]


async def test_help_and_the_palette_list_the_views_keys_and_a_keymap_remaps_them(
    tmp_path: Path,
) -> None:
    app = JobsApp(
        Settings(keymap={"metrics.log-y": "y"}), lambda: None, "demo-project", "local",  # type: ignore[arg-type,return-value]
        settings_file=tmp_path / "settings.yaml", clock=lambda: FROZEN_NOW,
        source=FixedSource([*JOBS, *TUNING_JOBS]), scalars=FixedScalars(),
    )  # fmt: skip
    async with app.run_test(size=(120, 40)) as pilot:
        app.open_metrics(MNIST_ID)
        screen = await opened(pilot, MNIST_ID)
        helps = {c.title: c.help for c in app.get_system_commands(app.screen)}
        assert helps["Log y"] == "Key: y · A log scale for the values"
        assert helps["Smoothing"].startswith("Key: s · 0 to 0.99")
        assert helps["Zoom"].startswith("Key: z") and helps["All steps"].startswith("Key: Z")
        await pilot.press("y")  # the remapped key
        await wait_for(pilot, lambda: screen.log_y)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        console = Console(width=200, record=True, file=io.StringIO())
        console.print(app.screen.query_one("#help-content", Static).content)
        text = console.export_text()
        assert "Keys on a job's metrics" in str(app.screen.query_one("#help-title").render())
        for binding_id in (
            "metrics.smoothing",
            "metrics.x-axis",
            "metrics.zoom",
            "tag-picker.mark",
        ):
            assert binding_id in text, binding_id


def help_rows(app: JobsApp) -> set[tuple[str, ...]]:
    """The rows ``?`` lists: (where, key, what it does, binding id), as shown."""
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(app.screen.query_one("#help-content", Static).content)
    return {
        tuple(cell.strip() for cell in line.split("│"))
        for line in console.export_text().splitlines()
        if "│" in line
    }


async def metrics_from_the_palette(pilot: Any) -> None:
    """Open the command palette, find its Metrics entry by what it says, and run it."""
    app = pilot.app
    await pilot.press("ctrl+p")
    await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
    # The search as typed, in one go: a key at a time searches seven times.
    app.screen.query_one(Input).value = "metrics"
    options = app.screen.query_one(CommandList)

    def entry() -> int | None:
        for i in range(options.option_count):
            prompt = str(options.get_option_at_index(i).prompt)
            if prompt.startswith("Metrics") and "Key: M · Live metric curves" in prompt:
                return i
        return None

    await wait_for(pilot, lambda: entry() is not None, describe=lambda: "no Metrics entry")
    options.highlighted = entry()
    await pilot.press("enter")


async def test_help_and_the_palette_offer_m_on_the_list_and_on_the_detail(
    tmp_path: Path,
) -> None:
    """The metrics view is found where its key works: ``?`` and the command palette name ``M``
    on the job list and on a job's detail (and, there, the trials table's ``M`` for one
    trial's curves); the palette's entry opens the view of the job the user is on."""
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await on_the_list(pilot, MNIST_ID)
        helps = {c.title: c.help for c in app.get_system_commands(app.screen)}
        assert helps["Metrics"] == "Key: M · Live metric curves"
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        assert ("Jobs", "M", "Metrics — Live metric curves", "jobs.metrics") in help_rows(app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen))
        await metrics_from_the_palette(pilot)
        await opened(pilot, MNIST_ID)
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen))

        app.push_screen(DescribeScreen(TUNING_ID))
        await wait_for(pilot, lambda: getattr(app.screen, "job", None) is not None)
        helps = {c.title: c.help for c in app.get_system_commands(app.screen)}
        assert helps["Metrics"] == "Key: M · Live metric curves"
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        rows = help_rows(app)
        assert ("Describe", "M", "Metrics — Live metric curves", "describe.metrics") in rows
        assert ("TrialsTable", "M", "Trial metrics — This trial's curves", "trials.metrics") in rows
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, DescribeScreen))
        await metrics_from_the_palette(pilot)
        screen = await opened(pilot, TUNING_ID)
        assert screen.trial is None


async def test_z_and_s_offer_their_value_selected_so_typing_replaces_it(tmp_path: Path) -> None:
    """Issue 40: `z` then `50` gave 100050. The offer is selected (typing replaces it), and
    `z` offers half of what is shown, so enter alone changes the chart."""
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 35)) as pilot:
        app.open_metrics(MNIST_ID)
        screen = await opened(pilot, MNIST_ID)
        (chart,) = charts(app)[:1]
        span = screen._step_span()
        assert span is not None
        await pilot.press("z")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen))
        box = app.screen.query_one(Input)
        offered = int(box.value)
        assert offered <= span / 2 and box.selected_text == box.value
        await pilot.press("5", "0", "enter")
        await wait_for(pilot, lambda: chart.options.last_steps == 50)
        await pilot.press("z")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen))
        assert app.screen.query_one(Input).value == "20"  # half of the 50 in force
        await pilot.press("enter")
        await wait_for(pilot, lambda: chart.options.last_steps == 20)
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen))
        await pilot.press("0", ".", "3", "enter")
        await wait_for(pilot, lambda: chart.options.smoothing == 0.3)


async def test_j_and_k_move_in_the_trials_picker(tmp_path: Path) -> None:
    """Issue 40: in the metrics view's `t` picker only the arrows moved; README says j/k
    work everywhere."""
    from textual.widgets import OptionList

    app = make_app(tmp_path)
    async with app.run_test(size=(120, 35)) as pilot:
        app.open_metrics(TUNING_ID)
        await opened(pilot, TUNING_ID)
        await pilot.press("t")
        await wait_for(pilot, lambda: _picker(app) is not None)
        options = app.screen.query_one(OptionList)
        assert options.highlighted == 0
        await pilot.press("j", "j")
        assert options.highlighted == 2
        await pilot.press("k")
        assert options.highlighted == 1
        await pilot.press("G")
        assert options.highlighted == options.option_count - 1
        await pilot.press("g")
        assert options.highlighted == 0


async def test_curves_squeezed_flat_on_a_linear_axis_suggest_log_y(tmp_path: Path) -> None:
    """Issue 40: three near-equal trials collapsed into one flat line at 0 under a large one,
    with no word that L would tell them apart."""
    fed = FedScalars(next(j for j in JOBS if j["jobId"] == MNIST_ID))
    steps = list(range(0, 101, 10))
    fed.add(SeriesKey("events", "a", "loss"), steps, [1000.0 / (s + 1) for s in steps])
    for run, scale in (("b", 0.010), ("c", 0.011), ("d", 0.012)):
        fed.add(SeriesKey("events", run, "loss"), steps, [scale * (1 + 1 / (s + 1)) for s in steps])
    app = make_app(tmp_path, fed)
    async with app.run_test(size=(120, 35)) as pilot:
        app.open_metrics(MNIST_ID)
        screen = await opened(pilot, MNIST_ID)
        (chart,) = charts(app)
        assert "squeezed: L for log y" in drawn(chart).split("\n")[0]
        screen.log_y = True
        await wait_for(pilot, lambda: chart.options.log_y)
        await pilot.pause()
        assert "squeezed" not in drawn(chart).split("\n")[0]


async def test_the_header_keeps_the_options_whole_at_80_columns(tmp_path: Path) -> None:
    """Issue 40: the header was cut at `smooth 0…`, hiding the axis and log state."""
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_metrics(TUNING_ID)
        screen = await opened(pilot, TUNING_ID)
        screen.log_y = True
        screen.last_steps = 50
        await pilot.pause()
        title = str(screen.query_one("#metrics-title").render()).strip()
        assert title.endswith("smooth 0.6 · x step · log y · last 50 steps"), title
        assert "RUNNING" in title and len(title) <= 78  # the chart's legend names the best


async def test_esc_clears_the_tag_filter_before_it_leaves(tmp_path: Path) -> None:
    """Issue 40: esc did not clear the tag filter (the list's esc clears its own)."""
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 35)) as pilot:
        app.open_metrics(MNIST_ID)
        screen = await opened(pilot, MNIST_ID)
        picker = screen.query_one(TagPicker)
        await pilot.press("slash", *"loss")
        await wait_for(pilot, lambda: list(picker.tags) == ["epoch_loss"])
        await pilot.press("enter", "escape")
        await wait_for(pilot, lambda: len(picker.tags) == len(MNIST_TAGS))
        assert screen.query_one("#metrics-filter", Input).value == ""
        assert app.screen is screen
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is not screen)


async def test_charts_side_by_side_line_up_row_for_row(tmp_path: Path) -> None:
    """Issue 40: at 120 columns the second chart's plot sat a row lower when the two
    legends differed in height."""
    fed = FedScalars(next(j for j in JOBS if j["jobId"] == MNIST_ID))
    fed.add(SeriesKey("events", "train", "loss"), [1, 2, 3], [3.0, 2.0, 1.0])
    fed.add(SeriesKey("events", "eval", "loss"), [1, 2, 3], [3.5, 2.5, 1.5])
    fed.add(SeriesKey("events", "train", "lr"), [1, 2, 3], [0.1, 0.1, 0.05])
    app = make_app(tmp_path, fed)
    async with app.run_test(size=(120, 35)) as pilot:
        app.open_metrics(MNIST_ID)
        await opened(pilot, MNIST_ID)
        left, right = charts(app)[:2]
        await pilot.pause()
        axis_row = [
            next(i for i, line in enumerate(drawn(c).split("\n")) if "└" in line)
            for c in (left, right)
        ]
        assert axis_row[0] == axis_row[1]
        assert left.region.y == right.region.y


async def test_a_resumed_trainers_curve_is_one_line_with_the_restart_marked(
    tmp_path: Path,
) -> None:
    """Issue 42 item 5: a trainer lost at step 900 resumes from its checkpoint at step 500 and
    writes 500 on again, later. The chart draws one curve (the orphaned 500-900 are gone), a
    vertical line at step 500 topped by ↻, and the legend says where it resumed."""
    fed = FedScalars(next(j for j in JOBS if j["jobId"] == MNIST_ID))
    key = SeriesKey("events", "train", "loss")
    first = list(range(0, 910, 10))
    fed.add(key, first, [2.0 - s / 1000 for s in first])
    again = list(range(500, 1010, 10))
    lost_for = 3600.0  # the resumed run writes an hour after the lost one stopped
    fed.add(key, again, [1.4 - s / 1000 for s in again], [START + lost_for + s for s in again])
    app = make_app(tmp_path, fed)
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_metrics(MNIST_ID)
        await opened(pilot, MNIST_ID)
        (chart,) = charts(app)
        await wait_for(pilot, lambda: chart.lines[0].series.last_step == 1000)
        series = chart.lines[0].series
        assert [(r.step, r.from_step) for r in series.resumes] == [(500, 900)]
        text = drawn(chart)
        rows = text.split("\n")
        plot, legend = rows[1:-2], rows[-1]
        assert "↻ resumed at step 500" in legend
        # One ↻ on the plot, with a vertical line below it in its column.
        (top,) = [row for row in plot if "↻" in row]
        column = top.index("↻")
        below = [row[column] for row in plot[plot.index(top) + 1 : -1]]
        assert below.count("│") >= len(below) // 2, below
        # The x axis ticks under it put it at step 500: halfway along 0..1k.
        axis_labels = rows[-2]
        assert axis_labels.index("500") <= column <= axis_labels.index("500") + 3, axis_labels
