"""Rules of rl4vlm/TicTacToe-v0 (tests/test_conformance.py runs the conformance kit on it)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import pytest

import rl4vlm_gym  # noqa: F401  (registers the ids)

ENV_ID = "rl4vlm/TicTacToe-v0"


def make(**kwargs: Any) -> gym.Env:
    """A tiny image keeps the rule tests cheap."""
    return gym.make(ENV_ID, image_size=32, **kwargs)


def test_the_oracle_walks_straight_to_the_goal() -> None:
    env = make()
    env.reset(seed=3)
    steps, total = 0, 0.0
    terminated = False
    while not terminated:
        _, reward, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
        steps, total = steps + 1, total + reward
        assert not truncated
    assert info["success"] and steps == info["optimal_steps"] > 0
    assert total == pytest.approx(1.0 - 0.1 * (steps - 1))  # the native variant: -0.1 per step, +1 at the goal


def test_a_move_off_the_grid_is_invalid_and_changes_nothing() -> None:
    env = make(reward_variant="sparse")
    env.reset(seed=0)
    base = env.unwrapped
    base.agent = (0, 0)
    base.goal = (2, 2)
    _, reward, terminated, _, info = env.step("up")
    assert not info["action"]["valid"] and "edge" in info["action"]["error"]
    assert base.agent == (0, 0) and reward == 0.0 and not terminated
    *_, info = env.step("right")
    assert info["action"]["valid"] and base.agent == (0, 1)


def test_text_and_image_carry_the_same_positions() -> None:
    env = make(level=2)
    obs, _ = env.reset(seed=5)
    base = env.unwrapped
    row, col = base.agent
    assert f"You are at row {row + 1}, column {col + 1}" in obs["text"]
    grid = obs["text"].splitlines()[1:][row].split()
    assert grid[col] == "A"
    before = obs["image"].copy()
    move = "down" if row < base.size - 1 else "up"
    if (row + (1 if move == "down" else -1), col) == base.goal:
        move = "right" if col < base.size - 1 else "left"
    obs, *_ = env.step(move)
    assert (obs["image"] != before).any()


@pytest.mark.parametrize("level", [0, 1, 2])
def test_levels_set_the_grid_size(level: int) -> None:
    env = make(level=level)
    env.reset(seed=1)
    assert env.unwrapped.size == 3 + level

