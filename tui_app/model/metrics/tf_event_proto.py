"""The general decoder of one TensorFlow ``Event`` record: every layout, one record at a time.

What is read (``tensorflow/core/util/event.proto``, ``summary.proto``, ``tensor.proto``):

- ``Event``: ``wall_time`` (1, double), ``step`` (2, int64), ``summary`` (5).
- ``Summary``: repeated ``value`` (1). A ``Summary.Value``: ``tag`` (1), ``simple_value``
  (2, float: TF 1.x, Estimators, PyTorch's and tensorboardX's ``add_scalar``), ``tensor``
  (8, ``TensorProto``: TF 2's ``tf.summary.scalar``), ``metadata`` (9) whose ``plugin_data``
  (1) names the plugin (1) that owns the tag. Images (4), histograms (5), audio (6) and the
  obsolete histogram (3) are other members of the same ``oneof``: no scalar.
- ``TensorProto``: ``dtype`` (1), ``tensor_shape`` (2) with repeated ``dim`` (2) each of
  ``size`` (1), ``tensor_content`` (4, raw little-endian bytes) or one typed repeated field
  (5 float, 6 double, 7 int32 and narrower ints, 10 int64, 13 half and bfloat16 as int32 bits,
  16 uint32, 17 uint64), packed or not.

A tensor is a scalar when its dtype is numeric and it holds exactly one element (rank 0, or
every dimension 1): TF 2 histograms are float tensors of shape ``[k, 3]`` and must not pass.

Protobuf's merge rules are kept where writers rely on them: a message field that appears twice
is merged (its bytes concatenated, then parsed), a scalar field takes its last value, and the
last member of a ``oneof`` wins. A record that is not a well-formed protobuf yields nothing.
"""

from __future__ import annotations

import functools
import struct
from typing import NamedTuple

_VARINT, _FIXED64, _LENGTH, _FIXED32 = 0, 1, 2, 5

_DT_FLOAT, _DT_DOUBLE, _DT_INT32, _DT_UINT8, _DT_INT16, _DT_INT8 = 1, 2, 3, 4, 5, 6
_DT_INT64, _DT_BFLOAT16, _DT_UINT16, _DT_HALF, _DT_UINT32, _DT_UINT64 = 9, 14, 17, 19, 22, 23

_CONTENT_FORMATS = {
    _DT_FLOAT: "<f",
    _DT_DOUBLE: "<d",
    _DT_INT32: "<i",
    _DT_UINT8: "<B",
    _DT_INT16: "<h",
    _DT_INT8: "<b",
    _DT_INT64: "<q",
    _DT_UINT16: "<H",
    _DT_HALF: "<e",
    _DT_UINT32: "<I",
    _DT_UINT64: "<Q",
}
"""How ``tensor_content`` holds one element of each numeric dtype (bfloat16 is handled apart:
struct has no format for it)."""

_TYPED_FIELDS = {
    _DT_FLOAT: 5,
    _DT_DOUBLE: 6,
    _DT_INT32: 7,
    _DT_UINT8: 7,
    _DT_INT16: 7,
    _DT_INT8: 7,
    _DT_UINT16: 7,
    _DT_INT64: 10,
    _DT_HALF: 13,
    _DT_BFLOAT16: 13,
    _DT_UINT32: 16,
    _DT_UINT64: 17,
}
"""The repeated field that holds a numeric dtype's values when ``tensor_content`` is empty."""

_SIMPLE, _TENSOR, _OTHER = 1, 2, 3
_VALUE_KINDS = {2: _SIMPLE, 8: _TENSOR, 3: _OTHER, 4: _OTHER, 5: _OTHER, 6: _OTHER}
"""``Summary.Value``'s ``oneof value`` members, by field number."""

Field = tuple[int, int, int | bytes]


class ValueEntry(NamedTuple):
    """One ``Summary.Value`` of an event."""

    tag: str
    plugin: str | None
    """The plugin its metadata names ("" when the metadata names none); ``None``: no metadata."""
    value: float | None
    """Its scalar, or ``None`` when it holds none (an image, a histogram, a string)."""


class DecodedEvent(NamedTuple):
    step: int
    wall_time: float
    values: list[ValueEntry]


def decode_event(record: bytes) -> DecodedEvent | None:
    """The step, wall time and summary values of one record; ``None`` if it is not an Event."""
    fields = _fields(record)
    if fields is None:
        return None
    step = 0
    wall_time = 0.0
    summaries: list[bytes] = []
    for number, wire, item in fields:
        if number == 1 and wire == _FIXED64 and isinstance(item, bytes):
            wall_time = struct.unpack("<d", item)[0]
        elif number == 2 and wire == _VARINT and isinstance(item, int):
            step = _signed64(item)
        elif number == 5 and wire == _LENGTH and isinstance(item, bytes):
            summaries.append(item)
    values: list[ValueEntry] = []
    if summaries:
        summary = _fields(b"".join(summaries))
        if summary is None:
            return None
        for number, wire, item in summary:
            if number == 1 and wire == _LENGTH and isinstance(item, bytes):
                entry = _value(item)
                if entry is None:
                    return None
                values.append(entry)
    return DecodedEvent(step, wall_time, values)


def tag_text(raw: bytes) -> str:
    """A tag as text. Protobuf strings are UTF-8; a writer that broke that still gets a name."""
    return raw.decode("utf-8", "replace")


@functools.lru_cache(maxsize=1024)
def _plugin_name(metadata: bytes) -> str:
    """The plugin a ``SummaryMetadata`` names ("" for none). Cached: a tag's metadata is the
    same bytes every time it is written."""
    name = ""
    for number, wire, item in _fields(metadata) or ():
        if number == 1 and wire == _LENGTH and isinstance(item, bytes):
            for field, kind, value in _fields(item) or ():
                if field == 1 and kind == _LENGTH and isinstance(value, bytes):
                    name = tag_text(value)
    return name


def _value(message: bytes) -> ValueEntry | None:
    fields = _fields(message)
    if fields is None:
        return None
    tag = ""
    kind = 0
    simple = 0.0
    tensor: list[bytes] = []
    metadata: list[bytes] | None = None
    for number, wire, item in fields:
        if number == 1 and wire == _LENGTH and isinstance(item, bytes):
            tag = tag_text(item)
        elif number == 9 and wire == _LENGTH and isinstance(item, bytes):
            metadata = [*(metadata or ()), item]
        elif number in _VALUE_KINDS:
            if number == 2:
                if wire != _FIXED32 or not isinstance(item, bytes):
                    continue
                simple = struct.unpack("<f", item)[0]
            elif wire != _LENGTH:
                continue
            elif number == 8 and isinstance(item, bytes):
                if kind != _TENSOR:
                    tensor = []
                tensor.append(item)
            kind = _VALUE_KINDS[number]
    plugin = None if metadata is None else _plugin_name(b"".join(metadata))
    value: float | None = None
    if kind == _SIMPLE:
        value = simple
    elif kind == _TENSOR:
        value = tensor_scalar(b"".join(tensor))
    return ValueEntry(tag, plugin, value)


def tensor_scalar(tensor: bytes) -> float | None:
    """The value of a numeric ``TensorProto`` of exactly one element, else ``None``."""
    fields = _fields(tensor)
    if fields is None:
        return None
    dtype = 0
    shape: list[bytes] = []
    content = b""
    typed: list[tuple[int, int, int | bytes]] = []
    for number, wire, item in fields:
        if number == 1 and wire == _VARINT and isinstance(item, int):
            dtype = item
        elif number == 2 and wire == _LENGTH and isinstance(item, bytes):
            shape.append(item)
        elif number == 4 and wire == _LENGTH and isinstance(item, bytes):
            content = item
        else:
            typed.append((number, wire, item))
    field = _TYPED_FIELDS.get(dtype)
    if field is None or not _one_element(b"".join(shape)):
        return None
    if content:
        return _content_scalar(dtype, content)
    values: list[float] = []
    for number, wire, item in typed:
        if number == field:
            found = _typed_values(field, wire, item)
            if found is None:
                return None
            values += found
    if len(values) != 1:
        return None
    if dtype == _DT_HALF:
        return float(struct.unpack("<e", struct.pack("<H", int(values[0]) & 0xFFFF))[0])
    if dtype == _DT_BFLOAT16:
        return float(struct.unpack("<f", struct.pack("<I", (int(values[0]) & 0xFFFF) << 16))[0])
    return values[0]


def _one_element(shape: bytes) -> bool:
    fields = _fields(shape)
    if fields is None:
        return False
    for number, wire, item in fields:
        if number == 3 and wire == _VARINT and item:  # unknown_rank
            return False
        if number == 2 and wire == _LENGTH and isinstance(item, bytes):
            dim = _fields(item)
            if dim is None:
                return False
            size = 0
            for field, kind, value in dim:
                if field == 1 and kind == _VARINT and isinstance(value, int):
                    size = _signed64(value)
            if size != 1:
                return False
    return True


def _content_scalar(dtype: int, content: bytes) -> float | None:
    if dtype == _DT_BFLOAT16:
        if len(content) != 2:
            return None
        return float(struct.unpack("<f", b"\0\0" + content)[0])
    fmt = _CONTENT_FORMATS[dtype]
    if len(content) != struct.calcsize(fmt):
        return None
    return float(struct.unpack(fmt, content)[0])


def _typed_values(field: int, wire: int, item: int | bytes) -> list[float] | None:
    """The numbers of one occurrence of a typed repeated field (packed: all of them)."""
    if field in (5, 6):
        fmt, size, single = ("<f", 4, _FIXED32) if field == 5 else ("<d", 8, _FIXED64)
        if not isinstance(item, bytes):
            return None
        if wire == single:
            return [float(struct.unpack(fmt, item)[0])]
        if wire != _LENGTH or len(item) % size:
            return None
        return [float(x) for (x,) in struct.iter_unpack(fmt, item)]
    unsigned = field in (16, 17)
    if wire == _VARINT and isinstance(item, int):
        return [float(_number(item, field, unsigned))]
    if wire != _LENGTH or not isinstance(item, bytes):
        return None
    out: list[float] = []
    at = 0
    while at < len(item):
        got = _varint(item, at)
        if got is None:
            return None
        value, at = got
        out.append(float(_number(value, field, unsigned)))
    return out


def _number(value: int, field: int, unsigned: bool) -> int:
    if unsigned:
        return value & ((1 << 64) - 1) if field == 17 else value & 0xFFFFFFFF
    if field == 7:  # int32: a negative one is sign-extended to 64 bits on the wire
        value &= 0xFFFFFFFF
        return value - (1 << 32) if value >= 1 << 31 else value
    if field == 13:  # half_val: the 16 bits of a half in an int32
        return value & 0xFFFF
    return _signed64(value)


def _fields(message: bytes) -> list[Field] | None:
    """``(field number, wire type, value)`` of each field, or ``None`` if malformed.
    Varints come as ints, everything else as its raw bytes. (Keys and lengths under 128, one
    byte each, are read inline: nearly all of them are.)"""
    out: list[Field] = []
    append = out.append
    at = 0
    end = len(message)
    while at < end:
        key = message[at]
        if key < 0x80:
            at += 1
        else:
            got = _varint(message, at)
            if got is None:
                return None
            key, at = got
        number = key >> 3
        wire = key & 7
        if number == 0:
            return None
        if wire == _LENGTH:
            if at >= end:
                return None
            length = message[at]
            if length < 0x80:
                at += 1
            else:
                got = _varint(message, at)
                if got is None:
                    return None
                length, at = got
            stop = at + length
            if stop > end:
                return None
            append((number, wire, message[at:stop]))
            at = stop
        elif wire == _VARINT:
            got = _varint(message, at)
            if got is None:
                return None
            value, at = got
            append((number, wire, value))
        elif wire in (_FIXED64, _FIXED32):
            stop = at + (8 if wire == _FIXED64 else 4)
            if stop > end:
                return None
            append((number, wire, message[at:stop]))
            at = stop
        else:  # groups (3, 4) are not used by these messages
            return None
    return out


def _varint(data: bytes, at: int) -> tuple[int, int] | None:
    value = 0
    shift = 0
    end = len(data)
    while at < end and shift < 70:
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
