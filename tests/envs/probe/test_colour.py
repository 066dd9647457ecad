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


@pytest.mark.parametrize("level", [0, 2])
def test_decision_facts_name_the_colour_with_one_step_to_go(level: int) -> None:
    env = gym.make(ENV_ID, level=level, obs_mode="text")
    obs, _ = env.reset(seed=3)
    base = env.unwrapped
    facts = base.decision()
    assert facts["optimal_actions"] == [base.oracle_action()] and facts["steps_to_go"] == 1
    assert facts["features"] == {"colours": len(obs["actions"]), "patch": int(level == 2)}
    wrong = next(a for a in obs["actions"] if a != base.oracle_action())
    env.step(wrong)
    assert base.decision()["steps_to_go"] == -1 and base.decision()["reason"] == "the episode is over"
