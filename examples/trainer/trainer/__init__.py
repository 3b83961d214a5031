"""Sample AI Platform Training (ml v1) trainer: a linear model fitted by asynchronous SGD.

Stdlib only, so it installs anywhere the local jobs service can start a Python process. The
entry point is :mod:`trainer.task` (``python -m trainer.task``).
"""

__version__ = "0.1.0"
