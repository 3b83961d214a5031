"""The container engine's command lines and answers, without an engine (issue 30).

``tui_app.local.environments.containers`` builds every command a container replica's life
takes and reads what podman and docker print back; ``engine_label`` names the engine to the
user, and ``job_images`` says which image each replica runs. A fake engine (a script on PATH)
stands in for discovery.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from tests.support.live_service import CLUSTER
from tui_app.local.environments.containers import (
    INSTALL_HINT,
    Engine,
    Mount,
    container_name,
    engine_from_env,
    find_engine,
    gpu_options,
    image_problem,
    parse_size,
    parse_stats,
    run_command,
)
from tui_app.model.jobs.engine_label import engine_found, engine_label
from tui_app.model.jobs.job_images import job_images, replica_image
from tui_app.model.jobs.tiers import Role

PODMAN = Engine(("/usr/bin/podman",), "podman", "4.3.1")
DOCKER = Engine(("/usr/bin/docker",), "docker", "27.3.1")

# -- stats ---------------------------------------------------------------------------------------

PODMAN_STATS = """[
 {
  "id": "d0186fba443b",
  "name": "tui-app-j-master-replica-0-1a2b3c4d",
  "cpu_time": "45.312616ms",
  "cpu_percent": "53.75%",
  "avg_cpu": "53.75%",
  "mem_usage": "483.3kB / 25.28GB",
  "mem_percent": "0.00%",
  "net_io": "180B / 254B",
  "block_io": "0B / 0B",
  "pids": "1"
 },
 {
  "id": "0e44aaf460f9",
  "name": "tui-app-j-worker-replica-0-1a2b3c4d",
  "cpu_percent": "--",
  "mem_usage": "1.5GiB / 2GiB"
 }
]"""

DOCKER_STATS = "\n".join(
    json.dumps(row)
    for row in (
        {
            "BlockIO": "0B / 0B",
            "CPUPerc": "101.25%",
            "Container": "5c3f1e",
            "ID": "5c3f1e",
            "MemPerc": "0.31%",
            "MemUsage": "24.5MiB / 7.668GiB",
            "Name": "box-a",
            "NetIO": "0B / 0B",
            "PIDs": "3",
        },
        {"CPUPerc": "0.00%", "MemUsage": "12MB / 1GB", "Name": "/box-b"},
    )
)


def test_podman_stats_are_a_json_array() -> None:
    assert parse_stats(PODMAN_STATS) == {
        "tui-app-j-master-replica-0-1a2b3c4d": (53.75, 483_300),
        # A container that has not been measured yet has no CPU figure: 0, not an error.
        "tui-app-j-worker-replica-0-1a2b3c4d": (0.0, int(1.5 * 1024**3)),
    }


def test_docker_stats_are_json_lines() -> None:
    assert parse_stats(DOCKER_STATS) == {
        "box-a": (101.25, int(24.5 * 1024**2)),
        "box-b": (0.0, 12_000_000),  # docker's leading slash is not part of the name
    }


@pytest.mark.parametrize(
    "text",
    ["", "[]", "Error: no container named x", "[{]", '{"no": "name"}', "[1, 2]"],
)
def test_stats_that_say_nothing_read_as_nothing(text: str) -> None:
    assert parse_stats(text) == {}


def test_a_bad_line_among_docker_lines_costs_only_itself() -> None:
    text = DOCKER_STATS.replace("\n", "\nnot json\n")
    assert set(parse_stats(text)) == {"box-a", "box-b"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("516.1kB", 516_100),
        ("483.3kB", 483_300),
        ("12MB", 12_000_000),
        ("25.28GB", 25_280_000_000),
        ("1.5GiB", int(1.5 * 1024**3)),
        ("24.5MiB", int(24.5 * 1024**2)),
        ("2KiB", 2048),
        ("0B", 0),
        ("7B", 7),
        ("42", 42),
        (" 3 MB ", 3_000_000),
        ("1TB", 10**12),
        ("", 0),
        ("--", 0),
        (".", 0),
        ("n/a", 0),
    ],
)
def test_parse_size(text: str, expected: int) -> None:
    assert parse_size(text) == expected


# -- image references ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "image",
    [
        "busybox",
        "localhost/trainer:latest",
        "localhost:5000/team/trainer:1",
        "gcr.io/my-project/trainer:v1",
        "us-docker.pkg.dev/p/repo/img:2.11-gpu",
        "gcr.io/p/img@sha256:" + "a" * 64,
        "gcr.io/p/img:v1@sha256:" + "0" * 64,
        "localhost:1/nope:1",
    ],
)
def test_image_references_pass(image: str) -> None:
    assert image_problem(image) is None


@pytest.mark.parametrize(
    "image",
    [
        "--evil",
        "-v/:/host",
        "a b",
        "img\n",
        "img\x00",
        "img;rm -rf /",
        "img:tag:more",
        "/abs/path",
        "gcr.io/p/img@sha256:short",
        "gcr.io/p/img:" + "t" * 129,
        "x" * 513,
    ],
)
def test_anything_else_is_refused_before_it_reaches_a_command_line(image: str) -> None:
    problem = image_problem(image)
    assert problem, image
    if len(image) <= 512:
        assert "is not an image reference" in problem and "[REGISTRY[:PORT]/]NAME" in problem


def test_an_empty_image_is_named_as_empty() -> None:
    assert image_problem("") == "An image reference is empty."
    assert image_problem("x" * 513) == "An image reference has at most 512 characters."


# -- the run command ---------------------------------------------------------------------------


def _run(engine: Engine, **overrides: Any) -> list[str]:
    kwargs: dict[str, Any] = {
        "name": "tui-app-j-master-replica-0-1a2b3c4d",
        "image": "localhost/trainer:1",
        "env_names": ["TF_CONFIG", "CLOUD_ML_JOB_ID", "GOOGLE_OAUTH_ACCESS_TOKEN"],
        "labels": {"tui-app.service": "1a2b3c4d", "tui-app.job": "p/j"},
        "mounts": [
            Mount("/state/jobs/p/j/master-replica-0/hypertune", "/tmp/hypertune"),
            Mount("/state/ca.pem", "/state/ca.pem", read_only=True),
        ],
        "memory_bytes": 15 * 1024**3,
        "args": ["--steps", "10", "--job-dir", "gs://b/out"],
    }
    kwargs.update(overrides)
    return run_command(engine, **kwargs)


def test_the_run_command_in_full() -> None:
    assert _run(PODMAN) == [
        "/usr/bin/podman", "run", "--name", "tui-app-j-master-replica-0-1a2b3c4d",
        "--network", "host", "--pull", "never", "--init",
        "--label", "tui-app.service=1a2b3c4d", "--label", "tui-app.job=p/j",
        "--env", "TF_CONFIG", "--env", "CLOUD_ML_JOB_ID", "--env", "GOOGLE_OAUTH_ACCESS_TOKEN",
        "--volume", "/state/jobs/p/j/master-replica-0/hypertune:/tmp/hypertune",
        "--volume", "/state/ca.pem:/state/ca.pem:ro",
        "--memory", "15360m",
        "localhost/trainer:1", "--steps", "10", "--job-dir", "gs://b/out",
    ]  # fmt: skip


def test_environment_goes_by_name_only() -> None:
    """``--env NAME``: the engine copies the value from its own environment, so a replica's
    token never shows in ``ps``."""
    cmd = _run(PODMAN)
    names = [cmd[i + 1] for i, arg in enumerate(cmd) if arg == "--env"]
    assert names == ["TF_CONFIG", "CLOUD_ML_JOB_ID", "GOOGLE_OAUTH_ACCESS_TOKEN"]
    assert not any("=" in n for n in names)
    assert not any(arg.startswith(("--env=", "-e")) for arg in cmd)


def test_the_users_run_args_come_after_ours_and_before_the_image() -> None:
    engine = Engine(PODMAN.argv, "podman", "4.3.1", ("--memory", "64m", "--runtime", "runc"))
    cmd = _run(engine)
    image = cmd.index("localhost/trainer:1")
    assert cmd[image - 4 : image] == ["--memory", "64m", "--runtime", "runc"]
    ours = cmd.index("--memory")
    assert cmd[ours + 1] == "15360m" and ours < image - 4  # the last --memory wins


def test_global_options_stay_before_run() -> None:
    engine = Engine(("/usr/bin/podman", "--runtime", "runc"), "podman", "4.3.1")
    assert _run(engine)[:4] == ["/usr/bin/podman", "--runtime", "runc", "run"]


def test_an_entrypoint_replaces_the_images_and_its_args_follow_the_image() -> None:
    cmd = _run(PODMAN, entrypoint="python3", args=["-m", "trainer.task", "--steps", "3"])
    image = cmd.index("localhost/trainer:1")
    assert cmd[image - 2 : image] == ["--entrypoint", "python3"]
    assert cmd[image + 1 :] == ["-m", "trainer.task", "--steps", "3"]


def test_no_memory_no_mounts_no_gpus_no_entrypoint() -> None:
    cmd = _run(DOCKER, mounts=[], memory_bytes=None, labels={}, env_names=[], args=[])
    assert cmd == [
        "/usr/bin/docker", "run", "--name", "tui-app-j-master-replica-0-1a2b3c4d",
        "--network", "host", "--pull", "never", "--init", "localhost/trainer:1",
    ]  # fmt: skip


def test_args_that_look_like_options_stay_after_the_image() -> None:
    """A job's args are the container's: after the image the engine reads no options."""
    cmd = _run(PODMAN, args=["--privileged", "-v", "/:/host"])
    assert cmd[-4:] == ["localhost/trainer:1", "--privileged", "-v", "/:/host"]
    assert cmd.index("--privileged") > cmd.index("localhost/trainer:1")


def test_gpus_for_each_engine() -> None:
    assert gpu_options(PODMAN, []) == [] == gpu_options(DOCKER, ())
    # podman: CDI devices (nvidia-ctk cdi generate); docker: the NVIDIA toolkit's --gpus.
    assert gpu_options(PODMAN, ["0", "2"]) == [
        "--device", "nvidia.com/gpu=0", "--device", "nvidia.com/gpu=2",
    ]  # fmt: skip
    assert gpu_options(DOCKER, ["0", "2"]) == ["--gpus", '"device=0,2"']
    assert gpu_options(DOCKER, ["1"]) == ["--gpus", '"device=1"']
    cmd = _run(DOCKER, gpus=("3",))
    assert cmd[cmd.index("--gpus") + 1] == '"device=3"'
    assert cmd.index("--gpus") < cmd.index("localhost/trainer:1")


# -- names ----------------------------------------------------------------------------------------


def test_container_names() -> None:
    assert (
        container_name("1a2b3c4d", "mnist_20261122_083000", None, "master-replica-0")
        == "tui-app-mnist_20261122_083000-master-replica-0-1a2b3c4d"
    )
    assert (
        container_name("1a2b3c4d", "mnist", "3", "worker-replica-1")
        == "tui-app-mnist-t3-worker-replica-1-1a2b3c4d"
    )
    odd = container_name("1a2b3c4d", "a b/c:d", None, "ps-replica-0")
    assert odd == "tui-app-a_b_c_d-ps-replica-0-1a2b3c4d"
    assert len(container_name("1a2b3c4d", "j" * 400, "12", "evaluator-replica-0")) == 250


# -- discovery ------------------------------------------------------------------------------------


def _fake(folder: Path, name: str, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def test_an_engine_counts_only_when_it_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    # docker's client without its daemon: on PATH, but it does not count.
    _fake(bin_dir, "docker", 'echo "Cannot connect to the Docker daemon" >&2; exit 1\n')
    monkeypatch.setenv("PATH", str(bin_dir))
    status = find_engine()
    assert status.engine is None
    assert "Cannot connect to the Docker daemon" in status.problem
    assert status.problem.endswith(INSTALL_HINT)
    # podman that answers comes first.
    podman = _fake(bin_dir, "podman", 'test "$1" = version && echo 4.9.9\n')
    status = find_engine(run_args=["--memory", "1g"])
    assert status.engine == Engine((str(podman),), "podman", "4.9.9", ("--memory", "1g"))
    assert status.as_json() == {
        "name": "podman",
        "version": "4.9.9",
        "command": str(podman),
        "runArgs": ["--memory", "1g"],
    }


def test_a_named_engine_keeps_its_global_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    podman = _fake(tmp_path, "podman", 'test "$3" = version && echo 4.3.1\n')
    monkeypatch.setenv("PATH", str(tmp_path))
    status = find_engine("podman --runtime runc")
    assert status.engine == Engine((str(podman), "--runtime", "runc"), "podman", "4.3.1")
    assert status.engine.label == "podman 4.3.1 (--runtime runc)"


@pytest.mark.parametrize(
    ("named", "words"),
    [
        ("no-such-engine", ["'no-such-engine' (--container-engine, $TUI_APP_", "is not on PATH"]),
        ("'unclosed", ["cannot be read"]),
    ],
)
def test_a_named_engine_that_cannot_run_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, named: str, words: list[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    status = find_engine(named)
    assert status.engine is None
    assert all(w in status.problem for w in words), status.problem
    assert status.as_json() == {"problem": status.problem}


def test_a_named_engine_that_does_not_answer_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake(tmp_path, "docker", 'echo "permission denied" >&2; exit 1\n')
    monkeypatch.setenv("PATH", str(tmp_path))
    status = find_engine("docker")
    assert status.engine is None
    assert "permission denied" in status.problem and status.problem.endswith(INSTALL_HINT)


def test_engine_and_run_args_from_flags_else_the_environment() -> None:
    env = {"TUI_APP_CONTAINER_ENGINE": "docker", "TUI_APP_CONTAINER_RUN_ARGS": "--cpus 2"}
    assert engine_from_env(None, None, env) == ("docker", ("--cpus", "2"))
    assert engine_from_env("podman", "--memory '1 g'", env) == ("podman", ("--memory", "1 g"))
    assert engine_from_env(None, None, {}) == (None, ())
    with pytest.raises(ValueError):
        engine_from_env(None, "--label 'open", {})


# -- engine_label ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "engine",
    [
        PODMAN,
        Engine(("/usr/bin/podman", "--runtime", "runc"), "podman", "4.3.1"),
        Engine(("/usr/bin/docker",), "docker", "27.3.1", ("--cpus", "2")),
        Engine(("/usr/bin/podman", "--runtime", "runc"), "podman", "4.3.1", ("--memory", "64m")),
    ],
)
def test_the_label_the_user_sees_is_the_services_own(engine: Engine) -> None:
    """``service status`` and the TUI read /healthz; the service names its engine the same."""
    assert engine_label(engine.as_json()) == engine.label
    assert engine_found(engine.as_json())


def test_engine_labels() -> None:
    assert engine_label({"name": "podman", "version": "4.3.1", "command": "/usr/bin/podman"}) == (
        "podman 4.3.1"
    )
    assert engine_label(
        {
            "name": "podman",
            "version": "4.3.1",
            "command": "/usr/bin/podman --runtime runc",
            "runArgs": ["--memory", "64m"],
        }
    ) == ("podman 4.3.1 (--runtime runc --memory 64m)")
    assert engine_label({"problem": "No container engine answers."}) == (
        "none: No container engine answers."
    )
    assert engine_label({"name": ""}) == "none: no container engine found"
    assert not engine_found({"problem": "x"}) and not engine_found(None) and not engine_found({})
    unknowns: tuple[dict[str, Any] | None, ...] = (None, {})
    for unknown in unknowns:
        assert engine_label(unknown).startswith("unknown (the service did not say")


# -- which image each replica runs -------------------------------------------------------------


WITH_EVALUATOR = {**CLUSTER, "evaluatorType": "standard", "evaluatorCount": "1"}


def test_every_role_runs_the_masters_image_unless_it_names_its_own() -> None:
    ti = {**WITH_EVALUATOR, "masterConfig": {"imageUri": "gcr.io/p/chief:1"}}
    assert {replica_image(ti, role) for role in Role} == {"gcr.io/p/chief:1"}
    assert job_images(ti) == ["gcr.io/p/chief:1"]
    ti["parameterServerConfig"] = {"imageUri": "gcr.io/p/ps:1"}
    ti["evaluatorConfig"] = {"imageUri": "gcr.io/p/chief:1", "containerArgs": ["--eval"]}
    ti["workerConfig"] = {"acceleratorConfig": {"count": "1", "type": "NVIDIA_TESLA_T4"}}
    assert replica_image(ti, Role.WORKER) == "gcr.io/p/chief:1"  # a config without an image
    assert replica_image(ti, Role.PARAMETER_SERVER) == "gcr.io/p/ps:1"
    assert replica_image(ti, Role.EVALUATOR) == "gcr.io/p/chief:1"
    # Distinct, in cluster order (master, workers, ps, evaluators).
    assert job_images(ti) == ["gcr.io/p/chief:1", "gcr.io/p/ps:1"]
    ti["workerConfig"] = {"imageUri": "gcr.io/p/worker:1"}
    assert job_images(ti) == ["gcr.io/p/chief:1", "gcr.io/p/worker:1", "gcr.io/p/ps:1"]


def test_a_package_job_runs_no_image() -> None:
    ti: dict[str, Any] = {
        **WITH_EVALUATOR,
        "pythonModule": "trainer.task",
        "packageUris": ["gs://b/t"],
    }
    assert job_images(ti) == []
    assert all(replica_image(ti, role) is None for role in Role)
    # A role image without a master image makes no container job (validation refuses it).
    ti["workerConfig"] = {"imageUri": "gcr.io/p/worker:1"}
    assert replica_image(ti, Role.WORKER) is None and job_images(ti) == []


def test_a_basic_container_job_has_one_image() -> None:
    ti = {"scaleTier": "BASIC", "masterConfig": {"imageUri": "localhost/t:1"}}
    assert job_images(ti) == ["localhost/t:1"]
    # Roles the tier has none of still answer by the rule (the describe view asks per role).
    assert replica_image(ti, Role.WORKER) == "localhost/t:1"
