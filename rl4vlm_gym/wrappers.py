"""Wrappers that the registry adds to an id's spec.

:class:`TimeoutReward` pays a reward variant's ``"timeout"`` reward on the step where the
registered ``TimeLimit`` truncates an episode. The limit lives on the spec (``max_episode_steps``,
overridable in ``gym.make``), not inside the env, so only a wrapper outside ``TimeLimit`` knows
that a step was the last one: VL-DAC's "-1 when the episode ends without reward" is such a rule.

:class:`RewordMission` rewrites the mission in other words: the ``wording`` transfer axis of the
evaluation suites.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, SupportsFloat

import gymnasium as gym
from gymnasium.utils import RecordConstructorArgs

__all__ = ["RewordMission", "TimeoutReward"]


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


class RewordMission(gym.ObservationWrapper, RecordConstructorArgs):
    """Say ``obs["mission"]`` in other words, keeping its meaning: the ``wording`` transfer axis.

    Verbs and phrases are replaced by synonyms (whole words, case kept on the first letter) and
    the sentence is framed differently. The rewording is a fixed function of the mission, so a
    seed gives the same episode and the same words in any process; the action vocabulary and the
    observation's ``text`` are left alone, so only the instruction's wording shifts.
    """

    SYNONYMS: ClassVar[dict[str, str]] = {
        "move": "shift",
        "go to": "head to",
        "walk": "make your way",
        "find": "locate",
        "pick up": "collect",
        "take": "grab",
        "put": "place",
        "buy": "purchase",
        "make": "build",
        "using": "with",
        "target": "goal",
        "current": "present",
        "answer": "reply",
        "closer to": "nearer to",
        "without": "while not",
        "every": "each",
        "exactly once": "once and only once",
        "some": "a",
        "i need": "i am looking for",
        "i want": "i would like",
    }

    def __init__(self, env: gym.Env) -> None:
        RecordConstructorArgs.__init__(self)
        gym.ObservationWrapper.__init__(self, env)
        words = sorted(self.SYNONYMS, key=len, reverse=True)  # longest phrase first
        self._pattern = re.compile(r"(?<!\w)(" + "|".join(map(re.escape, words)) + r")(?!\w)", re.IGNORECASE)

    def observation(self, observation: dict[str, Any]) -> dict[str, Any]:
        return dict(observation, mission=self.reword(observation["mission"]))

    def reword(self, mission: str) -> str:
        """``mission`` in other words."""
        reworded = self._pattern.sub(self._swap, mission)
        return f"Your objective: {reworded}" if reworded else reworded

    def _swap(self, match: re.Match[str]) -> str:
        found = match.group(0)
        synonym = self.SYNONYMS[found.lower()]
        return synonym[0].upper() + synonym[1:] if found[0].isupper() else synonym
