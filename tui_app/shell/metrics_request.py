"""``MetricsRequested``: a screen asks the App to open the metrics view.

A message rather than a push of ``MetricsScreen`` by the screen itself: the App owns what the view
reads its curves from (``JobsApp(scalars=...)``, fixed series in tests, ``JobScalars`` on the
profile's connection otherwise), and the list must not import the view's plotting stack before
its first frame. Screens post it; it bubbles up to the App, which opens the view.
"""

from __future__ import annotations

from textual.message import Message


class MetricsRequested(Message):
    """Request to show the metric curves of ``job_id``, or of its trial ``trial``."""

    def __init__(self, job_id: str, trial: str | None = None) -> None:
        super().__init__()
        self.job_id = job_id
        self.trial = trial
