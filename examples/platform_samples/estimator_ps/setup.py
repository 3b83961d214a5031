"""The census Estimator trainer: TensorFlow 2.11 and its Estimator come from the runtime."""

from setuptools import find_packages, setup

setup(name="estimator-ps", version="0.1", packages=find_packages(), install_requires=[])
