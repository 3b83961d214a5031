"""When a following pane jumps over a backlog to the tail (``model/logs/follow_rule``)."""

from __future__ import annotations

import pytest

from tui_app.model.logs.follow_rule import MAX_BEHIND_SECONDS, should_skip_ahead


@pytest.mark.parametrize(
    ("batch", "limit", "behind", "requested", "skip"),
    [
        (5000, 5000, MAX_BEHIND_SECONDS + 0.5, False, True),  # a full batch, a second behind
        (5000, 5000, MAX_BEHIND_SECONDS - 0.5, False, False),  # keeping up: drain it
        (4999, 5000, 60.0, False, False),  # not full: nothing more waits, the pane is current
        (4999, 5000, 60.0, True, False),  # G with nothing waiting: nothing to jump over
        (5000, 5000, 0.0, True, True),  # G with lines waiting: jump at once
        (5000, None, 60.0, True, False),  # unbounded reads (jobs logs): never
    ],
)
def test_skip_ahead_only_over_a_waiting_backlog(
    batch: int, limit: int | None, behind: float, requested: bool, skip: bool
) -> None:
    assert should_skip_ahead(batch, limit, behind, requested) is skip
