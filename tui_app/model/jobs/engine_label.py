"""How the local service's container engine is named to the user, in one place: ``service
status``, the describe view of a container job and the builder all say it the same way.

The input is the ``containerEngine`` object of the service's ``/healthz`` answer: ``{"name",
"version", "command", "runArgs"}`` when an engine answers, ``{"problem"}`` when none does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["engine_found", "engine_label", "engine_problem", "runs_with"]


def engine_found(engine: Mapping[str, Any] | None) -> bool:
    return bool(engine) and isinstance(engine, Mapping) and bool(engine.get("name"))


def engine_label(engine: Mapping[str, Any] | None) -> str:
    """``podman 4.3.1``, ``podman 4.3.1 (--runtime runc)``, or the reason there is none
    (``none: No container engine answers ... Install podman ...``)."""
    if not isinstance(engine, Mapping) or not engine:
        return "unknown (the service did not say; it may be older than this tui-app)"
    if not engine_found(engine):
        return f"none: {engine.get('problem') or 'no container engine found'}"
    text = f"{engine['name']} {engine.get('version') or ''}".strip()
    command = str(engine.get("command") or "")
    run_args = [str(a) for a in engine.get("runArgs") or []]
    extra = " ".join(command.split()[1:] + run_args)
    return text + (f" ({extra})" if extra else "")


def engine_problem(engine: Mapping[str, Any] | None) -> str | None:
    """Why the service cannot run containers (its words, with the fix), when it says so;
    None when an engine answers or nothing is known."""
    if isinstance(engine, Mapping) and not engine_found(engine) and engine.get("problem"):
        return str(engine["problem"])
    return None


def runs_with(engine: Mapping[str, Any] | None) -> str | None:
    """The builder's line under a container image: ``Runs with podman 4.3.1``, ``Container
    engine: unknown (...)`` from a service that does not say; None when the service has none
    (``engine_problem`` says why, as the image field's error)."""
    if engine_found(engine):
        return f"Runs with {engine_label(engine)}"
    if engine_problem(engine) is not None:
        return None
    return f"Container engine: {engine_label(engine)}"
