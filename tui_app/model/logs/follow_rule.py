"""When a following log pane stops draining a backlog and jumps to the newest lines.

A flood can outrun any pane: the local service ingests ~186k lines/s (issue 15), and a pane that
takes every line in order falls minutes behind, so the job's end shows long after it happened.
k9s and ``kubectl logs -f`` show the present instead; so does a following pane here: it jumps
to the tail, and the lines it skipped stay reachable by scrolling up (history reads them back).

Pure: the stream (``api/log_stream.py``) measures, this decides.
"""

from __future__ import annotations

from typing import Final

__all__ = ["MAX_BEHIND_SECONDS", "should_skip_ahead"]

MAX_BEHIND_SECONDS: Final = 0.5
"""How old the newest line taken may be, while more wait, before the pane jumps to the tail.

Half the pane's goal (never more than ~1 s behind): under a 4-replica flood one read of a batch
took up to ~0.4 s (log_bench), and the jump itself is one more read. At 1.0 the pane ran a
median 1.6 s behind the service."""


def should_skip_ahead(
    batch: int, batch_limit: int | None, behind_seconds: float, requested: bool = False
) -> bool:
    """Whether to jump to the tail instead of reading the next batch after the newest line.

    Args:
        batch: Lines the last read returned.
        batch_limit: The most a read returns; a full read means at least a batch more waits
            (more than a pane shows in a frame). None: reads are unbounded, so none is left.
        behind_seconds: How far the newest line taken is behind what the server can have now
            (the cloud's settling delay already taken off).
        requested: The user asked for the newest line (``G``): jump as soon as lines wait.

    Returns:
        True when lines wait and either the user asked, or draining them would leave the pane
        more than ``MAX_BEHIND_SECONDS`` behind.
    """
    if batch_limit is None or batch < batch_limit:
        return False
    return requested or behind_seconds > MAX_BEHIND_SECONDS
