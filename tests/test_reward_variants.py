"""Reward variants: one vocabulary across families, the papers' and benchmarks' names as aliases."""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import pytest

import rl4vlm_gym  # noqa: F401  (registers the ids)
from rl4vlm_gym.core import REWARD_VOCABULARY
from rl4vlm_gym.envs.probe.colour import ColourNaming


@pytest.mark.parametrize(
    ("env_id", "name", "resolved"),
    [
        ("rl4vlm/NumberLine-v0", "native", "rl4vlm"),  # gym-cards' own reward is RL4VLM's
        ("rl4vlm/NumberLine-v0", "default", "rl4vlm"),
        ("rl4vlm/NumberLine-v0", "verl-agent", "verl-agent"),
        ("rl4vlm/Household-v0", "native", "alfworld"),
        ("rl4vlm/ColourNaming-v0", "native", "default"),
        ("rl4vlm/ColourNaming-v0", None, "default"),
    ],
)
def test_names_resolve_to_a_table(env_id: str, name: str | None, resolved: str) -> None:
    kwargs: dict[str, Any] = {} if name is None else {"reward_variant": name}
    env = gym.make(env_id, obs_mode="text", **kwargs)
    assert env.unwrapped.reward_variant == resolved


@pytest.mark.parametrize("name", ["nope", "", "Native", 3, "sparse"])
def test_unknown_names_are_refused_naming_the_choices(name: Any) -> None:
    with pytest.raises(ValueError, match=r"reward_variant=.* is unknown; choose one of \('rl4vlm', 'verl-agent'\)"):
        gym.make("rl4vlm/NumberLine-v0", reward_variant=name)


class _Aliased(ColourNaming):
    REWARDS: ClassVar = {"sparse": {"right": 1.0, "wrong": 0.0, "invalid": 0.0}, "native": {"right": 2.0, "wrong": 0.0, "invalid": -1.0}}
    REWARD_ALIASES: ClassVar = {"paper": "native", "broken": "missing"}


def test_a_family_defines_native_and_its_own_aliases() -> None:
    assert _Aliased(reward_variant="native").reward_variant == "native"  # defined: not the first
    assert _Aliased(reward_variant="paper").reward_variant == "native"
    assert _Aliased(reward_variant="default").reward_variant == "sparse"
    with pytest.raises(ValueError, match="'broken' is unknown"):
        _Aliased(reward_variant="broken")  # an alias to no table is no table


def test_the_vocabulary_names_every_canonical_variant() -> None:
    assert set(REWARD_VOCABULARY) == {"native", "sparse", "rl4vlm", "verl-agent", "vl-dac"}
