"""The common layouts of scalar events, decoded for a whole feed at once with numpy.

Almost every record of a training job's event file is one scalar event written the same way,
byte for byte apart from its numbers and tag (compare the fixtures under
``tests/fixtures/tf_events``, written by real TensorFlow)::

    09 <wall_time: 8>  [10 <step: varint>]  2a L1  0a L2  0a L3 <tag: L3>  VALUE  [METADATA]

where the step is absent when it is 0 (proto3 leaves defaults out), ``L1 = L2 + 2`` and VALUE
is one of

- ``42 0a 08 01 12 00 22 04 <float32>``: a ``tensor`` of dtype float, empty shape, 4 bytes of
  ``tensor_content`` (``tf.summary.scalar`` in TF 2, Keras' TensorBoard callback);
- ``42 08 08 01 2a 04 <float32>``: a ``tensor`` of dtype float with one packed ``float_val``
  (PyTorch's ``add_scalar(..., new_style=True)``);
- ``15 <float32>``: a ``simple_value`` (TF 1, Estimators, PyTorch, tensorboardX);

and METADATA, when there, is ``4a 0b 0a 09 0a 07 "scalars"``. Checking every one of those bytes
(and that the lengths add up to the record's) for all records in a few numpy operations costs
far less than decoding each record in Python; a record that differs anywhere is left to the
general decoder (``tf_event_proto``), which reads the same values from the same bytes (the
tests hold the two to that on every fixture and on random files).

Single-byte lengths limit this path to tags of up to about 110 bytes; longer ones take the
general path.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tui_app.model.metrics.tf_event_proto import tag_text
from tui_app.model.metrics.tf_event_records import HEADER_BYTES

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
Bools = npt.NDArray[np.bool_]

_TF2_VALUE = np.uint64(int.from_bytes(bytes.fromhex("420a080112002204"), "little"))
_PACKED_VALUE = np.uint64(int.from_bytes(bytes.fromhex("420808012a04"), "little"))
_SIX_BYTES = np.uint64((1 << 48) - 1)
_META_HEAD = np.uint64(int.from_bytes(bytes.fromhex("4a0b0a090a077363"), "little"))
_META_TAIL = np.uint64(int.from_bytes(b"\x07scalars", "little"))
_METADATA_BYTES = 13
_SMALLEST = 20
"""wall time 9, summary, value and tag headers 6, an empty tag, a simple value 5."""

_PADDING = 16
_ALL_BITS = np.uint64((1 << 64) - 1)
_HASH_FACTOR = np.uint64(0x9E3779B97F4A7C15)
_VARINT_BYTES = np.arange(10, dtype=np.int64)
_VARINT_SHIFTS = (7 * _VARINT_BYTES).astype(np.uint64)


@dataclass(slots=True)
class CommonEvents:
    """The records of a feed in the common layouts, as columns; the rest, by index."""

    records: Ints
    """Index (into the feed's records) of each record decoded here, ascending."""
    tag_ids: Ints
    """Index into :attr:`tags` of each record's tag."""
    tags: list[str]
    scalars_metadata: Bools
    """Whether the record carries metadata naming the "scalars" plugin (else none at all)."""
    steps: Ints
    wall_times: Floats
    values: Floats
    others: Ints
    """Index of each record left to the general decoder, ascending."""


def decode_common(data: bytes, starts: Ints, lengths: Ints) -> CommonEvents:
    """Decode the records (header offsets ``starts``, data ``lengths``) that are in a common
    layout. The records must be whole and their checksums checked."""
    size = len(data)
    # Padded, so that a word or a ten-byte varint read near the end stays in the buffer (what
    # it reads there belongs to no record, and the checks below reject it).
    padded = data + bytes(_PADDING)
    raw = np.frombuffer(padded, dtype=np.uint8)
    words = np.ndarray((size + _PADDING - 7,), dtype="<u8", buffer=padded, strides=(1,))
    top = size - 1

    def byte(at: Ints) -> npt.NDArray[np.uint8]:
        return raw[np.minimum(at, top)]

    def word(at: Ints) -> npt.NDArray[np.uint64]:
        return words[np.minimum(at, top)]

    begin = starts + HEADER_BYTES
    end = begin + lengths
    ok = (lengths >= _SMALLEST) & (byte(begin) == 0x09)
    has_step = byte(begin + 9) == 0x10
    with_step = np.flatnonzero(has_step)
    step_values, step_bytes, step_ends = _varints(raw, begin[with_step] + 10)
    ok[with_step] &= step_ends
    steps = np.zeros(len(starts), dtype=np.int64)
    steps[with_step] = step_values
    summary = begin + 9
    summary[with_step] += 1 + step_bytes
    ok &= byte(summary) == 0x2A
    outer = byte(summary + 1).astype(np.int64)
    ok &= (outer < 0x80) & (summary + 2 + outer == end)
    ok &= byte(summary + 2) == 0x0A
    inner = byte(summary + 3).astype(np.int64)
    ok &= (inner < 0x80) & (summary + 4 + inner == end)
    ok &= byte(summary + 4) == 0x0A
    tag_length = byte(summary + 5).astype(np.int64)
    ok &= tag_length < 0x80
    tag_start = summary + 6
    value = tag_start + tag_length
    head = word(value)
    tf2 = head == _TF2_VALUE
    packed = (head & _SIX_BYTES) == _PACKED_VALUE
    simple = byte(value) == 0x15
    ok &= tf2 | packed | simple
    number_at = np.where(tf2, value + 8, np.where(packed, value + 6, value + 1))
    after = number_at + 4
    rest = end - after
    metadata = (
        (rest == _METADATA_BYTES)
        & (word(after) == _META_HEAD)
        & (word(after + _METADATA_BYTES - 8) == _META_TAIL)
    )
    ok &= (rest == 0) | metadata

    records = np.flatnonzero(ok)
    others = np.flatnonzero(~ok)
    floats = np.ndarray((size + _PADDING - 3,), dtype="<f4", buffer=padded, strides=(1,))
    doubles = np.ndarray((size + _PADDING - 7,), dtype="<f8", buffer=padded, strides=(1,))
    tag_ids, tags = _tag_ids(data, words, tag_start[records], tag_length[records])
    return CommonEvents(
        records=records,
        tag_ids=tag_ids,
        tags=tags,
        scalars_metadata=np.asarray(metadata[records]),
        steps=np.asarray(steps[records]),
        wall_times=doubles[begin[records] + 1].astype(np.float64),
        values=floats[number_at[records]].astype(np.float64),
        others=others,
    )


def _varints(raw: npt.NDArray[np.uint8], at: Ints) -> tuple[Ints, Ints, Bools]:
    """The int64 varint at each offset, its length in bytes, and whether it ends within ten
    bytes (as a protobuf parser reads it: the bits past 64 are dropped). Steps are small, so
    the loop over byte positions stops as soon as every varint has ended."""
    values = np.zeros(len(at), dtype=np.uint64)
    count = np.zeros(len(at), dtype=np.int64)
    done = np.zeros(len(at), dtype=np.bool_)
    for position in range(10):
        if done.all():
            break
        grid = raw[at + position]
        going = ~done
        values |= np.where(going, (grid & 0x7F).astype(np.uint64), 0) << _VARINT_SHIFTS[position]
        count += going
        done |= grid < 0x80
    return values.view(np.int64), count, done


def _tag_ids(
    data: bytes, words: npt.NDArray[np.uint64], starts: Ints, lengths: Ints
) -> tuple[Ints, list[str]]:
    """Each record's tag as an index into the list of distinct tags.

    Slicing each record's tag in Python would cost more than all the rest of this path, so the
    tags are told apart by a hash of their 8-byte words, and each record's words are then
    compared with those of the first record of its hash (so a hash collision cannot merge two
    tags: it sends the feed to :func:`_sliced_tag_ids`)."""
    if len(starts) == 0:
        return _no_ints(), []
    hashes = lengths.astype(np.uint64)
    columns: list[npt.NDArray[np.uint64]] = []
    for offset in range(0, int(lengths.max()), 8):
        left = np.clip(lengths - offset, 0, 8).astype(np.uint64)
        keep = np.where(left == 8, _ALL_BITS, (np.uint64(1) << (left * np.uint64(8))) - 1)
        column = words[starts + offset] & keep
        columns.append(column)
        hashes = hashes * _HASH_FACTOR + column
    _, first, inverse = np.unique(hashes, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    same = lengths == lengths[first][inverse]
    for column in columns:
        same &= column == column[first][inverse]
    if not same.all():
        return _sliced_tag_ids(data, starts, starts + lengths)
    # Number the tags in the order they first appear (np.unique sorted them by hash).
    by_appearance = np.argsort(first)
    first = first[by_appearance]
    names: dict[str, int] = {}
    remap = np.empty(len(first), dtype=np.int64)
    remap[by_appearance] = [
        names.setdefault(tag_text(data[a : a + n]), len(names))
        for a, n in zip(starts[first].tolist(), lengths[first].tolist(), strict=True)
    ]
    return remap[inverse], list(names)


def _sliced_tag_ids(data: bytes, starts: Ints, stops: Ints) -> tuple[Ints, list[str]]:
    keys: dict[bytes, int] = {}
    ids = [
        keys.setdefault(data[a:b], len(keys))
        for a, b in zip(starts.tolist(), stops.tolist(), strict=True)
    ]
    names: dict[str, int] = {}
    remap = [names.setdefault(tag_text(key), len(names)) for key in keys]
    return np.array(remap, dtype=np.int64)[np.array(ids, dtype=np.int64)], list(names)


def _no_ints() -> Ints:
    return np.zeros(0, dtype=np.int64)
