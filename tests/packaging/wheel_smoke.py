"""Run by a fresh venv's Python, with tui-app installed from its wheel: does the install work?

Not a test module: ``tests/packaging/test_wheel.py`` runs it as a script, in isolated mode
(``-I``) from a temporary directory, so nothing of the checkout is importable and every import
below must come from the wheel. It exits non-zero with a message naming what is missing.

Arguments: the checkout's root, the venv's site-packages, a scratch directory.
"""

from __future__ import annotations

import asyncio
import importlib
import subprocess
import sys
import time
from pathlib import Path

# The installed package -> the checkout's folder that holds it (widgets/ and themes/ sit at the
# top of the repository and install inside tui_app).
PACKAGES = {"tui_app": "tui_app", "tui_app.widgets": "widgets", "tui_app.themes": "themes"}
# Distributions of other projects that own the top-level names our folders have: installed
# before the wheel, they must import as they were after it.
STAND_INS = ("themes", "widgets")
# Data, not our code: the sample trainer the wheel carries for `tui-app --demo` (its setup.py
# would run setuptools when imported). Its files are checked, not imported.
DATA_PACKAGES = ("tui_app.sample_trainer",)


def fail(message: str) -> None:
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def installed_files(root: Path, site: Path, pattern: str) -> list[tuple[Path, Path]]:
    """(checkout file, where the wheel must have put it) for each file matching ``pattern``.

    The links tui_app/widgets and tui_app/themes are skipped: their folders are walked as
    the packages they are.
    """
    pairs = []
    for package, folder in PACKAGES.items():
        base = root / folder
        target = site.joinpath(*package.split("."))
        for path in sorted(base.rglob(pattern)):
            relative = path.relative_to(base)
            if package == "tui_app" and relative.parts[0] in ("widgets", "themes"):
                continue
            pairs.append((path, target / relative))
    return pairs


def source_modules(root: Path, site: Path) -> list[str]:
    """Every module of the checkout's packages, by the files that are there."""
    names = []
    for path, installed in installed_files(root, site, "*.py"):
        parts = list(installed.relative_to(site).with_suffix("").parts)
        if parts[-1] == "__main__":  # runs the program when imported; the file is checked
            if not installed.is_file():
                fail(f"{path.relative_to(root)} is not in the wheel")
            continue
        if parts[-1] == "__init__":
            parts.pop()
        names.append(".".join(parts))
    return names


def check_stand_ins(site: Path) -> None:
    """The other projects' ``themes`` and ``widgets`` are still theirs, whole."""
    for name in STAND_INS:
        module = importlib.import_module(name)
        if getattr(module, "STAND_IN", None) != name:
            fail(f"import {name} is no longer the other distribution's: {module.__file__}")
    print(f"the other distributions' {', '.join(STAND_INS)} import as they were")


def check_imports(root: Path, site: Path) -> None:
    names = source_modules(root, site)
    for name in names:
        try:
            module = importlib.import_module(name)
        except Exception as exc:
            fail(f"import {name}: {type(exc).__name__}: {exc}")
        where = Path(module.__file__ or "")
        if site not in where.parents:
            fail(f"{name} was imported from {where}, not from the installed wheel")
    print(f"imported {len(names)} modules from the wheel")


def check_data(root: Path, site: Path) -> None:
    for tcss, installed in installed_files(root, site, "*.tcss"):
        if not installed.is_file():
            fail(f"{tcss.relative_to(root)} is not in the wheel")
    trainer = root / "examples" / "trainer"
    for path in [trainer / "setup.py", *trainer.joinpath("trainer").glob("*.py")]:
        installed = site / "tui_app" / "sample_trainer" / path.relative_to(trainer)
        if not installed.is_file():
            fail(f"the sample trainer's {path.relative_to(root)} is not in the wheel")


def run(*argv: str) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        fail(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip()[-2000:]}")
    return done.stdout


async def open_app(state_dir: Path) -> None:
    """The app headless on the service the demo started: the demo jobs listed, a job's
    detail, the builder, back to the list."""
    from tui_app.config.settings import Profile, Settings
    from tui_app.entry.launch import connector
    from tui_app.shell.app import JobsApp

    app = JobsApp(
        Settings(refresh_seconds=0.3),
        connector(Profile("local"), state_dir),
        "local-project",
        "local",
        settings_file=state_dir / "settings.yaml",
    )

    async def until(condition: object, what: str) -> None:
        deadline = time.monotonic() + 60
        while not condition():  # type: ignore[operator]
            if time.monotonic() > deadline:
                fail(f"the app never showed {what}")
            await pilot.pause(0.05)

    async with app.run_test(size=(120, 35)) as pilot:
        await until(lambda: len(app.last_rows) >= 5, "the five demo jobs")
        await pilot.press("enter")
        await until(lambda: getattr(app.screen, "job", None) is not None, "a job's detail")
        await pilot.press("escape", "3")
        await until(lambda: type(app.screen).__name__ == "BuilderScreen", "the builder")
        await pilot.press("escape")  # the builder's fields take digits; esc goes back
        await until(lambda: type(app.screen).__name__ == "JobsScreen", "the list again")
    print(f"the app listed {len(app.last_rows)} jobs and opened the detail and the builder")


def main() -> None:
    root, site, scratch = (Path(a).resolve() for a in sys.argv[1:4])
    if str(root) in sys.path or "" in sys.path:
        fail(f"the checkout {root} is importable: {sys.path}")
    check_imports(root, site)
    check_data(root, site)
    check_stand_ins(site)
    bin_dir = Path(sys.executable).parent
    tui = str(bin_dir / "tui-app")
    print(run(tui, "--version").strip())
    state_dir = scratch / "state"
    # What `tui-app --demo` does before it opens the TUI: start the service (the wheel's
    # console script, through the client) and submit the jobs built from the wheel's copy of
    # the sample trainer.
    from tui_app.entry.demo import submit_demo_jobs

    try:
        ids = submit_demo_jobs(state_dir, "local-project")
    except Exception as exc:
        fail(f"the demo's jobs were not submitted: {type(exc).__name__}: {exc}")
    print(f"submitted {len(ids)} demo jobs")
    try:
        listed = run(tui, "jobs", "list", "--state-dir", str(state_dir))
        if len(listed.strip().splitlines()) < 6:
            fail(f"tui-app jobs list shows fewer than the 5 demo jobs:\n{listed}")
        asyncio.run(open_app(state_dir))
    finally:
        run(tui, "service", "stop", "--state-dir", str(state_dir))


if __name__ == "__main__":
    main()
