"""The conformance kit over the whole registry: each (id, check) pair is its own test.

A contributor's new env is tested here as soon as it is registered.
"""

from __future__ import annotations

import pytest

import rl4vlm_gym
from rl4vlm_gym.core import MissingDataError
from rl4vlm_gym.testing import CHECKS

ENV_IDS = [card.id for card in rl4vlm_gym.list_envs()]

# Marked slow (the inner loop, `pytest -m "not slow"`, skips them; CI runs them): the checks that
# start Python processes, seconds whatever the env, and every check but docs of an env on an
# extra's simulator (a GL world, ALFWorld's engine, a browser), where each episode costs.
PROCESS_CHECKS = ("determinism", "vector")
# Ids that share one env class differ only in their kwargs (BabaIsAI's 40 tasks, for one): the
# inner loop checks the first few of each class, CI all of them.
INNER_LOOP_PER_CLASS = 8


def _cases() -> list[pytest.param]:
    cases = []
    per_class: dict[str, int] = {}
    for card in rl4vlm_gym.list_envs():
        per_class[card.entry_point] = per_class.get(card.entry_point, 0) + 1
        crowded = per_class[card.entry_point] > INNER_LOOP_PER_CLASS
        for check in CHECKS:
            slow = check in PROCESS_CHECKS or ((card.extra is not None or crowded) and check != "docs")
            marks = [pytest.mark.slow] if slow else []
            cases.append(pytest.param(card.id, check, marks=marks, id=f"{card.id}-{check}"))
    return cases


def test_registry_is_not_empty() -> None:
    assert {"rl4vlm/NumberLine-v0", "rl4vlm/EZPoints-v0", "rl4vlm/Points24-v0", "rl4vlm/Blackjack-v0"} <= set(ENV_IDS)


@pytest.mark.parametrize(("env_id", "check"), _cases())
def test_conformance(env_id: str, check: str) -> None:
    try:
        CHECKS[check](env_id)
    except MissingDataError as err:  # envs on downloaded data (conftest points at the samples)
        pytest.skip(f"{env_id} has no data on this machine: {err}")
