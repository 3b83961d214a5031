"""Page tokens of ``jobs.list`` and ``entries:list``: opaque to clients, JSON to the service.

A token is the URL-safe base64 of a small JSON object saying where the next page starts, plus a
fingerprint of the request it continues, so a token replayed with another filter is refused
instead of answering a page of something else. Anything a client sends back is untrusted: a
token that does not decode to an object is an INVALID_ARGUMENT on ``pageToken``, never a 500.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from tui_app.local.errors import invalid_field

NOT_OURS = "The page token is not one this service issued."


def encode_page_token(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode()).decode()


def decode_page_token(token: str) -> dict[str, Any]:
    """The object inside ``token``.

    Raises:
        ApiError: INVALID_ARGUMENT on ``pageToken`` when it is not base64 of a JSON object.
    """
    try:
        data = json.loads(base64.urlsafe_b64decode(token.encode("ascii")))
    except (ValueError, RecursionError):  # RecursionError: deeply nested JSON
        raise invalid_field("pageToken", NOT_OURS) from None
    if not isinstance(data, dict):
        raise invalid_field("pageToken", NOT_OURS)
    return data


def fingerprint(text: str) -> str:
    """A short digest of what a token continues (a filter, an order), kept in the token."""
    return hashlib.sha256(text.encode()).hexdigest()[:12]
