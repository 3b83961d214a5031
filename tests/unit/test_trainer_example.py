"""End-to-end tests of the sample trainer in ``examples/trainer`` (real processes, no mocks).

The trainer is what users submit to the local jobs service, so these run it exactly as the
service does: ``python -m trainer.task`` with ``TF_CONFIG`` in the environment, one process per
replica, and check what a job's user would see (exit status, logs, files in the job dir).
"""

from __future__ import annotations

import json
import math
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

TRAINER_DIR = Path(__file__).resolve().parents[2] / "examples" / "trainer"
STEP_LINE = re.compile(r"^step (\d+) loss=([0-9.]+) task=(\S+)$", re.MULTILINE)
FINAL_LINE = re.compile(r"^final loss=([0-9.]+)$", re.MULTILINE)
METRIC_TAG = "training/hptuning/metric"


def trainer_env(tmp_path: Path, tf_config: dict[str, Any] | None = None) -> dict[str, str]:
    """The environment a replica gets: the package importable, a private metric file."""
    env = {k: v for k, v in os.environ.items() if k not in ("TF_CONFIG", "CLOUD_ML_TRIAL_ID")}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(TRAINER_DIR)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    env["CLOUD_ML_HP_METRIC_FILE"] = str(tmp_path / "hypertune" / "output.metrics")
    # No __pycache__ left inside examples/trainer by the tests.
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if tf_config is not None:
        env["TF_CONFIG"] = json.dumps(tf_config)
    return env


def run_trainer(
    args: list[str], env: dict[str, str], timeout: float = 20
) -> subprocess.CompletedProcess[str]:
    """Run one replica to completion and capture its output."""
    return subprocess.run(
        [sys.executable, "-m", "trainer.task", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def step_losses(output: str) -> list[tuple[int, float]]:
    """``(global_step, loss)`` of every ``step N loss=L task=T`` line."""
    return [(int(m.group(1)), float(m.group(2))) for m in STEP_LINE.finditer(output)]


def final_loss(output: str) -> float:
    """The value of the master's ``final loss=`` line."""
    match = FINAL_LINE.search(output)
    assert match, output
    return float(match.group(1))


def free_ports(count: int) -> list[int]:
    """Ports the OS just handed out (bound to port 0, then released) for a local cluster."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


@pytest.mark.timeout(30)
def test_basic_tier_trains_alone_and_writes_outputs(tmp_path: Path) -> None:
    job_dir = tmp_path / "job"
    env = trainer_env(tmp_path)
    env["CLOUD_ML_TRIAL_ID"] = "7"
    result = run_trainer(["--steps", "100", "--foo=1", "--job-dir", str(job_dir)], env)

    assert result.returncode == 0, result.stderr
    assert "Ignoring unknown arguments: --foo=1" in result.stdout
    losses = step_losses(result.stdout)
    assert losses[0][0] == 1 and losses[-1][0] == 100
    final = final_loss(result.stdout)
    assert losses[0][1] > final * 5, result.stdout

    model = json.loads((job_dir / "model" / "model.json").read_text())
    assert model["global_step"] == 100 and len(model["weights"]) == 8
    assert sorted(p.name for p in (job_dir / "checkpoints").iterdir()) == [
        "ckpt-100.json",
        "ckpt-50.json",
    ]
    assert json.loads((job_dir / "tf_config" / "master-0.json").read_text()) == {}

    lines = Path(env["CLOUD_ML_HP_METRIC_FILE"]).read_text().splitlines()
    entries = [json.loads(line) for line in lines]
    assert [e["global_step"] for e in entries] == ["50", "100"]
    for entry in entries:
        assert set(entry) == {METRIC_TAG, "checkpoint_path", "global_step", "timestamp", "trial"}
        assert entry["trial"] == "7" and entry["checkpoint_path"] == ""
        assert isinstance(entry["timestamp"], float) and isinstance(entry[METRIC_TAG], str)
    assert float(entries[-1][METRIC_TAG]) == pytest.approx(final, abs=1e-6)


@pytest.mark.timeout(30)
def test_master_resumes_from_latest_checkpoint(tmp_path: Path) -> None:
    job_dir = str(tmp_path / "job")
    env = trainer_env(tmp_path)
    first = run_trainer(["--steps", "60", "--checkpoint-every", "20", "--job-dir", job_dir], env)
    assert first.returncode == 0, first.stderr

    second = run_trainer(["--steps", "100", "--checkpoint-every", "20", "--job-dir", job_dir], env)
    assert second.returncode == 0, second.stderr
    assert "Resumed from checkpoint at step 60" in second.stdout
    assert step_losses(second.stdout)[0][0] == 61
    checkpoints = sorted(p.name for p in (Path(job_dir) / "checkpoints").iterdir())
    assert checkpoints == ["ckpt-100.json", "ckpt-60.json", "ckpt-80.json"]


@pytest.mark.timeout(30)
def test_distributed_async_sgd_with_parameter_server(tmp_path: Path) -> None:
    job_dir = tmp_path / "job"
    master_port, worker_port, ps_port = free_ports(3)
    cluster = {
        "master": [f"127.0.0.1:{master_port}"],
        "worker": [f"127.0.0.1:{worker_port}"],
        "ps": [f"127.0.0.1:{ps_port}"],
    }
    # Slow enough (6 s) that the worker, still backing off (up to 2 s a try) while the late ps
    # starts on a busy machine, joins before the master has run every step alone.
    args = ["--steps", "200", "--sleep", "0.03", "--job-dir", str(job_dir)]
    processes: dict[str, subprocess.Popen[bytes]] = {}
    logs: dict[str, Path] = {}

    def start(task_type: str) -> None:
        tf_config = {
            "cluster": cluster,
            "task": {"type": task_type, "index": 0},
            "job": {"python_module": "trainer.task", "args": args},
            "environment": "cloud",
        }
        logs[task_type] = tmp_path / f"{task_type}.log"
        with open(logs[task_type], "wb") as out:
            processes[task_type] = subprocess.Popen(
                [sys.executable, "-m", "trainer.task", *args],
                env=trainer_env(tmp_path, tf_config),
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    try:
        # Trainers first: they must wait (with backoff) for a ps that starts late.
        start("master")
        start("worker")
        time.sleep(0.3)
        start("ps")

        assert processes["master"].wait(timeout=20) == 0, logs["master"].read_text()
        assert processes["worker"].wait(timeout=20) == 0, logs["worker"].read_text()
        master_log = logs["master"].read_text()
        assert "final loss=" in master_log
        # Replicas train asynchronously: the earliest global step is the untrained baseline.
        earliest = min(step_losses(master_log) + step_losses(logs["worker"].read_text()))
        assert earliest[1] > final_loss(master_log) * 5, master_log
        assert step_losses(logs["worker"].read_text()), "the worker trained too"
        assert "ps 0: global_step=" in logs["ps"].read_text()
        assert (job_dir / "model" / "model.json").exists()

        for task_type in ("master", "worker", "ps"):
            seen = json.loads((job_dir / "tf_config" / f"{task_type}-0.json").read_text())
            assert seen["task"] == {"type": task_type, "index": 0}
            assert seen["cluster"] == cluster

        assert processes["ps"].poll() is None, "a ps serves until it is stopped"
        processes["ps"].terminate()
        assert processes["ps"].wait(timeout=5) == 0
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.kill()
                process.wait()


@pytest.mark.timeout(30)
def test_injected_failure_prints_traceback_and_exits_1(tmp_path: Path) -> None:
    env = trainer_env(tmp_path)
    result = run_trainer(["--steps", "50", "--log-every", "1", "--fail-at-step", "5"], env)

    assert result.returncode == 1
    assert "Traceback (most recent call last)" in result.stderr
    assert "RuntimeError: Injected failure at step 5" in result.stderr
    assert step_losses(result.stdout)[-1][0] == 5


@pytest.mark.timeout(30)
def test_injected_failure_with_exit_code_and_other_target(tmp_path: Path) -> None:
    env = trainer_env(tmp_path)
    result = run_trainer(["--steps", "20", "--fail-at-step", "3", "--exit-code", "7"], env)
    assert result.returncode == 7 and "Traceback" not in result.stderr

    # Aimed at a worker, the failure spares the master.
    spared = run_trainer(["--steps", "20", "--fail-at-step", "3", "--fail-task", "worker:0"], env)
    assert spared.returncode == 0, spared.stderr


def test_the_chief_writes_tensorboard_scalars_for_train_and_eval(tmp_path: Path) -> None:
    """What the metrics view draws for the demo: the logged losses as TensorBoard scalars, read
    back with the project's event-file reader (the writer is the trainer's own, stdlib-only)."""
    from tui_app.model.metrics.tf_events import scalar_series

    job_dir = tmp_path / "job"
    args = ["--steps", "60", "--log-every", "10", "--checkpoint-every", "30"]
    result = run_trainer([*args, "--job-dir", str(job_dir)], trainer_env(tmp_path))
    assert result.returncode == 0, result.stderr

    (train,) = (job_dir / "train").glob("events.out.tfevents.*")
    written = scalar_series(train.read_bytes(), "loss")
    logged = step_losses(result.stdout)
    assert [s for s, _ in written] == [s for s, _ in logged]
    assert [v for _, v in written] == pytest.approx([v for _, v in logged], abs=1e-6)  # %.6f

    (held_out,) = (job_dir / "eval").glob("events.out.tfevents.*")
    evals = scalar_series(held_out.read_bytes(), "loss")
    assert [s for s, _ in evals] == [30, 60]
    assert evals[-1][1] == pytest.approx(final_loss(result.stdout), abs=1e-6)


def test_a_diverging_loss_is_logged_and_written_before_the_trainer_stops(tmp_path: Path) -> None:
    job_dir = tmp_path / "job"
    args = ["--steps", "400", "--learning-rate", "3", "--log-every", "10"]
    result = run_trainer([*args, "--job-dir", str(job_dir)], trainer_env(tmp_path))
    assert result.returncode == 1
    assert re.search(r"Training diverged at step \d+ \(loss=(inf|nan)\)", result.stderr)
    assert re.search(r"^step \d+ loss=(inf|nan) task=master-0$", result.stdout, re.M)
    (train,) = (job_dir / "train").glob("events.out.tfevents.*")
    # The last record is the non-finite loss (the reader keeps it; scalar_series drops it).
    assert train.read_bytes().count(b"loss") == len(step_losses(result.stdout)) + 1


def test_a_diverging_loss_tells_one_story_in_the_log_the_events_and_the_error(
    tmp_path: Path,
) -> None:
    """Issue 40: bad_lr's error said step 208, its chart showed inf from step 30 (the event
    file is float32) and its log printed finite losses near 1e44 until step 200. The trainer
    now diverges where float32 does: the log's last finite loss fits float32, the event file's
    only inf is at the error's step, and the log says inf there too."""
    from tui_app.model.metrics.tf_events import EventFileReader

    job_dir = tmp_path / "job"
    args = ["--steps", "400", "--learning-rate", "3", "--log-every", "1", "--job-dir", str(job_dir)]
    result = run_trainer(args, trainer_env(tmp_path))
    assert result.returncode == 1
    stated = re.search(r"Training diverged at step (\d+) \(loss=inf\)", result.stderr)
    assert stated, result.stderr
    step = int(stated.group(1))
    assert f"step {step} loss=inf task=master-0" in result.stdout
    assert all(loss < 3.4028235e38 for _, loss in step_losses(result.stdout))
    (train,) = (job_dir / "train").glob("events.out.tfevents.*")
    loss = EventFileReader().feed(train.read_bytes())["loss"]
    nonfinite = [s for s, v in zip(loss.steps, loss.values, strict=True) if not math.isfinite(v)]
    assert nonfinite == [step]
