"""Which lines of a replica's output start a logging record, and how severe each line is.

A line a trainer writes gets the level its logging prefix names (Python logging, absl/glog,
TensorFlow's C++ log, ``asctime - LEVEL`` formats, ``warnings.warn``), else stdout INFO and
stderr ERROR, as Cloud Logging's agent did for unparsed lines. One logging record may span
lines: TensorFlow's deprecation warnings are

    WARNING:tensorflow:From /x/estimator.py:1: Estimator.train (from ...) is deprecated and will
    be removed in a future version.
    Instructions for updating:
    Use tf.keras instead.

written in one ``write`` to stderr. Judged line by line, the last three would be ERRORs and
bury a real error under every ``e`` (first error) and ``L`` (minimum severity). So a
*continuation* takes the severity of its record. A line is a continuation when

- it has no level prefix of its own,
- it comes right after a prefixed record or another continuation of it, in the same stream of
  the same replica (stdout and stderr are separate streams),
- it is not the start of a traceback (``Traceback (most recent call last):``, also with
  torch.distributed's ``[rank1]: `` before it): a traceback is
  an error whatever record printed it, and it ends the record,
- and it was written together with that record. The caller says when the stream went quiet
  (everything written so far was read); the record ends there, since a record is written in
  one piece, so a bare ``print(..., file=sys.stderr)`` minutes after a warning stays an ERROR.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from tui_app.model.logs.severity import SEVERITIES

__all__ = [
    "ERROR",
    "INFO",
    "TRACEBACK_START",
    "default_severity",
    "is_record_start",
    "record_severity",
    "starts_traceback",
    "stream_severities",
    "strip_rank",
]

INFO: Final = SEVERITIES["INFO"]
ERROR: Final = SEVERITIES["ERROR"]
WARNING: Final = SEVERITIES["WARNING"]

TRACEBACK_START: Final = "Traceback (most recent call last):"

# torch.distributed, once a process group is up, prints an uncaught exception with every line
# prefixed by the rank: "[rank1]: Traceback (most recent call last):".
_RANK_PREFIX = re.compile(r"\[rank\d+\]: ?")

# Python logging's default format ("WARNING:root:msg") and common "LEVEL - msg" forms.
_PY_LEVEL = re.compile(r"(DEBUG|INFO|NOTICE|WARNING|WARN|ERROR|CRITICAL|FATAL)(?=[:\]\s])")
# absl / glog: "W1122 08:30:00.123456 12345 file.py:10] msg".
_ABSL = re.compile(r"([DIWEF])\d{4} \d\d:\d\d:\d\d")
# TensorFlow C++: "2026-11-22 08:30:00.123456: W tensorflow/...".
_TF_CPP = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: ([DIWEF]) ")
# "2026-11-22 08:30:00,123 - WARNING - msg" / "2026-11-22 08:30:00,123 WARNING msg".
_ASCTIME = re.compile(
    r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[,.]\d+\s+(?:-\s+)?(?:\S+\s+-\s+)?"
    r"(DEBUG|INFO|NOTICE|WARNING|WARN|ERROR|CRITICAL|FATAL)\b"
)
# warnings.warn's default format: "/x/y.py:12: UserWarning: msg" (then the source line,
# indented, as its continuation). Keras and TensorFlow write many of these to stderr.
_PY_WARNING = re.compile(r"[^\s:][^:]*:\d+: ([A-Z]\w*Warning): ")
# PyTorch's C++ (c10) log: "[W CudaIPCTypes.cpp:16] msg", newer
# "[W1122 08:30:00.123456789 ProcessGroupNCCL.cpp:1168] msg", under DDP "[rank0]:[W1122 ...".
_C10 = re.compile(r"(?:\[rank\d+\]:)?\[([DIWEF])(?:\d{4} [\d:.]+ (?:\d+ )?| )?[^\]\s]+:\d+\] ")
_LETTER = {"D": "DEBUG", "I": "INFO", "W": "WARNING", "E": "ERROR", "F": "CRITICAL"}
_WORD = {"WARN": "WARNING", "FATAL": "CRITICAL"}


def record_severity(line: str) -> int | None:
    """The severity a line's own logging prefix names, or None when it has no prefix."""
    if not line:
        return None
    first = line[0]
    if first in "DINWECF":
        m = _PY_LEVEL.match(line)
        if m:
            word = m.group(1)
            return SEVERITIES[_WORD.get(word, word)]
        m = _ABSL.match(line)
        if m:
            return SEVERITIES[_LETTER[m.group(1)]]
    elif first.isdigit() and len(line) > 20:
        m = _TF_CPP.match(line)
        if m:
            return SEVERITIES[_LETTER[m.group(1)]]
        m = _ASCTIME.match(line)
        if m:
            word = m.group(1)
            return SEVERITIES[_WORD.get(word, word)]
    elif first == "[":
        m = _C10.match(line)
        if m:
            return SEVERITIES[_LETTER[m.group(1)]]
    if "Warning: " in line and _PY_WARNING.match(line):
        return WARNING
    return None


def strip_rank(line: str) -> str:
    """``line`` without torch.distributed's ``[rankN]: `` prefix (unchanged when it has none)."""
    if line.startswith("[rank"):
        m = _RANK_PREFIX.match(line)
        if m:
            return line[m.end() :]
    return line


def starts_traceback(line: str) -> bool:
    """Whether ``line`` is a traceback's header, with or without a rank prefix."""
    return strip_rank(line).startswith(TRACEBACK_START)


def is_record_start(line: str) -> bool:
    """Whether ``line`` begins a logging record of its own (it has a level prefix)."""
    return record_severity(line) is not None


def default_severity(stderr: bool) -> int:
    """An unprefixed line that continues no record: ERROR on stderr, INFO on stdout."""
    return ERROR if stderr else INFO


def stream_severities(
    lines: Sequence[str], stderr: bool, open_record: int | None = None
) -> tuple[list[int], int | None]:
    """The severity of each of ``lines``, consecutive lines of one stream of one replica.

    Args:
        lines: Complete lines in the order they were written.
        stderr: Whether the stream is stderr (unprefixed lines are ERROR) or stdout (INFO).
        open_record: The severity of the record the previous lines of this stream left open
            (their last prefixed record, when nothing has ended it since), or None.

    Returns:
        The severities, and the record left open after the last line (None when none is):
        pass it with the stream's next lines, or drop it when the stream went quiet.
    """
    out: list[int] = []
    for line in lines:
        own = record_severity(line)
        if own is not None:
            open_record = own
            out.append(own)
        elif open_record is not None and not starts_traceback(line):
            out.append(open_record)
        else:
            open_record = None
            out.append(default_severity(stderr))
    return out, open_record
