"""The executors a local service can run replicas with, registered once.

An executor's name used to be spelled wherever it was read: the settings' check, the service's
``--executor`` flag, the service building its executor, and the client forwarding a profile's
executor to ``tui-app service start``. Each of those now reads this registry, so adding an
executor is writing its module (``tui_app/local/execution``) and adding one entry here.

The entries are data: this package imports no other part of tui-app (an import-linter contract),
and only the Ray executor's modules may import Ray, so an executor is named by the dotted path of
the factory the service imports when, and only when, it is asked for
(``local/execution/executor.factory_for``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "DEFAULT_EXECUTOR",
    "EXECUTORS",
    "ExecutorEntry",
    "ExecutorOption",
    "executor_entry",
    "executor_help",
    "executor_names",
    "executor_options",
    "runs_here",
]


@dataclass(frozen=True)
class ExecutorOption:
    """A setting only one executor reads: a key of a local profile in settings.yaml, a field of
    ``config.settings.Profile`` and of ``local.service_cli.ServiceOptions`` by the same name, and
    the ``service start`` flag the client forwards it as."""

    key: str
    """``ray_address``: the profile key and the field name; the flag is ``--ray-address``."""
    what: str
    """What its text must be, for the settings' error: ``the cluster's HOST:PORT``."""
    metavar: str
    help: str
    """The flag's help in ``tui-app service start --help``."""

    @property
    def flag(self) -> str:
        return "--" + self.key.replace("_", "-")


@dataclass(frozen=True)
class ExecutorEntry:
    """One executor: what settings accept, what the service's flags offer, what it builds."""

    name: str
    """The value of ``executor:`` in a profile and of ``--executor``; also the executor's own
    ``name`` (the service's ``/healthz`` says it), which a unit test holds equal."""
    summary: str
    """Its part of ``--executor``'s help: where replicas run with it."""
    factory: str
    """``module:function`` the service calls as ``(state_root, options) -> Executor``
    (``local/execution/executor.ExecutorFactory``), imported only for this executor."""
    runs_here: bool = False
    """Replicas run on this machine, so the service's capacity is this machine's: the service
    prints it and ``service status`` shows it (a cluster decides what fits itself)."""
    options: tuple[ExecutorOption, ...] = ()


DEFAULT_EXECUTOR = "local"
"""What a profile without ``executor:`` and a service without ``--executor`` run replicas with;
the client leaves ``--executor`` off for it."""

EXECUTORS: tuple[ExecutorEntry, ...] = (
    ExecutorEntry(
        name="local",
        summary="processes on this machine, the default",
        factory="tui_app.local.execution.local_executor:local_executor",
        runs_here=True,
    ),
    ExecutorEntry(
        name="ray",
        summary="a Ray cluster's nodes, with the ray extra: .venv/bin/pip install '.[ray]' in "
        "the checkout; README: Replicas on a Ray cluster",
        factory="tui_app.local.execution.ray_executor:ray_executor",
        options=(
            ExecutorOption(
                key="ray_address",
                what="the cluster's HOST:PORT",
                metavar="HOST:PORT",
                help="the Ray cluster to join with --executor ray (default: the one `ray start` "
                "on this machine joined)",
            ),
        ),
    ),
)


def executor_names() -> tuple[str, ...]:
    """The names settings accept and ``--executor`` offers, in the registry's order."""
    return tuple(entry.name for entry in EXECUTORS)


def executor_entry(name: str) -> ExecutorEntry:
    """The registered executor called ``name``.

    Raises:
        KeyError: no executor has that name (settings and the flag's choices refuse it first).
    """
    for entry in EXECUTORS:
        if entry.name == name:
            return entry
    raise KeyError(name)


def runs_here(name: object) -> bool:
    """Whether the executor called ``name`` (a service's ``/healthz`` says it as
    ``executor.name``) runs replicas on the service's machine, so its capacity is that
    machine's; a name this client does not know (a newer service's) is taken for a cluster."""
    return any(entry.name == name and entry.runs_here for entry in EXECUTORS)


def executor_options() -> tuple[tuple[ExecutorEntry, ExecutorOption], ...]:
    """Every executor's own options, each with the executor it belongs to."""
    return tuple((entry, option) for entry in EXECUTORS for option in entry.options)


def executor_help() -> str:
    """``--executor``'s help: where replicas run with each executor, in the registry's order."""
    parts = [f"{entry.name} ({entry.summary})" for entry in EXECUTORS]
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " or " + parts[-1]
    return "where replicas run: " + listed
