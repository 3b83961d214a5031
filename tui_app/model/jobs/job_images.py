"""Which image each replica of a custom-container job runs.

On the platform ``masterConfig.imageUri`` made a job a container job; every other role ran the
master's image unless its own ``*Config.imageUri`` named another (validation refuses a role image
without a master image, as the platform did). So a job is either all containers or all Python
packages, and ``replica_image`` is the one rule the service, the describe view and the builder
read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tui_app.model.jobs.cluster import replicas
from tui_app.model.jobs.roles import role_fields
from tui_app.model.jobs.tiers import Role

__all__ = ["container_entry", "job_images", "replica_image"]


def _config(ti: Mapping[str, Any], role: Role) -> Mapping[str, Any]:
    config = ti.get(role_fields(role).config_field)
    return config if isinstance(config, Mapping) else {}


def replica_image(ti: Mapping[str, Any], role: Role) -> str | None:
    """The image a replica of ``role`` runs, or None for a Python-package job."""
    master = _config(ti, Role.MASTER).get("imageUri")
    if not master:
        return None
    own = _config(ti, role).get("imageUri")
    return str(own or master)


def job_images(ti: Mapping[str, Any]) -> list[str]:
    """The distinct images the job's replicas run, in cluster order; empty for a package job."""
    seen: list[str] = []
    for rep in replicas(ti):
        image = replica_image(ti, rep.role)
        if image is not None and image not in seen:
            seen.append(image)
    return seen


def container_entry(ti: Mapping[str, Any], role: Role) -> tuple[list[str], list[str] | None]:
    """(containerCommand, containerArgs) of a replica of ``role``: its own, else the master's when
    it runs the master's image (the same image started the same way), else none. Args are None
    when neither is set: the job's ``args`` go after the image's entrypoint instead."""
    own = _config(ti, role)
    source = own
    entry = own.get("containerCommand") or own.get("containerArgs")
    if role is not Role.MASTER and not own.get("imageUri") and not entry:
        source = _config(ti, Role.MASTER)
    command = [str(c) for c in source.get("containerCommand") or []]
    given = source.get("containerArgs")
    if command or given:
        return command, [str(a) for a in given or []]
    return [], None
