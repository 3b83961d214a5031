"""From a profile to a working client: find (or start) the local service, or build credentials.

The local service is reached only through what it publishes in its state dir (``service.json``
and the token file) and started through the ``tui-app service start`` command, so this layer
never imports the service.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_app.api.errors import ApiCallError
from tui_app.api.jobs_client import DEFAULT_TIMEOUT_SECONDS, NO_ANSWER, JobsClient, make_credentials
from tui_app.config.locations import SERVICE_FILE, TOKEN_FILE, default_state_dir
from tui_app.config.service_flags import engine_and_executor_flags
from tui_app.config.settings import Profile

if TYPE_CHECKING:
    from google.auth.credentials import Credentials

    from tui_app.api.jobs_api import JobsApi
    from tui_app.api.metrics_client import MetricsClient

START_TIMEOUT_SECONDS = 60
HEALTH_TIMEOUT_SECONDS = 1.0


VERTEX_LOGGING_ENDPOINT = "https://logging.googleapis.com"
CLOUD_SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]


@dataclass(frozen=True)
class Connection:
    """Where to send requests and with what credentials."""

    endpoint: str
    auth: Credentials | None
    """What signs requests; None: ``token`` (a static bearer token, or none), made into
    google-auth credentials only when a Google client needs them (``credentials``)."""
    label: str
    """What the header shows, e.g. ``local (127.0.0.1:8470)``."""
    local: bool = False
    """The embedded local service (its log entries arrive in order; no settling delay)."""
    backend: str = "ml"
    """``ml`` (the ml v1 API: the local service or a URL) or ``vertex`` (Vertex AI)."""
    logging_endpoint: str | None = None
    """Where Cloud Logging's entries:list is; None: the jobs endpoint serves it too."""
    region: str | None = None
    """Vertex AI only: the region jobs run in."""
    executor_image: str | None = None
    """Vertex AI only: the profile's training image for Python-package jobs."""
    token: str | None = field(default=None, repr=False)
    """The local service's token (with ``auth`` None): the job list sends it as it is."""
    _made: dict[str, Credentials] = field(default_factory=dict, compare=False, repr=False)
    _health: dict[str, dict[str, Any]] = field(default_factory=dict, compare=False, repr=False)
    """``{"answer": ...}``: the local service's ``/healthz`` answer, once read."""
    _health_lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)

    @property
    def vertex(self) -> bool:
        return self.backend == "vertex"

    @property
    def credentials(self) -> Credentials:
        """google-auth credentials for the Google clients (logging, storage, googleapiclient):
        ``auth``, or ``token``'s, made on first use (importing google-auth is not free, and the
        job list needs none: ``json_http``)."""
        if self.auth is not None:
            return self.auth
        with self._health_lock:
            if "token" not in self._made:
                self._made["token"] = make_credentials(self.token)
            return self._made["token"]

    @property
    def logs_endpoint(self) -> str:
        return self.logging_endpoint or self.endpoint

    def jobs(self, project: str) -> JobsApi:
        if self.vertex:
            from tui_app.api.vertex_client import VertexJobsClient

            assert self.region is not None
            return VertexJobsClient(
                project,
                self.region,
                self.credentials,
                endpoint=self.endpoint,
                executor_image=self.executor_image,
            )
        if self.local and self.auth is None:
            from tui_app.api.json_http import JsonHttp

            plain = JsonHttp(self.endpoint, self.token, DEFAULT_TIMEOUT_SECONDS, NO_ANSWER)
            return JobsClient(self.endpoint, project, None, plain_list=plain, token=self.token)
        return JobsClient(self.endpoint, project, self.credentials)

    def metrics(self, project: str) -> MetricsClient:
        """The local service's ``:metrics`` and ``:environment`` extensions, on this connection's
        endpoint and credentials, as ``jobs`` gives the jobs client: whoever holds a connection
        gets its clients here rather than assembling them from its parts.

        Elsewhere (a URL profile, Vertex AI) the endpoint has no such methods, and the client's
        reads answer None: the caller hides what it would have shown.
        """
        from tui_app.api.metrics_client import MetricsClient

        return MetricsClient(self.endpoint, project, self.credentials)

    def container_engine(self) -> dict[str, Any] | None:
        """The local service's ``containerEngine`` (``/healthz``): ``{"name", "version",
        "command", "runArgs"}`` or ``{"problem"}``; ``{}`` when the service does not say (an
        older one); None elsewhere (not the local service, or it does not answer).

        The engine is the service's for its whole life, so the answer is read once per
        connection (a reconnect is a new one) and kept; a failed read is tried again next time.
        Blocking (a request of up to a second): call it from a worker.
        """
        if not self.local:
            return None
        with self._health_lock:
            if "answer" not in self._health:
                health = service_health(self.endpoint)
                if health is None:
                    return None
                self._health["answer"] = health
            engine = self._health["answer"].get("containerEngine")
        return dict(engine) if isinstance(engine, dict) else {}


def _answers(url: str) -> bool:
    return service_health(url) is not None


def service_health(url: str) -> dict[str, Any] | None:
    """The local service's ``/healthz`` answer (status, version, capacity), or None when
    nothing answers at ``url``."""
    from tui_app.api.json_http import JsonHttp  # http.client: the list's transport already

    try:
        http = JsonHttp(url, None, HEALTH_TIMEOUT_SECONDS, NO_ANSWER)
    except ValueError:  # not an http(s) URL
        return None
    try:
        return http.get("/healthz")
    except ApiCallError:
        return None
    finally:
        http.close()  # one question: its connection is not kept for another


def service_options(profile: Profile) -> list[str]:
    """The ``tui-app service start`` options a local profile asks for: its container engine
    and run options, its executor and that executor's options, e.g. the Ray address (the
    flags ``config/service_flags.py`` writes from ``config/executors.py``; a service already
    running keeps its own)."""
    return engine_and_executor_flags(profile)


def local_service(
    state_dir: Path, start: bool = True, options: Sequence[str] = ()
) -> tuple[str, str | None]:
    """URL and token of the local service of ``state_dir``, starting it when none answers.

    ``options`` go on the start command line (``service_options``); a service that already
    answers is used as it is.

    Raises:
        ApiCallError: the service is not running and could not be started (the message says why).
    """
    info_file = state_dir / SERVICE_FILE

    def published() -> tuple[str, bool] | None:
        try:
            data = json.loads(info_file.read_text())
            return str(data["url"]), bool(data["auth"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    found = published()
    if not (found and _answers(found[0])):
        if not start:
            raise ApiCallError(f"The local jobs service of {state_dir} is not running.")
        import subprocess  # only to start one: not on the way to a running service's list

        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "tui_app",
                "service",
                "start",
                "--state-dir",
                str(state_dir),
                "--port",
                "0",
                *options,
            ],
            capture_output=True,
            text=True,
            timeout=START_TIMEOUT_SECONDS,
            check=False,
        )
        found = published()
        if result.returncode != 0 or found is None:
            detail = (result.stderr or result.stdout).strip().splitlines()
            raise ApiCallError(
                "Cannot start the local jobs service: " + (detail[-1] if detail else "no output")
            )
    url, auth = found
    token = (state_dir / TOKEN_FILE).read_text().strip() if auth else None
    return url, token


def connect(profile: Profile, state_dir: Path | None = None, start: bool = True) -> Connection:
    """A connection for ``profile``; ``state_dir`` overrides a local profile's.

    Raises:
        ApiCallError: nothing answers and nothing could be started, or credentials are missing.
    """
    if profile.kind == "local":
        root = state_dir or (Path(profile.state_dir).expanduser() if profile.state_dir else None)
        root = root or default_state_dir()
        url, token = local_service(root, start=start, options=service_options(profile))
        host = url.split("://", 1)[-1]
        return Connection(url, None, profile.label(host), local=True, token=token)
    if profile.kind == "vertex":
        from tui_app.api.vertex_client import vertex_endpoint

        assert profile.region is not None
        endpoint = profile.endpoint or vertex_endpoint(profile.region)
        return Connection(
            endpoint,
            _credentials(profile, adc=True),
            profile.label(),
            backend="vertex",
            logging_endpoint=profile.logging_endpoint or VERTEX_LOGGING_ENDPOINT,
            region=profile.region,
            executor_image=profile.executor_image,
        )
    assert profile.endpoint is not None
    return Connection(
        profile.endpoint,
        _credentials(profile, adc=profile.adc),
        profile.label(),
        logging_endpoint=profile.logging_endpoint,
    )


def _credentials(profile: Profile, adc: bool) -> Credentials:
    """A token (inline or from a file) when the profile names one, else ADC when asked for.

    Raises:
        ApiCallError: the token file is unreadable, or there are no default credentials.
    """
    if profile.token or profile.token_file:
        token = profile.token
        if token is None and profile.token_file:
            try:
                token = Path(profile.token_file).expanduser().read_text().strip()
            except OSError as exc:
                raise ApiCallError(
                    f"Cannot read the token file {profile.token_file}: {exc}"
                ) from None
        return make_credentials(token)
    if adc:
        import google.auth
        from google.auth.exceptions import DefaultCredentialsError

        try:
            creds, _ = google.auth.default(scopes=CLOUD_SCOPES)
        except DefaultCredentialsError as exc:
            raise ApiCallError(
                "No Google application default credentials. Run `gcloud auth application-default"
                f" login`, or set GOOGLE_APPLICATION_CREDENTIALS. ({exc})",
                401,
                "UNAUTHENTICATED",
            ) from None
        return creds
    return make_credentials(None)
