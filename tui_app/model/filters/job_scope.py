"""Which jobs a search over every job's logs keeps: the job list's own narrowing, carried over.

Someone who has narrowed the list to ``state:failed mnist`` (or to faults with ``z``) and then
searches the logs means those jobs. The search view and ``tui-app logs search --filter`` read
the same rules here, so a filter narrows the same jobs in the list, in the view and in a
script. The jobs are worked out again from each poll's rows: a job that starts to match while
the view is open is searched too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tui_app.model.filters.list_filter import ListFilter, filter_rows
from tui_app.model.views.job_view import JobRow

__all__ = ["JobScope"]


@dataclass(frozen=True)
class JobScope:
    """The list's filter box and its faults-only switch (``z``), as the list applies them."""

    list_filter: ListFilter
    faults_only: bool = False

    @property
    def narrows(self) -> bool:
        """False when it keeps every job: nothing typed in the box and ``z`` off."""
        return self.faults_only or not self.list_filter.is_empty

    def jobs(self, rows: Iterable[JobRow]) -> frozenset[str]:
        """The ids of the jobs among ``rows`` that the list would show."""
        kept = [r for r in rows if r.is_fault] if self.faults_only else rows
        return frozenset(r.job_id for r in filter_rows(kept, self.list_filter))

    def label(self) -> str:
        """How the view's title names it: ``state:failed · faults``."""
        parts = [self.list_filter.text.strip()] if not self.list_filter.is_empty else []
        if self.faults_only:
            parts.append("faults")
        return " · ".join(parts)
