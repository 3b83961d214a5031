"""A length of time as a person types it on a command line: ``90``, ``90s``, ``15m``, ``2h``,
``1h30m``, ``1d``.

The forms are timeout(1)'s and sleep(1)'s units written together, largest first, so a script's
``--timeout`` reads the same as the shell around it. A bare number is seconds, as it is for
timeout(1). The builder's ``parse_duration`` (``model/builder/builder_form.py``) reads the same
units but answers a protobuf Duration string for a job's scheduling fields; this one answers
seconds.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["DURATION_FORMS", "parse_duration_seconds"]

DURATION_FORMS: Final = "90 (seconds), 90s, 15m, 2h, 1h30m or 1d"
"""The accepted forms, for an error message that says what would have been read."""

_UNITS: Final = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))
_NUMBER: Final = r"\d+(?:\.\d+)?"
_DURATION: Final = re.compile(
    r"(?:" + _NUMBER + r")\Z|" + "".join(rf"(?:(?P<{u}>{_NUMBER}){u})?" for u, _ in _UNITS) + r"\Z",
    re.ASCII,
)
"""Each unit at most once, larger ones first: ``1h30m`` but not ``30m1h`` or ``1h1h``, which
are more likely typos than intentions."""


def parse_duration_seconds(text: str) -> float | None:
    """The seconds ``text`` says, or None when it is not one of ``DURATION_FORMS``.

    Case and surrounding spaces are ignored (``2H``, `` 15m ``); spaces inside are not
    (``1h 30m`` is two words on a shell's command line anyway). Zero is a duration (``0s``):
    whether it is a sensible limit is the caller's decision.
    """
    text = text.strip().lower()
    match = _DURATION.match(text)
    if not text or match is None:
        return None
    if not any(match.group(u) for u, _ in _UNITS):
        return float(text)  # a bare number: seconds
    return float(sum(float(match.group(u)) * size for u, size in _UNITS if match.group(u)))
