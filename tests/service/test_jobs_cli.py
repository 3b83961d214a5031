"""The headless twin: ``tui-app jobs list|describe|cancel|resubmit|logs`` against a real service.

Most calls run the command in this process (tests/support/cli_in_process.py: the same
``main``, real HTTP, without a Python start-up per call); ``list``, ``describe``, ``cancel``
and ``resubmit`` each run once as a script in test_list_describe_cancel_resubmit (``logs`` in
test_logs_cli), and the argv tests below start a process of their own.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import unique_id
from tests.support.jobs_cli_run import tui, tui_process
from tests.support.live_service import PROJECT, LiveService, basic_job


def test_list_describe_cancel_resubmit(service: LiveService, package_uri: str) -> None:
    client = service.client()
    done = unique_id("twin_done")
    client.create(basic_job(done, package_uri, "--steps", "1"))
    running = unique_id("twin_run")
    client.create(basic_job(running, package_uri, "--steps", "100000", "--sleep", "0.1"))
    service.wait_state(done)
    service.wait_state(running, ("RUNNING",))

    listed = tui_process(service, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    ids = [j["jobId"] for j in json.loads(listed.stdout)]
    assert done in ids and running in ids
    table = tui(service, "list", "--filter", "state:running")
    assert running in table.stdout and done not in table.stdout
    assert table.stdout.splitlines()[0].split() == [
        "JOB_ID",
        "STATE",
        "CREATED",
        "QUEUED",
        "ELAPSED",
        "TIER",
        "ML_UNITS",
        "ERROR",
    ]

    described = tui_process(service, "describe", done)
    assert described.returncode == 0
    assert "Job Overview" in described.stdout and "SUCCEEDED" in described.stdout
    assert json.loads(tui(service, "describe", done, "--json").stdout)["jobId"] == done
    assert f"jobId: {done}" in tui(service, "describe", done, "--yaml").stdout

    cancelled = tui_process(service, "cancel", running)
    assert cancelled.returncode == 0 and f"Cancelling {running}" in cancelled.stdout
    service.wait_state(running, ("CANCELLED",), timeout=15)
    again = tui(service, "cancel", running)
    assert again.returncode == 1 and "FAILED_PRECONDITION" in again.stderr

    resub = tui_process(service, "resubmit", done)
    assert resub.returncode == 0, resub.stderr
    new_id = resub.stdout.strip()
    assert new_id != done and new_id.startswith(done.split("_2026")[0])
    assert client.get(new_id)["trainingInput"] == client.get(done)["trainingInput"]

    missing = tui(service, "describe", "no_such_job")
    assert missing.returncode == 1 and "NOT_FOUND" in missing.stderr
    assert "Traceback" not in missing.stderr
    assert len(missing.stderr.splitlines()) == 1  # said once, not as a message and a violation


def test_unknown_profile_is_a_clear_error(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "tui_app", "jobs", "list", "--profile", "nope"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "Unknown profile 'nope'; known profiles: local." in result.stderr


def test_options_before_the_subcommand_are_honoured(service: LiveService, package_uri: str) -> None:
    """``tui-app --project P --state-dir D jobs list`` lists P, not the default project."""
    other = "before-sub-project"  # no other test lists this project
    job_id = unique_id("before_sub")
    service.client(project=other).create(basic_job(job_id, package_uri, "--steps", "1"))
    argv = ["--state-dir", str(service.state_dir), "--project", other, "jobs", "list", "--json"]
    result = subprocess.run(
        [sys.executable, "-m", "tui_app", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert [j["jobId"] for j in json.loads(result.stdout)] == [job_id]


def test_a_wrong_filter_is_an_error_a_script_can_see(service: LiveService) -> None:
    """The TUI matches a half-typed filter as best it can; a script's must fail loudly."""
    bad_state = tui(service, "list", "--filter", "state:BOGUS")
    assert bad_state.returncode == 2 and bad_state.stdout == ""
    assert bad_state.stderr.startswith("error: --filter: Unknown state 'BOGUS'; valid states:")
    bad_regex = tui(service, "list", "--filter", "mnist(")
    assert bad_regex.returncode == 2 and bad_regex.stdout == ""
    assert "Invalid regex" in bad_regex.stderr and "literally" not in bad_regex.stderr


def test_an_empty_job_id_or_one_with_a_slash_is_an_error_not_a_traceback(
    service: LiveService,
) -> None:
    """jobs.get cannot ask for "" or "a/b" (the client refuses the name): the finder says so."""
    for action in ("describe", "stacks"):
        empty = tui(service, action, "")
        assert empty.returncode == 2, empty.stderr
        assert empty.stderr == "error: JOB_ID is empty: give a job id, or the start of one.\n"
        slash = tui(service, action, "a/b")
        assert slash.returncode == 1 and "Traceback" not in slash.stderr, slash.stderr
        assert slash.stderr.startswith("error: NOT_FOUND: No job 'a/b' in project ")


def test_a_job_id_may_be_a_prefix_only_one_job_starts_with(
    service: LiveService, package_uri: str
) -> None:
    """As the TUI's ``:describe``/``:logs`` take it; several jobs: listed, exit 2; none: the
    ids most like it, in one line, exit 1."""
    client = service.client()
    one, two = unique_id("twin_prefix_one"), unique_id("twin_prefix_two")
    for job_id in (one, two):
        client.create(basic_job(job_id, package_uri, "--steps", "100000", "--sleep", "0.1"))
    try:
        described = tui(service, "describe", "twin_prefix_o", "--json")
        assert described.returncode == 0, described.stderr
        assert json.loads(described.stdout)["jobId"] == one
        assert "Job Overview" in tui(service, "describe", "TWIN_PREFIX_T").stdout  # any case

        several = tui(service, "describe", "twin_prefix")
        assert several.returncode == 2 and several.stdout == ""
        assert several.stderr.splitlines() == [
            f"error: 'twin_prefix' is the start of 2 jobs in project {PROJECT}; "
            "type more of the id:",
            f"  {one}",
            f"  {two}",
        ]

        typo = tui(service, "describe", "twin_prefx_one")
        assert typo.returncode == 1 and typo.stdout == ""
        assert len(typo.stderr.splitlines()) == 1, typo.stderr
        assert typo.stderr.startswith(
            f"error: NOT_FOUND: No job 'twin_prefx_one' in project {PROJECT} ("
        )
        assert f"jobs). Did you mean {one}" in typo.stderr

        # One id that names no job among several: nothing is cancelled.
        refused = tui(service, "cancel", "twin_prefix_o", "no_such_twin")
        assert refused.returncode == 1 and refused.stdout == ""
        assert client.get(one)["state"] not in ("CANCELLING", "CANCELLED")
        assert tui(service, "logs", "twin_prefix_t").returncode == 0

        cancelled = tui(service, "cancel", "twin_prefix_o", "twin_prefix_t")
        assert cancelled.returncode == 0, cancelled.stderr
        assert cancelled.stdout.splitlines() == [f"Cancelling {one}.", f"Cancelling {two}."]
        resub = tui(service, "resubmit", "twin_prefix_t")
        assert resub.returncode == 0, resub.stderr
        client.cancel(resub.stdout.strip())
        assert f"Resubmitted {two} as " in resub.stderr
    finally:
        for job_id in (one, two):
            if client.get(job_id)["state"] not in ("CANCELLING", "CANCELLED"):
                client.cancel(job_id)


def test_gcloud_filter_syntax_lists_what_gcloud_would(
    service: LiveService, package_uri: str
) -> None:
    """``gcloud ai-platform jobs list --filter`` terms, which users will type; they used to
    print an empty table with exit 0."""
    owner = f"twin{time.monotonic_ns() % 10**9}"
    done = unique_id("twin_gcloud")
    client = service.client()
    body = basic_job(done, package_uri, "--steps", "1")
    client.create({**body, "labels": {"owner": owner}})
    service.wait_state(done)

    def listed(flt: str) -> list[str]:
        result = tui(service, "list", "--json", "--filter", flt)
        assert result.returncode == 0, result.stderr
        return [j["jobId"] for j in json.loads(result.stdout)]

    assert done in listed("state=SUCCEEDED")
    assert done not in listed("state=FAILED")
    assert listed(f"labels.owner={owner}") == [done]
    assert listed(f"labels.owner:{owner} AND NOT state=FAILED") == [done]
    assert listed(f"jobId:{done[:-3]}*") == [done]
    assert listed(f"jobId={done}") == [done]
    table = tui(service, "list", "--filter", "state=SUCCEEDED OR state=FAILED labels:owner")
    assert done in table.stdout and table.returncode == 0


def test_a_gcloud_filter_the_list_cannot_express_exits_2_naming_what_is_accepted(
    service: LiveService,
) -> None:
    bogus = tui(service, "list", "--filter", "state=BOGUS")
    assert bogus.returncode == 2 and bogus.stdout == ""
    assert bogus.stderr.startswith("error: --filter: Unknown state 'BOGUS'; valid states: QUEUED")
    later = tui(service, "list", "--filter", "createTime>2026-01-01")
    assert later.returncode == 2 and later.stdout == ""
    assert later.stderr.startswith("error: --filter: The list filter cannot express")
    accepted = " ".join(later.stderr.split())  # the hint is wrapped
    assert "state=X" in accepted and "labels.K=V" in accepted and "label:K[=V]" in accepted


def test_logs_of_a_replica_the_job_lacks_names_those_it_has(
    service: LiveService, package_uri: str
) -> None:
    """A name the cluster has reads the logs (none yet, here: the job never ran); another
    used to print nothing with exit 0, as if the replica had been silent."""
    job_id = unique_id("twin_replicas")
    client = service.client()
    cluster = {"scaleTier": "CUSTOM", "masterType": "standard", "workerType": "standard"}
    client.create(basic_job(job_id, package_uri, "--steps", "1", **cluster, workerCount="2"))
    client.cancel(job_id)
    for name in ("worker-replica-1", "master-replica-0", "service"):
        ok = tui(service, "logs", job_id, "--task-name", name)
        assert ok.returncode == 0 and "error" not in ok.stderr, (name, ok.stderr)
    missing = tui(service, "logs", job_id, "--task-name", "worker-replica-7")
    assert missing.returncode == 1 and missing.stdout == ""
    assert missing.stderr == (
        f"error: no replica worker-replica-7 in {job_id}; its replicas: master-replica-0, "
        "worker-replica-0, worker-replica-1 (service has the service's own lines)\n"
    )
