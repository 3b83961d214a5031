"""Scalars from TensorFlow event files, read without TensorFlow.

AI Platform Training read a tuning trial's metric two ways: from the cloudml-hypertune file, or,
when the trainer wrote none, from the TensorFlow summary events it wrote under its output
directory (the ``hyperparameterMetricTag`` as a summary tag; Estimators write
``training/hptuning/metric`` there on their own). The local service does the same when a trial
ends without a hypertune report, so this module decodes just enough of the format to find one
tag's values. Installing TensorFlow for that would cost a gigabyte; the format is small and
stable.

The format, as TensorFlow writes it (``tensorflow/core/lib/io/record_writer.cc`` and
``tensorflow/core/util/event.proto``):

- A file is a sequence of TFRecords: ``uint64 length`` (little endian), ``uint32`` masked CRC32C
  of the length, ``length`` bytes of data, ``uint32`` masked CRC32C of the data. The CRCs are
  not checked here (a torn or corrupt record ends the read: a trainer may still be writing the
  last one, and a wrong length is caught by the bounds and by the protobuf decoding).
- Each record is an ``Event`` protobuf: ``step`` (field 2, int64) and ``summary`` (field 5).
  A ``Summary`` is repeated ``value`` (field 1); a ``Summary.Value`` has ``tag`` (field 1) and
  either ``simple_value`` (field 2, float: TF 1.x, Estimators, ``tf.compat.v1.summary``) or
  ``tensor`` (field 8, a ``TensorProto``: TF 2's ``tf.summary.scalar``).
- A scalar ``TensorProto`` carries ``dtype`` (field 1: 1 float, 2 double, 3 int32, 9 int64,
  19 half) and its value either in ``tensor_content`` (field 4, raw little-endian bytes) or in
  the typed repeated field (5 float, 6 double, 7 int32, 10 int64), packed or not.

Nothing here raises on a malformed file: what cannot be read is skipped.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterator

EVENT_FILE_MARKER = "tfevents"
"""Event files are named ``events.out.tfevents.<time>.<host>...``; this part is always there."""

_DT_FLOAT, _DT_DOUBLE, _DT_INT32, _DT_INT64, _DT_HALF = 1, 2, 3, 9, 19
_RAW_FORMATS = {_DT_FLOAT: "<f", _DT_DOUBLE: "<d", _DT_INT32: "<i", _DT_INT64: "<q", _DT_HALF: "<e"}

# Wire types of the protobuf encoding.
_VARINT, _FIXED64, _LENGTH, _FIXED32 = 0, 1, 2, 5


def is_event_file(name: str) -> bool:
    """Whether an object or file name is a TensorFlow event file (by TensorFlow's naming)."""
    base = name.rsplit("/", 1)[-1]
    return base.startswith("events.out.") and EVENT_FILE_MARKER in base


def scalar_series(data: bytes, tag: str) -> list[tuple[int, float]]:
    """Every ``(step, value)`` written for ``tag`` in one event file, in file order."""
    out: list[tuple[int, float]] = []
    for record in records(data):
        step = 0
        summary: bytes | None = None
        for number, _, value in _fields(record):
            if number == 2 and isinstance(value, int):
                step = _signed64(value)
            elif number == 5 and isinstance(value, bytes):
                summary = value
        if summary is None:
            continue
        for found in _summary_values(summary, tag):
            if math.isfinite(found):
                out.append((step, found))
    return out


def records(data: bytes) -> Iterator[bytes]:
    """The data of each complete TFRecord in ``data`` (a torn last record is left out)."""
    at = 0
    end = len(data)
    while at + 12 <= end:
        (length,) = struct.unpack_from("<Q", data, at)
        start = at + 12
        stop = start + length
        if stop + 4 > end:
            return
        yield data[start:stop]
        at = stop + 4


def _summary_values(summary: bytes, tag: str) -> Iterator[float]:
    for number, _, value in _fields(summary):
        if number != 1 or not isinstance(value, bytes):
            continue
        name: str | None = None
        scalar: float | None = None
        for field, wire, item in _fields(value):
            if field == 1 and isinstance(item, bytes):
                name = item.decode("utf-8", "replace")
            elif field == 2 and wire == _FIXED32 and isinstance(item, bytes):
                scalar = struct.unpack("<f", item)[0]
            elif field == 8 and isinstance(item, bytes):
                scalar = _tensor_scalar(item)
        if name == tag and scalar is not None:
            yield scalar


def _tensor_scalar(tensor: bytes) -> float | None:
    """The first element of a numeric ``TensorProto`` (a scalar summary has one)."""
    dtype = _DT_FLOAT
    content: bytes | None = None
    typed: dict[int, list[tuple[int, int | bytes]]] = {}
    for number, wire, value in _fields(tensor):
        if number == 1 and isinstance(value, int):
            dtype = value
        elif number == 4 and isinstance(value, bytes):
            content = value
        elif number in (5, 6, 7, 10):
            typed.setdefault(number, []).append((wire, value))
    fmt = _RAW_FORMATS.get(dtype)
    if content and fmt and len(content) >= struct.calcsize(fmt):
        return float(struct.unpack_from(fmt, content)[0])
    for number, values in typed.items():
        for wire, value in values:
            number_value = _typed_value(number, wire, value)
            if number_value is not None:
                return number_value
    return None


def _typed_value(number: int, wire: int, value: int | bytes) -> float | None:
    if number in (5, 6):  # float_val / double_val: fixed width, packed or one per field
        fmt = "<f" if number == 5 else "<d"
        if isinstance(value, bytes) and len(value) >= struct.calcsize(fmt):
            return float(struct.unpack_from(fmt, value)[0])
        return None
    if wire == _LENGTH and isinstance(value, bytes):  # packed int32_val / int64_val
        first = _varint(value, 0)
        return None if first is None else float(_signed64(first[0]))
    if isinstance(value, int):
        return float(_signed64(value))
    return None


def _fields(message: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """``(field number, wire type, value)`` of each field; stops at the first malformed one.
    Varints come as ints, everything else as its raw bytes."""
    at = 0
    end = len(message)
    while at < end:
        key = _varint(message, at)
        if key is None:
            return
        tag, at = key
        number, wire = tag >> 3, tag & 7
        if wire == _VARINT:
            item = _varint(message, at)
            if item is None:
                return
            value, at = item
            yield number, wire, value
        elif wire in (_FIXED64, _FIXED32):
            size = 8 if wire == _FIXED64 else 4
            if at + size > end:
                return
            yield number, wire, message[at : at + size]
            at += size
        elif wire == _LENGTH:
            item = _varint(message, at)
            if item is None:
                return
            length, at = item
            if at + length > end:
                return
            yield number, wire, message[at : at + length]
            at += length
        else:  # groups (3, 4) are not used by these messages
            return


def _varint(data: bytes, at: int) -> tuple[int, int] | None:
    value = 0
    shift = 0
    while at < len(data) and shift < 70:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7
    return None


def _signed64(value: int) -> int:
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= 1 << 63 else value
