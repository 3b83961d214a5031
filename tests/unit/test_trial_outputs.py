"""Where trials wrote, and the shared-directory warning (tui_app.model.metrics.trial_outputs)."""

from __future__ import annotations

from tui_app.model.metrics.trial_outputs import (
    SharedDirectory,
    common_directory,
    parent,
    shared_directories,
    sharing_warning,
    trial_outputs,
)


def test_parent_of_objects_and_placeholders() -> None:
    assert parent("gs://b/a/x.txt") == "gs://b/a/"
    assert parent("gs://b/x.txt") == "gs://b/"
    assert parent("gs://b/a/") == "gs://b/"
    assert parent("x.txt") == ""


def test_common_directory_is_the_deepest_shared_one() -> None:
    assert common_directory(["gs://b/job/1/ckpt-1", "gs://b/job/1/eval/events"]) == "gs://b/job/1/"
    assert common_directory(["gs://b/job/1/a", "gs://b/job/2/a"]) == "gs://b/job/"
    assert common_directory(["gs://b/job/model.ckpt"]) == "gs://b/job/"
    assert common_directory([]) == ""


def test_placeholders_do_not_widen_the_directory() -> None:
    # TensorFlow creates "job/" and "job/1/" on its way to job/1/ckpt.
    paths = ["gs://b/job/", "gs://b/job/1/", "gs://b/job/1/ckpt"]
    assert common_directory(paths) == "gs://b/job/1/"
    assert common_directory(["gs://b/job/1/"]) == "gs://b/job/1/"


def test_trials_with_the_idiom_share_nothing() -> None:
    writes = {
        "2": [
            "gs://b/job/",
            "gs://b/job/2/",
            "gs://b/job/2/checkpoint",
            "gs://b/job/2/events.out.tfevents.1.h",
        ],
        "1": ["gs://b/job/", "gs://b/job/1/", "gs://b/job/1/checkpoint"],
    }
    assert shared_directories(writes) == []
    outputs = trial_outputs(writes)
    assert [(o.trial_id, o.directory, o.objects) for o in outputs] == [
        ("1", "gs://b/job/1/", 3),
        ("2", "gs://b/job/2/", 4),
    ]
    assert outputs[1].event_files == ("gs://b/job/2/events.out.tfevents.1.h",)


def test_trials_without_the_idiom_are_found_sharing() -> None:
    writes = {
        "10": ["gs://b/job/checkpoint", "gs://b/job/export/1/saved_model.pb"],
        "2": ["gs://b/job/checkpoint", "gs://b/job/other"],
        "3": ["gs://b/job/3/checkpoint"],
    }
    assert shared_directories(writes) == [SharedDirectory("gs://b/job/", ("2", "10"))]


def test_trials_in_numeric_order_and_empty_ones_left_out() -> None:
    writes = {"10": ["gs://b/j/10/x"], "9": ["gs://b/j/9/x"], "1": []}
    assert [o.trial_id for o in trial_outputs(writes)] == ["9", "10"]


def test_the_warning_names_trials_directory_and_the_fix() -> None:
    text = sharing_warning(SharedDirectory("gs://b/job/", ("1", "2")))
    assert "Trials 1, 2" in text
    assert "gs://b/job/" in text
    assert "'trial'" in text and "TF_CONFIG" in text
