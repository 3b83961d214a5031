"""``MetricsClient``: per-replica CPU and memory samples from the local service's extension,
the runtime environment a job got (``:environment``), why a queued job waits (``:queue``) and
a long poll until a job changes (``:wait``).

``GET /v1/projects/{project}/jobs/{job}:metrics[?since=]`` is not in the ml v1 discovery
document (the service documents it in ``tui_app/local/metrics.py``), so it goes through the same
credentials as ``JobsClient`` on a ``google.auth`` ``AuthorizedSession``. A cloud endpoint has no
such method: a 404, 405 or 501 reads as "not available" (``None``), and the UI hides the charts.
Every call is blocking: the TUI runs them in thread workers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from tui_app.api.errors import ApiCallError, rpc_error_parts
from tui_app.model.jobs.wire import as_float, as_list, as_mapping, parse_time
from tui_app.model.stacks import JobStacks, StackFormatError
from tui_app.model.views.replica_nodes import PlacedReplica, parse_node, parse_placed
from tui_app.model.views.replica_usage import ReplicaSamples, UsageSample

if TYPE_CHECKING:
    from google.auth.credentials import Credentials

DEFAULT_TIMEOUT_SECONDS = 10.0
NOT_AVAILABLE = frozenset({404, 405, 501})
"""Answers that mean "this endpoint has no metrics" rather than "this call failed"."""
WAIT_MAX_SECONDS = 55.0
"""The longest ``:wait`` the local service holds a request (``local/server.py``)."""
HISTORY_CAP = 4096
"""Samples a ``UsageHistory`` keeps per replica before it reads the service's (merged) copy."""
NO_SAMPLES_SINCE = "9999-12-31T00:00:00.000000Z"
"""A ``since`` no sample is later than: the answer lists every replica (and its node) with no
samples, a few hundred bytes however long the job ran (``placement``)."""


@dataclass(frozen=True)
class JobMetrics:
    """One ``:metrics`` answer."""

    replicas: list[ReplicaSamples]
    interval_seconds: float | None = None
    """How often the service samples (``sampleInterval``), when it says."""
    trials: list[PlacedReplica] = field(default_factory=list)
    """A tuning job's trials' replicas that ran on other nodes. They carry no samples and
    share the job's task names, so they are kept apart from ``replicas`` (the charts')."""

    def placement(self) -> list[PlacedReplica]:
        """Every replica that runs on another node: the job's own, then its trials'."""
        own = [PlacedReplica(r.task_name, r.node) for r in self.replicas if r.node is not None]
        return own + self.trials


def _float(value: object) -> float:
    # A sample's figure the service left out or garbled draws as 0 rather than a gap.
    return as_float(value, keep_nan=True) or 0.0


def _sample(raw: object) -> UsageSample | None:
    if not isinstance(raw, dict):
        return None
    stamp = raw.get("time")
    moment = parse_time(stamp)
    if moment is None or not isinstance(stamp, str):
        return None
    cpu = _float(raw.get("cpuPercent"))
    return UsageSample(
        moment,
        cpu,
        int(_float(raw.get("memoryBytes"))),
        max(cpu, _float(raw.get("cpuPercentMax"))),
        stamp,
    )


def parse_metrics(body: object) -> JobMetrics:
    """A ``:metrics`` JSON body; malformed parts are left out, never raised."""
    data = as_mapping(body)
    replicas: list[ReplicaSamples] = []
    trials: list[PlacedReplica] = []
    for rep in as_list(data.get("replicas")):
        if not isinstance(rep, dict) or not isinstance(rep.get("taskName"), str):
            continue
        if rep.get("trialId") is not None:
            if (placed := parse_placed(rep)) is not None and placed.trial_id is not None:
                trials.append(placed)
            continue
        samples = [s for raw in as_list(rep.get("samples")) if (s := _sample(raw)) is not None]
        samples.sort(key=lambda s: s.time)
        replicas.append(ReplicaSamples(rep["taskName"], samples, parse_node(rep.get("node"))))
    return JobMetrics(replicas, _seconds(data.get("sampleInterval")), trials)


def _seconds(value: object) -> float | None:
    """A Duration string (``2s``, ``0.5s``) in seconds; None when it is not one."""
    if not isinstance(value, str) or not value.endswith("s"):
        return None
    try:
        seconds = float(value[:-1])
    except ValueError:
        return None
    return seconds if seconds > 0 else None


class MetricsClient:
    """The ``:metrics`` extension of one project at one endpoint."""

    def __init__(
        self,
        endpoint: str,
        project: str,
        credentials: Credentials,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        session: Any = None,
    ) -> None:
        """``session``: what sends the GETs, a ``requests.Session`` alike; by default one that
        signs them with ``credentials`` (tests replay recorded answers through their own, as
        ``VertexJobsClient`` takes an ``http``)."""
        self.endpoint = endpoint.rstrip("/")
        self.project = project
        self.timeout = timeout
        if session is None:
            # Imported here: requests loads in the worker thread, not before the first frame.
            from google.auth.transport.requests import AuthorizedSession

            session = AuthorizedSession(credentials)  # type: ignore[no-untyped-call]
        self._session = session

    def close(self) -> None:
        self._session.close()

    def __enter__(self) -> MetricsClient:
        return self

    def __exit__(self, *exc: object) -> None:
        """``with connection.metrics(project) as client:`` closes its HTTP session after."""
        self.close()

    def read(self, job_id: str, since: str | None = None) -> JobMetrics | None:
        """The job's samples (only those after ``since``); None when the endpoint has none.

        Raises:
            ApiCallError: the call failed (nothing answered, auth, a bad ``since``...).
        """
        resp, body = self._get(job_id, "metrics", {"since": since} if since else None)
        answer = _answer(resp, body)
        return None if answer is None else parse_metrics(answer)

    def placement(self, job_id: str) -> list[PlacedReplica] | None:
        """Which node each of the job's replicas (and its trials') runs on: ``[]`` when all
        run on the service's own machine or none has started; None where the endpoint has no
        ``:metrics`` (a cloud one). Reads no samples (``NO_SAMPLES_SINCE``).

        Raises:
            ApiCallError: the call failed.
        """
        metrics = self.read(job_id, NO_SAMPLES_SINCE)
        return None if metrics is None else metrics.placement()

    def environment(self, job_id: str) -> dict[str, Any] | None:
        """The job's runtime environment (``:environment``, the local service's extension):
        ``{}`` until it is ready; None where the endpoint has no such method (a cloud one).

        Raises:
            ApiCallError: the call failed.
        """
        return self._extension(job_id, "environment")

    def queue(self, job_id: str) -> dict[str, Any] | None:
        """Why the job waits (``:queue``, the local service's extension): ``{}`` when it does
        not wait; None where the endpoint has no such method (a cloud one).

        Raises:
            ApiCallError: the call failed.
        """
        return self._extension(job_id, "queue")

    def stacks(
        self,
        job_id: str,
        replica: str | None = None,
        trial: str | None = None,
        with_locals: bool = False,
        at_stall: bool = False,
    ) -> JobStacks | None:
        """Every live replica's Python threads now (``:stacks``, the local service's
        extension), or those it kept when the job stalled (``at_stall``); None where the
        endpoint has no such method (a cloud one).

        Raises:
            ApiCallError: the call failed, or the service refused: the job runs no replica (or
                not the one asked for), it never stalled; the message says which.
        """
        params: dict[str, str] = {}
        if at_stall:
            params["at"] = "stall"
        if replica:
            params["replica"] = replica
        if trial:
            params["trialId"] = trial
        if with_locals:
            params["locals"] = "true"
        # A dump takes ~15 ms a replica, but a Ray node's may take seconds to answer.
        resp, body = self._get(job_id, "stacks", params or None, (self.timeout, 40.0))
        if resp.status_code == 404 and _refused(body):
            raise _error(resp.status_code, body, resp.reason)
        answer = _answer(resp, body)
        if answer is None:
            return None
        try:
            return JobStacks.from_json(answer)
        except StackFormatError as exc:
            raise ApiCallError(f"The service's stacks cannot be read: {exc}", 502) from None

    def wait_for_change(
        self, job_id: str, etag: str | None, timeout_seconds: float
    ) -> dict[str, Any] | None:
        """The job (as jobs.get answers it) once its etag names another version than ``etag``,
        or as it is after ``timeout_seconds`` (at most ``WAIT_MAX_SECONDS``): the local
        service's ``:wait`` long poll. None where the endpoint has no such method (a cloud
        one, an older service): the caller polls jobs.get instead.

        Raises:
            ApiCallError: the call failed; an unknown job is a 404 (``status_code``), told
                apart from a missing method by the google.rpc body naming the job.
        """
        wait = min(timeout_seconds, WAIT_MAX_SECONDS) if timeout_seconds > 0 else 0.0
        params = {"timeoutSeconds": f"{wait:g}"}
        if etag:
            params["etag"] = etag
        # The read timeout runs from the request's end: the answer may take the whole wait.
        resp, body = self._get(job_id, "wait", params, (self.timeout, wait + self.timeout))
        if resp.status_code == 404 and self._names_job(body, job_id):
            raise _error(resp.status_code, body, resp.reason)
        return _answer(resp, body)

    def _names_job(self, body: Any, job_id: str) -> bool:
        """Whether a 404's body is "no such job" rather than "no such method".

        The local service's unknown job is NOT_FOUND with a ``name`` field violation and a
        message ending in the job's name; a service without the method answers 404 with
        "Unknown method :wait" (an older local one), "The requested URL .../jobs/J:wait was
        not found" or an HTML page (a cloud front end), none of which pass this test.
        """
        err = body.get("error") if isinstance(body, dict) else None
        if not isinstance(err, dict) or err.get("status") != "NOT_FOUND":
            return False
        _, message, violations = rpc_error_parts(err, "NOT_FOUND", "")
        name = f"projects/{self.project}/jobs/{job_id}"
        return str(message).endswith(name) or any(
            isinstance(v, dict) and v.get("field") == "name" for v in violations
        )

    def _get(
        self,
        job_id: str,
        method: str,
        params: dict[str, str] | None = None,
        timeout: float | tuple[float, float] | None = None,
    ) -> tuple[Any, Any]:
        """GET ``.../jobs/{job_id}:{method}``: the response and its JSON body (None when it is
        not JSON).

        Raises:
            ApiCallError: nothing answered, or no credentials.
        """
        from google.auth import exceptions as auth_exc
        from requests import RequestException

        url = (
            f"{self.endpoint}/v1/projects/{quote(self.project, safe='')}"
            f"/jobs/{quote(job_id, safe='')}:{method}"
        )
        try:
            resp = self._session.get(url, params=params, timeout=timeout or self.timeout)
        except auth_exc.RefreshError as exc:
            raise ApiCallError(f"Cannot get credentials: {exc}", 401, "UNAUTHENTICATED") from None
        except (RequestException, auth_exc.TransportError, OSError) as exc:
            raise ApiCallError(f"The jobs service does not answer: {exc}") from None
        try:
            body: Any = resp.json()
        except ValueError:
            body = None
        return resp, body

    def _extension(self, job_id: str, method: str) -> dict[str, Any] | None:
        # A job this service does not know is a real 404 with a google.rpc body naming the
        # job; an endpoint without the method answers 404 too: both mean "nothing to show".
        resp, body = self._get(job_id, method)
        return _answer(resp, body, malformed={})


def _refused(body: Any) -> bool:
    """Whether a 404 is the service refusing (google.rpc NOT_FOUND: no such job, replica or
    kept stacks) rather than an endpoint without the method ("Unknown method ...")."""
    err = body.get("error") if isinstance(body, dict) else None
    if not isinstance(err, dict) or err.get("status") != "NOT_FOUND":
        return False
    return not str(err.get("message") or "").startswith("Unknown method")


def _answer(resp: Any, body: Any, malformed: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """An extension's JSON object: None where the endpoint has no such method
    (``NOT_AVAILABLE``); ``malformed`` for a body that is no JSON object, or, when that is
    None, a 502 error.

    Raises:
        ApiCallError: any other status than 200 (the google.rpc error it carries), or a
            malformed body where no ``malformed`` stands in for it.
    """
    if resp.status_code in NOT_AVAILABLE:
        return None
    if resp.status_code != 200:
        raise _error(resp.status_code, body, resp.reason)
    if isinstance(body, dict):
        return body
    if malformed is not None:
        return malformed
    raise ApiCallError("The jobs service sent a malformed answer.", 502, "UNKNOWN")


def _error(code: int, body: Any, reason: str | None) -> ApiCallError:
    """The google.rpc error in ``body``, or what the status line said."""
    err = body.get("error") if isinstance(body, dict) else None
    if not isinstance(err, dict):
        return ApiCallError(reason or f"HTTP {code}", code, "UNKNOWN")
    status, message, violations = rpc_error_parts(err, "UNKNOWN", reason or f"HTTP {code}")
    return ApiCallError(str(message), code, str(status), violations)


class UsageHistory:
    """Every replica's samples as read so far, kept current with ``since`` reads.

    Not thread-safe: one worker owns it and hands copies (``replicas``) to the UI.
    """

    def __init__(self, cap: int = HISTORY_CAP) -> None:
        self.cap = cap
        self._replicas: dict[str, ReplicaSamples] = {}
        self.since: str | None = None
        """The newest sample's time as the server wrote it; None until a read."""
        self.interval_seconds: float | None = None
        self.trials: list[PlacedReplica] = []
        """The trials' replicas on other nodes, as last read (every answer lists them all)."""

    def add(self, metrics: JobMetrics, full: bool) -> bool:
        """Take one answer (``full``: read without ``since``); returns whether anything is new."""
        if metrics.interval_seconds:
            self.interval_seconds = metrics.interval_seconds
        changed = metrics.trials != self.trials
        self.trials = list(metrics.trials)
        if full:
            fresh = {r.task_name: _copy(r) for r in metrics.replicas}
            changed = changed or fresh != self._replicas
            self._replicas = fresh
        else:
            for rep in metrics.replicas:
                have = self._replicas.get(rep.task_name)
                if have is None:
                    self._replicas[rep.task_name] = _copy(rep)
                    changed = True
                    continue
                if rep.samples:
                    have.samples.extend(rep.samples)
                    changed = True
                if rep.node != have.node:  # placed since the last read (a replica re-adopted)
                    have.node = rep.node
                    changed = True
        newest = max(
            (r.samples[-1] for r in metrics.replicas if r.samples),
            key=lambda s: s.time,
            default=None,
        )
        if newest is not None:
            self.since = newest.stamp
        return changed

    @property
    def needs_full_read(self) -> bool:
        """No read yet, or a replica holds more than ``cap`` samples: read the merged copy."""
        return self.since is None or any(len(r.samples) > self.cap for r in self._replicas.values())

    def replicas(self) -> list[ReplicaSamples]:
        """A copy, in the service's order, safe to hand to another thread."""
        return [_copy(r) for r in self._replicas.values()]

    def placement(self) -> list[PlacedReplica]:
        """Every replica on another node as last read: the job's own, then its trials'."""
        return JobMetrics(list(self._replicas.values()), None, self.trials).placement()


def _copy(replica: ReplicaSamples) -> ReplicaSamples:
    """A replica with a list of samples of its own (the samples themselves are frozen)."""
    return ReplicaSamples(replica.task_name, list(replica.samples), replica.node)
