"""Metric tags: TensorBoard's groups (prefix before the first /), natural order, regex filter."""

from __future__ import annotations

import random
import re

from tui_app.model.metrics.metric_tags import filter_tags, tag_groups, tag_sort_key


def test_tags_group_by_the_part_before_the_first_slash() -> None:
    tags = ["loss", "loss/aux", "train/loss", "train/acc/top5", "lr", "/odd", "train/acc"]
    assert tag_groups(tags) == [
        ("", ["/odd"]),
        ("loss", ["loss", "loss/aux"]),
        ("lr", ["lr"]),
        ("train", ["train/acc", "train/acc/top5", "train/loss"]),
    ]


def test_tags_without_a_slash_are_groups_of_their_own() -> None:
    assert tag_groups(["epoch_loss", "epoch_accuracy", "epoch_loss"]) == [
        ("epoch_accuracy", ["epoch_accuracy"]),
        ("epoch_loss", ["epoch_loss"]),
    ]


def test_natural_order_compares_numbers_as_numbers() -> None:
    tags = [
        "step10",
        "step2",
        "step1.5",
        "lr1e-3",
        "lr1e-4",
        "layer_10/w",
        "layer_9/w",
        "a_b",
        "a/b",
    ]
    assert sorted(tags, key=tag_sort_key) == [
        "a/b",  # "/" before any other character
        "a_b",
        "layer_9/w",
        "layer_10/w",
        "lr1e-4",
        "lr1e-3",
        "step1.5",
        "step2",
        "step10",
    ]


def test_groups_come_in_the_order_of_their_first_tag() -> None:
    groups = tag_groups(["block10/loss", "block2/loss", "block2/acc", "block1/x"])
    assert [name for name, _ in groups] == ["block1", "block2", "block10"]
    assert groups[1] == ("block2", ["block2/acc", "block2/loss"])


def test_filter_is_a_case_insensitive_regex_searched_anywhere() -> None:
    tags = ["train/Loss", "eval/loss", "train/accuracy", "lr"]
    assert filter_tags(tags, "LOSS") == ["train/Loss", "eval/loss"]
    assert filter_tags(tags, "^train/") == ["train/Loss", "train/accuracy"]
    assert filter_tags(tags, "loss|lr") == ["train/Loss", "eval/loss", "lr"]
    assert filter_tags(tags, "") == tags


def test_a_query_that_is_no_regex_yet_is_a_substring() -> None:
    tags = ["f(x)/loss", "fx/loss", "acc[top5"]
    assert filter_tags(tags, "f(x") == ["f(x)/loss"]  # "f(x" does not compile
    assert filter_tags(tags, "ACC[") == ["acc[top5"]


def test_filter_on_ten_thousand_tags() -> None:
    rng = random.Random(3)
    parts = ["train", "eval", "layer", "grad", "Loss", "acc"]
    tags = [f"{rng.choice(parts)}_{i}/{rng.choice(parts)}" for i in range(9_990)]
    tags += [f"odd[{i}]/loss" for i in range(10)]
    for query in ("loss", "_1\\d/", "(eval|grad)_\\d+/acc", "odd[", "ACC$"):
        try:
            pattern = re.compile(query, re.IGNORECASE)
            expected = [t for t in tags if pattern.search(t)]
        except re.error:
            expected = [t for t in tags if query.lower() in t.lower()]
        got = filter_tags(tags, query)
        assert got == expected
        assert got  # each query matches something: the comparison is not vacuous
    grouped = tag_groups(tags)
    assert sum(len(members) for _, members in grouped) == len(set(tags))
    assert [name for name, _ in grouped] == sorted(
        {t.split("/")[0] for t in tags}, key=tag_sort_key
    )
