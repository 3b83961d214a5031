"""Upload request bodies, streamed to disk: gcloud's multipart/related body, resumable chunks.

Nothing here holds a body in memory: media goes to a file as it arrives, and the multipart reader
keeps back only what its delimiter search needs, so a 100 MB package costs a few hundred KiB.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO

from aiohttp import StreamReader

from tui_app.local.errors import ApiError, invalid_field
from tui_app.local.storage.object_store import disk_error

__all__ = [
    "ContentRange",
    "MultipartReader",
    "copy_body",
    "multipart_boundary",
    "parse_content_range",
    "parse_json_body",
    "parse_metadata",
    "read_small",
    "size_field",
    "write_chunk",
]

MAX_HEADER_BYTES = 16 * 1024
MAX_SIZE = 2**63 - 1
"""Sizes are int64 on the wire; SQLite and file offsets hold no more."""
# ASCII digits only (``\d`` also matches other scripts' digits), at most 19 (int64).
_CONTENT_RANGE = re.compile(r"^bytes\s+(?:(\d{1,19})-(\d{1,19})|\*)/(\d{1,19}|\*)$", re.ASCII)
_SIZE = re.compile(r"^[0-9]{1,19}$")


def _cut_off() -> ApiError:
    return ApiError("INVALID_ARGUMENT", "The request body ended before it was complete.")


@dataclass(frozen=True)
class ContentRange:
    """A resumable PUT's ``Content-Range``: bytes ``first..last`` of ``total``.

    ``first``/``last`` are None for ``bytes */N`` (a status query, or "finalize at N bytes");
    ``total`` is None for ``/*`` (size not known yet).
    """

    first: int | None
    last: int | None
    total: int | None

    @property
    def length(self) -> int:
        return 0 if self.first is None or self.last is None else self.last - self.first + 1


def parse_content_range(header: str) -> ContentRange:
    """Parse ``bytes a-b/N``, ``bytes a-b/*``, ``bytes */N`` or ``bytes */*``.

    Raises:
        ApiError: 400 for anything else, or a range that ends before it starts or past the total.
    """
    m = _CONTENT_RANGE.match(header.strip())
    if not m:
        raise invalid_field(
            "Content-Range", f"{header[:80]!r} is not 'bytes FIRST-LAST/TOTAL' or 'bytes */TOTAL'."
        )
    first, last = (int(m[1]), int(m[2])) if m[1] is not None else (None, None)
    total = None if m[3] == "*" else int(m[3])
    if first is not None and last is not None and last < first:
        raise invalid_field("Content-Range", f"{header!r} ends before it starts.")
    if total is not None and last is not None and last >= total:
        raise invalid_field("Content-Range", f"{header!r} goes past the total size.")
    return ContentRange(first, last, total)


def size_field(value: Any, field: str) -> int | None:
    """An int64 size from JSON (a string on the wire) or a header; None when absent."""
    if value is None or value == "":
        return None
    text = str(value).strip()
    if isinstance(value, bool) or not _SIZE.match(text) or int(text) > MAX_SIZE:
        raise invalid_field(field, f"{text[:40]!r} is not a byte count.")
    return int(text)


async def _read_some(content: StreamReader) -> bytes:
    """The next bytes of the body (b"" at its end); a client that hung up is a 400."""
    try:
        return await content.readany()
    except ConnectionError:
        raise _cut_off() from None


def write_chunk(out: BinaryIO, data: bytes | bytearray) -> None:
    try:
        out.write(data)
    except OSError as exc:
        raise disk_error(exc) from None


async def read_small(content: StreamReader, limit: int) -> bytes:
    """A body that must be small (metadata): all of it, or 400 past ``limit`` bytes."""
    data = bytearray()
    while chunk := await _read_some(content):
        data += chunk
        if len(data) > limit:
            raise invalid_field("body", "The object metadata is too large.")
    return bytes(data)


async def copy_body(content: StreamReader, out: BinaryIO, skip: int = 0) -> int:
    """Stream the body into ``out``, dropping its first ``skip`` bytes; returns the body's size.

    Chunks go straight to the file: a 100 MB package never sits in memory.
    """
    seen = 0
    while chunk := await _read_some(content):
        start = max(0, min(len(chunk), skip - seen))
        seen += len(chunk)
        if start < len(chunk):
            write_chunk(out, chunk[start:])
    return seen


class MultipartReader:
    """A streaming reader of gcloud's two-part ``multipart/related`` upload body.

    Holds back only as many bytes as the delimiter search needs. The framing (``\\n`` from
    apitools' email generator, ``\\r\\n`` from other clients) is taken from the first delimiter
    line, so a ``\\r`` that ends the media is never mistaken for part of the delimiter.
    """

    def __init__(self, content: StreamReader, boundary: str) -> None:
        self._content = content
        self._dash_boundary = b"--" + boundary.encode("latin-1")
        self._delimiter = b"\n" + self._dash_boundary
        self._buf = bytearray()

    async def _fill(self) -> bool:
        chunk = await _read_some(self._content)
        self._buf += chunk
        return bool(chunk)

    async def _read_until(self, marker: bytes, limit: int, what: str) -> bytes:
        while (i := self._buf.find(marker)) < 0:
            if len(self._buf) > limit:
                raise invalid_field("body", f"The {what} of the multipart body is too large.")
            if not await self._fill():
                raise invalid_field("body", f"The multipart body ends inside its {what}.")
        data = bytes(self._buf[:i])
        del self._buf[: i + len(marker)]
        return data

    async def start(self) -> None:
        """Skip any preamble and the first delimiter line; learn the line ending."""
        await self._read_until(self._dash_boundary, MAX_HEADER_BYTES, "preamble")
        padding = await self._read_until(b"\n", MAX_HEADER_BYTES, "first delimiter line")
        if padding.endswith(b"\r"):
            self._delimiter = b"\r\n" + self._dash_boundary
        if padding.strip():
            raise invalid_field("body", "The multipart body does not start with its boundary.")

    async def headers(self) -> dict[str, str]:
        """The current part's headers (lower-cased names), up to the blank line."""
        headers: dict[str, str] = {}
        for _ in range(100):
            line = await self._read_until(b"\n", MAX_HEADER_BYTES, "part headers")
            if not line.rstrip(b"\r"):
                return headers
            key, _, value = line.decode("latin-1").partition(":")
            headers[key.strip().lower()] = value.strip()
        raise invalid_field("body", "A multipart part has too many headers.")

    async def small_part(self, limit: int, what: str) -> bytes:
        """The whole current part, which must fit in ``limit`` bytes."""
        return await self._read_until(self._delimiter, limit, what)

    async def stream_part(self, sink: Callable[[bytes | bytearray], None]) -> None:
        """Pass the current part to ``sink`` as it arrives, up to the next delimiter."""
        keep = len(self._delimiter)
        while (i := self._buf.find(self._delimiter)) < 0:
            if len(self._buf) > keep:
                sink(self._buf[:-keep])
                del self._buf[:-keep]
            if not await self._fill():
                raise invalid_field("body", "The multipart body ends inside the media part.")
        sink(self._buf[:i])
        del self._buf[: i + keep]

    async def at_close(self) -> bool:
        """After a part: True for the closing delimiter (``--``), False when a part follows."""
        while len(self._buf) < 2 and await self._fill():
            pass
        if self._buf.startswith(b"--"):
            return True
        await self._read_until(b"\n", MAX_HEADER_BYTES, "delimiter line")
        return False


def multipart_boundary(content_type: str) -> str:
    """The boundary of a ``multipart/related`` Content-Type (apitools single-quotes it)."""
    kind, *params = content_type.split(";")
    if kind.strip().lower() != "multipart/related":
        raise invalid_field("Content-Type", "A multipart upload must be multipart/related.")
    for param in params:
        key, _, value = param.strip().partition("=")
        value = value.strip()
        if key.strip().lower() == "boundary" and value:
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            # Printable ASCII (RFC 2046): a byte the header decoding turned into a surrogate
            # could not be searched for in the body.
            if 0 < len(value) <= 200 and value.isascii() and value.isprintable():
                return value
    raise invalid_field("Content-Type", "The multipart/related Content-Type needs a boundary.")


def parse_json_body(raw: bytes) -> Any:
    """A request's JSON (the jobs and logging routes' bodies too), or 400 INVALID_ARGUMENT.

    Beyond malformed JSON, two bodies that ``json.loads`` takes are refused: nesting too deep
    to parse (a RecursionError) and a string holding an unpaired surrogate (a ``"\\ud800"``
    escape): the wire format is UTF-8, and no file name, argv or SQLite value can hold one.
    """
    try:
        data = json.loads(raw)
        json.dumps(data, ensure_ascii=False).encode()
    except RecursionError:
        raise ApiError(
            "INVALID_ARGUMENT", "Invalid JSON payload received. It nests too deeply."
        ) from None
    except UnicodeEncodeError:
        raise ApiError(
            "INVALID_ARGUMENT",
            "Invalid JSON payload received. A string holds an unpaired surrogate escape "
            "(\\ud800-\\udfff); strings must be valid Unicode.",
        ) from None
    except ValueError as exc:  # UnicodeDecodeError included: the bytes are not UTF-8
        raise ApiError("INVALID_ARGUMENT", f"Invalid JSON payload received. {exc}") from None
    return data


def parse_metadata(raw: bytes) -> dict[str, Any]:
    """Object metadata JSON (may be empty): a JSON object, or 400."""
    if not raw.strip():
        return {}
    data = parse_json_body(raw)
    if not isinstance(data, dict):
        raise invalid_field("body", "The object metadata must be a JSON object.")
    return data
