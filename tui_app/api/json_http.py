"""JSON GETs over HTTP/1.1 keep-alive with a static bearer token: the job list's transport.

The job list is the first thing the app shows, and google-api-python-client's stack
(google-auth, httplib2, the discovery document) took about 170 ms to import in the poll thread
before the first request could go out, on a 2-core machine where that import competes with
the first frame. A connection whose credential is a static token or none (the local service,
a URL profile with a token) needs none of it to read ``jobs.list``: this module sends the same
request (``GET /v1/projects/P/jobs?pageSize=&pageToken=&filter=``, the ml v1 REST surface the
discovery document describes) with ``http.client``. Every list of such a connection goes this
way, the first and every later one; other calls, and connections with refreshing credentials
(ADC), use google-api-python-client as before (``jobs_client``).

Errors are the same ``ApiCallError`` as googleapiclient's path gives (``from_response``), and a
connection the server closed between polls is opened again once (a GET is safe to repeat).
"""

from __future__ import annotations

import http.client
import json
import threading
from typing import Any
from urllib.parse import urlencode, urlsplit

from tui_app.api.errors import ApiCallError

__all__ = ["JsonHttp"]


class JsonHttp:
    """GETs of JSON from one endpoint, one kept-alive connection per thread."""

    def __init__(self, endpoint: str, token: str | None, timeout: float, no_answer: str) -> None:
        """Args:
        endpoint: ``http(s)://host[:port][/base]``.
        token: Sent as ``Authorization: Bearer``; None sends no credential.
        timeout: Seconds for connecting and for each read.
        no_answer: What a failure to reach the server says first (as ``jobs_client.execute``).
        """
        parts = urlsplit(endpoint)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {endpoint!r}")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        self._base = parts.path.rstrip("/")
        self._headers = {"Accept": "application/json", "User-Agent": "tui-app"}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        self._timeout = timeout
        self._no_answer = no_answer
        self._local = threading.local()

    def _connection(self, fresh: bool = False) -> http.client.HTTPConnection:
        conn: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
        if conn is not None and fresh:
            conn.close()
            conn = None
        if conn is None:
            if self._https:
                import ssl  # not for the local service's plain HTTP

                context = ssl.create_default_context()
                conn = http.client.HTTPSConnection(
                    self._host, self._port, timeout=self._timeout, context=context
                )
            else:
                conn = http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)
            self._local.conn = conn
        return conn

    def close(self) -> None:
        """Close the calling thread's kept connection: a thread that ends calls it, or its
        socket would wait for the collector to close it."""
        conn: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def get(self, path: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """The JSON object at ``path`` (under the endpoint's base) with ``params`` as its query.

        Raises:
            ApiCallError: the server answered an error (its status, message and field
                violations), or nothing answered (status 0).
        """
        url = self._base + path
        query = {k: v for k, v in (params or {}).items() if v is not None}
        if query:
            url += "?" + urlencode(query)
        for attempt in (0, 1):
            conn = self._connection(fresh=attempt == 1)
            try:
                conn.request("GET", url, headers=self._headers)
                resp = conn.getresponse()
                body = resp.read()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as exc:
                conn.close()
                if attempt == 0:
                    continue  # the server closed the kept connection between calls: once more
                raise ApiCallError(f"{self._no_answer}: {exc}") from None
            except (OSError, http.client.HTTPException) as exc:
                conn.close()
                raise ApiCallError(f"{self._no_answer}: {exc}") from None
            if resp.status >= 400:
                raise ApiCallError.from_response(resp.status, body, resp.reason)
            try:
                answer = json.loads(body or b"{}")
            except ValueError:
                raise ApiCallError(
                    f"{self._no_answer}: the answer is not JSON", resp.status, "UNKNOWN"
                ) from None
            return answer if isinstance(answer, dict) else {}
        raise AssertionError("unreachable")  # pragma: no cover
