"""Where things live on disk: the one place both the service and its clients read.

The clients find the local service through files in its state dir (``service.json``, the token)
without importing the service; the service writes them. Both take the names from here.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "tui-app"
ENV_STATE_DIR = "TUI_APP_STATE_DIR"
ENV_CONFIG_DIR = "TUI_APP_CONFIG_DIR"
SAVED_LOGS_FOLDER = "tui-app-logs"
SERVICE_FILE = "service.json"
TOKEN_FILE = "token"
RESUBMITS_FILE = "resubmits.jsonl"


def default_state_dir() -> Path:
    """``$TUI_APP_STATE_DIR`` or the XDG data dir (``~/.local/share/tui-app``)."""
    env = os.environ.get(ENV_STATE_DIR)
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def resubmit_history_file() -> Path:
    """Which job each resubmitted job was made from (``api.job_compare.ResubmitHistory``): in
    the data dir, beside the local service's state, as every profile's resubmits are the user's
    own record, whichever backend ran them."""
    return default_state_dir() / RESUBMITS_FILE


def config_dir() -> Path:
    """``$TUI_APP_CONFIG_DIR`` or the XDG config dir (``~/.config/tui-app``): settings, presets."""
    env = os.environ.get(ENV_CONFIG_DIR)
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def saved_logs_dir() -> Path:
    """Where the logs screen proposes to save a view: ``tui-app-logs`` in the user's downloads
    folder (``~/Downloads``, or ``XDG_DOWNLOAD_DIR``). The save creates it.

    A saved view is a file for the user to open, attach or send on: the downloads folder is
    where one looks for such a file, while the data dir is the service's state (its jobs and
    their files) and the folder the TUI started from may be a git checkout.
    """
    return Path(platformdirs.user_downloads_dir()) / SAVED_LOGS_FOLDER
