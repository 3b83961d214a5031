"""The diff view at 80x24 and 120x35 (issue 27, item 1), drawn from fixed documents.

The failed census job of the fixed list (tests/support/fixed_jobs.py) and a resubmit of it with
one argument changed, its package rebuilt at the same URI and one framework upgraded, which
succeeded. The documents are built by the model from fixed jobs, fixed ``:environment`` answers
and fixed metrics at the frozen clock, and handed to the screen (``DiffScreen.of_documents``):
nothing is read, so the pictures are the same every run. Behaviour against the real service is
in tests/pilot/test_diff_screen.py.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.snapshots.test_screens_snap import NOW, make_app
from tests.support.fixed_jobs import JOBS, TUNING_JOBS
from tests.support.settle import settled, wait_until
from tui_app.model.views.job_diff import JobFacts, comparison_document, trial_document
from tui_app.shell.screens.diff_screen import DiffScreen
from tui_app.widgets.diff_table import DiffTable

OLD_ID = "census_dist_20261122_070000"
NEW_ID = "census_dist_20261122_091000"
SIZES = [(80, 24), (120, 35)]
PACKAGE = "gs://demo-bucket/packages/trainer-0.1.0.tar.gz"


def _environment(sha256: str, numpy: str) -> dict[str, Any]:
    return {
        "runtimeVersion": "2.11",
        "pythonVersion": "3.7",
        "interpreter": "/usr/bin/python3.7",
        "variant": "cpu",
        "exact": True,
        "packages": {"tensorflow": "2.11.0", "numpy": numpy},
        "trainerPackages": [
            {"uri": PACKAGE, "name": "trainer-0.1.0.tar.gz", "sha256": sha256, "sizeBytes": "1234"}
        ],
    }


def documents() -> tuple[dict[str, Any], dict[str, Any]]:
    """The failed job and its resubmit, as the model compares them."""
    old = copy.deepcopy(next(j for j in JOBS if j["jobId"] == OLD_ID))
    old["trainingInput"]["args"] = ["--steps", "2000", "--lr", "0.1", "--batch-size", "64"]
    new = copy.deepcopy(old)
    del new["errorMessage"]
    new.update(
        jobId=NEW_ID,
        state="SUCCEEDED",
        createTime="2026-11-22T09:10:00Z",
        startTime="2026-11-22T09:10:20Z",
        endTime="2026-11-22T09:25:00Z",
        trainingOutput={"consumedMLUnits": 2.1},
    )
    new["trainingInput"]["args"][3] = "0.01"
    left = JobFacts(old, "demo-project", _environment("3f" * 32, "1.21.6"), {"loss": 0.91})
    right = JobFacts(new, "demo-project", _environment("9c" * 32, "1.24.4"), {"loss": 0.12})
    return comparison_document(left, NOW), comparison_document(right, NOW)


def _opened(
    unfold: bool,
    pair: tuple[str, str] = (OLD_ID, NEW_ID),
    docs: tuple[dict[str, Any], dict[str, Any]] | None = None,
    reason: str = "against the job it was resubmitted from",
) -> Any:
    async def run_before(pilot: Pilot[Any]) -> None:
        screen = DiffScreen.of_documents(*pair, docs or documents(), reason)
        pilot.app.push_screen(screen)
        await wait_until(pilot, lambda: screen.query_one(DiffTable).sections, "the diff drawn")
        if unfold:
            await pilot.press("u")
            await wait_until(pilot, lambda: screen.query_one(DiffTable).unchanged, "unfolded")
        await settled(pilot)

    return run_before


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_diff_of_a_resubmit(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    """The reviewer should see:

    - "Diff  census_dist_20261122_070000 → census_dist_20261122_091000 · against the job it
      was resubmitted from" (wrapped onto a second line at 80 columns);
    - a dim summary "N differences in 6 sections · M fields the same · u shows them";
    - column titles on a panel background: "field", then each job id over its column, the
      ids whole at both widths;
    - "Job · 4 changed · 1 the same": jobId, createTime, startTime, endTime, the old values
      red on a faint red background, the new green on a faint green one; "⋯ 1 the same";
    - "Training input · 1 changed · 13 the same": only "args --lr", 0.1 against 0.01 (the
      argument named by its flag, not by its place);
    - "Labels · the same (2 fields)" on one line;
    - "Packages": trainer-0.1.0.tar.gz with two different sha256 values, wrapped;
    - further down (scrolled into view at 120x35): the runtime environment's numpy
      1.21.6 against 1.24.4, and the outcome's state "✗ FAILED" in the error colour against
      "✓ SUCCEEDED" in the success colour.
    - the footer: u Unchanged, s Swap, y Copy diff, r Re-read, esc Back, ? Help.
    """
    assert snap_compare(make_app(tmp_path), run_before=_opened(False), terminal_size=size)


def test_diff_unfolded(snap_compare: Any, tmp_path: Path) -> None:
    """After ``u`` at 120x35: every row of every section, the unchanged ones with both values
    dim (scaleTier CUSTOM, the worker's accelerator split after its dots:
    "workerConfig." / "acceleratorConfig.count"), the changed ones as before; the summary
    says "u folds them"."""
    assert snap_compare(make_app(tmp_path), run_before=_opened(True), terminal_size=(120, 35))


LONG_TUNING_ID = "mnist_hptuning_20261207_033400"


def trial_documents() -> tuple[dict[str, Any], dict[str, Any]]:
    """Trials 5 and 9 of the fixed tuning job, under a name as long as a real one."""
    job = copy.deepcopy(next(j for j in TUNING_JOBS if j["jobId"] == "hptune_20261122_084000"))
    job["jobId"] = LONG_TUNING_ID
    return trial_document(job, "5", "demo-project"), trial_document(job, "9", "demo-project")


def test_diff_of_two_trials_at_80_columns(snap_compare: Any, tmp_path: Path) -> None:
    """The reviewer should see, in the column titles, both trials' names shortened in the
    middle they share and ending in "/5" and "/9" ("mnist_hpt…07_033400/5"-like), not twice
    "mnist_hptuning_20261207_0334…"; the title line above names both in full (wrapped); the
    hyperparameters that differ, and the metrics."""
    names = (f"{LONG_TUNING_ID}/5", f"{LONG_TUNING_ID}/9")
    opened = _opened(False, names, trial_documents(), "the best trial against the runner-up")
    assert snap_compare(make_app(tmp_path), run_before=opened, terminal_size=(80, 24))


def queued_documents() -> tuple[dict[str, Any], dict[str, Any]]:
    """The failed census job, and a resubmit of it still QUEUED: no environment yet."""
    old, _ = documents()
    job = copy.deepcopy(next(j for j in JOBS if j["jobId"] == OLD_ID))
    job["trainingInput"]["args"] = ["--steps", "2000", "--lr", "0.01", "--batch-size", "64"]
    job.update(jobId=NEW_ID, state="QUEUED", createTime="2026-11-22T09:10:00Z")
    for key in ("startTime", "endTime", "errorMessage", "trainingOutput"):
        job.pop(key, None)
    return old, comparison_document(JobFacts(job, "demo-project", {}), NOW)


def test_diff_against_a_queued_resubmit(snap_compare: Any, tmp_path: Path) -> None:
    """The reviewer should see the summary count the differences without the queued job's
    packages and runtime, and say "N not known yet (not started)"; "Packages · 1 not known
    yet · nothing to compare" and (scrolled) "Runtime environment · 6 not known yet"; no
    row that reads "unknown" and no red/green sha256 against a word."""
    opened = _opened(False, docs=queued_documents())
    assert snap_compare(make_app(tmp_path), run_before=opened, terminal_size=(80, 24))
