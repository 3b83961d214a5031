"""The task names a job's log lines carry: what ``--task-name`` and the logs picker offer.

Each replica of the cluster logs under its own name (``master-replica-0``, ``worker-replica-2``)
and the platform's (or the local service's) notes about the job under ``service``; a tuning
job's trials run the same cluster, so their lines carry the same names. A name outside these
can only ever show an empty log, which reads as "the replica printed nothing" rather than
"there is no such replica".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tui_app.model.jobs.cluster import replicas, task_from_vertex

SERVICE_TASK = "service"
"""The task name of the service's own lines about a job."""


def job_task_names(job: Mapping[str, Any]) -> tuple[str, ...] | None:
    """Each replica's task name in the platform's order (master first), then ``service``.

    Returns:
        The names; None when the job's trainingInput is missing or malformed, so that a
        caller does not refuse a name it cannot check.
    """
    training_input = job.get("trainingInput")
    if not isinstance(training_input, Mapping):
        return None
    try:
        names = [r.task_name for r in replicas(training_input)]
    except (KeyError, ValueError, TypeError):
        return None
    return (*names, SERVICE_TASK) if names else None


def unknown_task_error(task_name: str, job_id: str, job: Mapping[str, Any]) -> str | None:
    """Why ``task_name`` names no replica of the job (listing those it has), or None.

    Vertex AI's spelling (``workerpool1-0``) is read as the platform's (``worker-replica-0``),
    as the log lines are.
    """
    names = job_task_names(job)
    if names is None or task_from_vertex(task_name) in names:
        return None
    shown = ", ".join(n for n in names if n != SERVICE_TASK)
    return (
        f"no replica {task_name} in {job_id}; its replicas: {shown} "
        f"({SERVICE_TASK} has the service's own lines)"
    )
