"""``--timeout DURATION`` as people type it: timeout(1)'s units, largest first."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tui_app.model.notify.durations import DURATION_FORMS, parse_duration_seconds


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90", 90.0),
        ("90s", 90.0),
        ("15m", 900.0),
        ("2h", 7200.0),
        ("1h30m", 5400.0),
        ("1d", 86400.0),
        ("1d2h3m4s", 93784.0),
        ("1h5s", 3605.0),
        ("1.5h", 5400.0),
        ("0.5", 0.5),
        ("2H", 7200.0),
        (" 15m\n", 900.0),
        ("0", 0.0),
        ("0s", 0.0),
    ],
)
def test_the_forms_the_help_names_are_read(text: str, seconds: float) -> None:
    assert parse_duration_seconds(text) == seconds


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "s",
        "m15",
        "30m1h",  # smaller unit first
        "1h1h",  # a unit twice
        "1h 30m",
        "-5",
        "-5s",
        "1e3",
        ".5s",
        "5.s",
        "90x",
        "1w",
        "PT15M",  # ISO 8601: not a form the help names
        "\u0661\u0665m",  # Arabic-Indic 15: re's \d would take them; the parser must not
        "inf",
        "nan",
    ],
)
def test_anything_else_is_refused(text: str) -> None:
    assert parse_duration_seconds(text) is None


def test_the_forms_named_in_errors_are_all_accepted() -> None:
    """The error message tells people what to write: each example in it must work."""
    examples = [word.strip(",") for word in DURATION_FORMS.split() if word[0].isdigit()]
    assert examples == ["90", "90s", "15m", "2h", "1h30m", "1d"]
    assert all(parse_duration_seconds(e) for e in examples)


@given(
    st.integers(0, 30),
    st.integers(0, 23),
    st.integers(0, 59),
    st.integers(0, 59),
    st.sets(st.sampled_from("dhms"), min_size=1),
)
def test_any_combination_of_units_adds_up(d: int, h: int, m: int, s: int, units: set[str]) -> None:
    parts = {"d": d, "h": h, "m": m, "s": s}
    text = "".join(f"{parts[u]}{u}" for u in "dhms" if u in units)
    sizes = {"d": 86400, "h": 3600, "m": 60, "s": 1}
    expected = sum(parts[u] * sizes[u] for u in units)
    assert parse_duration_seconds(text) == expected
