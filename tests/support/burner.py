"""A tiny trainer package that keeps a core busy and holds memory in a child process.

For the per-replica CPU and memory tests: the trainer burns CPU itself while a child it spawned
holds ``--child-mb`` MiB, so only a sampler that sums the whole process tree sees both.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

BURNER_TASK = textwrap.dedent(
    """
    import argparse, subprocess, sys, time

    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--child-mb", type=int, default=0)
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
    if child is not None:
        child.terminate()
        child.wait()
    print("done", spins, flush=True)
    """
)


def build_burner(dest: Path) -> Path:
    """The ``burner`` package (module ``burner.task``) as an sdist under ``dest``."""
    src = dest / "src"
    (src / "burner").mkdir(parents=True)
    (src / "burner" / "__init__.py").write_text("")
    (src / "burner" / "task.py").write_text(BURNER_TASK)
    (src / "setup.py").write_text(
        "from setuptools import setup\nsetup(name='burner', version='1.0', packages=['burner'])\n"
    )
    subprocess.run(
        [sys.executable, "setup.py", "-q", "sdist", "-d", str(dest / "dist")],
        cwd=src,
        check=True,
        capture_output=True,
    )
    return next((dest / "dist").glob("*.tar.gz"))
