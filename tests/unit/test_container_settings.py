"""The local profile's container engine (issue 30): ``container_engine`` and
``container_run_args`` in settings.yaml, what the app adds to ``tui-app service start`` for them,
and the service's engine read once per connection."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from tui_app.api import connection as connection_module
from tui_app.api.connection import Connection, service_options
from tui_app.api.jobs_client import make_credentials
from tui_app.config.settings import Profile, SettingsError, load_settings, parse_settings
from tui_app.local.service_cli import ServiceOptions, add_run_arguments

PODMAN = {
    "name": "podman",
    "version": "4.3.1",
    "command": "/usr/bin/podman --runtime runc",
    "runArgs": ["--security-opt", "label=disable"],
}


# -- settings ------------------------------------------------------------------------------------


def test_a_local_profile_names_its_engine_and_run_options() -> None:
    settings = parse_settings(
        """
        profiles:
          local:
            container_engine: "podman --runtime runc"
            container_run_args: "--security-opt label=disable --ulimit 'nofile=1024:2048'"
          listed:
            container_run_args: [--security-opt, label=disable]
        """
    )
    local = settings.profiles["local"]
    assert local.container_engine == "podman --runtime runc"
    assert local.container_run_args == (
        "--security-opt",
        "label=disable",
        "--ulimit",
        "nofile=1024:2048",
    )
    listed = settings.profiles["listed"]
    assert listed.container_engine is None
    assert listed.container_run_args == ("--security-opt", "label=disable")
    # Unset: the service finds its own engine (podman, then docker).
    assert parse_settings("project: p").profiles["local"].container_run_args == ()


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (
            "profiles: {local: {container_engine: 3}}",
            "profiles.local.container_engine must be a command such as 'podman --runtime runc'",
        ),
        ("profiles: {local: {container_engine: ''}}", "profiles.local.container_engine must"),
        ("profiles: {local: {container_engine: [podman]}}", "profiles.local.container_engine"),
        ('profiles: {local: {container_engine: "podman \'"}}', "profiles.local.container_engine"),
        (
            "profiles: {local: {container_run_args: {a: 1}}}",
            "profiles.local.container_run_args must be options as one string",
        ),
        ("profiles: {local: {container_run_args: [--x, 1]}}", "profiles.local.container_run_args"),
        ('profiles: {local: {container_run_args: "\'--x"}}', "profiles.local.container_run_args"),
        (
            "profiles: {c: {kind: url, endpoint: 'https://x', container_engine: podman}}",
            "profiles.c.container_engine applies only to a local profile",
        ),
        (
            "profiles: {v: {kind: vertex, project: p, region: us-central1, "
            "container_run_args: --x}}",
            "profiles.v.container_run_args applies only to a local profile",
        ),
    ],
)
def test_bad_container_settings_name_the_key(text: str, words: str) -> None:
    with pytest.raises(SettingsError) as err:
        parse_settings(text)
    assert words in str(err.value)


def test_the_profiles_engine_reaches_the_services_command_line() -> None:
    """What the app adds to ``tui-app service start`` reads back, through the service's own
    parser, as the profile's engine and options (a run option starting with ``--`` included)."""
    profile = Profile(
        "local",
        container_engine="podman --runtime runc",
        container_run_args=("--security-opt", "label=disable", "--env", "A=b c"),
    )
    argv = service_options(profile)
    parser = argparse.ArgumentParser()
    add_run_arguments(parser)
    opts = ServiceOptions.from_args(parser.parse_args(argv), env={})
    assert opts.container_engine == "podman --runtime runc"
    assert opts.container_run_args == ("--security-opt", "label=disable", "--env", "A=b c")
    # Nothing set: nothing added, so $TUI_APP_CONTAINER_ENGINE or PATH decide.
    assert service_options(Profile("local")) == []


# -- the engine, read once per connection --------------------------------------------------------


def test_the_engine_is_read_once_per_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    answers: list[dict[str, Any] | None] = [None, {"status": "ok", "containerEngine": PODMAN}]

    def health(url: str) -> dict[str, Any] | None:
        calls.append(url)
        return answers.pop(0) if answers else {"status": "ok"}

    monkeypatch.setattr(connection_module, "service_health", health)
    conn = Connection("http://127.0.0.1:1", make_credentials(None), "local", local=True)
    assert conn.container_engine() is None  # no answer: not kept, asked again next time
    assert conn.container_engine() == PODMAN
    assert conn.container_engine() == PODMAN
    assert len(calls) == 2
    # A reconnect is a new connection: it asks again (the service may be another one).
    again = Connection("http://127.0.0.1:1", make_credentials(None), "local", local=True)
    assert again.container_engine() == {}  # an older service that does not say
    assert len(calls) == 3
    # Not the local service: the platform runs the images; nothing is asked.
    cloud = Connection("https://ml.googleapis.com", make_credentials(None), "cloud")
    assert cloud.container_engine() is None
    assert len(calls) == 3


def test_settings_file_round_trip(tmp_path: Path) -> None:
    """The keys as a user writes them in settings.yaml, read by load_settings."""
    path = tmp_path / "settings.yaml"
    path.write_text("profiles:\n  local:\n    container_engine: docker\n")
    settings, problem = load_settings(path)
    assert problem is None
    assert service_options(settings.active_profile()) == ["--container-engine", "docker"]
    path.write_text("profiles:\n  local:\n    container_engine: 7\n")
    settings, problem = load_settings(path)
    assert problem is not None and "profiles.local.container_engine" in problem
    assert settings.active_profile().container_engine is None  # the defaults, said why
