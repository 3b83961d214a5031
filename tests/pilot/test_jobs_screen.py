"""The job list against a real local service: order, filter, refresh, cancel, resubmit, edit.

Issue 3, done-when 1. Every job here really runs (the sample trainer) on the service fixture.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from textual.widgets import Input, Select, TextArea

from tests.conftest import _start, _stop
from tests.pilot.conftest import live_app, raised_toasts, wait_for
from tests.support.live_service import LiveService, basic_job
from tui_app.model.views.job_view import JobRow
from tui_app.shell.screens.builder_screen import BuilderScreen
from tui_app.shell.screens.confirm_screen import ConfirmScreen
from tui_app.shell.screens.jobs_screen import JobsScreen
from tui_app.shell.screens.message_screen import MessageScreen
from tui_app.widgets.job_table import JobTable

LONG = ("--steps", "100000", "--sleep", "0.1")


def keys(app: object) -> list[str]:
    table = app.screen.query_one(JobTable)  # type: ignore[attr-defined]
    return [r.job_id if isinstance(r, JobRow) else f"group:{r.base}" for r in table.rows]


def create(service: LiveService, project: str, job_id: str, uri: str, *args: str) -> None:
    service.client(project).create(basic_job(job_id, uri, *args))


async def test_default_order_then_other_sorts(
    service: LiveService, package_uri: str, tmp_path: Path
) -> None:
    project = "order-project"
    ids = [
        "zeta_20261101_000000",
        "alpha_20261120_000000",
        "alpha_20261121_000000",
        "alpha_model_v2_20261122_083000",
        "alpha",
        "mnist_20261122_000000",
    ]
    for job_id in ids:
        create(service, project, job_id, package_uri, "--steps", "1")
    app = live_app(service, tmp_path, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: len(keys(app)) == len(ids))
        assert keys(app) == [
            "alpha",  # no suffix: its createTime, the newest of the alpha jobs
            "alpha_20261121_000000",
            "alpha_20261120_000000",
            "alpha_model_v2_20261122_083000",
            "mnist_20261122_000000",
            "zeta_20261101_000000",
        ]
        await pilot.press("o")  # by id
        assert keys(app) == sorted(ids, key=str.lower)
        await pilot.press("O")  # reversed
        assert keys(app) == sorted(ids, key=str.lower, reverse=True)
        await pilot.press(*"oooooo")  # round the cycle: the default comes back
        assert keys(app)[0] == "alpha"
        # Fold the alpha_ family into one row with counts, then unfold.
        await pilot.press("home", "minus")
        assert keys(app)[0] == "group:alpha"
        await pilot.press("minus")
        assert keys(app)[0] == "alpha"


async def test_filter_tokens_invert_faults_and_escape(
    service: LiveService, package_uri: str, tmp_path: Path
) -> None:
    project = "filter-project"
    client = service.client(project)
    ok = basic_job("good_20261122_010000", package_uri, "--steps", "1")
    ok["labels"] = {"team": "vision"}
    client.create(ok)
    client.create(basic_job("bad_20261122_010000", package_uri, "--fail-at-step", "1"))
    service.wait_state("good_20261122_010000", project=project)
    service.wait_state("bad_20261122_010000", project=project)
    app = live_app(service, tmp_path, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: len(keys(app)) == 2)
        await pilot.press("slash", *"state:failed")
        assert keys(app) == ["bad_20261122_010000"]
        await pilot.press("escape", "escape")
        assert keys(app) == ["bad_20261122_010000", "good_20261122_010000"]
        await pilot.press("slash", *"label:team=vision")
        assert keys(app) == ["good_20261122_010000"]
        await pilot.press("escape", "escape", "slash", *"!^good")
        assert keys(app) == ["bad_20261122_010000"]
        await pilot.press("enter", "escape")  # leave the box, then clear
        assert len(keys(app)) == 2
        await pilot.press("z")
        assert keys(app) == ["bad_20261122_010000"]
        await pilot.press("escape")
        assert len(keys(app)) == 2


async def test_refresh_keeps_cursor_and_marks(
    service: LiveService, package_uri: str, tmp_path: Path
) -> None:
    project = "refresh-project"
    for job_id in ("b_20261122_010000", "c_20261122_010000"):
        create(service, project, job_id, package_uri, "--steps", "1")
    app = live_app(service, tmp_path, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: len(keys(app)) == 2)
        table = app.screen.query_one(JobTable)
        await pilot.press("end", "space")
        assert table.marked == {"c_20261122_010000"}
        await pilot.press("end")
        assert table.cursor_key == "c_20261122_010000"
        # A new job sorts above the cursor row: the cursor must stay on its job.
        create(service, project, "a_20261122_010000", package_uri, "--steps", "1")
        await wait_for(pilot, lambda: len(keys(app)) == 3)
        assert keys(app)[0] == "a_20261122_010000"
        assert table.cursor_key == "c_20261122_010000"
        assert table.marked == {"c_20261122_010000"}


async def test_cancel_confirm_both_answers_and_bulk(
    service: LiveService, package_uri: str, tmp_path: Path
) -> None:
    project = "cancel-project"
    ids = ["run_a_20261122_010000", "run_b_20261122_010000", "run_c_20261122_010000"]
    for job_id in ids:
        create(service, project, job_id, package_uri, *LONG)
    for job_id in ids:
        service.wait_state(job_id, ("RUNNING",), project=project)
    client = service.client(project)
    app = live_app(service, tmp_path, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: len(keys(app)) == 3)
        await pilot.press("home", "x")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert isinstance(app.screen, ConfirmScreen)
        assert "run_a_20261122_010000" in app.screen.items
        await pilot.press("enter")  # the default button is No
        await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen))
        assert client.get("run_a_20261122_010000")["state"] == "RUNNING"

        await pilot.press("x", "n")
        assert client.get("run_a_20261122_010000")["state"] == "RUNNING"

        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_for(
            pilot,
            lambda: client.get("run_a_20261122_010000")["state"] in ("CANCELLING", "CANCELLED"),
        )
        table = app.screen.query_one(JobTable)
        await wait_for(
            pilot,
            lambda: any(
                isinstance(r, JobRow)
                and r.job_id == "run_a_20261122_010000"
                and r.state.value in ("CANCELLING", "CANCELLED")
                for r in table.rows
            ),
        )

        # Bulk: mark the other two and cancel both with one confirmation naming them.
        await pilot.press("down", "space", "space")
        assert table.marked == {"run_b_20261122_010000", "run_c_20261122_010000"}
        await pilot.press("ctrl+d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert isinstance(app.screen, ConfirmScreen)
        assert sorted(app.screen.items) == ["run_b_20261122_010000", "run_c_20261122_010000"]
        await pilot.press("y")
        # The marks served their action (k9s drops them too): a second x must not aim at them.
        await wait_for(pilot, lambda: not table.marked)
        for job_id in ids:
            service.wait_state(job_id, ("CANCELLED",), timeout=15, project=project)


async def test_resubmit_creates_new_id_and_selects_it(
    service: LiveService, package_uri: str, tmp_path: Path
) -> None:
    project = "resubmit-project"
    old = "mnist_20260101_000000"
    body = basic_job(old, package_uri, "--steps", "1")
    body["labels"] = {"owner": "ann"}
    service.client(project).create(body)
    service.wait_state(old, project=project)
    app = live_app(service, tmp_path, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: keys(app) == [old])
        # A filter the new job does not match, whatever state it is in when the list first
        # sees it (a one-step job may already have SUCCEEDED): cleared to show it, and said.
        await pilot.press("slash", *old, "enter")
        # R asks first (issue 29: two presses started two jobs), naming the new id and the
        # cluster it starts; the default is No, and a second R lands on the question.
        await pilot.press("R")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        question = app.screen
        assert isinstance(question, ConfirmScreen)
        assert question.question.startswith(f"Resubmit {old} as mnist_2026")
        assert question.items[0] == "BASIC: 1 replica (master 1 × standard)"
        await pilot.press("R", "enter")  # enter on the focused No
        await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen))
        # No: the only action worker (the one that asked) is done, and nothing was created.
        await wait_for(pilot, lambda: not [w for w in app.workers if w.group == "actions"])
        assert [j["jobId"] for j in service.client(project).list_jobs()] == [old]
        await pilot.press("R")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_for(pilot, lambda: len(keys(app)) == 2)
        new = keys(app)[0]
        assert new != old and new.startswith("mnist_2026") and len(new) == len(old)
        await wait_for(pilot, lambda: app.screen.query_one(JobTable).cursor_key == new)
        assert app.screen.query_one("#filter", Input).value == ""
        assert any(f"Filter cleared to show {new}" in n.message for n in raised_toasts(app))
        created = service.client(project).get(new)
        original = service.client(project).get(old)
        assert created["trainingInput"] == original["trainingInput"]
        assert created["labels"] == {"owner": "ann"}
        assert created["createTime"] >= original["createTime"]


@pytest.fixture
def editor(tmp_path: Path) -> Path:
    """An $EDITOR that rewrites the steps argument (as a person would, then saves)."""
    script = tmp_path / "edit.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys, pathlib
            p = pathlib.Path(sys.argv[-1])
            p.write_text(p.read_text().replace("'1'", "'3'").replace("- '1'", "- '3'"))
            """
        )
    )
    return script


async def test_edit_and_resubmit_valid_and_invalid(
    service: LiveService,
    package_uri: str,
    tmp_path: Path,
    editor: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``E`` opens a copy in the builder; F4 edits its YAML in $EDITOR and the form reloads."""
    project = "edit-project"
    old = "edit_20260101_000000"
    service.client(project).create(basic_job(old, package_uri, "--steps", "1"))
    monkeypatch.setenv("EDITOR", f"{sys.executable} {editor}")
    monkeypatch.delenv("VISUAL", raising=False)
    app = live_app(service, tmp_path, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: keys(app) == [old])
        await pilot.press("E")
        await wait_for(pilot, lambda: isinstance(app.screen, BuilderScreen))
        await pilot.press("f4")
        await wait_for(
            pilot, lambda: app.screen.query_one("#f-args", TextArea).text == "--steps\n3"
        )
        await pilot.press("ctrl+j")
        await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen))
        await wait_for(pilot, lambda: len(keys(app)) == 2)
        new = next(k for k in keys(app) if k != old)
        assert service.client(project).get(new)["trainingInput"]["args"] == ["--steps", "3"]

        # An edit that breaks the config: the reason is shown and nothing is submitted.
        bad = tmp_path / "bad.py"
        bad.write_text(
            "import sys, pathlib\np = pathlib.Path(sys.argv[-1])\n"
            "p.write_text(p.read_text().replace('scaleTier: BASIC', 'scaleTier: HUGE'))\n"
        )
        monkeypatch.setenv("EDITOR", f"{sys.executable} {bad}")
        await pilot.press("E")
        await wait_for(pilot, lambda: isinstance(app.screen, BuilderScreen))
        await pilot.press("f4")
        await wait_for(pilot, lambda: isinstance(app.screen, MessageScreen))
        assert isinstance(app.screen, MessageScreen)
        assert "trainingInput.scaleTier" in app.screen.text
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, BuilderScreen))
        assert app.screen.query_one("#f-scale_tier", Select).value == "BASIC"
        assert len(service.client(project).list_jobs()) == 2


async def test_disconnected_banner_and_recovery(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    state = tmp_path_factory.mktemp("flaky") / "state"
    svc = _start(state)
    port = int(svc.url.rsplit(":", 1)[1])
    app = live_app(svc, tmp_path)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            banner = app.screen.query_one("#banner")
            await wait_for(pilot, lambda: app.last_rows == [] and app.source.endpoint is not None)
            _stop(svc)
            await wait_for(pilot, lambda: banner.display, timeout=15)
            assert "Disconnected" in str(banner.render())
            await pilot.press("j", "k")  # still responsive
            svc = _start(state, port=port)  # the same state dir and port, as after a restart
            await wait_for(pilot, lambda: not banner.display, timeout=20)
    finally:
        _stop(svc)
