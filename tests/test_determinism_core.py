"""Cross-process determinism of a few core ids in the inner loop.

The kit's ``determinism`` check runs on every registered id in tests/test_conformance.py, marked
``slow`` (a fresh process per id). Here three ids of the core (no extra) families, each drawing its
layout or deal from the seed, play the kit's own check (:func:`rl4vlm_gym.testing.determinism.check_determinism`):
the same seed's rollout, every image, text, reward and info, is byte-identical here and in a child
of the kit's fork server, a process with other str hashing (``PYTHONHASHSEED``) that has made no env.
The server is started once per test process and shared with the kit's tests."""

from __future__ import annotations

import pytest

import rl4vlm_gym  # noqa: F401  (registers the ids)
from rl4vlm_gym.testing.determinism import check_determinism

# A generated map, a generated puzzle (with its images), a dealt hand.
CORE_IDS = ("rl4vlm/FrozenLake-v0", "rl4vlm/Sokoban-v0", "rl4vlm/Points24-v0")


@pytest.mark.parametrize("env_id", CORE_IDS)
def test_a_seed_plays_the_same_bytes_in_a_fresh_process(env_id: str) -> None:
    summary = check_determinism(env_id, seed=3, steps=20)
    assert summary.startswith("20-step rollouts identical in 2 processes with different str hashing")
