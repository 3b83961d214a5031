"""``projects/P/jobs/ID``, as jobs diff and jobs wait read it (model.job_id.split_job_name)."""

from __future__ import annotations

import pytest

from tui_app.model.jobs.job_id import split_job_name


@pytest.mark.parametrize(
    ("text", "split"),
    [
        ("mnist_2026", ("p", "mnist_2026")),
        ("mnist/3", ("p", "mnist/3")),  # not a resource name: the caller's to judge
        ("projects/q/jobs/mnist", ("q", "mnist")),
        ("projects/q/jobs/mnist/12", ("q", "mnist/12")),
    ],
)
def test_names_and_plain_ids(text: str, split: tuple[str, str]) -> None:
    assert split_job_name(text, "p") == split


@pytest.mark.parametrize(
    "text",
    [
        "projects/q",
        "projects/q/jobs",
        "projects/q/jobs/",
        "projects//jobs/x",
        "projects/q/x/y",
        "projects/q/jobs//x",
        "projects/a b/jobs/x",
        "projects/q/jobs/x y",
    ],
)
def test_what_starts_like_a_name_but_is_none_says_how_to_write_one(text: str) -> None:
    with pytest.raises(ValueError, match="projects/PROJECT/jobs/JOB_ID"):
        split_job_name(text, "p")
