"""scikit-learn tuning: scikit-learn and pandas come from the runtime; cloudml-hypertune (the
package Google's tuning samples report their metric with) is declared, as they declared it."""

from setuptools import find_packages, setup

setup(
    name="sklearn-hptune",
    version="0.1",
    packages=find_packages(),
    install_requires=["cloudml-hypertune"],
)
