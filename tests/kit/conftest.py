"""Fixtures shared by the kit's own tests."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from rl4vlm_gym.registry import unregister

sys.path.insert(0, str(Path(__file__).resolve().parent))
kit_walk = importlib.import_module("kit_walk")


@pytest.fixture(scope="module")
def walk() -> Iterator[str]:
    """The id of kit_walk's correct env, with every broken env of kit_walk registered for the module."""
    ids = kit_walk.register_all()
    yield kit_walk.env_id(kit_walk.Walk)
    for env_id in ids:
        unregister(env_id)
