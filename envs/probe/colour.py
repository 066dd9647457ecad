"""ColourNaming: say which colour the image shows, in one step."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from rl4vlm_gym.core import Decision, StepOutcome, VLMEnv
from rl4vlm_gym.envs.probe.wording import PHRASES, WORDINGS

if TYPE_CHECKING:
    from numpy.typing import NDArray

COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (220, 40, 40),
    "green": (40, 170, 60),
    "blue": (40, 60, 220),
    "yellow": (230, 210, 40),
    "purple": (140, 50, 170),
    "orange": (240, 140, 30),
    "black": (20, 20, 20),
    "grey": (128, 128, 128),
}


@dataclass(frozen=True)
class ColourLevel:
    """``colours``: how many of :data:`COLOURS` are used; ``patch``: the colour fills a square of
    a quarter of the image's side at a random place on white, instead of the whole image."""

    colours: int
    patch: bool = False

    def describe(self) -> str:
        where = "a small square on white" if self.patch else "the whole image"
        return f"{self.colours} colours filling {where}"


COLOUR_LEVELS = (ColourLevel(4), ColourLevel(8), ColourLevel(8, patch=True))


class ColourNaming(VLMEnv):
    """Name the colour the image shows: one step, a check that an RL pipeline learns at all.

    ## Description
    A probe env, the CartPole of a VLM trainer: the image is filled with a colour (or shows a
    coloured square) and the agent answers its name. One step decides the episode, the answer
    needs only the observation, and the random agent succeeds ``1 / colours`` of the time, so a
    trainer that works lifts success well above chance within minutes even from a random model
    (``benchmarks/baselines_learning.py``).

    Decisions (``decision()``): exact; one step to go, the colour's name the only optimal
    action; features ``colours`` (how many the level uses) and ``patch`` (1 on level 2).

    ## Observation
    - ``image``: the colour filling the canvas, or a square of it on white (level 2).
    - ``text``: ``"Colour: red"`` in ``text`` and ``image+text`` modes; in ``image`` mode only
      the feedback on an invalid action.
    - ``mission``: ``"Name the colour of the image."``
    - ``actions``: the level's colour names.

    ## Actions
    One colour name, e.g. ``{"thoughts": "all red", "action": "red"}``, ``<action>red</action>``
    or ``red``.

    ## Rewards
    1 for the right name (terminates), 0 for a wrong one (terminates), -1 for unparseable output
    (the episode is truncated: one answer per episode).

    ## Levels
    0: four colours filling the image; 1: eight colours; 2: eight colours, as a square a quarter
    of the side wide at a random place on white.

    ## Arguments
    Only the arguments common to every env (see ``VLMEnv``): ``level``, ``obs_mode``,
    ``image_size`` (default 112x112), ``reward_variant`` (``default``), ``action_format``,
    ``action_match``, ``render_mode``, ``wording`` (``train``; ``held-out``: the mission and the
    invalid-action feedback in sentences no training episode reads, three phrasings of each, the
    seed picking one; the episode and the image stay the same).

    ## Version History
    - v0: initial release.
    """

    LEVELS: ClassVar[tuple[ColourLevel, ...]] = COLOUR_LEVELS
    REWARDS: ClassVar = {"default": {"right": 1.0, "wrong": 0.0, "invalid": -1.0}}
    DEFAULT_IMAGE_SIZE: ClassVar[tuple[int, int]] = (112, 112)
    MIN_IMAGE_SIDE: ClassVar[int] = 32
    WORDINGS: ClassVar[tuple[str, ...]] = WORDINGS
    PHRASES: ClassVar = PHRASES

    def _new_episode(self, config: Any) -> None:
        self._names = tuple(list(COLOURS)[: config.colours])
        self._colour = self._names[int(self.np_random.integers(len(self._names)))]
        self._patch = config.patch
        h, w = self.image_size
        self._corner = (int(self.np_random.integers(h - h // 4 + 1)), int(self.np_random.integers(w - w // 4 + 1)))
        self._answer: str | None = None
        self._facts = _facts(self._colour, len(self._names), self._patch)  # the episode's one decision

    def _actions(self) -> tuple[str, ...]:
        return self._names

    def _apply(self, action: str) -> StepOutcome:
        self._answer = action
        return StepOutcome("right" if action == self._colour else "wrong", terminated=True)

    def _end_of_step(self, outcome: StepOutcome) -> StepOutcome:
        # One answer per episode: an unparseable one leaves the state as it was and truncates.
        if outcome.terminated:
            return outcome
        return StepOutcome(outcome.event, truncated=True, feedback=outcome.feedback)

    def _describe(self) -> str:
        return f"Colour: {self._colour}"

    def _mission(self) -> str:
        return self._say("mission", "Name the colour of the image.")

    def _render(self) -> NDArray[np.uint8]:
        h, w = self.image_size
        if not self._patch:
            return np.full((h, w, 3), COLOURS[self._colour], np.uint8)
        image = np.full((h, w, 3), 255, np.uint8)
        y, x = self._corner
        image[y : y + h // 4, x : x + w // 4] = COLOURS[self._colour]
        return image

    def _frame_key(self) -> Any:
        return (self._colour, self._patch and self._corner, self.image_size)

    def _state_key(self) -> str:
        where = f"|at={self._corner[0]},{self._corner[1]}" if self._patch else ""
        answer = "" if self._answer is None else f"|answer={self._answer}"  # answered is another state
        return f"colour={self._colour}{where}{answer}"

    def _success(self) -> bool:
        return self._answer == self._colour

    def _progress(self) -> float:
        return float(self._success())

    def _optimal_steps(self) -> int:
        return 1

    def _decision(self) -> Decision:
        # One answer decides the episode: the colour's name is the only optimal action, one step to go.
        # A step here costs ~12 us and core's decision() ~1 us of it, so this part is an attribute read:
        # the facts are looked up at reset, one shared Decision per (colour, level) (_facts).
        return self._facts

    def oracle_action(self) -> str:
        return self._colour


@functools.cache
def _facts(colour: str, colours: int, patch: bool) -> Decision:
    """The decision facts of every ColourNaming state before its answer: one per colour and level,
    shared by every episode and env (a Decision is frozen and its features are never changed: a
    plain dict, which ``as_dict`` copies twice as fast as a read-only proxy)."""
    return Decision((colour,), 1, features={"colours": colours, "patch": int(patch)})
