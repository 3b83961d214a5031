"""Keeping web pages out of the local service.

The service runs whatever trainer a job names, so a request that creates a job is a request
to run code on this machine. Binding 127.0.0.1 keeps other machines out, but not the browser
on this one: any page the user visits can send requests to ``http://127.0.0.1:<port>``. The
requests a page can send without asking first (no CORS preflight) are GET, HEAD and POST with
a ``text/plain``, form or ``multipart/form-data`` body; a page can also rebind its own DNS name
to 127.0.0.1 (DNS rebinding), after which the browser treats the service as the page's own
origin and lets the page send anything, and read the answers. With ``--no-auth`` there is no
token to stop either.

What the service checks, in both auth modes, before anything else (``guard_problem``):

- ``Host`` must name the service as the clients name it: a loopback name (``127.0.0.1`` or any
  127/8 address, ``localhost``, ``[::1]``) with the service's port, or with no port at all
  (which a browser never sends to a port other than 80). A rebound page's requests carry its
  own DNS name. (Bound to another address, where a token is required, any Host is
  taken: the token is the boundary there, as in Jupyter's ``allow_remote_access``.)
- ``Origin``, which browsers add to every cross-origin request and to every POST, must be
  absent or the service's own origin; ``null`` (sandboxed frames, ``file:`` pages) is refused.
- ``Sec-Fetch-Site``, which browsers add to requests they make, must be absent, ``none`` (typed
  by the user) or ``same-origin``.
- No CORS preflight is answered (``OPTIONS`` is refused) and no ``Access-Control-*`` header is
  ever sent, so a page can never be allowed to read an answer or send a non-simple request.

And the JSON routes take only a JSON ``Content-Type`` (``json_content_type_problem``): what
gcloud and Google's client libraries send, and what a browser cannot send without a
preflight. The clients of the service (gcloud, google-api-python-client, google-cloud-logging,
google-cloud-storage, gsutil, the TUI) send none of the browser headers and the service's
own ``Host``, so they are unaffected.

Not defended against here: other local users or programs that can reach the port (the token
is for them), and a browser extension or a program that forges headers: those are not web
pages.
"""

from __future__ import annotations

from dataclasses import dataclass

from tui_app.local.loopback import is_loopback

__all__ = ["BrowserGuard", "json_content_type_problem"]

_FETCH_SITES_ALLOWED = frozenset({"none", "same-origin"})
_JSON_TYPES = frozenset({"application/json"})


def _split_host(value: str) -> tuple[str, int | None] | None:
    """``host[:port]`` (``[v6]:port`` too) as (host, port); None when it is not one."""
    value = value.strip()
    if not value:
        return None
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        host, rest = value[: end + 1], value[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:] if rest else ""
    else:
        host, sep, port_text = value.rpartition(":")
        if not sep:
            host, port_text = value, ""
        if ":" in host:  # an unbracketed IPv6 address: not a Host header browsers send
            return None
    if not port_text:
        return host, None
    if not port_text.isdigit() or len(port_text) > 5:
        return None
    return host, int(port_text)


@dataclass
class BrowserGuard:
    """What a request must look like to reach the routes; see the module docstring."""

    bind_host: str
    """The address the service listens on."""
    port: int | None = None
    """The port it listens on, known once bound (None: any port, before that)."""

    @property
    def loopback_only(self) -> bool:
        """Bound to loopback: the Host check applies (a token-protected remote bind skips it)."""
        return is_loopback(self.bind_host)

    def _port_ok(self, port: int | None) -> bool:
        if self.port is None:
            return True
        return port == self.port or (port is None and self.port == 80)

    def _own_origin(self, origin: str) -> bool:
        scheme, sep, rest = origin.partition("://")
        if scheme.lower() != "http" or not sep or "/" in rest:
            return False
        parsed = _split_host(rest)
        if parsed is None:
            return False
        host, port = parsed
        if not self._port_ok(port):
            return False
        return is_loopback(host) or (
            not self.loopback_only and host.strip("[]") == self.bind_host.strip("[]")
        )

    def problem(self, method: str, headers: dict[str, str]) -> str | None:
        """Why this request looks like it comes from a web page, or None.

        Args:
            method: the HTTP method.
            headers: the request headers, with lower-case names.
        """
        if method == "OPTIONS":
            return (
                "Cross-origin requests are not served: the local jobs service answers no CORS "
                "preflight, so web pages cannot call it."
            )
        if self.loopback_only:
            raw_host = headers.get("host", "")
            parsed = _split_host(raw_host)
            # A bare loopback name is taken too: browsers always write the port into Host
            # unless it is the scheme's default (80), so a page's request to this port never
            # has one, while native clients do send it bare (TensorFlow's GCS plugin does).
            port_ok = parsed is not None and (parsed[1] is None or self._port_ok(parsed[1]))
            if parsed is None or not is_loopback(parsed[0]) or not port_ok:
                return (
                    f"Host {raw_host[:100]!r} is not this service: it answers only requests "
                    f"addressed to 127.0.0.1, localhost or [::1] on port {self.port} (a foreign "
                    "Host is how a web page reaches a local server by DNS rebinding)."
                )
        origin = headers.get("origin")
        if origin is not None and not self._own_origin(origin):
            return (
                f"Requests from web pages are refused (Origin {origin[:100]!r}): the local jobs "
                "service runs code, so only programs such as gcloud and tui-app may call it."
            )
        site = headers.get("sec-fetch-site")
        if site is not None and site.lower() not in _FETCH_SITES_ALLOWED:
            return (
                f"Requests from web pages are refused (Sec-Fetch-Site {site[:40]!r}): the local "
                "jobs service runs code, so only programs such as gcloud and tui-app may call it."
            )
        return None


def json_content_type_problem(content_type: str | None, has_body: bool) -> str | None:
    """Why a JSON route refuses a request with this ``Content-Type``, or None.

    No header is accepted only without a body: google-api-python-client sends ``:cancel``
    with neither. A page's ``fetch`` of a Blob body sends none either, with no preflight.
    """
    if content_type is None:
        if not has_body:
            return None
        return "The request body must be JSON, sent as Content-Type: application/json."
    media = content_type.split(";", 1)[0].strip().lower()
    if media in _JSON_TYPES or (media.startswith("application/") and media.endswith("+json")):
        return None
    return (
        f"The request body must be JSON, sent as Content-Type: application/json; got "
        f"{content_type[:80]!r}."
    )
