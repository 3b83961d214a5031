"""The app reads the local service's job list without Google's client stack (issue 45).

google-auth, httplib2 and googleapiclient took about 170 ms to import before the first list
could be asked for. A local connection's lists go over ``api/json_http.py`` instead, every one
of them, so a fresh app process shows the service's jobs (and polls again) with none of that
stack loaded; the same jobs googleapiclient lists. It takes the way ``tui-app`` does
(``entry.launch.open_app``), whose first list starts before the app's modules load and is
painted in the first frame.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import unique_id
from tests.support.fresh_process import json_of_child
from tests.support.live_service import PROJECT, LiveService, basic_job
from tui_app.api import jobs_client
from tui_app.api.errors import ApiCallError
from tui_app.api.jobs_client import JobsClient
from tui_app.api.json_http import JsonHttp
from tui_app.api.read_ahead import read_ahead

STACK = ("googleapiclient", "google.auth", "google.oauth2", "httplib2", "google_auth_httplib2")

CHILD = textwrap.dedent(
    """
    import asyncio, json, sys, urllib.request
    from pathlib import Path

    from tui_app.config.settings import Settings
    from tui_app.entry.launch import open_app

    state_dir, project, url, token, later, uri = sys.argv[1:7]
    settings = Settings(refresh_seconds=0.2)
    app = open_app(settings, settings.profiles["local"], project, Path(state_dir))  # as tui-app
    import tui_app.shell.app as shell_app

    # The first frame waits for the list begun at launch: here as long as it takes, so that
    # the frame shows it however loaded the machine is.
    shell_app.FIRST_FRAME_WAIT_SECONDS = 60.0
    seen = {}
    display = shell_app.JobsApp._display

    def first_frame(self, screen, renderable):
        display(self, screen, renderable)
        if "first_modules" not in seen:
            seen["first_modules"] = sorted(sys.modules)
            seen["first_rows"] = self.screen.table.row_count
            seen["first_jobs"] = sorted(r.job_id for r in self.last_rows)

    shell_app.JobsApp._display = first_frame

    def create(job_id):
        ti = {"region": "us-central1", "pythonModule": "trainer.task", "packageUris": [uri]}
        body = json.dumps({"jobId": job_id, "trainingInput": ti}).encode()
        request = urllib.request.Request(
            f"{url}/v1/projects/{project}/jobs",
            data=body,
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        urllib.request.urlopen(request, timeout=30).read()

    async def until(condition):
        for _ in range(6000):
            if condition():
                return
            await asyncio.sleep(0.005)
        raise TimeoutError(sorted(r.job_id for r in app.last_rows))

    async def run():
        async with app.run_test(size=(120, 40)):
            await until(lambda: len(app.last_rows) >= 3)
            create(later)  # a later poll must find it, by the same way
            await until(lambda: any(r.job_id == later for r in app.last_rows))
            seen["jobs"] = sorted(r.job_id for r in app.last_rows)
            seen["modules"] = sorted(sys.modules)

    asyncio.run(run())
    print(json.dumps(seen))
    """
)


def test_the_local_list_is_read_without_googles_client_stack(
    service: LiveService, package_uri: str
) -> None:
    ids = sorted(unique_id(f"plain_{i}") for i in range(3))
    client = service.client()
    for job_id in ids:
        client.create(basic_job(job_id, package_uri))
    later = unique_id("plain_later")
    argv = [str(service.state_dir), PROJECT, service.url, service.token or "", later, package_uri]
    seen = json_of_child(CHILD, *argv)
    listed = {str(j["jobId"]) for j in client.list_jobs()}  # googleapiclient's answer
    assert {*ids, later} <= set(seen["jobs"]) == listed
    below = tuple(name + "." for name in STACK)
    for when in ("first_modules", "modules"):
        loaded = sorted(m for m in seen[when] if m in STACK or m.startswith(below))
        assert not loaded, f"the list loaded {loaded} ({when})"
    # The first frame already shows every job then in the service (shell/first_list.py).
    assert set(ids) <= set(seen["first_jobs"]) == listed - {later}
    assert seen["first_rows"] == len(seen["first_jobs"])


def test_the_plain_list_reads_page_after_page_as_googleapiclient_does(
    service: LiveService, package_uri: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages of two jobs: after the first, the next is read while the jobs of one are handed
    on (``api/read_ahead.py``); the jobs and their order are googleapiclient's. A list of
    one page is read on the caller's thread alone."""
    project = unique_id("pages")
    google = service.client(project)
    for i in range(5):
        google.create(basic_job(unique_id(f"page_{i}"), package_uri))
    plain = JobsClient(
        service.url,
        project,
        None,
        plain_list=JsonHttp(service.url, service.token, 30.0, "no answer"),
        token=service.token,
    )
    readers: list[object] = []

    def counted(pages: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        readers.append(pages)
        return read_ahead(pages)

    monkeypatch.setattr(jobs_client, "read_ahead", counted)
    one_page = [str(j["jobId"]) for j in plain.iter_jobs(page_size=100)]
    assert readers == []
    read = [str(j["jobId"]) for j in plain.iter_jobs(page_size=2)]
    assert len(readers) == 1
    assert read == one_page == [str(j["jobId"]) for j in google.iter_jobs(page_size=2)]
    assert len(read) == 5
    with pytest.raises(ApiCallError) as refused:  # read in the reader's thread, raised here
        list(plain.iter_jobs(filter_text="state=(", page_size=2))
    assert refused.value.status_code == 400
