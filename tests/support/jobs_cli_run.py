"""``tui-app jobs ...`` run in this process or as a script runs it, and the changed lines of a
unified diff: what the ``jobs`` CLI's service tests share (list, describe, cancel, resubmit,
diff)."""

from __future__ import annotations

import subprocess
import sys

from tests.support.cli_in_process import run_in_process
from tests.support.live_service import PROJECT, LiveService

QUICK = ("--steps", "2", "--checkpoint-every", "0")
"""A sample-trainer run of a second or two."""


def _argv(service: LiveService, args: tuple[str, ...]) -> list[str]:
    return ["jobs", *args, "--state-dir", str(service.state_dir), "--project", PROJECT]


def tui(service: LiveService, *args: str) -> subprocess.CompletedProcess[str]:
    """``tui-app jobs ARGS`` against ``service`` in ``PROJECT``, in this process."""
    return run_in_process(_argv(service, args))


def tui_process(service: LiveService, *args: str) -> subprocess.CompletedProcess[str]:
    """The same, as a script runs it: a process of its own."""
    return subprocess.run(
        [sys.executable, "-m", "tui_app", *_argv(service, args)],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


def changed_lines(diff: str) -> list[str]:
    """The ``-``/``+`` lines of a unified diff, without its ``---``/``+++`` header."""
    return [
        line
        for line in diff.splitlines()
        if line[:1] in "+-" and not line.startswith(("--- ", "+++ "))
    ]
