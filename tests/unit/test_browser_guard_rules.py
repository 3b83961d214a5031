"""The rules that tell a web page's request from a client's (tui_app/local/browser_guard.py)."""

from __future__ import annotations

import pytest

from tui_app.local.browser_guard import BrowserGuard, json_content_type_problem

GUARD = BrowserGuard("127.0.0.1", 8470)


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1:8470",
        "localhost:8470",
        "LOCALHOST:8470",
        "[::1]:8470",
        "127.0.0.2:8470",
        # No port: browsers always send a non-default port, native clients may leave it out
        # (TensorFlow's GCS filesystem plugin does).
        "127.0.0.1",
        "localhost",
    ],
)
def test_loopback_hosts_on_the_port_pass(host: str) -> None:
    assert GUARD.problem("POST", {"host": host}) is None


@pytest.mark.parametrize(
    "host",
    [
        "evil.example:8470",  # DNS rebinding
        "127.0.0.1.evil.example:8470",
        "localhost.evil.example:8470",
        "127.0.0.1:8471",
        "evil.example",
        "::1:8470",  # unbracketed IPv6
        "[::1",
        "127.0.0.1:84x0",
        "",
    ],
)
def test_other_hosts_are_refused(host: str) -> None:
    why = GUARD.problem("GET", {"host": host})
    assert why is not None and "DNS rebinding" in why


def test_a_missing_host_is_refused() -> None:
    assert GUARD.problem("GET", {}) is not None


def test_port_80_may_be_left_out() -> None:
    guard = BrowserGuard("127.0.0.1", 80)
    assert guard.problem("GET", {"host": "localhost"}) is None
    assert guard.problem("GET", {"host": "localhost", "origin": "http://localhost"}) is None


@pytest.mark.parametrize(
    ("origin", "ok"),
    [
        ("http://127.0.0.1:8470", True),
        ("http://localhost:8470", True),
        ("http://[::1]:8470", True),
        ("https://127.0.0.1:8470", False),
        ("http://127.0.0.1:8471", False),
        ("http://evil.example", False),
        ("http://evil.example:8470", False),
        ("null", False),
        ("", False),
        ("http://127.0.0.1:8470/path", False),
    ],
)
def test_only_the_services_own_origin_passes(origin: str, ok: bool) -> None:
    why = GUARD.problem("POST", {"host": "127.0.0.1:8470", "origin": origin})
    assert (why is None) is ok, why


@pytest.mark.parametrize(("site", "ok"), [("none", True), ("same-origin", True),
                                          ("same-site", False), ("cross-site", False)])  # fmt: skip
def test_sec_fetch_site(site: str, ok: bool) -> None:
    why = GUARD.problem("POST", {"host": "127.0.0.1:8470", "sec-fetch-site": site})
    assert (why is None) is ok


def test_preflights_are_refused() -> None:
    assert "preflight" in (GUARD.problem("OPTIONS", {"host": "127.0.0.1:8470"}) or "")


def test_a_remote_bind_takes_any_host_but_still_refuses_pages() -> None:
    """Bound to another address a token is required: the token is the boundary, and the
    machine may be reached by any of its names; a page's Origin is still refused."""
    guard = BrowserGuard("10.0.0.5", 8470)
    assert guard.problem("GET", {"host": "gpu-box.corp:8470"}) is None
    assert (
        guard.problem("POST", {"host": "10.0.0.5:8470", "origin": "http://10.0.0.5:8470"}) is None
    )
    assert guard.problem("POST", {"host": "10.0.0.5:8470", "origin": "http://evil.example"})


def test_before_binding_any_port_is_taken() -> None:
    assert BrowserGuard("127.0.0.1").problem("GET", {"host": "127.0.0.1:1234"}) is None


@pytest.mark.parametrize(
    ("content_type", "has_body", "ok"),
    [
        ("application/json", True, True),
        ("application/json; charset=UTF-8", True, True),
        ("Application/JSON", True, True),
        ("application/merge-patch+json", True, True),
        (None, False, True),  # google-api-python-client's :cancel
        (None, True, False),  # a page's fetch() of a Blob
        ("text/plain", True, False),
        ("text/plain", False, False),
        ("application/x-www-form-urlencoded", True, False),
        ("multipart/form-data; boundary=x", True, False),
        ("application/jsonx", True, False),
    ],
)
def test_json_routes_take_json(content_type: str | None, has_body: bool, ok: bool) -> None:
    assert (json_content_type_problem(content_type, has_body) is None) is ok
