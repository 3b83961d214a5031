"""Shared fixtures: a real local service on a free port, the sample trainer as an sdist, and the
container tests' engine and images (``tests/support/container_images.py``).

Tests never touch the developer's state: every service gets its own state dir under tmp_path,
and XDG dirs point into the test's tmp dir too.
"""

from __future__ import annotations

import asyncio
import gc
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest
from hypothesis import HealthCheck, settings

from tests.support import container_images
from tests.support.live_service import LiveService, free_port
from tui_app.entry.demo import build_trainer_sdist
from tui_app.local.environments import packages
from tui_app.local.environments.containers import Engine
from tui_app.local.paths import StateDir

REPO = Path(__file__).resolve().parent.parent
TRAINER_SRC = REPO / "examples" / "trainer"

# The suite starts hundreds of Python processes that import tui_app (a service per test module,
# CLI runs, a supervisor per replica). Where PYTHONDONTWRITEBYTECODE is set (CI's machines set
# it), none of them may cache its bytecode, and each compiles every module it imports again:
# 0.4 s of the 1.3 s of CPU a service takes to start. The tests' processes may cache it.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

# Property tests check what is generated, not how fast: on a loaded 2-core CI machine a 200 ms
# per-example deadline failed pure-logic tests (test_describe) for no fault of theirs.
settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")


# -- one Ray cluster for the session (tests/support/ray_cluster.py) ----------------------------

RAY_DIR_ENV = "TUI_APP_TEST_RAY_DIR"
RAY_NODES = 3
RAY_TESTS = "tests/service/test_ray"
"""Where the tests that use the cluster live (every one requests ``ray_address``)."""
_ray_cluster: subprocess.Popen[bytes] | None = None
_ray_pending: set[str] | None = None
"""In the process that started the cluster: the Ray tests not yet torn down (None until the
collection is known). The cluster stops when the last one is: idle, its nodes still cost
about 4 s of CPU a minute, which the rest of the suite needs."""


def _is_ray_test(nodeid: str) -> bool:
    return nodeid.startswith(RAY_TESTS)


def _runs_ray_tests(config: pytest.Config) -> bool:
    """Whether the session's paths include a Ray test (``tests/service/test_ray_*.py``)."""
    if importlib.util.find_spec("ray") is None:
        return False
    ray_tests = REPO / "tests" / "service"
    for arg in config.args or [str(REPO)]:
        path = Path(arg.split("::", 1)[0]).resolve()
        if path.name.startswith("test_ray") or ray_tests.is_relative_to(path):
            return True
    return False


def pytest_configure(config: pytest.Config) -> None:
    """Start the session's Ray cluster in the background while tests are collected, once: in
    the controller (xdist's workers inherit its folder through the environment) or in the one
    process of a run without workers."""
    global _ray_cluster
    if hasattr(config, "workerinput") or RAY_DIR_ENV in os.environ:
        return
    if not _runs_ray_tests(config):
        return
    folder = Path(tempfile.mkdtemp(prefix="tui-app-ray-"))
    os.environ[RAY_DIR_ENV] = str(folder)
    log = open(folder / "cluster.log", "ab")  # noqa: SIM115 - the child holds it
    _ray_cluster = subprocess.Popen(
        [sys.executable, "-m", "tests.support.ray_cluster", str(folder), str(RAY_NODES)],
        cwd=REPO,
        stdout=log,
        stderr=log,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The Ray tests first (the order is otherwise kept): they are done early, and the
    cluster with them (``pytest_runtest_logreport``). Every xdist worker sorts alike."""
    items[:] = sorted(items, key=lambda item: not _is_ray_test(item.nodeid))


def _ray_tests_are(nodeids: list[str]) -> None:
    global _ray_pending
    if _ray_cluster is not None and _ray_pending is None:
        _ray_pending = {nodeid for nodeid in nodeids if _is_ray_test(nodeid)}
        if not _ray_pending:
            _stop_ray_cluster(wait=False)


def pytest_collection_finish(session: pytest.Session) -> None:
    """A run without workers: its own collection says which Ray tests there are."""
    _ray_tests_are([item.nodeid for item in session.items])


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: object, ids: list[str]) -> None:
    """xdist's controller: a worker's collection (every worker collects the same tests)."""
    _ray_tests_are(ids)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """The last Ray test torn down (its module's services stopped with it): stop the cluster.
    A test that never reports its teardown (a worker that crashed) keeps it to the end."""
    if _ray_pending is None or report.when != "teardown" or report.nodeid not in _ray_pending:
        return
    _ray_pending.discard(report.nodeid)
    if not _ray_pending:
        _stop_ray_cluster(wait=False)


def _stop_ray_cluster(wait: bool) -> None:
    """Ask the cluster to stop (its script stops every node); with ``wait``, wait for it."""
    if _ray_cluster is None:
        return
    if _ray_cluster.poll() is None:
        _ray_cluster.send_signal(signal.SIGTERM)
    if not wait:
        return
    try:
        _ray_cluster.wait(60)
    except subprocess.TimeoutExpired:
        os.killpg(_ray_cluster.pid, signal.SIGKILL)
        _ray_cluster.wait()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """One collection now, then freeze what it leaves, before pytest's own end-of-run passes.

    pytest (8.4) runs ``gc.collect()`` five times as it unconfigures, to report exceptions
    raised by finalizers. Over a worker's heap after some 900 tests that took 5-8 s, and
    execnet interrupts a pytest-xdist worker still running 5 s after it was told to end: its
    SIGINT landed in hypothesis' gc callback and was reported as an unraisable
    KeyboardInterrupt (seen with ``EXECNET_DEBUG=1`` and py-spy). This runs before the worker
    reports that it finished, and it runs every pending finalizer as pytest's passes would
    (what they raise is still reported); what is left is alive, and the passes skip it frozen.
    """
    gc.collect()
    gc.freeze()


def pytest_unconfigure(config: pytest.Config) -> None:
    global _ray_cluster
    if _ray_cluster is None:
        return
    _stop_ray_cluster(wait=True)
    _ray_cluster = None
    # The nodes' session files, the copies and builds of the node that uses none of ours.
    shutil.rmtree(os.environ.pop(RAY_DIR_ENV, ""), ignore_errors=True)


@pytest.fixture(scope="session")
def ray_address() -> str:
    """The head node's address of the session's Ray cluster, once every node has joined."""
    pytest.importorskip("ray", reason="the Ray tests need the ray extra: pip install -e '.[dev]'")
    given = os.environ.get(RAY_DIR_ENV)
    if not given:
        pytest.fail("No Ray cluster was started for this session (tests/conftest.py)")
    folder = Path(given)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        if (folder / "address").exists():
            return (folder / "address").read_text().strip()
        if (folder / "error").exists():
            pytest.fail(f"The Ray cluster did not start: {(folder / 'error').read_text()}")
        time.sleep(0.2)
    log = (folder / "cluster.log").read_text(errors="replace")[-2000:]
    pytest.fail(f"The Ray cluster did not start within 240 s:\n{log}")


@pytest.fixture(scope="session")
def ray_remote_root(ray_address: str) -> Path:
    """The root of the session cluster's last node, which uses none of the service's folders
    (tests/support/ray_cluster.py): what it built and copied lies there."""
    return Path(os.environ[RAY_DIR_ENV]) / f"node-127.0.0.{1 + RAY_NODES}"


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keep the developer's settings and data dirs out of every test."""
    home = tmp_path_factory.mktemp("xdg")
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    monkeypatch.delenv("TUI_APP_STATE_DIR", raising=False)
    monkeypatch.setenv("TZ", "UTC")


_INSTALLED_SEEDS: list[Path] = []
"""Installed package folders (``packages/<key>``) every new service state dir starts with."""


def _install_seed(sdist: Path, root: Path) -> Path:
    """Install ``sdist`` as a service would (the product's own fetch and install), once."""
    state = StateDir(root)
    fetched = packages.fetch(state, [str(sdist)], root / "fetched")
    return asyncio.run(packages.install(state, fetched, lambda _line: None))


def _seed_state(state_dir: Path) -> None:
    """Give a new state dir the session's installed trainer, hard-linked (cheap, and an install
    is never written to again). A pip install costs about 3 s of CPU and every module's service
    (on each xdist worker) would make its own: with the seed, its jobs start as a resubmitted
    job does, "Using cached packages". Jobs with other packages install as before, and
    tests/service/test_packages.py checks installing itself."""
    for installed in _INSTALLED_SEEDS:
        target = state_dir / "packages" / installed.name
        if target.exists():
            continue
        try:
            shutil.copytree(installed, target, copy_function=os.link)
        except (shutil.Error, OSError):  # another filesystem (a test's own small tmpfs)
            shutil.rmtree(target, ignore_errors=True)  # its jobs install, as a user's would


@pytest.fixture(scope="session")
def trainer_sdist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/trainer built once into an sdist, as gcloud's --package-path would, and
    installed once for ``_seed_state``."""
    sdist = build_trainer_sdist(tmp_path_factory.mktemp("trainer-build"))
    _INSTALLED_SEEDS.append(_install_seed(sdist, tmp_path_factory.mktemp("trainer-installed")))
    return sdist


def _unavailable(exc: container_images.ImagesUnavailable) -> NoReturn:
    """Skip a container test that cannot run here, naming the fix; fail it where CI says
    containers are required (``TUI_APP_REQUIRE_CONTAINERS=1``)."""
    reason = f"container tests cannot run: {exc}"
    if container_images.required():
        pytest.fail(f"{reason} ({container_images.REQUIRE_ENV}=1)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def container_engine() -> Engine:
    """The engine the container tests' services will find (podman or docker)."""
    try:
        return container_images.find_test_engine()
    except container_images.ImagesUnavailable as exc:
        _unavailable(exc)


@pytest.fixture(scope="session")
def tiny_image(container_engine: Engine) -> str:
    """A busybox image (a static shell) in the engine's store, for plumbing tests."""
    try:
        return container_images.tiny_image(container_engine)
    except container_images.ImagesUnavailable as exc:
        _unavailable(exc)


@pytest.fixture(scope="session")
def trainer_image(container_engine: Engine) -> str:
    """examples/trainer on a Debian python3 root, in the engine's store (built once per
    machine, the trainer layer once per change of examples/trainer)."""
    try:
        return container_images.trainer_image(container_engine)
    except container_images.ImagesUnavailable as exc:
        _unavailable(exc)


def _start(
    state_dir: Path,
    *extra: str,
    port: int | None = None,
    env: dict[str, str] | None = None,
    seed: bool = True,
) -> LiveService:
    """Run ``tui-app service run`` on ``port`` (a free one by default) and wait until it answers.

    ``env``: the service's whole environment (default: this process's), e.g. pip pointed at
    offline wheels. ``seed``: start a new state dir with the trainer installed
    (``_seed_state``)."""
    port = port or free_port()
    if seed:
        _seed_state(state_dir)
    log = open(state_dir.parent / f"service-{port}.log", "ab")  # noqa: SIM115
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tui_app",
            "service",
            "run",
            "--state-dir",
            str(state_dir),
            "--port",
            str(port),
            "--grace-seconds",
            "2",
            # Tests must not depend on the machine's cores; scheduling tests pass their own.
            *(() if "--slots" in extra else ("--slots", "64")),
            # A crash loop's 1 s doubling to 30 s between restarts, a hundredth here: the tests
            # of the restart limits see every attempt in well under a second.
            *(() if "--restart-backoff-scale" in extra else ("--restart-backoff-scale", "0.01")),
            *extra,
        ],
        stdout=log,
        stderr=log,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        env=env,
    )
    svc = LiveService(
        proc=proc, url=f"http://127.0.0.1:{port}", state_dir=state_dir, no_auth="--no-auth" in extra
    )
    svc.wait_ready()
    return svc


def _stop(svc: LiveService) -> None:
    if svc.proc.poll() is None:
        svc.proc.send_signal(signal.SIGTERM)
        try:
            svc.proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(svc.proc.pid, signal.SIGKILL)
            svc.proc.wait()


def serve(
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    *extra: str,
    env: dict[str, str] | None = None,
) -> Iterator[LiveService]:
    """A module fixture's own service: started (``_start``) with ``extra`` flags and ``env`` in a
    new ``name`` folder, yielded, stopped after the module. Use as ``yield from serve(...)``."""
    svc = _start(tmp_path_factory.mktemp(name) / "state", *extra, env=env)
    yield svc
    _stop(svc)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, trainer_sdist: Path) -> Iterator[LiveService]:
    """A real service (its own process, token auth) shared by one test module."""
    yield from serve(tmp_path_factory, "svc")


@pytest.fixture(scope="module")
def open_service(
    tmp_path_factory: pytest.TempPathFactory, trainer_sdist: Path
) -> Iterator[LiveService]:
    """A real service started with --no-auth (what gcloud's disable_credentials needs)."""
    yield from serve(tmp_path_factory, "svc-open", "--no-auth")


@pytest.fixture(scope="module")
def small_service(
    tmp_path_factory: pytest.TempPathFactory, trainer_sdist: Path
) -> Iterator[LiveService]:
    """A real service with only two replica slots, for scheduling tests."""
    yield from serve(tmp_path_factory, "svc-small", "--slots", "2")


@pytest.fixture
def package_uri(service: LiveService, trainer_sdist: Path) -> str:
    """The sample trainer staged at a gs:// URI of the service."""
    return service.stage(trainer_sdist)


def unique_id(base: str) -> str:
    """A job id nobody else in the session uses."""
    return f"{base}_{time.strftime('%Y%m%d_%H%M%S')}_{os.getpid()}_{time.monotonic_ns() % 10**9}"


@pytest.fixture
def restartable(tmp_path: Path, trainer_sdist: Path) -> Iterator[tuple[list[LiveService], str]]:
    """A service of its own on a fixed port, which the test may kill and start again (the list
    holds every start; the last is stopped), and the sample trainer staged on it."""
    svcs = [_start(tmp_path / "state", port=free_port())]
    uri = svcs[0].stage(trainer_sdist)
    try:
        yield svcs, uri
    finally:
        _stop(svcs[-1])
