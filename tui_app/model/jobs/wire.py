"""Typed readers for JSON the program did not write: API answers, config files, stored jobs.

Jobs come from any backend and any age, and configs are typed by hand, so a field may be
missing or of another type than the API's discovery document says. The views show what they
can read and never raise on such input; reading every field through one of these keeps that
promise in one place, and keeps one answer to questions such as "is ``"3"`` a count?".

Encoding facts they rely on (``docs/wire-formats.md``): int64 fields travel as decimal strings
(``"workerCount": "9"``) while int32 ones are JSON numbers; doubles are numbers, or strings for
the special values (``"NaN"``, ``"Infinity"``); timestamps are RFC 3339.

Every reader answers a value of its type, or ``None``/empty for anything else; none raises.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

__all__ = ["as_float", "as_int", "as_list", "as_mapping", "as_number", "as_str", "parse_time"]

_DECIMAL = re.compile(r"-?\d+")
"""An integer as the API writes an int64: an optional minus sign and digits, nothing else
(no ``+``, no ``_`` separators, no exponent)."""


def as_mapping(value: object) -> Mapping[str, Any]:
    """``value`` when it is a JSON object (any Mapping), else an empty one, so a chain of
    ``.get`` calls reads through missing and mistyped levels alike."""
    return value if isinstance(value, Mapping) else {}


def as_list(value: object, *, tuples: bool = False) -> list[Any]:
    """``value`` when it is a JSON array, else ``[]``.

    A list comes back as it is (not copied). ``tuples=True`` also takes a tuple, as a copy:
    for readers of in-memory jobs built by the program itself, not only parsed JSON.
    """
    if isinstance(value, list):
        return value
    if tuples and isinstance(value, tuple):
        return list(value)
    return []


def plain_data(value: object) -> Any:
    """Mappings and sequences (tuples too) as plain dicts and lists with string keys, in their
    order: what ``yaml.safe_dump`` can write, for the describe view's YAML and the diff's."""
    if isinstance(value, Mapping):
        return {str(k): plain_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain_data(v) for v in value]
    return value


def as_str(value: object) -> str | None:
    """``value`` when it is a string (empty included), else None: a number is not a name."""
    return value if isinstance(value, str) else None


def as_int(value: object, *, whole_floats: bool = False) -> int | None:
    """An int64 or int32 as it may arrive: a JSON integer or a decimal string, else None.

    ``true`` is not 1 here (JSON booleans are not numbers). Surrounding whitespace in a string
    is ignored. ``whole_floats=True`` also takes a float with no fraction (``3.0``): Vertex AI
    sends some integers that way (a trial's INTEGER parameter values, for one); ml v1 fields
    never come so, and their readers keep treating ``3.0`` as unreadable.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if whole_floats and isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _DECIMAL.fullmatch(value.strip()):
        try:
            return int(value)
        except ValueError:  # more digits than int() converts (sys.get_int_max_str_digits)
            return None
    return None


def json_double(value: float) -> float | str:
    """A double as proto3's JSON mapping writes it: a number, or ``"NaN"``, ``"Infinity"``,
    ``"-Infinity"`` (JSON has no such numbers, and Python's json would write bare ``NaN``,
    which other readers refuse). ``as_float`` reads all of them back."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def as_float(value: object, *, keep_nan: bool = False) -> float | None:
    """A double as it may arrive: a JSON number or a numeric string (``"NaN"``, ``"1e-3"``).

    Booleans and None are not numbers. NaN reads as None, since it cannot be ranked or
    plotted; ``keep_nan=True`` keeps it for readers that only show or sum the value.
    """
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return None
    if math.isnan(number) and not keep_nan:
        return None
    return number


def as_number(value: object) -> float | None:
    """A JSON number (int or float, not bool) as a float; None for anything else, strings
    included: where a config must hold a number, ``"0.1"`` is a mistake to report, not read."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def parse_time(value: object) -> datetime | None:
    """An aware datetime for an RFC 3339 timestamp, or None when ``value`` is not one.

    ``Z`` or ``z`` or an offset, any number of fraction digits (the API sends nanoseconds;
    the digits past microseconds are dropped), surrounding whitespace ignored. A time without
    an offset is taken as UTC, which is what the API always means.
    """
    if not isinstance(value, str) or not value:
        return None
    if value[-1] == "Z":
        # How the API writes every timestamp. Python 3.11's fromisoformat reads the "Z" itself,
        # as +00:00: the same datetime as below, without the strip and the copy (the job list
        # parses three per job, 300k on a poll of 100k jobs). Anything it refuses goes below.
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            pass
    text = value.strip()
    if text[-1:] in ("z", "Z"):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
