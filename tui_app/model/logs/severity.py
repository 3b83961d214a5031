"""Cloud Logging's LogSeverity scale: the one table the log store, filters and views share.

Severities are stored and compared as numbers because Logging orders them
(`severity>=WARNING` must match ERROR), and the numbers are Logging's own `LogSeverity` enum
values, so a numeric literal in a filter (`severity>=400`) means what it means in the cloud.
"""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import Final

__all__ = ["SEVERITIES", "parse_severity", "severity_name"]

SEVERITIES: Final[dict[str, int]] = {
    "DEFAULT": 0,
    "DEBUG": 100,
    "INFO": 200,
    "NOTICE": 300,
    "WARNING": 400,
    "ERROR": 500,
    "CRITICAL": 600,
    "ALERT": 700,
    "EMERGENCY": 800,
}
"""Severity name to LogSeverity number, lowest first. Treat as read-only."""

_BY_NUMBER = MappingProxyType({number: name for name, number in SEVERITIES.items()})
# Filters may name a level by number; cap the digits so a hostile literal cannot make an
# integer too large for SQLite's 64-bit parameters.
_NUMBER = re.compile(r"[0-9]{1,9}", re.ASCII)


def severity_name(n: int) -> str:
    """Name of the severity level `n`.

    Numbers between levels (which Logging's API never sends, but a hand-written filter or an
    imported entry might carry) get the highest named level not above them, so an entry at 450
    still reads as WARNING rather than as a bare number; below 0 is DEFAULT.

    Args:
        n: A LogSeverity number.

    Returns:
        One of the keys of `SEVERITIES`.
    """
    exact = _BY_NUMBER.get(n)
    if exact is not None:
        return exact
    best = "DEFAULT"
    for name, number in SEVERITIES.items():
        if number <= n:
            best = name
    return best


def parse_severity(text: str) -> int:
    """Parse a severity literal: a level name in any case (`error`, `ERROR`) or a number.

    Args:
        text: The literal as written in a filter or on the wire.

    Returns:
        The LogSeverity number.

    Raises:
        ValueError: `text` is neither a known level name nor a non-negative integer.
    """
    number = SEVERITIES.get(text.strip().upper())
    if number is not None:
        return number
    if _NUMBER.fullmatch(text.strip()):
        return int(text.strip())
    names = ", ".join(SEVERITIES)
    raise ValueError(f"Unknown severity {text!r}: use a number or one of {names}")
