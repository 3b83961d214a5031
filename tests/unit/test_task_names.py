"""The task names a job's logs carry, for ``jobs logs --task-name`` (``task_names``)."""

from __future__ import annotations

from tests.support.live_service import CLUSTER
from tui_app.model.jobs.task_names import job_task_names, unknown_task_error


def test_every_replica_master_first_then_the_service() -> None:
    assert job_task_names({"trainingInput": CLUSTER}) == (
        "master-replica-0",
        "worker-replica-0",
        "worker-replica-1",
        "ps-replica-0",
        "service",
    )
    assert job_task_names({"trainingInput": {}}) == ("master-replica-0", "service")  # BASIC


def test_a_name_the_job_has_is_fine_started_or_not() -> None:
    for state in ("QUEUED", "RUNNING", "SUCCEEDED"):
        job = {"state": state, "trainingInput": CLUSTER}
        for name in ("master-replica-0", "worker-replica-1", "ps-replica-0", "service"):
            assert unknown_task_error(name, "j", job) is None
    # Vertex AI's spelling of worker-replica-0
    assert unknown_task_error("workerpool1-0", "j", {"trainingInput": CLUSTER}) is None


def test_a_name_the_job_lacks_is_answered_with_its_replicas() -> None:
    why = unknown_task_error("worker-replica-7", "census_1", {"trainingInput": CLUSTER})
    assert why == (
        "no replica worker-replica-7 in census_1; its replicas: master-replica-0, "
        "worker-replica-0, worker-replica-1, ps-replica-0 (service has the service's own lines)"
    )


def test_a_job_whose_cluster_cannot_be_read_refuses_nothing() -> None:
    assert job_task_names({}) is None
    assert job_task_names({"trainingInput": {"scaleTier": "NO_SUCH_TIER"}}) is None
    assert unknown_task_error("worker-replica-7", "j", {"trainingInput": "junk"}) is None
