"""Tiny real wheels named like the frameworks (tensorflow-cpu 2.11.0, scikit-learn 1.0.2...).

Each has the framework's import name with a ``__version__`` and nothing else, so a service
started with ``PIP_NO_INDEX=1`` and ``PIP_FIND_LINKS`` pointing at them builds runtime
environments offline in seconds, while the real pip resolves the real pins by its real rules.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

IMPORT_NAMES = {
    "tensorflow-cpu": "tensorflow",
    "tensorflow": "tensorflow",
    "tf-keras": "tf_keras",
    "scikit-learn": "sklearn",
    "google-cloud-storage": "google/cloud/storage",
}

RUNTIME_WHEELS: tuple[tuple[str, str], ...] = (
    ("tensorflow-cpu", "2.11.0"),
    ("tensorflow-cpu", "2.12.0"),
    ("scikit-learn", "1.0.2"),
    ("scikit-learn", "1.1.3"),
    ("xgboost", "1.6.1"),
    ("pandas", "1.3.5"),
    ("pandas", "1.5.0"),
    ("numpy", "1.21.6"),
    ("scipy", "1.7.3"),
    ("google-cloud-storage", "2.7.0"),
)
"""What runtime 2.11 needs on Python 3.7, and on 3.11 with its substitutions (runtimes.py)."""


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_wheel(
    out: Path, dist: str, version: str, requires: tuple[str, ...] = (), body: str = ""
) -> Path:
    """A py3-none-any wheel of ``dist`` ``version`` in ``out``; returns its path.

    ``body`` is appended to the package's ``__init__.py``.
    """
    norm = dist.replace("-", "_")
    module = IMPORT_NAMES.get(dist, norm)
    info = f"{norm}-{version}.dist-info"
    files: dict[str, bytes] = {
        f"{module}/__init__.py": (f'__version__ = "{version}"\n' + body).encode(),
        f"{info}/METADATA": (
            f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n"
            + "".join(f"Requires-Dist: {r}\n" for r in requires)
        ).encode(),
        f"{info}/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: tui-app-tests\nRoot-Is-Purelib: true\n"
            b"Tag: py3-none-any\n"
        ),
    }
    record = [_record_line(n, d) for n, d in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{norm}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return path


def build_runtime_wheels(out: Path) -> Path:
    """Every ``RUNTIME_WHEELS`` wheel in ``out``; returns ``out`` (a pip find-links dir)."""
    for dist, version in RUNTIME_WHEELS:
        build_wheel(out, dist, version)
    return out
