"""Opening the TUI: settings + command line -> a connection -> the app."""

from __future__ import annotations

import argparse
import shlex
import shutil
import sys
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_app.config.settings import Profile, Settings, SettingsError
from tui_app.shell import start_gc

if TYPE_CHECKING:
    from tui_app.api.connection import Connection
    from tui_app.shell.app import JobsApp


def resolve(args: argparse.Namespace, settings: Settings) -> tuple[Profile, str, Path | None]:
    """The profile, project and state dir to use: flags win over settings.

    Raises:
        SettingsError: the profile named does not exist.
    """
    if getattr(args, "profile", None):
        settings = settings.with_changes(profile=args.profile)
    profile = settings.active_profile()
    project = getattr(args, "project", None) or profile.project or settings.project
    state_dir = Path(args.state_dir).expanduser() if getattr(args, "state_dir", None) else None
    return profile, project, state_dir


def _connect(profile: Profile, state_dir: Path | None, **kw: Any) -> Connection:
    # Imported on first use: the client libraries load in the poll thread, after first paint.
    from tui_app.api.connection import connect

    return connect(profile, state_dir, **kw)


def connector(profile: Profile, state_dir: Path | None) -> partial[Connection]:
    """``connect`` bound to a profile; call it with ``start=`` to allow starting the service."""
    return partial(_connect, profile, state_dir)


def open_app(settings: Settings, profile: Profile, project: str, state_dir: Path | None) -> JobsApp:
    """The app on ``profile``'s connection. On the local service its first list is already on
    its way: fetched while Textual and the screens import (``shell/first_list.py``). Elsewhere
    the list needs Google's client stack, which loads after the list's first frame instead."""
    connect = connector(profile, state_dir)
    first_list = None
    if profile.kind == "local":
        from tui_app.shell.first_list import FirstList
        from tui_app.shell.jobs_source import JobsSource

        first_list = FirstList.start(JobsSource(connect, project, profile.label()))
    from tui_app.shell.app import JobsApp

    return JobsApp(settings, connect, project, profile.name, first_list=first_list)


def launch_tui(args: argparse.Namespace, settings: Settings, problem: str | None) -> int:
    try:
        profile, project, state_dir = resolve(args, settings)
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    demo_note: str | None = None
    if args.demo:
        from tui_app.api.connection import service_options
        from tui_app.entry.demo import start_demo

        if profile.kind != "local":
            print("error: --demo runs on the local service (--profile local).", file=sys.stderr)
            return 2
        again = bool(getattr(args, "again", False))
        try:
            started = start_demo(state_dir, project, service_options(profile), again=again)
        except Exception as exc:
            print(f"error: the demo could not start: {exc}", file=sys.stderr)
            return 1
        line = started.line(_demo_again_command(args, state_dir))
        print(line, file=sys.stderr)
        if started.present:
            demo_note = line  # the TUI covers the terminal at once: it says it again there

    opened = time.time()
    app = open_app(settings, profile, project, state_dir)
    shown = "\n".join(n for n in (problem, demo_note) if n)
    if shown:
        app.startup_warning = shown
    try:
        app.run()
    finally:
        # The app released it after its first frame, unless it ended before one; then there
        # is nothing worth freezing (and a caller that goes on should not find its objects so).
        start_gc.release(freeze=False)
    if profile.kind == "local":
        note = service_left_running(state_dir, opened, args.demo)
        if note:
            print(note, file=sys.stderr)
    return 0


def _command_name() -> str:
    """How the user can type this program again: ``tui-app`` when that is on PATH, else the
    path they ran (``.venv/bin/tui-app`` from a venv that is not activated)."""
    typed = sys.argv[0]
    if Path(typed).name != "tui-app":
        return "tui-app"
    found = shutil.which("tui-app")
    if found and Path(found).resolve() == Path(typed).resolve():
        return "tui-app"
    return shlex.quote(typed)


def _demo_again_command(args: argparse.Namespace, state_dir: Path | None) -> str:
    """``tui-app --demo --again``, with the state dir and project this run was given: the
    command that submits a new set of sample jobs to the same service and project."""
    command = f"{_command_name()} --demo --again"
    if state_dir is not None:
        command += f" --state-dir {shlex.quote(str(state_dir))}"
    if getattr(args, "project", None):
        command += f" --project {shlex.quote(str(args.project))}"
    return command


def service_left_running(state_dir: Path | None, since: float, demo: bool) -> str | None:
    """What to say on leaving the TUI when its local service goes on running: the service
    it started (or the demo's, whose jobs it runs) keeps running jobs after ``q``, and a
    person should not find that out from ``ps``. Nothing for a service started before."""
    import psutil

    from tui_app.local.paths import StateDir, default_state_dir
    from tui_app.local.service_cli import running

    state = StateDir(state_dir or default_state_dir())
    info = running(state)
    if info is None:
        return None
    try:
        started = psutil.Process(info.pid).create_time()
    except psutil.Error:
        return None
    if started < since - 1 and not demo:
        return None
    stop = f"{_command_name()} service stop"
    if state_dir is not None:
        stop += f" --state-dir {shlex.quote(str(state_dir))}"
    return (
        f"The local jobs service is still running (pid {info.pid}, {info.url}) and so are its "
        f"jobs.\nStop it and every job it runs with: {stop}"
    )
