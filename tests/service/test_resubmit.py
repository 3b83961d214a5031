"""``resubmit`` against a real service: a taken id (409) moves on to the next second's id.

The TUI's ``R`` and ``tui-app jobs resubmit`` share it; the CLI's path is driven here in-process
(``_run``) so the ids it would take can be occupied before it starts.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.support.live_service import LiveService, basic_job
from tui_app.api.errors import ApiCallError
from tui_app.api.resubmit import ATTEMPTS, resubmit
from tui_app.entry.jobs_cli import _run
from tui_app.model.jobs.job_id import new_job_id, split_job_id

T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


def _clock(*moments: datetime) -> Callable[[], datetime]:
    """Each call the next moment; the last one repeats."""
    it: Iterator[datetime] = iter(moments)
    last = [moments[-1]]

    def now() -> datetime:
        last[0] = next(it, last[0])
        return last[0]

    return now


def test_a_taken_id_moves_to_the_next_second(service: LiveService, package_uri: str) -> None:
    project = "resubmit-409"
    client = service.client(project)
    old = "again_20260101_000000"
    body = basic_job(old, package_uri, "--steps", "1")
    body["labels"] = {"owner": "ann"}
    client.create(body)
    taken = new_job_id(old, T0)
    client.create(basic_job(taken, package_uri, "--steps", "1"))

    created = resubmit(
        old, client.get, client.create, now=_clock(T0, T0 + timedelta(seconds=1)), wait=0
    )

    assert created["jobId"] == new_job_id(old, T0 + timedelta(seconds=1)) != taken
    again = client.get(created["jobId"])
    assert again["trainingInput"] == client.get(old)["trainingInput"]
    assert again["labels"] == {"owner": "ann"}


def test_a_name_taken_every_time_ends_in_already_exists(
    service: LiveService, package_uri: str
) -> None:
    project = "resubmit-409-always"
    client = service.client(project)
    old = "stuck_20260101_000000"
    client.create(basic_job(old, package_uri, "--steps", "1"))
    client.create(basic_job(new_job_id(old, T0), package_uri, "--steps", "1"))
    creates: list[str] = []

    def create(job: dict[str, Any]) -> dict[str, Any]:
        creates.append(str(job["jobId"]))
        return client.create(job)

    with pytest.raises(ApiCallError) as err:
        resubmit(old, client.get, create, now=_clock(T0), wait=0)
    assert err.value.status_code == 409 and err.value.status == "ALREADY_EXISTS"
    assert creates == [new_job_id(old, T0)] * ATTEMPTS


def test_other_errors_are_not_retried(service: LiveService) -> None:
    client = service.client("resubmit-missing")
    creates: list[dict[str, Any]] = []

    def create(job: dict[str, Any]) -> dict[str, Any]:
        creates.append(job)
        return client.create(job)

    with pytest.raises(ApiCallError) as err:
        resubmit("no_such_job", client.get, create, wait=0)
    assert err.value.status == "NOT_FOUND" and creates == []


def test_the_cli_takes_the_next_free_id(
    service: LiveService, package_uri: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The CLI gained the TUI's 409 retry: this second's and the next second's ids are taken
    before it runs, so its first attempt (at least) clashes, and it still succeeds."""
    project = "resubmit-cli-409"
    client = service.client(project)
    old = "cli_20260101_000000"
    client.create(basic_job(old, package_uri, "--steps", "1"))
    start = datetime.now(UTC).replace(microsecond=0)
    taken = {new_job_id(old, start + timedelta(seconds=s)) for s in (0, 1)}
    for job_id in taken:
        client.create(basic_job(job_id, package_uri, "--steps", "1"))

    rc = _run(argparse.Namespace(action="resubmit", job_id=old), client)

    out = capsys.readouterr()
    assert rc == 0, out.err
    new_id = out.out.strip()
    assert new_id not in taken and new_id != old
    stamp = split_job_id(new_id)[1]
    assert stamp is not None and stamp >= start + timedelta(seconds=2)
    assert f"Resubmitted {old} as {new_id}." in out.err
    assert client.get(new_id)["trainingInput"] == client.get(old)["trainingInput"]
