"""The diff model: comparison documents, rows, the unified diff and the partner rule (issue 27)."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tui_app.model.views.job_diff import (
    ELLIPSIS,
    FLAG_PRESENT,
    NOT_KNOWN_YET,
    UNKNOWN,
    DiffRow,
    JobFacts,
    comparison_document,
    diff_json,
    diff_partner,
    diff_sections,
    document_yaml,
    shorten_apart,
    trial_document,
    unified_diff,
)

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
SHA_A = "a" * 64
SHA_B = "b" * 64
URI = "gs://bucket/packages/trainer-0.1.tar.gz"


def _job(job_id: str = "mnist_20260301_100000", **training: Any) -> dict[str, Any]:
    ti: dict[str, Any] = {
        "scaleTier": "CUSTOM",
        "masterType": "n1-standard-4",
        "workerType": "n1-standard-4",
        "workerCount": "2",
        "runtimeVersion": "2.11",
        "pythonVersion": "3.7",
        "pythonModule": "trainer.task",
        "packageUris": [URI],
        "args": ["--steps", "100", "--lr", "0.1", "--batch-size", "32"],
        "jobDir": "gs://bucket/out",
        "region": "us-central1",
    }
    ti.update(training)
    return {
        "jobId": job_id,
        "createTime": "2026-03-01T10:00:00Z",
        "startTime": "2026-03-01T10:00:05Z",
        "endTime": "2026-03-01T10:03:10Z",
        "state": "SUCCEEDED",
        "trainingInput": ti,
        "trainingOutput": {"consumedMLUnits": 0.25},
        "labels": {"owner": "ana"},
        "etag": "x",
    }


def _env(sha: str = SHA_A) -> dict[str, Any]:
    return {
        "runtimeVersion": "2.11",
        "pythonVersion": "3.7",
        "interpreter": "/usr/bin/python3.7",
        "variant": "cpu",
        "exact": True,
        "packages": {"tensorflow": "2.11.0", "numpy": "1.21.6"},
        "trainerPackages": [
            {"uri": URI, "name": "trainer-0.1.tar.gz", "sha256": sha, "sizeBytes": "1234"}
        ],
    }


def _doc(job: dict[str, Any], env: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    return comparison_document(JobFacts(job, "p", env if env is not None else _env(), **kw), NOW)


def _changed(left: dict[str, Any], right: dict[str, Any]) -> list[DiffRow]:
    return [row for section in diff_sections(left, right) for row in section.changed]


def _same_times(job: dict[str, Any], like: dict[str, Any]) -> dict[str, Any]:
    for key in ("createTime", "startTime", "endTime"):
        job[key] = like[key]
    return job


def test_document_sections_in_order_with_every_fact() -> None:
    doc = _doc(_job(), metrics={"loss": 0.5, "eval/accuracy": 0.9})
    assert list(doc) == [
        "job",
        "trainingInput",
        "labels",
        "packages",
        "environment",
        "outcome",
        "metrics",
    ]
    assert doc["job"] == {
        "jobId": "mnist_20260301_100000",
        "project": "p",
        "createTime": "2026-03-01 10:00:00 UTC",
        "startTime": "2026-03-01 10:00:05 UTC",
        "endTime": "2026-03-01 10:03:10 UTC",
    }
    assert doc["trainingInput"]["args"] == ["--steps", "100", "--lr", "0.1", "--batch-size", "32"]
    assert list(doc["trainingInput"])[:3] == ["scaleTier", "masterType", "workerType"]
    assert doc["labels"] == {"owner": "ana"}
    assert doc["packages"] == {"trainer-0.1.tar.gz": SHA_A}
    assert doc["environment"] == {
        "runtimeVersion": "2.11",
        "pythonVersion": "3.7",
        "variant": "cpu",
        "exact": True,
        "frameworks": {"numpy": "1.21.6", "tensorflow": "2.11.0"},
    }
    assert doc["outcome"] == {"state": "SUCCEEDED", "duration": "3m05s", "consumedMLUnits": 0.25}
    assert doc["metrics"] == {"eval/accuracy": 0.9, "loss": 0.5}
    # It is YAML-ready: it reads back as the same data.
    assert yaml.safe_load(document_yaml(doc)) == doc


def test_unknown_environment_and_package_hashes() -> None:
    doc = comparison_document(JobFacts(_job(), "p"), NOW)
    assert doc["packages"] == {"trainer-0.1.tar.gz": UNKNOWN}
    assert doc["environment"] == UNKNOWN
    assert "metrics" not in doc
    # Known against unknown is a difference, row by row: each known field against "unknown",
    # with no extra row for the word itself.
    rows = _changed(doc, _doc(_job()))
    paths = {r.path for r in rows}
    assert 'packages["trainer-0.1.tar.gz"]' in paths
    assert "environment" not in paths and "environment.runtimeVersion" in paths
    env_rows = [r for r in rows if r.path.startswith("environment.")]
    assert env_rows and all(r.left == UNKNOWN and r.right not in (None, UNKNOWN) for r in env_rows)


def test_one_changed_argument_is_one_changed_row() -> None:
    left = _doc(_job())
    right_job = _job(args=["--steps", "100", "--lr", "0.2", "--batch-size", "32"])
    right = _doc(right_job)
    rows = _changed(left, right)
    assert rows == [DiffRow('trainingInput.args["--lr"]', "args --lr", "0.1", "0.2")]
    sections = {s.key: s for s in diff_sections(left, right)}
    assert sections["trainingInput"].title == "Training input"
    assert sections["trainingInput"].unchanged_count == len(sections["trainingInput"].rows) - 1
    assert sections["labels"].changed == ()
    text = unified_diff(left, right, "p/a", "p/b")
    changed = [
        line
        for line in text.splitlines()
        if line[:1] in "+-" and not line.startswith(("---", "+++"))
    ]
    assert changed == ["-  - '0.1'", "+  - '0.2'"]
    assert text.startswith("--- p/a\n+++ p/b\n")


def test_an_inserted_argument_is_one_row_not_a_cascade() -> None:
    left = _doc(_job())
    args = ["--steps", "100", "--verbose", "--lr", "0.1", "--batch-size", "32"]
    right = _doc(_job(args=args))
    rows = _changed(left, right)
    # A bare flag on one side only: present against absent.
    assert rows == [DiffRow('trainingInput.args["--verbose"]', "args --verbose", None, "present")]
    # The rows around it are the same flags with the same values, in the newer job's order.
    arg_rows = [r for s in diff_sections(left, right) for r in s.rows if r.label.startswith("args")]
    assert [(r.label, r.left, r.right) for r in arg_rows] == [
        ("args --steps", "100", "100"),
        ("args --verbose", None, FLAG_PRESENT),
        ("args --lr", "0.1", "0.1"),
        ("args --batch-size", "32", "32"),
    ]
    diff_lines = unified_diff(left, right, "a", "b").splitlines()
    assert [x for x in diff_lines if x.startswith("+") and not x.startswith("+++")] == [
        "+  - --verbose"
    ]
    removed = _changed(right, left)
    assert removed == [
        DiffRow('trainingInput.args["--verbose"]', "args --verbose", "present", None)
    ]


def _arg_rows(left: list[str], right: list[str]) -> list[tuple[str, str | None, str | None]]:
    """Every args row of two jobs that differ only in their args: (label, left, right)."""
    rows = diff_sections(_doc(_job(args=left)), _doc(_job(args=right)))
    return [(r.label, r.left, r.right) for s in rows for r in s.rows if r.label.startswith("args")]


def _arg_changes(left: list[str], right: list[str]) -> list[tuple[str, str | None, str | None]]:
    rows = _changed(_doc(_job(args=left)), _doc(_job(args=right)))
    return [(r.label, r.left, r.right) for r in rows]


def test_a_flags_value_is_named_by_its_flag_however_written() -> None:
    """``args --learning-rate │ 0.1 │ 0.05``: no counting arguments, no ``u`` to learn it."""
    old = ["--job-dir", "gs://b/out", "--learning-rate", "0.1", "--epochs", "3"]
    new = ["--job-dir", "gs://b/out", "--learning-rate=0.05", "--epochs", "3"]
    assert _arg_changes(old, new) == [("args --learning-rate", "0.1", "0.05")]
    assert _arg_changes(old, [*old[:2], "--learning-rate", "0.05", *old[4:]]) == [
        ("args --learning-rate", "0.1", "0.05")
    ]
    # A flag's path names it too (the JSON of `jobs diff`), quoted as a key that is no name.
    found = diff_json(_doc(_job(args=old)), _doc(_job(args=["--learning-rate=0.05"])), "a", "b")
    paths = [d["path"] for d in found["differences"]]
    assert 'trainingInput.args["--learning-rate"]' in paths
    assert 'trainingInput.args["--job-dir"]' in paths  # gone on the right: absent, null
    # The same value written the other way is a difference of the documents, shown as written.
    assert _arg_changes(["--lr", "0.1"], ["--lr=0.1"]) == [("args --lr", "--lr 0.1", "--lr=0.1")]
    # A short flag, and a negative number that is a value, not a flag.
    assert _arg_changes(["-n", "4", "--shift", "-0.5"], ["-n", "8", "--shift", "-0.25"]) == [
        ("args -n", "4", "8"),
        ("args --shift", "-0.5", "-0.25"),
    ]


def test_removing_two_adjacent_arguments_is_named_by_what_was_removed() -> None:
    """The soft spot: ``--lr 0.1`` removed from between two flags was two rows, ``args[2]`` and
    ``args[3]``, the second named by a place the right side fills with another argument."""
    old = ["--steps", "100", "--lr", "0.1", "--batch-size", "32"]
    new = ["--steps", "100", "--batch-size", "32"]
    assert _arg_changes(old, new) == [("args --lr", "0.1", None)]
    assert _arg_rows(old, new) == [
        ("args --steps", "100", "100"),
        ("args --lr", "0.1", None),
        ("args --batch-size", "32", "32"),
    ]
    assert _arg_changes(new, old) == [("args --lr", None, "0.1")]
    # Two positional arguments removed: named by their places on the left, saying so, and
    # never by a place the right side holds another argument at.
    assert _arg_rows(["a", "b", "c", "d"], ["a", "d"]) == [
        ("args[0]", "a", "a"),
        ("args[1] (left)", "b", None),
        ("args[2] (left)", "c", None),
        ("args[1]", "d", "d"),
    ]
    # Two removed at the end of a plain list (packageUris): the same rule.
    left = {"trainingInput": {"packageUris": ["a", "b", "c", "d"]}}
    right = {"trainingInput": {"packageUris": ["a", "d"]}}
    assert [r.label for r in _changed(left, right)] == [
        "packageUris[1] (left)",
        "packageUris[2] (left)",
    ]


def test_a_bare_flag_is_present_or_absent() -> None:
    assert _arg_changes(["--steps", "5"], ["--verbose", "--steps", "5"]) == [
        ("args --verbose", None, FLAG_PRESENT)
    ]
    assert _arg_changes(["--steps", "5", "--verbose"], ["--steps", "5"]) == [
        ("args --verbose", FLAG_PRESENT, None)
    ]
    # A bare flag that takes a value: what it was, what it is.
    assert _arg_changes(["--debug", "--steps", "5"], ["--debug", "2", "--steps", "5"]) == [
        ("args --debug", FLAG_PRESENT, "2")
    ]


def test_repeated_flags_stay_apart() -> None:
    old = ["--layer", "64", "--layer", "32", "--out", "x"]
    assert _arg_changes(old, ["--layer", "64", "--layer", "16", "--out", "x"]) == [
        ("args --layer[1]", "32", "16")
    ]
    assert _arg_rows(old, ["--layer", "64", "--layer", "32", "--layer", "16", "--out", "x"]) == [
        ("args --layer[0]", "64", "64"),
        ("args --layer[1]", "32", "32"),
        ("args --layer[2]", None, "16"),
        ("args --out", "x", "x"),
    ]
    # The middle one of three removed: named by its place on the left.
    three = ["--layer", "64", "--layer", "32", "--layer", "16"]
    assert _arg_changes(three, ["--layer", "64", "--layer", "16"]) == [
        ("args --layer[1] (left)", "32", None)
    ]


def test_positional_arguments_keep_their_place() -> None:
    old = ["train.csv", "--lr", "0.1", "eval.csv"]
    new = ["--epochs", "3", "train.csv", "--lr", "0.1", "test.csv"]
    assert _arg_rows(old, new) == [
        ("args --epochs", None, "3"),
        ("args[2]", "train.csv", "train.csv"),
        ("args --lr", "0.1", "0.1"),
        ("args[5]", "eval.csv", "test.csv"),
    ]
    # After "--", every argument is positional, flags' look-alikes too.
    assert _arg_rows(["--lr", "1", "--", "--lr", "2"], ["--lr", "1", "--", "--lr", "3"]) == [
        ("args --lr", "1", "1"),
        ("args[2]", "--", "--"),
        ("args[3]", "--lr", "--lr"),
        ("args[4]", "2", "3"),
    ]


def test_arguments_in_another_order_are_one_row_with_both_command_lines() -> None:
    """Each flag the same on both sides, in another order: no flag changed, yet the lists
    differ (and so does ``diff -u``): one row says so, with each side's command line."""
    assert _arg_changes(["--a", "1", "--b", "two words"], ["--b", "two words", "--a", "1"]) == [
        ("args order", "--a 1 --b 'two words'", "--b 'two words' --a 1")
    ]
    assert _arg_changes(["--lr", "0.1", "data.csv"], ["data.csv", "--lr", "0.1"]) == [
        ("args order", "--lr 0.1 data.csv", "data.csv --lr 0.1")
    ]
    # An added flag is no change of order, nor is a repeated flag's own order a new one.
    assert _arg_changes(["--a", "1", "--b", "2"], ["--a", "1", "--c", "--b", "2"]) == [
        ("args --c", None, "present")
    ]


_ARG = st.sampled_from(
    ["--lr", "--lr=0.1", "0.1", "0.2", "--layer", "64", "-v", "--", "data.csv", "--verbose", "-1"]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(_ARG, max_size=8), st.lists(_ARG, max_size=8))
@example(["--lr", "0.1", "0.1", "0.1"], ["0.1", "--lr", "0.1", "0.1"])
@example(["--lr", "-v"], ["-v", "--lr"])
def test_args_rows_name_each_field_once_and_differ_only_where_the_args_do(
    left: list[str], right: list[str]
) -> None:
    """Whatever the two command lines, no two rows share a name, and there is a changed row
    exactly when the two lists differ: a difference is never lost, nor made up."""
    sections = diff_sections({"trainingInput": {"args": left}}, {"trainingInput": {"args": right}})
    rows = [(r.label, r.left, r.right) for section in sections for r in section.rows]
    labels = [label for label, _, _ in rows]
    assert len(labels) == len(set(labels)), rows
    changed = [row for row in rows if row[1] != row[2]]
    assert bool(changed) == (left != right), rows


def _queued(state: str = "QUEUED") -> dict[str, Any]:
    """A resubmit that has not started: no times but its creation, no output, no environment."""
    job = _job("mnist_20260301_110000")
    job["state"] = state
    for key in ("startTime", "endTime", "trainingOutput"):
        del job[key]
    return job


@pytest.mark.parametrize("state", ["QUEUED", "PREPARING"])
def test_what_a_job_that_has_not_started_cannot_tell_is_not_known_yet(state: str) -> None:
    """Its packages' bytes and its runtime: "not known yet", rows neither changed nor the same,
    and not among the differences; "unknown" of a job that ran is still one."""
    ran = _doc(_job())
    # The local service answers {} for an environment not ready; a cloud one has none (None).
    environments: tuple[dict[str, Any] | None, ...] = ({}, None)
    for environment in environments:
        waiting = comparison_document(JobFacts(_queued(state), "p", environment), NOW)
        assert waiting["packages"] == {"trainer-0.1.tar.gz": NOT_KNOWN_YET}
        assert waiting["environment"] == NOT_KNOWN_YET
    sections = {s.key: s for s in diff_sections(ran, waiting)}
    for key in ("packages", "environment"):
        section = sections[key]
        assert section.rows and section.changed == () and section.unchanged_count == 0
        assert section.pending == section.rows
        assert all(
            r.right == NOT_KNOWN_YET and r.left not in (None, NOT_KNOWN_YET) for r in section.rows
        )
    assert ('packages["trainer-0.1.tar.gz"]', SHA_A, NOT_KNOWN_YET) in [
        (r.path, r.left, r.right) for r in sections["packages"].pending
    ]
    found = diff_json(ran, waiting, "p/a", "p/b")
    paths = [d["path"] for d in found["differences"]]
    assert not any(p.startswith(("packages", "environment")) for p in paths)
    assert "outcome.state" in paths  # the states do differ
    pending = {d["path"] for d in found["notKnownYet"]}
    assert 'packages["trainer-0.1.tar.gz"]' in pending and "environment.runtimeVersion" in pending
    # Two jobs that have not started: nothing known of either, and no difference there.
    both = diff_sections(waiting, waiting)
    assert all(not s.changed for s in both)
    assert [len(s.pending) for s in both if s.key in ("packages", "environment")] == [1, 1]
    # The unified diff is of the documents as they are: the words are there.
    assert f"+environment: {NOT_KNOWN_YET}" in unified_diff(ran, waiting, "a", "b").splitlines()


def test_unknown_is_still_a_difference_once_a_job_has_started() -> None:
    for state in ("RUNNING", "FAILED"):
        started = _queued()
        started["state"] = state
        doc = comparison_document(JobFacts(started, "p"), NOW)
        assert doc["environment"] == UNKNOWN
        rows = _changed(_doc(_job()), doc)
        assert any(r.path == 'packages["trainer-0.1.tar.gz"]' for r in rows)
        assert "notKnownYet" not in diff_json(_doc(_job()), doc, "a", "b")
    # A queued job the service already has an environment for (re-queued): what it says.
    queued = comparison_document(JobFacts(_queued(), "p", _env(SHA_B)), NOW)
    assert queued["packages"] == {"trainer-0.1.tar.gz": SHA_B}
    assert [r.path for r in _changed(_doc(_job()), queued) if r.path.startswith("pack")] == [
        'packages["trainer-0.1.tar.gz"]'
    ]


TRIAL_4 = "mnist_hptuning_20261207_033400/4"
TRIAL_6 = "mnist_hptuning_20261207_033400/6"


def test_shortened_names_keep_what_tells_them_apart() -> None:
    """At 80 columns each value column holds about 28 cells: two trials' names cut at the end
    read the same (``mnist_hptuning_20261207_0334…`` twice)."""
    four, six = shorten_apart(TRIAL_4, TRIAL_6, 28), shorten_apart(TRIAL_6, TRIAL_4, 28)
    assert (four, six) == ("mnist_hptunin…61207_033400/4", "mnist_hptunin…61207_033400/6")
    assert len(four) == 28 and four.startswith("mnist_") and four.count(ELLIPSIS) == 1
    # Two runs of one base name: the time that differs stays, and the start says which job.
    a, b = "mnist_hptuning_20261207_033400", "mnist_hptuning_20261207_091500"
    assert shorten_apart(a, b, 20) == "mnist_h…61207_033400"
    assert shorten_apart(b, a, 20) == "mnist_h…61207_091500"
    # Names that differ at the start and share their end: the shared end is shortened.
    c, d = "a_mnist_hptuning_20261207_033400", "b_mnist_hptuning_20261207_033400"
    assert shorten_apart(c, d, 20) == "a_mnist_hp…07_033400"
    # What fits is left whole; what differs is kept as far as the width allows.
    assert shorten_apart(TRIAL_4, TRIAL_6, 40) == TRIAL_4
    assert shorten_apart(TRIAL_4, TRIAL_6, 0) == TRIAL_4  # the width is not known yet
    for width in range(1, len(TRIAL_4) + 1):
        short = shorten_apart(TRIAL_4, TRIAL_6, width)
        assert len(short) <= width
        if width >= 2:
            assert short.endswith("4"), short
    assert shorten_apart("census_a", "mnist_b", 5) == "cens…"


def test_same_uri_different_bytes_is_a_difference() -> None:
    job = _job()
    left, right = _doc(job), _doc(copy.deepcopy(job), _env(SHA_B))
    assert [(r.path, r.label, r.left, r.right) for r in _changed(left, right)] == [
        ('packages["trainer-0.1.tar.gz"]', "trainer-0.1.tar.gz", SHA_A, SHA_B)
    ]
    assert f"-  trainer-0.1.tar.gz: {SHA_A}" in unified_diff(left, right, "a", "b")


def test_identical_documents() -> None:
    doc = _doc(_job(), metrics={"loss": float("nan")})
    again = _doc(copy.deepcopy(_job()), metrics={"loss": float("nan")})
    assert unified_diff(doc, again, "a", "b") == ""
    assert _changed(doc, again) == []
    assert diff_json(doc, again, "p/a", "p/b") == {
        "left": "p/a",
        "right": "p/b",
        "equal": True,
        "differences": [],
    }


def test_ids_times_and_outcome_differ_for_a_resubmitted_failure() -> None:
    failed = _job()
    failed["state"] = "FAILED"
    failed["errorMessage"] = (
        "The replica master 0 exited with a non-zero status of 1.\n"
        "Traceback (most recent call last):\n"
        '  File "task.py", line 3, in <module>\n'
        "ValueError: learning rate too high"
    )
    again = _same_times(_job("mnist_20260301_110000"), failed)
    again["endTime"] = "2026-03-01T10:05:05Z"
    left, right = _doc(failed), _doc(again)
    assert left["outcome"]["cause"] == "ValueError: learning rate too high"
    found = diff_json(left, right, "p/mnist_20260301_100000", "p/mnist_20260301_110000")
    assert not found["equal"]
    assert [d["path"] for d in found["differences"]] == [
        "job.jobId",
        "job.endTime",
        "outcome.state",
        "outcome.duration",
        "outcome.cause",
        "outcome.errorMessage",
    ]
    assert found["differences"][-1]["right"] is None
    # The traceback is a block in the YAML: its lines show as lines of the unified diff.
    text = unified_diff(left, right, "a", "b")
    assert "-    ValueError: learning rate too high\n" in text


def test_values_with_newlines_and_odd_characters() -> None:
    odd = "line one\nline two \x1b[31mred\x1b[0m \u202e end\r"
    left = _doc(_job(), metrics=None)
    job = _job()
    job["labels"] = {"owner": "ana", "note": "tab\there"}
    job["trainingInput"]["args"] = ["--title", odd, *job["trainingInput"]["args"][0:]]
    right = _doc(job)
    rows = _changed(left, right)
    assert DiffRow('trainingInput.args["--title"]', "args --title", None, odd) in rows
    assert DiffRow("labels.note", "note", None, "tab\there") in rows
    text = unified_diff(left, right, "a", "b")
    # YAML escapes what a terminal would act on: the text holds no raw ESC or CR.
    assert "\x1b" not in text and "\r" not in text
    # It is still the data: the right document's YAML reads back with the same value.
    assert yaml.safe_load(document_yaml(right))["trainingInput"]["args"][1] == odd
    # A value with a newline is one row, not one per line.
    assert sum(1 for r in rows if r.right == odd) == 1


def test_a_key_that_is_not_a_plain_name_is_quoted_in_the_path() -> None:
    left = {"packages": {"a.b c": "1"}}
    right = {"packages": {"a.b c": "2"}}
    assert _changed(left, right) == [DiffRow('packages["a.b c"]', "a.b c", "1", "2")]


def test_nested_fields_and_hyperparameters_by_name() -> None:
    hp: dict[str, Any] = {
        "goal": "MINIMIZE",
        "maxTrials": 4,
        "params": [
            {"parameterName": "lr", "type": "DOUBLE", "minValue": 0.001, "maxValue": 0.1},
            {"parameterName": "opt", "type": "CATEGORICAL", "categoricalValues": ["sgd", "adam"]},
        ],
    }
    accel = {"acceleratorConfig": {"count": "1", "type": "NVIDIA_TESLA_T4"}}
    left = _doc(_job(hyperparameters=hp, masterConfig=accel))
    hp2 = copy.deepcopy(hp)
    hp2["params"].insert(
        0, {"parameterName": "batch", "type": "DISCRETE", "discreteValues": [16, 32]}
    )
    hp2["params"][2]["categoricalValues"] = ["sgd", "rmsprop", "adam"]
    accel2 = {"acceleratorConfig": {"count": "2", "type": "NVIDIA_TESLA_T4"}}
    right = _doc(_job(hyperparameters=hp2, masterConfig=accel2))
    paths = [(r.path, r.left, r.right) for r in _changed(left, right)]
    assert paths == [
        ("trainingInput.masterConfig.acceleratorConfig.count", "1", "2"),
        # An inserted categorical value is one row; the parameter added is its own rows.
        ("trainingInput.hyperparameters.params.opt.categoricalValues[1]", None, "rmsprop"),
        ("trainingInput.hyperparameters.params.batch.discreteValues[0]", None, "16"),
        ("trainingInput.hyperparameters.params.batch.discreteValues[1]", None, "32"),
        ("trainingInput.hyperparameters.params.batch.type", None, "DISCRETE"),
    ]


def test_a_job_dir_named_after_its_job_is_no_difference() -> None:
    left = _doc(_job("m_20260301_100000", jobDir="gs://b/runs/m_20260301_100000"))
    right = _doc(_job("m_20260301_110000", jobDir="gs://b/runs/m_20260301_110000/"))
    assert left["trainingInput"]["jobDir"] == "gs://b/runs/<jobId>"
    assert [r.path for r in _changed(left, right)] == ["job.jobId"]
    elsewhere = _doc(_job("m_20260301_110000", jobDir="gs://b/runs/m_20260301_100000"))
    assert [r.path for r in _changed(left, elsewhere)] == ["job.jobId", "trainingInput.jobDir"]


def test_an_unset_tier_is_basic() -> None:
    plain = _job()
    del plain["trainingInput"]["scaleTier"]
    said = _job(scaleTier="BASIC")
    assert _changed(_doc(plain), _doc(said)) == []


def test_tuning_job_outcome_names_the_best_trial() -> None:
    job = _job(hyperparameters={"goal": "MINIMIZE", "hyperparameterMetricTag": "mse"})
    job["trainingOutput"] = {
        "isHyperparameterTuningJob": True,
        "completedTrialCount": "3",
        "trials": [
            {"trialId": "1", "state": "SUCCEEDED", "finalMetric": {"objectiveValue": 0.5}},
            {"trialId": "2", "state": "SUCCEEDED", "finalMetric": {"objectiveValue": 0.25}},
            {"trialId": "3", "state": "FAILED", "finalMetric": {"objectiveValue": float("nan")}},
        ],
    }
    outcome = _doc(job)["outcome"]
    assert outcome["bestTrial"] == "2" and outcome["bestObjective"] == 0.25
    assert outcome["completedTrials"] == 3


def _tuning_job() -> dict[str, Any]:
    job = _job(hyperparameters={"goal": "MAXIMIZE", "hyperparameterMetricTag": "acc"})
    job["trainingOutput"] = {
        "isHyperparameterTuningJob": True,
        "trials": [
            {
                "trialId": "1",
                "state": "SUCCEEDED",
                "hyperparameters": {"lr": "0.1", "layers": "2"},
                "startTime": "2026-03-01T10:00:05Z",
                "endTime": "2026-03-01T10:01:05Z",
                "finalMetric": {"objectiveValue": 0.8, "trainingStep": "100"},
                "allMetrics": [
                    {"trainingStep": "50", "objectiveValue": 0.85},
                    {"trainingStep": "100", "objectiveValue": 0.8},
                ],
            },
            {
                "trialId": "2",
                "state": "SUCCEEDED",
                "hyperparameters": {"lr": "0.01", "layers": "2"},
                "startTime": "2026-03-01T10:00:05Z",
                "endTime": "2026-03-01T10:02:05Z",
                "finalMetric": {"objectiveValue": 0.9, "trainingStep": "100"},
                "allMetrics": [{"trainingStep": "100", "objectiveValue": 0.9}],
                "isTrialStoppedEarly": True,
            },
        ],
    }
    return job


def test_trial_documents() -> None:
    job = _tuning_job()
    one, two = trial_document(job, "1", "p"), trial_document(job, "2", "p")
    assert list(one) == ["trial", "hyperparameters", "metrics"]
    assert one["trial"]["duration"] == "1m00s"
    assert one["metrics"] == {
        "metricTag": "acc",
        "finalMetric": 0.8,
        "finalStep": 100,
        "lastReported": 0.8,
        "bestReported": 0.85,
        "stoppedEarly": False,
    }
    found = diff_json(one, two, "p/j/1", "p/j/2")
    assert [d["path"] for d in found["differences"]] == [
        "trial.trialId",
        "trial.endTime",
        "trial.duration",
        "hyperparameters.lr",
        "metrics.finalMetric",
        "metrics.lastReported",
        "metrics.bestReported",
        "metrics.stoppedEarly",
    ]
    sections = diff_sections(one, two)
    assert [s.title for s in sections] == ["Trial", "Hyperparameters", "Metrics"]
    assert unified_diff(one, trial_document(job, "1", "p"), "a", "b") == ""
    missing = trial_document(job, "9", "p")
    assert missing["trial"] == {"jobId": job["jobId"], "project": "p", "trialId": "9"}


def test_notes_section_when_something_could_not_be_read() -> None:
    doc = _doc(_job(), notes=("metrics: not read (the service does not answer)",))
    assert list(doc)[-1] == "notes"
    assert diff_sections(doc, _doc(_job()))[-1].title == "Notes"


IDS = [
    "mnist_20260301_090000",
    "mnist_20260301_100000",
    "mnist_20260301_110000",
    "mnist_big_20260301_095000",
    "other_20260301_105000",
    "plain",
]


def test_partner_resubmitted_from_wins_when_listed() -> None:
    got = diff_partner(
        "mnist_20260301_110000", IDS, {"mnist_20260301_110000": "other_20260301_105000"}
    )
    assert got is not None
    assert (got.job_id, got.reason) == ("other_20260301_105000", "resubmitted from it")


def test_partner_else_the_newest_earlier_job_of_the_base_name() -> None:
    # The recorded source is gone from the list: the naming rule decides.
    gone = {"mnist_20260301_110000": "mnist_20250101_000000"}
    got = diff_partner("mnist_20260301_110000", IDS, gone)
    assert got is not None
    assert got.job_id == "mnist_20260301_100000"
    assert got.reason == "the newest earlier job named mnist"
    # Never a later job, nor one of another base that merely starts the same.
    first = diff_partner("mnist_20260301_090000", IDS, {})
    assert first is None
    assert diff_partner("mnist_big_20260301_095000", IDS, {}) is None


def test_partner_none() -> None:
    assert diff_partner("plain", IDS, {}) is None
    assert diff_partner("other_20260301_105000", IDS, {}) is None
    assert diff_partner("x_20260301_105000", [], {"x_20260301_105000": "x_20260301_105000"}) is None
