"""The metrics benchmarks' writing job (``benchmarks/metrics_load.py``) writes what it claims:
real event files, every one of its 20 tags at each step, steps in order, CRCs intact.

The ``--metrics-open`` figures rest on that load; a writer that wrote one tag, or records the
reader skips as corrupt, would make them look better than they are.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tui_app.model.metrics.tf_events import EventFileReader

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

import metrics_load  # noqa: E402 (beside the benchmark scripts, not a package)


def _write_package(root: Path) -> Path:
    src = root / "metricswriter-src"
    (src / "metricswriter").mkdir(parents=True)
    (src / "metricswriter" / "__init__.py").write_text("")
    (src / "metricswriter" / "task.py").write_text(
        metrics_load.WRITER_TASK.format(tags=metrics_load.writer_tags())
    )
    return src


def test_the_writer_writes_every_tag_at_each_step(tmp_path: Path) -> None:
    src = _write_package(tmp_path)
    job_dir = tmp_path / "job"
    # The replica's command line: the sample trainer and the writer on the path, --job-dir.
    path = f"{src}:{REPO / 'examples' / 'trainer'}"
    subprocess.run(
        [sys.executable, "-m", "metricswriter.task", "--rate", "40", "--seconds", "0.5",
         "--job-dir", str(job_dir)],
        env={"PYTHONPATH": path, "PATH": "/usr/bin:/bin"},
        check=True,
        capture_output=True,
        timeout=60,
    )  # fmt: skip

    files = list((job_dir / "train").glob("events.out.tfevents.*"))
    assert len(files) == 1
    reader = EventFileReader()
    batch = reader.feed(files[0].read_bytes())

    assert reader.corrupt == 0 and reader.problem is None
    assert sorted(batch) == sorted(metrics_load.writer_tags())
    assert len(batch) == 20
    steps = [points.steps for points in batch.values()]
    assert steps[0] == list(range(1, len(steps[0]) + 1))
    assert len(steps[0]) >= 2
    assert all(s == steps[0] for s in steps)
