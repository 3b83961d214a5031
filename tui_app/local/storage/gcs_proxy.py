"""The storage proxy: how ``tf.io.gfile`` and other libcurl clients reach the local storage API.

TensorFlow's built-in GCS filesystem has no endpoint setting: it always dials
``https://www.googleapis.com`` (JSON API, uploads) and ``https://storage.googleapis.com``
(object media, ``/<bucket>/<object>``). It does honour libcurl's proxy variables, a CA bundle
(``CURL_CA_BUNDLE``) and a fixed bearer token (``GOOGLE_AUTH_TOKEN_FOR_TESTING``). So replicas get
``ALL_PROXY`` pointing here, and this proxy:

- for ``CONNECT`` to one of those two names on 443, answers the TLS itself (``proxy_certs``) and
  forwards each request to the local storage API on loopback, with the media path rewritten to
  the JSON API's download route; the replica's own bearer credential travels with it, so the
  service's auth and write attribution apply as for any replica request;
- reads (GET/HEAD) of a bucket the local store does not have go on to the real Google host,
  without the replica's credential: public datasets (``gs://tfds-data``, Keras' downloads) keep
  working where the machine has internet, and fail with a message saying so where it has not;
- for ``CONNECT`` to any other host, relays bytes untouched (end-to-end TLS, no inspection).

``ALL_PROXY`` rather than ``HTTPS_PROXY``: libcurl and ``requests`` use it for https, while
Python's ``urllib`` (what ``tf.keras.utils.get_file`` uses) and aiohttp ignore it, so the fewest
clients are routed through here. Loopback addresses are in ``NO_PROXY``.

Each forwarded request asks for ``Connection: close`` and the client's connection ends with its
response: libcurl then opens a new tunnel for the next request. That keeps the proxy a byte pipe
that never parses a body (uploads, chunked bodies and ``Expect: 100-continue`` pass as they are).
A browser cannot use this: ``fetch`` cannot send ``CONNECT``, and any other request is refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote, unquote, urlsplit

from tui_app.local.paths import StateDir
from tui_app.local.storage.object_store import bucket_error
from tui_app.local.storage.proxy_certs import PROXIED_HOSTS, ProxyCerts
from tui_app.local.storage.storage_env import PROXY_ORIGIN_HEADER, StorageProxyInfo

log = logging.getLogger(__name__)

MAX_HEAD_BYTES = 64 * 1024
HEAD_TIMEOUT_SECONDS = 60.0
CONNECT_TIMEOUT_SECONDS = 20.0
PIPE_CHUNK = 256 * 1024
_HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "te", "upgrade"}
)
_JSON_PREFIXES = ("/storage/v1/", "/upload/storage/v1/", "/download/storage/v1/")


@dataclass(frozen=True)
class Route:
    """Where one decrypted request goes: ``local`` (the storage API, at ``target``) or
    ``upstream`` (the real host, ``target`` unchanged), or ``refuse`` with ``reason``."""

    kind: str
    target: str
    bucket: str | None = None
    reason: str = ""


def bucket_of(host: str, path: str) -> str | None:
    """The bucket a request addresses, or None for project-level calls (bucket lists, batch)."""
    for prefix in _JSON_PREFIXES:
        if path.startswith(prefix):
            rest = path[len(prefix) :]
            if rest.startswith("b/"):
                return unquote(rest[2:].split("/", 1)[0]) or None
            return None
    if host == "storage.googleapis.com":
        first = path.lstrip("/").split("/", 1)[0]
        return unquote(first) or None
    return None


def local_buckets(state: StateDir) -> Callable[[str], bool]:
    """The ``bucket_exists`` test for ``route``: a bucket the local store has. A name the
    store would refuse counts as local, so the storage API answers it with its own 400."""

    def exists(bucket: str) -> bool:
        return bool(bucket_error(bucket)) or (state.gcs_root / bucket).is_dir()

    return exists


def route(host: str, method: str, target: str, bucket_exists: Callable[[str], bool]) -> Route:
    """Decide where a request to ``host`` goes.

    The JSON API paths go to the storage API as they are (the service serves the same paths);
    ``storage.googleapis.com/<bucket>/<object>`` becomes the JSON API's media download. Writes
    always stay local (a trainer writing to a bucket must never reach Google with it); reads go
    upstream only for a bucket the local store lacks.
    """
    parts = urlsplit(target)
    path = parts.path or "/"
    is_storage = path.startswith(_JSON_PREFIXES) or path.startswith("/batch/storage/v1")
    if host == "www.googleapis.com" and not is_storage:
        return Route("upstream", target)  # another Google API on the same host: not ours
    bucket = bucket_of(host, path)
    reading = method in ("GET", "HEAD")
    if bucket is not None and reading and not bucket_exists(bucket):
        return Route("upstream", target, bucket)
    if is_storage:
        return Route("local", target, bucket)
    if bucket is None:
        return Route("refuse", target, None, "Name a bucket: /<bucket>/<object>.")
    name = path.lstrip("/").split("/", 1)[1] if "/" in path.lstrip("/") else ""
    if not name:
        return Route(
            "refuse",
            target,
            bucket,
            "Listing a bucket through storage.googleapis.com's XML API is not served locally; "
            "use the JSON API (/storage/v1/b/<bucket>/o).",
        )
    local = f"/download/storage/v1/b/{quote(bucket, safe='')}/o/{quote(unquote(name), safe='')}"
    return Route("local", f"{local}?alt=media", bucket)


@dataclass
class RequestHead:
    method: str
    target: str
    version: str
    headers: list[tuple[str, str]]

    @classmethod
    def parse(cls, raw: bytes) -> RequestHead:
        text = raw.decode("latin-1")
        lines = text.split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            raise ValueError(f"not an HTTP/1.x request line: {lines[0][:80]!r}")
        headers: list[tuple[str, str]] = []
        for line in lines[1:]:
            if not line:
                continue
            name, sep, value = line.partition(":")
            if not sep or not name or name != name.strip():
                raise ValueError(f"malformed header line: {line[:80]!r}")
            headers.append((name, value.strip()))
        return cls(parts[0], parts[1], parts[2], headers)

    def empty_form(self) -> frozenset[str]:
        """``{"content-type"}`` when the request has an empty body typed as a form: libcurl's
        default type for a POST, which TensorFlow sends on its empty-bodied calls (upload
        starts, rewrites). The storage API's JSON routes refuse a form type (a browser can send
        one without asking), and accept no type without a body; a request that reached the
        proxy came by ``CONNECT``, which no page can send."""
        length = [v.strip() for n, v in self.headers if n.lower() == "content-length"]
        typed = [v for n, v in self.headers if n.lower() == "content-type"]
        if length == ["0"] and len(typed) == 1:
            media = typed[0].split(";", 1)[0].strip().lower()
            if media == "application/x-www-form-urlencoded":
                return frozenset({"content-type"})
        return frozenset()

    def encode(
        self,
        target: str,
        host: str,
        drop: frozenset[str] = frozenset(),
        extra: tuple[tuple[str, str], ...] = (),
    ) -> bytes:
        """The head to forward: ``Host`` replaced, hop-by-hop headers removed, and the
        connection closed after the response (see the module doc)."""
        out = [f"{self.method} {target} {self.version}", f"Host: {host}"]
        # TensorFlow sends ``Transfer-Encoding: identity`` beside ``Content-Length`` on its
        # empty-bodied POSTs and PUTs (folder markers, rewrites, upload starts). Google took it;
        # aiohttp refuses it (``identity`` is no HTTP/1.1 coding, and the two headers together
        # are an error in RFC 9112). It means "no coding", so it is dropped; if a real coding
        # is named, the RFC's rule applies: the coding frames the body and the length goes.
        codings = [v.strip().lower() for n, v in self.headers if n.lower() == "transfer-encoding"]
        coded = any(c and c != "identity" for c in codings)
        for name, value in self.headers:
            low = name.lower()
            if low == "host" or low in _HOP_BY_HOP or low in drop:
                continue
            if low == "transfer-encoding" and not coded:
                continue
            if low == "content-length" and coded:
                continue
            out.append(f"{name}: {value}")
        out += [f"{name}: {value}" for name, value in extra]
        out.append("Connection: close")
        return ("\r\n".join(out) + "\r\n\r\n").encode("latin-1")


def _status(code: int, reason: str, message: str) -> bytes:
    body = (message + "\n").encode()
    return (
        f"HTTP/1.1 {code} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
        while data := await reader.read(PIPE_CHUNK):
            writer.write(data)
            await writer.drain()


async def _close(writer: asyncio.StreamWriter) -> None:
    writer.close()
    with contextlib.suppress(Exception):
        await asyncio.wait_for(writer.wait_closed(), 5)


async def _exchange(
    client_r: asyncio.StreamReader,
    client_w: asyncio.StreamWriter,
    up_r: asyncio.StreamReader,
    up_w: asyncio.StreamWriter,
    first: bytes,
) -> None:
    """Send ``first`` upstream, then pipe both ways until either side is done: the upstream
    side closes after its response (or a tunnelled server hangs up), or the client leaves.
    Both connections are then closed."""
    up_w.write(first)
    await up_w.drain()
    pipes = [
        asyncio.ensure_future(_pipe(up_r, client_w)),
        asyncio.ensure_future(_pipe(client_r, up_w)),
    ]
    try:
        await asyncio.wait(pipes, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in pipes:
            task.cancel()
        await asyncio.gather(*pipes, return_exceptions=True)
        await _close(up_w)


class GcsProxy:
    """The proxy server (see the module doc); runs on the service's event loop."""

    def __init__(
        self,
        certs: ProxyCerts,
        storage_port: int,
        bucket_exists: Callable[[str], bool],
        *,
        upstream: Callable[[str], tuple[str, int, ssl.SSLContext]] | None = None,
    ) -> None:
        self.certs = certs
        self.storage_port = storage_port
        self.bucket_exists = bucket_exists
        self._upstream = upstream or _google
        self._tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self._tls.load_cert_chain(certs.leaf_cert, certs.leaf_key)
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def info(self) -> StorageProxyInfo:
        """What replicas are told (``storage_env.replica_storage_env``)."""
        return StorageProxyInfo(self.url, str(self.certs.bundle))

    async def start(self) -> int:
        self._server = await asyncio.start_server(
            self._accept, "127.0.0.1", 0, limit=MAX_HEAD_BYTES
        )
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self.port

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.ensure_future(self._serve(reader, writer))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await self._connection(reader, writer)
        except (ConnectionError, ssl.SSLError, asyncio.IncompleteReadError, TimeoutError):
            pass
        except asyncio.LimitOverrunError:
            with contextlib.suppress(Exception):
                writer.write(_status(431, "Request Header Fields Too Large", "Head too large."))
        except Exception:  # a bug here must not take the service's loop down
            log.exception("storage proxy connection failed")
        finally:
            await _close(writer)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raw = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT_SECONDS)
        try:
            head = RequestHead.parse(raw[:-4])
        except ValueError as exc:
            writer.write(_status(400, "Bad Request", str(exc)))
            return
        if head.method != "CONNECT":
            writer.write(
                _status(
                    405,
                    "Method Not Allowed",
                    "This is the local service's storage proxy: it only tunnels (CONNECT).",
                )
            )
            return
        host, _, port_text = head.target.rpartition(":")
        if not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
            writer.write(
                _status(400, "Bad Request", f"CONNECT needs host:port, got {head.target!r}.")
            )
            return
        host = host.strip("[]").lower()
        port = int(port_text)
        if host in PROXIED_HOSTS and port == 443:
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await writer.drain()
            await writer.start_tls(self._tls)
            await self._request(host, reader, writer)
            return
        try:
            up_r, up_w = await asyncio.wait_for(
                asyncio.open_connection(host, port), CONNECT_TIMEOUT_SECONDS
            )
        except (OSError, TimeoutError) as exc:
            writer.write(_status(502, "Bad Gateway", f"Cannot reach {host}:{port}: {exc}"))
            return
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await writer.drain()
        await _exchange(reader, writer, up_r, up_w, b"")

    async def _request(
        self, host: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """One request on the decrypted connection (the forwarded one closes it)."""
        try:
            raw = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT_SECONDS)
        except asyncio.IncompleteReadError:
            return  # the client opened the tunnel and left
        try:
            head = RequestHead.parse(raw[:-4])
        except ValueError as exc:
            writer.write(_status(400, "Bad Request", str(exc)))
            return
        decision = route(host, head.method, head.target, self.bucket_exists)
        if decision.kind == "refuse":
            writer.write(_status(400, "Bad Request", decision.reason))
            return
        if decision.kind == "local":
            local = f"127.0.0.1:{self.storage_port}"
            up_r, up_w = await asyncio.open_connection("127.0.0.1", self.storage_port)
            first = head.encode(
                decision.target,
                local,
                drop=head.empty_form() | {PROXY_ORIGIN_HEADER.lower()},
                extra=((PROXY_ORIGIN_HEADER, f"https://{host}"),),
            )
        else:
            up_host, up_port, ctx = self._upstream(host)
            try:
                up_r, up_w = await asyncio.wait_for(
                    asyncio.open_connection(up_host, up_port, ssl=ctx, server_hostname=host),
                    CONNECT_TIMEOUT_SECONDS,
                )
            except (OSError, TimeoutError, ssl.SSLError) as exc:
                where = f"gs://{decision.bucket}" if decision.bucket else f"https://{host}"
                writer.write(
                    _status(
                        502,
                        "Bad Gateway",
                        f"{where} is not in the local service's storage, and {host} could not "
                        f"be reached ({exc}). Stage the data with `gcloud storage cp` "
                        "(`tui-app service env` points gcloud at the service).",
                    )
                )
                return
            # The replica's credential is the local service's: never send it to Google.
            first = head.encode(
                head.target, host, drop=frozenset({"authorization", PROXY_ORIGIN_HEADER.lower()})
            )
        await _exchange(reader, writer, up_r, up_w, first)


def _google(host: str) -> tuple[str, int, ssl.SSLContext]:
    return host, 443, ssl.create_default_context()
