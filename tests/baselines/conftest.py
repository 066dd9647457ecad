"""One torch thread for these tests (the tiny model gains nothing from more): tests/conftest.py's fixture."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module", autouse=True)
def _one_torch_thread(one_torch_thread: None) -> None:
    """Every baselines module runs with ``one_torch_thread``."""
