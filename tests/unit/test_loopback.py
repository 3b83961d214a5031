"""The one loopback rule the service's guards share (``local/loopback.py``)."""

from __future__ import annotations

import pytest

from tui_app.local.loopback import is_loopback

LOOPBACK = "127.0.0.1 127.0.0.2 127.255.255.254 ::1 [::1] localhost LOCALHOST localhost."
ELSEWHERE = "0.0.0.0 10.0.0.5 192.168.1.2 :: [2001:db8::1] localhost.example.com 127.0.0.1.nip.io"


@pytest.mark.parametrize("host", LOOPBACK.split())
def test_loopback_names_and_addresses(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize("host", [*ELSEWHERE.split(), "", "127.1"])
def test_everything_else_is_not(host: str) -> None:
    assert not is_loopback(host)
