"""``tui-app service start|status|env|stop|run`` as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import unique_id
from tests.support.live_service import PROJECT, basic_job, free_port
from tui_app.api.jobs_client import JobsClient, make_credentials
from tui_app.entry.launch import service_left_running


def tui(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui_app", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_start_status_env_stop(tmp_path: Path, trainer_sdist: Path) -> None:
    state = tmp_path / "state"
    port = free_port()
    opened = time.time()
    started = tui("service", "start", "--state-dir", str(state), "--port", str(port))
    assert started.returncode == 0, started.stderr
    url = f"http://127.0.0.1:{port}"
    assert started.stdout.strip() == url
    try:
        assert (state / "token").stat().st_mode & 0o777 == 0o600
        again = tui("service", "start", "--state-dir", str(state), "--port", str(port))
        assert again.returncode == 0 and "already running" in again.stderr

        status = tui("service", "status", "--state-dir", str(state))
        assert status.returncode == 0 and f"running at {url}" in status.stdout
        assert f"capacity: {os.cpu_count()} CPU slots, " in status.stdout, status.stdout
        # A fresh store: nothing to index (the log index's progress, issue 44).
        assert "logs: every line indexed for search" in status.stdout, status.stdout

        # Leaving the TUI (issue 29): a service started meanwhile is said to keep running,
        # with the command that stops it; one that was running before, only after --demo.
        note = service_left_running(state, opened, demo=False)
        assert note is not None and url in note
        assert note.endswith(f"tui-app service stop --state-dir {state}")
        assert service_left_running(state, time.time() + 60, demo=False) is None
        assert service_left_running(state, time.time() + 60, demo=True) is not None

        env = tui("service", "env", "--state-dir", str(state), "--project", "p1")
        lines = env.stdout.splitlines()
        assert f"export CLOUDSDK_API_ENDPOINT_OVERRIDES_ML={url}/" in lines
        assert f"export CLOUDSDK_API_ENDPOINT_OVERRIDES_LOGGING={url}/" in lines
        assert "export CLOUDSDK_CORE_PROJECT=p1" in lines
        assert f"export CLOUDSDK_AUTH_ACCESS_TOKEN_FILE={state / 'token'}" in lines
        # gsutil's shim drops credentials unless gcloud names an account.
        assert "export CLOUDSDK_CORE_ACCOUNT=local-service@tui-app.invalid" in lines

        # A job still running when the service stops is failed, with its replicas gone.
        dest = state / "gcs" / "bkt" / trainer_sdist.name
        dest.parent.mkdir(parents=True)
        dest.write_bytes(trainer_sdist.read_bytes())
        token = (state / "token").read_text().strip()
        client = JobsClient(url, PROJECT, make_credentials(token))
        jid = unique_id("stopped")
        client.create(
            basic_job(jid, f"gs://bkt/{dest.name}", "--steps", "100000", "--sleep", "0.1")
        )
        deadline = time.monotonic() + 30
        while client.get(jid)["state"] != "RUNNING" and time.monotonic() < deadline:
            time.sleep(0.1)
        pid_file = state / "jobs" / PROJECT / jid / "master-replica-0" / "pid.json"
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        pid = json.loads(pid_file.read_text())
    finally:
        stopped = tui("service", "stop", "--state-dir", str(state))
    assert stopped.returncode == 0
    assert tui("service", "status", "--state-dir", str(state)).returncode == 3
    assert service_left_running(state, opened, demo=True) is None  # nothing to say
    assert not _alive(pid["replica"])

    restarted = tui("service", "start", "--state-dir", str(state), "--port", str(port))
    assert restarted.returncode == 0, restarted.stderr
    try:
        job = client.get(jid)
        assert job["state"] == "FAILED" and job["endTime"]
        assert "service stopped" in job["errorMessage"]
    finally:
        tui("service", "stop", "--state-dir", str(state))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.split(") ")[1][0] != "Z"


def test_no_auth_is_refused_off_loopback(tmp_path: Path) -> None:
    result = tui(
        "service",
        "run",
        "--state-dir",
        str(tmp_path / "s"),
        "--host",
        "0.0.0.0",
        "--no-auth",
        "--port",
        str(free_port()),
    )
    assert result.returncode == 1
    assert "--no-auth is refused on 0.0.0.0" in result.stderr


def test_port_in_use_and_env_without_service(tmp_path: Path) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = tui("service", "start", "--state-dir", str(tmp_path / "s"), "--port", str(port))
    assert result.returncode == 1 and "already in use" in result.stderr
    env = tui("service", "env", "--state-dir", str(tmp_path / "s"))
    assert env.returncode == 1 and "No service is running" in env.stderr
