"""``JobsClient``: the ml v1 Jobs API through google-api-python-client.

The discovery document ships inside google-api-python-client (``static_discovery=True``), so
building the client needs no network. Every call is blocking: the TUI runs them in thread workers.

Google's stack (google-auth, httplib2, googleapiclient) is imported when a call first needs it,
not with this module: the local service's job list goes over ``json_http`` (its module doc says
why), so the app's first list, and every later one, is read without it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from tui_app.api.errors import ApiCallError
from tui_app.api.read_ahead import read_ahead

if TYPE_CHECKING:
    from google.auth.credentials import Credentials

    from tui_app.api.json_http import JsonHttp

DEFAULT_TIMEOUT_SECONDS = 30.0
NO_ANSWER = "The jobs service does not answer"


def make_credentials(token: str | None) -> Credentials:
    """Bearer-token credentials for the local service, anonymous when there is no token."""
    from google.auth.credentials import AnonymousCredentials
    from google.oauth2.credentials import Credentials as TokenCredentials

    return TokenCredentials(token) if token else AnonymousCredentials()  # type: ignore[no-untyped-call]


def authorized_http(credentials: Credentials | None, timeout: float) -> Any:
    """An httplib2 client that signs each request (anonymous without ``credentials``)."""
    import google_auth_httplib2
    import httplib2

    return google_auth_httplib2.AuthorizedHttp(
        credentials or make_credentials(None), http=httplib2.Http(timeout=timeout)
    )


class ThreadHttp:
    """One signing httplib2 client per thread.

    httplib2 is not thread-safe, and the TUI calls one client from several workers at once (the
    list poller, the detail, the log pane). Sharing one ``Http`` let a get read another
    request's answer or wait out its timeout: the detail then stayed "Loading…" for 30 s.
    """

    def __init__(
        self, credentials: Credentials | None, timeout: float, token: str | None = None
    ) -> None:
        """``token``: signs with it when ``credentials`` is None (made on first use)."""
        self._credentials = credentials
        self._token = token
        self._timeout = timeout
        self._local = threading.local()

    def get(self) -> Any:
        http = getattr(self._local, "http", None)
        if http is None:
            if self._credentials is None:
                self._credentials = make_credentials(self._token)
            http = self._local.http = authorized_http(self._credentials, self._timeout)
        return http


def execute(request: Any, no_answer: str, http: Any = None) -> dict[str, Any]:
    """Run a googleapiclient request once, as an ``ApiCallError`` if it fails.

    No retries: a retried create on a server that picks ids would make a second job.

    Args:
        request: The built ``HttpRequest``.
        no_answer: What to say when nothing answered (before the transport's own message).
        http: The client to send it with (``ThreadHttp.get()``); None: the one it was built on.
    """
    import httplib2
    from googleapiclient.errors import HttpError

    try:
        result = request.execute(http=http, num_retries=0)
    except HttpError as exc:
        raise ApiCallError.from_http_error(exc) from None
    except (TimeoutError, OSError, httplib2.HttpLib2Error) as exc:
        raise ApiCallError(f"{no_answer}: {exc}") from None
    return dict(result or {})


class JobsClient:
    """Jobs of one project at one ml v1 endpoint."""

    def __init__(
        self,
        endpoint: str,
        project: str,
        credentials: Credentials | None = None,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        *,
        plain_list: JsonHttp | None = None,
        token: str | None = None,
    ) -> None:
        """Args:
        credentials: What signs googleapiclient's requests; None: ``token``'s (anonymous
            without one), made on the first such request.
        plain_list: Lists go through this instead (``json_http``): the local service's
            connection gives one, with its token.
        """
        self.endpoint = endpoint.rstrip("/")
        self.project = project
        self._http = ThreadHttp(credentials, timeout, token)
        self._plain = plain_list
        self._built: Any = None
        self._build_lock = threading.Lock()

    @property
    def _jobs(self) -> Any:
        """googleapiclient's ``projects().jobs()``, built on first use (see the module doc)."""
        with self._build_lock:
            if self._built is None:
                from googleapiclient import discovery

                ml = discovery.build(
                    "ml",
                    "v1",
                    http=self._http.get(),
                    static_discovery=True,
                    cache_discovery=False,
                    client_options={"api_endpoint": self.endpoint},
                )
                self._built = ml.projects().jobs()
            return self._built

    @property
    def parent(self) -> str:
        return f"projects/{self.project}"

    def _name(self, job_id: str) -> str:
        return f"{self.parent}/jobs/{job_id}"

    def _execute(self, request: Any) -> dict[str, Any]:
        return execute(request, NO_ANSWER, self._http.get())

    def iter_jobs(
        self, filter_text: str | None = None, page_size: int = 100
    ) -> Iterator[dict[str, Any]]:
        """Every job, following nextPageToken."""
        plain = self._plain
        if plain is not None:
            # The first page on this thread's kept connection: most lists are one page. The
            # rest, if any, are read one ahead in a thread of their own (``read_ahead``).
            params: dict[str, Any] = {"pageSize": page_size, "filter": filter_text or None}
            first = plain.get(self._jobs_path, params)
            token = first.get("nextPageToken")
            yield from first.get("jobs", [])
            if token:
                for response in read_ahead(self._plain_pages(plain, params, token)):
                    yield from response.get("jobs", [])
            return
        kwargs: dict[str, Any] = {"parent": self.parent, "pageSize": page_size}
        if filter_text:
            kwargs["filter"] = filter_text
        request = self._jobs.list(**kwargs)
        while request is not None:
            response = self._execute(request)
            yield from response.get("jobs", [])
            request = self._jobs.list_next(request, response)

    @property
    def _jobs_path(self) -> str:
        return f"/v1/{quote(self.parent)}/jobs"

    def _plain_pages(
        self, plain: JsonHttp, params: dict[str, Any], token: str
    ) -> Iterator[dict[str, Any]]:
        """``jobs.list``'s answers over ``plain`` from page ``token`` on, following
        nextPageToken (``iter_jobs`` reads them one ahead of the jobs it hands on)."""
        params = {**params, "pageToken": token}
        try:
            while True:
                response = plain.get(self._jobs_path, params)
                yield response
                following = response.get("nextPageToken")
                if not following:
                    return
                params["pageToken"] = following
        finally:
            plain.close()  # the reader's thread ends with this list

    def list_jobs(self, filter_text: str | None = None) -> list[dict[str, Any]]:
        return list(self.iter_jobs(filter_text))

    def get(self, job_id: str) -> dict[str, Any]:
        return self._execute(self._jobs.get(name=self._name(job_id)))

    def create(self, job: dict[str, Any]) -> dict[str, Any]:
        return self._execute(self._jobs.create(parent=self.parent, body=job))

    def cancel(self, job_id: str) -> None:
        self._execute(self._jobs.cancel(name=self._name(job_id), body={}))

    def set_labels(
        self, job_id: str, labels: dict[str, str], etag: str | None = None
    ) -> dict[str, Any]:
        """Replace the job's labels; with ``etag``, only if nobody changed the job since."""
        body: dict[str, Any] = {"labels": labels}
        mask = "labels"
        if etag is not None:
            body["etag"] = etag
            mask = "labels,etag"
        return self._execute(self._jobs.patch(name=self._name(job_id), body=body, updateMask=mask))
