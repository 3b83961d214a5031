"""The scalar curves of one job (or one trial), read incrementally: ``JobScalars.poll()``.

Three sources, each a series per run and tag (``SeriesKey``), as docs/metrics.md describes:

- **events**: TensorFlow summary event files under the job's output folder (``jobDir``; on
  Vertex AI the ``baseOutputDirectory`` it maps to), at any depth. The run is the folder an
  event file is in, relative to the output folder (Keras' ``train``/``validation``, an
  Estimator's ``.`` and ``eval``). In a tuning job's view, a file under ``<jobDir>/<trialId>/``
  belongs to that trial (the platform's idiom for per-trial output). Each file keeps a reader
  and an offset between polls, so it is read once, a new piece at a time;
- **hypertune**: each trial's reports of the goal metric (``trainingOutput.trials[].allMetrics``,
  which the local service fills from the trial's cloudml-hypertune file and Vertex AI from its
  measurements). They carry no wall time: those points sit at NaN on a time axis;
- **logs**: metrics the chief prints (Keras' epoch lines, ``key=value`` pairs with a step, JSON
  lines), for trainers that write no event files: read only while no event file has given a
  point, so one curve is not drawn twice from two sources.

Blocking: the TUI calls ``poll`` from a thread worker, ``tui-app jobs metrics`` from its main
thread. A source that fails says why in its status line and the others go on; only the job read
itself raises.
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tui_app.api.errors import ApiCallError
from tui_app.api.job_outputs import OutputFile, OutputFolder, output_folder
from tui_app.model.jobs.job_spec import DEFAULT_METRIC_TAG
from tui_app.model.jobs.states import JobState
from tui_app.model.jobs.wire import as_list, as_mapping, as_str
from tui_app.model.metrics.log_metrics import LogMetricParser
from tui_app.model.metrics.metric_series import SeriesKey
from tui_app.model.metrics.tf_events import EventFileReader, is_event_file
from tui_app.model.views.trials import objective_points

if TYPE_CHECKING:
    from tui_app.api.connection import Connection
    from tui_app.api.log_feed import LogFeed
    from tui_app.model.logs.log_line import LogLine
    from tui_app.model.metrics.tf_event_records import Floats, Ints

__all__ = ["POLL_SECONDS", "JobScalars", "ScalarBatch", "ScalarPoll", "SourceStatus"]

MAX_BROKEN_SAID = 3
"""Unreadable or broken event files named in the sources line; the rest are counted."""
POLL_SECONDS = 1.0
"""How often a view polls a running job: a point a trainer flushed is on screen within 2 s."""
READ_BUDGET_BYTES = 16 << 20
"""Event-file bytes read per poll at most: a backlog of gigabytes reaches the view in pieces
(``ScalarPoll.more``) instead of holding the poll for a minute, and the bytes and arrays of one
piece (about three times its size) are all a read holds at once."""
PIECE_BYTES = 4 << 20
"""Event-file bytes per download; the next piece downloads while this one is decoded."""
DECODE_SLICE_BYTES = 1 << 20
RELEASE_AFTER_BYTES = 4 << 20
"""After a poll that read this much, freed heap is handed back to the system (see
``_release_heap``)."""
LOG_LINES_PER_POLL = 50_000
CHIEF = "master-replica-0"
"""Log metrics are read from the chief only: every worker of a data-parallel job prints the
same loss, and one curve per worker would bury the chief's."""


@dataclass(frozen=True, slots=True)
class ScalarBatch:
    """New points of one series, as columns: lists, or numpy arrays for event files (a
    million points as Python floats would cost ~100 MB on their way to the view's series,
    which keeps them as arrays anyway). ``columns()`` gives lists either way."""

    key: SeriesKey
    steps: Sequence[int] | Ints
    wall_times: Sequence[float] | Floats
    values: Sequence[float] | Floats

    def columns(self) -> tuple[list[int], list[float], list[float]]:
        return _as_list(self.steps), _as_list(self.wall_times), _as_list(self.values)


def _as_list(column: Any) -> list[Any]:
    return column.tolist() if hasattr(column, "tolist") else list(column)


@dataclass(frozen=True, slots=True)
class SourceStatus:
    """One line for the view: where a source looked and what it found, or what went wrong."""

    source: str
    """``events``, ``hypertune`` or ``logs``."""
    text: str
    problem: bool = False


@dataclass(slots=True)
class ScalarPoll:
    batches: list[ScalarBatch] = field(default_factory=list)
    statuses: list[SourceStatus] = field(default_factory=list)
    job: dict[str, Any] | None = None
    ended: bool = False
    """The job had ended before this poll read its sources: nothing more will come."""
    more: bool = False
    """A backlog is left (the read budget ran out): poll again at once."""


@dataclass(slots=True)
class _FileState:
    reader: EventFileReader
    generation: str = ""
    run: str = ""
    trial: str = ""


class JobScalars:
    """Everything the metrics view and ``jobs metrics`` draw for one job or one trial."""

    def __init__(
        self,
        connection: Callable[[], Connection],
        project: str,
        job_id: str,
        *,
        read_job: Callable[[], dict[str, Any]],
        trial_id: str | None = None,
        live_interval: float = POLL_SECONDS,
    ) -> None:
        self.project = project
        self.job_id = job_id
        self.trial_id = trial_id
        self._connection = connection
        self._read_job = read_job
        self._live_interval = live_interval
        self._files: dict[str, _FileState] = {}
        self._folder: OutputFolder | None = None
        self._folder_conn: Connection | None = None
        self._event_points = 0
        self._bytes_read = 0
        self._hypertune_last: dict[str, int] = {}
        self._feed: LogFeed | None = None
        self._parsers: dict[tuple[str, str], LogMetricParser] = {}
        self._log_points = 0

    # -- the poll ------------------------------------------------------------------------------

    def poll(self) -> ScalarPoll:
        """New points of every source since the last poll.

        Raises:
            ApiCallError: the job could not be read (the service is away, or no such job).
        """
        job = self._read_job()
        ended = JobState(str(job.get("state") or "QUEUED")).is_terminal
        out = ScalarPoll(job=job)
        conn = self._connection()
        read_before = self._bytes_read
        more = self._poll_events(job, conn, out, ended)
        if self._bytes_read - read_before >= RELEASE_AFTER_BYTES:
            _release_heap()
        self._poll_hypertune(job, out)
        more = self._poll_logs(conn, out, ended) or more
        out.more = more
        out.ended = ended and not more
        return out

    # -- events ---------------------------------------------------------------------------------

    def output_root(self, job: dict[str, Any]) -> str:
        """Where this view looks for event files ("" when the job names no output folder)."""
        ti = as_mapping(job.get("trainingInput"))
        job_dir = _text(ti.get("jobDir")).rstrip("/")
        if self.trial_id is None or not job_dir:
            return job_dir
        for trial in as_list(as_mapping(job.get("trainingOutput")).get("trials")):
            t = as_mapping(trial)
            if _text(t.get("trialId")) == self.trial_id:
                directory = _text(as_mapping(t.get("output")).get("directory")).rstrip("/")
                if directory and directory != job_dir:
                    return directory
        return f"{job_dir}/{self.trial_id}"

    def _poll_events(
        self, job: dict[str, Any], conn: Connection, out: ScalarPoll, ended: bool
    ) -> bool:
        root = self.output_root(job)
        if not root:
            out.statuses.append(
                SourceStatus("events", "No event files: the job has no jobDir to look in.")
            )
            return False
        if self._folder is None or self._folder_conn is not conn or self._folder.root != root:
            self._folder = output_folder(root, conn)
            self._folder_conn = conn
        try:
            listed = [
                f
                for f in self._folder.files()
                if is_event_file(f.path) and not _worker_copy(f.path, root)
            ]
        except ApiCallError as exc:
            out.statuses.append(SourceStatus("events", exc.message, problem=True))
            return False
        trials = _trial_ids(job) if self.trial_id is None else set()
        budget = READ_BUDGET_BYTES
        more = False
        corrupt = 0
        broken: list[str] = []
        for file in sorted(listed, key=lambda f: f.path):
            state = self._state_for(file, root, trials)
            if state.reader.problem:
                broken.append(f"{_short(file.path, root)}: {state.reader.problem}")
                continue
            if file.size < state.reader.offset:  # replaced by a shorter file: read it anew
                state = self._files[file.path] = _FileState(
                    EventFileReader(), file.generation, state.run, state.trial
                )
            state.generation = file.generation
            if file.size - state.reader.offset < state.reader.wanted:
                # Nothing new, or not yet the whole of the record being written.
                corrupt += state.reader.corrupt
                continue
            if budget <= 0:
                more = True
                continue
            # At least the record being read (Keras writes its graph as one record of
            # megabytes), even past the budget: less would never make progress.
            end = state.reader.offset + max(budget, state.reader.wanted)
            limited = OutputFile(file.path, min(file.size, end), file.generation)
            carry = b""
            try:
                for piece in _pieces(self._folder, limited, state.reader.offset):
                    budget -= len(piece)
                    self._bytes_read += len(piece)
                    data = carry + piece if carry else piece
                    before = state.reader.offset
                    self._add_events(state, data, out)
                    carry = data[state.reader.offset - before :]
                    if state.reader.problem:
                        break
            except ApiCallError as exc:
                if exc.status_code == 404:  # removed since the listing: the next poll knows
                    continue
                # Said, and retried at the next poll; the other files are read meanwhile.
                broken.append(f"{_short(file.path, root)}: {exc.message}")
                continue
            more = more or limited.size < file.size
            corrupt += state.reader.corrupt
            if state.reader.problem:
                broken.append(f"{_short(file.path, root)}: {state.reader.problem}")
        out.statuses.append(self._events_status(root, listed, corrupt, broken, ended))
        return more

    def _state_for(self, file: OutputFile, root: str, trials: set[str]) -> _FileState:
        state = self._files.get(file.path)
        if state is None:
            run, trial = _run_of(file.path, root, trials)
            state = self._files[file.path] = _FileState(
                EventFileReader(), file.generation, run, trial or (self.trial_id or "")
            )
        return state

    def _add_events(self, state: _FileState, data: bytes, out: ScalarPoll) -> None:
        """Decode ``data`` (the file from the reader's offset on) a slice at a time: the
        reader's numpy passes run about twice as fast over 1 MiB as over 16 MiB (the slice's
        columns stay in the CPU's cache)."""
        import numpy as np

        reader = state.reader
        columns: dict[str, list[tuple[Ints, Floats, Floats]]] = {}
        at = 0
        while at < len(data) and len(data) - at >= reader.wanted:
            size = max(DECODE_SLICE_BYTES, reader.wanted)
            before = reader.offset
            for tag, arrays in reader.feed_arrays(data[at : at + size]).items():
                columns.setdefault(tag, []).append(arrays)
            moved = reader.offset - before
            if reader.problem is not None:
                break
            if moved <= 0:
                # Nothing whole in the slice: a record bigger than it, which ``wanted`` now
                # sizes; try again with all of it, if it is all here.
                if reader.wanted > size:
                    continue
                break
            at += moved
        for tag, pieces in columns.items():
            steps = np.concatenate([p[0] for p in pieces])
            if not len(steps):
                continue
            walls = np.concatenate([p[1] for p in pieces])
            values = np.concatenate([p[2] for p in pieces])
            self._event_points += len(steps)
            key = SeriesKey("events", state.run, tag, state.trial)
            out.batches.append(ScalarBatch(key, steps, walls, values))

    def _events_status(
        self, root: str, listed: list[OutputFile], corrupt: int, broken: list[str], ended: bool
    ) -> SourceStatus:
        if not listed:
            why = f" ({self._folder.note})" if self._folder and self._folder.note else ""
            again = "" if ended else f"; looking again every {self._live_interval:g} s"
            return SourceStatus(
                "events", f"No TensorFlow event files under {root} yet{why}{again}."
            )
        runs = sorted({s.run for s in self._files.values() if s.reader.offset})
        text = f"{_count(len(listed), 'event file')} under {root}"
        if runs:
            text += f" (runs: {', '.join(runs)})"
        notes = []
        if corrupt:
            notes.append(f"{_count(corrupt, 'corrupt record')} skipped")
        if len(broken) > MAX_BROKEN_SAID:  # a storage outage can refuse every file
            broken = [*broken[:MAX_BROKEN_SAID], f"{len(broken) - MAX_BROKEN_SAID} more like it"]
        notes += broken
        if self._folder is not None and self._folder.note:
            notes.append(self._folder.note)  # what the listing had to leave out
        if notes:
            text += "; " + "; ".join(notes)
        return SourceStatus("events", text + ".", problem=bool(notes))

    # -- hypertune ------------------------------------------------------------------------------

    def _poll_hypertune(self, job: dict[str, Any], out: ScalarPoll) -> None:
        ti = as_mapping(job.get("trainingInput"))
        spec = as_mapping(ti.get("hyperparameters"))
        if not spec:
            return
        tag = _text(spec.get("hyperparameterMetricTag")) or DEFAULT_METRIC_TAG
        reported = 0
        for trial in as_list(as_mapping(job.get("trainingOutput")).get("trials")):
            t = as_mapping(trial)
            trial_id = _text(t.get("trialId"))
            if not trial_id or (self.trial_id is not None and trial_id != self.trial_id):
                continue
            points = _reports(t)
            if points:
                reported += 1
            last = self._hypertune_last.get(trial_id)
            fresh = [(s, v) for s, v in points if last is None or s > last]
            if not fresh:
                continue
            self._hypertune_last[trial_id] = fresh[-1][0]
            out.batches.append(
                ScalarBatch(
                    SeriesKey("hypertune", "", tag, trial_id),
                    [s for s, _ in fresh],
                    [math.nan] * len(fresh),
                    [v for _, v in fresh],
                )
            )
        if not reported:
            text = f"Hypertune: no {tag} reports yet."
        elif self.trial_id is not None:
            text = f"Hypertune: {tag} reported by trial {self.trial_id}."
        else:
            text = f"Hypertune: {tag} reported by {_count(reported, 'trial')}."
        out.statuses.append(SourceStatus("hypertune", text))

    # -- logs -----------------------------------------------------------------------------------

    def _poll_logs(self, conn: Connection, out: ScalarPoll, ended: bool) -> bool:
        if self._event_points:
            if self._log_points:
                out.statuses.append(
                    SourceStatus("logs", "Log lines: no longer read (event files found).")
                )
            return False
        from tui_app.api.log_feed import LogFeed

        try:
            if self._feed is None:
                feed = LogFeed(
                    self.project,
                    self.job_id,
                    self._read_job,
                    self._connection,
                    task_name=CHIEF,
                    trial_id=self.trial_id,
                    settle=not ended,
                    batch_limit=LOG_LINES_PER_POLL,
                )
                feed.open()
                self._feed = feed
            lines = self._feed.read_all()
        except ApiCallError as exc:
            self._feed = None if not exc.transient else self._feed
            out.statuses.append(SourceStatus("logs", f"Log lines: {exc.message}", problem=True))
            return False
        # Per series, step -> (wall time, value): a Keras epoch's progress updates and a
        # re-printed epoch give one step several times, and the last printed value wins.
        by_key: dict[SeriesKey, dict[int, tuple[float, float]]] = {}
        for line in lines:
            parser = self._parsers.setdefault(
                (line.task_name, line.trial_id or ""), LogMetricParser()
            )
            points = parser.feed(line.text)
            if not points:
                continue
            wall = _epoch_seconds(line)
            for p in points:
                key = SeriesKey("logs", line.task_name, p.tag, line.trial_id or "")
                steps = by_key.setdefault(key, {})
                steps.pop(p.step, None)  # re-inserted: its place is where it was last printed
                steps[p.step] = (wall, p.value)
        for key, steps in by_key.items():
            self._log_points += len(steps)
            out.batches.append(
                ScalarBatch(
                    key,
                    list(steps),
                    [w for w, _ in steps.values()],
                    [v for _, v in steps.values()],
                )
            )
        if self._log_points:
            text = f"Log lines: metrics printed by {CHIEF} (no event files found)."
        else:
            text = f"Log lines: no metrics printed by {CHIEF} yet."
        out.statuses.append(SourceStatus("logs", text))
        return len(lines) >= LOG_LINES_PER_POLL


def _pieces(folder: OutputFolder, file: OutputFile, start: int) -> Iterator[bytes]:
    """``file``'s bytes from ``start`` to its listed size, in pieces of ``PIECE_BYTES``, each
    fetched while the caller decodes the one before (the download waits on the socket and the
    decoding on the CPU: overlapped, a backlog reads about half again as fast).

    Raises:
        ApiCallError: a piece could not be read; the pieces before it were given.
    """
    bounds = list(range(start, file.size, PIECE_BYTES))
    if len(bounds) <= 1:
        if bounds:
            yield folder.read(file, start)
        return

    def fetch(at: int) -> bytes:
        end = min(file.size, at + PIECE_BYTES)
        return folder.read(OutputFile(file.path, end, file.generation), at)

    with ThreadPoolExecutor(1, thread_name_prefix="event-read") as pool:
        pending: Future[bytes] = pool.submit(fetch, bounds[0])
        for at in [*bounds[1:], None]:
            piece = pending.result()
            if at is not None:
                pending = pool.submit(fetch, at)
            yield piece


def _release_heap() -> None:
    """Return freed heap to the system, where the C library allows it (glibc's malloc_trim).

    Reading a backlog allocates and frees tens of megabytes a poll (the bytes read, numpy's
    columns); glibc keeps freed chunks in its heap, so a view that read 20M points showed 180 MB
    more RSS for 20 MB of live data. Trimming after each large read keeps the process at what
    it holds (measured: 13 MB more instead of 70 MB after 2M points)."""
    global _MALLOC_TRIM
    if _MALLOC_TRIM is None:
        try:
            _MALLOC_TRIM = ctypes.CDLL("libc.so.6").malloc_trim
        except (OSError, AttributeError):  # not glibc (macOS, musl): nothing to do
            _MALLOC_TRIM = False
    if _MALLOC_TRIM:
        _MALLOC_TRIM(0)


_MALLOC_TRIM: Any = None


def _text(value: object) -> str:
    return as_str(value) or ""


def _trial_ids(job: dict[str, Any]) -> set[str]:
    trials = as_list(as_mapping(job.get("trainingOutput")).get("trials"))
    ids = {_text(as_mapping(t).get("trialId")) for t in trials}
    return {i for i in ids if i}


def _worker_copy(path: str, root: str) -> bool:
    """Whether an event file is a non-chief worker's copy: under a distribution strategy,
    Keras' TensorBoard callback has each worker but the chief write into
    ``<log_dir>/workertemp_<id>/`` (removed when training ends), the same numbers again. Left
    out, as the chief's own run is the job's curve."""
    rel = path[len(root) :] if path.startswith(root) else path
    return any(part.startswith("workertemp_") for part in rel.split("/")[:-1])


def _run_of(path: str, root: str, trials: set[str]) -> tuple[str, str]:
    """``(run, trial)`` of an event file: its folder relative to ``root``, and the trial whose
    ``<root>/<trialId>/`` holds it ("" when none does)."""
    rel = path[len(root) :].lstrip("/") if path.startswith(root) else path
    folder = rel.rpartition("/")[0]
    head, _, rest = folder.partition("/")
    if head in trials:
        return rest or ".", head
    return folder or ".", ""


def _reports(trial: Mapping[str, Any]) -> list[tuple[int, float]]:
    """A trial's ``(step, value)`` reports, by step; ``finalMetric`` when there is no history."""
    return objective_points(as_list(trial.get("allMetrics")) or [trial.get("finalMetric")])


def _epoch_seconds(line: LogLine) -> float:
    try:
        return line.when().timestamp()
    except ValueError:
        return math.nan


def _short(path: str, root: str) -> str:
    return path[len(root) :].lstrip("/") if path.startswith(root) else path


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
