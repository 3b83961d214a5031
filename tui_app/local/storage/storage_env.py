"""How a replica reaches the service's storage API without credentials, and who wrote what.

On the platform a trainer's storage clients found their credentials on the machine. Here the
service may require its bearer token, which a trainer must never see (it also creates and cancels
jobs), and google-cloud-storage pointed at an emulator sends no credentials at all. So each
replica gets its own random credential:

- issued when the replica starts, revoked when its job ends (and persisted, so a restarted
  service still knows the replicas it adopts);
- accepted on the storage routes only, either as a path prefix ``/_replica/<secret>`` of the
  endpoint the replica is given (google-cloud-storage, gcsfs and the sample trainer's client
  keep the path of ``STORAGE_EMULATOR_HOST``) or as ``Authorization: Bearer <secret>`` (what
  TensorFlow sends from ``GOOGLE_AUTH_TOKEN_FOR_TESTING``);
- it names its replica, so every object a replica writes is attributed to (project, job, trial,
  task): see ``JobService.on_object_written``.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "HYPERTUNE_MAX_BYTES",
    "PROXY_ORIGINS",
    "PROXY_ORIGIN_HEADER",
    "REPLICA_OUTPUT_CAPS",
    "REPLICA_OUTPUT_FILES",
    "REPLICA_PREFIX",
    "STATUS_MAX_BYTES",
    "ObjectWrite",
    "ReplicaCredentials",
    "ReplicaWriter",
    "StorageProxyInfo",
    "WriteLog",
    "replica_storage_env",
]

PROXY_ORIGIN_HEADER = "X-Storage-Proxy-Origin"
"""Set by the storage proxy (``gcs_proxy``) on what it forwards: the Google origin the client
dialled, so links in answers (a resumable upload's ``Location``) lead back through the proxy."""

PROXY_ORIGINS = frozenset({"https://www.googleapis.com", "https://storage.googleapis.com"})
"""The only values of ``PROXY_ORIGIN_HEADER`` the storage API uses; anything else is ignored."""

REPLICA_PREFIX = "/_replica/"
"""The path prefix that carries a replica's credential: ``/_replica/<secret>/storage/v1/...``."""

REPLICA_OUTPUT_FILES = {
    "stdout": "stdout.log",
    "stderr": "stderr.log",
    "hypertune": "hypertune/output.metrics",
    "status": "status.json",
}
"""A replica's output files by the stream name they are shipped under from another node
(``storage/replica_output.py`` takes them, ``execution/ray_replica.py`` sends them, ``status``
last so the service holds every line before it learns that the replica ended)."""

HYPERTUNE_MAX_BYTES = 256 << 20
"""The most of a replica's hypertune file the service takes or reads: 4 million reports of a
metric at about 60 bytes each. A trainer reporting every step of a long run stays far below; a
file past it fails its trial (``execution/trials.py``) rather than the service's memory."""

STATUS_MAX_BYTES = 64 << 10
"""A replica's ``status.json``: one small JSON object."""

REPLICA_OUTPUT_CAPS: dict[str, int | None] = {
    "stdout": None,
    "stderr": None,
    "hypertune": HYPERTUNE_MAX_BYTES,
    "status": STATUS_MAX_BYTES,
}
"""The most each shipped file may hold in all (None: a log, bounded by the log store's own
rules)."""


@dataclass(frozen=True)
class ReplicaWriter:
    """The replica behind a credential: who wrote an object."""

    project: str
    job_id: str
    trial: str | None
    task_name: str
    ships_output: bool = False
    """Issued to a replica on another node (the Ray executor): only such a credential may send
    output files (``replica_output``); a local or container replica's files are the
    supervisor's to write."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> ReplicaWriter | None:
        if not isinstance(data, dict):
            return None
        try:
            return cls(
                str(data["project"]),
                str(data["job_id"]),
                None if data.get("trial") is None else str(data["trial"]),
                str(data["task_name"]),
                data.get("ships_output") is True,
            )
        except KeyError:
            return None


class ReplicaCredentials:
    """The live replicas' storage credentials, kept in ``<state>/replica-credentials.json``
    (0600) so that a service restarted while replicas run still accepts theirs."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._by_secret: dict[str, ReplicaWriter] = {}
        try:
            raw = json.loads(path.read_text())
        except (OSError, ValueError):
            raw = {}
        if isinstance(raw, dict):
            for secret, data in raw.items():
                writer = ReplicaWriter.from_dict(data)
                if writer is not None and isinstance(secret, str):
                    self._by_secret[secret] = writer

    def issue(self, writer: ReplicaWriter) -> str:
        """A new secret for ``writer`` (URL-safe, 32 bytes of randomness)."""
        secret = secrets.token_urlsafe(32)
        with self._lock:
            self._by_secret[secret] = writer
            self._save()
        return secret

    def lookup(self, secret: str) -> ReplicaWriter | None:
        """The replica a secret belongs to; None for an unknown or revoked one (constant time
        per candidate, so timing says nothing about which secrets exist)."""
        found = None
        for known, writer in list(self._by_secret.items()):
            if secrets.compare_digest(known.encode(), secret.encode("utf-8", "replace")):
                found = writer
        return found

    def revoke_job(self, project: str, job_id: str) -> None:
        """Every credential of the job's replicas (its trials' too) stops working."""
        with self._lock:
            gone = [
                s for s, w in self._by_secret.items() if (w.project, w.job_id) == (project, job_id)
            ]
            for secret in gone:
                del self._by_secret[secret]
            if gone:
                self._save()

    def _save(self) -> None:
        data = {s: w.as_dict() for s, w in self._by_secret.items()}
        fresh = self.path.with_suffix(".new")
        fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(data, f)
        os.replace(fresh, self.path)


@dataclass(frozen=True)
class StorageProxyInfo:
    """Where the storage proxy listens and the CA bundle that trusts it (``gcs_proxy``)."""

    url: str
    ca_bundle: str


LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


def replica_storage_env(
    service_url: str,
    secret: str,
    project: str,
    proxy: StorageProxyInfo | None = None,
    inherited_no_proxy: str | None = None,
) -> dict[str, str]:
    """The environment that points a replica's storage clients at the service.

    - ``STORAGE_EMULATOR_HOST``: google-cloud-storage and gcsfs take their endpoint from it
      (path included) and then send no credentials; the sample trainer's client reads it too.
    - ``CLOUD_STORAGE_EMULATOR_ENDPOINT``: the same for Google's C++ storage client.
    - ``GOOGLE_AUTH_TOKEN_FOR_TESTING``: TensorFlow's GCS filesystem sends this as its bearer
      token instead of looking for credentials (no metadata-server probe, no ADC file).
    - ``NO_GCE_CHECK``: TensorFlow skips probing for a GCE metadata server.
    - ``GCE_METADATA_HOST`` / ``GCE_METADATA_ROOT`` / ``GCE_METADATA_IP``: google-auth's metadata
      server is the replica's own (``metadata_api``), so ``google.auth.default()`` finds a
      credential as on the platform (older google-cloud-storage clients call it).
    - ``GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT=false``: recent gcsfs otherwise asks each bucket's
      layout over gRPC first (only Google serves that) and waits 60 s before falling back.
    - ``GOOGLE_CLOUD_PROJECT`` / ``GCLOUD_PROJECT`` / ``CLOUDSDK_CORE_PROJECT``: the project
      ``storage.Client()`` and gcloud default to, as on the platform's machines.
    - with the storage proxy: ``ALL_PROXY``, ``CURL_CA_BUNDLE`` and ``NO_PROXY`` (loopback added
      to what the service inherited). TensorFlow's built-in GCS filesystem has no endpoint
      setting, so ``tf.io.gfile`` reaches the service through libcurl's proxy instead
      (``gcs_proxy`` says how, and which other clients that touches).
    """
    endpoint = f"{service_url.rstrip('/')}{REPLICA_PREFIX}{secret}"
    env = {
        "STORAGE_EMULATOR_HOST": endpoint,
        "CLOUD_STORAGE_EMULATOR_ENDPOINT": endpoint,
        "GOOGLE_AUTH_TOKEN_FOR_TESTING": secret,
        "NO_GCE_CHECK": "True",
        **dict.fromkeys(
            ("GCE_METADATA_HOST", "GCE_METADATA_ROOT", "GCE_METADATA_IP"),
            endpoint.split("://", 1)[-1],
        ),
        "GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT": "false",
        "GOOGLE_CLOUD_PROJECT": project,
        "GCLOUD_PROJECT": project,
        "CLOUDSDK_CORE_PROJECT": project,
    }
    if proxy is not None:
        if inherited_no_proxy is None:
            inherited_no_proxy = os.environ.get("NO_PROXY") or os.environ.get("no_proxy") or ""
        names = [n.strip() for n in inherited_no_proxy.split(",") if n.strip()]
        names += [n for n in LOOPBACK_NAMES if n not in names]
        env.update(
            {
                "ALL_PROXY": proxy.url,
                "CURL_CA_BUNDLE": proxy.ca_bundle,
                "NO_PROXY": ",".join(names),
                "no_proxy": ",".join(names),
            }
        )
    return env


@dataclass(frozen=True)
class ObjectWrite:
    """One object a replica committed: ``gs://bucket/name`` by ``writer`` at ``time``."""

    writer: ReplicaWriter
    bucket: str
    name: str
    time: float

    @property
    def uri(self) -> str:
        return f"gs://{self.bucket}/{self.name}"


class WriteLog:
    """The objects each job's replicas wrote, one JSON line per write in the job's folder
    (``objects-written.jsonl``), so the record outlives a service restart."""

    FILE = "objects-written.jsonl"

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def append(self, job_dir: Path, write: ObjectWrite) -> None:
        line = json.dumps(
            {
                "writer": write.writer.as_dict(),
                "bucket": write.bucket,
                "name": write.name,
                "time": write.time,
            }
        )
        with self._lock:
            job_dir.mkdir(parents=True, exist_ok=True)
            with open(job_dir / self.FILE, "a", encoding="utf-8") as f:
                f.write(line + "\n")

    def read(self, job_dir: Path) -> list[ObjectWrite]:
        try:
            text = (job_dir / self.FILE).read_text(encoding="utf-8")
        except OSError:
            return []
        out = []
        for line in text.splitlines():
            try:
                data = json.loads(line)
                writer = ReplicaWriter.from_dict(data["writer"])
                if writer is not None:
                    out.append(
                        ObjectWrite(writer, str(data["bucket"]), str(data["name"]), data["time"])
                    )
            except (ValueError, KeyError, TypeError):
                continue  # a line cut by a crash
        return out
