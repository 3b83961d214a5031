"""model.metrics.tf_events.EventFileReader: incremental, checked reading of growing event files."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import pytest

from tests.support.event_files import training_file, training_records
from tui_app.model.metrics.tf_event_proto import decode_event
from tui_app.model.metrics.tf_event_records import frame_record, masked_crc32c
from tui_app.model.metrics.tf_event_writer import event_record, file_version_record
from tui_app.model.metrics.tf_events import EventFileReader, ScalarBatch, TagPoints

FIXTURES = Path(__file__).parent.parent / "fixtures" / "tf_events"
EXPECTED: dict[str, list[list[object]]] = json.loads((FIXTURES / "expected.json").read_text())

Point = tuple[str, int, float, bytes]
"""tag, step, wall time, the value's float64 bits (so that NaN equals NaN)."""


def points(batches: list[ScalarBatch]) -> list[Point]:
    """Every point of the batches, tag by tag in file order."""
    out: dict[str, list[Point]] = {}
    for batch in batches:
        for tag, (steps, walls, values) in batch.items():
            assert len(steps) == len(walls) == len(values)
            out.setdefault(tag, []).extend(
                (tag, s, w, struct.pack("<d", v))
                for s, w, v in zip(steps, walls, values, strict=True)
            )
    return [p for tag in sorted(out) for p in out[tag]]


def read(data: bytes, *, common_layouts: bool = True, chunk: int = 0) -> list[Point]:
    """Read the whole of ``data``, in feeds of at most ``chunk`` bytes (0: one feed)."""
    reader = EventFileReader(common_layouts=common_layouts)
    batches = []
    while reader.offset < len(data):
        before = reader.offset
        end = len(data) if not chunk else reader.offset + chunk
        batches.append(reader.feed(data[reader.offset : end]))
        if reader.offset == before and end >= len(data):
            break
        if reader.offset == before:
            chunk *= 2  # a record longer than the chunk: feed more, as a poller would
    return points(batches)


def expected(name: str) -> list[Point]:
    rows = [(str(r[0]), int(str(r[1])), float(str(r[3])), float(str(r[2]))) for r in EXPECTED[name]]
    return sorted(
        ((t, s, w, struct.pack("<d", v)) for t, s, w, v in rows),
        key=lambda p: p[0],  # stable: file order within a tag
    )


@pytest.mark.parametrize("name", sorted(EXPECTED))
@pytest.mark.parametrize("common_layouts", [True, False])
def test_every_scalar_tensorflow_wrote_reads_back(name: str, common_layouts: bool) -> None:
    """Tags, steps, wall times and values (NaN and infinities included), as TensorFlow's own
    reader saw them; images, histograms, text and tensors that are no scalars left out."""
    data = (FIXTURES / name).read_bytes()
    reader = EventFileReader(common_layouts=common_layouts)
    got = points([reader.feed(data)])
    assert got == expected(name)
    assert (reader.offset, reader.corrupt, reader.problem) == (len(data), 0, None)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_file_read_as_it_grows_gives_the_same_points(name: str) -> None:
    """One feed per byte appended, and feeds of every size: the same points as one feed."""
    data = (FIXTURES / name).read_bytes()
    whole = read(data)
    for chunk in (1, 7, 64, 100):
        assert read(data, chunk=chunk) == whole
    reader = EventFileReader()
    batches = []
    for end in range(1, len(data) + 1):
        batches.append(reader.feed(data[reader.offset : end]))
    assert points(batches) == whole
    assert reader.offset == len(data)


def test_the_common_layouts_and_the_general_decoder_agree_on_a_long_file() -> None:
    for tensor in (True, False):
        data = training_file(500, tags=20, tensor=tensor)
        fast = read(data, chunk=1 << 14)
        assert len(fast) == 500 * 20
        assert fast == read(data, common_layouts=False, chunk=1 << 14)


def test_a_torn_last_record_waits_for_its_end() -> None:
    head = training_file(2, tags=3)
    last = event_record(3, 5.0, "loss", 0.5)
    reader = EventFileReader()
    assert len(points([reader.feed(head)])) == 6
    assert reader.offset == len(head)
    for cut in range(1, len(last)):
        batch = reader.feed(last[:cut])
        assert batch == {}
        assert reader.offset == len(head)
    assert reader.feed(last) == {"loss": ([3], [5.0], [0.5])}
    assert reader.offset == len(head) + len(last)
    assert reader.corrupt == 0


def test_a_record_whose_data_does_not_match_its_checksum_is_skipped_and_counted() -> None:
    records = list(training_records(3, tags=2))
    bad = bytearray(records[2])
    bad[-6] ^= 0x01  # a bit of the value: the length still frames the record
    data = file_version_record(1.0) + b"".join([*records[:2], bytes(bad), *records[3:]])
    for common in (True, False):
        reader = EventFileReader(common_layouts=common)
        batch = reader.feed(data)
        assert reader.corrupt == 1
        assert reader.offset == len(data)
        assert batch["loss"].steps == [1, 3]
        assert batch["accuracy"].steps == [1, 2, 3]


def test_a_bad_length_is_resynchronised_past_and_counted_once() -> None:
    records = list(training_records(4, tags=2))
    bad = bytearray(records[3])
    bad[0] ^= 0x40  # the length: the framing is lost
    data = file_version_record(1.0) + b"".join([*records[:3], bytes(bad), *records[4:]])
    reader = EventFileReader()
    batch = reader.feed(data)
    assert reader.corrupt == 1
    assert reader.offset == len(data)
    assert batch["loss"].steps == [1, 2, 3, 4]
    assert batch["accuracy"].steps == [1, 3, 4]


def test_garbage_between_records_costs_one_corrupt_record_even_across_feeds() -> None:
    head = file_version_record(1.0) + event_record(1, 2.0, "loss", 1.0)
    tail = event_record(2, 3.0, "loss", 0.5)
    garbage = bytes(range(256)) * 200 + b"\0" * 30_000
    reader = EventFileReader()
    got = [reader.feed(head + garbage[:1000])]
    assert reader.corrupt == 1
    while reader.offset < len(head) + len(garbage):  # the region goes on, feed after feed
        got.append(reader.feed((head + garbage)[reader.offset : reader.offset + 4096]))
        if reader.offset >= len(head) + len(garbage) - 11:
            break
    got.append(reader.feed((head + garbage + tail)[reader.offset :]))
    assert reader.corrupt == 1
    assert reader.offset == len(head) + len(garbage) + len(tail)
    assert points(got) == points([ScalarBatch(loss=TagPoints([1, 2], [2.0, 3.0], [1.0, 0.5]))])


def test_a_header_that_checks_out_after_garbage_but_is_torn_is_waited_for() -> None:
    """After lost framing, a valid header whose data is not all there may be the record the
    trainer is writing: the reader stops there and finds it whole on the next feed."""
    head = file_version_record(1.0)
    record = event_record(2, 3.0, "loss", 0.5)
    data = head + b"\xff" * 50 + record
    reader = EventFileReader()
    assert reader.feed(data[:-3]) == {}
    assert reader.corrupt == 1
    assert reader.feed(data[reader.offset :]) == {"loss": ([2], [3.0], [0.5])}
    assert reader.corrupt == 1
    assert reader.offset == len(data)


def test_a_file_that_is_not_an_event_file_is_flagged_and_left_alone() -> None:
    reader = EventFileReader()
    text = b"step=1 loss=0.5\nstep=2 loss=0.4\n"
    assert reader.feed(text) == {}
    assert reader.problem == (
        "not a TensorFlow event file: its first record's length checksum does not match"
    )
    assert reader.feed(training_file(2)) == {}  # never read again
    assert reader.offset == 0

    record = bytearray(file_version_record(1.0))
    record[14] ^= 1
    reader = EventFileReader()
    assert reader.feed(bytes(record)) == {}
    assert reader.problem == (
        "not a TensorFlow event file: its first record's checksum does not match"
    )


def test_a_new_file_is_not_judged_before_its_first_record_is_whole() -> None:
    data = training_file(1, tags=1)
    reader = EventFileReader()
    for end in range(0, 40):
        assert reader.feed(data[:end]) == {}
        assert reader.problem is None
        assert reader.offset == 0


def test_the_first_metadata_of_a_tag_decides_for_its_later_events_in_later_feeds() -> None:
    """An image tag (metadata naming "images" on its first event only, as TF 1's FileWriter
    writes) with later scalar-looking events: never scalars, even in a later feed."""
    images = b"\x4a\x0a\x0a\x08\x0a\x06images"
    value = b"\x0a\x03pic\x15" + struct.pack("<f", 1.0)
    first = b"\x09" + struct.pack("<d", 2.0) + b"\x10\x01\x2a" + bytes([len(value) + 14])
    first += b"\x0a" + bytes([len(value) + 12]) + value + images
    reader = EventFileReader()
    head = file_version_record(1.0) + frame_record(first) + event_record(1, 2.0, "loss", 1.0)
    assert list(reader.feed(head)) == ["loss"]
    later = event_record(2, 3.0, "pic", 2.0) + event_record(2, 3.0, "pic", 3.0, metadata=False)
    assert reader.feed(later) == {}
    assert reader.corrupt == 0


def test_a_tag_is_a_scalar_until_its_first_metadata_says_otherwise() -> None:
    data = file_version_record(1.0) + b"".join(
        (
            event_record(1, 2.0, "x", 1.0, tensor=False),
            event_record(2, 2.0, "x", 2.0, metadata=True),
            event_record(3, 2.0, "x", 3.0, metadata=False),
        )
    )
    for common in (True, False):
        assert EventFileReader(common_layouts=common).feed(data)["x"].steps == [1, 2, 3]


def test_values_that_are_not_finite_are_kept() -> None:
    data = file_version_record(1.0) + b"".join(
        event_record(s, 2.0, "loss", v, tensor=t)
        for s, v in enumerate((math.nan, math.inf, -math.inf, 1.0))
        for t in (True, False)
    )
    values = EventFileReader().feed(data)["loss"].values
    assert math.isnan(values[0]) and math.isnan(values[1])
    assert values[2:] == [math.inf, math.inf, -math.inf, -math.inf, 1.0, 1.0]


def test_an_event_without_a_wall_time_or_with_two_values_is_read() -> None:
    """Layouts the common path does not take: the general decoder reads them in place."""
    two = b"\x0a\x08\x0a\x01a\x15" + struct.pack("<f", 1.0)
    two += b"\x0a\x08\x0a\x01b\x15" + struct.pack("<f", 2.0)
    event = b"\x10\x05\x2a" + bytes([len(two)]) + two
    data = file_version_record(1.0) + b"".join(
        (
            event_record(4, 1.5, "a", 0.5),
            frame_record(event),
            event_record(6, 1.5, "a", 0.25),
        )
    )
    batch = EventFileReader().feed(data)
    assert batch["a"] == ([4, 5, 6], [1.5, 0.0, 1.5], [0.5, 1.0, 0.25])
    assert batch["b"] == ([5], [0.0], [2.0])
    assert batch.point_count == 4


def test_a_big_garbage_file_after_a_good_start_is_one_corrupt_region() -> None:
    head = file_version_record(1.0)
    garbage = bytes(range(256)) * 4096 + b"\0" * (1 << 20)
    reader = EventFileReader()
    assert reader.feed(head + garbage) == {}
    assert reader.corrupt == 1
    assert reader.offset == len(head) + len(garbage) - 11  # a header may start in the last 11


def test_a_header_checksum_that_holds_by_chance_does_not_stall_the_reader() -> None:
    """A header inside garbage whose length checksum holds but whose length runs past the
    end: real records after it still win."""
    head = file_version_record(1.0)
    length = struct.pack("<Q", 1 << 30)
    fake = length + struct.pack("<I", masked_crc32c(length))
    tail = event_record(2, 3.0, "loss", 0.5)
    reader = EventFileReader()
    assert reader.feed(head + b"\xee" * 20 + fake + b"\xee" * 20 + tail) == {
        "loss": ([2], [3.0], [0.5])
    }
    assert reader.corrupt == 1


def test_a_record_bigger_than_a_feed_says_how_much_to_read() -> None:
    """A graph (Event.graph_def, field 4) of 3 MB between scalars: a poller that reads 1 MiB
    at a time learns from ``wanted`` to read the whole record."""
    graph = b"\x22\xc3\x8d\xb7\x01" + bytes(3_000_003)  # field 4, length 3,000,003
    big = frame_record(b"\x09" + struct.pack("<d", 2.0) + graph)
    assert decode_event(big[12:-4]) == (0, 2.0, [])
    data = training_file(1, tags=2) + big + event_record(2, 3.0, "loss", 0.5)
    reader = EventFileReader()
    got = [reader.feed(data[: 1 << 20])]
    assert reader.offset == len(training_file(1, tags=2))
    assert reader.wanted == len(big)
    got.append(reader.feed(data[reader.offset : reader.offset + (1 << 20)]))
    assert reader.wanted == len(big)
    got.append(reader.feed(data[reader.offset : reader.offset + reader.wanted]))
    assert reader.offset == len(data) - len(event_record(2, 3.0, "loss", 0.5))
    assert reader.wanted == 12
    got.append(reader.feed(data[reader.offset :]))
    assert reader.offset == len(data)
    assert [p[:2] for p in points(got)] == [("accuracy", 1), ("loss", 1), ("loss", 2)]


def test_a_new_file_says_how_much_of_it_is_needed() -> None:
    head = file_version_record(1.0)
    reader = EventFileReader()
    reader.feed(head[:5])
    assert reader.wanted == 12
    reader.feed(head[:20])
    assert reader.wanted == len(head)
    reader.feed(head)
    assert (reader.offset, reader.wanted) == (len(head), 12)
