"""Fixtures the service tests share beyond the suite's own (``tests/conftest.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.restartable import Restartable


@pytest.fixture
def restartable_service(tmp_path: Path, trainer_sdist: Path) -> Iterator[tuple[Restartable, str]]:
    r = Restartable(tmp_path / "state")
    uri = r.svc.stage(trainer_sdist)
    try:
        yield r, uri
    finally:
        r.stop()
