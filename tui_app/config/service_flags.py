"""The ``tui-app service start`` flags for a service's container engine and executor: one
spelling for the two places that write them, the service's own restart command line
(``local/service_cli.ServiceOptions.argv``) and the client starting the local service a
profile in settings describes (``api/connection.service_options``)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

__all__ = ["engine_and_executor_flags"]


def engine_and_executor_flags(
    container_engine: str | None,
    container_run_args: Sequence[str],
    executor: str,
    ray_address: str | None,
) -> list[str]:
    """Only what differs from the service's defaults (the engine found on PATH, no extra run
    options, the local executor, the Ray cluster ``ray start`` joined here)."""
    flags: list[str] = []
    if container_engine:
        flags += ["--container-engine", container_engine]
    if container_run_args:
        # One word with "=": a value starting with "--" would be read as an option of its own.
        flags.append("--container-run-args=" + shlex.join(container_run_args))
    if executor != "local":
        flags += ["--executor", executor]
    if ray_address:
        flags += ["--ray-address", ray_address]
    return flags
