"""The connection options mean the same before and after the subcommand (issue 14).

argparse lets a subcommand's default overwrite a value given before the subcommand, so
``tui-app --project X jobs list`` once listed the default project. Options that a command
would ignore are refused instead.
"""

from __future__ import annotations

import pytest

from tui_app.entry.cli import build_parser, main

CONNECTION = ("--project", "p1", "--state-dir", "/tmp/sd", "--profile", "prof")


@pytest.mark.parametrize(
    "argv",
    [
        [*CONNECTION, "jobs", "list"],
        ["jobs", "list", *CONNECTION],
        ["--project", "p1", "jobs", "list", "--state-dir", "/tmp/sd", "--profile", "prof"],
        [*CONNECTION, "jobs", "logs", "J"],
        ["jobs", "describe", "J", *CONNECTION],
    ],
)
def test_connection_options_honoured_in_either_place(argv: list[str]) -> None:
    args = build_parser().parse_args(argv)
    assert (args.project, args.state_dir, args.profile) == ("p1", "/tmp/sd", "prof")


def test_the_later_option_wins() -> None:
    args = build_parser().parse_args(["--project", "early", "jobs", "list", "--project", "late"])
    assert args.project == "late"


def test_unset_options_stay_unset() -> None:
    args = build_parser().parse_args(["jobs", "list"])
    assert (args.project, args.state_dir, args.profile) == (None, None, None)


@pytest.mark.parametrize(
    "argv",
    [
        ["--state-dir", "/tmp/sd", "service", "status"],
        ["service", "status", "--state-dir", "/tmp/sd"],
    ],
)
def test_service_state_dir_in_either_place(argv: list[str]) -> None:
    assert build_parser().parse_args(argv).state_dir == "/tmp/sd"


def test_service_env_project_in_either_place() -> None:
    parser = build_parser()
    assert parser.parse_args(["--project", "p1", "service", "env"]).project == "p1"
    assert parser.parse_args(["service", "env", "--project", "p1"]).project == "p1"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--profile", "x", "service", "status"], "--profile selects a backend"),
        (["--project", "x", "service", "stop"], "--project has no meaning for `service stop`"),
        (["--demo", "jobs", "list"], "--demo opens the TUI"),
    ],
)
def test_options_a_command_would_ignore_are_refused(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert message in capsys.readouterr().err
