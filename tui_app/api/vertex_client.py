"""``VertexJobsClient``: Vertex AI custom and tuning jobs, shown and submitted as ml v1 jobs.

Requests go through google-api-python-client with the ``aiplatform`` v1 discovery document that
ships in the package (no network to build the client), to the regional host
``https://{region}-aiplatform.googleapis.com``: the document's root URL is the global host,
which does not route job calls, so the endpoint is always overridden, as gcloud does by adding
the region prefix itself.

An ml v1 job is one resource; on Vertex a job with a ``hyperparameters`` spec is a
HyperparameterTuningJob in a collection of its own, so every read looks at both collections.
Vertex picks numeric ids; the ml v1 jobId travels as the display name, and the client keeps a
jobId -> resource map from what it last listed. Translation lives in
``tui_app.model.vertex.translate``; this module only moves requests.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any, Final

from google.auth.credentials import Credentials
from googleapiclient import discovery

from tui_app.api.errors import ApiCallError
from tui_app.api.jobs_client import DEFAULT_TIMEOUT_SECONDS, ThreadHttp, execute
from tui_app.model.jobs.job_spec import JobSpecError, parse_job
from tui_app.model.vertex.translate import (
    CUSTOM_JOBS,
    TUNING_JOBS,
    VERTEX_FIELD,
    TranslationError,
    from_vertex,
    resource_id,
    to_vertex,
)

COLLECTIONS: Final = (TUNING_JOBS, CUSTOM_JOBS)
"""Tuning jobs are read first: their trials' custom jobs are then left out of the list."""
ID_SEPARATOR: Final = "@"
"""Two Vertex jobs with one display name are told apart as ``<displayName>@<numeric id>``."""


def vertex_endpoint(region: str) -> str:
    """Vertex AI's regional host for ``region``."""
    return f"https://{region}-aiplatform.googleapis.com"


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


class VertexJobsClient:
    """Jobs of one project in one Vertex AI region, as ml v1 Job dicts."""

    def __init__(
        self,
        project: str,
        region: str,
        credentials: Credentials | None = None,
        *,
        endpoint: str | None = None,
        executor_image: str | None = None,
        http: Any = None,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
    ) -> None:
        self.project = project
        self.region = region
        self.executor_image = executor_image
        self.endpoint = (endpoint or vertex_endpoint(region)).rstrip("/")
        self._thread_http = ThreadHttp(credentials, timeout)
        self._fixed_http = http
        """A given ``http`` (a test's replay) serves every thread; else one per thread."""
        service = discovery.build(
            "aiplatform",
            "v1",
            http=http or self._thread_http.get(),
            static_discovery=True,
            cache_discovery=False,
            client_options={"api_endpoint": self.endpoint},
        )
        locations = service.projects().locations()
        self._api = {
            CUSTOM_JOBS: locations.customJobs(),
            TUNING_JOBS: locations.hyperparameterTuningJobs(),
        }
        self._lock = threading.Lock()
        self._known: dict[str, tuple[str, str]] = {}
        """jobId -> (collection, numeric id), from the last list and every get/create."""

    @property
    def parent(self) -> str:
        return f"projects/{self.project}/locations/{self.region}"

    def _name(self, collection: str, numeric_id: str) -> str:
        return f"{self.parent}/{collection}/{numeric_id}"

    def _execute(self, request: Any) -> dict[str, Any]:
        try:
            http = self._fixed_http or self._thread_http.get()
            return execute(request, f"Vertex AI does not answer at {self.endpoint}", http)
        except ApiCallError:
            raise
        except Exception as exc:  # google.auth refresh errors and the like: say them, no trace
            raise ApiCallError(f"Cannot call Vertex AI: {exc}", 401, "UNAUTHENTICATED") from None

    def _list(
        self, collection: str, filter_text: str | None = None, page_size: int = 100
    ) -> Iterator[dict[str, Any]]:
        api = self._api[collection]
        kwargs: dict[str, Any] = {"parent": self.parent, "pageSize": page_size}
        if filter_text:
            kwargs["filter"] = filter_text
        request = api.list(**kwargs)
        while request is not None:
            response = self._execute(request)
            yield from response.get(collection, [])
            request = api.list_next(request, response)

    # -- reading -----------------------------------------------------------------------------

    def iter_jobs(
        self, filter_text: str | None = None, page_size: int = 100
    ) -> Iterator[dict[str, Any]]:
        """Every custom and tuning job, newest first, as ml v1 jobs.

        ``filter_text`` is Vertex's list filter (``state="JOB_STATE_RUNNING"``,
        ``display_name:"mnist_*"``), passed through to both collections. A tuning job's trials
        run as custom jobs of their own; those are shown inside the tuning job, not beside it.
        """
        found: list[tuple[str, dict[str, Any]]] = []
        trial_jobs: set[str] = set()
        for collection in COLLECTIONS:
            for resource in self._list(collection, filter_text, page_size):
                numeric = resource_id(str(resource.get("name", "")))
                if collection == CUSTOM_JOBS and numeric in trial_jobs:
                    continue
                found.append((collection, resource))
                for trial in resource.get("trials") or []:
                    if trial.get("customJob"):
                        trial_jobs.add(resource_id(str(trial["customJob"])))
        names = Counter(str(r.get("displayName") or "") for _, r in found)
        jobs: list[dict[str, Any]] = []
        known: dict[str, tuple[str, str]] = {}
        for collection, resource in found:
            job_id = self._job_id(resource, names)
            job = from_vertex(resource, collection, job_id=job_id)
            known[job_id] = (collection, resource_id(str(resource.get("name", ""))))
            jobs.append(job)
        with self._lock:
            self._known = known
        jobs.sort(key=lambda j: str(j.get("createTime") or ""), reverse=True)
        yield from jobs

    @staticmethod
    def _job_id(resource: dict[str, Any], names: Counter[str]) -> str:
        display = str(resource.get("displayName") or "")
        numeric = resource_id(str(resource.get("name", "")))
        if not display or names[display] > 1:
            return f"{display}{ID_SEPARATOR}{numeric}"
        return display

    def list_jobs(self, filter_text: str | None = None) -> list[dict[str, Any]]:
        return list(self.iter_jobs(filter_text))

    def _resolve(self, job_id: str) -> tuple[str, str]:
        """The collection and numeric id of ``job_id`` (a display name, or ``name@id``).

        Raises:
            ApiCallError: no job has that display name (404), or several do (409).
        """
        with self._lock:
            hit = self._known.get(job_id)
        if hit is not None:
            return hit
        _, sep, numeric = job_id.rpartition(ID_SEPARATOR)
        if sep and numeric.isdigit():
            for collection in COLLECTIONS:
                try:
                    self._execute(self._api[collection].get(name=self._name(collection, numeric)))
                except ApiCallError as exc:
                    if exc.status_code == 404:
                        continue
                    raise
                return collection, numeric
            # Never fall back to the display name: that could be another job (and a cancel).
            raise ApiCallError(
                f"No Vertex AI job {numeric} in project {self.project}, region {self.region}.",
                404,
                "NOT_FOUND",
            )
        display = job_id
        matches = [
            (collection, resource_id(str(r.get("name", ""))))
            for collection in COLLECTIONS
            for r in self._list(collection, f"display_name={_quote(display)}")
            if r.get("displayName") == display
        ]
        if not matches:
            raise ApiCallError(
                f"No Vertex AI job named {job_id} in project {self.project}, region {self.region}.",
                404,
                "NOT_FOUND",
            )
        if len(matches) > 1:
            ids = ", ".join(f"{display}{ID_SEPARATOR}{n}" for _, n in matches)
            raise ApiCallError(
                f"Several Vertex AI jobs are named {display}; use one of: {ids}.",
                409,
                "FAILED_PRECONDITION",
            )
        return matches[0]

    def get(self, job_id: str) -> dict[str, Any]:
        collection, numeric = self._resolve(job_id)
        resource = self._execute(self._api[collection].get(name=self._name(collection, numeric)))
        return from_vertex(resource, collection, job_id=job_id)

    # -- writing -----------------------------------------------------------------------------

    def create(self, job: dict[str, Any]) -> dict[str, Any]:
        """Validate as ml v1, translate, refuse a taken display name, then create once.

        Raises:
            ApiCallError: 400 with field violations (ml v1 paths) when the job is invalid or
                cannot run on Vertex AI, before anything is sent; 409 when a job of that
                jobId exists; or what Vertex AI answered.
        """
        body = {k: v for k, v in job.items() if k != VERTEX_FIELD}
        try:
            request = to_vertex(
                parse_job(body), region=self.region, executor_image=self.executor_image
            )
        except (JobSpecError, TranslationError) as exc:
            found = [{"field": v.field, "description": v.description} for v in exc.violations]
            first = found[0] if found else {"field": "job", "description": str(exc)}
            more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
            raise ApiCallError(
                f"Field: {first['field']} Error: {first['description']}{more}",
                400,
                "INVALID_ARGUMENT",
                found,
            ) from None
        job_id = str(request.body.get("displayName") or "")
        taken = any(
            r.get("displayName") == job_id
            for collection in COLLECTIONS
            for r in self._list(collection, f"display_name={_quote(job_id)}")
        )
        if taken:
            raise ApiCallError(
                f"A Vertex AI job named {job_id} already exists.", 409, "ALREADY_EXISTS"
            )
        api = self._api[request.collection]
        resource = self._execute(api.create(parent=self.parent, body=request.body))
        with self._lock:
            self._known[job_id] = (request.collection, resource_id(str(resource.get("name", ""))))
        return from_vertex(resource, request.collection, job_id=job_id)

    def cancel(self, job_id: str) -> None:
        collection, numeric = self._resolve(job_id)
        self._execute(self._api[collection].cancel(name=self._name(collection, numeric), body={}))

    def set_labels(
        self, job_id: str, labels: dict[str, str], etag: str | None = None
    ) -> dict[str, Any]:
        """Vertex AI has no update method for custom or tuning jobs: labels are fixed at create.

        Raises:
            ApiCallError: always, saying so.
        """
        raise ApiCallError(
            "Vertex AI cannot change a job's labels after it is created; resubmit with new "
            "labels instead (E edits a copy).",
            400,
            "FAILED_PRECONDITION",
        )
