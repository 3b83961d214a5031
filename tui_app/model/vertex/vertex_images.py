"""Vertex AI's prebuilt training images ("executor images") for ml v1 runtime versions.

ml v1 chose the TensorFlow and Python a package ran on from ``runtimeVersion`` and
``pythonVersion``; Vertex AI needs an image URI instead (``pythonPackageSpec.executorImageUri``).
``TF_IMAGES`` is the TensorFlow part of Google's list of prebuilt containers for custom training,
"Prebuilt containers for custom training" (https://cloud.google.com/vertex-ai/docs/training/
pre-built-containers, now served at https://docs.cloud.google.com/gemini-enterprise-agent-platform/
machine-learning/training/pre-built-containers), as read on ``LIST_READ``. What that list says,
and this module relies on:

- Every image is published under ``us-``, ``europe-`` and ``asia-docker.pkg.dev/vertex-ai/
  training/`` (the same image in each), and only with the ``latest`` tag: the page says image
  names without it are not supported.
- CPU and GPU images exist for TensorFlow 1.15 and 2.1 to 2.9 and 2.11 on Python 3.7
  (``tf-cpu.2-11``, no suffix), and for 2.8, 2.9 and 2.11 to 2.17 on Python 3.10
  (``tf-cpu.2-11.py310``). There is no 2.10 image at all.
- TPU images exist only for 2.12 (``tf-tpu.2-12``, Python 3.8) and 2.15 (``tf-tpu.2-15.cp310``,
  Python 3.10), so no ml v1 runtime (the newest was 2.11) has one.
- Each row has an end-of-availability date. Google's framework support policy
  (https://cloud.google.com/vertex-ai/docs/framework-support-policy) says that after it "you can
  no longer use images for this framework version" and services "might block the creation of new
  resources using these images". On ``LIST_READ`` every TensorFlow row's date had passed (the
  last, 2.17, on 2026-07-11), so ``end_of_availability`` is kept for the translator to say so.

The choice made here (ours, not from the list): the image for the job's ``pythonVersion``
when it names one, else the newest Python the list has for that TensorFlow, in the registry
multi-region nearest the job's region. The same table read backwards recovers
``runtimeVersion`` (and ``pythonVersion``) from a job Vertex AI returns, so a job submitted from
an ml v1 config shows and resubmits as written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from itertools import groupby

TRAINING_REPOSITORY = "docker.pkg.dev/vertex-ai/training"
HOSTS = ("us", "europe", "asia")
LIST_URL = "https://cloud.google.com/vertex-ai/docs/training/pre-built-containers"
LIST_READ = date(2026, 11, 25)
"""The day ``TF_IMAGES`` was checked against Google's list."""


@dataclass(frozen=True)
class TrainingImage:
    """One row of Google's list: a TensorFlow version on one Python for one kind of machine."""

    tensorflow: str
    """``2.11``: the ml v1 ``runtimeVersion`` it stands for."""
    python: str
    """``3.7``, ``3.8`` or ``3.10``."""
    kind: str
    """``cpu``, ``gpu`` or ``tpu``."""
    tag: str
    """The image name in the repository, without host or tag: ``tf-gpu.2-11.py310``."""
    end_of_availability: date

    def uri(self, region: str) -> str:
        return f"{artifact_host(region)}-{TRAINING_REPOSITORY}/{self.tag}:latest"


def _rows(
    versions: Iterable[str], python: str, kinds: tuple[str, ...], suffix: str, until: date
) -> list[TrainingImage]:
    return [
        TrainingImage(v, python, kind, f"tf-{kind}.{v.replace('.', '-')}{suffix}", until)
        for v in versions
        for kind in kinds
    ]


_CPU_GPU = ("cpu", "gpu")
TF_IMAGES: tuple[TrainingImage, ...] = (
    *_rows(["2.17"], "3.10", _CPU_GPU, ".py310", date(2026, 7, 11)),
    *_rows(["2.16"], "3.10", _CPU_GPU, ".py310", date(2026, 6, 28)),
    *_rows(["2.15"], "3.10", _CPU_GPU, ".py310", date(2025, 11, 14)),
    *_rows(["2.15"], "3.10", ("tpu",), ".cp310", date(2025, 10, 23)),
    *_rows(["2.14"], "3.10", _CPU_GPU, ".py310", date(2025, 9, 26)),
    *_rows(["2.13"], "3.10", _CPU_GPU, ".py310", date(2025, 7, 5)),
    *_rows(["2.12"], "3.10", _CPU_GPU, ".py310", date(2025, 6, 30)),
    *_rows(["2.12"], "3.8", ("tpu",), "", date(2025, 6, 30)),
    *_rows(["2.11", "2.9", "2.8"], "3.10", _CPU_GPU, ".py310", date(2024, 11, 15)),
    *_rows(["2.11", "2.9", "2.8"], "3.7", _CPU_GPU, "", date(2024, 11, 15)),
    *_rows([f"2.{n}" for n in range(7, 0, -1)], "3.7", _CPU_GPU, "", date(2024, 9, 1)),
    *_rows(["1.15"], "3.7", _CPU_GPU, "", date(2024, 9, 1)),
)
_BY_TAG = {image.tag: image for image in TF_IMAGES}
_URI = re.compile(
    rf"^(?P<host>{'|'.join(HOSTS)})-docker\.pkg\.dev/vertex-ai/training/(?P<tag>[^:/]+):latest$"
)


def artifact_host(region: str) -> str:
    """The Artifact Registry multi-region that serves a region's jobs: pulling from the same
    continent keeps start-up fast and avoids cross-continent egress."""
    if region.startswith("europe-"):
        return "europe"
    if region.startswith(("asia-", "australia-")):
        return "asia"
    return "us"


def machine_kind(*, gpu: bool, tpu: bool) -> str:
    """``tpu`` wins: a TPU VM has no GPUs, whatever else the replica's config says."""
    return "tpu" if tpu else "gpu" if gpu else "cpu"


def tf_images(runtime_version: str | None, kind: str) -> list[TrainingImage]:
    """The list's images of one TensorFlow version for one kind of machine, newest Python
    first; [] when the list has none."""
    found = [i for i in TF_IMAGES if i.tensorflow == runtime_version and i.kind == kind]
    return sorted(found, key=lambda i: _version_key(i.python), reverse=True)


def find_tf_image(
    runtime_version: str | None, *, kind: str, python_version: str | None = None
) -> TrainingImage | None:
    """The image for a runtime on a kind of machine: the one for ``python_version`` when it is
    given, else the newest Python's; None when the list has no such image."""
    for image in tf_images(runtime_version, kind):
        if python_version is None or image.python == python_version:
            return image
    return None


def tf_image(
    runtime_version: str | None,
    *,
    gpu: bool,
    tpu: bool,
    region: str,
    python_version: str | None = None,
) -> str | None:
    """The image URI ``find_tf_image`` picks, in the registry nearest ``region``, or None."""
    image = find_tf_image(
        runtime_version, kind=machine_kind(gpu=gpu, tpu=tpu), python_version=python_version
    )
    return None if image is None else image.uri(region)


def image_of_uri(uri: str | None) -> TrainingImage | None:
    """The list's row for an image URI on any of its hosts, or None for any other image."""
    m = _URI.match(uri or "")
    return None if m is None else _BY_TAG.get(m.group("tag"))


def runtime_of_image(uri: str | None) -> str | None:
    """The TensorFlow version (ml v1 runtime) of a listed image, or None for any other image.

    Callers must still check that ``tf_image`` gives the same URI back for the replica, region
    and Python (``tf_image`` is the only judge of what a runtime means).
    """
    image = image_of_uri(uri)
    return None if image is None else image.tensorflow


def runtimes_with_images(kind: str) -> str:
    """The TensorFlow versions the list has images of for a kind of machine, by Python:
    ``1.15, 2.1-2.9, 2.11 (Python 3.7); ...``, for messages that say what exists."""
    by_python: dict[str, list[str]] = {}
    for image in sorted(TF_IMAGES, key=lambda i: _version_key(i.tensorflow)):
        if image.kind == kind:
            by_python.setdefault(image.python, []).append(image.tensorflow)
    return "; ".join(
        f"{_ranges(versions)} (Python {python})"
        for python, versions in sorted(by_python.items(), key=lambda kv: _version_key(kv[0]))
    )


def _ranges(versions: list[str]) -> str:
    """``2.1, 2.2, 2.3, 2.5`` as ``2.1-2.3, 2.5``: runs of three or more consecutive minors in
    one major."""
    parts: list[str] = []
    for major, group in groupby(versions, key=lambda v: v.split(".")[0]):
        minors = [int(v.split(".")[1]) for v in group]
        start = prev = minors[0]
        for minor in [*minors[1:], None]:
            if minor is not None and minor == prev + 1:
                prev = minor
                continue
            if prev - start >= 2:
                parts.append(f"{major}.{start}-{major}.{prev}")
            else:
                parts.extend(f"{major}.{m}" for m in range(start, prev + 1))
            if minor is not None:
                start = prev = minor
    return ", ".join(parts)


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))
