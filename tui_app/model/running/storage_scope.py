"""What one replica's storage credential may reach: its own job's ``gs://`` paths, no others.

Each replica gets a storage credential of its own (``local/storage/storage_env.py``). Without a
scope that credential opened every bucket of the service: a container of job x listed the
buckets, read job y's output, overwrote y's staged package (its owner then read the attacker's
bytes back, and a later job installing it ran the attacker's code) and deleted y's objects. On
the platform a job ran as a service account the user had granted exactly the buckets it needed;
here the job's own ``trainingInput`` is that grant, because it names every path the job was told
about:

- read-write: the ``jobDir`` (``gs://bucket/path``: the object ``path`` and everything under
  ``path/``; a tuning trial writes ``<jobDir>/<trialId>/...``, which that covers), and every
  ``gs://`` path given as the value of an output-looking flag (``OUTPUT_FLAG_MARKERS``);
- read-only: each ``packageUris`` object, and every other ``gs://`` path in ``args`` and in each
  role's ``containerArgs`` / ``containerCommand`` (a glob such as ``gs://b/data/*.csv`` grants
  the names that start with the part before its first ``*``, ``?`` or ``[``).

Paths have folder semantics: ``gs://b/out`` grants ``out`` and ``out/...`` but never
``output2/x``. A path also grants what would lie below it were it a folder (``pkg.tar.gz/``
holds nothing while the package exists): gcsfs and TensorFlow ask whether a path is a folder by
listing ``path/``, and that must be an empty answer, not a refusal.

A replica may also find its way down to its paths, as TensorFlow's ``gfile`` does (it checks
that ``gs://b/jobs/`` exists before ``gs://b/jobs/x/``): it may read the metadata of an ancestor
folder, list an ancestor prefix (the storage API then shows only what is in scope or leads to
it), and create an ancestor's empty folder placeholder (``jobs/``) above a path it may write.

Everything here is pure: the storage API (``local/storage/storage_api.py``) asks these
questions for each request that carries a replica's credential; requests with the service's own
token (the user, gcloud) are never scoped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tui_app.model.jobs.roles import ROLE_FIELDS

__all__ = [
    "OUTPUT_FLAG_MARKERS",
    "ScopePath",
    "StorageScope",
    "is_output_flag",
    "package_objects",
    "replica_scope",
    "scope_paths",
]

OUTPUT_FLAG_MARKERS: tuple[str, ...] = (
    "job-dir",
    "jobdir",
    "output",
    "out-dir",
    "outdir",
    "model-dir",
    "modeldir",
    "export",
    "checkpoint",
    "ckpt",
    "log-dir",
    "logdir",
    "logs-dir",
    "tensorboard",
    "save",
    "summary",
    "summaries",
)
"""Words that make a flag an output flag: a ``gs://`` path given as its value is read-write.

These are the names trainers use for where they write: gcloud's and the platform's
``--job-dir``, the samples' ``--model-dir``, ``--output-dir``, ``--export-dir``,
``--checkpoint-dir``, ``--log-dir``, ``--tensorboard-log-dir``, Keras' ``--save-path``,
``--summary-dir``. The user who wrote ``--output-dir=gs://b/run7`` declared that the job writes
there, exactly as ``jobDir`` declares it; every other ``gs://`` path is data it reads.

A flag matches when, lower-cased and with ``_`` read as ``-``, one of these starts at one of its
words (``--train-output-path``, ``--checkpoints``), never inside one: ``--layout-dir`` holds
``out-dir`` but is not an output flag."""

_GLOB_CHARS = "*?["
_URI = re.compile(r"""gs://([^/\s,;'"()<>{}|\\]+)(/[^\s,;'"()<>{}|\\]*)?""")
"""A ``gs://`` URI inside an argument: it ends at whitespace, a comma or semicolon (lists such
as ``--files=gs://a/x,gs://a/y``), a quote or a bracket (JSON or Python literals)."""

MAX_SHOWN = 8
"""The most paths of each kind ``StorageScope.describe`` names; more are counted."""


@dataclass(frozen=True)
class ScopePath:
    """One granted path: ``bucket`` and ``path`` (no leading or trailing ``/``; empty for the
    whole bucket), or with ``glob`` a raw name prefix (what precedes a glob's first wildcard).

    ``shown`` is how error messages write it (the URI as the user gave it, a folder with its
    ``/``); it takes no part in comparisons."""

    bucket: str
    path: str
    glob: bool = False
    shown: str = field(default="", compare=False)

    @property
    def target(self) -> str:
        """The name prefix that leads here: a listing of any prefix of it may show this path."""
        return self.path

    def covers(self, name: str) -> bool:
        """Whether object ``name`` (of this path's bucket) is inside."""
        if self.glob:
            return name.startswith(self.path)
        return not self.path or name == self.path or name.startswith(self.path + "/")

    def holds_all(self, prefix: str) -> bool:
        """Whether every name that starts with ``prefix`` is inside (a listing needs no filter)."""
        if self.glob:
            return prefix.startswith(self.path)
        return not self.path or prefix.startswith(self.path + "/")

    def lies_under(self, prefix: str) -> bool:
        """Whether this path starts with ``prefix``: listing ``prefix`` is on the way to it."""
        return self.target.startswith(prefix)

    def describe(self) -> str:
        if self.shown:
            return self.shown
        if self.glob:
            return f"gs://{self.bucket}/{self.path}*"
        return f"gs://{self.bucket}/{self.path}" if self.path else f"gs://{self.bucket}/"


def _parse(uri: str, folder: bool) -> ScopePath | None:
    """The path a ``gs://`` URI grants, or None when it can name no object here (no bucket, or
    a wildcard in the bucket name). ``folder``: show it as a folder (``gs://b/out/``)."""
    if not uri.startswith("gs://"):
        return None
    bucket, _, rest = uri[len("gs://") :].partition("/")
    if not bucket or any(c in bucket for c in _GLOB_CHARS):
        return None
    cut = min((i for i in (rest.find(c) for c in _GLOB_CHARS) if i >= 0), default=-1)
    if cut >= 0:
        prefix = rest[:cut].lstrip("/")
        return ScopePath(bucket, prefix, glob=True, shown=uri)
    path = rest.strip("/")
    as_folder = f"gs://{bucket}/{path}/" if path else f"gs://{bucket}/"
    return ScopePath(bucket, path, shown=as_folder if folder else uri)


def is_output_flag(flag: str) -> bool:
    """Whether a flag (``--output-dir``, ``-o``, ``OUTPUT_DIR``...) names where a job writes:
    see ``OUTPUT_FLAG_MARKERS``."""
    name = flag.lstrip("-").lower().replace("_", "-")
    starts = [0] + [i + 1 for i, c in enumerate(name) if c == "-"]
    return any(name.startswith(marker, i) for i in starts for marker in OUTPUT_FLAG_MARKERS)


def _uris_in(argv: Sequence[Any]) -> Iterator[tuple[str, bool]]:
    """Each ``gs://`` URI in an argument list, and whether it is an output flag's value: in
    ``--flag=URI`` or as the argument after a bare ``--flag``."""
    previous_flag: str | None = None
    for raw in argv:
        arg = str(raw)
        flag: str | None = None
        value = arg
        if arg.startswith("-"):
            name, eq, rest = arg.partition("=")
            if eq:
                flag, value = name, rest
            else:
                previous_flag = name
                continue
        else:
            flag = previous_flag
        previous_flag = None
        output = flag is not None and is_output_flag(flag)
        for match in _URI.finditer(value):
            yield match.group(0), output


def _argument_lists(ti: Mapping[str, Any]) -> Iterator[Sequence[Any]]:
    args = ti.get("args")
    if isinstance(args, list):
        yield args
    for role in ROLE_FIELDS:
        config = ti.get(role.config_field)
        if not isinstance(config, Mapping):
            continue
        for key in ("containerCommand", "containerArgs"):
            value = config.get(key)
            if isinstance(value, list):
                yield value


def _unique(paths: Iterable[ScopePath]) -> tuple[ScopePath, ...]:
    seen: dict[ScopePath, ScopePath] = {}
    for p in paths:
        seen.setdefault(p, p)
    return tuple(seen)


def scope_paths(ti: Mapping[str, Any]) -> tuple[tuple[ScopePath, ...], tuple[ScopePath, ...]]:
    """(read-write paths, read-only paths) a job's ``trainingInput`` grants its replicas."""
    writes: list[ScopePath] = []
    reads: list[ScopePath] = []
    job_dir = ti.get("jobDir")
    if isinstance(job_dir, str) and job_dir.startswith("gs://"):
        found = _parse(job_dir, folder=True)
        if found is not None and not found.glob:
            writes.append(found)
    packages = ti.get("packageUris")
    for uri in packages if isinstance(packages, list) else ():
        if isinstance(uri, str) and uri.startswith("gs://"):
            found = _parse(uri, folder=False)
            if found is not None:
                reads.append(found)
    for argv in _argument_lists(ti):
        for uri, output in _uris_in(argv):
            found = _parse(uri, folder=output and not any(c in uri for c in _GLOB_CHARS))
            if found is not None:
                (writes if output else reads).append(found)
    return _unique(writes), _unique(reads)


def package_objects(ti: Mapping[str, Any]) -> frozenset[tuple[str, str]]:
    """The (bucket, name) of each ``gs://`` package of a job: objects no replica may write."""
    out: set[tuple[str, str]] = set()
    packages = ti.get("packageUris")
    for uri in packages if isinstance(packages, list) else ():
        if isinstance(uri, str) and uri.startswith("gs://"):
            bucket, _, name = uri[len("gs://") :].partition("/")
            if bucket and name:
                out.add((bucket, name))
    return frozenset(out)


@dataclass(frozen=True)
class StorageScope:
    """The ``gs://`` paths the replicas of one job may read and write (the module docstring
    says which and why)."""

    job_id: str
    writes: tuple[ScopePath, ...] = ()
    reads: tuple[ScopePath, ...] = ()

    @property
    def buckets(self) -> frozenset[str]:
        """Every bucket a path of the scope lies in: the buckets a replica may see at all."""
        return frozenset(p.bucket for p in (*self.writes, *self.reads))

    def _all(self, bucket: str) -> Iterator[ScopePath]:
        return (p for p in (*self.writes, *self.reads) if p.bucket == bucket)

    def can_write(self, bucket: str, name: str) -> bool:
        """Whether a replica may write or delete ``gs://bucket/name``."""
        return any(p.bucket == bucket and p.covers(name) for p in self.writes)

    def can_create(self, bucket: str, name: str) -> bool:
        """Whether a replica may store ``gs://bucket/name``: a path it may write, or the empty
        folder placeholder (``jobs/``) of a folder on the way to one (``gfile.makedirs``)."""
        if self.can_write(bucket, name):
            return True
        return name.endswith("/") and any(
            p.bucket == bucket and p.lies_under(name) for p in self.writes
        )

    def can_read(self, bucket: str, name: str) -> bool:
        """Whether a replica may read ``gs://bucket/name``'s bytes: inside a path of its scope,
        or the (empty) folder placeholder of a folder on the way to one."""
        for p in self._all(bucket):
            if p.covers(name) or (name.endswith("/") and p.lies_under(name)):
                return True
        return False

    def can_stat(self, bucket: str, name: str) -> bool:
        """Whether a replica may read ``gs://bucket/name``'s metadata: what it may read, and
        any folder on the way to its paths with or without its ``/`` (TensorFlow asks for the
        object ``jobs`` before it lists ``jobs/``, and a refusal there fails ``makedirs``)."""
        folder = name if name.endswith("/") else name + "/"
        return self.can_read(bucket, name) or any(p.lies_under(folder) for p in self._all(bucket))

    def can_list(self, bucket: str, prefix: str) -> bool:
        """Whether a replica may list ``prefix``: inside a path of its scope, or on the way to
        one (then the listing shows only what ``shows`` allows). This also decides which of a
        listing's ``prefixes`` it sees."""
        return any(p.holds_all(prefix) or p.lies_under(prefix) for p in self._all(bucket))

    def holds_all(self, bucket: str, prefix: str) -> bool:
        """Whether every name under ``prefix`` is readable: a listing of it needs no filter."""
        return any(p.holds_all(prefix) for p in self._all(bucket))

    def limits(self) -> str:
        """What the replica may reach, for messages: "may write gs://b/out/ and read ..."."""

        def named(paths: tuple[ScopePath, ...]) -> str:
            shown = [p.describe() for p in paths[:MAX_SHOWN]]
            if len(paths) > MAX_SHOWN:
                shown.append(f"{len(paths) - MAX_SHOWN} more")
            return ", ".join(shown)

        if not self.writes and not self.reads:
            return "may read and write no Cloud Storage objects (its job names no gs:// paths)"
        writes = f"write {named(self.writes)}" if self.writes else "write nothing"
        reads = f"read {named(self.reads)}" if self.reads else "read nothing else"
        return f"may {writes} and {reads}"

    def describe(self) -> str:
        """The scope in one line: "this replica of job J may write gs://b/out/ and read ..."."""
        return f"this replica of job {self.job_id} {self.limits()}"


def replica_scope(job_id: str, training_input: Mapping[str, Any] | None) -> StorageScope:
    """The scope of every replica of job ``job_id``, from its ``trainingInput`` as stored."""
    writes, reads = scope_paths(training_input or {})
    return StorageScope(job_id, writes, reads)
