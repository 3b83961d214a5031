"""Where things live on disk: the one place both the service and its clients read.

The clients find the local service through files in its state dir (``service.json``, the token)
without importing the service; the service writes them. Both take the names from here.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import platformdirs

APP_NAME = "tui-app"
ENV_STATE_DIR = "TUI_APP_STATE_DIR"
ENV_CONFIG_DIR = "TUI_APP_CONFIG_DIR"
SAVED_LOGS_FOLDER = "tui-app-logs"
SERVICE_FILE = "service.json"
TOKEN_FILE = "token"
RESUBMITS_FILE = "resubmits.jsonl"


def _dir(env_name: str, xdg_dir: Callable[..., str]) -> Path:
    """The folder ``$env_name`` names, else tui-app's in the XDG folder ``xdg_dir`` gives: the
    one rule both the state dir and the config dir follow."""
    env = os.environ.get(env_name)
    if env:
        return Path(env).expanduser()
    return Path(xdg_dir(APP_NAME, appauthor=False))


def default_state_dir() -> Path:
    """``$TUI_APP_STATE_DIR`` or the XDG data dir (``~/.local/share/tui-app``)."""
    return _dir(ENV_STATE_DIR, platformdirs.user_data_dir)


def resubmit_history_file() -> Path:
    """Which job each resubmitted job was made from (``api.job_compare.ResubmitHistory``): in
    the data dir, beside the local service's state, as every profile's resubmits are the user's
    own record, whichever backend ran them."""
    return default_state_dir() / RESUBMITS_FILE


def config_dir() -> Path:
    """``$TUI_APP_CONFIG_DIR`` or the XDG config dir (``~/.config/tui-app``): settings, presets."""
    return _dir(ENV_CONFIG_DIR, platformdirs.user_config_dir)


def saved_logs_dir() -> Path:
    """Where the logs screen proposes to save a view: ``tui-app-logs`` in the user's downloads
    folder (``~/Downloads``, or ``XDG_DOWNLOAD_DIR``). The save creates it.

    A saved view is a file for the user to open, attach or send on: the downloads folder is
    where one looks for such a file, while the data dir is the service's state (its jobs and
    their files) and the folder the TUI started from may be a git checkout.
    """
    return Path(platformdirs.user_downloads_dir()) / SAVED_LOGS_FOLDER
