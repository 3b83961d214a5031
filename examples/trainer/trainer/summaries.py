"""TensorBoard scalar summaries, written without TensorFlow (stdlib only, Python 3.7+).

Trainers on the platform wrote TensorFlow event files under their ``--job-dir`` (Keras'
``TensorBoard`` callback, Estimators, PyTorch's ``SummaryWriter``), and that is what TensorBoard,
and tui-app's metrics view, draw curves from. This sample writes the same files so a new user
sees curves without installing a framework:

- ``<dir>/events.out.tfevents.<seconds>.<host>.<pid>.0``: a sequence of TFRecords (uint64
  length, masked CRC32C of the length, the data, masked CRC32C of the data), each an ``Event``
  protobuf; the first record holds ``file_version: "brain.Event:2"``, the others one scalar each
  as ``simple_value`` (what ``tf.compat.v1`` summaries and PyTorch write);
- a run is a folder: ``<job-dir>/train`` for the training loss, ``<job-dir>/eval`` for the
  held-out loss, as an Estimator writes its ``eval/`` folder.

On Cloud Storage an object cannot grow, so the whole file is uploaded again at each flush (what
TensorFlow's own GCS filesystem does on flush); a reader sees the old object or the new, longer
one, never part of one. Flushes are at most one a second, plus one at close.
"""

from __future__ import annotations

import math
import os
import socket
import struct
import time
from typing import List, Optional  # noqa: UP035 - runs on Python 3.7 too

from trainer import gcs

FLUSH_SECONDS = 1.0


def _crc32c_table() -> List[int]:  # noqa: UP006
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), the checksum TFRecords use; table-driven, fast enough for the few
    hundred bytes a flush adds."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _masked(data: bytes) -> bytes:
    crc = crc32c(data)
    return struct.pack("<I", (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF)


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        bits = value & 0x7F
        value >>= 7
        if value:
            out.append(bits | 0x80)
        else:
            out.append(bits)
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def record(data: bytes) -> bytes:
    """One framed TFRecord."""
    length = struct.pack("<Q", len(data))
    return length + _masked(length) + data + _masked(data)


def scalar_event(tag: str, value: float, step: int, wall_time: float) -> bytes:
    """An ``Event`` with one ``simple_value`` (non-finite values are written as they are)."""
    value_msg = _field(1, tag.encode("utf-8")) + b"\x15" + struct.pack("<f", _float32(value))
    summary = _field(1, value_msg)
    return b"\x09" + struct.pack("<d", wall_time) + b"\x10" + _varint(step) + _field(5, summary)


def _float32(value: float) -> float:
    if math.isfinite(value) and abs(value) > 3.4e38:
        return math.copysign(math.inf, value)  # struct refuses what float32 cannot hold
    return value


class SummaryWriter:
    """Scalars into one event file under ``directory`` (a local path or a gs:// URI)."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        now = time.time()
        name = f"events.out.tfevents.{int(now)}.{socket.gethostname()}.{os.getpid()}.0"
        self.path = directory.rstrip("/") + "/" + name
        self._data = bytearray()
        self._written = 0
        self._last_flush = 0.0
        version = b"\x09" + struct.pack("<d", now) + b"\x1a" + _varint(13) + b"brain.Event:2"
        self._data += record(version)

    def scalar(self, tag: str, value: float, step: int) -> None:
        self._data += record(scalar_event(tag, value, step, time.time()))
        if time.monotonic() - self._last_flush >= FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        self._last_flush = time.monotonic()
        if len(self._data) == self._written:
            return
        if gcs.is_gcs(self.path):
            gcs.write_bytes(self.path, bytes(self._data))
        else:
            os.makedirs(self.directory, exist_ok=True)
            with open(self.path, "ab") as handle:
                handle.write(self._data[self._written :])
        self._written = len(self._data)


def writer_for(job_dir: Optional[str], run: str) -> Optional[SummaryWriter]:  # noqa: UP045
    """A writer for ``<job_dir>/<run>``, or None without a job dir (nowhere to write)."""
    if not job_dir:
        return None
    return SummaryWriter(job_dir.rstrip("/") + "/" + run)
