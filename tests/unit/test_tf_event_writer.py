"""model.metrics.tf_event_writer writes the bytes real TensorFlow writes, and they read back."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import pytest

from tests.support.event_files import TAGS, training_file
from tui_app.model.metrics.tf_event_writer import event_record, file_version_record
from tui_app.model.metrics.tf_events import EventFileReader

FIXTURES = Path(__file__).parent.parent / "fixtures" / "tf_events"
EXPECTED: dict[str, list[list[object]]] = json.loads((FIXTURES / "expected.json").read_text())


def framed_records(name: str) -> list[bytes]:
    """The file's records, header and checksums included, split by their lengths alone."""
    data = (FIXTURES / name).read_bytes()
    out = []
    at = 0
    while at < len(data):
        (length,) = struct.unpack_from("<Q", data, at)
        out.append(data[at : at + 16 + length])
        at += 16 + length
    assert at == len(data)
    return out


def fixture(folder: str) -> str:
    return next(name for name in EXPECTED if name.startswith(folder + "/"))


@pytest.mark.parametrize(
    ("folder", "tensor"),
    [("tf2_scalar", True), ("keras/train", True), ("tf1_simple", False)],
)
def test_every_record_is_the_one_tensorflow_wrote(folder: str, tensor: bool) -> None:
    """Byte for byte, checksums included: the first record and every scalar event."""
    name = fixture(folder)
    first, *events = framed_records(name)
    rows = EXPECTED[name]
    wall = struct.unpack_from("<d", first, 13)[0]
    assert file_version_record(wall) == first
    assert len(events) == len(rows)
    for record, (tag, step, value, wall_time) in zip(events, rows, strict=True):
        assert isinstance(tag, str)
        assert isinstance(step, int)
        assert isinstance(value, float)
        assert isinstance(wall_time, float)
        assert event_record(step, wall_time, tag, value, tensor=tensor) == record


def test_steps_and_values_at_the_edges_are_written_as_tensorflow_writes_them() -> None:
    """Step 0 left out, 2**40 and -7 as varints, NaN and both infinities."""
    name = fixture("tf2_mixed")
    events = [r for r in framed_records(name) if b"\x0a\x04loss" in r]
    rows = [r for r in EXPECTED[name] if r[0] == "loss"]
    assert len(events) == len(rows) == 7
    for record, (_, step, value, wall_time) in zip(events, rows, strict=True):
        assert isinstance(step, int)
        assert isinstance(value, float)
        assert isinstance(wall_time, float)
        assert event_record(step, wall_time, "loss", value) == record


def test_what_it_writes_reads_back() -> None:
    for tensor in (True, False):
        reader = EventFileReader()
        batch = reader.feed(training_file(3, tags=20, tensor=tensor))
        assert list(batch) == list(TAGS)
        assert reader.corrupt == 0
        steps, walls, values = batch["accuracy"]
        assert steps == [1, 2, 3]
        assert walls == sorted(walls)
        assert values == pytest.approx([math.exp(-s / 5000.0) + 0.01 for s in (1, 2, 3)])


def test_metadata_is_optional_both_ways() -> None:
    data = file_version_record(1.0) + b"".join(
        (
            event_record(1, 2.0, "a", 0.5, tensor=True, metadata=False),
            event_record(1, 2.0, "b", 0.25, tensor=False, metadata=True),
        )
    )
    batch = EventFileReader().feed(data)
    assert batch["a"].values == [0.5]
    assert batch["b"].values == [0.25]


def test_a_number_beyond_float32_is_infinite_as_a_cast_makes_it() -> None:
    data = file_version_record(1.0) + event_record(1, 2.0, "a", -1e300)
    assert EventFileReader().feed(data)["a"].values == [-math.inf]
