"""A trial's hypertune reports read a piece at a time (``execution/trial_metrics.py``) and thinned
before the search and ``allMetrics`` (``model/running/hp_search.py``): appended and rewritten files
are both followed without losing or doubling a report, a poll never reads more than its caps, and a
file that is not a regular file, or past the cap, stops the feed with a reason."""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import pytest

from tui_app.local.execution import trial_metrics
from tui_app.local.execution.trial_metrics import HYPERTUNE_FILE, HypertuneFeed, MetricFileError
from tui_app.local.storage.storage_env import HYPERTUNE_MAX_BYTES
from tui_app.model.running.hp_search import (
    MAX_REPORTS,
    Search,
    ThinSeries,
    metric_point,
    reported_step,
)

TAG = "training/hptuning/metric"


def report(step: int, value: float, tag: str = TAG) -> str:
    """One line as cloudml-hypertune writes it (sorted keys, values as strings)."""
    entry = {"global_step": str(step), tag: str(value), "timestamp": 1.0 + step, "trial": "1"}
    return json.dumps(entry, sort_keys=True) + "\n"


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "hypertune").mkdir()
    return tmp_path


def write(workdir: Path, text: str, mode: str = "a") -> None:
    with open(workdir / HYPERTUNE_FILE, mode) as f:
        f.write(text)


def rewrite_atomically(workdir: Path, text: str) -> None:
    """As the sample trainer does: a new file renamed into place."""
    fresh = workdir / "hypertune" / ".new"
    fresh.write_text(text)
    os.replace(fresh, workdir / HYPERTUNE_FILE)


def test_an_appended_file_gives_each_report_once(workdir: Path) -> None:
    feed = HypertuneFeed(workdir, TAG)
    assert feed.poll() == []  # no file yet
    write(workdir, report(1, 0.5) + report(2, 0.4) + '{"global_st')
    assert feed.poll() == [(1, 0.5), (2, 0.4)]  # the half-written line waits
    write(workdir, 'ep": "3", "' + TAG + '": "0.3"}\n' + report(4, 0.2, "other"))
    assert feed.poll() == [(3, 0.3)]
    assert feed.skipped == 1  # the other tag
    assert feed.poll() == []


def test_a_rewritten_window_of_the_last_100_gives_only_new_reports(workdir: Path) -> None:
    feed = HypertuneFeed(workdir, TAG)
    seen: list[tuple[int, float]] = []
    window: list[str] = []
    for step in range(1, 251):
        window = [*window, report(step, 1.0 / step)][-100:]
        rewrite_atomically(workdir, "".join(window))
        if step % 7 == 0:  # polls fall between reports, several reports at a time
            seen += feed.poll()
    seen += feed.poll()
    assert [s for s, _ in seen] == list(range(1, 251))


def test_more_reports_than_a_window_between_two_polls_keeps_the_window(workdir: Path) -> None:
    feed = HypertuneFeed(workdir, TAG)
    rewrite_atomically(workdir, "".join(report(s, 1.0) for s in range(1, 101)))
    assert len(feed.poll()) == 100
    rewrite_atomically(workdir, "".join(report(s, 1.0) for s in range(301, 401)))
    assert [s for s, _ in feed.poll()] == list(range(301, 401))


def test_a_truncated_file_is_read_again_from_its_start(workdir: Path) -> None:
    feed = HypertuneFeed(workdir, TAG)
    write(workdir, report(1, 0.5) + report(2, 0.4))
    assert len(feed.poll()) == 2
    write(workdir, report(3, 0.3), mode="w")
    assert feed.poll() == [(3, 0.3)]


def test_a_poll_reads_at_most_its_caps(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trial_metrics, "POLL_LINES", 1000)
    write(workdir, "".join(report(s, 0.1) for s in range(5000)))
    feed = HypertuneFeed(workdir, TAG)
    got = feed.poll()
    assert len(got) == 1000
    assert [s for s, _ in got + drain(feed)] == list(range(5000))


def drain(feed: HypertuneFeed) -> list[tuple[int, float]]:
    """Poll while the last poll stopped at its caps; fails if the first one did not."""
    assert feed.behind
    got: list[tuple[int, float]] = []
    while True:
        got += feed.poll()
        if not still_behind(feed):
            return got


def still_behind(feed: HypertuneFeed) -> bool:
    return feed.behind


def test_a_line_longer_than_a_poll_is_skipped_not_waited_for(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(trial_metrics, "POLL_BYTES", 4096)
    write(workdir, "x" * 10_000 + "\n" + report(7, 0.7))
    feed = HypertuneFeed(workdir, TAG)
    got: list[tuple[int, float]] = []
    for _ in range(10):
        got += feed.poll()
    assert got == [(7, 0.7)]


@pytest.mark.parametrize("kind", ["fifo", "symlink", "folder"])
def test_a_file_that_is_not_regular_stops_the_feed_with_why(
    workdir: Path, tmp_path: Path, kind: str
) -> None:
    target = workdir / HYPERTUNE_FILE
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "symlink":
        outside = tmp_path / "bashrc"
        outside.write_text(report(1, 0.1))
        target.symlink_to(outside)
    else:
        target.mkdir()
    words = {"fifo": "a FIFO", "symlink": "a symbolic link", "folder": "a folder"}[kind]
    with pytest.raises(MetricFileError, match=words):
        HypertuneFeed(workdir, TAG).poll()


def test_a_file_past_its_cap_stops_the_feed(workdir: Path) -> None:
    with open(workdir / HYPERTUNE_FILE, "wb") as f:
        f.truncate(HYPERTUNE_MAX_BYTES + 1)  # sparse: no disk used
    with pytest.raises(MetricFileError, match="report the metric less often"):
        HypertuneFeed(workdir, TAG).poll()


def test_metric_point_takes_one_line_and_refuses_junk() -> None:
    assert metric_point(report(5, 0.25), TAG) == (5, 0.25)
    assert metric_point(b'{"training/hptuning/metric": "1"}', TAG) == (0, 1.0)
    for junk in ("", "not json", f'{{"global_step": "inf", "{TAG}": "1"}}', "[" * 100_000):
        assert metric_point(junk, TAG) is None


def test_the_reporting_grid_keeps_a_few_thousand_steps_of_a_billion() -> None:
    assert all(reported_step(s) for s in range(256))
    kept = [s for s in range(256, 1 << 14) if reported_step(s)]
    assert kept[:3] == [256, 258, 260] and 8192 in kept and 8193 not in kept
    # about 128 per doubling: a billion steps come to about 3,000
    octaves = 30 - 8
    assert sum(1 for s in range(1 << 12, 1 << 13) if reported_step(s)) == 128
    assert 256 + 128 * octaves < MAX_REPORTS


def test_search_reports_stay_bounded_for_a_trial_that_reports_every_step() -> None:
    hp = {
        "goal": "MINIMIZE",
        "maxTrials": 2,
        "enableTrialEarlyStopping": True,
        "params": [{"parameterName": "lr", "type": "DOUBLE", "minValue": 0.01, "maxValue": 0.1}],
    }
    search = Search(hp, seed=1)
    s = search.ask()
    assert s is not None
    for step in range(200_000):
        search.report(s, step, 1.0 / (step + 1))
    assert 256 < len(s.steps) <= MAX_REPORTS
    assert len(s.trial.storage.get_trial(s.trial._trial_id).intermediate_values) == len(s.steps)


def test_thin_series_keeps_an_even_spread_and_the_newest_point() -> None:
    series = ThinSeries(limit=100)
    series.extend([(i, float(i)) for i in range(1, 100_001)])
    points = series.points()
    assert 100 <= len(points) <= 201
    assert points[0] == (1, 1.0) and points[-1] == (100_000, 100_000.0)
    gaps = {b[0] - a[0] for a, b in itertools.pairwise(points[:-1])}
    assert len(gaps) == 1  # evenly spread
    assert ThinSeries().points() == []
