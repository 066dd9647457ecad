"""Rules of rl4vlm/FrozenLake-v0 (tests/test_conformance.py runs the conformance kit on it)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.toy_text.frozen_lake import FrozenLakeEnv

import rl4vlm_gym  # noqa: F401  (registers the ids)

ENV_ID = "rl4vlm/FrozenLake-v0"


def make(**kwargs: Any) -> gym.Env:
    """A tiny image keeps the rule tests cheap."""
    return gym.make(ENV_ID, image_size=32, **kwargs)


def set_map(env: gym.Env, *rows: str, slippery: bool = False) -> None:
    base = env.unwrapped
    base.desc, base.slippery = rows, slippery
    base.lake = FrozenLakeEnv(desc=list(rows), is_slippery=slippery)
    base.lake.reset(seed=0)
    base.position, base.last_action, base._policy = 0, None, None


def test_gymnasium_plays_the_rules_holes_end_the_episode_with_nothing() -> None:
    env = make()
    env.reset(seed=0)
    set_map(env, "SH", "FG")
    obs, reward, terminated, _, info = env.step("right")
    assert terminated and reward == 0.0 and not info["success"] and "fell into a hole" in obs["text"]
    env.reset(seed=0)
    set_map(env, "SH", "FG")
    assert env.step("down")[1] == 0.0
    _, reward, terminated, _, info = env.step("right")
    assert terminated and reward == 1.0 and info["success"]


def test_a_move_off_the_map_is_gymnasiums_valid_no_op() -> None:
    env = make()
    env.reset(seed=0)
    set_map(env, "SF", "FG")
    _, _, terminated, _, info = env.step("up")
    assert info["action"]["valid"] and env.unwrapped.position == 0 and not terminated


def test_the_deterministic_oracle_takes_the_shortest_path_round_the_holes() -> None:
    env = make()
    env.reset(seed=0)
    set_map(env, "SFFF", "HHHF", "FFFF", "GHHH")  # round the right side: 3 + 2 + 3 + 1 = 9 moves
    assert env.unwrapped._optimal_steps() == 9
    steps = 0
    while True:
        _, _, terminated, _, info = env.step(env.unwrapped.oracle_action())
        steps += 1
        if terminated:
            break
    assert info["success"] and steps == 9


def test_on_slippery_ice_the_oracle_maximises_the_chance_and_optimal_steps_is_unknown() -> None:
    env = make(level=3)
    _, info = env.reset(seed=0)
    assert info["optimal_steps"] == -1
    set_map(env, "SF", "FG", slippery=True)
    # From the start, 'down' or 'right' reach the goal with certainty eventually; never a hole here.
    assert env.unwrapped.oracle_action() in ("down", "right")
    set_map(env, "SFF", "HFH", "FFG", slippery=True)
    base = env.unwrapped
    policy = base._value_policy()
    table = base.lake.unwrapped.P
    for state in (0, 1):  # from these cells some move has no chance of a hole: the policy takes one
        outcomes = table[state][policy[state]]
        assert all(base.desc[s2 // 3][s2 % 3] != "H" for p, s2, _, _ in outcomes if p > 0), (state, policy[state])


def test_text_and_image_show_the_same_map() -> None:
    env = make(level=1)
    obs, _ = env.reset(seed=4)
    base = env.unwrapped
    grid = obs["text"].splitlines()[1:7]
    assert [row.replace("P", "S") for row in grid][0][0] == "S"
    assert "".join(grid).count("H") == "".join(base.desc).count("H")
    before = obs["image"].copy()
    obs, *_ = env.step(base.oracle_action())
    assert not np.array_equal(before, obs["image"])


@pytest.mark.parametrize(("level", "size", "slippery"), [(0, 4, False), (2, 8, False), (4, 8, True)])
def test_levels_set_size_and_slipperiness(level: int, size: int, slippery: bool) -> None:
    env = make(level=level)
    env.reset(seed=1)
    assert len(env.unwrapped.desc) == size
    assert len(env.unwrapped.lake.unwrapped.P[0][0]) == (3 if slippery else 1)  # Gymnasium's slip outcomes
    assert env.unwrapped.slippery == slippery
