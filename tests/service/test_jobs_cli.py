"""The headless twin: ``tui-app jobs list|describe|cancel|resubmit`` against a real service."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import unique_id
from tests.support.live_service import PROJECT, LiveService, basic_job


def tui(service: LiveService, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "tui_app",
            "jobs",
            *args,
            "--state-dir",
            str(service.state_dir),
            "--project",
            PROJECT,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_list_describe_cancel_resubmit(service: LiveService, package_uri: str) -> None:
    client = service.client()
    done = unique_id("twin_done")
    client.create(basic_job(done, package_uri, "--steps", "1"))
    running = unique_id("twin_run")
    client.create(basic_job(running, package_uri, "--steps", "100000", "--sleep", "0.1"))
    service.wait_state(done)
    service.wait_state(running, ("RUNNING",))

    listed = tui(service, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    ids = [j["jobId"] for j in json.loads(listed.stdout)]
    assert done in ids and running in ids
    table = tui(service, "list", "--filter", "state:running")
    assert running in table.stdout and done not in table.stdout
    assert table.stdout.splitlines()[0].split() == [
        "JOB_ID",
        "STATE",
        "CREATED",
        "ELAPSED",
        "TIER",
        "ML_UNITS",
        "ERROR",
    ]

    described = tui(service, "describe", done)
    assert described.returncode == 0
    assert "Job Overview" in described.stdout and "SUCCEEDED" in described.stdout
    assert json.loads(tui(service, "describe", done, "--json").stdout)["jobId"] == done
    assert f"jobId: {done}" in tui(service, "describe", done, "--yaml").stdout

    cancelled = tui(service, "cancel", running)
    assert cancelled.returncode == 0 and f"Cancelling {running}" in cancelled.stdout
    service.wait_state(running, ("CANCELLED",), timeout=15)
    again = tui(service, "cancel", running)
    assert again.returncode == 1 and "FAILED_PRECONDITION" in again.stderr

    resub = tui(service, "resubmit", done)
    assert resub.returncode == 0, resub.stderr
    new_id = resub.stdout.strip()
    assert new_id != done and new_id.startswith(done.split("_2026")[0])
    assert client.get(new_id)["trainingInput"] == client.get(done)["trainingInput"]

    missing = tui(service, "describe", "no_such_job")
    assert missing.returncode == 1 and "NOT_FOUND" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_unknown_profile_is_a_clear_error(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "tui_app", "jobs", "list", "--profile", "nope"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "Unknown profile 'nope'; known profiles: local." in result.stderr


def test_options_before_the_subcommand_are_honoured(service: LiveService, package_uri: str) -> None:
    """``tui-app --project P --state-dir D jobs list`` lists P, not the default project."""
    other = "before-sub-project"  # no other test lists this project
    job_id = unique_id("before_sub")
    service.client(project=other).create(basic_job(job_id, package_uri, "--steps", "1"))
    argv = ["--state-dir", str(service.state_dir), "--project", other, "jobs", "list", "--json"]
    result = subprocess.run(
        [sys.executable, "-m", "tui_app", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert [j["jobId"] for j in json.loads(result.stdout)] == [job_id]


def test_a_wrong_filter_is_an_error_a_script_can_see(service: LiveService) -> None:
    """The TUI matches a half-typed filter as best it can; a script's must fail loudly."""
    bad_state = tui(service, "list", "--filter", "state:BOGUS")
    assert bad_state.returncode == 2 and bad_state.stdout == ""
    assert bad_state.stderr.startswith("error: --filter: Unknown state 'BOGUS'; valid states:")
    bad_regex = tui(service, "list", "--filter", "mnist(")
    assert bad_regex.returncode == 2 and bad_regex.stdout == ""
    assert "Invalid regex" in bad_regex.stderr and "literally" not in bad_regex.stderr
