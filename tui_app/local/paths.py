"""Where the service keeps its state, and the only place that turns names into paths.

Every path built from a request (project, job id, bucket, object) goes through here, so the checks
that keep them inside the state dir live in one place.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from tui_app.config.locations import SERVICE_FILE, TOKEN_FILE, default_state_dir

__all__ = [
    "StateDir",
    "StateDirError",
    "UnsafePathError",
    "default_state_dir",
    "project_error",
]
PROJECT_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$")


class StateDirError(RuntimeError):
    """The state dir cannot be created or written; the message names it and says why."""


class UnsafePathError(ValueError):
    """A name would escape the state dir or is not a valid name."""


def project_error(project: str) -> str | None:
    """Why ``project`` is not usable as a project id, or None."""
    if not PROJECT_PATTERN.match(project) or ".." in project:
        return (
            f"{project[:60]!r} is not a valid project id: use letters, digits, '-', '_', '.' "
            "and ':', at most 100 characters."
        )
    return None


def _inside(root: Path, *parts: str) -> Path:
    for part in parts:
        if not part or part in (".", "..") or "/" in part or "\x00" in part:
            raise UnsafePathError(f"{part!r} is not a safe path segment")
    path = root.joinpath(*parts)
    if not path.resolve().is_relative_to(root.resolve()):
        raise UnsafePathError(f"{path} escapes {root}")
    return path


@dataclass(frozen=True)
class StateDir:
    """The layout of one service's state dir."""

    root: Path

    @property
    def jobs_db(self) -> Path:
        return self.root / "jobs.sqlite"

    @property
    def logs_db(self) -> Path:
        return self.root / "logs.sqlite"

    @property
    def token_file(self) -> Path:
        return self.root / TOKEN_FILE

    @property
    def service_file(self) -> Path:
        """JSON with the running service's pid, URL and auth mode."""
        return self.root / SERVICE_FILE

    @property
    def service_log(self) -> Path:
        return self.root / "service.log"

    @property
    def package_cache(self) -> Path:
        return self.root / "packages"

    def package_dir(self, name: str) -> Path:
        """One install under ``package_cache`` named by someone else (a Ray node builds the
        layer the service named there).

        Raises:
            UnsafePathError: ``name`` is not a single safe path segment.
        """
        return _inside(self.package_cache, name)

    @property
    def gcs_root(self) -> Path:
        """Where ``gs://bucket/object`` lives: ``gcs/bucket/object``."""
        return self.root / "gcs"

    def job_dir(self, project: str, job_id: str) -> Path:
        """The job's own folder: replica work dirs, their logs and status files."""
        return _inside(self.root / "jobs", project, job_id)

    def replica_dir(self, project: str, job_id: str, trial: str | None, task_name: str) -> Path:
        """One replica's work dir: its output files and status, whatever node ran it (a trial's
        replicas under ``trials/<id>``)."""
        base = self.job_dir(project, job_id)
        if trial is not None:
            base = _inside(base, "trials", trial)
        return _inside(base, task_name)

    def gcs_path(self, uri: str) -> Path:
        """Map ``gs://bucket/a/b`` to its folder under the state dir.

        Raises:
            UnsafePathError: for a malformed URI or one that would escape the state dir.
        """
        if not uri.startswith("gs://"):
            raise UnsafePathError(f"{uri!r} is not a gs:// URI")
        bucket, _, obj = uri[5:].partition("/")
        parts = [p for p in obj.split("/") if p]
        return _inside(self.gcs_root, bucket, *parts)

    def ensure(self) -> None:
        """Create the state dir (0700: it holds the token) and check that it takes writes.

        Raises:
            StateDirError: it cannot be created or written (permissions, a read-only or full
                file system, a file in the way), with the reason in one line.
        """
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            os.chmod(self.root, 0o700)
            for sub in ("jobs", "packages", "gcs"):
                (self.root / sub).mkdir(exist_ok=True)
            probe = self.root / f".write-probe-{os.getpid()}"
            fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                os.write(fd, b"ok\n")
                os.fsync(fd)
            finally:
                os.close(fd)
                probe.unlink(missing_ok=True)
        except OSError as exc:
            why = exc.strerror or str(exc)
            where = (
                f" ({exc.filename})" if exc.filename and str(exc.filename) != str(self.root) else ""
            )
            raise StateDirError(f"Cannot use the state dir {self.root}: {why}{where}.") from None
