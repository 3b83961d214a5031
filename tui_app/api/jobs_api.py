"""``JobsApi``: what the TUI and the CLI need from a jobs backend, whichever API is behind it.

``JobsClient`` speaks ml v1 (the local service, or any compatible URL); ``VertexJobsClient``
speaks Vertex AI and translates. Both take and return ml v1 Job dicts, so screens never know
which one they hold.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol


class JobsApi(Protocol):
    """Jobs of one project; every method blocks (call from a thread worker) and raises
    ``ApiCallError`` with the server's status and message."""

    project: str

    def iter_jobs(
        self, filter_text: str | None = None, page_size: int = 100
    ) -> Iterator[dict[str, Any]]: ...

    def list_jobs(self, filter_text: str | None = None) -> list[dict[str, Any]]: ...

    def get(self, job_id: str) -> dict[str, Any]: ...

    def create(self, job: dict[str, Any]) -> dict[str, Any]: ...

    def cancel(self, job_id: str) -> None: ...

    def set_labels(
        self, job_id: str, labels: dict[str, str], etag: str | None = None
    ) -> dict[str, Any]: ...
