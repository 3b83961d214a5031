"""The Keras multi-worker trainer: TensorFlow 2.11 (with its Keras 2) comes from the runtime."""

from setuptools import find_packages, setup

setup(name="keras-mwms", version="0.1", packages=find_packages(), install_requires=[])
