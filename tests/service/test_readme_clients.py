"""README's snippet for the Google client libraries runs as written against a real service.

A user copies it after `eval "$(tui-app service env)"`; if the endpoint, the token or the paths
it relies on change, this fails before a user finds out.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import unique_id
from tests.support.live_service import LiveService, basic_job

README = Path(__file__).resolve().parents[2] / "README.md"


def _snippet() -> str:
    text = README.read_text()
    match = re.search(r"<!-- clients-snippet -->\n```python\n(.*?)```", text, re.S)
    assert match, "README has no clients snippet after <!-- clients-snippet -->"
    return match.group(1)


def _service_env(service: LiveService) -> dict[str, str]:
    out = subprocess.run(
        [sys.executable, "-m", "tui_app", "service", "env", "--state-dir", str(service.state_dir)],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout  # fmt: skip
    env = dict(os.environ)
    for line in out.splitlines():
        if line.startswith("export "):
            key, _, value = line.removeprefix("export ").partition("=")
            env[key] = value
        elif line.startswith("unset "):
            env.pop(line.removeprefix("unset ").strip(), None)
    return env


def test_readme_client_snippet_lists_jobs_and_reads_their_logs(
    service: LiveService, package_uri: str, tmp_path: Path
) -> None:
    job_id = unique_id("readme")
    service.client("local-project").create(basic_job(job_id, package_uri, "--steps", "1"))
    service.wait_state(job_id, project="local-project")
    script = tmp_path / "snippet.py"
    script.write_text(_snippet())
    done = subprocess.run(
        [sys.executable, str(script)],
        env=_service_env(service), cwd=tmp_path, capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Job creation request has been successfully validated." in done.stdout
