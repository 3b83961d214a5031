"""``tui-app logs search``: every job's lines that hold a text, from a real service, as a script
runs it (a process of its own, its stdout a pipe).

Two jobs print chosen lines: one of them a CUDA out-of-memory error between lines of its own,
the other only lines that look alike (``memory`` alone). A search must find the one job's line
and not the other's, group it under its job, give its neighbours with ``--context``, write
JSON a script can read, and exit 2 for a query the service cannot read.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.support.live_service import LiveService
from tests.support.task_packages import serve_ended_jobs

PROJECT = "grep-cli-project"
"""A project of the module's own: the search is over every job of the project."""
OOM = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"
LINES = {
    "oom": [
        "epoch 1 loss=0.52",
        "epoch 2 loss=0.41",
        OOM,
        "epoch 3 never came",
        'saved "model.pt" anyway',
    ],
    "ok": ["epoch 1 loss=0.50", "memory is fine here", "done"],
}
TASK = (
    f"import sys\nLINES = {LINES!r}\nfor line in LINES[sys.argv[1]]:\n    print(line, flush=True)\n"
)
ROW = re.compile(r"(> |  )?\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  (?P<task>\S+)\s+(?P<text>.*)")


@pytest.fixture(scope="module")
def two_jobs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveService, str, str]]:
    """A service of the module's own with both jobs ended: (service, the OOM job, the other)."""
    jobs = {"oom": "oom", "ok": "ok"}
    for svc, ids in serve_ended_jobs(tmp_path_factory, "grep_cli", PROJECT, TASK, jobs):
        yield svc, ids["oom"], ids["ok"]


def search(service: LiveService, *args: str) -> subprocess.CompletedProcess[str]:
    """``tui-app logs search ARGS`` on ``service`` in ``PROJECT``, as a script runs it."""
    argv = ["logs", "search", *args, "--state-dir", str(service.state_dir), "--project", PROJECT]
    return subprocess.run(
        [sys.executable, "-m", "tui_app", *argv],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


def test_text_output_is_grouped_by_job(two_jobs: tuple[LiveService, str, str]) -> None:
    svc, oom, ok = two_jobs
    result = search(svc, "out of memory", "--since", "1h")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"{oom}  (1 hit)"
    row = ROW.fullmatch(lines[1])
    assert row is not None, lines[1]
    assert (row["task"], row["text"]) == ("master-replica-0", OOM)
    assert len(lines) == 2 and ok not in result.stdout
    # Both jobs print "epoch 1": two groups, the newer job's first; text is case-insensitive.
    both = search(svc, "EPOCH 1 LOSS")
    assert both.returncode == 0, both.stderr
    headers = [line for line in both.stdout.splitlines() if line.endswith("(1 hit)")]
    assert sorted(headers) == sorted([f"{oom}  (1 hit)", f"{ok}  (1 hit)"])
    # Quotes in the text are the text's: escaped, not a filter's syntax.
    quoted = search(svc, 'saved "model.pt"')
    assert quoted.returncode == 0, quoted.stderr
    assert quoted.stdout.splitlines()[1].endswith('saved "model.pt" anyway')
    # Nothing found: no output, exit 0, and stderr says so.
    none = search(svc, "no such text in any job")
    assert (none.returncode, none.stdout) == (0, "")
    assert "No line matches" in none.stderr


def test_json_output_and_filters(two_jobs: tuple[LiveService, str, str]) -> None:
    svc, oom, _ = two_jobs
    result = search(svc, 'SEARCH("`out of memory`") AND severity>=INFO', "--format", "json")
    assert result.returncode == 0, result.stderr
    entries = json.loads(result.stdout)
    assert len(entries) == 1
    entry = entries[0]
    assert {k: entry[k] for k in ("job_id", "task_name", "trial_id", "message")} == {
        "job_id": oom,
        "task_name": "master-replica-0",
        "trial_id": None,
        "message": OOM,
    }
    assert entry["severity"] == "INFO" and entry["timestamp"].endswith("Z")
    # --limit: the newest hits only, and stderr says that more match.
    limited = search(svc, "epoch", "--limit", "2", "--format", "json")
    assert limited.returncode == 0, limited.stderr
    stamps = [e["timestamp"] for e in json.loads(limited.stdout)]
    assert len(stamps) == 2 and stamps == sorted(stamps, reverse=True)
    assert "More lines may match than the 2 shown" in limited.stderr


def test_context_lines_around_each_hit(two_jobs: tuple[LiveService, str, str]) -> None:
    svc, oom, _ = two_jobs
    result = search(svc, "out of memory", "--context", "1")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"{oom}  (1 hit)"
    texts = [(m[1], m["text"]) for line in lines[1:] if (m := ROW.fullmatch(line))]
    assert texts == [("  ", "epoch 2 loss=0.41"), ("> ", OOM), ("  ", "epoch 3 never came")]
    as_json = search(svc, "out of memory", "--context", "2", "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    (entry,) = json.loads(as_json.stdout)
    assert [e["message"] for e in entry["before"]] == ["epoch 1 loss=0.52", "epoch 2 loss=0.41"]
    after = [e["message"] for e in entry["after"]]
    assert after == ["epoch 3 never came", 'saved "model.pt" anyway']
    assert {e["job_id"] for e in entry["before"] + entry["after"]} == {oom}


def test_a_query_the_service_cannot_read_exits_2(two_jobs: tuple[LiveService, str, str]) -> None:
    svc, _, _ = two_jobs
    bad = search(svc, 'SEARCH("out of memory"')
    assert bad.returncode == 2 and bad.stdout == ""
    # The service's own words, once (its message holds the field violation already).
    assert bad.stderr.startswith("error: INVALID_ARGUMENT: "), bad.stderr
    assert "Invalid filter: Missing ')' to close SEARCH(" in bad.stderr
    assert len(bad.stderr.splitlines()) == 1
    assert "Traceback" not in bad.stderr
    since = search(svc, "memory", "--since", "yesterday")
    assert since.returncode == 2 and "--since 'yesterday'" in since.stderr


def test_the_job_lists_filter_narrows_the_jobs_searched(
    two_jobs: tuple[LiveService, str, str],
) -> None:
    """``--filter`` takes the list's language: the jobs it keeps are the ones searched."""
    svc, oom, ok = two_jobs
    # "epoch 1 loss" is in both jobs; the filter keeps one of them by a word of its id.
    only_ok = search(svc, "EPOCH 1 LOSS", "--filter", ok.rsplit("_", 1)[-1])
    assert only_ok.returncode == 0, only_ok.stderr
    assert only_ok.stdout.splitlines()[0] == f"{ok}  (1 hit)" and oom not in only_ok.stdout
    failed = search(svc, "EPOCH 1 LOSS", "--filter", "state:FAILED")
    assert (failed.returncode, failed.stdout) == (0, "") and "No line matches" in failed.stderr
    bad = search(svc, "EPOCH 1 LOSS", "--filter", "state:BOGUS")
    assert bad.returncode == 2 and bad.stderr.startswith("error: --filter: "), bad.stderr
