"""Named builder presets: one YAML file each under ``<config dir>/presets/``.

A preset is whatever mapping the builder hands over (its form as a job, the base name, a package
folder); this module only stores it. Names become file names, so they are checked first: letters,
digits, ``-``, ``_`` and ``.``, starting with a letter or digit, so no name can leave the folder.
Files are written atomically (a temporary file, then a rename): a crash never leaves half a preset.

It also says where the sample trainer is (``sample_trainer_dir``): the built-in presets run it as
given, and ``tui-app --demo`` submits it, so both find it in one place.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from tui_app.config.locations import config_dir

_PACKAGE = Path(__file__).resolve().parents[1]
"""The ``tui_app`` folder (this module is ``tui_app/config/presets.py``)."""
SAMPLE_TRAINER_DIRS: tuple[Path, ...] = (
    _PACKAGE / "sample_trainer",
    _PACKAGE.parent / "examples" / "trainer",
)
"""Where the sample trainer's folder (its ``setup.py``) may be, first found wins: an installed
wheel carries it as ``tui_app/sample_trainer`` (setup.py maps it there); a checkout or an
editable install has it in ``examples/trainer``."""

PRESET_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
SUFFIX = ".yaml"


class PresetError(ValueError):
    """A preset name is invalid, or a preset cannot be read or written; the message says why."""


def presets_dir() -> Path:
    """``<config dir>/presets`` (``~/.config/tui-app/presets``)."""
    return config_dir() / "presets"


def sample_trainer_dir() -> Path | None:
    """The sample trainer's folder (the one holding its ``setup.py``), or None when this install
    has none: the built-in presets fill it in as the package folder, and where it is missing
    their notes say what to fill instead (``starter_presets.CODE_NOTE``)."""
    return next((d for d in SAMPLE_TRAINER_DIRS if (d / "setup.py").is_file()), None)


def preset_name_error(name: str) -> str | None:
    """Why ``name`` cannot name a preset, or None when it can."""
    if not name:
        return "A preset needs a name."
    if not PRESET_NAME.match(name) or name.endswith(".") or ".." in name:
        return (
            f"{name[:40]!r} cannot name a preset: use letters, digits, '-', '_' and '.', "
            "starting with a letter or digit, at most 64 characters."
        )
    return None


def _path(name: str, folder: Path | None) -> Path:
    why = preset_name_error(name)
    if why:
        raise PresetError(why)
    return (folder or presets_dir()) / f"{name}{SUFFIX}"


def list_presets(folder: Path | None = None) -> list[str]:
    """The names of the saved presets, sorted case-insensitively (none when the folder is missing).

    Files whose names could not have been saved from here are skipped.
    """
    root = folder or presets_dir()
    try:
        names = [p.name[: -len(SUFFIX)] for p in root.iterdir() if p.name.endswith(SUFFIX)]
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise PresetError(f"Cannot list the presets in {root}: {exc.strerror}") from None
    return sorted((n for n in names if preset_name_error(n) is None), key=str.casefold)


def preset_exists(name: str, folder: Path | None = None) -> bool:
    """True when a preset called ``name`` is saved."""
    return _path(name, folder).is_file()


def save_preset(name: str, data: Mapping[str, Any], folder: Path | None = None) -> Path:
    """Write ``data`` as preset ``name``, replacing any preset of that name.

    Returns:
        The file written.

    Raises:
        PresetError: an invalid name, or the file cannot be written.
    """
    path = _path(name, folder)
    text = f"# tui-app builder preset {name!r}\n" + yaml.safe_dump(
        dict(data), sort_keys=False, allow_unicode=True, default_flow_style=False
    )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        raise PresetError(
            f"Cannot save the preset {name!r} in {path.parent}: {exc.strerror}"
        ) from None
    return path


def load_preset(name: str, folder: Path | None = None) -> dict[str, Any]:
    """The mapping saved as preset ``name``.

    Raises:
        PresetError: no such preset, or its file is not a YAML mapping (hand-edited).
    """
    path = _path(name, folder)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PresetError(f"There is no preset called {name!r}.") from None
    except OSError as exc:
        raise PresetError(f"Cannot read the preset {name!r}: {exc.strerror}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise PresetError(f"The preset {name!r} is not valid YAML{where}: {path}") from None
    if not isinstance(data, dict):
        raise PresetError(f"The preset {name!r} does not hold a mapping: {path}")
    return data


def delete_preset(name: str, folder: Path | None = None) -> None:
    """Remove preset ``name``.

    Raises:
        PresetError: no such preset, or it cannot be removed.
    """
    path = _path(name, folder)
    try:
        path.unlink()
    except FileNotFoundError:
        raise PresetError(f"There is no preset called {name!r}.") from None
    except OSError as exc:
        raise PresetError(f"Cannot delete the preset {name!r}: {exc.strerror}") from None
