"""How the merged log view looks: replica tags, severities, a search, a marker, the cursor."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from textual.app import App, ComposeResult

from tui_app.model.logs.log_line import LogLine
from tui_app.model.logs.severity import SEVERITIES
from tui_app.widgets.log_view import LogView

START = datetime(2026, 11, 22, 9, 30, 0, tzinfo=UTC)
M0, W0, W1, P0 = "master-replica-0", "worker-replica-0", "worker-replica-1", "ps-replica-0"
LINES = [
    (0.0, M0, "INFO", "Starting training: 2 workers, 1 parameter server"),
    (0.4, P0, "INFO", "Parameter server listening on :2222"),
    (0.9, W0, "DEBUG", "TF_CONFIG task index 0"),
    (0.9, W1, "DEBUG", "TF_CONFIG task index 1"),
    (12.5, M0, "INFO", "epoch 1/3 step 100 loss=2.3012 acc=0.112"),
    (12.6, W0, "INFO", "epoch 1/3 step 100 loss=2.2987"),
    (12.7, W1, "INFO", "epoch 1/3 step 100 loss=2.3040"),
    (13.0, M0, "NOTICE", "checkpoint saved to gs://bucket/ckpt-100"),
    (14.2, W1, "INFO", " 10%|█         | 10/100\r100%|██████████| 100/100 [00:04<00:00]"),
    (61.0, M0, "INFO", "epoch 2/3 step 200 loss=1.1871 acc=0.604 \x1b[32m✓ improved\x1b[0m"),
    (61.3, W0, "WARNING", "gradient norm 41.7 above clip threshold 10.0"),
    (62.8, W1, "ERROR", "Traceback (most recent call last):"),
    (62.8, W1, "ERROR", '  File "trainer/task.py", line 88, in train_step'),
    (62.8, W1, "ERROR", "FloatingPointError: loss=nan at step 213\x1b]0;pwned\x07"),
    (63.1, P0, "CRITICAL", "worker-replica-1 lost; aborting the job"),
    (64.0, "service", "INFO", "Job failed: the replica worker 1 exited with status 1."),
]


def _line(n: int, seconds: float, task: str, severity: str, text: str) -> LogLine:
    when = START + timedelta(seconds=seconds)
    return LogLine(
        when.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), f"{n:018d}", task, SEVERITIES[severity], text
    )


class MergedLogSnapApp(App[None]):
    """A merged view of four replicas plus the service, searched for "loss"."""

    def compose(self) -> ComposeResult:
        yield LogView(show_tags=True, timestamps="relative")

    def on_mount(self) -> None:
        view = self.query_one(LogView)
        view.job_start = START
        lines = [_line(n, *fields) for n, fields in enumerate(LINES)]
        view.append(lines[:9])
        view.insert_marker(datetime(2026, 11, 22, 9, 31, 0, tzinfo=UTC))
        view.append(lines[9:])
        view.search("loss")
        view.previous_match()  # from the end: the last line with a match
        view.focus()


SnapCompare = Callable[..., bool]


def test_merged_log_view(snap_compare: SnapCompare) -> None:
    """The reviewer should see, at 80x24:

    - every line prefixed by a bold replica tag (M0, W0, W1, P0, SVC), each replica in its own
      colour, then a dim relative timestamp (+0:00:00.000 … +0:01:04.000);
    - severities as colours: DEBUG muted, INFO plain, NOTICE accent, WARNING in the warning
      colour, the three ERROR lines in the error colour, CRITICAL in bold error;
    - the tqdm line collapsed to its last frame "100%|██████████| 100/100 [00:04<00:00]";
    - "✓ improved" in green (the log's own SGR colour), no "pwned" anywhere (OSC title dropped);
    - a "── 09:31:00 ──" rule across the width after the progress bar;
    - every "loss" highlighted; the cursor row (focused) on "FloatingPointError: loss=nan…",
      its match in the current-match style.
    """
    assert snap_compare(MergedLogSnapApp(), terminal_size=(80, 24))
