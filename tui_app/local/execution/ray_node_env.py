"""A job's runtime environment built on the Ray node that runs its replica.

On the service's machine a job with a ``runtimeVersion`` runs in a layer (``packages``) over a
runtime environment (``runtime_envs``), both virtual environments that name their interpreter
and each other by absolute path: they cannot be shipped as files. A node that does not see the
service's copy (``ray_replica.ReplicaActor.sees``) builds its own, the same way and cached the
same way, under its own root (``ray_node_folders.node_root``):

- the runtime environment from the plan the service's manifest records (runtime, Python,
  variant, requirements), on an interpreter of that Python found on the node
  (``interpreters``): the same folder name, so one build serves every job on the node;
- the layer from the very files the service installed (kept in the layer, ``.inputs``),
  named as the service named it (runtime and package hashes);
- pip runs with the node's own configuration, under the service's ``PIP_*`` settings (its index
  or mirror), and the node's own wheel cache.

Replicas of several jobs (several actor processes) may build on one node at once: a file lock
per environment lets one build and the others use its result. Every folder this makes directly
under the node's root (``locks``, ``runtimes``, ``packages``, ``pip-cache``) is the service's
user's alone (0700, ``ray_node_folders.node_folder``), like the root itself. Nothing here imports
Ray: the actor hands this module the bytes and streams its log lines back.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from tui_app.local.environments import interpreters, packages, runtime_envs
from tui_app.local.execution.ray_node_folders import FILE_MODE, node_folder
from tui_app.local.paths import StateDir, UnsafePathError
from tui_app.model.jobs.runtimes import Plan, python_of


class NodeEnvError(Exception):
    """This node cannot build the environment; the message says why and what to do."""


@contextlib.contextmanager
def _locked(root: Path, name: str) -> Iterator[None]:
    """Hold ``<root>/locks/<name>.lock`` (other processes of this node wait for it)."""
    folder = node_folder(root, "locks")
    fd = os.open(folder / f"{name}.lock", os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
    with open(fd, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def node_plan(manifest: Mapping[str, Any], pythons: Mapping[str, str] | None = None) -> Plan:
    """The service's runtime plan (as its environment's manifest records it) on an interpreter
    of the same Python on this node.

    Raises:
        NodeEnvError: this node has no interpreter of that Python.
    """
    python = str(manifest["python"])
    found = dict(interpreters.find() if pythons is None else pythons)
    own_version, own_path = interpreters.own()
    path = found.get(python) or (own_path if own_version == python else None)
    if path is None:
        have = ", ".join(sorted({*found, own_version}, key=lambda v: python_of(v) or (0, 0)))
        raise NodeEnvError(
            f"This node has no Python {python}, which runtime {manifest['runtime']} runs on "
            f"here (it has {have}; looked in pyenv, uv's Pythons and python3.X on PATH). "
            f"Install it on the node (pyenv install {python}) or name it in "
            f"{interpreters.ENV_VAR}."
        )
    return Plan(
        runtime=str(manifest["runtime"]),
        python=python,
        interpreter=path,
        variant=str(manifest["variant"]),
        requirements=tuple(str(r) for r in manifest["requirements"]),
        exact=bool(manifest["exact"]),
        env=dict(manifest.get("env") or {}),
    )


def build(
    root: Path,
    manifest: Mapping[str, Any],
    layer_name: str,
    inputs: list[Path],
    pip_settings: Mapping[str, str],
    log: Callable[[str], None],
) -> Path:
    """The job's layer on this node (built, or found built): the folder to rewrite the
    service's layer path to. Blocking: it runs pip.

    Raises:
        NodeEnvError, runtime_envs.RuntimeEnvError, packages.PackageError: the reason, with
            pip's last lines where pip failed.
    """
    try:
        target = StateDir(root).package_dir(layer_name)
    except UnsafePathError:
        raise NodeEnvError(f"{layer_name!r} is not a layer name") from None
    plan = node_plan(manifest)
    # Made private here: runtime_envs and packages, which also serve the service's own state dir
    # (0700 already), make them with the usual modes.
    for folder in (
        runtime_envs.root(root),
        runtime_envs.wheel_cache(root),
        StateDir(root).package_cache,
    ):
        node_folder(root, folder.name)
    with _locked(root, f"runtime-{plan.key}"):
        env = asyncio.run(runtime_envs.ensure(root, plan, log, pip_settings))
    with _locked(root, f"layer-{layer_name}"):
        asyncio.run(packages.ensure_layer(root, env, inputs, target, log, pip_settings))
    return target


def manifest_of(layer: Path) -> dict[str, Any] | None:
    """What a node needs to know of the runtime under the service's ``layer``."""
    runtime = runtime_envs.of_layer(layer)
    if runtime is None:
        return None
    data = runtime.describe()
    return {k: data[k] for k in ("runtime", "python", "variant", "requirements", "exact", "env")}


def pip_settings() -> dict[str, str]:
    """The service's ``PIP_*`` settings a node's build takes over its own."""
    return {k: v for k, v in os.environ.items() if runtime_envs.pip_setting(k)}
