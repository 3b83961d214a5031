"""The event file reader on hostile input: random bytes, truncations, bit flips, splices.

It never raises, never returns a point that is not in the file, and reads the same points
however the file is cut into feeds and whichever decoder path it takes.
"""

from __future__ import annotations

import struct
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.event_files import training_file
from tui_app.model.metrics.tf_event_proto import decode_event
from tui_app.model.metrics.tf_events import EventFileReader, ScalarBatch, records

FIXTURES = Path(__file__).parent.parent / "fixtures" / "tf_events"
FILES: dict[str, bytes] = {
    str(p.relative_to(FIXTURES)): p.read_bytes()
    for p in sorted(FIXTURES.glob("**/events.out.tfevents.*"))
}
FILES["generated/tensor"] = training_file(6, tags=5)
FILES["generated/simple"] = training_file(6, tags=5, tensor=False)

Point = tuple[str, int, float, bytes]

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def points(batches: list[ScalarBatch]) -> list[Point]:
    out: list[Point] = []
    for batch in batches:
        for tag, (steps, walls, values) in batch.items():
            out += [
                (tag, s, w, struct.pack("<d", v))
                for s, w, v in zip(steps, walls, values, strict=True)
            ]
    return sorted(out)


def read(data: bytes, cuts: list[int] | None = None, common_layouts: bool = True) -> list[Point]:
    """All of ``data``, fed up to each of ``cuts`` in turn, then to its end."""
    reader = EventFileReader(common_layouts=common_layouts)
    batches = []
    for end in [*sorted(cuts or []), len(data)]:
        if end > reader.offset:
            batches.append(reader.feed(data[reader.offset : end]))
    assert reader.offset <= len(data)
    assert reader.corrupt >= 0
    return points(batches)


def every_number(data: bytes) -> set[Point]:
    """Every scalar-valued summary value in an intact file, whatever its tag's plugin: when a
    flip destroys the record that named a tag's plugin, that tag's later values are taken for
    scalars (they are in the file, but TensorBoard would not plot them)."""
    found: set[Point] = set()
    for record in records(data):
        event = decode_event(record)
        assert event is not None
        found |= {
            (v.tag, event.step, event.wall_time, struct.pack("<d", v.value))
            for v in event.values
            if v.value is not None
        }
    return found


ORIGINAL = {name: read(data) for name, data in FILES.items()}
IN_FILE = {name: every_number(data) for name, data in FILES.items()}
names = st.sampled_from(sorted(FILES))


@SETTINGS
@given(st.binary(max_size=4096))
def test_random_bytes_read_as_nothing(data: bytes) -> None:
    assert read(data) == []
    assert read(data, common_layouts=False) == []


@SETTINGS
@given(names, st.binary(min_size=1, max_size=2048))
def test_random_bytes_after_a_good_start_cost_nothing_that_was_there(
    name: str, garbage: bytes
) -> None:
    data = FILES[name]
    got = read(data + garbage)
    assert got == ORIGINAL[name]


@SETTINGS
@given(names, st.data())
def test_a_truncated_file_reads_a_part_of_itself(name: str, data: st.DataObject) -> None:
    whole = FILES[name]
    cut = data.draw(st.integers(0, len(whole)))
    reader = EventFileReader()
    got = points([reader.feed(whole[:cut])])
    assert set(got) <= set(ORIGINAL[name])
    assert reader.corrupt == 0
    assert reader.problem is None


@SETTINGS
@given(names, st.data())
def test_bit_flips_never_make_up_a_point(name: str, data: st.DataObject) -> None:
    mutated = bytearray(FILES[name])
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(mutated) - 1))
        mutated[at] ^= 1 << data.draw(st.integers(0, 7))
    fast = read(bytes(mutated))
    assert set(fast) <= IN_FILE[name]
    assert fast == read(bytes(mutated), common_layouts=False)


@SETTINGS
@given(names, st.lists(st.integers(0, 1 << 14), max_size=12))
def test_any_feeds_read_what_one_feed_reads(name: str, cuts: list[int]) -> None:
    data = FILES[name]
    assert read(data, [c % (len(data) + 1) for c in cuts]) == ORIGINAL[name]


@SETTINGS
@given(names, st.data(), st.binary(min_size=1, max_size=600))
def test_garbage_spliced_between_records_loses_nothing(
    name: str, data: st.DataObject, garbage: bytes
) -> None:
    whole = FILES[name]
    boundaries = []
    at = 0
    while at < len(whole):
        at += 16 + struct.unpack_from("<Q", whole, at)[0]
        boundaries.append(at)
    at = data.draw(st.sampled_from(boundaries))  # never before the first record
    spliced = whole[:at] + garbage + whole[at:]
    reader = EventFileReader()
    got = points([reader.feed(spliced)])
    if at < len(whole):
        assert got == ORIGINAL[name]
        assert reader.corrupt == 1
    else:  # garbage at the end may yet be a record being written: nothing to count yet
        assert got == ORIGINAL[name]
        assert reader.corrupt <= 1
