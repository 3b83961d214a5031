"""``tui-app jobs describe`` names each replica's node (issue 28, item 6).

The summary (the default output) gets a "Replicas" section, read through the real
``MetricsClient`` from a replayed ``:metrics`` answer (tests/support/recorded_metrics.py);
``--yaml`` and ``--json`` stay the Job resource exactly as the API returns it, for scripts.
"""

from __future__ import annotations

import argparse
import json
from functools import partial
from typing import cast

import pytest

from tests.support.fixed_jobs import FixedClient
from tests.support.recorded_metrics import (
    RAY_JOB,
    RAY_JOB_ID,
    RecordedSource,
    ray_answer,
)
from tui_app.api.jobs_api import JobsApi
from tui_app.entry.jobs_cli import _extensions, _run
from tui_app.model.views.describe import job_yaml


def describe(capsys: pytest.CaptureFixture[str], answer: dict[str, object], **flags: bool) -> str:
    source = RecordedSource([RAY_JOB], {RAY_JOB_ID: answer})
    connection = source.connection()
    # A prefix, as a person types it: found as the TUI's ``:describe`` finds it.
    args = argparse.Namespace(
        action="describe", job_id=RAY_JOB_ID[:14], **{"json": False, "yaml": False, **flags}
    )
    client = cast(JobsApi, FixedClient([RAY_JOB]))
    assert _run(args, client, partial(_extensions, connection, "demo-project")) == 0
    return capsys.readouterr().out


def test_the_summary_names_each_replicas_node(capsys: pytest.CaptureFixture[str]) -> None:
    out = describe(capsys, ray_answer())
    assert (
        "Replicas\n"
        "  master-replica-0: 127.0.0.2 (node 2ae69e1b)\n"
        "  worker-replica-0: 127.0.0.3 (node 9f1c03d2)\n"
        "  worker-replica-1: 127.0.0.4 (node c0ffee01)\n"
        "  ps-replica-0:     127.0.0.3 (node 9f1c03d2)\n"
    ) in out
    # Between the cluster and the output, as in the TUI's detail.
    assert out.index("Training Input") < out.index("Replicas") < out.index("Training Output")


def test_replicas_on_the_service_machine_add_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    local = ray_answer({"master-replica-0": "", "worker-replica-0": ""})
    out = describe(capsys, local)
    assert "Replicas" not in out and "node" not in out
    assert out.startswith("Job Overview")


def test_yaml_and_json_stay_the_job_resource(capsys: pytest.CaptureFixture[str]) -> None:
    assert describe(capsys, ray_answer(), yaml=True) == job_yaml(RAY_JOB)
    assert json.loads(describe(capsys, ray_answer(), json=True)) == RAY_JOB
