"""Curves read from log lines match the curves the same run wrote to TensorFlow event files.

The sample trainer (``examples/trainer``) runs for real and logs every loss it writes to its
event files; TensorFlow's own Keras ``TensorBoard`` callback wrote ``tests/fixtures/tf_events/
keras`` (see its README). The event files are read with ``tui_app.model.metrics.tf_events``.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tui_app.model.metrics.log_metrics import LogMetricParser, LogPoint
from tui_app.model.metrics.tf_events import scalar_series

REPO = Path(__file__).resolve().parents[2]
TRAINER_DIR = REPO / "examples" / "trainer"
KERAS_EVENTS = REPO / "tests" / "fixtures" / "tf_events"


def run_trainer(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """One BASIC replica of the sample trainer, run as the service runs it."""
    env = {k: v for k, v in os.environ.items() if k not in ("TF_CONFIG", "CLOUD_ML_TRIAL_ID")}
    env["PYTHONPATH"] = str(TRAINER_DIR)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["CLOUD_ML_HP_METRIC_FILE"] = str(tmp_path / "hypertune" / "output.metrics")
    return subprocess.run(
        [sys.executable, "-m", "trainer.task", *args, "--job-dir", str(tmp_path / "job")],
        env=env,
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
    )


def parse(text: str) -> list[LogPoint]:
    parser = LogMetricParser()
    return [point for line in text.splitlines() for point in parser.feed(line)]


def series(points: list[LogPoint], tag: str) -> list[tuple[int, float]]:
    assert {p.axis for p in points if p.tag == tag} <= {"step"}
    return [(p.step, p.value) for p in points if p.tag == tag]


def events(path: Path, tag: str) -> list[tuple[int, float]]:
    (file,) = path.glob("events.out.tfevents.*")
    return scalar_series(file.read_bytes(), tag)


@pytest.mark.timeout(30)
def test_the_sample_trainers_log_gives_the_curves_its_event_files_hold(tmp_path: Path) -> None:
    result = run_trainer(
        ["--steps", "60", "--log-every", "10", "--checkpoint-every", "30"], tmp_path
    )
    assert result.returncode == 0, result.stderr
    points = parse(result.stdout + result.stderr)
    assert {p.tag for p in points} == {"loss", "eval_loss"}

    logged = series(points, "loss")
    written = events(tmp_path / "job" / "train", "loss")
    assert [s for s, _ in logged] == [s for s, _ in written] == [1, 10, 20, 30, 40, 50, 60]
    assert [v for _, v in logged] == pytest.approx([v for _, v in written], abs=1e-6)  # %.6f

    # The held-out loss is logged with its step at each checkpoint; the last one is printed as
    # "final loss=..." with no step, so the log has one point fewer than the event file.
    ((step, value),) = series(points, "eval_loss")
    evals = events(tmp_path / "job" / "eval", "loss")
    assert [s for s, _ in evals] == [30, 60]
    assert step == 30
    assert value == pytest.approx(evals[0][1], abs=1e-6)


@pytest.mark.timeout(30)
def test_a_diverged_loss_is_kept_as_the_last_point(tmp_path: Path) -> None:
    result = run_trainer(["--steps", "400", "--learning-rate", "3", "--log-every", "10"], tmp_path)
    assert result.returncode == 1
    logged = series(parse(result.stdout), "loss")
    step, value = logged[-1]
    assert not math.isfinite(value)
    assert all(math.isfinite(v) for _, v in logged[:-1])
    # The event file holds the same curve (as float32: past 3.4e38 its values are infinite).
    by_step = dict(logged)
    written = events(tmp_path / "job" / "train", "loss")
    assert {s for s, _ in written} <= by_step.keys()
    finite = [(s, v) for s, v in written if math.isfinite(v)]
    assert len(finite) >= 3
    assert [by_step[s] for s, _ in finite] == pytest.approx([v for _, v in finite], rel=1e-6)
    # The traceback's last line states the same point.
    (stated,) = parse(result.stderr.strip().splitlines()[-1])
    assert (stated.tag, stated.step) == ("loss", step) and not math.isfinite(stated.value)


def test_keras_epochs_line_up_with_its_tensorboard_callbacks_steps() -> None:
    """The Keras fixture's fit ran 3 epochs, which the callback wrote at steps 0, 1, 2. The same
    numbers printed the way fit(verbose=2) prints them read back at the same steps."""
    expected = json.loads((KERAS_EVENTS / "expected.json").read_text())
    rows = expected["keras/train/events.out.tfevents.1795587137.vm.10401.1.v2"]
    written = {(str(row[0]), int(row[1])): float(row[2]) for row in rows}  # tag, step, value
    epochs = sorted({step for _, step in written})
    log = []
    for step in epochs:
        loss, accuracy = written["epoch_loss", step], written["epoch_accuracy", step]
        log += [f"Epoch {step + 1}/{len(epochs)}", f"2/2 - 0s - loss: {loss:.4f} - accuracy: "
                f"{accuracy:.4f} - 0s/epoch - 5ms/step"]  # fmt: skip
    points = parse("\n".join(log))
    assert {p.axis for p in points} == {"epoch"}
    read = {("epoch_" + p.tag, p.step): p.value for p in points}
    assert read.keys() == written.keys()
    for key, value in written.items():
        assert read[key] == pytest.approx(value, abs=5e-5)
