"""Scalars from TensorFlow event files, read incrementally and without TensorFlow.

Two readers need them. The metrics view polls each event file of a running job and plots its
scalar curves: every poll hands :class:`EventFileReader` only the bytes appended since the last
one, and gets back the new points, tag by tag, as columns. And AI Platform Training read a
tuning trial's metric from the summary events its trainer wrote when there was no
cloudml-hypertune report (the ``hyperparameterMetricTag`` as a summary tag; Estimators write
``training/hptuning/metric`` on their own): :func:`scalar_series` reads one tag of a whole file
for that. Installing TensorFlow for either would cost a gigabyte; the format is small and
stable.

A file is a sequence of TFRecords (``tf_event_records``: framing, both checksums, torn tails,
corrupt records, resynchronisation), each an ``Event`` protobuf (``tf_event_proto`` decodes
any layout; ``tf_event_fast`` decodes the common layouts of scalar events for a whole feed at
once, which is what makes a large file quick to read).

Which values are scalars, as TensorBoard decides:

- a ``simple_value`` (TF 1, Estimators, PyTorch, tensorboardX), or a numeric tensor of exactly
  one element (TF 2's ``tf.summary.scalar``);
- of a tag whose plugin is "scalars" or unnamed. The plugin is named in the metadata of the
  tag's first value in a file (TF 1's ``FileWriter`` strips it from later ones), and the first
  metadata of a tag is the one that counts, so the reader remembers it per tag: later events of
  an image, histogram or text tag are never taken for scalars even without metadata.

Values that are not finite (a loss that blew up writes NaN or infinity) are kept: the metrics
view counts and marks them. Nothing here raises on any input.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from tui_app.model.metrics.tf_event_fast import CommonEvents
    from tui_app.model.metrics.tf_event_proto import DecodedEvent
    from tui_app.model.metrics.tf_event_records import Floats, Ints, RecordFramer

EVENT_FILE_MARKER = "tfevents"
"""Event files are named ``events.out.tfevents.<time>.<host>...``; this part is always there."""

_SCALAR_PLUGINS = frozenset({"", "scalars"})


def is_event_file(name: str) -> bool:
    """Whether an object or file name is a TensorFlow event file (by TensorFlow's naming)."""
    base = name.rsplit("/", 1)[-1]
    return base.startswith("events.out.") and EVENT_FILE_MARKER in base


class TagPoints(NamedTuple):
    """The new points of one tag, in file order, as columns (unpacks as a 3-tuple)."""

    steps: list[int]
    wall_times: list[float]
    values: list[float]


class TagArrays(NamedTuple):
    """:class:`TagPoints` as numpy arrays (``int64``, ``float64``, ``float64``), for readers that
    hand the points on to numpy: a million points as Python lists cost ~100 MB and the time to
    build them, as arrays 24 MB and no time."""

    steps: Ints
    wall_times: Floats
    values: Floats


class ScalarBatch(dict[str, TagPoints]):
    """What one :meth:`EventFileReader.feed` found: tag -> its new points. Tags without new
    points are left out."""

    @property
    def point_count(self) -> int:
        return sum(len(points.steps) for points in self.values())


class EventFileReader:
    """Reads one event file a piece at a time, as it grows.

    Keep one per file between polls and feed it the file's bytes from :attr:`offset` to the
    current end (or to any point before it): every scalar in the complete records of those
    bytes comes back, and :attr:`offset` moves past them. A last record that is not all there
    yet is not consumed: the next feed starts at it again.

    Args:
        common_layouts: decode the common layouts of scalar events with numpy, a whole feed at
            a time (see ``tf_event_fast``); ``False`` decodes every record with the general
            decoder, for tests that hold the two paths to the same answers.

    Attributes:
        offset: the byte of the file the next feed must start at.
        corrupt: records skipped because their checksum did not match, plus regions skipped
            because the framing was lost (each counts once).
        problem: a sentence for the user when the file is not an event file at all (its first
            record does not frame); the reader then reads nothing more from it.
        wanted: how many bytes from :attr:`offset` the next feed must hold for the reader to
            get on: the whole of a record still being written (a graph or an image can be
            megabytes: a caller that reads a bounded piece per poll must read at least this
            much), else a header's 12.
    """

    def __init__(self, *, common_layouts: bool = True) -> None:
        # numpy comes in with the first reader, not with this module: is_event_file is used
        # where the rest of the reader is not.
        from tui_app.model.metrics.tf_event_records import RecordFramer

        self.offset = 0
        self.corrupt = 0
        self.problem: str | None = None
        self.wanted = 12
        self._common_layouts = common_layouts
        self._framer: RecordFramer = RecordFramer()
        self._first_checked = False
        self._plugins: dict[str, str] = {}
        """The plugin named by each tag's first metadata in this file."""

    def feed(self, data: bytes) -> ScalarBatch:
        """The points in the complete records of ``data``, the file's bytes from
        :attr:`offset` on."""
        batch = ScalarBatch()
        for tag, (steps, walls, values) in self.feed_arrays(data).items():
            batch[tag] = TagPoints(steps.tolist(), walls.tolist(), values.tolist())
        return batch

    def feed_arrays(self, data: bytes) -> dict[str, TagArrays]:
        """:meth:`feed`, with each tag's points as numpy arrays."""
        from tui_app.model.metrics.tf_event_records import first_record

        batch: dict[str, TagArrays] = {}
        if self.problem is not None or not data:
            return batch
        data = bytes(data)
        if not self._first_checked and self.offset == 0:
            verdict = first_record(data)
            self.problem = verdict.problem
            self.wanted = verdict.wanted
            if verdict.problem is not None or verdict.wanted:
                return batch
        self._first_checked = True
        framed = self._framer.frame(data)
        self.wanted = framed.wanted
        intact = self._framer.intact(data, framed.starts, framed.lengths)
        self.corrupt += framed.corrupt + int(len(intact) - intact.sum())
        self._decode(data, framed.starts[intact], framed.lengths[intact], batch)
        self.offset += framed.end
        return batch

    def _decode(
        self, data: bytes, starts: Ints, lengths: Ints, batch: dict[str, TagArrays]
    ) -> None:
        import numpy as np

        from tui_app.model.metrics.tf_event_fast import decode_common
        from tui_app.model.metrics.tf_event_proto import decode_event
        from tui_app.model.metrics.tf_event_records import HEADER_BYTES

        common: CommonEvents | None = None
        others = np.arange(len(starts))
        if self._common_layouts:
            common = decode_common(data, starts, lengths)
            others = common.others
        general: list[tuple[int, DecodedEvent]] = []
        for index, start, length in zip(
            others.tolist(), starts[others].tolist(), lengths[others].tolist(), strict=True
        ):
            event = decode_event(data[start + HEADER_BYTES : start + HEADER_BYTES + length])
            if event is not None and event.values:
                general.append((index, event))
        _Assembly(self._plugins, common, general).into(batch)


class _GeneralPoints(NamedTuple):
    records: list[int]
    steps: list[int]
    wall_times: list[float]
    values: list[float]


class _Assembly:
    """One feed's points, tag by tag in file order, with each tag's plugin applied."""

    def __init__(
        self,
        plugins: dict[str, str],
        common: CommonEvents | None,
        general: list[tuple[int, DecodedEvent]],
    ) -> None:
        self.plugins = plugins
        self.common = common
        self.general = general
        self.first_metadata: dict[str, tuple[int, str]] = {}
        """Tags whose first metadata is in this feed: its record and plugin."""
        self.groups: dict[str, Ints] = {}
        """Rows of ``common`` by tag, in file order."""

    def into(self, batch: dict[str, TagArrays]) -> None:
        self._group_common()
        general = self._general_points()
        for tag in dict.fromkeys([*self.groups, *general]):
            points = self._points(tag, self.groups.get(tag), general.get(tag))
            if points is not None and len(points.steps):
                batch[tag] = points
        for tag, (_, plugin) in self.first_metadata.items():
            self.plugins[tag] = plugin

    def _learn(self, tag: str, record: int, plugin: str) -> None:
        if tag in self.plugins:
            return
        known = self.first_metadata.get(tag)
        if known is None or record < known[0]:
            self.first_metadata[tag] = (record, plugin)

    def _limit(self, tag: str) -> int | None:
        """The record from which this tag's values are not scalars (``None``: they all are)."""
        plugin = self.plugins.get(tag)
        if plugin is not None:
            return None if plugin in _SCALAR_PLUGINS else 0
        first = self.first_metadata.get(tag)
        if first is None or first[1] in _SCALAR_PLUGINS:
            return None
        return first[0]

    def _group_common(self) -> None:
        import numpy as np

        common = self.common
        if common is None or len(common.records) == 0:
            return
        order = np.argsort(common.tag_ids, kind="stable")
        bounds = np.cumsum(np.bincount(common.tag_ids, minlength=len(common.tags))).tolist()
        low = 0
        for tag, high in zip(common.tags, bounds, strict=True):
            rows = order[low:high]
            low = high
            if len(rows) == 0:
                continue
            self.groups[tag] = rows
            if tag not in self.plugins:
                marked = common.scalars_metadata[rows]
                if marked.any():
                    self._learn(tag, int(common.records[rows[int(marked.argmax())]]), "scalars")

    def _general_points(self) -> dict[str, _GeneralPoints]:
        found: dict[str, list[tuple[int, int, float, float | None]]] = {}
        for record, event in self.general:
            for entry in event.values:
                if entry.plugin is not None:
                    self._learn(entry.tag, record, entry.plugin)
                found.setdefault(entry.tag, []).append(
                    (record, event.step, event.wall_time, entry.value)
                )
        out: dict[str, _GeneralPoints] = {}
        for tag, rows in found.items():
            limit = self._limit(tag)
            kept = [
                (r, s, w, v)
                for r, s, w, v in rows
                if v is not None and (limit is None or r < limit)
            ]
            if kept:
                out[tag] = _GeneralPoints(
                    [r for r, _, _, _ in kept],
                    [s for _, s, _, _ in kept],
                    [w for _, _, w, _ in kept],
                    [v for _, _, _, v in kept if v is not None],
                )
        return out

    def _points(
        self, tag: str, rows: Ints | None, general: _GeneralPoints | None
    ) -> TagArrays | None:
        import numpy as np

        common = self.common
        if rows is not None and common is not None:
            limit = self._limit(tag)
            if limit is not None:
                rows = rows[: int(np.searchsorted(common.records[rows], limit))]
        if rows is None or common is None or len(rows) == 0:
            if general is None:
                return None
            return TagArrays(
                np.array(general.steps, dtype=np.int64),
                np.array(general.wall_times, dtype=np.float64),
                np.array(general.values, dtype=np.float64),
            )
        steps = common.steps[rows]
        walls = common.wall_times[rows]
        values = common.values[rows]
        if general is not None:
            order = np.argsort(
                np.concatenate((common.records[rows], np.array(general.records, dtype=np.int64))),
                kind="stable",
            )
            steps = np.concatenate((steps, np.array(general.steps, dtype=np.int64)))[order]
            walls = np.concatenate((walls, np.array(general.wall_times)))[order]
            values = np.concatenate((values, np.array(general.values)))[order]
        return TagArrays(steps, walls, values)


def scalar_series(data: bytes, tag: str) -> list[tuple[int, float]]:
    """Every finite ``(step, value)`` written for ``tag`` in one whole event file, in file
    order (a trial's metric: a value that is not finite is no objective)."""
    points = EventFileReader().feed(data).get(tag)
    if points is None:
        return []
    return [(s, v) for s, v in zip(points.steps, points.values, strict=True) if math.isfinite(v)]


def records(data: bytes) -> Iterator[bytes]:
    """The data of each whole, intact TFRecord in ``data`` (a torn last record is left out)."""
    from tui_app.model.metrics.tf_event_records import HEADER_BYTES, RecordFramer

    framer = RecordFramer()
    framed = framer.frame(data)
    intact = framer.intact(data, framed.starts, framed.lengths)
    for start, length in zip(
        framed.starts[intact].tolist(), framed.lengths[intact].tolist(), strict=True
    ):
        yield data[start + HEADER_BYTES : start + HEADER_BYTES + length]
