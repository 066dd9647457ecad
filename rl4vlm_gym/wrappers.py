"""Wrappers that the registry adds to an id's spec.

:class:`TimeoutReward` pays a reward variant's ``"timeout"`` reward on the step where the
registered ``TimeLimit`` truncates an episode. The limit lives on the spec (``max_episode_steps``,
overridable in ``gym.make``), not inside the env, so only a wrapper outside ``TimeLimit`` knows
that a step was the last one: VL-DAC's "-1 when the episode ends without reward" is such a rule.

:class:`RewordMission` rewrites the mission with synonyms, for any env. The ``transfer-wording``
suite now uses the envs' own held-out wordings (``wording="held-out"``, :mod:`rl4vlm_gym.wording`),
which reword the feedback too and in independent sentences; the wrapper stays for older suites.

:class:`BalrogActions` handles model output as BALROG's evaluator does: an output that is not a
valid action plays the env's default action, and the next observation says so in BALROG's words.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, SupportsFloat

import gymnasium as gym
from gymnasium.utils import RecordConstructorArgs

__all__ = ["BalrogActions", "RewordMission", "TimeoutReward"]


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
    """Say ``obs["mission"]`` in other words, keeping its meaning (envs with a held-out wording
    offer more: ``wording="held-out"``).

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


class BalrogActions(gym.Wrapper, RecordConstructorArgs):
    """BALROG's handling of invalid outputs (BALROG af7d1f1, ``balrog/evaluator.py:Evaluator.run_episode``
    and ``EnvWrapper.check_action_validity``; checked against recordings of BALROG's own evaluator,
    ``tests/envs/balrog/golden/protocol``).

    An output that the env's parser does not turn into an admissible action (BALROG: no exact,
    case-sensitive match) is not refused: the env's :attr:`~rl4vlm_gym.core.VLMEnv.DEFAULT_ACTION`
    is played instead, so the step costs a move of the game as in BALROG, and the next
    observation's long-term context is prefixed as BALROG's ``feedback_on_invalid_action`` (on by
    default) writes it::

        "\n\nYour previous output did not contain a valid action. Defaulted to action: X\n\nObservation:\n" + long_term

    in ``info["balrog"]["long_term_context"]`` where the env gives BALROG's text (``obs["text"]``
    is then rebuilt from it: short-term, then long-term), else in ``obs["text"]``. The prompt's
    history keeps the model's own output, not X (:class:`~rl4vlm_gym.prompts.PromptBuilder`).
    ``info["action"]`` keeps the model's output with ``valid`` False and names the move played in
    ``"played"``, so invalid outputs are still counted. Envs without a default action keep our
    contract: the invalid step changes nothing, and the feedback says "Nothing happened." instead.
    """

    FEEDBACK = "\n\nYour previous output did not contain a valid action. Defaulted to action: {action}\n\nObservation:\n"
    FEEDBACK_NO_DEFAULT = "\n\nYour previous output did not contain a valid action. Nothing happened.\n\nObservation:\n"

    def __init__(self, env: gym.Env) -> None:
        RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)
        base = env.unwrapped
        if not hasattr(base, "parser"):
            raise TypeError(f"BalrogActions wraps RL4VLM Gym envs (VLMEnv), not {type(base).__name__}")
        self.default_action: str | None = getattr(base, "DEFAULT_ACTION", None)
        self._actions: tuple[str, ...] = ()

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self._actions = tuple(obs["actions"])
        return obs, info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        base: Any = self.env.unwrapped  # a VLMEnv, or another env with its parser (checked in __init__)
        parser = base.parser
        result = parser.parse(action, self._actions)
        if result.valid:  # a move the rules refuse stays our contract's invalid step (BALROG's envs refuse none)
            obs, reward, terminated, truncated, info = self.env.step(action)
            return self._remember(obs), reward, terminated, truncated, info
        if self.default_action is None:
            obs, reward, terminated, truncated, info = self.env.step(action)
            feedback = self.FEEDBACK_NO_DEFAULT
        else:
            played = parser.format_action(self.default_action)
            obs, reward, terminated, truncated, info = self.env.step(played)
            info = dict(info, action={**result.as_info(), "valid": False, "played": self.default_action})
            feedback = self.FEEDBACK.format(action=self.default_action)
        context = info.get("balrog")
        if isinstance(context, dict):
            context = dict(context, long_term_context=feedback + context.get("long_term_context", ""))
            info = dict(info, balrog=context)
            text = "\n".join(p for p in (context.get("short_term_context", ""), context["long_term_context"]) if p)
        else:
            text = feedback + obs["text"]
        return self._remember(dict(obs, text=text)), reward, terminated, truncated, info

    def _remember(self, obs: dict[str, Any]) -> dict[str, Any]:
        self._actions = tuple(obs["actions"])
        return obs
