"""A replica's metadata server: the part of Compute Engine's that google-auth asks for a token.

On the platform a trainer's machine had a metadata server, and ``google.auth.default()`` found
its credentials there; that is how ``storage.Client()`` with no arguments authenticated.
google-cloud-storage 2.1 and later skip credentials when ``STORAGE_EMULATOR_HOST`` is set, but
older ones (2.0.0 is the last for Python 3.6, so every runtime built on 3.6) call
``google.auth.default()`` first and fail with "default credentials were not found". So each
replica also gets a metadata server of its own, under its storage credential's prefix:

- google-auth builds its URLs as ``http://{GCE_METADATA_HOST}/computeMetadata/v1/<path>``
  (``GCE_METADATA_ROOT`` in google-auth 1.x) and pings ``http://{GCE_METADATA_IP}``, all by plain
  string formatting, so a host of ``127.0.0.1:PORT/_replica/<secret>`` lands on these routes
  (``storage_env.replica_storage_env`` sets the three variables);
- the token it hands out is that same secret: whoever can ask already holds it, and it works
  only where the secret works (the storage routes, while the job runs);
- as on Compute Engine, every request must carry ``Metadata-Flavor: Google`` and every answer
  does (google-auth's ping checks it); a web page cannot send that header without a preflight
  the service never grants.

google-auth reads a JSON answer only when its content type is exactly ``application/json``
(no charset), so answers are built by hand rather than with ``web.json_response``.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from tui_app.local.errors import ApiError
from tui_app.local.storage.storage_api import WRITER_KEY
from tui_app.local.storage.storage_env import REPLICA_PREFIX

__all__ = ["REPLICA_ACCOUNT", "TOKEN_SECONDS", "add_routes"]

FLAVOR = ("Metadata-Flavor", "Google")
REPLICA_ACCOUNT = "replica@tui-app.invalid"
"""The service account a replica's metadata names (``.invalid``: no real account has it)."""
TOKEN_SECONDS = 3600
"""The lifetime google-auth is told; the secret itself ends with the job, whichever is first."""
SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)


def _answer(body: Any, status: int = 200) -> web.Response:
    if isinstance(body, str):
        return web.Response(
            status=status, text=body, content_type="text/plain", headers=dict([FLAVOR])
        )
    return web.Response(
        status=status,
        body=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", FLAVOR[0]: FLAVOR[1]},
    )


def _check_flavor(request: web.Request) -> None:
    if request.headers.get(FLAVOR[0]) != FLAVOR[1]:
        raise ApiError(
            "PERMISSION_DENIED",
            "Metadata requests need the header 'Metadata-Flavor: Google', as on Compute Engine.",
        )


async def ping(request: web.Request) -> web.Response:
    """google-auth's "is there a metadata server" probe."""
    _check_flavor(request)
    return _answer("")


def _account(name: str) -> bool:
    return name in ("default", REPLICA_ACCOUNT)


async def metadata(request: web.Request) -> web.Response:
    """``computeMetadata/v1/<path>``: the project, the replica's account and its token."""
    _check_flavor(request)
    writer = request[WRITER_KEY]  # the auth middleware set it: the secret is live
    path = request.match_info["path"].strip("/")
    parts = path.split("/")
    if path == "project/project-id":
        return _answer(writer.project)
    if path == "universe/universe-domain":
        return _answer("googleapis.com")
    if len(parts) >= 3 and parts[:2] == ["instance", "service-accounts"] and _account(parts[2]):
        rest = "/".join(parts[3:])
        if rest == "":
            return _answer(
                {"aliases": ["default"], "email": REPLICA_ACCOUNT, "scopes": list(SCOPES)}
            )
        if rest == "email":
            return _answer(REPLICA_ACCOUNT)
        if rest == "scopes":
            return _answer("\n".join(SCOPES))
        if rest == "token":
            secret = request.match_info["replica"]
            return _answer(
                {"access_token": secret, "expires_in": TOKEN_SECONDS, "token_type": "Bearer"}
            )
    return _answer(f"The local metadata server has no {path!r}.", status=404)


def add_routes(app: web.Application) -> None:
    """Register the metadata routes; before the storage routes' catch-all for ``/_replica/``
    (which refuses a replica's credential everywhere else)."""
    base = REPLICA_PREFIX + "{replica:[^/]+}"
    app.router.add_get(base, ping)
    app.router.add_get(base + "/", ping)
    app.router.add_get(base + "/computeMetadata/v1/{path:.*}", metadata)
