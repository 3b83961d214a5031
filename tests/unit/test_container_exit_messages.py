"""errorMessage of a container replica, from what its supervisor recorded (issue 30)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tui_app.local.execution.runner import ReplicaHandle, _describe_exit
from tui_app.model.jobs.cluster import Replica
from tui_app.model.jobs.tiers import Role


def _message(tmp_path: Path, stderr: str = "", **status: Any) -> str:
    handle = ReplicaHandle(Replica(Role.MASTER, 0, "standard"), tmp_path)
    (tmp_path / "stderr.log").write_text(stderr)
    handle.status = {"container": "tui-app-j-master-replica-0-1a2b3c4d", **status}
    return _describe_exit(handle)


def test_a_container_that_never_started_is_named_by_the_runs_status(tmp_path: Path) -> None:
    """podman inspects a container that failed to start as exit code 0 ("created")."""
    head = _message(
        tmp_path,
        "Error: OCI runtime error: runc create failed: unable to set memory limit\n",
        exit_code=126,
        container_exit_code=0,
    ).splitlines()[0]
    assert head == (
        "The replica master 0 could not start its container: its command cannot be run "
        "(status 126)."
    )


def test_an_exit_status_and_its_signal(tmp_path: Path) -> None:
    assert _message(tmp_path, exit_code=3, container_exit_code=3).startswith(
        "The replica master 0 exited with a non-zero status of 3."
    )
    assert _message(tmp_path, exit_code=143, container_exit_code=143, stopped=False).startswith(
        "The replica master 0 exited with a non-zero status of 143 (SIGTERM)."
    )


def test_a_sigkill_under_a_memory_limit_nobody_stopped_is_out_of_memory(tmp_path: Path) -> None:
    message = _message(
        tmp_path, exit_code=137, container_exit_code=137, memory_limit=64 * 2**20, stopped=False
    )
    assert message.startswith(
        "The replica master 0 ran out-of-memory and exited with a non-zero status of 137 "
        "(SIGKILL): its container's memory limit is 64 MiB."
    )
    stopped = _message(
        tmp_path, exit_code=137, container_exit_code=137, memory_limit=64 * 2**20, stopped=True
    )
    assert "out-of-memory" not in stopped


def test_the_rlimit_failure_names_its_fix(tmp_path: Path) -> None:
    message = _message(
        tmp_path,
        "Error: runc: error setting rlimits for ready process: error setting rlimit type 7\n",
        exit_code=126,
        container_exit_code=0,
    )
    assert "default_ulimits = []" in message
