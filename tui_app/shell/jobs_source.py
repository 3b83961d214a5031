"""The app's one connection to the jobs API, used only from thread workers.

It connects lazily (starting the local service may take a second) and reconnects after an error,
so the UI can treat "the service is down" as a state that passes, not a crash.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tui_app.api.errors import ApiCallError

if TYPE_CHECKING:  # googleapiclient loads in the poll thread, not before the first frame
    from tui_app.api.connection import Connection
    from tui_app.api.jobs_api import JobsApi


class JobsSource:
    """Thread-safe, lazily connected access to one project's jobs."""

    def __init__(
        self, connect: Callable[..., Connection], project: str, label: str = "connecting…"
    ) -> None:
        self._connect = connect
        self._connected_once = False
        self._connection: Connection | None = None
        self.project = project
        self._lock = threading.Lock()
        self._client: JobsApi | None = None
        self.label = label
        """How the header names the backend; the connection's own label once connected."""
        self.endpoint: str | None = None

    def client(self) -> JobsApi:
        """The client, connecting first if needed (blocking: call from a worker).

        Raises:
            ApiCallError: nothing answers, and nothing could be started.
        """
        with self._lock:
            if self._client is None:
                # Start the local service only for the first connection: one that went away
                # mid-session (stopped by its owner, or crashed) is waited for, not replaced.
                conn = self._connect(start=not self._connected_once)
                self._connected_once = True
                self.label = conn.label
                self.endpoint = conn.endpoint
                self._connection = conn
                self._client = conn.jobs(self.project)
            return self._client

    def connection(self) -> Connection:
        """The current connection (connecting first if needed): the log stream uses it too."""
        self.client()
        assert self._connection is not None
        return self._connection

    def reset(self) -> None:
        """Forget the connection: the next call reconnects."""
        with self._lock:
            self._client = None

    def call(self, fn: Callable[[JobsApi], Any]) -> Any:
        """Run ``fn`` with the client; a connection failure resets it for the next call."""
        try:
            return fn(self.client())
        except ApiCallError as exc:
            if exc.unreachable:
                self.reset()
            raise
