"""The ``tui-app service start`` flags for a service's container engine and executor: one
spelling for the two places that write them, the service's own restart command line
(``local/service_cli.ServiceOptions.argv``) and the client starting the local service a
profile in settings describes (``api/connection.service_options``)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Protocol

from tui_app.config.executors import DEFAULT_EXECUTOR, executor_options

__all__ = ["ServiceStartFields", "engine_and_executor_flags"]


class ServiceStartFields(Protocol):
    """What both writers hold: ``config.settings.Profile`` and ``ServiceOptions`` have these
    fields, and one more of the same name for each executor option (``config/executors.py``)."""

    @property
    def container_engine(self) -> str | None: ...

    @property
    def container_run_args(self) -> Sequence[str]: ...

    @property
    def executor(self) -> str: ...


def engine_and_executor_flags(fields: ServiceStartFields) -> list[str]:
    """Only what differs from the service's defaults (the engine found on PATH, no extra run
    options, the default executor, no executor option: e.g. the Ray cluster ``ray start``
    joined here)."""
    flags: list[str] = []
    if fields.container_engine:
        flags += ["--container-engine", fields.container_engine]
    if fields.container_run_args:
        # One word with "=": a value starting with "--" would be read as an option of its own.
        flags.append("--container-run-args=" + shlex.join(fields.container_run_args))
    if fields.executor != DEFAULT_EXECUTOR:
        flags += ["--executor", fields.executor]
    for _, option in executor_options():
        # Read by the option's name: each executor option is a field of both writers' types.
        value = getattr(fields, option.key)
        if value:
            flags += [option.flag, value]
    return flags
