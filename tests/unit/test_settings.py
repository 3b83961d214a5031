"""Settings: profiles, defaults, broken files that never stop the app, theme persistence."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from tui_app.config.settings import (
    Settings,
    SettingsError,
    load_settings,
    parse_settings,
    save_setting,
)
from tui_app.entry.launch import resolve


def test_defaults_and_profiles(tmp_path: Path) -> None:
    settings, problem = load_settings(tmp_path / "missing.yaml")
    assert problem is None and settings == Settings()
    parsed = parse_settings(
        """
        profile: staging
        project: team-a
        refresh_seconds: 5
        keymap: {jobs.cancel: k}
        profiles:
          staging: {kind: url, endpoint: "https://ml.example.com", token_file: ~/tok, project: p2}
        """
    )
    assert parsed.active_profile().endpoint == "https://ml.example.com"
    assert parsed.refresh_seconds == 5.0 and parsed.keymap == {"jobs.cancel": "k"}
    assert parsed.confirm_resubmit  # R asks unless told not to
    assert not parse_settings("confirm_resubmit: false").confirm_resubmit
    args = argparse.Namespace(profile=None, project=None, state_dir=None)
    profile, project, state_dir = resolve(args, parsed)
    assert (profile.name, project, state_dir) == ("staging", "p2", None)
    args = argparse.Namespace(profile="local", project="x", state_dir="/tmp/s")
    profile, project, state_dir = resolve(args, parsed)
    assert (profile.kind, project, str(state_dir)) == ("local", "x", "/tmp/s")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("profile: [", "not valid YAML"),
        ("- a list", "must be a mapping"),
        ("refresh_seconds: fast", "refresh_seconds must be a number"),
        ("refresh_seconds: 0", "between 0.2 and 3600"),
        ("profiles: {x: {kind: ftp}}", "profiles.x.kind must be one of local, url, vertex"),
        ("profiles: {x: {kind: vertex, region: us-central1}}", "profiles.x.project is required"),
        ("profiles: {x: {kind: vertex, project: p}}", "profiles.x.region is required"),
        (
            "profiles: {x: {kind: vertex, project: p, region: 'US Central'}}",
            "region must be a Google Cloud region",
        ),
        ("profiles: {x: {kind: url}}", "profiles.x.endpoint is required"),
        ("profiles: {x: {kind: local, colour: red}}", "unknown keys colour"),
        ("keymap: [a]", "keymap must map binding ids"),
        ("confirm_resubmit: sometimes", "confirm_resubmit must be true or false"),
    ],
)
def test_bad_settings_say_why(text: str, words: str) -> None:
    with pytest.raises(SettingsError) as err:
        parse_settings(text)
    assert words in str(err.value)


def test_broken_file_falls_back_to_defaults(tmp_path: Path) -> None:
    path = tmp_path / "settings.yaml"
    path.write_text("refresh_seconds: fast\n")
    settings, problem = load_settings(path)
    assert settings == Settings()
    assert problem is not None and "refresh_seconds" in problem and "defaults" in problem


def test_save_setting_keeps_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "settings.yaml"
    path.write_text("project: team-a\nprofiles:\n  s: {kind: url, endpoint: 'http://x'}\n")
    save_setting("theme", "tui-light", path)
    settings, problem = load_settings(path)
    assert problem is None
    assert settings.theme == "tui-light" and settings.project == "team-a"
    assert "s" in settings.profiles
    assert Settings().with_changes(profile="nope").profile == "nope"
    with pytest.raises(SettingsError):
        Settings().with_changes(profile="nope").active_profile()


def test_vertex_profile(tmp_path: Path) -> None:
    parsed = parse_settings(
        """
        profile: cloud
        profiles:
          cloud:
            kind: vertex
            project: my-project
            region: europe-west4
            executor_image: europe-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-4.py310:latest
        """
    )
    profile = parsed.active_profile()
    assert (profile.kind, profile.project, profile.region) == (
        "vertex",
        "my-project",
        "europe-west4",
    )
    assert profile.executor_image is not None and "pytorch" in profile.executor_image
    assert profile.endpoint is None and profile.logging_endpoint is None
    args = argparse.Namespace(profile=None, project=None, state_dir=None)
    assert resolve(args, parsed)[1] == "my-project"


def test_profiles_are_named_before_any_connection() -> None:
    """The header and the banner name the backend even when it cannot be reached (issue 29:
    a Vertex profile without credentials said "Disconnected from connecting…")."""
    parsed = parse_settings(
        """
        profiles:
          cloud: {kind: vertex, project: p, region: us-central1}
          shared: {kind: url, endpoint: "https://ml.example.com"}
        """
    )
    assert parsed.profiles["cloud"].label() == "cloud (Vertex AI us-central1)"
    assert parsed.profiles["shared"].label() == "shared (https://ml.example.com)"
    assert parsed.profiles["local"].label() == "local"
    assert parsed.profiles["local"].label("127.0.0.1:8470") == "local (127.0.0.1:8470)"
