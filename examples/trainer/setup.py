"""Packaging for the sample trainer.

gcloud's ``--package-path`` runs ``python setup.py sdist`` on this folder and uploads the result;
the platform then pip-installs the sdist on every replica. The package is deliberately
dependency-free (stdlib only) so that install works offline, on any Python >= 3.9.
"""

from setuptools import find_packages, setup

setup(
    name="trainer",
    version="0.1.0",
    description="Sample AI Platform Training job: asynchronous data-parallel SGD, stdlib only.",
    packages=find_packages(),
    install_requires=[],
    python_requires=">=3.9",
)
