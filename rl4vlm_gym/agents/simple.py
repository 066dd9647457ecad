"""Agents that need no model: uniform random over the admissible actions, a fixed preference over
them, and the env's oracle.

Both write their action the way the env's parser expects (``parser.format_action``: plain for the
default ``auto`` format, ``ACTION: x`` for BALROG's CoT agent, and so on)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np

from rl4vlm_gym.agents.base import Agent

__all__ = ["OracleAgent", "PreferenceAgent", "RandomAgent"]


class RandomAgent(Agent):
    """Picks one of ``obs["actions"]`` uniformly, from an RNG seeded by the episode's seed.

    Seeded per episode, so a run is the same whichever worker plays which episode, and a resumed
    run replays the episodes it lost exactly.

    Args:
        seed: mixed with each episode's seed (different agents, same seeds, other draws).
    """

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        super().__init__()
        self.seed = int(seed)
        self._rngs: dict[int, np.random.Generator] = {}
        self._writers: dict[int, Any] = {}

    def begin(self, env: gym.Env, seed: int | None, index: int = 0) -> None:
        entropy = [self.seed] if seed is None else [self.seed, int(seed)]
        self._rngs[index] = np.random.default_rng(entropy)
        self._writers[index] = _writer(env)

    def act(self, obs: Mapping[str, Any], index: int = 0) -> str:
        rng = self._rngs.setdefault(index, np.random.default_rng(self.seed))
        actions = obs["actions"]
        if not len(actions):
            return ""
        return self._writers.get(index, str)(str(actions[int(rng.integers(len(actions)))]))

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "seed": self.seed}


class PreferenceAgent(Agent):
    """Plays the first of ``moves`` that is admissible (``obs["actions"]``, compared without case),
    else the first admissible action: a deterministic, exploitable policy such as poker's
    always-raise (``moves="raise,bet,call,check"``).

    Args:
        moves: the preference order, a comma-separated string (as ``-a moves=...`` gives it) or a list.
    """

    name = "prefer"

    def __init__(self, moves: str | list[str] | tuple[str, ...] = "raise,bet,call,check") -> None:
        super().__init__()
        items = moves.split(",") if isinstance(moves, str) else list(moves)
        self.moves = tuple(m.strip().lower() for m in items if str(m).strip())
        if not self.moves:
            raise ValueError("prefer needs at least one move, e.g. -a moves=raise,bet,call")
        self._writers: dict[int, Any] = {}

    def begin(self, env: gym.Env, seed: int | None, index: int = 0) -> None:
        self._writers[index] = _writer(env)

    def act(self, obs: Mapping[str, Any], index: int = 0) -> str:
        actions = [str(a) for a in obs["actions"]]
        if not actions:
            return ""
        lowered = [a.lower() for a in actions]
        move = next((actions[lowered.index(m)] for m in self.moves if m in lowered), actions[0])
        return self._writers.get(index, str)(move)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "moves": ",".join(self.moves)}


class OracleAgent(Agent):
    """Plays ``env.unwrapped.oracle_action()``: the upper bound, and the source of ``optimal_steps``."""

    name = "oracle"

    def __init__(self) -> None:
        super().__init__()
        self._envs: dict[int, gym.Env] = {}

    def begin(self, env: gym.Env, seed: int | None, index: int = 0) -> None:
        self._envs[index] = env

    def act(self, obs: Mapping[str, Any], index: int = 0) -> str:
        if index not in self._envs:
            raise RuntimeError("the oracle agent reads the env's true state: call begin(env, seed) first")
        env = self._envs[index]
        return _writer(env)(env.unwrapped.oracle_action())  # type: ignore[attr-defined]

    def close(self) -> None:
        self._envs.clear()


def _writer(env: gym.Env) -> Any:
    """How ``env`` wants an action written: its parser's ``format_action``, else as it is."""
    parser = getattr(env.unwrapped, "parser", None)
    return parser.format_action if parser is not None else str
