"""Event files of a typical training job, written without TensorFlow, for tests and
``benchmarks/event_read_bench.py``.

A typical file: one scalar per event, a score of tags written at every step, interleaved, as
TF 2's ``tf.summary.scalar`` (or Keras' TensorBoard callback) writes them, or as simple values
(TF 1, PyTorch). ``tests/unit/test_tf_event_writer.py`` checks that the records are the bytes
real TensorFlow writes.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from tui_app.model.metrics.tf_event_writer import event_record, file_version_record

TAGS: tuple[str, ...] = (
    "loss",
    "accuracy",
    "learning_rate",
    "grad_norm",
    "val/loss",
    "val/accuracy",
    "train/top5",
    "train/throughput",
    "layer1/act_mean",
    "layer2/act_mean",
    "layer3/act_mean",
    "layer4/act_mean",
    "layer1/weight_norm",
    "layer2/weight_norm",
    "layer3/weight_norm",
    "layer4/weight_norm",
    "gpu/memory",
    "data/queue",
    "loss/reg",
    "loss/xent",
)
"""Twenty tags, 4 to 18 bytes, as a training job names them."""

START = 1_795_000_000.0


def training_records(
    steps: int, *, tags: int = 20, tensor: bool = True, first_step: int = 1
) -> Iterator[bytes]:
    """The event records of ``steps`` training steps, every tag written at each."""
    names = [TAGS[i % len(TAGS)] + ("" if i < len(TAGS) else f"_{i}") for i in range(tags)]
    for step in range(first_step, first_step + steps):
        wall = START + step * 0.05
        for i, name in enumerate(names):
            value = math.exp(-step / 5000.0) + i / 100.0
            yield event_record(step, wall + i * 1e-4, name, value, tensor=tensor)


def training_file(steps: int, *, tags: int = 20, tensor: bool = True) -> bytes:
    """A whole event file: the file version record, then :func:`training_records`."""
    return file_version_record(START) + b"".join(training_records(steps, tags=tags, tensor=tensor))


def training_file_of_size(size: int, *, tags: int = 20, tensor: bool = True) -> bytes:
    """A file of at least ``size`` bytes (whole steps, so slightly more)."""
    step_bytes = sum(
        len(r) for r in training_records(1, tags=tags, tensor=tensor, first_step=10**5)
    )
    return training_file(max(1, size // step_bytes + 1), tags=tags, tensor=tensor)
