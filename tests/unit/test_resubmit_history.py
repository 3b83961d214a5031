"""Resubmit provenance (``ResubmitHistory``) and the metrics a diff compares (``last_values``)."""

from __future__ import annotations

import json
import math
import threading
from pathlib import Path

from tui_app.api.job_compare import ResubmitHistory, last_values
from tui_app.api.job_scalars import ScalarBatch, ScalarPoll, SourceStatus
from tui_app.config.locations import resubmit_history_file
from tui_app.model.metrics.metric_series import SeriesKey


def test_record_and_sources_per_project(tmp_path: Path) -> None:
    history = ResubmitHistory(tmp_path / "h.jsonl")
    assert history.sources("p") == {}
    history.record("p", "b_2", "b_1")
    history.record("q", "x_2", "x_1")
    history.record("p", "b_3", "b_2")
    assert history.sources("p") == {"b_2": "b_1", "b_3": "b_2"}
    assert history.sources("q") == {"x_2": "x_1"}
    # Another reader of the same file (the TUI, then a script) sees the same.
    assert ResubmitHistory(tmp_path / "h.jsonl").sources("p") == {"b_2": "b_1", "b_3": "b_2"}


def test_the_default_file_is_in_the_users_data_dir() -> None:
    # The test's XDG_DATA_HOME (conftest): a subprocess that inherits it writes the same file.
    assert ResubmitHistory().path == resubmit_history_file()
    assert resubmit_history_file().parent.name == "tui-app"


def test_keeps_the_newest_records(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    history = ResubmitHistory(path, limit=5)
    for i in range(12):
        history.record("p", f"j_{i + 1}", f"j_{i}")
    assert len(path.read_text().splitlines()) == 5
    assert history.sources("p") == {f"j_{i + 1}": f"j_{i}" for i in range(7, 12)}


def test_a_broken_file_is_no_history_and_is_replaced_on_the_next_record(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    path.write_bytes(b'\xff\xfe not json\n{"project": "p"}\n[1, 2]\n')
    history = ResubmitHistory(path)
    assert history.sources("p") == {}
    good = json.dumps({"project": "p", "new": "a_2", "old": "a_1"})
    path.write_text(f"garbage\n{good}\n{{torn")
    assert history.sources("p") == {"a_2": "a_1"}
    history.record("p", "a_3", "a_2")
    assert history.sources("p") == {"a_2": "a_1", "a_3": "a_2"}
    assert all(json.loads(line) for line in path.read_text().splitlines())


def test_an_unwritable_place_never_raises(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    history = ResubmitHistory(blocker / "sub" / "h.jsonl")  # a file where a folder must be
    history.record("p", "a_2", "a_1")
    assert history.sources("p") == {}
    folder = tmp_path / "folder.jsonl"
    folder.mkdir()  # a folder where the file must be
    ResubmitHistory(folder).record("p", "a_2", "a_1")
    assert ResubmitHistory(folder).sources("p") == {}


def test_writers_at_once_lose_no_record(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"

    def write(n: int) -> None:
        mine = ResubmitHistory(path)
        for i in range(20):
            mine.record("p", f"t{n}_{i}", "src")

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ResubmitHistory(path).sources("p")) == 80


def _batch(source: str, run: str, tag: str, values: list[float], trial: str = "") -> ScalarBatch:
    key = SeriesKey(source, run, tag, trial)  # type: ignore[arg-type]
    steps = list(range(len(values)))
    return ScalarBatch(key, steps, [0.0] * len(values), values)


def test_last_values_of_the_jobs_own_series() -> None:
    poll = ScalarPoll(
        batches=[
            _batch("events", ".", "loss", [3.0, 2.0]),
            _batch("events", "eval", "loss", [4.0]),
            _batch("events", ".", "loss", [1.5]),
            _batch("hypertune", "", "mse", [0.3], trial="2"),
            _batch("logs", "master-replica-0", "loss", [9.0]),  # events give the curve
            _batch("events", ".", "nan_tag", [math.nan]),
        ],
        statuses=[SourceStatus("events", "3 files")],
    )
    values, partial = last_values(poll)
    assert not partial
    assert values.keys() == {"loss", "eval/loss", "nan_tag"}
    assert values["loss"] == 1.5 and values["eval/loss"] == 4.0
    assert math.isnan(values["nan_tag"])


def test_event_values_left_out_while_a_backlog_remains() -> None:
    poll = ScalarPoll(
        batches=[_batch("events", ".", "loss", [3.0]), _batch("logs", "m", "acc", [0.5])],
        more=True,
    )
    values, partial = last_values(poll)
    assert partial and values == {"m/acc": 0.5}
