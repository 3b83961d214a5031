"""``tui-app ARGS`` run in the test's own process: the same ``main`` a script's process runs,
with real HTTP to the real service, minus a Python start-up and its imports (about a second
of CPU per call on two shared cores). Tests that need a process of their own (ctrl+c, a
terminal, the exit of the interpreter) start one; one test per command does, to prove the
command runs as a script.
"""

from __future__ import annotations

import contextlib
import io
import subprocess

from tui_app.entry.cli import main


def run_in_process(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """What ``subprocess.run([tui-app, *argv], capture_output=True, text=True)`` would give."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as exc:  # argparse's usage errors
            status = exc.code if isinstance(exc.code, int) else 2
    return subprocess.CompletedProcess(["tui-app", *argv], status, out.getvalue(), err.getvalue())
