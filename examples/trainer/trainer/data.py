"""Synthetic regression data and the linear model's math (pure Python, no numpy).

The "true" model is fixed by a constant seed so that every replica, every run and the held-out
evaluation agree on what is being learned; only the *examples* differ per replica (each one reads
its own shard, as data-parallel training does). Parameters are a flat list: ``dim`` weights
followed by the bias, which is also how they are sharded across parameter servers.
"""

from __future__ import annotations

import queue
import random
import zlib
from collections.abc import Sequence
from typing import List, NoReturn, Tuple  # noqa: UP035

from trainer import gcs

TRUE_MODEL_SEED = 1234
EVAL_SEED = 987654321
NOISE_STDDEV = 0.1

# typing's aliases, not tuple[...]: this line runs, and the trainer runs on Python 3.7 too.
Batch = Tuple[List[List[float]], List[float]]  # noqa: UP006


def true_params(dim: int) -> list[float]:
    """The weights and bias the data is generated from (last element is the bias)."""
    rng = random.Random(TRUE_MODEL_SEED + dim)
    return [rng.uniform(-1.0, 1.0) for _ in range(dim)] + [0.5]


def shard_seed(base_seed: int, task_type: str, index: int, start_step: int = 0) -> int:
    """A stable per-replica seed (``hash()`` is salted per process, CRC32 is not).

    ``start_step`` is mixed in so that a run resumed from a checkpoint reads new examples
    instead of replaying the ones it trained on before.
    """
    shard = zlib.crc32(f"{task_type}:{index}:{start_step}".encode())
    return (base_seed * 1_000_003 + shard) & 0xFFFFFFFF


class SyntheticData:
    """An endless stream of ``y = w.x + b + noise`` examples from one seeded generator."""

    def __init__(self, dim: int, seed: int) -> None:
        self.dim = dim
        self._truth = true_params(dim)
        self._rng = random.Random(seed)

    def batch(self, size: int) -> Batch:
        """Draw the next ``size`` examples; features are standard normal so lr 0.05 converges."""
        xs: list[list[float]] = []
        ys: list[float] = []
        for _ in range(size):
            x = [self._rng.gauss(0.0, 1.0) for _ in range(self.dim)]
            xs.append(x)
            ys.append(predict(self._truth, x) + self._rng.gauss(0.0, NOISE_STDDEV))
        return xs, ys


class FileData:
    """Training rows read from a CSV file (``x1,...,xDIM,y`` per line, an optional header),
    local or on Cloud Storage; batches go round the rows in order."""

    def __init__(self, rows: list[tuple[list[float], float]]) -> None:
        if not rows:
            raise ValueError("the training file has no rows")
        self.rows = rows
        self._next = 0

    @classmethod
    def read(cls, path: str, dim: int) -> FileData:
        text = gcs.read_bytes(path).decode("utf-8")
        rows = []
        for number, line in enumerate(text.splitlines(), 1):
            cells = [c.strip() for c in line.split(",")]
            if not line.strip():
                continue
            try:
                values = [float(c) for c in cells]
            except ValueError:
                if number == 1:
                    continue  # a header
                raise ValueError(f"{path} line {number}: not numbers: {line[:80]!r}") from None
            if len(values) != dim + 1:
                raise ValueError(
                    f"{path} line {number}: {len(values)} values, expected {dim + 1} "
                    f"(--dim {dim} features and y)"
                )
            rows.append((values[:-1], values[-1]))
        return cls(rows)

    def batch(self, size: int) -> Batch:
        xs: list[list[float]] = []
        ys: list[float] = []
        for _ in range(size):
            x, y = self.rows[self._next % len(self.rows)]
            self._next += 1
            xs.append(x)
            ys.append(y)
        return xs, ys


def wait_for_data() -> NoReturn:
    """Wait for a batch that never comes: ``--hang-at-step`` for a trainer without ps.

    An input pipeline whose producer has died, as a real job hangs on one: the trainer sits in
    ``Queue.get`` (a lock acquire, no timeout) using no CPU, until a signal ends the process.
    """
    batches: queue.Queue[Batch] = queue.Queue()
    while True:
        batches.get()


def eval_set(dim: int, size: int = 1000) -> Batch:
    """The held-out set: drawn from a seed no training shard uses, identical on every replica."""
    return SyntheticData(dim, EVAL_SEED).batch(size)


def predict(params: Sequence[float], x: Sequence[float]) -> float:
    """``w.x + b`` with ``params = w + [b]``."""
    total = params[-1]
    for weight, feature in zip(params, x):
        total += weight * feature
    return total


def mse(params: Sequence[float], batch: Batch) -> float:
    """Mean squared error of ``params`` on ``batch``."""
    xs, ys = batch
    return sum((predict(params, x) - y) ** 2 for x, y in zip(xs, ys)) / len(ys)


def loss_and_gradient(params: Sequence[float], batch: Batch) -> tuple[float, list[float]]:
    """MSE and its gradient: ``dL/dw = 2/n * sum(err * x)``, ``dL/db = 2/n * sum(err)``."""
    xs, ys = batch
    n = len(ys)
    grad = [0.0] * len(params)
    loss = 0.0
    for x, y in zip(xs, ys):
        err = predict(params, x) - y
        loss += err * err
        for i, feature in enumerate(x):
            grad[i] += err * feature
        grad[-1] += err
    scale = 2.0 / n
    return loss / n, [g * scale for g in grad]
