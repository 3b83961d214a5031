"""The connection options mean the same before and after the subcommand (issue 14).

argparse lets a subcommand's default overwrite a value given before the subcommand, so
``tui-app --project X jobs list`` once listed the default project. Options that a command
would ignore are refused instead.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tui_app.entry.cli import _parse, build_parser, main

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


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--demo"],
        ["--demo", "--again", "--proj", "p1"],
        ["--state-dir", "/tmp/sd", "--profile", "prof", "--project", "p1"],
    ],
)
def test_the_tui_parser_reads_what_the_whole_one_reads(argv: list[str]) -> None:
    """The TUI's command lines skip the subcommands' parsers (a start-up cost) and mean
    the same."""
    assert vars(_parse(argv)) == vars(build_parser().parse_args(argv))


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["jbos"], "invalid choice: 'jbos' (choose from 'jobs', 'logs', 'service')"),
        (["--project"], "argument --project: expected one argument"),
        (["--again"], "--again goes with --demo"),
        (["--he"], "{jobs,logs,service}"),  # help, with the subcommands listed
    ],
)
def test_what_the_tui_parser_refuses_the_whole_one_answers(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        _parse(argv)
    captured = capsys.readouterr()
    assert said in captured.out + captured.err


def test_the_stop_command_is_named_as_the_user_can_type_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After `.venv/bin/tui-app --demo` in a venv that is not activated, `tui-app` is not a
    command the shell knows: the exit note names the path that was run (issue 29)."""
    from tui_app.entry.launch import _command_name

    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    program = bin_dir / "tui-app"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    monkeypatch.setattr(sys, "argv", [".venv/bin/tui-app", "--demo"])
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".venv").symlink_to(tmp_path / "venv")
    monkeypatch.setenv("PATH", "/usr/bin")
    assert _command_name() == ".venv/bin/tui-app"
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin")
    assert _command_name() == "tui-app"
    monkeypatch.setattr(sys, "argv", ["/somewhere/python3 -m tui_app"])
    assert _command_name() == "tui-app"
