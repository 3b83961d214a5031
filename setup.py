"""Which packages the wheel holds, and where their folders are; everything else is in pyproject.

The packages are found, never listed by hand, so a new subpackage cannot be left out of an
installed tui-app (``pip install .`` once gave a TUI without its screens package).

Everything installs under the one name ``tui_app``. The ``widgets/`` and ``themes/`` folders stay
at the top of the repository, but they are the packages ``tui_app.widgets`` and
``tui_app.themes``: PyPI has an unrelated ``themes``, and a wheel that installed a top-level
``themes`` would overwrite that distribution's files in a shared environment. In a checkout the
same names resolve through the links ``tui_app/widgets`` and ``tui_app/themes``, so Python, mypy
and import-linter see one package tree; the wheel does not rely on them (``package_dir`` below).
``tests``, ``examples`` and ``benchmarks`` are not part of the product.

The sample trainer (``examples/trainer``) ships inside the wheel as ``tui_app.sample_trainer``,
so ``tui-app --demo`` works from any install, not only from a checkout. It stays one copy in
``examples/``: setuptools maps the package onto that folder, for wheels and editable installs
alike.
"""

from setuptools import find_packages, setup

TRAINER = "tui_app.sample_trainer"
FOLDERS = {"tui_app.widgets": "widgets", "tui_app.themes": "themes"}
"""Top-level folders of the repository that install inside ``tui_app``."""


def _inside(package: str, parent: str) -> bool:
    return package == parent or package.startswith(parent + ".")


def packages() -> list[str]:
    own = [
        p
        for p in find_packages(include=["tui_app", "tui_app.*"])
        if not any(_inside(p, name) for name in FOLDERS)
    ]
    mapped = [
        f"{name}.{sub}" if sub else name
        for name, folder in FOLDERS.items()
        for sub in ["", *find_packages(folder)]
    ]
    return [*own, *mapped, TRAINER, f"{TRAINER}.trainer"]


setup(
    packages=packages(),
    package_dir={**FOLDERS, TRAINER: "examples/trainer"},
)
