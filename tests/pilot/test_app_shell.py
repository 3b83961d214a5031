"""The shell around the list: help, palette, themes remembered, NO_COLOR, describe/YAML keys."""

from __future__ import annotations

import io
import threading
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual.command import CommandList, CommandPalette
from textual.widgets import Footer, Input, Static
from textual.widgets._footer import FooterKey

from tests.pilot.conftest import FROZEN_NOW, fixed_app, raised_toasts, toast_messages
from tests.support.fixed_jobs import FixedSource
from tests.support.settle import settled, wait_until
from tui_app.config.settings import Settings, load_settings
from tui_app.model.views.job_view import GroupRow
from tui_app.shell.app import JobsApp
from tui_app.shell.screens.confirm_screen import ConfirmScreen
from tui_app.shell.screens.describe_screen import DescribeScreen
from tui_app.shell.screens.help_screen import HelpScreen
from tui_app.shell.screens.jobs_screen import JobsScreen
from tui_app.shell.screens.logs_screen import LogsScreen
from tui_app.shell.screens.prompt_screen import PromptScreen
from tui_app.widgets.job_table import JobTable

NOW = FROZEN_NOW


def text_of(app: JobsApp, selector: str) -> str:
    """What a Static shows, as plain text (its Rich renderable, printed 200 columns wide)."""
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(app.screen.query_one(selector, Static).content)
    return console.export_text()


async def test_help_lists_every_key_of_the_list(tmp_path: Path) -> None:
    app = fixed_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.last_rows, "the list")
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = text_of(app, "#help-content")
        for words in (
            "Filter",
            "Faults",
            "Cancel",
            "Resubmit",
            "Edit+submit",
            "Mark",
            "Sort",
            "Describe",
            "Command palette",
            "Quit",
        ):
            assert words in text, words
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_help_scrolls_with_the_pager_keys_under_a_header_that_stays(
    tmp_path: Path,
) -> None:
    """At 80x24 the key list is taller than the screen: ``g``/``G``, ``j``/``k``, page and
    home/end keys scroll it, and the header (which screen, how to move, the column headings)
    stays on screen above it."""
    app = fixed_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.last_rows, "the list")
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        body = app.screen.query_one("#help-body")
        await wait_until(pilot, lambda: body.max_scroll_y > 0, "a list taller than the screen")
        header = [app.screen.query_one(f"#help-{part}") for part in ("title", "headings")]
        where = [part.region for part in header]
        assert "Keys on the job list" in text_of(app, "#help-title")
        assert "Where" in text_of(app, "#help-headings")

        bottom, page = body.max_scroll_y, body.scrollable_content_region.height
        moves: list[tuple[str, int]] = [
            ("G", bottom),
            ("g", 0),
            ("j", 1),
            ("k", 0),
            ("end", bottom),
            ("home", 0),
            ("pagedown", min(bottom, page)),
        ]
        for key, at in moves:
            await pilot.press(key)

            def scrolled(at: int = at) -> bool:
                return body.scroll_y == at

            await wait_until(pilot, scrolled, f"{key} to scroll")
            assert [part.region for part in header] == where, key
            assert all(r.bottom <= body.region.y and r.height for r in where), key


async def test_palette_offers_the_screen_actions(tmp_path: Path) -> None:
    app = fixed_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.last_rows, "the list")
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for title in ("Filter", "Cancel", "Resubmit", "Edit+submit", "Describe", "Theme"):
            assert any(t.startswith(title) for t in titles), (title, titles)


async def test_the_palette_says_each_actions_key_as_remapped(tmp_path: Path) -> None:
    """Every entry's second line starts with its key, the keymap's where it remaps one: ``E``
    and ``z`` (whose tooltips used to take the key's place), ``v`` for logs remapped from
    ``l``, ``q`` for Quit; Textual's own entries with no key say so."""
    app = fixed_app(tmp_path, keymap={"jobs.logs": "v"})
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.last_rows, "the list")
        helps = {c.title: c.help for c in app.get_system_commands(app.screen)}
        assert helps["Edit+submit"] == "Key: E · A copy in the builder"
        assert helps["Faults"] == "Key: z · Only FAILED, CANCELLED and stalled"
        assert helps["Logs"] == "Key: v · Live logs of every replica"
        assert helps["Cancel"] == "Key: x / ^d"
        assert helps["Quit"] == "Key: q"
        assert helps["Builder"] == "Key: 3 · Config builder"
        assert helps["Theme"] == "No key · Change the current theme"
        assert all(h.startswith(("Key: ", "No key")) for h in helps.values()), helps

        # As the palette shows it, and its entry runs the action.
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        await pilot.press(*"faults")
        options = app.screen.query_one(CommandList)
        await wait_until(
            pilot,
            lambda: any(
                "Key: z · Only FAILED" in str(options.get_option_at_index(i).prompt)
                for i in range(options.option_count)
            ),
            "the Faults entry with its key",
        )
        await pilot.press("enter")
        jobs = app.screen
        assert isinstance(jobs, JobsScreen)
        await wait_until(pilot, lambda: jobs.faults_only, "Faults run from the palette")


async def test_theme_change_is_remembered(tmp_path: Path) -> None:
    app = fixed_app(tmp_path)
    async with app.run_test(size=(80, 24)):
        assert app.theme == "tui-dark"
        app.theme = "tui-high-contrast"  # saved by the theme's watcher, synchronously
    settings, problem = load_settings(tmp_path / "settings.yaml")
    assert problem is None and settings.theme == "tui-high-contrast"
    again = fixed_app(tmp_path, theme=settings.theme)
    async with again.run_test(size=(80, 24)):
        assert again.theme == "tui-high-contrast"


async def test_detail_puts_the_cause_first_and_scrolls_with_pager_keys(tmp_path: Path) -> None:
    app = fixed_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.last_rows, "the list")
        await pilot.press("slash", *"census_dist_20261122_07", "enter", "d")
        await wait_until(
            pilot,
            lambda: "RuntimeError: loss is NaN" in text_of(app, "#describe-content"),
            "the detail with the errorMessage",
        )
        text = text_of(app, "#describe-content")
        cause = text.index("RuntimeError: loss is NaN at step 1200")
        assert cause < text.index("exited with a non-zero status") < text.index("Traceback (")
        body = app.screen.query_one("#describe-body")
        assert body.has_focus
        await wait_until(pilot, lambda: body.max_scroll_y > 2, "a detail taller than the screen")
        await pilot.press("j", "j")
        await wait_until(pilot, lambda: body.scroll_y == 2, "j scrolled down two lines")
        await pilot.press("k")
        await wait_until(pilot, lambda: body.scroll_y == 1, "k scrolled up one line")
        await pilot.press("G")
        await wait_until(pilot, lambda: body.scroll_y == body.max_scroll_y, "G: the bottom")
        await pilot.press("g")
        await wait_until(pilot, lambda: body.scroll_y == 0, "g: the top")
        await pilot.press("pagedown")
        await wait_until(pilot, lambda: body.scroll_y > 2, "pagedown: a page down")


async def test_describe_and_yaml_keys(tmp_path: Path) -> None:
    app = fixed_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.last_rows, "the list")
        await pilot.press("slash", *"census_dist_20261122_07", "enter", "d")
        await wait_until(
            pilot,
            lambda: "RuntimeError: loss is NaN" in text_of(app, "#describe-content"),
            "the detail with the errorMessage",
        )
        assert isinstance(app.screen, DescribeScreen)
        # the full errorMessage, not its first line
        assert "RuntimeError: loss is NaN at step 1200" in text_of(app, "#describe-content")
        await pilot.press("y")
        await wait_until(
            pilot, lambda: "errorMessage:" in text_of(app, "#describe-content"), "the YAML"
        )
        await pilot.press("escape", "y")
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, DescribeScreen) and app.screen.show_yaml,
            "the detail opened in YAML by y on the list",
        )


async def test_no_color_is_honoured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = fixed_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.last_rows, "the list")
        await settled(pilot)
        assert app.no_color
        # States stay readable without colour: symbol and name on every row.
        lines = [
            s.text
            for s in app.screen.query_one("JobTable").render_lines(
                app.screen.query_one("JobTable").region.reset_offset
            )
        ]
        joined = "\n".join(lines)
        assert "✗ FAILED" in joined and "▶ RUNNING" in joined


class GatedSource(FixedSource):
    """The fixed jobs, held back until the test opens the gate."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()

    def call(self, fn: Any) -> Any:
        self.gate.wait(60)
        return super().call(fn)


async def test_footer_shows_the_lists_keys_once_the_list_arrives(tmp_path: Path) -> None:
    """While the list loads its table's keys are inactive; once rows arrive the footer must
    offer them (space Mark, enter Open). Textual does not refresh the footer when a widget's
    ``loading`` ends, so the footer kept them hidden when the list came late (issue 14)."""
    source = GatedSource()
    app = JobsApp(
        Settings(),
        lambda: None,  # type: ignore[arg-type,return-value]
        "demo-project",
        "local",
        settings_file=tmp_path / "settings.yaml",
        clock=lambda: NOW,
        source=source,
    )

    def shown() -> set[str]:
        return {str(key.description) for key in app.screen.query_one(Footer).query(FooterKey)}

    # 160 columns: narrower, the footer leaves the list's secondary keys (Mark, Open) out.
    async with app.run_test(size=(160, 40)) as pilot:
        try:
            await wait_until(
                pilot, lambda: app.screen.query_one(JobTable).loading, "the list loading"
            )
            await pilot.pause()  # the loading indicator animates: the screen never settles
            assert "Mark" not in shown()  # loading: the table's keys are not active yet
        finally:
            source.gate.set()
        await wait_until(pilot, lambda: app.last_rows, "the list")
        await settled(pilot)
        assert isinstance(app.focused, JobTable)
        assert {"Mark", "Open", "Filter", "Cancel"} <= shown(), shown()


async def test_a_keymap_remap_that_clashes_is_refused_and_said(tmp_path: Path) -> None:
    """README's own example (``jobs.cancel: k``) met the table's ``k``: cancel became
    unreachable, silently. Now that remap is refused by name, the rest applies, and ``?``
    shows each binding's id and its key as remapped."""
    app = fixed_app(tmp_path, keymap={"jobs.cancel": "k", "jobs.logs": "v"})
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_until(pilot, lambda: app.last_rows, "the list")
        warning = app.keymap_warning or ""
        assert "jobs.cancel: k is already job-table.up's key on the job list" in warning
        assert app._keymap == {"jobs.logs": "v"}
        assert any("job-table.up" in n.message for n in raised_toasts(app))
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = text_of(app, "#help-content")
        cancel = next(line for line in text.splitlines() if "jobs.cancel" in line)
        assert " x " in cancel  # kept its own keys
        logs = next(line for line in text.splitlines() if "jobs.logs" in line)
        assert " v " in logs


def shown_toasts(app: JobsApp) -> list[str]:
    """The toasts on screen now."""
    return [n.message for n in app._notifications]


def header(app: JobsApp) -> str:
    return app.screen.query_one(JobTable).render_line(0).text


async def test_sort_labels_reverse_folded_rows_and_marks(tmp_path: Path) -> None:
    """Issue 15, item 8: the default order and an id sort had the same header, nothing
    reversed a sort, keys on a folded row did nothing, and the mark count showed nowhere."""
    app = fixed_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.last_rows, "the list")
        # The App keeps the list before its screen has shown it: the header is drawn a few
        # messages later (asserting at once failed about one run in five, before issue 45 too).
        await wait_until(pilot, lambda: header(app).strip() != "", "the list's header drawn")
        table = app.screen.query_one(JobTable)
        assert "JOB ID · name▲ newest first" in header(app)
        await pilot.press("o")
        assert "JOB ID▲" in header(app) and "name" not in header(app)
        first = table.cursor_key
        await pilot.press("O")
        assert "JOB ID▼" in header(app)
        assert [r.key if isinstance(r, GroupRow) else r.job_id for r in table.rows][-1] == first
        await pilot.press(*"oooooo")  # round the cycle, back to the default order
        assert "JOB ID · name▲ newest first" in header(app)

        assert table.move_to_key("mnist_20261122_083000")
        await pilot.press("minus")
        assert table.cursor_key == "group:mnist"
        await pilot.press("l")
        await wait_until(
            pilot, lambda: any("folded group" in t for t in toast_messages(app)), "why"
        )
        assert isinstance(app.screen, JobsScreen)
        await pilot.press("space")  # marks what the fold stands for
        await wait_until(pilot, lambda: len(table.marked) == 3, "the family marked")
        assert all(job_id.startswith("mnist_") for job_id in table.marked)
        await wait_until(pilot, lambda: "3 marked" in text_of(app, "#filter-info"), "the count")


async def test_command_line_opens_a_named_job(tmp_path: Path) -> None:
    """``:logs ID`` was refused; now it opens that job (a unique prefix will do), and an id
    that names no job, or several, says so."""
    app = fixed_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.last_rows, "the list")

        async def command(text: str) -> None:
            await pilot.press("colon", *text, "enter")

        await command("logs nope")
        await wait_until(pilot, lambda: "No job 'nope'" in " ".join(toast_messages(app)), "unknown")
        await command("logs bert")
        await wait_until(
            pilot, lambda: "matches 2 jobs" in " ".join(toast_messages(app)), "ambiguous"
        )
        await command("builder x")
        await wait_until(
            pilot, lambda: "takes no argument" in " ".join(toast_messages(app)), "no arg"
        )
        await pilot.press("escape")
        await command("describe adhoc")
        await wait_until(pilot, lambda: isinstance(app.screen, DescribeScreen), "describe")
        assert isinstance(app.screen, DescribeScreen) and app.screen.job_id == "adhoc"
        await command("logs census_dist_20261122_0900")
        await wait_until(pilot, lambda: isinstance(app.screen, LogsScreen), "the logs")
        assert isinstance(app.screen, LogsScreen)
        assert app.screen.job_id == "census_dist_20261122_090000"
        assert [type(s) for s in app.screen_stack[1:]] == [JobsScreen, LogsScreen]


async def test_logs_save_asks_where_and_its_toast_leaves_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ctrl+s in the logs wrote into the working directory unasked; and every toast outlived
    its screen. Now it asks (pre-filled), will not overwrite without a yes, and says where it
    wrote how many lines; the toast goes when the logs are closed."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # the proposed folder is under it
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    # Toasts that outlast the test: the one that goes must go with its screen, not its time.
    monkeypatch.setattr(JobsApp, "NOTIFICATION_TIMEOUT", 600.0)
    app = fixed_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.last_rows, "the list")
        await pilot.press("colon", *"logs adhoc", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, LogsScreen), "the logs")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, PromptScreen), "the prompt")
        saved = Path(app.screen.query_one(Input).value)
        name = saved.name
        assert name.startswith("adhoc-all-") and name.endswith(".log")
        await pilot.press("enter")
        await wait_until(pilot, lambda: saved.exists(), "the file")
        await wait_until(
            pilot, lambda: any(f"to {saved}" in t for t in toast_messages(app)), "where it went"
        )
        count = len(saved.read_text().splitlines())
        assert any(f"Saved {count:,} line" in t for t in toast_messages(app)), toast_messages(app)
        saved.write_text("keep me")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, PromptScreen), "the prompt")
        app.screen.query_one(Input).value = str(saved)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "overwrite?")
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.screen, LogsScreen), "back")
        assert saved.read_text() == "keep me"
        assert any("Saved" in t for t in shown_toasts(app))
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, JobsScreen), "the list")
        assert not any("Saved" in t for t in shown_toasts(app))


async def test_full_screens_are_opaque(tmp_path: Path) -> None:
    """Screens that mix in ScreenToasts keep Screen's own rules. With the mixin first, Textual
    gave them its CSS type names instead: the logs screen was transparent, and every frame of a
    flooding log rendered the whole job list beneath it too."""
    from tui_app.shell.screens.builder_screen import BuilderScreen
    from tui_app.shell.screens.command_screen import CommandScreen

    for cls in (LogsScreen, DescribeScreen, BuilderScreen):
        assert "Screen" in cls._css_type_names, cls
    assert "ModalScreen" in CommandScreen._css_type_names
    app = fixed_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.last_rows, "the list")
        for keys, cls in (("logs adhoc", LogsScreen), ("describe adhoc", DescribeScreen)):
            await pilot.press("colon", *keys, "enter")
            await wait_until(pilot, lambda c=cls: isinstance(app.screen, c), keys)  # type: ignore[misc]
            assert app.screen.styles.background.a == 1
            assert app.screen.styles.background == app.screen_stack[-2].styles.background
            await pilot.press("escape")
            await wait_until(pilot, lambda: isinstance(app.screen, JobsScreen), "back")
