"""ml v1 runtime versions, and the plan that honours one on this machine.

On the platform a ``runtimeVersion`` was a machine image: one Python (``pythonVersion``) with
TensorFlow, scikit-learn, XGBoost, pandas and friends preinstalled at fixed versions, so a trainer
declared none of them. The local service rebuilds that image as a virtual environment per
(runtime, Python, CPU or GPU), and this module says what goes into it. Pure: no IO.

The plan, for a runtime, the job's Python and the interpreters the host has (``plan``):

a. an interpreter of the job's Python exists: the runtime's own versions on it (``exact``);
b. none exists: the nearest versions that have wheels for the service's own Python, every
   substitution listed, TensorFlow 2.x keeping Keras 2 (TensorFlow up to 2.15 bundles Keras 2;
   from 2.16 on ``tf-keras`` is added and ``TF_USE_LEGACY_KERAS=1`` set);
c. neither (TensorFlow 1.x has no wheels past Python 3.7): a refusal naming what can run.

Where the table comes from, and how sure each entry is:

- Python per runtime (``RUNTIME_PYTHON``): the ml v1 REST reference's ``pythonVersion`` field
  ("'3.7' is available when runtime_version is set to '1.15' or later; '3.5' from '1.4' to
  '1.14'; '2.7' when '1.15' or earlier"), as copied into Google's generated API clients
  (google-api-php-client-services, ``GoogleCloudMlV1TrainingInput``).
- TensorFlow per runtime: the runtime's number is its TensorFlow minor version (Google's release
  notes: "runtime version 1.13 ... supports TensorFlow 1.13"); the newest patch of that minor is
  installed (``==2.11.*``), as Google updated patch releases inside a runtime.
- scikit-learn, XGBoost and pandas of runtime 2.11 (1.0.2, 1.6.1, 1.3.5): as quoted from Google's
  runtime version list in this project's issue 19. Google's list itself ("runtime version list"
  page of AI Platform Training) could not be read from where this was written (no network to
  Google; no copy found in public repositories), so these three are not re-checked here, and
  the other runtimes' scikit-learn, XGBoost and pandas versions are not recorded at all: those
  runtimes get the newest release that installs beside their TensorFlow, and the plan lists
  each such package as "not recorded" rather than passing it off as the runtime's.
- numpy, scipy and google-cloud-storage were in every runtime; their versions are not recorded
  either (pip picks what the pinned frameworks accept).
- Which release first had wheels for a Python (``FIRST_WHEEL``): checked with pip against PyPI
  (``pip install --dry-run --only-binary=:all: --python-version 3.X NAME==V``: the listed
  version installs, the release before it does not) in November 2026.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

# runtimeVersion -> the Python versions it shipped with (see the module doc).
RUNTIME_PYTHON: dict[str, tuple[str, ...]] = {
    "1.0": ("2.7",),
    "1.2": ("2.7",),
    **{f"1.{n}": ("2.7", "3.5") for n in range(4, 15)},
    "1.15": ("2.7", "3.7"),
    **{f"2.{n}": ("3.7",) for n in range(1, 12)},
}
PYTHON_VERSIONS: tuple[str, ...] = ("2.7", "3.5", "3.7")

TF = "tensorflow"
"""The framework name plans use for TensorFlow, whatever its pip name (``tensorflow-cpu``...)."""

RECORDED: dict[str, dict[str, str]] = {
    "2.11": {"scikit-learn": "1.0.2", "xgboost": "1.6.1", "pandas": "1.3.5"},
}
"""Exact versions beside TensorFlow, by runtime, where known (see the module doc)."""

FRAMEWORKS: tuple[str, ...] = ("scikit-learn", "xgboost", "pandas")
"""Frameworks every runtime preinstalled besides TensorFlow, pinned where ``RECORDED`` says."""

COMPANIONS: tuple[str, ...] = ("numpy", "scipy", "google-cloud-storage")
"""Packages every runtime had, at versions not recorded here."""

TF1_GFILE_NOTE = (
    "tf.io.gfile cannot reach gs:// here on TensorFlow 1.x: its GCS client takes no CA bundle "
    "(CURL_CA_BUNDLE), so it cannot trust the local storage proxy; read and write gs:// with "
    "google-cloud-storage, or use runtime 2.x"
)
"""Seen by hand with TensorFlow 1.15.5: every ``gs://`` call failed certificate verification
(libcurl code 60) after its retries; its binaries name no ``CURL_CA_BUNDLE``, unlike 2.11's."""

TF1_PINS: tuple[str, ...] = ("protobuf<3.21",)
"""Bounds TensorFlow 1.x needs and does not declare: its generated protobuf modules fail to import
under protobuf 4 ("Descriptors cannot be created directly"), which pip otherwise picks for
google-cloud-storage's google-api-core (seen building runtime 1.15 on Python 3.7)."""

FIRST_WHEEL: dict[str, dict[str, str]] = {
    "3.11": {
        TF: "2.12",
        "scikit-learn": "1.1.3",
        "pandas": "1.5.0",
        "numpy": "1.23.2",
        "scipy": "1.9.2",
    },
    "3.12": {
        TF: "2.16",
        "scikit-learn": "1.3.1",
        "pandas": "2.1.1",
        "numpy": "1.26.0",
        "scipy": "1.11.2",
    },
    "3.13": {
        TF: "2.20",
        "scikit-learn": "1.5.2",
        "pandas": "2.2.3",
        "numpy": "2.1.0",
        "scipy": "1.14.1",
    },
}
"""The first release with wheels for each Python (TensorFlow by minor), checked as the module
doc says, for the Pythons a service may run on. XGBoost wheels are not tied to a Python."""

TF_MAX_PYTHON: dict[int, str] = {1: "3.7", 2: "3.13"}
"""The newest Python with TensorFlow wheels of each major (1.15: up to 3.7)."""

LEGACY_KERAS_FROM = (2, 16)
"""The first TensorFlow whose ``tf.keras`` is Keras 3 unless ``tf-keras`` and
``TF_USE_LEGACY_KERAS=1`` bring Keras 2 back."""

ENV_WHY: dict[str, str] = {
    "TF_USE_LEGACY_KERAS": "Keras 2 semantics",
}

_VERSION = re.compile(r"^(\d+)\.(\d+)")


class RuntimeRefused(ValueError):
    """The runtime cannot be honoured on this host; the message says what can run instead."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Substitution:
    """One framework at another version than the runtime's, and why."""

    name: str
    wanted: str
    got: str
    why: str

    def text(self) -> str:
        return f"{self.name} {self.got} instead of {self.wanted}: {self.why}"


@dataclass(frozen=True)
class Plan:
    """What one runtime environment holds, on which interpreter."""

    runtime: str
    python: str
    """The Python version the environment runs (``3.7``): the job's, or the service's."""
    interpreter: str
    """The interpreter's path."""
    variant: str
    """``cpu`` or ``gpu``."""
    requirements: tuple[str, ...]
    """pip requirement specifiers, in install order."""
    exact: bool
    """The job's Python with the runtime's recorded versions (a), or not (b)."""
    substitutions: tuple[Substitution, ...] = ()
    unrecorded: tuple[str, ...] = ()
    """Frameworks installed at the newest version that fits, the runtime's not being known."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Environment variables the replicas get (``TF_USE_LEGACY_KERAS``)."""

    @property
    def key(self) -> str:
        """The environment's folder name: one per runtime, Python, variant and requirements."""
        digest = hashlib.sha256("\n".join(self.requirements).encode()).hexdigest()[:10]
        return f"{self.runtime}-py{self.python}-{self.variant}-{digest}"

    def notes(self) -> list[str]:
        """Lines for the job's log and ``describe``: what was substituted and why."""
        lines = [s.text() for s in self.substitutions]
        lines += [
            f"{name}: the runtime version list's version for {self.runtime} is not recorded "
            "here; the newest that installs"
            for name in self.unrecorded
        ]
        lines += [
            f"{k}={v} set for the replicas ({ENV_WHY.get(k, '')})" for k, v in self.env.items()
        ]
        if self.runtime.startswith("1."):
            lines.append(TF1_GFILE_NOTE)
        return lines


def python_of(version: str) -> tuple[int, int] | None:
    """``(3, 7)`` for ``3.7`` or ``3.7.16``; None when it is not a version."""
    m = _VERSION.match(version)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _minor(version: str) -> str:
    parsed = python_of(version)
    return f"{parsed[0]}.{parsed[1]}" if parsed else version


def default_python(runtime: str) -> str:
    """The Python a job on ``runtime`` gets when it names none: the newest the runtime had."""
    return RUNTIME_PYTHON[runtime][-1]


def tf_requirement(tf_minor: str, gpu: bool) -> str:
    """The pip requirement for TensorFlow ``tf_minor`` (``2.11``), CPU or GPU build.

    TensorFlow 1.x is ``tensorflow`` (CPU) or ``tensorflow-gpu``; from 2.1 the ``tensorflow``
    wheel carries the GPU kernels and ``tensorflow-cpu`` is the CPU-only build; from 2.14 the
    CUDA libraries come with the ``and-cuda`` extra.
    """
    major_minor = python_of(tf_minor) or (2, 0)
    if major_minor[0] == 1:
        return f"{'tensorflow-gpu' if gpu else 'tensorflow'}=={tf_minor}.*"
    if not gpu:
        return f"tensorflow-cpu=={tf_minor}.*"
    if major_minor >= (2, 14):
        return f"tensorflow[and-cuda]=={tf_minor}.*"
    return f"tensorflow=={tf_minor}.*"


def requirement_names(requirements: Iterable[str]) -> list[str]:
    """The project names of pip requirement strings (``tensorflow-cpu==2.11.*`` ->
    ``tensorflow-cpu``), in order, for options such as ``--only-binary`` that take names."""
    names: list[str] = []
    for req in requirements:
        match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", req.strip())
        if match and match.group(0) not in names:
            names.append(match.group(0))
    return names


def _tf_for_python(tf_minor: str, python: str) -> str | None:
    """The nearest TensorFlow minor at or after ``tf_minor`` with wheels for ``python``; None
    when there is none (TensorFlow 1.x past Python 3.7, or a Python newer than any known)."""
    tf = python_of(tf_minor)
    py = python_of(python)
    if tf is None or py is None:
        return None
    newest = python_of(TF_MAX_PYTHON.get(tf[0], "0.0"))
    if newest is None or py > newest:
        return None
    first = FIRST_WHEEL.get(python, {}).get(TF)
    if first is None:
        return tf_minor  # a Python the runtime's TensorFlow already supports (<= 3.10)
    first_v = python_of(first)
    assert first_v is not None
    return tf_minor if tf >= first_v else first


def _nearest(name: str, version: str, python: str) -> str:
    """``version`` when it has wheels for ``python``, else the first release that has."""
    first = FIRST_WHEEL.get(python, {}).get(name)
    if first is None:
        return version
    have, need = _release(version), _release(first)
    return version if have >= need else first


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version))


def plan(
    runtime: str,
    python: str | None,
    gpu: bool,
    interpreters: Mapping[str, str],
    service_python: tuple[str, str],
) -> Plan:
    """The environment a job on ``runtime`` / ``python`` gets on this host.

    Args:
        runtime: ``trainingInput.runtimeVersion`` (a key of ``RUNTIME_PYTHON``).
        python: ``trainingInput.pythonVersion``; None for the runtime's default.
        gpu: the job asks for GPUs and the host has them: GPU builds of the frameworks.
        interpreters: Python version (``3.7``) -> interpreter path, as found on the host.
        service_python: the service's own (version, path), for the fallback.

    Raises:
        RuntimeRefused: naming the field and what can run instead.
    """
    if runtime not in RUNTIME_PYTHON:
        raise RuntimeRefused(
            "trainingInput.runtimeVersion",
            f"Unknown runtime version {runtime[:20]!r}; known versions are "
            f"{', '.join(RUNTIME_PYTHON)}.",
        )
    wanted = python or default_python(runtime)
    variant = "gpu" if gpu else "cpu"
    recorded = RECORDED.get(runtime, {})
    tf_major = int(runtime.split(".")[0])
    if wanted.startswith("2."):
        raise RuntimeRefused(
            "trainingInput.pythonVersion",
            "Python 2.7 jobs cannot run on the local jobs service (it builds each runtime as a "
            "Python 3 virtual environment); use pythonVersion 3.7 with runtimeVersion 1.15 or 2.x.",
        )
    found = interpreters.get(wanted)
    if found is not None:
        reqs = [tf_requirement(runtime, gpu)]
        reqs += [f"{n}=={recorded[n]}" if n in recorded else n for n in FRAMEWORKS]
        reqs += list(COMPANIONS)
        if tf_major == 1:
            reqs += list(TF1_PINS)
        return Plan(
            runtime,
            wanted,
            found,
            variant,
            tuple(reqs),
            exact=True,
            unrecorded=tuple(n for n in FRAMEWORKS if n not in recorded),
        )
    own_version, own_path = service_python
    own = _minor(own_version)
    hint = f"install Python {wanted} (pyenv install {wanted}) or name one with --python"
    if tf_major == 1:
        near = _tf1_interpreter(runtime, wanted, interpreters)
        if near is not None:
            return Plan(
                runtime,
                near,
                interpreters[near],
                variant,
                (tf_requirement(runtime, gpu), *FRAMEWORKS, *COMPANIONS, *TF1_PINS),
                exact=False,
                substitutions=(
                    Substitution(
                        "python",
                        wanted,
                        near,
                        f"no Python {wanted} on this host; TensorFlow {runtime} has wheels "
                        f"for Python {near}",
                    ),
                ),
                unrecorded=FRAMEWORKS,
            )
        raise RuntimeRefused(
            "trainingInput.runtimeVersion",
            f"Runtime {runtime} needs Python {wanted} (TensorFlow 1.x has no wheels for "
            f"Python {own}, the service's), and this host has no Python {wanted}: {hint}, "
            "or use runtimeVersion 2.x.",
        )
    tf = _tf_for_python(runtime, own)
    if tf is None:
        raise RuntimeRefused(
            "trainingInput.runtimeVersion",
            f"No known TensorFlow 2.x release installs on Python {own} (the service's), and "
            f"this host has no Python {wanted}: {hint}.",
        )
    subs: list[Substitution] = []
    why_py = f"no Python {wanted} on this host; Python {own} has no wheels of {{}}"
    if tf != runtime:
        subs.append(Substitution("tensorflow", f"{runtime}.*", f"{tf}.*", why_py.format(runtime)))
    reqs = [tf_requirement(tf, gpu)]
    env: dict[str, str] = {}
    if (python_of(tf) or (0, 0)) >= LEGACY_KERAS_FROM:
        reqs.append(f"tf-keras=={tf}.*")
        env["TF_USE_LEGACY_KERAS"] = "1"
    for name in FRAMEWORKS:
        if name not in recorded:
            reqs.append(name)
            continue
        got = _nearest(name, recorded[name], own)
        if got != recorded[name]:
            subs.append(Substitution(name, recorded[name], got, why_py.format(recorded[name])))
        reqs.append(f"{name}=={got}")
    reqs += list(COMPANIONS)
    return Plan(
        runtime,
        own,
        own_path,
        variant,
        tuple(reqs),
        exact=False,
        substitutions=tuple(subs),
        unrecorded=tuple(n for n in FRAMEWORKS if n not in recorded),
        env=env,
    )


def _tf1_interpreter(runtime: str, wanted: str, interpreters: Mapping[str, str]) -> str | None:
    """The nearest Python 3 the host has that TensorFlow ``runtime`` (1.x) has wheels for:
    3.5 and 3.6 for every 1.x, and 3.7 from 1.13 on; one newer than ``wanted`` first."""
    tf = python_of(runtime) or (1, 0)
    usable = ["3.5", "3.6", *(["3.7"] if tf >= (1, 13) else [])]
    want = python_of(wanted) or (3, 7)
    have = [p for p in usable if p in interpreters]
    newer = [p for p in have if (python_of(p) or (0, 0)) >= want]
    older = [p for p in have if (python_of(p) or (0, 0)) < want]
    return newer[0] if newer else (older[-1] if older else None)


_MISSING = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")


def missing_module_hint(stderr_tail: str, runtime: str | None) -> str | None:
    """What to do when a trainer imports what its environment lacks, or None."""
    found = _MISSING.findall(stderr_tail)
    if not found:
        return None
    module = found[-1].split(".")[0]
    where = (
        f"runtime {runtime} does not include it"
        if runtime
        else "the job sets no runtimeVersion, so only its own packages are installed"
    )
    return (
        f"The trainer imports {module!r}, which its environment lacks ({where}): add the "
        "package that provides it to install_requires in setup.py, or pick a runtimeVersion "
        "that includes it."
    )


def runtime_choices(interpreters: Iterable[str]) -> str:
    """``2.1-2.11 on Python 3.7`` style summary of what runs exactly with these interpreters."""
    have = set(interpreters)
    exact = [r for r, pys in RUNTIME_PYTHON.items() if any(p in have for p in pys)]
    return ", ".join(exact) if exact else "none"
