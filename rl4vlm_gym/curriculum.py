"""Curricula: choose the level, and in mixtures the env, of every episode.

- :class:`SuccessRateCurriculum` promotes when the success rate over a window of episodes at
  the current level reaches ``promote_at`` and demotes when it falls to ``demote_at``;
- :class:`FixedSchedule` sets the level by the number of episodes played;
- :class:`CurriculumWrapper` applies either to one env through ``reset(options={"level": k})``;
- :class:`MixtureEnv` plays a weighted mixture of ids and levels (multi-environment training),
  each entry optionally with its own curriculum.

Every episode's level is in ``info["level"]`` (and the id in ``info["env_id"]`` for mixtures).
A curriculum lives in the process of its env: in an ``AsyncVectorEnv`` each worker keeps its own.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import gymnasium as gym
import numpy as np

from rl4vlm_gym.registry import TRAIN_SEEDS

__all__ = [
    "Curriculum",
    "CurriculumWrapper",
    "FixedSchedule",
    "MixtureEntry",
    "MixtureEnv",
    "SuccessRateCurriculum",
]


@runtime_checkable
class Curriculum(Protocol):
    """Chooses levels and learns from episode outcomes."""

    def next_level(self) -> int:
        """The level of the next episode."""
        ...

    def update(self, level: int, success: bool) -> None:
        """Record that an episode at ``level`` ended, successfully or not."""
        ...


@dataclass
class SuccessRateCurriculum:
    """Promotion and demotion by success rate over a window of episodes at the current level.

    After ``window`` episodes at the current level, the level goes up one if their success
    rate is at least ``promote_at``, down one if it is at most ``demote_at``; the window then
    starts afresh. Outcomes of episodes begun at another level (e.g. in flight while the level
    changed) are ignored.

    Example:
        >>> c = SuccessRateCurriculum(max_level=2, window=2)
        >>> for _ in range(2):
        ...     c.update(c.next_level(), success=True)
        >>> c.next_level()
        1
    """

    max_level: int
    start_level: int = 0
    window: int = 64
    promote_at: float = 0.8
    demote_at: float = 0.2
    min_level: int = 0
    level: int = field(init=False)
    _results: deque[bool] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.min_level <= self.start_level <= self.max_level:
            raise ValueError(
                f"start_level={self.start_level} is outside min_level..max_level = {self.min_level}..{self.max_level}"
            )
        if self.window < 1:
            raise ValueError(f"window={self.window} must be at least 1")
        if not 0.0 <= self.demote_at < self.promote_at <= 1.0:
            raise ValueError(
                f"need 0 <= demote_at < promote_at <= 1, got demote_at={self.demote_at}, promote_at={self.promote_at}"
            )
        self.level = self.start_level
        self._results = deque(maxlen=self.window)

    def next_level(self) -> int:
        """The current level."""
        return self.level

    def update(self, level: int, success: bool) -> None:
        """Record an outcome; move the level when a full window says so."""
        if level != self.level:
            return
        self._results.append(bool(success))
        if len(self._results) < self.window:
            return
        rate = sum(self._results) / self.window
        if rate >= self.promote_at and self.level < self.max_level:
            self.level += 1
        elif rate <= self.demote_at and self.level > self.min_level:
            self.level -= 1
        else:
            return
        self._results.clear()

    @property
    def success_rate(self) -> float | None:
        """Success rate of the episodes in the current window (``None`` before any)."""
        return sum(self._results) / len(self._results) if self._results else None

    def state_dict(self) -> dict[str, Any]:
        """The mutable state, for checkpoints."""
        return {"level": self.level, "results": list(self._results)}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore the state saved by :meth:`state_dict`."""
        self.level = int(state["level"])
        self._results = deque((bool(r) for r in state["results"]), maxlen=self.window)


@dataclass
class FixedSchedule:
    """The level by episode count: ``milestones=[(0, 0), (1000, 1)]`` plays level 1 from episode 1000.

    Example:
        >>> s = FixedSchedule([(0, 0), (2, 3)])
        >>> levels = []
        >>> for _ in range(3):
        ...     levels.append(s.next_level())
        ...     s.update(levels[-1], success=False)
        >>> levels
        [0, 0, 3]
    """

    milestones: Sequence[tuple[int, int]]
    episodes: int = 0

    def __post_init__(self) -> None:
        starts = [start for start, _ in self.milestones]
        if not starts or starts[0] != 0 or starts != sorted(set(starts)):
            raise ValueError(
                f"milestones={list(self.milestones)} must be (episode, level) pairs with increasing, "
                "distinct episodes starting at 0"
            )

    def next_level(self) -> int:
        """The level scheduled for the current episode count."""
        return [level for start, level in self.milestones if start <= self.episodes][-1]

    def update(self, level: int, success: bool) -> None:
        """Count an episode."""
        self.episodes += 1


class CurriculumWrapper(gym.Wrapper):
    """Picks each episode's level from ``curriculum`` and reports each outcome back to it.

    A level passed explicitly in ``reset(options={"level": k})`` wins over the curriculum.
    """

    def __init__(self, env: gym.Env, curriculum: Curriculum) -> None:
        super().__init__(env)
        self.curriculum = curriculum
        self._level: int | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Reset at the curriculum's level."""
        options = {"level": self.curriculum.next_level(), **(options or {})}
        obs, info = self.env.reset(seed=seed, options=options)
        self._level = info["level"]
        return obs, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Step; at the end of an episode, tell the curriculum how it went."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        if (terminated or truncated) and self._level is not None:
            self.curriculum.update(self._level, bool(info["success"]))
            self._level = None
        return obs, float(reward), terminated, truncated, info


@dataclass(frozen=True)
class MixtureEntry:
    """One component of a :class:`MixtureEnv`.

    Attributes:
        env_id: a registered id.
        levels: levels to draw from uniformly (``None``: the id's default level).
        weight: relative probability of playing this entry.
        kwargs: extra ``make`` arguments for this id.
        curriculum: chooses the level instead of ``levels`` when given.
    """

    env_id: str
    levels: Sequence[int] | None = None
    weight: float = 1.0
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    curriculum: Curriculum | None = None


class MixtureEnv(gym.Env):
    """Plays a weighted mixture of env ids and levels, one entry per episode.

    The entry, its level and the episode's seed (from ``TRAIN_SEEDS``) are drawn from this env's
    own RNG, so ``reset(seed)`` decides the whole episode. All entries must share one observation
    space, so they need the same ``image_size`` (pass it in ``common_kwargs``).

    Args:
        entries: the components.
        render_mode: passed to every component.
        **common_kwargs: ``make`` arguments for every component (``obs_mode``, ``image_size``...).
    """

    def __init__(self, entries: Sequence[MixtureEntry], render_mode: str | None = None, **common_kwargs: Any) -> None:
        if not entries:
            raise ValueError("entries is empty: a mixture needs at least one MixtureEntry")
        weights = np.array([e.weight for e in entries], dtype=float)
        if (weights < 0).any() or weights.sum() <= 0:
            raise ValueError(f"entry weights {weights.tolist()} must be non-negative with a positive sum")
        self.entries = tuple(entries)
        self._p = weights / weights.sum()
        self.envs = [gym.make(e.env_id, render_mode=render_mode, **{**common_kwargs, **e.kwargs}) for e in entries]
        self.observation_space = self.envs[0].observation_space
        for entry, env in zip(entries, self.envs, strict=True):
            if env.observation_space != self.observation_space:
                raise ValueError(
                    f"{entry.env_id} has observation space {env.observation_space}, but "
                    f"{entries[0].env_id} has {self.observation_space}: give every entry the same image_size"
                )
        self.action_space = self.envs[0].action_space
        self.render_mode = render_mode
        self.metadata = self.envs[0].metadata
        self._current = 0
        self._level: int | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Draw an entry, a level and a seed, and reset that env."""
        super().reset(seed=seed)
        if options:
            raise ValueError(f"MixtureEnv.reset got options {sorted(options)}; a mixture chooses levels itself")
        rng = self.np_random
        self._current = int(rng.choice(len(self.entries), p=self._p))
        entry = self.entries[self._current]
        if entry.curriculum is not None:
            level: int | None = entry.curriculum.next_level()
        elif entry.levels:
            level = int(entry.levels[int(rng.integers(len(entry.levels)))])
        else:
            level = None
        sub_seed = int(rng.integers(TRAIN_SEEDS.start, TRAIN_SEEDS.stop))
        obs, info = self.envs[self._current].reset(seed=sub_seed, options=None if level is None else {"level": level})
        self._level = info["level"]
        return obs, {**info, "env_id": entry.env_id}

    def step(self, action: str) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Step the env of the current episode."""
        entry = self.entries[self._current]
        obs, reward, terminated, truncated, info = self.envs[self._current].step(action)
        if (terminated or truncated) and entry.curriculum is not None and self._level is not None:
            entry.curriculum.update(self._level, bool(info["success"]))
            self._level = None
        return obs, float(reward), terminated, truncated, {**info, "env_id": entry.env_id}

    def oracle_action(self) -> str:
        """The oracle action of the current episode's env."""
        return self.envs[self._current].unwrapped.oracle_action()  # type: ignore[attr-defined]

    def render(self) -> Any:
        """Render the env of the current episode."""
        return self.envs[self._current].render()

    def close(self) -> None:
        """Close every component."""
        for env in self.envs:
            env.close()
