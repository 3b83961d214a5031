"""The PyTorch DDP trainer. AI Platform's runtime versions had no PyTorch (Google's PyTorch
samples brought it in a container or as a dependency), so it declares torch itself and runs
without a runtime version, on the service's Python."""

from setuptools import find_packages, setup

setup(
    name="pytorch-ddp",
    version="0.1",
    packages=find_packages(),
    install_requires=["torch", "google-cloud-storage"],
)
