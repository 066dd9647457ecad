"""The conformance kit over the whole registry: each (id, check) pair is its own test.

A contributor's new env is tested here as soon as it is registered.
"""

from __future__ import annotations

import pytest

import rl4vlm_gym
from rl4vlm_gym.core import MissingDataError
from rl4vlm_gym.testing import CHECKS

ENV_IDS = [card.id for card in rl4vlm_gym.list_envs()]


def test_registry_is_not_empty() -> None:
    assert {"rl4vlm/NumberLine-v0", "rl4vlm/EZPoints-v0", "rl4vlm/Points24-v0", "rl4vlm/Blackjack-v0"} <= set(ENV_IDS)


@pytest.mark.parametrize("check", list(CHECKS))
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_conformance(env_id: str, check: str) -> None:
    try:
        CHECKS[check](env_id)
    except MissingDataError as err:  # envs on downloaded data (conftest points at the samples)
        pytest.skip(f"{env_id} has no data on this machine: {err}")
