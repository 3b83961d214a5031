"""Vertex AI's pre-built training images ("executor images") for ml v1 runtime versions.

ml v1 chose the TensorFlow a Python package ran on from ``runtimeVersion``; Vertex AI needs an
image URI instead (``pythonPackageSpec.executorImageUri``). There is no published 1:1 map, so the
rule here is ours ([M], ``../shared/vertex-notes.md`` §3.5): runtime ``2.N`` runs on
``tf-{cpu|gpu|tpu}.2-N``, the images built for Python 3.10 (``.py310``) from TensorFlow 2.11 on,
in the Artifact Registry multi-region nearest the job's region. The same rule read backwards
recovers ``runtimeVersion`` from a job Vertex AI returns, so a job submitted from an ml v1 config
shows (and resubmits with) the runtime it was written with.
"""

from __future__ import annotations

import re

TRAINING_REPOSITORY = "docker.pkg.dev/vertex-ai/training"
PY310_FROM_MINOR = 11
"""TensorFlow 2.11 is the first minor with ``.py310`` images (``tf-cpu.2-11.py310``)."""

_RUNTIME = re.compile(r"^2\.([1-9]\d*)$")
_IMAGE = re.compile(
    r"^(?P<host>us|europe|asia)-docker\.pkg\.dev/vertex-ai/training/"
    r"tf-(?P<kind>cpu|gpu|tpu)\.2-(?P<minor>[1-9]\d*)(?P<py>\.py310)?:latest$"
)


def artifact_host(region: str) -> str:
    """The Artifact Registry multi-region that serves a region's jobs: pulling from the same
    continent keeps start-up fast and avoids cross-continent egress."""
    if region.startswith("europe-"):
        return "europe"
    if region.startswith(("asia-", "australia-")):
        return "asia"
    return "us"


def tf_image(runtime_version: str | None, *, gpu: bool, tpu: bool, region: str) -> str | None:
    """The TensorFlow executor image for an ml v1 runtime, or None when there is none.

    Only TensorFlow 2 runtimes have one: ml v1's 1.x runtimes (TensorFlow 1, Python 2.7/3.5/3.7)
    have no Vertex AI image, and a runtime does not say whether the package needs scikit-learn
    or XGBoost instead, so those need an image chosen by a person.

    Args:
        runtime_version: ``trainingInput.runtimeVersion``, such as ``2.11``.
        gpu: The replica has GPUs (a ``tf-gpu`` image).
        tpu: The replica is a TPU VM (a ``tf-tpu`` image; wins over ``gpu``).
        region: Where the job runs; picks the registry host.

    Returns:
        The image URI, or None.
    """
    m = _RUNTIME.match(runtime_version or "")
    if m is None:
        return None
    minor = int(m.group(1))
    kind = "tpu" if tpu else "gpu" if gpu else "cpu"
    # The published TPU tags carry no Python suffix (``tf-tpu.2-12``); CPU and GPU ones do.
    suffix = ".py310" if minor >= PY310_FROM_MINOR and kind != "tpu" else ""
    return f"{artifact_host(region)}-{TRAINING_REPOSITORY}/tf-{kind}.2-{minor}{suffix}:latest"


def runtime_of_image(uri: str | None) -> str | None:
    """The ``2.N`` runtime a ``tf_image`` URI was made for, or None for any other image.

    Callers must still check that ``tf_image`` gives the same URI back for the replica and
    region (``tf_image`` is the only judge of what a runtime means).
    """
    m = _IMAGE.match(uri or "")
    return None if m is None else f"2.{int(m.group('minor'))}"
