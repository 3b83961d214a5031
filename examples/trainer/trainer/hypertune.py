"""Hyperparameter-tuning metric reporting, file-compatible with ``cloudml-hypertune``.

The platform (and the local service) reads the trial's objective from the file named by
``CLOUD_ML_HP_METRIC_FILE``. This mirrors ``cloudml-hypertune`` 0.1.0.dev6 so the sample needs no
dependency: the whole file is rewritten on each report as JSON Lines holding the last 100
reports, each ``{"<tag>": "<value>", "checkpoint_path": "", "global_step": "<step>",
"timestamp": <epoch float>, "trial": "<CLOUD_ML_TRIAL_ID or 0>"}`` with sorted keys. (Unlike the
library, the rewrite is atomic, so a reader never sees a half-written file.)

This trainer reports the held-out mean squared error, so a tuning job's ``goal`` should be
``MINIMIZE``.
"""

from __future__ import annotations

import collections
import json
import os
import time
from typing import Any, Dict  # noqa: UP035

from trainer.util import atomic_write_text

DEFAULT_METRIC_TAG = "training/hptuning/metric"
DEFAULT_METRIC_PATH = "/tmp/hypertune/output.metrics"
MAX_ENTRIES = 100

MetricEntry = Dict[str, Any]  # noqa: UP006 - runs on Python 3.7 too


class HyperTune:
    """Collects reports in memory and rewrites the metric file after each one."""

    def __init__(self, metric_path: str | None = None, trial_id: str | None = None) -> None:
        self.metric_path = metric_path or os.environ.get(
            "CLOUD_ML_HP_METRIC_FILE", DEFAULT_METRIC_PATH
        )
        self.trial_id = (
            trial_id if trial_id is not None else os.environ.get("CLOUD_ML_TRIAL_ID", "0")
        )
        self.entries: collections.deque[MetricEntry] = collections.deque(maxlen=MAX_ENTRIES)

    def report_hyperparameter_tuning_metric(
        self,
        hyperparameter_metric_tag: str,
        metric_value: float,
        global_step: int | None = None,
        checkpoint_path: str = "",
    ) -> MetricEntry:
        """Record one report and rewrite the file; returns the entry written."""
        entry: MetricEntry = {
            "timestamp": time.time(),
            "trial": str(self.trial_id),
            hyperparameter_metric_tag or DEFAULT_METRIC_TAG: str(float(metric_value)),
            "global_step": str(int(global_step) if global_step else 0),
            "checkpoint_path": checkpoint_path,
        }
        self.entries.append(entry)
        text = "".join(json.dumps(e, sort_keys=True) + "\n" for e in self.entries)
        atomic_write_text(self.metric_path, text)
        return entry
