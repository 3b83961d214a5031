"""Run a piece of Python in a fresh interpreter and read the JSON it prints last.

Only a fresh process can show that a module was *not* imported (``sys.modules`` of the test
process holds everything the suite loaded): the start-path tests run the app there.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def json_of_child(code: str, *argv: str, timeout: float = 120) -> Any:
    """Run ``code`` with ``argv`` in a new interpreter from the checkout's root; the JSON on
    its last line of output. Raises CalledProcessError (with its stderr) when it fails."""
    out = subprocess.run(
        [sys.executable, "-c", code, *argv],
        check=True,
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=timeout,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])
