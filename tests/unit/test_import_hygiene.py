"""The layers hold: the model, clients and service never load Textual; `themes` is ours.

The widgets and themes are ``tui_app.widgets`` and ``tui_app.themes``: a top-level ``widgets`` or
``themes`` loaded by the app would be a second copy of the same classes, and in an installed
tui-app it would be another distribution's package.

Run in a subprocess and read `sys.modules`: the only way to prove an import does not happen.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _loaded(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys; print('\\n'.join(sys.modules))"],
        check=True,
        capture_output=True,
        text=True,
        cwd=REPO,
    ).stdout
    return set(out.split())


def test_core_layers_never_import_textual() -> None:
    mods = _loaded(
        "import tui_app.model.jobs.job_spec, tui_app.model.filters.filter_expr, "
        "tui_app.api.jobs_client, "
        "tui_app.local.server, tui_app.local.jobs, tui_app.local.execution.runner"
    )
    assert not {m for m in mods if m == "textual" or m.startswith(("textual.", "rich"))}


def test_supervisor_starts_light() -> None:
    mods = _loaded("import tui_app.local.execution.supervisor")
    assert "aiohttp" not in mods and "pydantic" not in mods and "sqlite3" not in mods


def test_themes_package_is_ours() -> None:
    import tui_app.themes

    assert Path(tui_app.themes.__file__).resolve().is_relative_to(REPO)


def test_the_app_loads_no_top_level_widgets_or_themes() -> None:
    mods = _loaded("import tui_app.shell.app, tui_app.entry.cli, tui_app.entry.jobs_cli")
    assert "tui_app.widgets.job_table" in mods and "tui_app.themes" in mods
    assert not {m for m in mods if m.split(".")[0] in ("widgets", "themes")}
