"""The executors' registry (``config/executors.py``) is the one place an executor is named: each
entry must point at a factory in ``tui_app.local.execution`` that builds an executor of that
name, and settings, the service's flags and the client's forwarding must all follow it.

The Ray factory's module is imported only where Ray is installed (the default install has no
Ray); elsewhere the test checks that the module exists without importing it.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
from pathlib import Path

import pytest

from tui_app.api.connection import service_options
from tui_app.config.executors import (
    DEFAULT_EXECUTOR,
    EXECUTORS,
    ExecutorEntry,
    executor_help,
    executor_names,
    executor_options,
    runs_here,
)
from tui_app.config.settings import Profile, SettingsError, parse_settings
from tui_app.local.execution.executor import factory_for
from tui_app.local.service_cli import ServiceOptions, add_run_arguments

HAS_RAY = importlib.util.find_spec("ray") is not None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    add_run_arguments(parser)
    return parser


@pytest.mark.parametrize("entry", EXECUTORS, ids=lambda e: e.name)
def test_each_entry_points_at_a_factory_in_the_execution_room(entry: ExecutorEntry) -> None:
    module, sep, attribute = entry.factory.partition(":")
    assert sep and attribute, "a factory is named as module:attribute"
    assert module.startswith("tui_app.local.execution.")
    assert importlib.util.find_spec(module) is not None, f"{module} does not exist"


def test_the_local_factory_builds_the_executor_of_its_name(tmp_path: Path) -> None:
    executor = factory_for("local")(tmp_path, ServiceOptions())
    assert executor.name == "local" == DEFAULT_EXECUTOR


@pytest.mark.skipif(not HAS_RAY, reason="the ray extra is not installed")
def test_the_ray_factory_builds_the_executor_of_its_name(tmp_path: Path) -> None:
    from tui_app.local.execution.ray_executor import RayExecutor

    opts = ServiceOptions(executor="ray", ray_address="127.0.0.2:6390", ray_warm_actors=0)
    executor = factory_for("ray")(tmp_path, opts)  # builds it; joins no cluster until start()
    assert isinstance(executor, RayExecutor) and executor.name == "ray"
    assert (executor.address, executor.warm_per_node) == ("127.0.0.2:6390", 0)


def test_every_executor_option_is_a_field_of_both_writers() -> None:
    """engine_and_executor_flags reads an option by its key from a profile or a service's
    options: both must have a field of that name."""
    profile_fields = {f.name for f in dataclasses.fields(Profile)}
    service_fields = {f.name for f in dataclasses.fields(ServiceOptions)}
    for _, option in executor_options():
        assert option.key in profile_fields and option.key in service_fields


def test_the_flag_offers_what_the_registry_holds() -> None:
    parser = _parser()
    executor = next(a for a in parser._actions if "--executor" in a.option_strings)
    assert tuple(executor.choices or ()) == executor_names() == ("local", "ray")
    assert executor.default == DEFAULT_EXECUTOR
    assert (
        executor.help
        == executor_help()
        == (
            "where replicas run: local (processes on this machine, the default) or ray (a "
            "Ray cluster's nodes, with the ray extra: .venv/bin/pip install '.[ray]' in the "
            "checkout; README: Replicas on a Ray cluster)"
        )
    )
    flags = {s for a in parser._actions for s in a.option_strings}
    assert {option.flag for _, option in executor_options()} <= flags


def test_only_the_local_executor_runs_here() -> None:
    assert runs_here("local") and not runs_here("ray")
    assert not runs_here("slurm"), "an executor this client does not know is a cluster's"


def test_settings_refuse_an_unregistered_executor_listing_the_registered_ones() -> None:
    with pytest.raises(SettingsError) as err:
        parse_settings("profiles:\n  p: {executor: slurm}\n")
    assert f"must be one of {', '.join(executor_names())}, not 'slurm'" in str(err.value)


def test_a_profile_and_the_service_forward_the_same_flags() -> None:
    profile = parse_settings(
        'profiles:\n  c: {executor: ray, ray_address: "10.0.0.5:6379"}\n'
    ).profiles["c"]
    wanted = ["--executor", "ray", "--ray-address", "10.0.0.5:6379"]
    assert service_options(profile) == wanted
    opts = ServiceOptions.from_args(_parser().parse_args(wanted), env={})
    assert opts.argv()[-len(wanted) :] == wanted
