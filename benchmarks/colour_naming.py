"""A one-step colour-naming env, the easy task of ``benchmarks/baselines_learning.py``.

Registered the way a third-party plugin registers its envs (an :class:`~rl4vlm_gym.EnvCard`
passed to :func:`rl4vlm_gym.registry.register`), by the benchmark only: it is a sanity check
of an RL pipeline (the CartPole of a VLM trainer), not part of the benchmark suite.

The image is filled with one of four colours; the agent answers its name. One step, reward 1
if right, 0 if wrong and -1 if unparseable; the random agent succeeds a quarter of the time.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from rl4vlm_gym.core import StepOutcome, VLMEnv
from rl4vlm_gym.registry import EnvCard, register

COLOURS = {"red": (220, 40, 40), "green": (40, 170, 60), "blue": (40, 60, 220), "yellow": (230, 210, 40)}
ENV_ID = "bench/ColourNaming-v0"


class ColourNaming(VLMEnv):
    """Name the colour that fills the image (one step)."""

    LEVELS: ClassVar = (None,)
    REWARDS: ClassVar = {"default": {"right": 1.0, "wrong": 0.0, "invalid": -1.0}}
    DEFAULT_IMAGE_SIZE: ClassVar = (112, 112)

    def _new_episode(self, config: Any) -> None:
        self._colour = str(self.np_random.choice(list(COLOURS)))
        self._answer: str | None = None

    def _actions(self) -> tuple[str, ...]:
        return tuple(COLOURS)

    def _apply(self, action: str) -> StepOutcome:
        self._answer = action
        return StepOutcome("right" if action == self._colour else "wrong", terminated=True)

    def _end_of_step(self, outcome: StepOutcome) -> StepOutcome:
        return outcome if outcome.terminated else StepOutcome(outcome.event, terminated=True, feedback=outcome.feedback)

    def _describe(self) -> str:
        return f"Colour: {self._colour}"

    def _mission(self) -> str:
        return "Name the colour that fills the image."

    def _render(self) -> np.ndarray:
        return np.full((*self.image_size, 3), COLOURS[self._colour], np.uint8)

    def _state_key(self) -> str:
        return self._colour

    def _success(self) -> bool:
        return self._answer == self._colour

    def _progress(self) -> float:
        return float(self._success())

    def _optimal_steps(self) -> int:
        return 1

    def oracle_action(self) -> str:
        return self._colour


def register_colour_naming() -> None:
    register(
        EnvCard(
            id=ENV_ID, entry_point="colour_naming:ColourNaming", family="bench", summary="Name the colour that fills the image.",
            skills=("visual-reading",), levels=("four colours",), default_level=0, action_grammar="red, green, blue or yellow",
            action_examples=("red",), reward_variants=("default",), success="the named colour is the image's", max_episode_steps=1,
            obs_modes=("image+text", "image", "text"),
        )
    )  # fmt: skip
