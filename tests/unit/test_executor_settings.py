"""A local profile's ``executor`` and ``ray_address`` (issue 28): read from settings.yaml, refused
with the key named when wrong, and passed on to ``tui-app service start`` and back."""

from __future__ import annotations

import argparse

import pytest

from tui_app.api.connection import service_options
from tui_app.config.settings import SettingsError, parse_settings
from tui_app.local.execution.ray_warm_actors import DEFAULT_WARM_ACTORS
from tui_app.local.service_cli import ServiceError, ServiceOptions, add_run_arguments


def test_a_local_profile_runs_its_replicas_on_a_ray_cluster() -> None:
    settings = parse_settings(
        """
        profiles:
          cluster: {executor: ray, ray_address: "10.0.0.5:6379"}
          plain: {}
        """
    )
    cluster = settings.profiles["cluster"]
    assert (cluster.executor, cluster.ray_address) == ("ray", "10.0.0.5:6379")
    assert service_options(cluster) == ["--executor", "ray", "--ray-address", "10.0.0.5:6379"]
    plain = settings.profiles["plain"]
    assert (plain.executor, plain.ray_address, service_options(plain)) == ("local", None, [])


@pytest.mark.parametrize(
    ("profile", "wanted"),
    [
        ("{executor: kubernetes}", "profiles.p.executor must be one of local, ray"),
        ("{executor: ray, ray_address: 5}", "profiles.p.ray_address must be the cluster's"),
        ("{ray_address: 'h:1'}", "profiles.p.ray_address needs executor: ray"),
        ("{kind: url, endpoint: 'http://x', executor: ray}", "applies only to a local profile"),
    ],
)
def test_a_wrong_executor_setting_names_its_key(profile: str, wanted: str) -> None:
    with pytest.raises(SettingsError) as err:
        parse_settings(f"profiles:\n  p: {profile}\n")
    assert wanted in str(err.value)


def test_the_flags_survive_the_trip_through_service_start() -> None:
    parser = argparse.ArgumentParser()
    add_run_arguments(parser)
    flags = ["--executor", "ray", "--ray-address", "127.0.0.2:6390", "--ray-warm-actors", "0"]
    opts = ServiceOptions.from_args(parser.parse_args(flags), env={})
    assert (opts.executor, opts.ray_address, opts.ray_warm_actors) == ("ray", "127.0.0.2:6390", 0)
    again = ServiceOptions.from_args(parser.parse_args(opts.argv()), env={})
    assert (again.executor, again.ray_address, again.ray_warm_actors) == (
        "ray",
        "127.0.0.2:6390",
        0,
    )
    plain = ServiceOptions.from_args(parser.parse_args([]), env={})
    assert plain.ray_warm_actors == DEFAULT_WARM_ACTORS and "--ray-warm-actors" not in plain.argv()
    with pytest.raises(SystemExit):
        parser.parse_args(["--executor", "slurm"])


@pytest.mark.parametrize("count", ["-1", "17"])
def test_warm_actors_out_of_range_are_refused_saying_the_range(count: str) -> None:
    parser = argparse.ArgumentParser()
    add_run_arguments(parser)
    with pytest.raises(ServiceError) as err:
        ServiceOptions.from_args(parser.parse_args(["--ray-warm-actors", count]), env={})
    assert str(err.value) == f"--ray-warm-actors must be 0 to 16 (actors per node), not {count}."
