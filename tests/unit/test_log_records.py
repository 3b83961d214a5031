"""Severities of a replica's lines: prefixes, and the continuation lines of a logging record."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_app.local.logs.log_ingest import LogSource
from tui_app.model.logs.log_records import record_severity, stream_severities
from tui_app.model.logs.severity import SEVERITIES, severity_name

DEPRECATION = [
    "WARNING:tensorflow:From /usr/local/lib/python3.7/dist-packages/tensorflow_core/python/"
    "training/training_util.py:236: Variable.initialized_value (from "
    "tensorflow.python.ops.variables) is deprecated and will be removed in a future version.",
    "Instructions for updating:",
    "Use Variable.read_value. Variables in 2.X are initialized automatically both in eager and "
    "graph (inside tf.defun) contexts.",
]
ABSL = [
    "W1122 08:30:00.123456 140233 deprecation.py:350] From /usr/local/lib/python3.7/"
    "dist-packages/tensorflow/python/training/saver.py:1064: remove_checkpoint (from "
    "tensorflow.python.training.checkpoint_management) is deprecated and will be removed in a "
    "future version.",
    "Instructions for updating:",
    "Use standard file APIs to delete files with this prefix.",
]


def _names(lines: list[str], stderr: bool = True, open_record: int | None = None) -> list[str]:
    severities, _ = stream_severities(lines, stderr, open_record)
    return [severity_name(s) for s in severities]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("WARNING:tensorflow:From x.py:1: f is deprecated", "WARNING"),
        ("INFO:tensorflow:global_step/sec: 412.3", "INFO"),
        ("E1122 08:30:00.000001 1 f.py:1] x", "ERROR"),
        (
            "2026-11-22 08:30:00.123456: I tensorflow/core/platform/cpu_feature_guard.cc:1] y",
            "INFO",
        ),
        ("2026-11-22 08:30:00,123 - trainer - WARNING - slow input", "WARNING"),
        (
            "/usr/lib/python3.10/site-packages/keras/x.py:3: UserWarning: `lr` is deprecated",
            "WARNING",
        ),
        ("[W CudaIPCTypes.cpp:16] Producer process has been terminated", "WARNING"),
        ("[rank1]:[W1122 08:30:00.123456789 ProcessGroupNCCL.cpp:1168] Warning: x", "WARNING"),
        ("[I1122 08:30:00.417236 1203 socket.cpp:480] [c10d] The server socket started", "INFO"),
        ("Instructions for updating:", None),
        ("Traceback (most recent call last):", None),
        ("[1, 2, 3] were the labels", None),
        ("ValueError: x:1: SomeWarning: no", None),
    ],
)
def test_prefixes(line: str, expected: str | None) -> None:
    got = record_severity(line)
    assert (None if got is None else severity_name(got)) == expected


def test_tensorflow_deprecation_record_continues_at_its_severity() -> None:
    assert _names(DEPRECATION) == ["WARNING"] * 3
    assert _names(ABSL) == ["WARNING"] * 3


def test_a_traceback_after_a_record_stays_an_error() -> None:
    lines = [
        *DEPRECATION,
        "Traceback (most recent call last):",
        '  File "/srv/trainer/task.py", line 3, in <module>',
        "ValueError: bad",
    ]
    assert _names(lines) == ["WARNING"] * 3 + ["ERROR"] * 3


def test_logging_exception_with_a_warning_prefix_still_shows_its_traceback_as_error() -> None:
    lines = [
        "WARNING:root:could not read the checkpoint, starting over",
        "Traceback (most recent call last):",
        '  File "/srv/trainer/task.py", line 3, in restore',
        "OSError: [Errno 2] No such file or directory: 'gs://b/ckpt'",
    ]
    assert _names(lines) == ["WARNING", "ERROR", "ERROR", "ERROR"]


def test_a_rank_prefixed_traceback_also_ends_a_record() -> None:
    lines = [
        "/srv/trainer/task.py:6: UserWarning: lr schedule is deprecated",
        '  warnings.warn("lr schedule is deprecated", UserWarning)',
        "[rank1]: Traceback (most recent call last):",
        '[rank1]:   File "/srv/trainer/task.py", line 10, in <module>',
        "[rank1]: RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x14 and 13x64)",
    ]
    assert _names(lines) == ["WARNING", "WARNING", "ERROR", "ERROR", "ERROR"]


def test_a_new_record_ends_the_previous_one() -> None:
    lines = [DEPRECATION[0], "Instructions for updating:", "INFO:root:step 1", "more of step 1"]
    assert _names(lines) == ["WARNING", "WARNING", "INFO", "INFO"]


def test_unprefixed_lines_without_a_record_keep_the_stream_default() -> None:
    assert _names(["plain", "text"], stderr=True) == ["ERROR", "ERROR"]
    assert _names(["plain", "text"], stderr=False) == ["INFO", "INFO"]


def test_the_open_record_carries_over_between_calls() -> None:
    first, open_record = stream_severities(DEPRECATION[:1], True)
    assert open_record == SEVERITIES["WARNING"]
    rest, still = stream_severities(DEPRECATION[1:], True, open_record)
    assert [severity_name(s) for s in first + rest] == ["WARNING"] * 3
    assert still == SEVERITIES["WARNING"]
    _, closed = stream_severities(["Traceback (most recent call last):"], True, still)
    assert closed is None


def test_log_source_ends_a_record_when_the_stream_went_quiet(tmp_path: Path) -> None:
    """A record is written in one piece: a bare stderr line written after the reader caught up
    is the trainer's own error, not the warning's continuation."""
    path = tmp_path / "stderr.log"
    src = LogSource(path, "p", "j", "master-replica-0", "l", stderr=True)
    with path.open("a") as fh:
        fh.write("\n".join(DEPRECATION) + "\n")
    lines, more = src.read()
    assert [severity_name(s) for s in src.severities(lines, more)] == ["WARNING"] * 3
    with path.open("a") as fh:
        fh.write("fatal: the input table has no rows\n")
    lines, more = src.read()
    assert [severity_name(s) for s in src.severities(lines, more)] == ["ERROR"]


def test_log_source_carries_a_record_across_a_read_that_stopped_at_its_limit(
    tmp_path: Path,
) -> None:
    path = tmp_path / "stderr.log"
    path.write_text("\n".join(ABSL) + "\n")
    src = LogSource(path, "p", "j", "master-replica-0", "l", stderr=True)
    first = len(ABSL[0]) + 1
    lines, more = src.read(limit=first)
    assert more and lines == ABSL[:1]
    names = [severity_name(s) for s in src.severities(lines, more)]
    lines, more = src.read()
    names += [severity_name(s) for s in src.severities(lines, more)]
    assert names == ["WARNING"] * 3


def test_log_source_carries_a_record_while_a_partial_line_waits(tmp_path: Path) -> None:
    path = tmp_path / "stderr.log"
    path.write_text(DEPRECATION[0] + "\nInstructions for upd")
    src = LogSource(path, "p", "j", "master-replica-0", "l", stderr=True)
    lines, more = src.read()
    names = [severity_name(s) for s in src.severities(lines, more)]
    with path.open("a") as fh:
        fh.write("ating:\n" + DEPRECATION[2] + "\n")
    lines, more = src.read()
    names += [severity_name(s) for s in src.severities(lines, more)]
    assert names == ["WARNING"] * 3
