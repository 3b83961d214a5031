"""``tui-app jobs logs``: gcloud stream-logs' output, from a real service.

The expected lines are built here from the service's raw ``entries:list`` answer the way gcloud's
``log_utils`` does (severity name or DEFAULT, ``%Y-%m-%d %H:%M:%S %z`` in UTC, task name, trial id,
one line per message line), so the comparison is with gcloud's format, not with our own code.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from datetime import datetime
from typing import Any

import pytest

from tests.conftest import unique_id
from tests.support.cli_in_process import run_in_process
from tests.support.live_service import PROJECT, LiveService, basic_job
from tests.support.terminal_signals import sigint_as_in_a_terminal
from tui_app.api.log_stream import format_line
from tui_app.model.logs.log_line import LogLine

LINE = re.compile(
    r"(DEFAULT|DEBUG|INFO|NOTICE|WARNING|ERROR|CRITICAL|ALERT|EMERGENCY)\t"
    r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} \+0000\t[^\t]+\t[^\t]*\t.*"
)


def _args(service: LiveService, *args: str) -> list[str]:
    """``tui-app``'s arguments for ``jobs logs ARGS`` on ``service`` in ``PROJECT``."""
    return ["jobs", "logs", *args, "--state-dir", str(service.state_dir), "--project", PROJECT]


def _argv(service: LiveService, *args: str) -> list[str]:
    return [sys.executable, "-m", "tui_app", *_args(service, *args)]


def logs(service: LiveService, *args: str) -> subprocess.CompletedProcess[str]:
    """``tui-app jobs logs ARGS`` in this process (tests/support/cli_in_process.py): its stdout
    is not a terminal, as through a pipe."""
    return run_in_process(_args(service, *args))


def logs_process(service: LiveService, *args: str) -> subprocess.CompletedProcess[str]:
    """The same, as a script runs it: a process of its own, its stdout a pipe."""
    return subprocess.run(
        _argv(service, *args), capture_output=True, text=True, timeout=60, check=False
    )


def _entries(service: LiveService, job_id: str) -> list[dict[str, Any]]:
    return service.entries(
        f'resource.labels.job_id="{job_id}" AND timestamp>="1970-01-01T00:00:00Z"'
    )


def gcloud_lines(entries: list[dict[str, Any]]) -> list[str]:
    """What ``gcloud ai-platform jobs stream-logs`` prints for these entries (TZ=UTC)."""
    out = []
    for e in entries:
        when = datetime.fromisoformat(e["timestamp"].replace("Z", "+00:00"))
        labels = e.get("labels", {})
        task = (
            e["resource"]["labels"].get("task_name")
            or labels.get("task_name")
            or labels.get("ml.googleapis.com/task_name")
            or "unknown_task"
        )
        trial = labels.get("trial_id") or labels.get("ml.googleapis.com/trial_id") or ""
        head = "\t".join(
            (e.get("severity") or "DEFAULT", when.strftime("%Y-%m-%d %H:%M:%S %z"), task, trial)
        )
        for part in e["jsonPayload"]["message"].splitlines() or [""]:
            out.append(f"{head}\t{part}")
    return out


@pytest.fixture(scope="module")
def finished(service: LiveService, trainer_sdist: Any) -> str:
    """A finished BASIC job that logged steps and every severity."""
    uri = service.stage(trainer_sdist)
    job_id = unique_id("logs_done")
    service.client().create(
        basic_job(job_id, uri, "--steps", "5", "--log-every", "1", "--log-level-demo")
    )
    service.wait_state(job_id)
    return job_id


def test_prints_gcloud_stream_logs_lines(service: LiveService, finished: str) -> None:
    r = logs_process(service, finished)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    lines = r.stdout.splitlines()
    assert lines == gcloud_lines(_entries(service, finished))
    assert all(LINE.fullmatch(x) for x in lines)
    fields = [x.split("\t", 4) for x in lines]
    assert {f[3] for f in fields} == {""}  # no trial id outside tuning jobs
    assert {f[2] for f in fields} == {"service", "master-replica-0"}
    assert {f[0] for f in fields} >= {"INFO", "WARNING", "ERROR"}
    steps = [f[4] for f in fields if f[4].startswith("step ")]
    assert [s.split()[1] for s in steps] == ["1", "2", "3", "4", "5"]
    assert fields[-1][4] == "Job completed successfully."


def test_task_name_filters_one_replica(service: LiveService, finished: str) -> None:
    r = logs(service, finished, "--task-name", "master-replica-0")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    everything = logs(service, finished).stdout.splitlines()
    assert lines and lines == [x for x in everything if x.split("\t")[2] == "master-replica-0"]
    none = logs(service, finished, "--task-name", "worker-replica-7")  # BASIC: a master only
    assert none.returncode == 1 and none.stdout == ""
    assert "its replicas: master-replica-0 " in none.stderr


def test_follow_ends_by_itself_when_the_job_ends(service: LiveService, package_uri: str) -> None:
    job_id = unique_id("logs_follow")
    service.client().create(
        basic_job(job_id, package_uri, "--steps", "30", "--log-every", "1", "--sleep", "0.1")
    )
    started = time.monotonic()
    r = logs(service, job_id, "--follow", "--polling-interval", "0.2")
    assert r.returncode == 0, r.stderr
    job = service.client().get(job_id)
    assert job["state"] == "SUCCEEDED"
    assert time.monotonic() - started < 60
    assert r.stdout.splitlines() == gcloud_lines(_entries(service, job_id))


def test_ctrl_c_exits_130_quietly(service: LiveService, package_uri: str) -> None:
    job_id = unique_id("logs_sigint")
    client = service.client()
    client.create(basic_job(job_id, package_uri, "--steps", "100000", "--sleep", "0.1"))
    try:
        service.wait_state(job_id, ("RUNNING",))
        proc = subprocess.Popen(
            _argv(service, job_id, "--follow", "--polling-interval", "0.2"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=sigint_as_in_a_terminal,
        )
        assert proc.stdout is not None
        proc.stdout.readline()  # streaming
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 130
        assert "Traceback" not in err and err == ""
    finally:
        client.cancel(job_id)


def test_unknown_job_is_the_servers_not_found(service: LiveService) -> None:
    status, _ = service.request("GET", f"/v1/projects/{PROJECT}/jobs/no_such_job")
    assert status == 404
    r = logs(service, "no_such_job")
    assert r.returncode == 1
    assert r.stdout == ""
    # Not found as an id nor as the start of one (as in :logs): one line, with the project.
    assert r.stderr.startswith(f"error: NOT_FOUND: No job 'no_such_job' in project {PROJECT} (")
    assert len(r.stderr.splitlines()) == 1
    assert "Traceback" not in r.stderr
    r = logs(service, "no_such_job", "--follow")
    assert r.returncode == 1 and r.stderr.startswith("error: NOT_FOUND: ")


def test_multiline_messages_print_one_line_each() -> None:
    line = LogLine("2024-02-01T00:02:00.123456789Z", "1", "master-replica-0", 500, "a\nb\r\nc", "3")
    assert format_line(line) == [
        "ERROR\t2024-02-01 00:02:00 +0000\tmaster-replica-0\t3\ta",
        "ERROR\t2024-02-01 00:02:00 +0000\tmaster-replica-0\t3\tb",
        "ERROR\t2024-02-01 00:02:00 +0000\tmaster-replica-0\t3\tc",
    ]
    empty = LogLine("2024-02-01T00:02:00.000000000Z", "2", "service", 0, "")
    assert format_line(empty) == ["DEFAULT\t2024-02-01 00:02:00 +0000\tservice\t\t"]


def _on_a_terminal(argv: list[str]) -> bytes:
    """Run ``argv`` with its stdout on a pseudo-terminal, as a user's shell would; its output."""
    import os
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, stdout=slave, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed its side
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.wait(60) == 0, proc.stderr.read() if proc.stderr else ""
    return b"".join(chunks)


def test_a_terminal_never_gets_a_trainers_escape_sequences_raw(
    service: LiveService, tmp_path: Any
) -> None:
    """A trainer that retitles and clears the terminal: defused on a terminal as in the TUI,
    raw with --raw (and always through a pipe, as gcloud prints it)."""
    from tests.service.test_trainer_fidelity import PROBE_SRC
    from tui_app.shell.package_build import build_sdist

    hostile = tmp_path / "hostile.txt"
    hostile.write_text("\x1b[31mred words\x1b[0m and \x1b[2J\x1b[H\x1b]0;evil title\x07 bell\x07\n")
    uri = service.stage(build_sdist(PROBE_SRC, tmp_path / "build"))
    job_id = unique_id("logs_hostile")
    body = basic_job(job_id, uri, "--stderr-file", str(hostile), pythonModule="probe.task")
    service.client().create(body)
    service.wait_state(job_id)

    shown = _on_a_terminal(_argv(service, job_id))
    line = next(ln for ln in shown.decode().splitlines() if "red words" in ln)
    assert "\x1b" not in line and "\x07" not in line, repr(line)
    assert line.endswith("red words and  bell^G"), repr(line)

    raw = _on_a_terminal(_argv(service, job_id, "--raw"))
    assert b"\x1b]0;evil title\x07" in raw and b"\x1b[2J" in raw
    piped = logs(service, job_id)
    assert "\x1b]0;evil title\x07" in piped.stdout
