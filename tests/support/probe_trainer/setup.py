"""A stdlib-only trainer for service tests: it records what the platform handed it."""

from setuptools import find_packages, setup  # type: ignore[import-untyped]

setup(name="probe", version="0.1.0", packages=find_packages(), install_requires=[])
