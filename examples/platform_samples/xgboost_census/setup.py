"""The XGBoost census trainer: XGBoost, pandas, scikit-learn and google-cloud-storage come from
the runtime version (2.11), so it declares nothing."""

from setuptools import find_packages, setup

setup(name="xgboost-census", version="0.1", packages=find_packages(), install_requires=[])
