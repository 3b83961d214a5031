"""``tui-app --demo`` run a second time (issue item 10): it finds the demo's jobs on the service
and opens the list on them instead of submitting five more; ``--demo --again`` submits a new set.

The TUI itself is not started (``JobsApp.run`` is replaced): what is checked is what the command
says, what it submits and what the app would open with.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.live_service import LiveService, basic_job
from tui_app.entry.cli import build_parser, main
from tui_app.entry.demo import DEMO_LABELS, demo_base_names, demo_jobs_on
from tui_app.model.jobs.job_id import base_name, new_job_id
from tui_app.shell.app import JobsApp


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[JobsApp]:
    """Every app ``tui-app`` would have run, not run: the TUI needs a terminal."""
    apps: list[JobsApp] = []

    def run(self: JobsApp, *args: Any, **kwargs: Any) -> None:
        apps.append(self)

    monkeypatch.setattr(JobsApp, "run", run)
    return apps


def demo(service: LiveService, project: str, *flags: str) -> int:
    return main(["--demo", *flags, "--state-dir", str(service.state_dir), "--project", project])


def ids(service: LiveService, project: str) -> list[str]:
    return sorted(j["jobId"] for j in service.client(project).list_jobs())


def test_a_second_demo_opens_the_list_and_again_submits_a_new_set(
    service: LiveService,
    opened: list[JobsApp],
    capsys: pytest.CaptureFixture[str],
) -> None:
    project = "demo-again"
    state = service.state_dir
    try:
        assert demo(service, project) == 0
        first = ids(service, project)
        assert sorted(map(base_name, first)) == sorted(demo_base_names())
        assert capsys.readouterr().err.startswith("Submitted 5 sample jobs: ")

        # Again: nothing submitted, one line says why and how to submit more; the list opens,
        # and says it too (the TUI covers the terminal at once).
        assert demo(service, project) == 0
        assert ids(service, project) == first
        said = capsys.readouterr().err.splitlines()[0]
        assert said == (
            "The demo's jobs are already on the local service (5 jobs): opening the list. "
            f"`tui-app --demo --again --state-dir {state} --project {project}` submits a new set."
        )
        assert len(opened) == 2 and opened[1].startup_warning == said

        # --again: five more, under fresh ids of the same names.
        assert demo(service, project, "--again") == 0
        every = ids(service, project)
        assert len(every) == 10 and set(first) < set(every)
        assert sorted(map(base_name, every)) == sorted(demo_base_names() * 2)
        assert opened[2].startup_warning is None
    finally:
        service.end_jobs(ids(service, project), project=project)


def test_only_the_demos_own_jobs_count(service: LiveService, package_uri: str) -> None:
    """A job of the user's own called ``mnist`` is not the demo's, and a set the service took
    only part of is not the demo's jobs: the demo would submit its set."""
    project = "demo-own"
    client = service.client(project)
    names = demo_base_names()
    made: list[str] = []
    try:
        for base in names[:-1]:
            body = basic_job(new_job_id(base), package_uri, "--steps", "1")
            made.append(client.create({**body, "labels": dict(DEMO_LABELS)})["jobId"])
        assert demo_jobs_on(client) == []  # one name missing
        theirs = basic_job(new_job_id(names[-1]), package_uri, "--steps", "1")
        made.append(client.create(theirs)["jobId"])
        assert demo_jobs_on(client) == []  # the last one is not labelled as the demo's
        body = basic_job(new_job_id(names[-1]), package_uri, "--steps", "1")
        last = client.create({**body, "jobId": f"{names[-1]}_20260101_000000"})
        assert demo_jobs_on(client) == []
        client.set_labels(str(last["jobId"]), dict(DEMO_LABELS))
        made.append(str(last["jobId"]))
        assert sorted(demo_jobs_on(client)) == sorted([*made[:-2], made[-1]])
    finally:
        service.end_jobs(made, project=project)


def test_again_goes_with_demo(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--again"])
    assert exited.value.code == 2
    assert "--again goes with --demo" in capsys.readouterr().err
    helptext = " ".join(build_parser().format_help().split())
    assert "--again with --demo: submit a new set of sample jobs" in helptext


def test_the_readme_says_how_to_submit_the_demo_again() -> None:
    readme = Path(__file__).resolve().parents[2] / "README.md"
    setup = readme.read_text(encoding="utf-8").split("## Set up", 1)[1].split("\n## ", 1)[0]
    assert "`tui-app --demo --again` submits a new set." in setup
