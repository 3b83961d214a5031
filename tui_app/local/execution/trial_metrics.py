"""A trial's hypertune reports, read a piece at a time from where the last read stopped.

The trials runner (``trials.py``) watches the chief replica's ``hypertune/output.metrics`` while
the trial runs. That file is the trainer's to write, and a container trainer's folder is mounted
into it: it may be a link to a host file, a FIFO, or hundreds of megabytes of reports. So the
file is opened only through ``untrusted_files`` (never followed, never waited on), each poll
reads at most ``POLL_BYTES`` and ``POLL_LINES`` and parses only the lines it has not seen, the
polls run in a worker thread (``HypertuneFeed.poll`` blocks; the runner calls it through
``asyncio.to_thread``), and a file past ``HYPERTUNE_MAX_BYTES`` or one that is not a regular file
stops with ``MetricFileError``, which fails that trial and nothing else.

Two ways of writing the file are common, and both are followed:

- appending a line per report (a trainer of its own);
- rewriting the whole file on every report with the last 100 reports (cloudml-hypertune, and the
  sample trainer, which also renames the new file into place). Until the 100th report the file
  only grows, with the same first line. After that every rewrite drops the oldest line: the
  first line changes, so the feed reads the (small) file again from its start and takes the
  lines after the last one it had already taken.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from tui_app.local.storage.storage_env import HYPERTUNE_MAX_BYTES, REPLICA_OUTPUT_FILES
from tui_app.local.untrusted_files import UntrustedFileError, opened_beneath, read_at
from tui_app.model.running.hp_search import metric_point

__all__ = ["HYPERTUNE_FILE", "POLL_BYTES", "POLL_LINES", "HypertuneFeed", "MetricFileError"]

HYPERTUNE_FILE = REPLICA_OUTPUT_FILES["hypertune"]
"""The chief replica's report file, relative to its work dir."""
POLL_BYTES = 2 << 20
"""The most one poll reads (about 35,000 reports): the rest waits for the next poll."""
POLL_LINES = 50_000
"""The most lines one poll parses."""
HEAD_BYTES = 4096
"""How much of the file's start is compared to tell a rewrite from an append."""


class MetricFileError(Exception):
    """The hypertune file cannot be followed (not a regular file, or past its cap); the
    message says why, in words for the trial's log and its errorMessage."""


@dataclass
class HypertuneFeed:
    """One trial's reports of ``tag`` from ``folder/HYPERTUNE_FILE`` (see the module doc)."""

    folder: Path
    tag: str
    offset: int = 0
    """Bytes of the file taken so far (whole lines only)."""
    head: bytes = b""
    """The file's first ``HEAD_BYTES`` (up to its first line end) when ``offset`` was set."""
    last_line: bytes = b""
    """The last line taken: where to go on from after a rewrite."""
    skipped: int = 0
    """Lines that were no report of ``tag`` (other tags, junk, over-long lines)."""
    behind: bool = False
    """The last poll stopped at its caps before the end of the file."""

    def poll(self) -> list[tuple[int, float]]:
        """The reports written since the last poll, oldest first (at most a poll's worth: call
        again while it returns a full poll). Blocking: run it in a worker thread.

        Raises:
            MetricFileError: the file is not a regular file, or holds more than its cap.
        """
        try:
            with opened_beneath(self.folder, HYPERTUNE_FILE) as fd:
                # One open file for the size, the start and the new bytes: a trainer that
                # renames a new file into place meanwhile cannot mix two versions.
                size = os.fstat(fd).st_size
                if size > HYPERTUNE_MAX_BYTES:
                    raise MetricFileError(
                        f"Its hypertune metric file holds {size} bytes, more than the "
                        f"{HYPERTUNE_MAX_BYTES >> 20} MiB the service reads: report the metric "
                        "less often (cloudml-hypertune keeps only the last 100 reports)."
                    )
                head = read_at(fd, 0, HEAD_BYTES).split(b"\n", 1)[0]
                rewritten = size < self.offset or (self.offset > 0 and head != self.head)
                start = 0 if rewritten else self.offset
                data = read_at(fd, start, POLL_BYTES)
        except FileNotFoundError:
            self.behind = False
            return []
        except UntrustedFileError as exc:
            raise MetricFileError(
                f"Its hypertune metric file cannot be read: {exc.strerror}."
            ) from None
        lines, used = self._lines(data, start)
        self.behind = start + used < size and (len(data) >= POLL_BYTES or len(lines) >= POLL_LINES)
        if rewritten:
            lines = self._after_last(lines)
        self.head = head
        self.offset = start + used
        points: list[tuple[int, float]] = []
        for line in lines:
            point = metric_point(line, self.tag)
            if point is None:
                self.skipped += 1
            else:
                points.append(point)
        if lines:
            self.last_line = lines[-1]
        return points

    def _lines(self, data: bytes, start: int) -> tuple[list[bytes], int]:
        """The whole lines of ``data`` (at most ``POLL_LINES``) and the bytes they take. A line
        longer than a whole poll is junk: it is skipped so the feed can go on."""
        end = data.rfind(b"\n")
        if end < 0:
            if len(data) >= POLL_BYTES:
                self.skipped += 1
                return [], len(data)
            return [], 0
        lines = data[:end].split(b"\n")
        if len(lines) > POLL_LINES:
            lines = lines[:POLL_LINES]
            return lines, sum(len(line) + 1 for line in lines)
        return lines, end + 1

    def _after_last(self, lines: list[bytes]) -> list[bytes]:
        """After a rewrite: the lines after the last one already taken (all when it is gone,
        as when more than a window's worth of reports came between two polls)."""
        if not self.last_line:
            return lines
        for i in range(len(lines) - 1, -1, -1):
            if lines[i] == self.last_line:
                return lines[i + 1 :]
        return lines
