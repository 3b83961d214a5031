"""A real connection whose clients count their calls on the way through: a test reads which
requests were made (the long poll, not jobs.get) rather than how fast something happened."""

from __future__ import annotations

import collections
import threading
from dataclasses import dataclass, field
from typing import Any, cast

from tests.support.live_service import LiveService
from tui_app.api.connection import Connection
from tui_app.api.jobs_api import JobsApi
from tui_app.api.jobs_client import make_credentials
from tui_app.api.metrics_client import MetricsClient


class _Counted:
    """A client whose calls are counted by method name, then made."""

    def __init__(self, inner: Any, owner: Counting) -> None:
        self._inner, self._owner = inner, owner

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if not callable(attr) or name == "close":
            return attr

        def call(*args: Any, **kw: Any) -> Any:
            self._owner.count(name)
            return attr(*args, **kw)

        return call


@dataclass(frozen=True)
class Counting(Connection):
    """``calls["get"]``, ``calls["wait_for_change"]``, ``calls["list_jobs"]``...: how often each
    method of the connection's jobs and metrics clients was called."""

    calls: collections.Counter[str] = field(default_factory=collections.Counter, compare=False)
    _changed: threading.Condition = field(default_factory=threading.Condition, compare=False)

    def jobs(self, project: str) -> JobsApi:
        return cast(JobsApi, _Counted(super().jobs(project), self))

    def metrics(self, project: str) -> MetricsClient:
        return cast(MetricsClient, _Counted(super().metrics(project), self))

    def count(self, name: str) -> None:
        with self._changed:
            self.calls[name] += 1
            self._changed.notify_all()

    def wait_for_call(self, name: str, timeout: float = 30.0) -> bool:
        """Whether ``name`` has been called (waiting up to ``timeout`` seconds for it)."""
        with self._changed:
            return self._changed.wait_for(lambda: self.calls[name] > 0, timeout)


def counting(service: LiveService, token: str | None = "default") -> Counting:
    """A connection to ``service``; ``token`` another token than its own (None: none)."""
    return Counting(
        service.url,
        make_credentials(service.token if token == "default" else token),
        "test",
        local=True,
    )
