"""rl4vlm/ColourNaming-v0's rewards: one answer per episode, right 1, wrong 0, unparseable -1."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym  # noqa: F401 - registers the ids

ENV_ID = "rl4vlm/ColourNaming-v0"


@pytest.mark.parametrize("level", [0, 1, 2])
def test_the_right_colour_pays_one_any_other_zero_and_garbage_minus_one(level: int) -> None:
    env = gym.make(ENV_ID, level=level)
    for seed in range(5):
        obs, _ = env.reset(seed=seed)
        right = env.unwrapped.oracle_action()
        for answer in obs["actions"]:
            env.reset(seed=seed)
            _, reward, terminated, _, info = env.step(answer)  # the spec's one-step limit truncates too
            expected = 1.0 if answer == right else 0.0
            assert (reward, terminated) == (expected, True), f"answering {answer!r} for {right!r}"
            assert info["success"] is (answer == right)
        before, _ = env.reset(seed=seed)
        after, reward, terminated, truncated, info = env.step("no colour at all")
        assert (reward, terminated, truncated) == (-1.0, False, True), "an unparseable answer costs -1 and ends the episode"
        assert not info["success"] and np.array_equal(before["image"], after["image"])
