"""When a replica runs again: the platform's restart rules, as data and pure decisions.

The platform ("Understanding the AI Platform Training service") started a replica again, with
the same hostname and task, when its VM went away (maintenance, a host failure) and when it
exited non-zero with an error that is not one of the common, permanent ones; each replica got a
bounded number of restarts, then the whole job was retried a bounded number of times, then it
failed. Trainers were asked to checkpoint to ``--job-dir`` and resume from there.

The executors only report what happened (``Ending``: the machine was lost, or the replica exited
with a status); this module decides what follows, and words it for the job's log and its
errorMessage. docs/restarts.md gives the rules and the reasons for the choices made where the
page is silent. One rule stands above the page's list: a trainer that ends with a Python
traceback of its own is a bug, and the job fails at once (restarting it would only hide it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from tui_app.model.jobs.task_names import SERVICE_TASK
from tui_app.model.jobs.wire import as_int, as_list, as_mapping

__all__ = [
    "BACKOFF_CAP_SECONDS",
    "JOB_RETRY_LIMIT",
    "JOB_RETRY_LINE",
    "NODE_WAIT_SECONDS",
    "PERMANENT_STATUSES",
    "REPLICA_RESTART_LIMIT",
    "RESTART_LINE_MARK",
    "WHOLE_JOB",
    "Attempt",
    "Cause",
    "Ending",
    "Outcome",
    "ReplicaRestarts",
    "RestartHistory",
    "Verdict",
    "attempt_lines",
    "backoff_seconds",
    "decide",
    "exit_is_permanent",
    "failure_message",
    "is_restart_divider",
    "job_retry_line",
    "restart_line",
    "restart_line_task",
    "restart_note",
    "restarts_from_job",
    "restarts_resource",
    "total_restarts",
    "trial_line",
]

REPLICA_RESTART_LIMIT = 5
"""Restarts one replica gets, whatever their causes (the page's five)."""
JOB_RETRY_LIMIT = 3
"""Whole-job retries after a replica used up its restarts (the page's three)."""
BACKOFF_BASE_SECONDS = 1.0
BACKOFF_CAP_SECONDS = 30.0
"""A replica that keeps failing waits 1, 2, 4... seconds before each new attempt, at most this:
a crash loop does not spin a core, and a lost machine still costs seconds, not minutes."""

NODE_WAIT_SECONDS = 600.0
"""How long a run whose node died waits for room on the others before it fails naming the
node: long enough for a node to be replaced or rejoin, short of burning the job's
``maxRunningTime`` on nothing."""

RESTART_LINE_MARK = " restarted ("
"""What every restart line holds after the task name: the logs view draws such a service
line as a divider (``restart_line`` writes them)."""


WHOLE_JOB = "job"
"""The ``taskName`` a whole-job retry is counted under (``Attempt``, ``replicaRestarts``)."""


class Cause(Enum):
    """Why a replica stopped running before the job ended."""

    MACHINE_LOST = "machine"
    """Its machine went away under it: the service found it gone after a restart of the
    machine, or its Ray node died."""
    EXITED = "exit"
    """It exited with a non-zero status that is not a permanent error."""


@dataclass(frozen=True)
class Ending:
    """How a replica ended, as an executor saw it."""

    task_name: str
    cause: Cause
    detail: str
    """In words, for the log and the errorMessage: ``its machine restarted``, ``the node
    10.0.0.3 died``, ``it exited with status 3``."""


@dataclass(frozen=True)
class Attempt:
    """One restart (or job retry) already made."""

    task_name: str
    """The replica restarted, or ``job`` for a retry of the whole job."""
    detail: str
    at: str
    """When, as an RFC 3339 time (the service's clock)."""


@dataclass
class RestartHistory:
    """Every restart of one job so far: what ``decide`` counts against the limits."""

    attempts: list[Attempt] = field(default_factory=list)
    job_retries: int = 0

    def replica_restarts(self, task_name: str) -> int:
        """Restarts of ``task_name`` since the job (or its last retry) started."""
        count = 0
        for attempt in reversed(self.attempts):
            if attempt.task_name == WHOLE_JOB:
                break
            if attempt.task_name == task_name:
                count += 1
        return count

    def as_json(self) -> dict[str, Any]:
        """What the service stores with the job's runtime record."""
        return {
            "attempts": [
                {"taskName": a.task_name, "detail": a.detail, "time": a.at} for a in self.attempts
            ],
            "jobRetries": self.job_retries,
        }

    @classmethod
    def from_json(cls, raw: object) -> RestartHistory:
        """The stored history; what cannot be read is left out (a record from an older
        service has none)."""
        body = as_mapping(raw)
        attempts = []
        for item in as_list(body.get("attempts")):
            entry = as_mapping(item)
            name, detail, at = entry.get("taskName"), entry.get("detail"), entry.get("time")
            if isinstance(name, str) and isinstance(detail, str) and isinstance(at, str):
                attempts.append(Attempt(name, detail, at))
        return cls(attempts, max(0, as_int(body.get("jobRetries")) or 0))


class Verdict(Enum):
    RESTART_REPLICA = "restart"
    RETRY_JOB = "retry"
    FAIL = "fail"


@dataclass(frozen=True)
class Outcome:
    """What follows an ``Ending``."""

    verdict: Verdict
    number: int
    """The restart's (or retry's) number, from 1; 0 for FAIL."""
    limit: int
    delay: float
    """Seconds to wait before starting again."""
    message: str
    """For the job's log (a restart, a retry) or its errorMessage (a failure)."""


def backoff_seconds(attempt: int) -> float:
    """Seconds before the ``attempt``-th restart of one replica (from 1). A lost machine's first
    restart is immediate: nothing says the new one will fail too."""
    if attempt <= 1:
        return 0.0
    return min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * float(2 ** (attempt - 2)))


def _restarted_of(task_name: str, number: int, limit: int) -> str:
    """``master-replica-0 restarted (1 of 5)``: how the log line and the toast begin."""
    return f"{task_name}{RESTART_LINE_MARK}{number} of {limit})"


def restart_line(task_name: str, number: int, limit: int, detail: str) -> str:
    """``master-replica-0 restarted (1 of 5): its machine restarted; resuming``."""
    return f"{_restarted_of(task_name, number, limit)}: {detail}; resuming"


JOB_RETRY_LINE = "Restarting the whole job ("
"""How a whole-job retry's line in the job's log starts (``job_retry_line``)."""


def job_retry_line(number: int, limit: int, why: str) -> str:
    """``Restarting the whole job (1 of 3): <why>``: the service's line for a whole-job retry,
    whichever executor made it."""
    return f"{JOB_RETRY_LINE}{number} of {limit}): {why}"


def is_restart_divider(task_name: str, text: str) -> bool:
    """Whether the logs view draws this line as a divider: the service's line for a replica's
    restart or for a whole-job retry (a trainer printing the same words gets a plain line)."""
    if restart_line_task(task_name, text) is not None:
        return True
    return task_name == SERVICE_TASK and text.startswith(JOB_RETRY_LINE)


TRIAL_LINE = "Trial "
"""How the service's lines about one trial of a tuning job start (``trial_line``)."""


def trial_line(trial_id: str, message: str) -> str:
    """``Trial 3: <message>``: the service's line about one trial of a tuning job."""
    return f"{TRIAL_LINE}{trial_id}: {message}"


def _without_trial(text: str) -> str:
    """``text`` less a ``trial_line`` prefix, when it has one."""
    if text.startswith(TRIAL_LINE):
        trial, colon, rest = text[len(TRIAL_LINE) :].partition(": ")
        if colon and trial and " " not in trial:
            return rest
    return text


def restart_line_task(task_name: str, text: str) -> str | None:
    """The replica a log line says was restarted, when it is one of ``restart_line``'s (a
    trial's included); else None. Only the service's own lines count: a trainer that prints the
    same words did not restart anything, and the logs view must not draw its line as a
    divider."""
    if task_name != SERVICE_TASK:
        return None
    head, mark, rest = _without_trial(text).partition(RESTART_LINE_MARK)
    if not mark or not head or " " in head or not rest[:1].isdigit():
        return None
    return head


def decide(
    history: RestartHistory,
    ending: Ending,
    *,
    replica_limit: int = REPLICA_RESTART_LIMIT,
    job_limit: int = JOB_RETRY_LIMIT,
    retries_allowed: bool = True,
) -> Outcome:
    """What the platform did next: restart the replica while it has restarts left, else retry
    the whole job while retries are left (``retries_allowed`` False: Vertex AI's
    ``disableRetries``), else fail naming every attempt."""
    used = history.replica_restarts(ending.task_name)
    if used < replica_limit:
        number = used + 1
        return Outcome(
            Verdict.RESTART_REPLICA,
            number,
            replica_limit,
            backoff_seconds(number),
            restart_line(ending.task_name, number, replica_limit, ending.detail),
        )
    if retries_allowed and history.job_retries < job_limit:
        number = history.job_retries + 1
        return Outcome(
            Verdict.RETRY_JOB,
            number,
            job_limit,
            backoff_seconds(number + 1),
            job_retry_line(
                number,
                job_limit,
                f"{ending.task_name} used its {replica_limit} restarts and {ending.detail}.",
            ),
        )
    return Outcome(Verdict.FAIL, 0, 0, 0.0, failure_message(history, ending, replica_limit))


def failure_message(history: RestartHistory, ending: Ending, replica_limit: int) -> str:
    """The errorMessage of a job that ran out of restarts: the last ending, then each attempt
    and its cause, oldest first."""
    lines = [
        f"The replica {ending.task_name} kept failing: {ending.detail}, after "
        f"{replica_limit} restart{'s' if replica_limit != 1 else ''}"
        + (
            f" and {history.job_retries} job retr{'ies' if history.job_retries != 1 else 'y'}."
            if history.job_retries
            else "."
        )
    ]
    return "\n".join([*lines, *attempt_lines(history)])


def attempt_lines(history: RestartHistory) -> list[str]:
    """Each restart and retry, oldest first: ``  <time>  <replica or "whole job retried">:
    <cause>``, for a failure's errorMessage."""
    return [
        f"  {a.at}  {'whole job retried' if a.task_name == WHOLE_JOB else a.task_name}: {a.detail}"
        for a in history.attempts
    ]


PERMANENT_STATUSES: Mapping[int, str] = {
    125: "the container engine failed",
    126: "its command cannot be run",
    127: "its command was not found",
}
"""Exit statuses that say the replica can never start, wherever it runs: the ones ``podman
run`` and ``docker run`` keep for themselves (a container's own pass through unchanged), and a
shell's for a command it cannot run or find. The runner words a container's failed start with
them."""


def exit_is_permanent(
    code: int | None, *, traceback: bool, out_of_memory: bool, engine_error: bool = False
) -> bool:
    """Whether a non-zero exit fails the job at once (the page's common errors) instead of
    restarting the replica: the trainer's own Python traceback (a bug; this project's rule),
    running out of memory (the same machine type runs out again), and a command or image that
    cannot start. A signal nobody sent, or an exit status without a traceback, may be transient:
    the replica is restarted."""
    if traceback or out_of_memory or engine_error:
        return True
    return code in PERMANENT_STATUSES


@dataclass(frozen=True)
class ReplicaRestarts:
    """One replica's restarts, as a job resource carries them (``replicaRestarts``)."""

    task_name: str
    count: int
    last_cause: str
    last_time: str


def restarts_from_job(job: Mapping[str, Any]) -> list[ReplicaRestarts]:
    """The job resource's ``replicaRestarts`` (the local service's addition to ml v1's Job),
    readable or left out; empty for a job that never restarted or a backend without it."""
    out = []
    for item in as_list(job.get("replicaRestarts")):
        entry = as_mapping(item)
        name = entry.get("taskName")
        count = as_int(entry.get("count")) or 0
        if isinstance(name, str) and count > 0:
            out.append(
                ReplicaRestarts(
                    name,
                    count,
                    str(entry.get("lastCause") or ""),
                    str(entry.get("lastTime") or ""),
                )
            )
    return out


def restarts_resource(history: RestartHistory) -> list[dict[str, Any]]:
    """``replicaRestarts`` of the job resource, from its history: per replica, how many
    restarts, the last one's cause and time (whole-job retries under ``job``)."""
    by_task: dict[str, dict[str, Any]] = {}
    for attempt in history.attempts:
        entry = by_task.setdefault(attempt.task_name, {"taskName": attempt.task_name, "count": 0})
        entry["count"] += 1
        entry["lastCause"] = attempt.detail
        entry["lastTime"] = attempt.at
    return list(by_task.values())


def restart_note(
    restarts: ReplicaRestarts,
    *,
    retried: bool = False,
    replica_limit: int = REPLICA_RESTART_LIMIT,
    job_limit: int = JOB_RETRY_LIMIT,
) -> str:
    """``master-replica-0 restarted (1 of 5): its machine restarted``: a replica's latest
    restart as its log line says it, less the ``; resuming`` (the watch's toast).

    The resource counts every restart of a replica, while a whole-job retry gives each replica
    its restarts anew: once the job was ``retried`` (or past the limit) "N of 5" would be
    wrong, and the count is said as "N times" instead.
    """
    count, cause = restarts.count, restarts.last_cause
    if restarts.task_name == WHOLE_JOB:
        what = f"the whole job retried ({count} of {job_limit})"
        if count > job_limit:
            what = f"the whole job retried ({count} times)"
    elif count <= replica_limit and not retried:
        what = _restarted_of(restarts.task_name, count, replica_limit)
    else:
        what = f"{restarts.task_name} restarted ({count} time{'s' if count != 1 else ''})"
    return f"{what}: {cause}" if cause else what


def total_restarts(restarts: Sequence[ReplicaRestarts]) -> int:
    """The list's ↻ figure: every restart of every replica, and whole-job retries."""
    return sum(r.count for r in restarts)
