"""Container images for the container tests, built on this machine: no registry is involved.

* ``tiny``: busybox-static's ``/bin/busybox`` with every applet linked into ``/bin`` (a static
  shell, 2 MB), for plumbing: exit codes, memory kills, cancel, pulls.
* ``trainer``: examples/trainer on a Debian root with ``python3``. The root is made once with
  ``debootstrap --variant=minbase --include=python3 bookworm`` (about 45 s and 260 MB, from
  Debian's own mirror), kept as a tarball under the cache dir and imported into the engine's
  store as ``BASE_IMAGE``; both survive between test runs where the machine keeps them. The
  trainer layer on top is tagged with a hash of the checkout's examples/trainer, so every session
  runs the trainer it has, and a changed trainer costs one ``build`` of a COPY (under a second).

Builds run under an exclusive ``fcntl`` lock on a file in the cache dir: pytest-xdist's workers
(and the CI's warm-up beside the test run) never build at once, and the second to come finds the
images made. ``python3 -m tests.support.container_images`` builds everything ahead of the tests;
it needs nothing but the standard library (``.ci/run`` runs it before the venv exists).

Whether the tests run at all: without an engine (or busybox-static, or debootstrap for a first
build) they skip, naming what to install, unless ``TUI_APP_REQUIRE_CONTAINERS=1`` (set by CI):
then they fail, so a CI machine that lost its engine cannot pass by skipping.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tui_app.local.environments.containers import ENGINE_ENV, Engine, find_engine

REPO = Path(__file__).resolve().parents[2]
TRAINER_PACKAGE = REPO / "examples" / "trainer" / "trainer"

REQUIRE_ENV = "TUI_APP_REQUIRE_CONTAINERS"
"""``1``: a container test that cannot run fails instead of skipping (CI sets it)."""
CACHE_ENV = "TUI_APP_TEST_CACHE"
"""Where the Debian root's tarball and the build lock live (default ~/.cache/tui-app-tests)."""
MIRROR_ENV = "TUI_APP_TEST_DEBIAN_MIRROR"

DEFAULT_MIRROR = "http://deb.debian.org/debian"
SUITE = "bookworm"
BASE_IMAGE = f"localhost/tui-app-test-python:{SUITE}"
TRAINER_REPO = "localhost/tui-app-test-trainer"
TINY_REPO = "localhost/tui-app-test-tiny"
BUSYBOX = Path("/bin/busybox")

INSTALL = "apt-get install podman runc debootstrap busybox-static"
DEBOOTSTRAP_TIMEOUT = 900.0
BUILD_TIMEOUT = 300.0

_ORIGINAL_ENV = dict(os.environ)
"""The environment before any test fixture changed it (see ``engine_env``)."""


class ImagesUnavailable(Exception):
    """A container image cannot be made on this machine; the message says what to install."""


def required() -> bool:
    return os.environ.get(REQUIRE_ENV, "") == "1"


def cache_dir() -> Path:
    given = os.environ.get(CACHE_ENV)
    path = Path(given) if given else Path.home() / ".cache" / "tui-app-tests"
    path.mkdir(parents=True, exist_ok=True)
    return path


def engine_env() -> dict[str, str]:
    """The environment for an engine and for a service that runs containers.

    The tests point ``XDG_*`` into their tmp dirs; rootless podman keeps its image store and its
    ``containers.conf`` there, so it would not see the images built here. Rootful engines ignore
    them, and the service has its own ``--state-dir`` either way.
    """
    env = dict(os.environ)
    if os.geteuid() != 0:
        for key in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR"):
            if key in _ORIGINAL_ENV:
                env[key] = _ORIGINAL_ENV[key]
            else:
                env.pop(key, None)
    return env


@contextlib.contextmanager
def build_lock() -> Iterator[None]:
    """Held while images are checked or built: one builder per machine at a time."""
    with (cache_dir() / "build.lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _run(cmd: list[str], timeout: float = BUILD_TIMEOUT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        env=engine_env(),
        check=False,
    )


def _checked(cmd: list[str], timeout: float = BUILD_TIMEOUT) -> str:
    done = _run(cmd, timeout)
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-15:])
        raise ImagesUnavailable(f"`{' '.join(cmd)}` failed ({done.returncode}):\n{tail}")
    return done.stdout


def find_test_engine() -> Engine:
    """The engine the services started by the tests will find (the same rule and variable)."""
    status = find_engine(os.environ.get(ENGINE_ENV) or None)
    if status.engine is None:
        raise ImagesUnavailable(
            f"{status.problem} On Debian these tests need `{INSTALL}`, and "
            "`default_ulimits = []` under [containers] in /etc/containers/containers.conf "
            "where the host cannot raise rlimits."
        )
    return status.engine


def present(engine: Engine, image: str) -> bool:
    return _run(engine.command("image", "inspect", "--format", "{{.Id}}", image)).returncode == 0


# -- the tiny image ----------------------------------------------------------------------------


def _tiny_tar(busybox: Path) -> bytes:
    """A root file system of busybox and a link in /bin for each of its applets."""
    applets = subprocess.run(
        [str(busybox), "--list"], capture_output=True, text=True, check=True, timeout=30
    ).stdout.split()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for folder in ("bin", "tmp", "etc"):
            info = tarfile.TarInfo(folder)
            info.type, info.mode = tarfile.DIRTYPE, 0o1777 if folder == "tmp" else 0o755
            tar.addfile(info)
        tar.add(str(busybox), arcname="bin/busybox")
        for applet in sorted(set(applets) - {"busybox"}):
            link = tarfile.TarInfo(f"bin/{applet}")
            link.type, link.linkname = tarfile.SYMTYPE, "busybox"
            tar.addfile(link)
    return buf.getvalue()


def tiny_image(engine: Engine) -> str:
    """``localhost/tui-app-test-tiny:<hash of busybox>``, imported now if it is not there."""
    if not BUSYBOX.exists():
        raise ImagesUnavailable(f"{BUSYBOX} is missing: `apt-get install busybox-static`")
    digest = hashlib.sha256(BUSYBOX.read_bytes()).hexdigest()[:12]
    image = f"{TINY_REPO}:{digest}"
    with build_lock():
        if present(engine, image):
            return image
        with tempfile.TemporaryDirectory(dir=cache_dir()) as tmp:
            tar = Path(tmp) / "tiny.tar"
            tar.write_bytes(_tiny_tar(BUSYBOX))
            _checked(engine.command("import", "--change", 'CMD ["/bin/sh"]', str(tar), image))
    return image


# -- the Python base and the trainer -----------------------------------------------------------


def _debootstrap(tarball: Path) -> None:
    """Make the Debian root with python3 and keep it as ``tarball`` (atomically)."""
    debootstrap = shutil.which("debootstrap")
    if debootstrap is None:
        raise ImagesUnavailable("debootstrap is missing: `apt-get install debootstrap`")
    if os.geteuid() != 0:
        raise ImagesUnavailable(
            f"making the Python image's root needs debootstrap as root (or {tarball} or the "
            f"image {BASE_IMAGE} from an earlier run)"
        )
    mirror = os.environ.get(MIRROR_ENV) or DEFAULT_MIRROR
    with tempfile.TemporaryDirectory(dir=tarball.parent) as tmp:
        root = Path(tmp) / "root"
        cmd = [debootstrap, "--variant=minbase", "--include=python3", SUITE, str(root), mirror]
        _checked(cmd, DEBOOTSTRAP_TIMEOUT)
        # Nothing in it the tests need; a smaller image imports faster.
        for junk in ("var/cache/apt/archives", "usr/share/doc", "usr/share/man"):
            shutil.rmtree(root / junk, ignore_errors=True)
        partial = Path(tmp) / "root.tar"
        _checked(["tar", "-C", str(root), "-cf", str(partial), "."])
        partial.replace(tarball)


def base_image(engine: Engine) -> str:
    """``BASE_IMAGE`` in the engine's store: already there, imported from the cached tarball,
    or made by debootstrap first. Call with ``build_lock`` held."""
    if present(engine, BASE_IMAGE):
        return BASE_IMAGE
    tarball = cache_dir() / f"debian-{SUITE}-python3.tar"
    if not tarball.exists():
        _debootstrap(tarball)
    _checked(engine.command("import", str(tarball), BASE_IMAGE))
    return BASE_IMAGE


CONTAINERFILE = """\
FROM {base}
COPY trainer /app/trainer
WORKDIR /app
ENTRYPOINT ["python3", "-m", "trainer.task"]
"""


def trainer_digest() -> str:
    """A hash of examples/trainer's package and of how it is built: the trainer image's tag."""
    h = hashlib.sha256(CONTAINERFILE.format(base=BASE_IMAGE).encode())
    for path in sorted(TRAINER_PACKAGE.rglob("*.py")):
        h.update(str(path.relative_to(TRAINER_PACKAGE)).encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()[:12]


def trainer_image(engine: Engine) -> str:
    """``localhost/tui-app-test-trainer:<hash of examples/trainer>``, built now if needed."""
    image = f"{TRAINER_REPO}:{trainer_digest()}"
    with build_lock():
        if present(engine, image):
            return image
        base = base_image(engine)
        with tempfile.TemporaryDirectory(dir=cache_dir()) as tmp:
            context = Path(tmp)
            shutil.copytree(
                TRAINER_PACKAGE,
                context / "trainer",
                ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
            )
            (context / "Containerfile").write_text(CONTAINERFILE.format(base=base))
            file = str(context / "Containerfile")
            _checked(engine.command("build", "-t", image, "-f", file, str(context)))
    return image


@dataclass(frozen=True)
class Built:
    engine: Engine
    tiny: str
    trainer: str


def main() -> int:
    """Build every image now (CI runs this before the tests, beside the venv's install)."""
    start = time.monotonic()
    try:
        engine = find_test_engine()
        built = Built(engine, tiny_image(engine), trainer_image(engine))
    except ImagesUnavailable as exc:
        print(f"container test images: {exc}", file=sys.stderr)
        return 1
    took = time.monotonic() - start
    print(f"container test images ready in {took:.0f} s with {engine.label}: ", end="")
    print(f"{built.tiny}, {built.trainer}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
