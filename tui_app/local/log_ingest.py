"""Turning bytes a replica wrote into log lines with a severity, losing nothing.

Files are read in big chunks (splitting bytes is ~10x cheaper than per-line reads), a partial last
line waits for its newline until the replica ends, a line longer than ``MAX_LINE_BYTES`` is split
rather than dropped, and invalid UTF-8 becomes U+FFFD instead of an error.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from tui_app.model.severity import SEVERITIES

MAX_LINE_BYTES = 4 * 1024 * 1024
READ_CHUNK = 8 * 1024 * 1024

INFO = SEVERITIES["INFO"]
ERROR = SEVERITIES["ERROR"]

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
_LETTER = {"D": "DEBUG", "I": "INFO", "W": "WARNING", "E": "ERROR", "F": "CRITICAL"}
_WORD = {"WARN": "WARNING", "FATAL": "CRITICAL"}


def classify(line: str, stderr: bool) -> int:
    """The severity of one line: a recognised level prefix wins, else stdout INFO, stderr ERROR."""
    if line:
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
    return ERROR if stderr else INFO


def _pieces(line: bytes) -> list[str]:
    """A line as entries: whole, or split every ``MAX_LINE_BYTES`` when longer."""
    if len(line) <= MAX_LINE_BYTES:
        return [line.decode("utf-8", "replace")]
    return [
        line[i : i + MAX_LINE_BYTES].decode("utf-8", "replace")
        for i in range(0, len(line), MAX_LINE_BYTES)
    ]


@dataclass
class LogSource:
    """One output file of one replica, read incrementally."""

    path: Path
    project: str
    job_id: str
    task_name: str
    log_name: str
    stderr: bool
    trial_id: str | None = None
    offset: int = 0
    """Bytes consumed up to the end of the last complete line taken."""
    partial: bytearray = field(default_factory=bytearray)

    def read(self, final: bool = False, limit: int = READ_CHUNK) -> tuple[list[str], bool]:
        """Complete lines written since the last call, and whether more bytes are waiting.

        With ``final`` the partial last line is taken too: the replica has ended.
        """
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return [], False
        try:
            start = self.offset + len(self.partial)
            size = os.fstat(fd).st_size
            if size < start:  # truncated by someone: start over rather than lose new lines
                self.offset, self.partial = 0, bytearray()
                start = 0
            chunk = os.pread(fd, min(limit, size - start), start) if size > start else b""
        finally:
            os.close(fd)
        more = start + len(chunk) < size
        data: bytes = bytes(self.partial) + chunk if self.partial else chunk
        parts = data.split(b"\n")
        tail = parts.pop()
        consumed = len(data) - len(tail)
        lines: list[str] = []
        for part in parts:
            lines += _pieces(part)
        # A partial line that reached the limit will not fit one entry anyway: take its pieces.
        while len(tail) >= MAX_LINE_BYTES:
            lines.append(bytes(tail[:MAX_LINE_BYTES]).decode("utf-8", "replace"))
            tail = tail[MAX_LINE_BYTES:]
            consumed += MAX_LINE_BYTES
        if final and not more and tail:
            lines.append(bytes(tail).decode("utf-8", "replace"))
            consumed += len(tail)
            tail = b""
        self.offset += consumed
        self.partial = bytearray(tail)
        return lines, more
