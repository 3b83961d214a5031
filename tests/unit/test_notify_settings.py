"""settings.yaml's notify: which states notify, through which channels, watch_submitted."""

from __future__ import annotations

import pytest

from tui_app.config.settings import NotifySettings, SettingsError, parse_settings


def test_defaults_notify_every_end_on_every_channel() -> None:
    notify = parse_settings("project: p").notify
    assert notify == NotifySettings()
    assert notify.states == {"SUCCEEDED", "FAILED", "CANCELLED"}
    assert notify.channels == {"toast", "flash", "bell", "desktop"}
    assert notify.watch_submitted is False
    assert parse_settings("notify:").notify == NotifySettings()


def test_the_documented_example() -> None:
    notify = parse_settings(
        """
        notify:
          states: [FAILED, CANCELLED]
          channels: [toast, flash, bell]
          watch_submitted: true
        """
    ).notify
    assert notify == NotifySettings(
        states=frozenset({"FAILED", "CANCELLED"}),
        channels=frozenset({"toast", "flash", "bell"}),
        watch_submitted=True,
    )


def test_words_in_any_case_and_empty_lists() -> None:
    notify = parse_settings("notify: {states: [failed], channels: [Bell], watch_submitted: false}")
    assert notify.notify.states == {"FAILED"} and notify.notify.channels == {"bell"}
    quiet = parse_settings("notify: {states: [], channels: []}").notify
    assert quiet.states == frozenset() and quiet.channels == frozenset()


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("notify: [FAILED]", "notify must be a mapping"),
        ("notify: {state: [FAILED]}", "notify: unknown keys state; known: states"),
        (
            "notify: {states: [FAILED, RUNNING]}",
            "notify.states: 'RUNNING' is not one of SUCCEEDED, FAILED, CANCELLED",
        ),
        ("notify: {states: FAILED}", "notify.states must be a list of SUCCEEDED, FAILED"),
        (
            "notify: {channels: [toast, email]}",
            "notify.channels: 'email' is not one of toast, flash, bell, desktop",
        ),
        ("notify: {channels: [1]}", "notify.channels must be a list of toast, flash"),
        ("notify: {watch_submitted: often}", "notify.watch_submitted must be true or false"),
    ],
)
def test_wrong_values_name_the_key_and_what_is_allowed(text: str, words: str) -> None:
    with pytest.raises(SettingsError) as err:
        parse_settings(text)
    assert words in str(err.value)
