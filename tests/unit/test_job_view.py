"""The job list's rows: parsing a Job into a JobRow, the sort orders, folding and counts."""

from __future__ import annotations

import random
from dataclasses import FrozenInstanceError, fields, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tui_app.model.jobs.states import STATE_ORDER, STATE_SYMBOL, JobState
from tui_app.model.views import job_view
from tui_app.model.views.job_view import (
    EPOCH,
    GroupRow,
    JobRow,
    SortColumn,
    count_by_state,
    default_key,
    display_rows,
    find_in_default_order,
    format_elapsed,
    group_summary,
    insert_default,
    joined_haystacks,
    keeps_place,
    next_sort,
    sort_default,
    sort_description,
    sort_header,
    sort_rows,
    warm_haystacks,
)

NOW = datetime(2026, 11, 22, 12, 0, 0, tzinfo=UTC)


def job(job_id: str, state: str = "SUCCEEDED", **fields: Any) -> dict[str, Any]:
    """A Job resource as jobs.list returns it."""
    return {"jobId": job_id, "state": state, **fields}


def row(job_id: str, state: str = "SUCCEEDED", **fields: Any) -> JobRow:
    return JobRow.from_job(job(job_id, state, **fields))


def ids(rows: list[JobRow]) -> list[str]:
    return [r.job_id for r in rows]


# --- JobRow.from_job ---------------------------------------------------------------------------


def test_from_job_reads_every_column() -> None:
    r = JobRow.from_job(
        {
            "jobId": "mnist_20261122_083000",
            "state": "RUNNING",
            "createTime": "2026-11-22T08:30:00Z",
            "startTime": "2026-11-22T08:31:02.123456789Z",
            "errorMessage": "first line\nsecond line",
            "labels": {"team": "vision", "owner": "ada"},
            "trainingInput": {
                "scaleTier": "CUSTOM",
                "masterType": "standard",
                "workerType": "standard",
                "workerCount": "3",
            },
            "trainingOutput": {"consumedMLUnits": 0.5712},
        }
    )
    assert r.job_id == "mnist_20261122_083000"
    assert r.base == "mnist"
    assert r.stamp == datetime(2026, 11, 22, 8, 30, tzinfo=UTC)
    assert r.state is JobState.RUNNING
    assert r.created == datetime(2026, 11, 22, 8, 30, tzinfo=UTC)
    assert r.started == datetime(2026, 11, 22, 8, 31, 2, 123456, tzinfo=UTC)
    assert r.ended is None
    assert (r.scale_tier, r.replica_count, r.tier_label) == ("CUSTOM", 4, "CUSTOM \u00d74")
    assert r.ml_units == pytest.approx(0.5712)
    assert r.error == "first line"
    assert r.labels == (("owner", "ada"), ("team", "vision"))
    assert r.position is None
    assert r.haystack == r.haystack_cased.lower()
    for text in ("mnist_20261122_083000", "RUNNING", "CUSTOM \u00d74", "first line", "team=vision"):
        assert text in r.haystack_cased


def test_from_job_survives_an_empty_or_hostile_job() -> None:
    r = JobRow.from_job({})
    assert (r.job_id, r.base, r.stamp, r.state) == ("", "", None, JobState.STATE_UNSPECIFIED)
    assert (r.created, r.started, r.ended, r.ml_units, r.position) == (None,) * 5
    assert (r.scale_tier, r.replica_count, r.error, r.labels) == ("BASIC", 1, "", ())
    hostile = JobRow.from_job(
        {
            "jobId": "x",
            "state": "EXPLODED",
            "createTime": "yesterday",
            "startTime": 17,
            "errorMessage": ["not", "a", "string"],
            "labels": "team=vision",
            "jobPosition": "three",
            "trainingOutput": {"consumedMLUnits": "lots"},
        }
    )
    assert hostile.state is JobState.STATE_UNSPECIFIED
    assert (hostile.created, hostile.started, hostile.position, hostile.ml_units) == (None,) * 4
    assert (hostile.error, hostile.labels) == ("", ())


def test_from_job_builds_the_row_the_dataclass_would() -> None:
    """from_job sets the slots itself (twice as fast as the frozen dataclass's __init__)."""
    built = row(
        "census_20261122_070000",
        "FAILED",
        createTime="2026-11-22T07:00:00Z",
        labels={"team": "ads"},
        errorMessage="Traceback (most recent call last):\nValueError: bad",
        trainingOutput={"consumedMLUnits": 2.5},
    )
    values = [getattr(built, f.name) for f in fields(JobRow)]
    assert type(built) is JobRow
    assert built == JobRow(*values) and hash(built) == hash(JobRow(*values))
    with pytest.raises(FrozenInstanceError):
        built.job_id = "other"  # type: ignore[misc]


def test_the_filter_text_is_made_when_first_read_and_takes_no_part_in_equality() -> None:
    """``from_job`` leaves the filter's text for later (it was a sixth of a row's cost before
    the first paint); reading it makes and keeps it, and two rows of one job stay equal."""
    args: dict[str, Any] = {"labels": {"team": "nlp"}, "errorMessage": "ValueError: bad"}
    first = row("mnist_20261122_083000", "FAILED", **args)
    other = row("mnist_20261122_083000", "FAILED", **args)
    assert _made_text(first) == (None, None)
    assert (
        first.haystack_cased
        == "mnist_20261122_083000 FAILED BASIC \u00d71 ValueError: bad\tteam=nlp\t"
    )
    assert first.haystack == first.haystack_cased.lower()
    assert _made_text(first) == (first.haystack, first.haystack_cased)
    assert first == other and hash(first) == hash(other)
    assert "_haystack" not in repr(first)


def _made_text(r: JobRow) -> tuple[str | None, str | None]:
    return r._haystack, r._haystack_cased


def test_times_are_read_when_first_asked_for_and_kept() -> None:
    """``from_job`` keeps the times as sent; the first read parses one and keeps the datetime
    (the row's equality, which leaves them out, does not change when they are read)."""
    times = {
        "createTime": "2026-11-22T08:30:00Z",
        "startTime": "2026-11-22T08:31:02.123456789Z",
        "endTime": "soon",
    }
    r, other = row("mnist_20261122_083000", "FAILED", **times), row("mnist", **times)
    assert (r._created, r._started, r._ended) == tuple(times.values())
    assert r.created == datetime(2026, 11, 22, 8, 30, tzinfo=UTC) and r.created is r.created
    assert r.started == datetime(2026, 11, 22, 8, 31, 2, 123456, tzinfo=UTC)
    assert r.ended is None and r._ended is None
    assert (r._created, r._started) == (r.created, r.started)
    assert other.sort_time == r.created  # no stamp: the order reads createTime
    twin = row("mnist_20261122_083000", "FAILED", **times)
    assert r == twin and hash(r) == hash(twin)
    assert row("x", createTime=1700000000)._created is None  # not a string: no time


def test_a_stalled_job_is_found_by_stalled_unless_it_has_an_error() -> None:
    stall = {
        "since": "2026-11-22T09:18:00Z",
        "replicas": [
            {"taskName": "master-replica-0", "state": "stalled", "since": "2026-11-22T09:18:00Z"}
        ],
    }
    hung = row("mnist_20261122_083000", "RUNNING", stall=stall)
    assert hung.stalled_since is not None
    assert hung.haystack_cased.endswith(" \u26a0 stalled\t")
    ended = row("mnist_20261122_083000", "SUCCEEDED", stall=stall)  # a stall of a live job only
    assert "stalled" not in ended.haystack


def test_joined_haystacks_reads_made_texts_and_makes_missing_ones() -> None:
    rows = [row(f"m_20261122_{i:06d}", labels={"Team": f"N{i}"}) for i in range(6)]
    rows[2].haystack  # noqa: B018 (made already, the others not)
    assert joined_haystacks(rows) == "\n".join(r.haystack for r in rows)
    fresh = [row(f"m_20261122_{i:06d}", labels={"Team": f"N{i}"}) for i in range(6)]
    assert joined_haystacks(fresh, cased=True) == "\n".join(r.haystack_cased for r in rows)
    assert all(_made_text(r) != (None, None) for r in fresh)
    assert joined_haystacks([]) == ""


def test_warm_haystacks_makes_every_rows_text_step_by_step(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(job_view, "WARM_STEP_ROWS", 2_000)
    rows = [row(f"m_20261122_{i:06d}") for i in range(5_000)]
    rows[10].haystack  # noqa: B018 (one made already: kept as it is)
    steps = []
    at: int | None = 0
    while at is not None:
        at = warm_haystacks(rows, at)
        steps.append(at)
    assert steps == [2_000, 4_000, None]
    assert all(r._haystack is not None and r._haystack_cased is not None for r in rows)
    assert [r.haystack for r in rows] == [
        f"m_20261122_{i:06d} succeeded basic \u00d71 \t" for i in range(5_000)
    ]
    assert warm_haystacks([]) is None


@pytest.mark.parametrize(
    ("training_input", "tier", "count"),
    [
        (None, "BASIC", 1),
        ({}, "BASIC", 1),
        ({"scaleTier": "STANDARD_1"}, "STANDARD_1", 8),
        ({"scaleTier": "NO_SUCH_TIER"}, "NO_SUCH_TIER", 0),
        ({"scaleTier": ""}, "BASIC", 1),
        ({"scaleTier": 5}, "5", 0),
        # A named tier's count is its table's, whatever else the input says (and is cached).
        ({"scaleTier": "STANDARD_1", "workerCount": "99", "masterType": "x"}, "STANDARD_1", 8),
        ({"scaleTier": "CUSTOM"}, "CUSTOM", 0),
        ({"scaleTier": "CUSTOM", "masterType": "standard", "workerCount": "lots"}, "CUSTOM", 0),
        ("garbage", "BASIC", 0),
        ([1, 2], "BASIC", 0),
    ],
)
def test_replica_count_is_robust(training_input: object, tier: str, count: int) -> None:
    r = JobRow.from_job({"jobId": "a", "trainingInput": training_input})
    assert (r.scale_tier, r.replica_count) == (tier, count)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-22T08:30:00Z", datetime(2026, 11, 22, 8, 30, tzinfo=UTC)),
        ("2026-11-22T08:30:00.5Z", datetime(2026, 11, 22, 8, 30, 0, 500000, tzinfo=UTC)),
        ("2026-11-22T08:30:00.123456789Z", datetime(2026, 11, 22, 8, 30, 0, 123456, tzinfo=UTC)),
        ("2026-11-22T09:30:00+01:00", datetime(2026, 11, 22, 8, 30, tzinfo=UTC)),
        ("2026-11-22T08:30:00", datetime(2026, 11, 22, 8, 30, tzinfo=UTC)),
        ("2026-11-22T08:30:00z", datetime(2026, 11, 22, 8, 30, tzinfo=UTC)),
    ],
)
def test_times_parse_with_or_without_fraction(text: str, expected: datetime) -> None:
    created = row("a", createTime=text).created
    assert created == expected and created is not None and created.tzinfo is not None


def test_queue_position_and_lowercase_state() -> None:
    r = row("a", "queued", jobPosition="3")
    assert (r.state, r.position) == (JobState.QUEUED, 3)


def test_elapsed_and_sort_time() -> None:
    running = row("a_20261122_110000", "RUNNING", createTime="2026-11-22T10:59:00Z")
    # No startTime (yet): it has waited, not run; the two are shown apart (issue 29).
    assert running.elapsed(NOW) is None
    assert running.waited(NOW) == timedelta(hours=1, minutes=1)
    started = row(
        "b", "RUNNING", createTime="2026-11-22T10:00:00Z", startTime="2026-11-22T11:00:00Z"
    )
    assert started.elapsed(NOW) == timedelta(hours=1)
    assert started.waited(NOW) == timedelta(hours=1)  # until it started, not until now
    done = row(
        "c", createTime="2026-11-22T10:00:00Z", startTime="2026-11-22T10:00:00Z",
        endTime="2026-11-22T10:04:05Z",
    )  # fmt: skip
    assert done.elapsed(NOW) == timedelta(minutes=4, seconds=5)
    assert row("d").elapsed(NOW) is None
    never_ran = row(
        "f", "CANCELLED", createTime="2026-11-22T10:00:00Z", endTime="2026-11-22T10:30:00Z"
    )  # cancelled while QUEUED: no run to time
    assert never_ran.elapsed(NOW) is None
    assert never_ran.waited(NOW) == timedelta(minutes=30)
    assert row("d").waited(NOW) is None
    assert running.sort_time == datetime(2026, 11, 22, 11, 0, tzinfo=UTC)  # the id's stamp wins
    assert started.sort_time == datetime(2026, 11, 22, 10, 0, tzinfo=UTC)
    assert row("e").sort_time == EPOCH


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0s"), (7, "7s"), (245, "4m05s"), (3723, "1h02m"), (86399, "23h59m"),
     (3 * 86400 + 4 * 3600 + 59, "3d04h"), (-5, "0s")],
)  # fmt: skip
def test_format_elapsed(seconds: int, text: str) -> None:
    assert format_elapsed(timedelta(seconds=seconds)) == text
    assert format_elapsed(None) == ""


def test_every_state_has_a_symbol() -> None:
    assert set(STATE_SYMBOL) == set(JobState)
    assert len(set(STATE_SYMBOL.values())) == len(JobState)


# --- Sorting -----------------------------------------------------------------------------------

MIXED = [
    row("mnist_20261121_120000", createTime="2026-11-21T12:00:00Z"),
    row("census_20261122_010000", createTime="2026-11-22T01:00:00Z"),
    row("adhoc2", createTime="2026-11-20T00:00:00Z"),
    row("mnist_20261122_083000", createTime="2026-11-22T08:30:00Z"),
    row("my_model_v2_20261120_000000", createTime="2026-11-20T00:00:00Z"),
    row("adhoc_20261122_000000", createTime="2026-11-22T00:00:00Z"),
    row("adhoc", createTime="2026-11-23T00:00:00Z"),
    row("my_model_v2_20261122_083000", createTime="2026-11-22T08:30:00Z"),
    row("Census_20261101_000000", createTime="2026-11-01T00:00:00Z"),
]


def test_default_order_is_base_name_then_newest_first() -> None:
    assert ids(sort_rows(MIXED)) == [
        # "adhoc" has no stamp: its createTime (11-23) puts it before adhoc_20261122_000000.
        "adhoc",
        "adhoc_20261122_000000",
        "adhoc2",
        # Case-insensitive by base; the two spellings stay apart.
        "Census_20261101_000000",
        "census_20261122_010000",
        "mnist_20261122_083000",
        "mnist_20261121_120000",
        # A base name with underscores of its own.
        "my_model_v2_20261122_083000",
        "my_model_v2_20261120_000000",
    ]
    assert sort_rows(MIXED) == sorted(MIXED, key=default_key)
    assert [r.base for r in MIXED if r.job_id.startswith("my_")] == ["my_model_v2"] * 2


def _many_rows(n: int, seed: int) -> list[JobRow]:
    """Rows of every shape the default order must place: bases that differ only by case, ids
    with and without stamps, equal times, createTime only, neither, other offsets."""
    rng = random.Random(seed)
    bases = ["mnist", "Mnist", "MNIST", "bert", "a_b", "a", "Zed", "zed_2"]
    out = []
    for i in range(n):
        base = rng.choice(bases)
        kind = rng.randrange(5)
        day, hour = rng.randrange(1, 4), rng.randrange(3)
        if kind == 0:
            out.append(row(f"{base}_2026112{day}_0{hour}0000"))
        elif kind == 1:
            created = f"2026-11-2{day}T0{hour}:00:00Z"
            out.append(row(f"{base}{i}", createTime=created))
        elif kind == 2:
            out.append(row(f"{base}_x{i}", createTime=f"2026-11-2{day}T0{hour}:00:00+01:00"))
        elif kind == 3:
            out.append(row(f"{base}_{i}"))
        else:
            out.append(row(f"{base}_2026112{day}_0{hour}0000_{i}"))
    return out


@pytest.mark.parametrize("seed", range(5))
def test_sort_default_is_sorting_by_default_key(seed: int) -> None:
    rows = _many_rows(400, seed)
    assert sort_default(rows) == sorted(rows, key=default_key)
    assert ids(sort_default(rows)) == ids(sorted(rows, key=default_key))


def test_sort_default_of_naive_and_aware_times_falls_back_to_the_key() -> None:
    # One family (no stamps: the id is the base), so its times are compared with each other.
    aware = row("b", createTime="2026-11-22T08:00:00Z")
    naive = replace(row("b", "FAILED"), _created=datetime(2026, 11, 22, 9, 0))
    rows = [aware, naive, row("a_20261122_000000")]
    assert sort_default(rows) == sorted(rows, key=default_key)


@pytest.mark.parametrize("seed", range(3))
def test_find_in_default_order_finds_each_row_object_and_only_it(seed: int) -> None:
    rows = sort_default(_many_rows(300, seed))
    for at, r in enumerate(rows):
        assert find_in_default_order(rows, r) == at
    picked = rows[::3]  # a filter's result: a subsequence, in the same order
    for r in rows:
        expected = next((i for i, p in enumerate(picked) if p is r), None)
        assert find_in_default_order(picked, r) == expected
    assert find_in_default_order(rows, row(rows[5].job_id)) is None  # a new row object
    assert find_in_default_order([], rows[0]) is None


def test_find_in_default_order_walks_rows_with_equal_keys() -> None:
    first, second = row("a_20261122_000000"), row("a_20261122_000000", "FAILED")
    rows = [row("a_20261123_000000"), first, second, row("b")]
    assert default_key(first) == default_key(second)
    assert find_in_default_order(rows, second) == 2
    assert find_in_default_order(rows, first) == 1
    assert find_in_default_order(rows, row("a_20261122_000000")) is None


def test_inserting_new_rows_gives_the_order_sorting_would() -> None:
    rows = _many_rows(300, 7)
    old, new = rows[:250], rows[250:]
    assert insert_default(sort_default(old), new) == sort_default(rows)


def test_a_job_keeps_its_place_when_only_what_the_order_ignores_changed() -> None:
    before = row("mnist_20261122_083000", "RUNNING", createTime="2026-11-22T08:30:01Z")
    after = row(
        "mnist_20261122_083000",
        "SUCCEEDED",
        createTime="2026-11-22T08:30:01Z",
        endTime="2026-11-22T09:00:00Z",
    )
    assert keeps_place(before, after)
    no_stamp = row("adhoc", createTime="2026-11-22T08:30:01Z")
    assert not keeps_place(no_stamp, row("adhoc", createTime="2026-11-22T08:31:00Z"))
    assert not keeps_place(before, row("mnist_20261122_083001"))


def test_default_order_reversed() -> None:
    assert ids(sort_rows(MIXED, reverse=True)) == ids(sort_rows(MIXED))[::-1]


def test_sort_by_id() -> None:
    assert ids(sort_rows(MIXED, SortColumn.ID)) == sorted(ids(MIXED), key=str.casefold)


def test_sort_by_state_follows_the_lifecycle_and_ties_keep_default_order() -> None:
    rows = [
        row("b_20261122_000000", "FAILED"),
        row("a_20261122_000000", "RUNNING"),
        row("a_20261121_000000", "FAILED"),
        row("c", "QUEUED"),
        row("d", "WEIRD"),
    ]
    assert ids(sort_rows(rows, SortColumn.STATE)) == [
        "c",
        "a_20261122_000000",
        "a_20261121_000000",
        "b_20261122_000000",
        "d",
    ]
    assert ids(sort_rows(rows, SortColumn.STATE, reverse=True))[:3] == [
        "d",
        "a_20261121_000000",  # ties keep the default order in both directions
        "b_20261122_000000",
    ]


def test_sort_by_created_newest_first_missing_last() -> None:
    rows = [*MIXED[:3], row("nodate")]
    assert ids(sort_rows(rows, SortColumn.CREATED)) == [
        "census_20261122_010000",
        "mnist_20261121_120000",
        "adhoc2",
        "nodate",
    ]
    assert ids(sort_rows(rows, SortColumn.CREATED, reverse=True)) == [
        "adhoc2",
        "mnist_20261121_120000",
        "census_20261122_010000",
        "nodate",
    ]


def test_sort_by_elapsed_longest_first() -> None:
    rows = [
        row("short", "RUNNING", startTime="2026-11-22T11:59:00Z"),
        row("long", "RUNNING", startTime="2026-11-22T01:00:00Z"),
        row("unknown", "QUEUED"),
        row("done", startTime="2026-11-22T10:00:00Z", endTime="2026-11-22T10:30:00Z"),
    ]
    assert ids(sort_rows(rows, SortColumn.ELAPSED, now=NOW)) == ["long", "done", "short", "unknown"]
    assert ids(sort_rows(rows, SortColumn.ELAPSED, reverse=True, now=NOW)) == [
        "short",
        "done",
        "long",
        "unknown",
    ]


def test_sort_by_tier_and_ml_units() -> None:
    rows = [
        row("a", trainingInput={"scaleTier": "STANDARD_1"}, trainingOutput={"consumedMLUnits": 2}),
        row("b", trainingInput={"scaleTier": "BASIC"}, trainingOutput={"consumedMLUnits": 9.5}),
        row("c", trainingInput={"scaleTier": "BASIC_GPU"}),
    ]
    assert ids(sort_rows(rows, SortColumn.TIER)) == ["b", "c", "a"]
    assert ids(sort_rows(rows, SortColumn.TIER, reverse=True)) == ["a", "c", "b"]
    assert ids(sort_rows(rows, SortColumn.ML_UNITS)) == ["b", "a", "c"]
    assert ids(sort_rows(rows, SortColumn.ML_UNITS, reverse=True)) == ["a", "b", "c"]


def _valued(n: int, seed: int) -> list[JobRow]:
    """Rows with many equal values and some with none, for each of the timed columns."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        extra: dict[str, Any] = {}
        if rng.random() < 0.8:
            extra["createTime"] = f"2026-11-2{rng.randrange(1, 4)}T0{rng.randrange(3)}:00:00Z"
        if rng.random() < 0.7:
            extra["startTime"] = f"2026-11-22T0{rng.randrange(4)}:00:00Z"
            if rng.random() < 0.5:
                extra["endTime"] = f"2026-11-22T0{rng.randrange(4, 8)}:00:00Z"
        if rng.random() < 0.7:
            extra["trainingOutput"] = {"consumedMLUnits": rng.choice([0.5, 1.0, 2.0])}
        out.append(row(f"{rng.choice(['a', 'b', 'c'])}_x{i}", **extra))
    return out


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("column", [SortColumn.CREATED, SortColumn.ELAPSED, SortColumn.ML_UNITS])
def test_timed_and_unit_sorts_are_a_stable_sort_by_the_value_missing_last(
    seed: int, column: SortColumn
) -> None:
    """What ``sort_rows`` gives is what a plain stable sort of the default order by the value
    gives, in both directions, rows without a value last (in the default order)."""
    rows = _valued(300, seed)

    def value(r: JobRow) -> float | None:
        if column is SortColumn.CREATED:
            return r.created.timestamp() if r.created is not None else None
        if column is SortColumn.ELAPSED:
            d = r.elapsed(NOW)
            return d.total_seconds() if d is not None else None
        return r.ml_units

    for reverse in (False, True):
        base = sort_default(rows)
        have = [r for r in base if value(r) is not None]
        desc = column.descending != reverse
        expected = sorted(have, key=lambda r: value(r) or 0.0, reverse=desc)
        expected += [r for r in base if value(r) is None]
        assert ids(sort_rows(rows, column, reverse, now=NOW)) == ids(expected)


def test_natural_directions() -> None:
    descending = {c for c in SortColumn if c.descending}
    assert descending == {SortColumn.CREATED, SortColumn.ELAPSED, SortColumn.ML_UNITS}


# --- Folding and counts ------------------------------------------------------------------------


def test_folding_collapses_a_family_where_it_starts() -> None:
    rows = sort_rows(
        [
            row("mnist_20261122_083000", "RUNNING", createTime="2026-11-22T08:30:00Z"),
            row("mnist_20261121_120000", "FAILED", createTime="2026-11-21T12:00:00Z"),
            row("mnist_20261120_120000", createTime="2026-11-20T12:00:00Z"),
            row("census_20261122_010000"),
            row("zeta"),
        ]
    )
    shown = display_rows(rows, {"mnist"})
    assert [r.key for r in shown] == ["census_20261122_010000", "group:mnist", "zeta"]
    group = shown[1]
    assert isinstance(group, GroupRow)
    assert (group.base, group.count) == ("mnist", 3)
    assert group.counts == ((JobState.RUNNING, 1), (JobState.SUCCEEDED, 1), (JobState.FAILED, 1))
    assert group.newest == datetime(2026, 11, 22, 8, 30, tzinfo=UTC)
    assert group_summary(group) == "3 jobs: \u25b61 \u27131 \u27171"
    assert display_rows(rows, set()) == rows
    assert display_rows(rows, {"nothing"}) == rows


def test_folding_is_ignored_outside_the_default_order() -> None:
    rows = sort_rows([row("m_20261122_000000"), row("m_20261121_000000")], SortColumn.CREATED)
    assert display_rows(rows, {"m"}, SortColumn.CREATED) == rows


def test_group_summary_of_one() -> None:
    group = GroupRow.of("solo", [row("solo_20261122_000000", "CANCELLED")])
    assert group_summary(group) == "1 job: \u22981"


def test_count_by_state() -> None:
    counts = count_by_state([row("a", "RUNNING"), row("b", "RUNNING"), row("c", "BOGUS")])
    assert list(counts) == [*STATE_ORDER, JobState.STATE_UNSPECIFIED]
    assert counts[JobState.RUNNING] == 2
    assert counts[JobState.STATE_UNSPECIFIED] == 1
    assert counts[JobState.FAILED] == 0


def test_every_order_has_its_own_header_and_words() -> None:
    """The default order and a plain id sort share the JOB ID column but not its title (issue 15,
    item 8: both showed ``JOB ID▲``), and each direction says which way it goes."""
    assert sort_header(SortColumn.DEFAULT, False) == "JOB ID · name▲ newest first"
    assert sort_header(SortColumn.DEFAULT, True) == "JOB ID · name▼ oldest first"
    assert sort_header(SortColumn.ID, False) == "JOB ID▲"
    assert sort_header(SortColumn.ID, True) == "JOB ID▼"
    assert sort_header(SortColumn.STATE, False) == "JOB ID"  # the arrow is on STATE then
    words = {sort_description(c, r) for c in SortColumn for r in (False, True)}
    assert len(words) == 2 * len(SortColumn)
    assert sort_description(SortColumn.CREATED, True) == "created, oldest first"


def test_o_cycles_through_every_order_back_to_the_default() -> None:
    seen = [SortColumn.DEFAULT]
    while (after := next_sort(seen[-1])) is not SortColumn.DEFAULT:
        seen.append(after)
    assert sorted(seen) == sorted(SortColumn)
