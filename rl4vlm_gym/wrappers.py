"""Wrappers that the registry adds to an id's spec.

:class:`TimeoutReward` pays a reward variant's ``"timeout"`` reward on the step where the
registered ``TimeLimit`` truncates an episode. The limit lives on the spec (``max_episode_steps``,
overridable in ``gym.make``), not inside the env, so only a wrapper outside ``TimeLimit`` knows
that a step was the last one: VL-DAC's "-1 when the episode ends without reward" is such a rule.
"""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
from gymnasium.utils import RecordConstructorArgs

__all__ = ["TimeoutReward"]


class TimeoutReward(gym.Wrapper, RecordConstructorArgs):
    """On a truncated, not terminated step, replace the reward with the variant's ``"timeout"`` one.

    Envs whose selected ``reward_variant`` has no ``"timeout"`` entry pass through unchanged.
    """

    def __init__(self, env: gym.Env) -> None:
        RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)
        base = env.unwrapped
        table = getattr(base, "REWARDS", {}).get(getattr(base, "reward_variant", None), {})
        self.timeout_reward: float | None = table.get("timeout")

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if truncated and not terminated and self.timeout_reward is not None:
            reward = self.timeout_reward
        return obs, reward, terminated, truncated, info
