"""The scikit-learn census trainer: it declares nothing, as Google's samples did.

scikit-learn, pandas and google-cloud-storage come from the runtime version (2.11).
"""

from setuptools import find_packages, setup

setup(name="sklearn-census", version="0.1", packages=find_packages(), install_requires=[])
