"""tui_app.model.metrics.tf_events reads what real TensorFlow wrote, as TensorFlow reads it back."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import pytest

from tui_app.model.metrics.tf_events import is_event_file, records, scalar_series

FIXTURES = Path(__file__).parent.parent / "fixtures" / "tf_events"
EXPECTED: dict[str, list[list[object]]] = json.loads((FIXTURES / "expected.json").read_text())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_scalar_tensorflow_wrote_reads_back(name: str) -> None:
    data = (FIXTURES / name).read_bytes()
    rows = EXPECTED[name]
    for tag in {str(r[0]) for r in rows}:
        # A metric that is not finite is no objective: scalar_series leaves it out.
        want = [
            (int(str(r[1])), float(str(r[2])))
            for r in rows
            if r[0] == tag and math.isfinite(float(str(r[2])))
        ]
        got = scalar_series(data, tag)
        assert [s for s, _ in got] == [s for s, _ in want]
        assert [v for _, v in got] == pytest.approx([v for _, v in want], rel=1e-6)


def test_the_default_metric_tag_from_tf2_summaries() -> None:
    data = next((FIXTURES / "tf2_scalar").glob("events.out.tfevents.*")).read_bytes()
    step, value = scalar_series(data, "training/hptuning/metric")[-1]
    assert step == 10
    assert value == pytest.approx(0.6)
    assert scalar_series(data, "no/such/tag") == []


def test_a_torn_last_record_is_left_out() -> None:
    data = next((FIXTURES / "tf1_simple").glob("events.out.tfevents.*")).read_bytes()
    whole = scalar_series(data, "accuracy")
    assert len(whole) == 2
    for cut in range(1, 20):
        assert scalar_series(data[:-cut], "accuracy") == whole[:1]


def test_values_that_are_not_finite_are_no_metric() -> None:
    data = next((FIXTURES / "tf2_mixed").glob("events.out.tfevents.*")).read_bytes()
    assert [step for step, _ in scalar_series(data, "loss")] == [0, 4, 2**40, -7]


def test_garbage_reads_as_nothing() -> None:
    assert scalar_series(b"", "x") == []
    assert scalar_series(b"\xff" * 64, "x") == []
    huge = struct.pack("<Q", 1 << 60) + b"\0" * 20
    assert list(records(huge)) == []


def test_event_file_names() -> None:
    assert is_event_file("gs://b/job/1/events.out.tfevents.1795587137.vm.10401.0.v2")
    assert is_event_file("eval/events.out.tfevents.1.host")
    assert not is_event_file("gs://b/job/1/checkpoint")
    assert not is_event_file("gs://b/events.out.tfevents.x/model.ckpt")
