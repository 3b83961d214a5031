"""A plain ``pip install .`` gives a working tui-app (issue 14).

Every other test runs on the editable install of the checkout, which hides what a wheel leaves
out: a subpackage missing from the build once gave a ``tui-app`` that could not start. This test
builds the wheel as pip does for ``pip install .``, installs it alone into a fresh venv, and
runs ``wheel_smoke.py`` there: every module imported from the wheel, every stylesheet and the
sample trainer present, the demo's jobs submitted, the app opened headless on them.

The venv first gets two other distributions that own the top-level names ``themes`` and
``widgets`` (PyPI has an unrelated ``themes``): tui-app installs everything under ``tui_app``, so
installing it must leave theirs whole (issue 29).

The fresh venv borrows the dependencies of the venv running the tests through a path line in
a ``.pth`` file (which adds the directory without running that directory's own ``.pth`` files,
so the editable install's import hook stays out). Nothing is downloaded.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

from tests.support.stand_in_wheels import build_wheel

ROOT = Path(__file__).resolve().parents[2]
# What a source tree of the project holds; build outputs and local state stay behind.
_IGNORE = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis"
)


def _run(argv: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, capture_output=True, text=True, check=False, **kw)  # type: ignore[call-overload]
    assert done.returncode == 0, f"{argv} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done  # type: ignore[no-any-return]


def test_wheel_installs_and_runs(tmp_path: Path) -> None:
    source = tmp_path / "src"
    shutil.copytree(ROOT, source, ignore=_IGNORE)
    wheels = tmp_path / "wheels"
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(wheels), str(source)],
    )  # fmt: skip
    (wheel,) = wheels.glob("tui_app-*.whl")
    top_level = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert top_level == {"tui_app", wheel.name.split("-py3")[0] + ".dist-info"}, top_level

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    others = [
        build_wheel(tmp_path / "others", name, "1.0", body=f'STAND_IN = "{name}"\n')
        for name in ("themes", "widgets")
    ]
    for step in (others, [wheel]):
        _run(
            [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
             "--no-index", "-q", *map(str, step)],
        )  # fmt: skip
    site = Path(
        _run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]
        ).stdout.strip()
    )
    borrowed = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    (site / "borrowed_dependencies.pth").write_text("\n".join(sorted(borrowed)) + "\n")

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "TUI_APP_"))}
    env["XDG_CONFIG_HOME"] = str(scratch / "config")
    env["XDG_CACHE_HOME"] = str(scratch / "cache")
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    smoke = shutil.copy(ROOT / "tests" / "packaging" / "wheel_smoke.py", scratch)
    done = subprocess.run(
        [str(python), "-I", str(smoke), str(ROOT), str(site), str(scratch)],
        cwd=scratch,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert "the app listed" in done.stdout, done.stdout
