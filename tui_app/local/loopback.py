"""Whether a host name or address stays on this machine: the one rule the service's guards share.

``--no-auth`` is refused off loopback, the browser guard accepts only loopback ``Host`` names,
and a Ray cluster with a node off loopback needs the service's token: all three ask this.
"""

from __future__ import annotations

import ipaddress

__all__ = ["is_loopback"]

_LOOPBACK_NAMES = frozenset({"localhost", "localhost."})


def is_loopback(host: str) -> bool:
    """``localhost`` (any case, with or without its final dot), or an address in 127.0.0.0/8 or
    ``::1`` (an IPv6 one may come bracketed, as in a ``Host`` header)."""
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
