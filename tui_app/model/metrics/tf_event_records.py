"""TFRecord framing of TensorFlow event files: checksums, torn tails, corrupt records, resync.

A file is a sequence of records, each ``uint64 length`` (little endian), ``uint32`` masked
CRC32C of those 8 bytes, ``length`` bytes of data, ``uint32`` masked CRC32C of the data
(``tensorflow/core/lib/io/record_writer.cc``). A live view polls the file of a running trainer,
so three things happen in practice and are told apart here:

- The last record is torn: the trainer is still writing it. Its bytes are not consumed, so the
  next poll reads it again from its start.
- A record's data does not match its checksum (a bad disk, a copy cut short and then appended
  to): its length checksum held, so the length is trusted, the record is skipped and counted.
- A length does not match its checksum: the framing is lost. The next offset where a header's
  length checksum and its data checksum both hold is searched for, and the bytes in between
  count as one corrupt record.

Speed matters (a metrics view reads whole files of ~60-byte records), so the per-record work is
done with numpy over a whole feed rather than in a Python loop:

- Framing: nearly every event starts with ``wall_time`` (field 1, fixed64: byte ``0x09``), so
  the offsets ``p`` with ``data[p + 12] == 0x09`` whose length fits and whose length checksum
  holds are the record starts, found at once; following the chain of lengths through them
  checks that they tile the data. Where the chain breaks (a record without a wall time, a bad
  header, a torn tail) a plain step-by-step reader takes over until the chain resumes.
- Data checksums: CRC32C is linear, so all the records of a feed are checked with one call over
  a copy of the feed in which each header is zeroed and each stored checksum is replaced by
  what the CRC register must hold after the record's data (the CRC's "residue" property makes
  the register return to zero after it). The register at the end is zero when every record is
  intact; one bad record always makes it non-zero (a bad record's error is shifted by the bytes
  after it, and that shift is invertible). Several bad records could in principle cancel
  (odds 2**-32, the same as a single CRC being fooled). When the register is not zero the
  records are checked one by one to find the bad ones.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import google_crc32c
import numpy as np
import numpy.typing as npt

MASK_DELTA = 0xA282EAD8
"""Added to the rotated CRC: TensorFlow masks stored checksums so that a CRC of data that itself
holds CRCs is not degenerate."""

HEADER_BYTES = 12
FOOTER_BYTES = 4
_WALL_TIME_KEY = 0x09
"""Field 1, wire type fixed64: the first byte of an Event with a wall time."""

_PLAUSIBLE_LENGTH = 1 << 36
"""While resynchronising, a candidate header whose length is beyond this is not considered: no
event is 64 GiB, and random bytes almost never read as a smaller number."""

_RESYNC_FIRST_WINDOW = 4096
_CACHE_LIMIT = 4096

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
Bools = npt.NDArray[np.bool_]


def masked_crc32c(data: bytes) -> int:
    """The checksum as TensorFlow stores it: CRC32C, rotated right by 15 bits, plus a delta."""
    crc = int(google_crc32c.value(data))
    return (((crc >> 15) | (crc << 17)) + MASK_DELTA) & 0xFFFFFFFF


def frame_record(data: bytes) -> bytes:
    """``data`` framed as one TFRecord, with both checksums."""
    length = struct.pack("<Q", len(data))
    return b"".join(
        (
            length,
            struct.pack("<I", masked_crc32c(length)),
            data,
            struct.pack("<I", masked_crc32c(data)),
        )
    )


@dataclass(slots=True)
class Framed:
    """What one feed's bytes hold, by offsets into those bytes."""

    starts: Ints
    """Header offset of each record whose length checksum holds and whose data is all there, in
    file order (data checksums not checked yet: :func:`intact` does that for all at once)."""
    lengths: Ints
    end: int
    """Where the next feed starts: after the last record or skipped region, before a torn one."""
    corrupt: int
    """Regions skipped because their framing was lost (each counts as one corrupt record)."""
    wanted: int
    """How many bytes from :attr:`end` the next feed must hold to get past what stopped this
    one: the whole of a torn record whose header is there, else a header."""


@dataclass(slots=True)
class FirstRecord:
    """The first record of a file: is this an event file at all?"""

    problem: str | None
    wanted: int = 0
    """Bytes the file must have before it can be told (0: it has them)."""


def first_record(data: bytes) -> FirstRecord:
    """Whether ``data``, a file's first bytes, starts with a record that frames."""
    if len(data) < HEADER_BYTES:
        return FirstRecord(None, HEADER_BYTES)
    length, stored = struct.unpack_from("<QI", data)
    if masked_crc32c(data[:8]) != stored:
        return FirstRecord(
            "not a TensorFlow event file: its first record's length checksum does not match"
        )
    end = HEADER_BYTES + length
    if end + FOOTER_BYTES > len(data):
        return FirstRecord(None, end + FOOTER_BYTES)
    if masked_crc32c(data[HEADER_BYTES:end]) != struct.unpack_from("<I", data, end)[0]:
        return FirstRecord(
            "not a TensorFlow event file: its first record's checksum does not match"
        )
    return FirstRecord(None)


class RecordFramer:
    """Finds the records of successive feeds of one file; remembers a framing loss across feeds.

    Attributes:
        lost: the last feed ended inside a corrupt region (already counted): the next feed
            starts by searching for a record, from its very first byte.
    """

    def __init__(self) -> None:
        self.lost = False
        self._length_masks: dict[int, int] = {}
        self._zero_crcs: dict[int, int] = {}

    def frame(self, data: bytes) -> Framed:
        """The records of ``data`` (bytes of the file from where the last feed ended)."""
        scan = _Scan(self, data)
        scan.run()
        return Framed(
            np.asarray(np.concatenate(scan.starts) if scan.starts else _no_ints()),
            np.asarray(np.concatenate(scan.lengths) if scan.lengths else _no_ints()),
            scan.end,
            scan.corrupt,
            scan.wanted,
        )

    def intact(self, data: bytes, starts: Ints, lengths: Ints) -> Bools:
        """Whether each record's data matches its checksum (records in order, not overlapping)."""
        count = len(starts)
        if count == 0:
            return np.zeros(0, dtype=np.bool_)
        if self._all_intact(data, starts, lengths):
            return np.ones(count, dtype=np.bool_)
        stored = _u32(data)[starts + HEADER_BYTES + lengths]
        found = np.fromiter(
            (
                google_crc32c.value(data[s:e])
                for s, e in zip(
                    (starts + HEADER_BYTES).tolist(),
                    (starts + HEADER_BYTES + lengths).tolist(),
                    strict=True,
                )
            ),
            dtype=np.uint32,
            count=count,
        )
        return np.asarray(_mask(found) == stored)

    def length_mask(self, length: int) -> int:
        """The stored checksum a header with this length must carry (cached: lengths repeat)."""
        mask = self._length_masks.get(length)
        if mask is None:
            if len(self._length_masks) >= _CACHE_LIMIT:
                self._length_masks.clear()
            mask = self._length_masks[length] = masked_crc32c(struct.pack("<Q", length))
        return mask

    def length_masks(self, lengths: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint32]:
        """:meth:`length_mask` of each length."""
        if len(lengths) == 0:
            return np.zeros(0, dtype=np.uint32)
        unique, inverse = np.unique(lengths, return_inverse=True)
        table = np.array([self.length_mask(int(x)) for x in unique.tolist()], dtype=np.uint32)
        return np.asarray(table[inverse.reshape(-1)])

    def _zero_crc(self, length: int) -> int:
        crc = self._zero_crcs.get(length)
        if crc is None:
            if len(self._zero_crcs) >= _CACHE_LIMIT:
                self._zero_crcs.clear()
            crc = self._zero_crcs[length] = int(google_crc32c.value(bytes(length)))
        return crc

    def _all_intact(self, data: bytes, starts: Ints, lengths: Ints) -> bool:
        """One CRC over a copy of the records' span (see the module's docstring)."""
        low = int(starts[0])
        high = int(starts[-1] + HEADER_BYTES + lengths[-1] + FOOTER_BYTES)
        span = bytearray(data[low:high])
        view = np.frombuffer(span, dtype=np.uint8)
        at = starts - low
        ends = at + HEADER_BYTES + lengths + FOOTER_BYTES
        for gap in np.flatnonzero(ends[:-1] != at[1:]).tolist():  # skipped regions
            view[int(ends[gap]) : int(at[gap + 1])] = 0
        words = _u32(span)
        footers = at + HEADER_BYTES + lengths
        # The CRC of data of length n is its zero-register CRC xor the CRC of n zero bytes.
        unique, inverse = np.unique(lengths, return_inverse=True)
        zeros = np.array([self._zero_crc(int(n)) for n in unique.tolist()], dtype=np.uint32)
        register = _unmask(words[footers]) ^ zeros[inverse.reshape(-1)]
        words[at] = 0
        words[at + 4] = 0
        words[at + 8] = 0
        words[footers] = register
        # The first four bytes cancel the CRC's initial register (0xFFFFFFFF): from there on
        # the register starts at zero, and google_crc32c's final xor makes zero read as ~0.
        words[0] = 0xFFFFFFFF
        return bool(google_crc32c.value(bytes(span)) == 0xFFFFFFFF)


class _Scan:
    """One feed's framing: the numpy chain where it holds, a step-by-step reader elsewhere."""

    def __init__(self, framer: RecordFramer, data: bytes) -> None:
        self.framer = framer
        self.data = data
        self.size = len(data)
        self.starts: list[Ints] = []
        self.lengths: list[Ints] = []
        self.end = 0
        self.corrupt = 0
        self.wanted = HEADER_BYTES
        self._failed_budget = 8 * self.size + (1 << 20)
        """Bytes of candidate records whose data checksum failed, that a resync may still
        check in this feed: keeps a hostile file (many valid-looking headers) linear."""

    def run(self) -> None:
        size = self.size
        cands, lengths = self._candidates()
        nexts = cands + HEADER_BYTES + lengths + FOOTER_BYTES
        breaks = np.flatnonzero(nexts[:-1] != cands[1:])
        at = 0
        if self.framer.lost:
            found = self._resync(0)
            if found is None:
                return
            at = found
        while at < size:
            i = int(np.searchsorted(cands, at))
            if i < len(cands) and cands[i] == at:
                b = int(np.searchsorted(breaks, i))
                last = int(breaks[b]) if b < len(breaks) else len(cands) - 1
                self.starts.append(cands[i : last + 1])
                self.lengths.append(lengths[i : last + 1])
                at = self.end = int(nexts[last])
                continue
            if size - at < HEADER_BYTES:
                return
            length, stored = struct.unpack_from("<QI", self.data, at)
            if self.framer.length_mask(length) != stored:
                self.corrupt += 1
                found = self._resync(at + 1)
                if found is None:
                    return
                at = found
                continue
            if length > size - at - HEADER_BYTES - FOOTER_BYTES:
                self.wanted = HEADER_BYTES + length + FOOTER_BYTES
                return  # torn: the trainer is still writing it
            self.starts.append(np.array([at], dtype=np.int64))
            self.lengths.append(np.array([length], dtype=np.int64))
            at = self.end = at + HEADER_BYTES + length + FOOTER_BYTES

    def _candidates(self) -> tuple[Ints, Ints]:
        """Offsets that look like the start of a record of an event with a wall time, and
        whose length checksum holds and whose data is all there; their lengths."""
        size = self.size
        if size < HEADER_BYTES + FOOTER_BYTES + 1:
            return _no_ints(), _no_ints()
        raw = np.frombuffer(self.data, dtype=np.uint8)
        cands = np.flatnonzero(raw[HEADER_BYTES:] == _WALL_TIME_KEY)
        lengths = _u64(self.data)[cands]
        room = size - HEADER_BYTES - FOOTER_BYTES - cands
        fits = (room >= 0) & (lengths <= np.maximum(room, 0).astype(np.uint64))
        cands, lengths = cands[fits], lengths[fits]
        good = self.framer.length_masks(lengths) == _u32(self.data)[cands + 8]
        return cands[good].astype(np.int64), lengths[good].astype(np.int64)

    def _resync(self, start: int) -> int | None:
        """The next offset from ``start`` where a header's length checksum and its data
        checksum both hold, after marking the region before it as skipped; ``None`` when there
        is none in this feed (the region goes on: ``framer.lost``).

        A header that checks out but whose data is not all there yet may be the torn record the
        trainer is writing: the feed stops there, still lost, so that the next feed searches
        again from it (and finds it whole, or finds it was a false start)."""
        size = self.size
        data = self.data
        framer = self.framer
        window = _RESYNC_FIRST_WINDOW
        at = start
        torn: int | None = None
        last = size - HEADER_BYTES  # the last offset where a whole header fits
        while at <= last and self._failed_budget > 0:
            stop = min(last + 1, at + window)
            lengths = _u64(data)[at:stop]
            plausible = np.flatnonzero(lengths < _PLAUSIBLE_LENGTH)
            if len(plausible):
                offsets = plausible + at
                masks = framer.length_masks(lengths[plausible])
                good = offsets[masks == _u32(data)[offsets + 8]]
                for found in good.tolist():
                    q = int(found)
                    length = int(lengths[q - at])
                    end = q + HEADER_BYTES + length
                    if end + FOOTER_BYTES > size:
                        if torn is None:
                            torn = q
                            self.wanted = HEADER_BYTES + length + FOOTER_BYTES
                        continue
                    (stored,) = struct.unpack_from("<I", data, end)
                    if masked_crc32c(data[q + HEADER_BYTES : end]) == stored:
                        framer.lost = False
                        return q
                    self._failed_budget -= length + HEADER_BYTES
                    if self._failed_budget <= 0:
                        break
            at = stop
            window *= 2
        framer.lost = True
        self.end = torn if torn is not None else max(start, size - HEADER_BYTES + 1)
        return None


def _no_ints() -> Ints:
    return np.zeros(0, dtype=np.int64)


def _u64(data: bytes | bytearray) -> npt.NDArray[np.uint64]:
    """A little-endian uint64 at every byte offset (unaligned, no copy)."""
    return np.ndarray((max(len(data) - 7, 0),), dtype="<u8", buffer=data, offset=0, strides=(1,))


def _u32(data: bytes | bytearray) -> npt.NDArray[np.uint32]:
    """A little-endian uint32 at every byte offset (unaligned, no copy)."""
    return np.ndarray((max(len(data) - 3, 0),), dtype="<u4", buffer=data, offset=0, strides=(1,))


def _mask(crc: npt.NDArray[np.uint32]) -> npt.NDArray[np.uint32]:
    return np.asarray(((crc >> np.uint32(15)) | (crc << np.uint32(17))) + np.uint32(MASK_DELTA))


def _unmask(stored: npt.NDArray[np.uint32]) -> npt.NDArray[np.uint32]:
    rotated = stored - np.uint32(MASK_DELTA)
    return np.asarray((rotated << np.uint32(15)) | (rotated >> np.uint32(17)))
