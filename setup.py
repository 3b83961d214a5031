"""Which packages the wheel holds; everything else is in pyproject.toml.

The packages are found, never listed by hand, so a new subpackage cannot be left out of an
installed tui-app (``pip install .`` once gave a TUI without its screens package). Only our
three top-level names are searched: PyPI has an unrelated ``themes``, and ``tests``,
``examples`` and ``benchmarks`` are not part of the product.

The sample trainer (``examples/trainer``) ships inside the wheel as ``tui_app.sample_trainer``,
so ``tui-app --demo`` works from any install, not only from a checkout. It stays one copy in
``examples/``: setuptools maps the package onto that folder, for wheels and editable installs
alike.
"""

from setuptools import find_packages, setup

TRAINER = "tui_app.sample_trainer"

setup(
    packages=[
        *find_packages(include=["tui_app", "tui_app.*", "widgets", "widgets.*", "themes"]),
        TRAINER,
        f"{TRAINER}.trainer",
    ],
    package_dir={TRAINER: "examples/trainer"},
)
