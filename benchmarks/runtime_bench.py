"""Time to RUNNING of a TensorFlow trainer, submitted twice with the same dependencies.

Two ``--package-path`` submits of one trainer make two sdists with different bytes (a new
content hash), so the second cannot reuse the first's package install; it must reuse the runtime
environment and the wheel cache instead. The goal (issue 13): the second reaches RUNNING in at
most 5 s. Also prints the wheel cache's size.

Real TensorFlow comes from PyPI the first time (minutes, hundreds of MB):

    .venv/bin/python benchmarks/runtime_bench.py [--runtime 2.11] [--python 3.7]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from tui_app.api.jobs_client import JobsClient, make_credentials

PROJECT = "bench"
TASK = """import tensorflow as tf
print("tensorflow", tf.__version__, "keras", tf.keras.__name__)
"""


def sdist(out: Path, salt: str) -> Path:
    """A trainer needing TensorFlow (as ``install_requires``); ``salt`` changes its bytes."""
    files = {
        "setup.py": "from setuptools import setup\n"
        "setup(name='tftrainer', version='0.1', packages=['tftrainer'], "
        "install_requires=['tensorflow-cpu'])\n",
        "PKG-INFO": "Metadata-Version: 1.0\nName: tftrainer\nVersion: 0.1\n",
        "tftrainer/__init__.py": "",
        "tftrainer/task.py": TASK + f"# {salt}\n",
    }
    path = out / f"tftrainer-0.1-{salt}.tar.gz"
    with tarfile.open(path, "w:gz") as tf:
        for rel, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"tftrainer-0.1/{rel}")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def wait_ready(url: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the service exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("the service did not answer")


def time_to_running(client: JobsClient, job: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    start = time.monotonic()
    client.create(job)
    while True:
        got = client.get(job["jobId"])
        if got["state"] in ("RUNNING", "SUCCEEDED", "FAILED", "CANCELLED"):
            return time.monotonic() - start, got
        time.sleep(0.05)


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runtime", default="2.11")
    ap.add_argument("--python", default="3.7")
    ap.add_argument("--state-dir", type=Path, help="keep the state (default: a temp dir)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="runtime-bench-"))
    state = args.state_dir or work / "state"
    port = 18470 + os.getpid() % 1000
    url = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "tui_app", "service", "run", "--state-dir", str(state)]
    log = open(work / "service.log", "ab")  # noqa: SIM115
    proc = subprocess.Popen(
        [*cmd, "--port", str(port), "--no-auth"], stdout=log, stderr=log, start_new_session=True
    )
    try:
        wait_ready(url, proc)
        client = JobsClient(url, PROJECT, make_credentials(None))
        figures = []
        for i, salt in enumerate(("first", "second")):
            pkg = sdist(work, salt)
            job = {
                "jobId": f"runtime_bench_{salt}_{int(time.time())}",
                "trainingInput": {
                    "region": "us-central1",
                    "pythonModule": "tftrainer.task",
                    "packageUris": [str(pkg)],
                    "runtimeVersion": args.runtime,
                    "pythonVersion": args.python,
                },
            }
            seconds, got = time_to_running(client, job)
            print(f"submit {i + 1} ({salt}): {got['state']} after {seconds:.1f} s")
            if got["state"] == "FAILED":
                print(got.get("errorMessage", ""))
            figures.append(seconds)
        cache = state / "pip-cache"
        print(f"wheel cache: {du(cache) / 1e6:.0f} MB in {cache}")
        print(json.dumps({"first_s": figures[0], "second_s": figures[1], "goal_second_s": 5}))
        return 0 if figures[1] <= 5 else 1
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)


if __name__ == "__main__":
    sys.exit(main())
