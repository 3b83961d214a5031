"""A replica's storage scope from its job's trainingInput (model/running/storage_scope.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tui_app.model.running.storage_scope import (
    ScopePath,
    StorageScope,
    is_output_flag,
    package_objects,
    replica_scope,
)

PACKAGE = "gs://staging/jobs/x/packages/abc123/trainer-0.1.tar.gz"


def _scope(**ti: Any) -> StorageScope:
    return replica_scope("x", ti)


def test_the_job_dir_is_read_write_with_folder_semantics() -> None:
    scope = _scope(jobDir="gs://b/out")
    for name in ("out", "out/", "out/model.json", "out/1/eval/events.out"):
        assert scope.can_write("b", name) and scope.can_read("b", name), name
    # A sibling that merely starts with the same letters is not inside.
    for name in ("output2/x", "outx", "ou", "other/out/x"):
        assert not scope.can_write("b", name) and not scope.can_read("b", name), name
    assert not scope.can_write("other-bucket", "out/x")


def test_a_trailing_slash_on_the_job_dir_changes_nothing() -> None:
    assert _scope(jobDir="gs://b/out/").writes == _scope(jobDir="gs://b/out").writes


def test_a_tuning_trial_writes_below_the_job_dir() -> None:
    scope = _scope(jobDir="gs://b/tune/run1", hyperparameters={"maxTrials": 2})
    assert scope.can_write("b", "tune/run1/2/checkpoint")


def test_a_bucket_as_job_dir_grants_the_bucket() -> None:
    scope = _scope(jobDir="gs://whole")
    assert scope.can_write("whole", "anything/at/all")
    assert scope.describe() == "this replica of job x may write gs://whole/ and read nothing else"


def test_a_local_job_dir_grants_no_storage() -> None:
    scope = _scope(jobDir="/tmp/out", packageUris=["/tmp/pkg.tar.gz"])
    assert scope.writes == () and scope.reads == () and scope.buckets == frozenset()
    assert "may read and write no Cloud Storage objects" in scope.describe()


def test_packages_are_read_only() -> None:
    scope = _scope(jobDir="gs://out/x", packageUris=[PACKAGE, "file:///tmp/other.tar.gz"])
    name = PACKAGE.removeprefix("gs://staging/")
    assert scope.can_read("staging", name)
    assert not scope.can_write("staging", name) and not scope.can_create("staging", name)
    assert not scope.can_read("staging", "jobs/x/packages/abc123/trainer-0.2.tar.gz")
    # Were it a folder, nothing could be below it: asking is an (empty) listing, not a refusal.
    assert scope.can_list("staging", name + "/")


def test_args_are_read_only_inputs_as_prefixes() -> None:
    scope = _scope(
        args=[
            "--train-files",
            "gs://data/train",
            "--eval=gs://data/eval.csv",
            "gs://positional/x",
            "--lr=0.1",
        ]
    )
    assert scope.can_read("data", "train/part-0001.csv") and scope.can_read("data", "eval.csv")
    assert scope.can_read("positional", "x")
    assert not scope.can_read("data", "training/x") and not scope.can_read("data", "eval.csv2")
    assert not any(scope.can_write(b, n) for b, n in [("data", "train/x"), ("positional", "x")])


def test_a_glob_grants_the_names_before_its_first_wildcard() -> None:
    scope = _scope(args=["--files", "gs://b/data/*.csv", "--more=gs://b/logs/day-?/x"])
    assert scope.can_read("b", "data/a.csv") and scope.can_read("b", "data/sub/b.txt")
    assert scope.can_read("b", "logs/day-1/x")
    assert not scope.can_read("b", "dat") and not scope.can_read("b", "logs/other")
    assert scope.can_list("b", "data/") and scope.holds_all("b", "data/")
    assert "gs://b/data/*.csv" in scope.describe()


def test_every_uri_in_a_list_valued_argument_counts() -> None:
    scope = _scope(args=["--files=gs://a/1.csv,gs://a/2.csv", "{'path': 'gs://c/conf.json'}"])
    assert scope.can_read("a", "1.csv") and scope.can_read("a", "2.csv")
    assert scope.can_read("c", "conf.json")


@pytest.mark.parametrize(
    "flag",
    [
        "--job-dir",
        "--job_dir",
        "--jobdir",
        "--output",
        "--output-dir",
        "--OUTPUT_PATH",
        "--train-output-path",
        "--out-dir",
        "--outdir",
        "--model-dir",
        "--model_dir",
        "--export-dir",
        "--checkpoint-dir",
        "--checkpoints",
        "--ckpt",
        "--log-dir",
        "--logdir",
        "--tensorboard-log-dir",
        "--save-path",
        "--saved-model-dir",
        "--summary-dir",
        "--summaries",
    ],
)
def test_output_flags(flag: str) -> None:
    assert is_output_flag(flag)


@pytest.mark.parametrize(
    "flag",
    ["--train-files", "--data", "--input-dir", "--layout-dir", "--checkout", "--autosave", "-o"],
)
def test_other_flags_are_inputs(flag: str) -> None:
    assert not is_output_flag(flag)


def test_an_output_flags_value_is_read_write_in_both_spellings() -> None:
    scope = _scope(
        args=["--output-dir=gs://o/run7", "--checkpoint-dir", "gs://ck/run7", "--data", "gs://i/x"]
    )
    assert scope.can_write("o", "run7/model.json") and scope.can_write("ck", "run7/ckpt-1")
    assert not scope.can_write("i", "x") and scope.can_read("i", "x")
    # The flag governs only the argument right after it.
    other = _scope(args=["--output-dir", "gs://o/run7", "gs://o/not-output"])
    assert not other.can_write("o", "not-output")


def test_container_args_and_command_count_like_args() -> None:
    scope = _scope(
        masterConfig={
            "imageUri": "example.com/trainer",
            "containerCommand": ["python", "-m", "t", "--data", "gs://in/train"],
            "containerArgs": ["--model-dir=gs://out/m"],
        },
        workerConfig={"containerArgs": ["--eval", "gs://in2/eval"]},
        evaluatorConfig="not a config",
    )
    assert scope.can_read("in", "train/x") and scope.can_read("in2", "eval/x")
    assert scope.can_write("out", "m/saved_model.pb")


def test_ancestors_may_be_listed_and_stat_ed_but_show_only_the_way_down() -> None:
    scope = _scope(jobDir="gs://b/jobs/x", args=["--data", "gs://b/data/*.csv"])
    for prefix in ("", "jobs/", "jobs", "jobs/x", "jobs/x/", "jobs/x/eval/", "data/"):
        assert scope.can_list("b", prefix), prefix
    for prefix in ("jobs/y/", "jobs/xy/", "other/", "data2/"):
        assert not scope.can_list("b", prefix), prefix
    # What an ancestor listing shows: objects in scope, prefixes that are or lead to it.
    assert not scope.holds_all("b", "jobs/") and scope.holds_all("b", "jobs/x/")
    assert scope.can_read("b", "jobs/x/model.json") and not scope.can_read("b", "jobs/y/model.json")
    assert scope.can_list("b", "jobs/x/") and not scope.can_list("b", "jobs/y/")
    # gfile checks that each folder on the way exists: its placeholder, with or without "/".
    assert scope.can_read("b", "jobs/") and scope.can_stat("b", "jobs")
    assert not scope.can_read("b", "jobs") and not scope.can_stat("b", "other")
    assert not scope.can_stat("other-bucket", "jobs")


def test_folder_placeholders_may_be_made_on_the_way_to_a_writable_path_only() -> None:
    scope = _scope(jobDir="gs://b/jobs/x", packageUris=["gs://b/pkgs/t.tar.gz"])
    assert scope.can_create("b", "jobs/") and scope.can_create("b", "jobs/x/")
    assert not scope.can_create("b", "jobs") and not scope.can_create("b", "jobs/y/")
    assert not scope.can_create("b", "pkgs/")  # on the way to a read-only path only
    # Making a placeholder is not a licence to delete it.
    assert not scope.can_write("b", "jobs/")


def test_buckets_are_those_the_paths_lie_in() -> None:
    scope = _scope(jobDir="gs://out/x", packageUris=[PACKAGE], args=["gs://data/in"])
    assert scope.buckets == {"out", "staging", "data"}


def test_unusable_uris_grant_nothing() -> None:
    scope = _scope(args=["gs://", "gs:///x", "gs://b*/x", "--x=gs://"], packageUris=[1, None])
    assert scope.writes == () and scope.reads == ()


def test_the_description_names_both_sides_and_stays_short() -> None:
    scope = _scope(
        jobDir="gs://b/out", packageUris=["gs://b/pkgs/trainer.tar.gz"], args=["gs://data/x"]
    )
    assert scope.describe() == (
        "this replica of job x may write gs://b/out/ and read gs://b/pkgs/trainer.tar.gz, "
        "gs://data/x"
    )
    many = _scope(args=[f"gs://in/{i}" for i in range(20)])
    assert many.describe().endswith("gs://in/7, 12 more") and "write nothing" in many.describe()


def test_duplicates_collapse() -> None:
    scope = _scope(jobDir="gs://b/out", args=["--job-dir", "gs://b/out/", "gs://d/x", "gs://d/x"])
    assert scope.writes == (ScopePath("b", "out"),) and scope.reads == (ScopePath("d", "x"),)


def test_package_objects_are_the_gs_packages() -> None:
    ti = {"packageUris": [PACKAGE, "/tmp/local.tar.gz", "gs://bucket-only"]}
    assert package_objects(ti) == {("staging", PACKAGE.removeprefix("gs://staging/"))}
    assert package_objects({}) == frozenset()
