"""The user's settings: backend profiles, project, theme, refresh rate, keymap.

Stored as YAML under the XDG config dir. A broken file never stops the app: it falls back to the
defaults and says which line is wrong, and the file is only rewritten when the user changes a
setting from the app (theme), so hand edits survive.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tui_app.config.executors import DEFAULT_EXECUTOR, executor_names, executor_options
from tui_app.config.locations import config_dir

DEFAULT_PROJECT = "local-project"
DEFAULT_THEME = "tui-dark"
DEFAULT_REFRESH_SECONDS = 2.0
PROFILE_KINDS = ("local", "url", "vertex")
NOTIFY_STATES = ("SUCCEEDED", "FAILED", "CANCELLED")
"""The job states a watched job can end in (the ml v1 API's terminal states)."""
NOTIFY_CHANNELS = ("toast", "flash", "bell", "desktop")
"""Where a watched job's end is told; the same tuple as ``model/notify/terminal_notify``'s, kept
here because the configuration imports no other part of tui-app (a unit test holds them equal)."""
VERTEX_REGION = re.compile(r"^[a-z]+(-[a-z]+)*\d*$")
"""A Google Cloud region as it appears in an API host name: ``us-central1``, ``europe-west4``."""


class SettingsError(ValueError):
    """The settings file is unreadable or invalid; the message says where."""


@dataclass(frozen=True)
class Profile:
    """A backend: the embedded local service, any ml-v1-compatible endpoint, or Vertex AI."""

    name: str
    kind: str = "local"
    endpoint: str | None = None
    """For ``url`` profiles: the API root, e.g. ``https://ml.googleapis.com``. For ``vertex``
    profiles an optional override of ``https://{region}-aiplatform.googleapis.com``."""
    token: str | None = None
    token_file: str | None = None
    adc: bool = False
    """Use Google application default credentials (google-auth) for a ``url`` profile."""
    state_dir: str | None = None
    """For ``local`` profiles: the service's state dir (default: the XDG data dir)."""
    project: str | None = None
    region: str | None = None
    """For ``vertex`` profiles: where jobs run (required), e.g. ``us-central1``."""
    executor_image: str | None = None
    """For ``vertex`` profiles: the pre-built training image for Python-package jobs, used
    instead of the one guessed from ``runtimeVersion`` (required for PyTorch, sklearn, XGBoost)."""
    logging_endpoint: str | None = None
    """Where log entries are read; default ``https://logging.googleapis.com`` for ``vertex``
    and the jobs endpoint itself otherwise."""
    container_engine: str | None = None
    """For ``local`` profiles: the command the service runs custom containers with, global
    options included (``podman --runtime runc``); None: the service looks for podman, then
    docker. Passed as ``--container-engine`` when the app starts the service."""
    container_run_args: tuple[str, ...] = ()
    """For ``local`` profiles: extra ``run`` options for every replica container
    (``--security-opt label=disable``), passed as ``--container-run-args``."""
    executor: str = DEFAULT_EXECUTOR
    """For ``local`` profiles: where the service runs replicas, ``local`` (this machine) or
    ``ray`` (a Ray cluster), passed as ``--executor`` when the app starts the service. The
    names, and the options below that belong to one executor, are ``config/executors.py``'s."""
    ray_address: str | None = None
    """For ``local`` profiles with ``executor: ray``: the cluster's ``HOST:PORT`` (default: the
    one ``ray start`` on this machine joined), passed as ``--ray-address``; registered as the
    Ray executor's option, so this field's name is the settings key and the flag's."""

    def label(self, local_host: str | None = None) -> str:
        """How the header and the banners name the profile: ``local (127.0.0.1:8470)``,
        ``cloud (Vertex AI us-central1)``, ``shared (https://ml.example.com)``.

        Known before any connection (a local service's address only once it answers: the
        name alone until then), so a backend that cannot be reached is still named.
        """
        if self.kind == "local":
            return f"{self.name} ({local_host})" if local_host else self.name
        if self.kind == "vertex":
            return f"{self.name} (Vertex AI {self.region})"
        return f"{self.name} ({self.endpoint})"


@dataclass(frozen=True)
class NotifySettings:
    """``notify:``: which ends of a watched job are told, and how (the TUI's ``w``/``W`` and
    ``jobs wait --notify``)."""

    states: frozenset[str] = frozenset(NOTIFY_STATES)
    """The end states that notify; a job that ends in another one ends quietly."""
    channels: frozenset[str] = frozenset(NOTIFY_CHANNELS)
    """Of ``toast``, ``flash``, ``bell``, ``desktop``; ``TUI_APP_NO_NOTIFY`` turns the last two
    off whatever this says."""
    watch_submitted: bool = False
    """Every job submitted from the TUI is watched from the start (``W`` toggles it)."""


@dataclass(frozen=True)
class Settings:
    profile: str = "local"
    project: str = DEFAULT_PROJECT
    theme: str = DEFAULT_THEME
    refresh_seconds: float = DEFAULT_REFRESH_SECONDS
    keymap: dict[str, str] = field(default_factory=dict)
    profiles: dict[str, Profile] = field(default_factory=lambda: {"local": Profile("local")})
    confirm_resubmit: bool = True
    """``R`` asks before it starts the copy (a cloud profile's is a paid cluster)."""
    notify: NotifySettings = field(default_factory=NotifySettings)

    def active_profile(self) -> Profile:
        """The profile in use.

        Raises:
            SettingsError: naming the unknown profile and the known ones.
        """
        try:
            return self.profiles[self.profile]
        except KeyError:
            known = ", ".join(sorted(self.profiles))
            raise SettingsError(
                f"Unknown profile {self.profile!r}; known profiles: {known}."
            ) from None

    def with_changes(self, **changes: Any) -> Settings:
        return replace(self, **changes)


def settings_path() -> Path:
    return config_dir() / "settings.yaml"


def _profile(name: str, data: Any) -> Profile:
    if not isinstance(data, dict):
        raise SettingsError(f"profiles.{name} must be a mapping.")
    kind = data.get("kind", "local")
    if kind not in PROFILE_KINDS:
        raise SettingsError(f"profiles.{name}.kind must be one of {', '.join(PROFILE_KINDS)}.")
    if kind == "url" and not data.get("endpoint"):
        raise SettingsError(f"profiles.{name}.endpoint is required for a url profile.")
    if kind == "vertex":
        for key in ("project", "region"):
            if not data.get(key):
                raise SettingsError(f"profiles.{name}.{key} is required for a vertex profile.")
        if not VERTEX_REGION.match(str(data["region"])):
            raise SettingsError(
                f"profiles.{name}.region must be a Google Cloud region such as us-central1, "
                f"not {data['region']!r}."
            )
    allowed = {
        "kind",
        "endpoint",
        "token",
        "token_file",
        "adc",
        "state_dir",
        "project",
        "region",
        "executor_image",
        "logging_endpoint",
        *_CONTAINER_KEYS,
        *_EXECUTOR_KEYS,
    }
    unknown = set(data) - allowed
    if unknown:
        raise SettingsError(f"profiles.{name}: unknown keys {', '.join(sorted(unknown))}.")
    engine, run_args = _container_settings(name, kind, data)
    executor, options = _executor_settings(name, kind, data)
    return Profile(
        name=name,
        kind=kind,
        endpoint=data.get("endpoint"),
        token=data.get("token"),
        token_file=data.get("token_file"),
        adc=bool(data.get("adc", False)),
        state_dir=data.get("state_dir"),
        project=data.get("project"),
        region=str(data["region"]) if data.get("region") else None,
        executor_image=data.get("executor_image"),
        logging_endpoint=data.get("logging_endpoint"),
        container_engine=engine,
        container_run_args=run_args,
        executor=executor,
        ray_address=options.get("ray_address"),
    )


_CONTAINER_KEYS = ("container_engine", "container_run_args")
_EXECUTOR_KEYS = ("executor", *(option.key for _, option in executor_options()))


def _executor_settings(
    name: str, kind: str, data: dict[str, Any]
) -> tuple[str, dict[str, str | None]]:
    """A local profile's ``executor`` and its executor options (``ray_address``), by key: both
    read from the registry in ``config/executors.py``.

    Raises:
        SettingsError: naming the key: on a profile that runs no service, an executor that is
            not registered, an option that is not text (a Ray address not ``HOST:PORT`` text),
            or one set for another executor than the one it belongs to.
    """
    for key in _EXECUTOR_KEYS:
        if data.get(key) is not None and kind != "local":
            raise SettingsError(
                f"profiles.{name}.{key} applies only to a local profile (its service runs the "
                f"replicas), not a {kind} one."
            )
    executor = data.get("executor") or DEFAULT_EXECUTOR
    if executor not in executor_names():
        raise SettingsError(
            f"profiles.{name}.executor must be one of {', '.join(executor_names())}, "
            f"not {executor!r}."
        )
    options: dict[str, str | None] = {}
    for owner, option in executor_options():
        value = data.get(option.key)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise SettingsError(
                f"profiles.{name}.{option.key} must be {option.what} as text, not {value!r}."
            )
        if value is not None and owner.name != executor:
            raise SettingsError(f"profiles.{name}.{option.key} needs executor: {owner.name}.")
        options[option.key] = value.strip() if value else None
    return executor, options


def _container_settings(
    name: str, kind: str, data: dict[str, Any]
) -> tuple[str | None, tuple[str, ...]]:
    """A local profile's ``container_engine`` (a command, as one string) and
    ``container_run_args`` (one string of shell words, or a list of words).

    Raises:
        SettingsError: naming the key, when it is on a profile that runs no service or is not
            text a shell could read.
    """
    for key in _CONTAINER_KEYS:
        if data.get(key) is not None and kind != "local":
            raise SettingsError(
                f"profiles.{name}.{key} applies only to a local profile (its service runs the "
                f"containers), not a {kind} one."
            )
    engine = data.get("container_engine")
    if engine is not None:
        words = _shell_words(engine) if isinstance(engine, str) else None
        if not words:
            raise SettingsError(
                f"profiles.{name}.container_engine must be a command such as "
                f"'podman --runtime runc', not {engine!r}."
            )
    run_args = data.get("container_run_args")
    if run_args is None:
        args: list[str] | None = []
    elif isinstance(run_args, str):
        args = _shell_words(run_args)
    elif isinstance(run_args, list) and all(isinstance(a, str) for a in run_args):
        args = list(run_args)
    else:
        args = None
    if args is None:
        raise SettingsError(
            f"profiles.{name}.container_run_args must be options as one string "
            f"('--security-opt label=disable') or a list of strings, not {run_args!r}."
        )
    return (engine.strip() if engine is not None else None), tuple(args)


def _shell_words(text: str) -> list[str] | None:
    """``text`` split as a shell would, or None when it cannot be (an unclosed quote)."""
    try:
        return shlex.split(text)
    except ValueError:
        return None


def _word_set(key: str, value: Any, allowed: tuple[str, ...], upper: bool) -> frozenset[str]:
    """A list of words from ``allowed`` (any case), as a set in the canonical case.

    Raises:
        SettingsError: naming ``key`` and the allowed words.
    """
    choices = ", ".join(allowed)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SettingsError(f"{key} must be a list of {choices}, not {value!r}.")
    words = [v.strip().upper() if upper else v.strip().lower() for v in value]
    unknown = [v for v, w in zip(value, words, strict=True) if w not in allowed]
    if unknown:
        raise SettingsError(f"{key}: {', '.join(map(repr, unknown))} is not one of {choices}.")
    return frozenset(words)


def _notify(data: Any) -> NotifySettings:
    """``notify:`` (absent or empty: the defaults).

    Raises:
        SettingsError: naming the key that is wrong and what it allows.
    """
    base = NotifySettings()
    if data is None:
        return base
    if not isinstance(data, dict):
        raise SettingsError("notify must be a mapping with states, channels, watch_submitted.")
    unknown = set(data) - {"states", "channels", "watch_submitted"}
    if unknown:
        raise SettingsError(
            f"notify: unknown keys {', '.join(sorted(map(str, unknown)))}; "
            "known: states, channels, watch_submitted."
        )
    states = base.states
    if "states" in data:
        states = _word_set("notify.states", data["states"], NOTIFY_STATES, upper=True)
    channels = base.channels
    if "channels" in data:
        channels = _word_set("notify.channels", data["channels"], NOTIFY_CHANNELS, upper=False)
    watch = data.get("watch_submitted", base.watch_submitted)
    if not isinstance(watch, bool):
        raise SettingsError(f"notify.watch_submitted must be true or false, not {watch!r}.")
    return NotifySettings(states=states, channels=channels, watch_submitted=watch)


def parse_settings(text: str) -> Settings:
    """Settings from YAML text.

    Raises:
        SettingsError: with the line or key that is wrong.
    """
    import yaml  # on first use: with no settings file, opening the TUI never needs it

    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise SettingsError(f"settings.yaml is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise SettingsError("settings.yaml must be a mapping of settings.")
    base = Settings()
    profiles = dict(base.profiles)
    for name, pdata in (data.get("profiles") or {}).items():
        profiles[str(name)] = _profile(str(name), pdata)
    try:
        refresh = float(data.get("refresh_seconds", base.refresh_seconds))
    except (TypeError, ValueError):
        raise SettingsError("refresh_seconds must be a number of seconds.") from None
    if not 0.2 <= refresh <= 3600:
        raise SettingsError("refresh_seconds must be between 0.2 and 3600.")
    keymap = data.get("keymap") or {}
    if not isinstance(keymap, dict) or not all(isinstance(v, str) for v in keymap.values()):
        raise SettingsError("keymap must map binding ids to keys, e.g. {jobs.cancel: x}.")
    confirm = data.get("confirm_resubmit", base.confirm_resubmit)
    if not isinstance(confirm, bool):
        raise SettingsError("confirm_resubmit must be true or false.")
    return Settings(
        notify=_notify(data.get("notify")),
        confirm_resubmit=confirm,
        profile=str(data.get("profile", base.profile)),
        project=str(data.get("project", base.project)),
        theme=str(data.get("theme", base.theme)),
        refresh_seconds=refresh,
        keymap={str(k): v for k, v in keymap.items()},
        profiles=profiles,
    )


def load_settings(path: Path | None = None) -> tuple[Settings, str | None]:
    """The settings and, when the file is broken, why (the defaults are used then)."""
    path = path or settings_path()
    try:
        text = path.read_text()
    except FileNotFoundError:
        return Settings(), None
    except OSError as exc:
        return Settings(), f"Cannot read {path}: {exc.strerror}"
    try:
        return parse_settings(text), None
    except SettingsError as exc:
        return Settings(), f"{path}: {exc} Using the defaults."


def save_setting(key: str, value: Any, path: Path | None = None) -> None:
    """Change one top-level setting in the file, keeping everything else as written."""
    import yaml

    path = path or settings_path()
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except (FileNotFoundError, yaml.YAMLError):
        data = {}
    if not isinstance(data, dict):
        data = {}
    data[key] = value
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(yaml.safe_dump(data, sort_keys=False))
    os.replace(tmp, path)
