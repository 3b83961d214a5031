"""Turning bytes a replica wrote into log lines with a severity, losing nothing.

Files are read in big chunks (splitting bytes is ~10x cheaper than per-line reads), a partial last
line waits for its newline until the replica ends, a line longer than ``MAX_LINE_BYTES`` is split
rather than dropped, and invalid UTF-8 becomes U+FFFD instead of an error.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from tui_app.model.logs.log_records import default_severity, record_severity, stream_severities

MAX_LINE_BYTES = 4 * 1024 * 1024
READ_CHUNK = 8 * 1024 * 1024


def classify(line: str, stderr: bool) -> int:
    """The severity of one line on its own: a recognised level prefix wins, else stdout INFO,
    stderr ERROR. Lines of a stream are judged together by ``LogSource.severities``."""
    own = record_severity(line)
    return own if own is not None else default_severity(stderr)


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
    open_record: int | None = None
    """The severity of the logging record the last lines read left open: the next lines
    without a prefix of their own continue it (``tui_app.model.logs.log_records``)."""
    last_line_at: float | None = None
    """When a read last took lines (epoch seconds): the replica's last output, for
    ``stall_watch``; None while it has printed nothing since this source was made."""
    last_line: str | None = None

    def severities(self, lines: list[str], more: bool) -> list[int]:
        """The severity of each line of one ``read``, given whether more bytes were waiting.

        A record is written in one piece, so once a read has taken everything in the file (no
        bytes waiting, no partial line) the record it left open is over: whatever comes later
        was written later and starts afresh.
        """
        out, self.open_record = stream_severities(lines, self.stderr, self.open_record)
        if not more and not self.partial:
            self.open_record = None
        return out

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
        if lines:
            self.last_line_at = time.time()
            self.last_line = next((ln for ln in reversed(lines) if ln.strip()), lines[-1])
        return lines, more
