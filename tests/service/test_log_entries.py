"""Logs: every byte a replica writes becomes a LogEntry; entries:list serves them as gcloud needs.

A hostile trainer (built on the fly) writes a partial last line, a 1 MiB line, invalid UTF-8,
escape sequences and every log-level format; nothing may be lost or altered.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import unique_id
from tests.support.live_service import PROJECT, LiveService, basic_job
from tests.support.task_packages import task_package
from tui_app.local.logs.log_ingest import MAX_LINE_BYTES, LogSource, classify
from tui_app.model.logs.severity import SEVERITIES

NOISY = textwrap.dedent(
    r"""
    import logging, sys, time
    out = sys.stdout.buffer
    out.write(b"plain stdout line\n")
    out.write(b"bad utf8 \xff\xfe here\n")
    out.write(b"\x1b[31mred\x1b[0m \x1b[2J\x1b]0;title\x07 progress 10%\r progress 100%\n")
    out.write(b"x" * (1024 * 1024) + b"\n")
    out.flush()
    # First on stderr: right after a logging record it would continue that record.
    sys.stderr.write("plain stderr line\n")
    logging.warning("py warning")
    logging.info("py info")
    sys.stderr.write("I1122 08:30:00.123456 1 task.py:1] absl info\n")
    sys.stderr.write("W1122 08:30:00.123456 1 task.py:1] absl warning\n")
    sys.stderr.flush()
    for i in range(2000):
        out.write(b"burst %d\n" % i)
    out.write(b"partial last line without newline")
    out.flush()
    time.sleep(0.3)
    """
)


@pytest.fixture(scope="module")
def noisy_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return task_package(tmp_path_factory.mktemp("noisy"), "noisy", "logging_setup = None\n" + NOISY)


def _list(service: LiveService, **body: object) -> dict[str, Any]:
    status, resp = service.post("/v2/entries:list", body)
    assert status == 200, resp
    assert isinstance(resp, dict)
    return resp


def _all(
    service: LiveService, flt: str, order: str = "timestamp asc", size: int = 1000
) -> list[dict[str, Any]]:
    return service.entries(flt, order, size)


def test_nothing_a_replica_writes_is_lost(service: LiveService, noisy_package: Path) -> None:
    uri = service.stage(noisy_package)
    jid = unique_id("noisy")
    service.client().create(basic_job(jid, uri, pythonModule="noisy.task"))
    job = service.wait_state(jid, timeout=60)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")

    flt = f'resource.labels.job_id="{jid}" AND resource.labels.task_name="master-replica-0"'
    entries = _all(service, flt, size=300)
    texts = [e["jsonPayload"]["message"] for e in entries]
    severity = {e["jsonPayload"]["message"]: e["severity"] for e in entries}

    assert "plain stdout line" in texts
    assert "bad utf8 \ufffd\ufffd here" in texts
    assert "\x1b[31mred\x1b[0m \x1b[2J\x1b]0;title\x07 progress 10%\r progress 100%" in texts
    assert "x" * (1024 * 1024) in texts  # the 1 MiB line, whole
    assert [t for t in texts if t.startswith("burst ")] == [f"burst {i}" for i in range(2000)]
    assert (
        texts[-1] == "partial last line without newline"
        or "partial last line without newline" in texts
    )

    assert severity["plain stdout line"] == "INFO"
    assert severity["WARNING:root:py warning"] == "WARNING"
    assert severity["I1122 08:30:00.123456 1 task.py:1] absl info"] == "INFO"
    assert severity["W1122 08:30:00.123456 1 task.py:1] absl warning"] == "WARNING"
    assert severity["plain stderr line"] == "ERROR"

    # Wire format: fixed-width timestamps, zero-padded increasing insertIds, task_name labels.
    for e in entries:
        assert len(e["timestamp"]) == len("2026-11-22T08:30:00.000000Z") and e[
            "timestamp"
        ].endswith("Z")
        assert len(e["insertId"]) == 18 and e["insertId"].isdigit()
        assert e["resource"]["type"] == "ml_job"
        assert e["resource"]["labels"]["task_name"] == "master-replica-0"
        assert e["labels"]["ml.googleapis.com/task_name"] == "master-replica-0"
        assert e["logName"] == f"projects/{PROJECT}/logs/master-replica-0"
    keys = [(e["timestamp"], e["insertId"]) for e in entries]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)

    newest_first = _all(service, flt, order="timestamp desc", size=500)
    assert [e["insertId"] for e in newest_first] == [e["insertId"] for e in entries][::-1]

    # gcloud's resume cursor: strictly after the 100th entry, nothing skipped or repeated.
    ts, iid = entries[99]["timestamp"], entries[99]["insertId"]
    cursor = f'{flt} AND ((timestamp="{ts}" AND insertId>"{iid}") OR timestamp>"{ts}")'
    assert [e["insertId"] for e in _all(service, cursor)] == [e["insertId"] for e in entries[100:]]
    warn = _all(service, f"{flt} AND severity>=WARNING")
    assert {e["severity"] for e in warn} <= {"WARNING", "ERROR", "CRITICAL"}
    assert len(warn) == 3  # python warning, absl warning, plain stderr


def test_entries_list_validation(service: LiveService) -> None:
    for body in (
        {},
        {"resourceNames": "projects/x"},
        {"resourceNames": ["folders/1"]},
        {"resourceNames": [f"projects/{PROJECT}"], "filter": "timestamp>="},
        {"resourceNames": [f"projects/{PROJECT}"], "filter": "nosuchfield=1"},
        {"resourceNames": [f"projects/{PROJECT}"], "orderBy": "severity"},
        {"resourceNames": [f"projects/{PROJECT}"], "pageToken": "nope"},
        {"resourceNames": [f"projects/{PROJECT}"], "pageSize": "ten"},
    ):
        status, resp = service.post("/v2/entries:list", body)
        assert status == 400, (body, resp)
        assert resp["error"]["status"] == "INVALID_ARGUMENT"
    assert _list(service, resourceNames=["projects/nobody-here"]) == {}


def test_source_keeps_partial_lines_until_final(tmp_path: Path) -> None:
    path = tmp_path / "out.log"
    src = LogSource(path, "p", "j", "master-replica-0", "projects/p/logs/master-replica-0", False)
    assert src.read() == ([], False)  # no file yet
    path.write_bytes(b"one\ntw")
    assert src.read()[0] == ["one"]
    with open(path, "ab") as fh:
        fh.write(b"o\nthr")
    assert src.read()[0] == ["two"]
    assert src.read(final=True)[0] == ["thr"]
    assert src.read(final=True)[0] == []


def test_source_splits_lines_longer_than_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "out.log"
    path.write_bytes(b"a" * (MAX_LINE_BYTES + 10) + b"\nnext\n")
    src = LogSource(path, "p", "j", "t", "l", False)
    lines: list[str] = []
    while True:
        got, more = src.read()
        lines += got
        if not more and not got:
            break
    assert [len(x) for x in lines] == [MAX_LINE_BYTES, 10, 4]


@pytest.mark.parametrize(
    ("line", "stderr", "expected"),
    [
        ("hello", False, "INFO"),
        ("hello", True, "ERROR"),
        ("WARNING:root:x", True, "WARNING"),
        ("DEBUG:tf:x", True, "DEBUG"),
        ("CRITICAL:root:x", False, "CRITICAL"),
        ("E1122 08:30:00.000001 1 f.py:1] x", False, "ERROR"),
        ("W1122 08:30:00.000001 1 f.py:1] x", True, "WARNING"),
        ("2026-11-22 08:30:00.123456: W tensorflow/core/x.cc:1] y", True, "WARNING"),
        ("2026-11-22 08:30:00,123 - INFO - hello", True, "INFO"),
        ("Traceback (most recent call last):", True, "ERROR"),
        ("Information is power", True, "ERROR"),
    ],
)
def test_severity_classification(line: str, stderr: bool, expected: str) -> None:
    assert classify(line, stderr) == SEVERITIES[expected]
