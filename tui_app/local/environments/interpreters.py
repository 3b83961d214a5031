"""The Python interpreters this machine has, found where people keep them.

A job's ``pythonVersion`` is honoured exactly when an interpreter of that version exists, so the
service looks in the usual places: pyenv (``$PYENV_ROOT`` or ``~/.pyenv``, ``versions/*/bin/
python``), ``python3.X`` on ``PATH``, uv's managed Pythons (``$UV_PYTHON_INSTALL_DIR`` or
``~/.local/share/uv/python``), and the ones named with ``--python PATH`` or ``TUI_APP_PYTHONS``
(``os.pathsep``-separated). Every candidate is run once to ask its real version (a pyenv shim or
a broken install tells the truth only when run), and the answer is cached per path.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

PROBE = "import sys; print('%d.%d' % sys.version_info[:2])"
PROBE_TIMEOUT_SECONDS = 10.0
ENV_VAR = "TUI_APP_PYTHONS"

_probed: dict[str, str | None] = {}


def probe(path: str) -> str | None:
    """The ``X.Y`` version of the interpreter at ``path``, or None when it does not run."""
    if path in _probed:
        return _probed[path]
    try:
        out = subprocess.run(
            [path, "-c", PROBE],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_SECONDS,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        version = out.stdout.strip() if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        version = None
    _probed[path] = version
    return version


def candidates(env: Mapping[str, str], extra: Iterable[str] = ()) -> list[str]:
    """Every interpreter path worth probing, named ones first (they win a tie)."""
    found: list[str] = [p for p in extra if p]
    found += [p for p in env.get(ENV_VAR, "").split(os.pathsep) if p]
    home = Path(env.get("HOME") or Path.home())
    pyenv = Path(env.get("PYENV_ROOT") or home / ".pyenv")
    found += sorted(str(p) for p in pyenv.glob("versions/*/bin/python"))
    uv = Path(env.get("UV_PYTHON_INSTALL_DIR") or home / ".local/share/uv/python")
    found += sorted(str(p) for p in uv.glob("*/bin/python3"))
    path = env.get("PATH", "")
    for minor in range(5, 20):
        hit = shutil.which(f"python3.{minor}", path=path)
        if hit:
            found.append(hit)
    return list(dict.fromkeys(found))  # first mention wins, order kept


def find(env: Mapping[str, str] | None = None, extra: Iterable[str] = ()) -> dict[str, str]:
    """Python version (``3.7``) -> interpreter path, for every candidate that runs.

    The service's own interpreter is left out: it is the fallback, not a find.
    """
    env = os.environ if env is None else env
    out: dict[str, str] = {}
    for path in candidates(env, extra):
        if os.path.realpath(path) == os.path.realpath(sys.executable):
            continue
        version = probe(path)
        if version and version not in out:
            out[version] = path
    return out


def own() -> tuple[str, str]:
    """The service's own (``X.Y``, path)."""
    return f"{sys.version_info[0]}.{sys.version_info[1]}", sys.executable
