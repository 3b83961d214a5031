"""What a job diff needs besides the Job resource, and which job a copy was made from.

``gather_facts`` reads, for one job, the local service's ``:environment`` answer (the bytes each
trainer package had, by sha256; the runtime's framework versions) and the last value of each of
its scalar series (``JobScalars``, one bounded poll). Neither may fail a diff: what cannot be
read is left out, and the document says so in a note (``JobFacts.notes``).

``ResubmitHistory`` remembers, per user, which job each resubmitted job was made from (``R``,
``E`` then submit in the builder, ``tui-app jobs resubmit``): ``D`` on one job compares it with
that job when it is still listed (``model.job_diff.diff_partner``). The Job resource has no
field for it, and a label would be a difference of its own in every diff.

Blocking: the TUI calls these from thread workers.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from tui_app.api.errors import ApiCallError
from tui_app.config.locations import resubmit_history_file
from tui_app.model.views.job_diff import JobFacts

if TYPE_CHECKING:
    from tui_app.api.connection import Connection
    from tui_app.api.job_scalars import ScalarPoll

__all__ = ["HISTORY_LIMIT", "ResubmitHistory", "gather_facts", "last_values"]

HISTORY_LIMIT: Final = 10_000
"""Records kept (the newest): a year of heavy use in about a megabyte, read in milliseconds."""


def gather_facts(connection: Connection, project: str, job: Mapping[str, Any]) -> JobFacts:
    """``job`` and what the service can tell of it, for ``model.job_diff.comparison_document``.

    Blocking (two or three calls to the service, and the job's event files up to one poll's
    read budget): call it from a worker thread.

    Args:
        connection: The profile's connection (the local service's extensions, its storage).
        project: The job's project.
        job: The jobs.get answer.

    Returns:
        The facts; ``environment`` None where the backend has no ``:environment`` (a cloud
        one) or it could not be read, ``metrics`` None where they could not be read, with a
        note saying why.
    """
    notes: list[str] = []
    environment = _environment(connection, project, job, notes)
    metrics = _metrics(connection, project, job, notes)
    return JobFacts(job, project, environment, metrics, tuple(notes))


def _environment(
    connection: Connection, project: str, job: Mapping[str, Any], notes: list[str]
) -> Mapping[str, Any] | None:
    if connection.vertex:
        return None  # Vertex AI has no such extension: the document says "unknown"
    with connection.metrics(project) as client:
        try:
            return client.environment(str(job.get("jobId")))
        except ApiCallError as exc:
            notes.append(f"environment: not read ({exc})")
            return None


def _metrics(
    connection: Connection, project: str, job: Mapping[str, Any], notes: list[str]
) -> dict[str, float] | None:
    from tui_app.api.job_scalars import JobScalars  # numpy and the event decoders: when used

    job_id = str(job.get("jobId"))
    scalars = JobScalars(lambda: connection, project, job_id, read_job=lambda: dict(job))
    try:
        poll = scalars.poll()
    except Exception as exc:  # a diff is still worth having without its metrics
        why = exc.message if isinstance(exc, ApiCallError) else f"{type(exc).__name__}: {exc}"
        notes.append(f"metrics: not read ({why})")
        return None
    values, partial = last_values(poll)
    if partial:
        notes.append("metrics: the event files are larger than one read; their values are left out")
    notes.extend(f"metrics ({s.source}): {s.text}" for s in poll.statuses if s.problem)
    return values


def last_values(poll: ScalarPoll) -> tuple[dict[str, float], bool]:
    """The last value of each of the job's own series in ``poll`` (``tag``, or ``run/tag``
    for a run other than the output folder), and whether event files were left unread.

    A tuning job's per-trial series are left out (the outcome names the best trial). With a
    backlog left (``poll.more``), the event files' values so far are not their last: they are
    left out rather than compared as if they were.
    """
    from tui_app.model.metrics.metric_series import drawn_keys

    last: dict[Any, float] = {}
    for batch in poll.batches:
        if batch.key.trial or (poll.more and batch.key.source == "events") or not len(batch.values):
            continue
        last[batch.key] = float(batch.values[-1])
    out: dict[str, float] = {}
    for key in drawn_keys(last):
        name = key.tag if key.run in ("", ".") else f"{key.run}/{key.tag}"
        out.setdefault(name, last[key])
    return out, poll.more


class ResubmitHistory:
    """Which job each resubmitted job was made from: one JSON line per resubmit, per user.

    The file is rewritten whole (a temporary file renamed over it, under a lock, so the TUI
    and a script resubmitting at once lose neither record) and keeps the newest
    ``HISTORY_LIMIT`` records. A line that cannot be read is skipped, and a file that cannot
    be read at all is no history: provenance is a convenience, never a reason to fail.
    """

    def __init__(self, path: Path | None = None, limit: int = HISTORY_LIMIT) -> None:
        self.path = path or resubmit_history_file()
        self.limit = limit

    def record(self, project: str, new_id: str, old_id: str) -> None:
        """Remember that ``new_id`` was resubmitted from ``old_id`` in ``project``.

        Never raises: a file that cannot be written (a read-only home, a full disk) leaves
        the job created and its provenance unknown.
        """
        line = {
            "project": project,
            "new": new_id,
            "old": old_id,
            "at": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        }
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._locked():
                records = [*self._records(), line][-self.limit :]
                self._write(records)

    def sources(self, project: str) -> dict[str, str]:
        """New id -> the id it was resubmitted from, for ``project`` (the latest record wins)."""
        return {r["new"]: r["old"] for r in self._records() if r["project"] == project}

    def _records(self) -> list[dict[str, str]]:
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return []
        records = []
        for raw in text.splitlines():
            try:
                record = json.loads(raw)
            except ValueError:
                continue
            if isinstance(record, dict) and all(
                isinstance(record.get(k), str) and record.get(k) for k in ("project", "new", "old")
            ):
                records.append({k: str(v) for k, v in record.items()})
        return records

    def _write(self, records: list[dict[str, str]]) -> None:
        fd, tmp = tempfile.mkstemp(prefix=".resubmits-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with open(self.path.with_name(self.path.name + ".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
