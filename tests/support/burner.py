"""A tiny trainer package that keeps a core busy and holds memory in a child process.

For the per-replica CPU and memory tests: the trainer burns CPU itself while a child it spawned
holds ``--child-mb`` MiB, so only a sampler that sums the whole process tree sees both. With
``--until-file`` it burns until that file exists (``--seconds`` is then only a bound), so a test
that waits for a busy sample is never racing the burner's clock on a loaded machine.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.live_service import LiveService, basic_job
from tests.support.task_packages import task_package

SAMPLE_SECONDS = "0.3"
"""How often the burner tests' services sample (the default 2 s would make them slow)."""

BURNER_TASK = textwrap.dedent(
    """
    import argparse, os, subprocess, sys, time

    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--child-mb", type=int, default=0)
    parser.add_argument("--until-file", default="")
    args, _ = parser.parse_known_args()
    child = None
    if args.child_mb:
        hold = (
            "import sys, time\\n"
            "block = bytearray(b'x') * (%d << 20)\\n"
            "print('holding', len(block), flush=True)\\n"
            "time.sleep(3600)\\n" % args.child_mb
        )
        child = subprocess.Popen([sys.executable, "-c", hold])
    print("burning", flush=True)
    end = time.time() + args.seconds
    spins = 0
    while time.time() < end:
        spins += 1
        if args.until_file and spins % 100000 == 0 and os.path.exists(args.until_file):
            break
    if child is not None:
        child.terminate()
        child.wait()
    print("done", spins, flush=True)
    """
)


def build_burner(dest: Path) -> Path:
    """The ``burner`` package (module ``burner.task``) as an sdist under ``dest``."""
    return task_package(dest, "burner", BURNER_TASK)


def burner_job(job_id: str, uri: str, *args: str, **training: Any) -> dict[str, Any]:
    """A jobs.create body running the burner package staged at ``uri``."""
    return basic_job(job_id, uri, *args, pythonModule="burner.task", **training)


def sampling_service(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[LiveService]:
    """A module's own real service sampling every SAMPLE_SECONDS (use with ``yield from``)."""
    from tests.conftest import serve

    env = {**os.environ, "TUI_APP_METRICS_SECONDS": SAMPLE_SECONDS}
    yield from serve(tmp_path_factory, name, env=env)
