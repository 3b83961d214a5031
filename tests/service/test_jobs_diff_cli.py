"""``tui-app jobs diff`` against a real service (issue 27): the unified diff, its exit status as
diff(1) has it, ids of other projects and of trials, and the provenance ``jobs resubmit``
records (package bytes by content hash: test_packages.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import unique_id
from tests.support.jobs_cli_run import QUICK, changed_lines, tui, tui_process
from tests.support.live_service import PROJECT, LiveService, basic_job, grid_search
from tui_app.api.job_compare import ResubmitHistory
from tui_app.model.views.job_diff import NOT_KNOWN_YET

OTHER_PROJECT = "diff-other-project"


def changed_keys(diff: str) -> set[str]:
    """What the changed lines are about: the YAML key, or ``- item`` for a list item."""
    keys = set()
    for line in changed_lines(diff):
        body = line[1:].strip()
        keys.add(body.split(":", 1)[0] if not body.startswith("- ") else body)
    return keys


def _pair(service: LiveService, package_uri: str) -> tuple[str, str]:
    """Two finished jobs of the sample trainer that differ in one argument it ignores on the
    BASIC tier (no parameter servers to log from): the same run otherwise."""
    client = service.client()
    a, b = unique_id("diff_a"), unique_id("diff_b")
    client.create(basic_job(a, package_uri, *QUICK, "--ps-log-every", "50"))
    client.create(basic_job(b, package_uri, *QUICK, "--ps-log-every", "60"))
    for job_id in (a, b):
        assert service.wait_state(job_id, timeout=60)["state"] == "SUCCEEDED"
    return a, b


@pytest.fixture(scope="module")
def pair(service: LiveService, trainer_sdist: Path) -> tuple[str, str]:
    return _pair(service, service.stage(trainer_sdist))


def test_one_argument_differs(service: LiveService, pair: tuple[str, str]) -> None:
    a, b = pair
    done = tui_process(service, "diff", a, b)  # as a script runs it; the other tests in-process
    assert done.returncode == 1, done.stderr
    head = done.stdout.splitlines()[:2]
    assert head == [f"--- {PROJECT}/{a}", f"+++ {PROJECT}/{b}"]
    assert changed_keys(done.stdout) <= {
        "jobId",
        "createTime",
        "startTime",
        "endTime",
        "duration",
        "consumedMLUnits",
        "- '50'",
        "- '60'",
    }
    lines = changed_lines(done.stdout)
    assert "-  - '50'" in lines and "+  - '60'" in lines
    assert f"-  jobId: {a}" in lines and f"+  jobId: {b}" in lines


def test_json_lists_the_differences_field_by_field(
    service: LiveService, pair: tuple[str, str]
) -> None:
    a, b = pair
    done = tui(service, "diff", a, b, "--format", "json")
    assert done.returncode == 1, done.stderr
    found = json.loads(done.stdout)
    assert found["left"] == f"{PROJECT}/{a}" and found["right"] == f"{PROJECT}/{b}"
    assert found["equal"] is False
    by_path = {d["path"]: (d["left"], d["right"]) for d in found["differences"]}
    assert by_path["job.jobId"] == (a, b)
    args = [p for p in by_path if p.startswith("trainingInput.")]
    # Named by its flag, not by its place among the arguments.
    assert args == ['trainingInput.args["--ps-log-every"]']
    assert by_path[args[0]] == ("50", "60")
    # What the service told of each run is there, the same for both: not a difference.
    assert not any(p.startswith(("packages", "environment")) for p in by_path)


def test_a_job_with_itself_is_equal(service: LiveService, pair: tuple[str, str]) -> None:
    a, _ = pair
    done = tui(service, "diff", a, a[:-3])  # the whole id and a prefix only it starts with
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert "both ids name the same job" in done.stderr and a in done.stderr
    as_json = tui(service, "diff", a, a, "--format", "json")
    assert as_json.returncode == 0
    assert json.loads(as_json.stdout)["equal"] is True


def test_an_unknown_id_is_trouble_not_a_difference(
    service: LiveService, pair: tuple[str, str]
) -> None:
    a, b = pair
    typo = a[:-2] + ("0" if a[-2] != "0" else "1") + a[-1]
    done = tui(service, "diff", typo, b)
    assert done.returncode == 2, done.stdout
    assert "NOT_FOUND" in done.stderr and "Did you mean" in done.stderr and a in done.stderr
    assert done.stdout == ""
    for bad in (f"{a}/1", "projects/x/jobs", "a/b/c"):
        refused = tui(service, "diff", bad, b)
        assert refused.returncode == 2, (bad, refused.stderr)
        assert refused.stderr.startswith("error: ")


def test_two_projects(service: LiveService, pair: tuple[str, str], trainer_sdist: Path) -> None:
    a, _ = pair
    other = unique_id("diff_other")
    uri = service.stage(trainer_sdist)
    service.client(OTHER_PROJECT).create(basic_job(other, uri, *QUICK, "--ps-log-every", "50"))
    service.wait_state(other, project=OTHER_PROJECT, timeout=60)
    done = tui(service, "diff", a, f"projects/{OTHER_PROJECT}/jobs/{other}")
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[:2] == [
        f"--- {PROJECT}/{a}",
        f"+++ {OTHER_PROJECT}/{other}",
    ]
    assert f"+  project: {OTHER_PROJECT}" in changed_lines(done.stdout)
    assert not any("'50'" in line for line in changed_lines(done.stdout))


def test_two_trials_of_a_tuning_job(service: LiveService, trainer_sdist: Path) -> None:
    job_id = unique_id("diff_hp")
    hp = grid_search("learning_rate", [0.02, 0.1], parallel=2)
    uri = service.stage(trainer_sdist)
    service.client().create(
        basic_job(job_id, uri, "--steps", "20", "--checkpoint-every", "10", hyperparameters=hp)
    )
    assert service.wait_state(job_id, timeout=90)["state"] == "SUCCEEDED"
    done = tui(service, "diff", f"{job_id}/1", f"{job_id}/2")
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[:2] == [
        f"--- {PROJECT}/{job_id}/1",
        f"+++ {PROJECT}/{job_id}/2",
    ]
    lines = changed_lines(done.stdout)
    assert "-  trialId: '1'" in lines and "+  trialId: '2'" in lines
    assert "-  learning_rate: '0.02'" in lines and "+  learning_rate: '0.1'" in lines
    assert any(line.startswith("-  finalMetric: ") for line in lines)
    same = tui(service, "diff", f"{job_id}/1", f"projects/{PROJECT}/jobs/{job_id}/1")
    assert same.returncode == 0 and "same trial" in same.stderr
    missing = tui(service, "diff", f"{job_id}/1", f"{job_id}/9")
    assert missing.returncode == 2 and "no trial '9'" in missing.stderr
    mixed = tui(service, "diff", f"{job_id}/1", job_id)
    assert mixed.returncode == 2 and "not a job with a trial" in mixed.stderr


def test_resubmit_records_its_source(service: LiveService, pair: tuple[str, str]) -> None:
    a, _ = pair
    done = tui(service, "resubmit", a)
    assert done.returncode == 0, done.stderr
    new = done.stdout.strip()
    assert ResubmitHistory().sources(PROJECT)[new] == a


def test_a_queued_jobs_packages_and_runtime_are_not_known_yet(
    small_service: LiveService, trainer_sdist: Path
) -> None:
    """A job waiting for a slot against one that ran: the service has no environment for it
    yet, so its packages and runtime read "not known yet", and they are no differences: the
    JSON lists them apart, the unified diff (the documents as they are) comes with a note."""
    svc = small_service
    uri = svc.stage(trainer_sdist)
    client = svc.client()
    ran, queued = unique_id("diff_ran"), unique_id("diff_queued")
    holders = [unique_id("diff_hold_a"), unique_id("diff_hold_b")]
    client.create(basic_job(ran, uri, *QUICK))
    assert svc.wait_state(ran, timeout=60)["state"] == "SUCCEEDED"
    try:
        for held in holders:  # both slots, for as long as the test needs them
            client.create(basic_job(held, uri, "--steps", "100000", "--sleep", "0.05"))
        for held in holders:
            svc.wait_state(held, ("RUNNING",))
        client.create(basic_job(queued, uri, *QUICK))
        assert client.get(queued)["state"] == "QUEUED"

        done = tui(svc, "diff", ran, queued, "--format", "json")
        assert done.returncode == 1, done.stderr
        found = json.loads(done.stdout)
        paths = {d["path"] for d in found["differences"]}
        assert "outcome.state" in paths and "job.jobId" in paths
        assert not any(p.startswith(("packages", "environment")) for p in paths), paths
        pending = {d["path"]: d["right"] for d in found["notKnownYet"]}
        assert pending['packages["trainer-0.1.0.tar.gz"]'] == NOT_KNOWN_YET
        assert pending["environment.runtimeVersion"] == NOT_KNOWN_YET

        text = tui(svc, "diff", ran, queued)
        assert text.returncode == 1, text.stderr
        lines = changed_lines(text.stdout)
        assert f"+environment: {NOT_KNOWN_YET}" in lines
        assert f"+  trainer-0.1.0.tar.gz: {NOT_KNOWN_YET}" in lines
        assert "unknown" not in text.stdout
        assert "not known yet" in text.stderr and "not differences" in text.stderr
        assert client.get(queued)["state"] == "QUEUED"  # it was still waiting throughout
    finally:
        for job_id in (*holders, queued):
            client.cancel(job_id)
