"""What a Ray node needs to build a job's runtime environment itself (ray_node_env): the plan on
one of its own interpreters, the files the layer came from in order, the service's pip
settings over the node's own."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tui_app.local.environments import runtime_envs
from tui_app.local.environments.packages import input_files
from tui_app.local.execution.ray_node_env import NodeEnvError, build, node_plan

OWN = f"{sys.version_info[0]}.{sys.version_info[1]}"
MANIFEST = {
    "runtime": "2.11",
    "python": "3.7",
    "variant": "cpu",
    "requirements": ["tensorflow-cpu==2.11.*", "pandas==1.3.5"],
    "exact": True,
    "env": {"TF_USE_LEGACY_KERAS": "1"},
}


def test_the_plan_is_the_services_on_the_nodes_interpreter() -> None:
    plan = node_plan(MANIFEST, pythons={"3.7": "/opt/py37/bin/python", "3.9": "/x/python3.9"})
    assert plan.interpreter == "/opt/py37/bin/python"
    assert (plan.runtime, plan.python, plan.variant, plan.exact) == ("2.11", "3.7", "cpu", True)
    assert plan.requirements == ("tensorflow-cpu==2.11.*", "pandas==1.3.5")
    assert dict(plan.env) == {"TF_USE_LEGACY_KERAS": "1"}
    # The same key as the service's plan: the same folder name on every node.
    same = node_plan(MANIFEST, pythons={"3.7": "/elsewhere/python"})
    assert same.key == plan.key and plan.key.startswith("2.11-py3.7-cpu-")


def test_the_service_python_version_is_the_nodes_own_when_it_has_no_other() -> None:
    plan = node_plan({**MANIFEST, "python": OWN}, pythons={})
    assert plan.interpreter == sys.executable


def test_a_node_without_that_python_says_which_and_how_to_get_it() -> None:
    with pytest.raises(NodeEnvError) as err:
        node_plan({**MANIFEST, "python": "3.5"}, pythons={"3.7": "/opt/py37/bin/python"})
    text = str(err.value)
    assert "no Python 3.5" in text and "runtime 2.11" in text
    assert f"it has 3.7, {OWN}" in text and "pyenv install 3.5" in text


def test_a_layer_name_with_a_path_in_it_is_refused(tmp_path: Path) -> None:
    with pytest.raises(NodeEnvError, match="not a layer name"):
        build(tmp_path, {**MANIFEST, "python": OWN}, "../escape", [], {}, print)


def test_input_files_come_in_package_order(tmp_path: Path) -> None:
    for i, name in [(10, "c.whl"), (2, "b.tar.gz"), (0, "a.tar.gz")]:
        (tmp_path / str(i)).mkdir()
        (tmp_path / str(i) / name).write_text(name)
    (tmp_path / "stray.txt").write_text("")
    assert [p.name for p in input_files(tmp_path)] == ["a.tar.gz", "b.tar.gz", "c.whl"]
    assert input_files(tmp_path / "missing") == []


def test_the_services_pip_settings_win_but_not_over_the_nodes_cache(tmp_path: Path) -> None:
    env = runtime_envs.pip_env(
        tmp_path,
        {
            "PIP_INDEX_URL": "https://mirror.example/simple",
            "PIP_CACHE_DIR": "/service/cache",
            "PIP_TARGET": "/service/target",
            "HOME": "/service/home",
        },
    )
    assert env["PIP_INDEX_URL"] == "https://mirror.example/simple"
    assert env["PIP_CACHE_DIR"] == str(tmp_path / "pip-cache")
    assert "PIP_TARGET" not in env and env.get("HOME") != "/service/home"
