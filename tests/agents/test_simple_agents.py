"""The model-free agents: the preference agent plays its first admissible move."""

from __future__ import annotations

import gymnasium as gym
import pytest

import rl4vlm_gym  # noqa: F401  (registers the ids)
from rl4vlm_gym.agents import make_agent
from rl4vlm_gym.agents.simple import PreferenceAgent


def test_the_first_admissible_preferred_move_is_played() -> None:
    agent = PreferenceAgent("raise, bet,call")
    assert agent.act({"actions": ("fold", "call", "raise")}) == "raise"
    assert agent.act({"actions": ("Pass", "Bet")}) == "Bet"  # case kept as the env lists it
    assert agent.act({"actions": ("fold", "call")}) == "call"
    assert agent.act({"actions": ("check", "fold")}) == "check"  # none preferred: the first listed
    assert agent.act({"actions": ()}) == ""


def test_it_is_built_by_name_and_refuses_an_empty_list() -> None:
    agent = make_agent("prefer", moves="liar")
    assert agent.describe() == {"name": "prefer", "moves": "liar"}
    with pytest.raises(ValueError, match="at least one move"):
        PreferenceAgent(" , ")


def test_always_raise_plays_leduc_through_its_parser() -> None:
    env = gym.make("rl4vlm/LeducHoldem-vs-CFR-v0", obs_mode="text")
    agent = make_agent("prefer", moves="raise,call")
    obs, _ = env.reset(seed=3)
    agent.begin(env, 3)
    done, raised = False, 0
    while not done:
        action = agent.act(obs)
        raised += action == "raise"
        obs, _, terminated, truncated, info = env.step(action)
        assert info["action"]["valid"]
        done = terminated or truncated
    assert raised >= 1
    env.close()
