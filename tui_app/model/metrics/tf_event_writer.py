"""Event records written the way TensorFlow writes them, without TensorFlow.

For the tests and the benchmark of the event file reader, and for a trainer (the demo's) that
wants real event files without a TensorFlow install. Each function returns one framed record
(``tf_event_records.frame_record``: length, both masked CRC32Cs); an event file is the
concatenation of :func:`file_version_record` and any number of :func:`event_record`.

The bytes are those real TensorFlow writes for the same numbers (the tests compare them with
the fixtures in ``tests/fixtures/tf_events``): fields in field-number order, proto3 defaults
(a step or wall time of 0) left out, and for a TF 2 scalar a float32 tensor of empty shape with
4 bytes of ``tensor_content`` followed by the metadata naming the "scalars" plugin.
"""

from __future__ import annotations

import math
import struct

from tui_app.model.metrics.tf_event_records import frame_record

FILE_VERSION = "brain.Event:2"
"""What the first event of every file declares (``Event.file_version``, field 3)."""

_SCALARS_METADATA = b"\x4a\x0b\x0a\x09\x0a\x07scalars"
"""``Summary.Value.metadata`` (9) -> ``plugin_data`` (1) -> ``plugin_name`` (1) "scalars"."""
_FLOAT_SCALAR_TENSOR = b"\x08\x01\x12\x00\x22\x04"
"""``TensorProto``: ``dtype`` (1) float, ``tensor_shape`` (2) empty, ``tensor_content`` (4)
of 4 bytes, which follow."""


def file_version_record(wall_time: float) -> bytes:
    """The record every event file starts with."""
    version = FILE_VERSION.encode()
    return frame_record(_wall_time(wall_time) + _length_field(3, version))


def event_record(
    step: int,
    wall_time: float,
    tag: str,
    value: float,
    *,
    tensor: bool = True,
    metadata: bool | None = None,
) -> bytes:
    """One scalar event.

    Args:
        step: the training step (int64).
        wall_time: seconds since the epoch.
        tag: the scalar's name.
        value: stored as float32, as TensorFlow stores scalar summaries.
        tensor: ``True`` as TF 2's ``tf.summary.scalar`` writes it (a float tensor); ``False``
            as a ``simple_value`` (TF 1, Estimators, PyTorch's ``add_scalar``).
        metadata: whether to name the "scalars" plugin; by default as TensorFlow does: with a
            tensor, not with a simple value. (TF 1's ``FileWriter`` keeps it on a tag's first
            event only.)
    """
    number = _float32(value)
    if tensor:
        body = b"\x42" + _varint(len(_FLOAT_SCALAR_TENSOR) + 4) + _FLOAT_SCALAR_TENSOR + number
    else:
        body = b"\x15" + number
    if tensor if metadata is None else metadata:
        body += _SCALARS_METADATA
    summary_value = _length_field(1, tag.encode()) + body
    summary = _length_field(1, summary_value)
    event = _wall_time(wall_time)
    if step:
        event += b"\x10" + _varint(step & ((1 << 64) - 1))
    return frame_record(event + _length_field(5, summary))


def _float32(value: float) -> bytes:
    """As a cast to float32 rounds it: a finite number beyond float32's range becomes infinite
    (struct refuses to pack it)."""
    try:
        return struct.pack("<f", value)
    except OverflowError:
        return struct.pack("<f", math.copysign(math.inf, value))


def _wall_time(wall_time: float) -> bytes:
    return b"\x09" + struct.pack("<d", wall_time) if wall_time != 0 else b""


def _length_field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)
